"""The one registry style: names, aliases, case, hints, duplicates, and every registry built on it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hpcgym.baselines import (
    POLICIES,
    PolicySpec,
    make_policy,
    policy_spec,
    policy_specs,
    register_policy,
    resolve_policy_name,
)
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.registry import Entry, Registry, summary_line
from hpcgym.env import (
    OBSERVATIONS,
    REWARDS,
    BsldDense,
    ObservationBuilder,
    ObservationConfig,
    RewardTerm,
    make_observation,
    make_reward,
    observation_names,
    register_observation,
    register_reward,
    reward_names,
)
from hpcgym.predict import (
    PREDICTORS,
    Predictor,
    Walltime,
    make_predictor,
    predictor_aliases,
    predictor_names,
    register_predictor,
    resolve_predictor_name,
)


def shapes() -> Registry[str]:
    r: Registry[str] = Registry("shape")
    r.register("square", lambda side=1: f"square {side}", aliases=("sq", "Box"), description="four sides")
    r.register("circle", lambda: "circle", description="round")
    r.register("triangle", lambda: "triangle")
    return r


# ------------------------------------------------------------------ the Registry class
def test_names_resolve_case_insensitively_and_through_aliases():
    r = shapes()
    assert [r.resolve(n) for n in ("square", "SQUARE", "Sq", "box", " BOX ")] == ["square"] * 5
    assert r.resolve("Circle") == "circle"
    assert "SQ" in r and "hexagon" not in r and 3 not in r


def test_make_passes_arguments_to_the_factory_and_builds_fresh_objects():
    r: Registry[list[int]] = Registry("list")
    r.register("zeros", lambda n=2: [0] * n)
    a, b = r.make("zeros"), r.make("ZEROS", 3)
    assert a == [0, 0] and b == [0, 0, 0]
    assert r.make("zeros") is not a
    assert r.make("zeros", n=1) == [0]


def test_listings_keep_registration_order():
    r = shapes()
    assert r.names() == ["square", "circle", "triangle"]
    assert list(r) == r.names() and len(r) == 3
    assert r.descriptions() == {"square": "four sides", "circle": "round", "triangle": ""}
    assert r.aliases() == {"sq": "square", "box": "square"}
    name, entry = r.items()[0]
    assert name == "square" and isinstance(entry, Entry)
    assert entry.aliases == ("sq", "box") and entry.description == "four sides"
    assert r.entry("BOX") is entry and r.factory("sq") is entry.factory


def test_unknown_name_lists_the_known_ones_and_hints_at_the_closest():
    r = shapes()
    with pytest.raises(UnknownNameError) as err:
        r.resolve("sqare")
    assert str(err.value) == (
        "unknown shape 'sqare'; known shapes: square, circle, triangle; did you mean 'square'?"
    )
    # an alias that is close counts for its entry
    with pytest.raises(UnknownNameError, match=r"did you mean 'square'\?$"):
        r.make("bxo")
    # nothing close: no hint
    with pytest.raises(UnknownNameError) as err:
        r.resolve("hexagon")
    assert "did you mean" not in str(err.value)
    assert str(err.value).endswith("known shapes: square, circle, triangle")


def test_unknown_name_message_carries_the_usage_text():
    r: Registry[int] = Registry("number", usage="(write digits)")
    r.register("one", lambda: 1)
    with pytest.raises(UnknownNameError, match=r"known numbers: one \(write digits\); did you mean 'one'\?"):
        r.resolve("onee")


def test_unknown_name_error_is_a_key_error_with_a_readable_message():
    with pytest.raises(KeyError) as err:
        shapes().resolve("nope")
    assert str(err.value).startswith("unknown shape 'nope'")  # not KeyError's quoted repr


def test_a_name_that_is_not_a_string_is_a_config_error():
    with pytest.raises(InvalidConfigError, match=r"a shape must be given by name \(square, circle"):
        shapes().resolve(3)  # type: ignore[arg-type]


def test_registering_a_name_twice_raises_unless_replace():
    r = shapes()
    with pytest.raises(InvalidConfigError, match="shape 'circle' is already registered; pass replace=True"):
        r.register("circle", lambda: "disc")
    with pytest.raises(InvalidConfigError, match="already registered"):
        r.register("CIRCLE", lambda: "disc")  # case does not make a new name
    assert r.make("circle") == "circle"
    r.register("circle", lambda: "disc", description="flat", replace=True)
    assert r.make("circle") == "disc"
    assert r.names() == ["square", "circle", "triangle"]  # keeps its place
    assert r.descriptions()["circle"] == "flat"


def test_replacing_drops_the_old_aliases():
    r = shapes()
    r.register("square", lambda: "new square", aliases=("quad",), replace=True)
    assert r.resolve("quad") == "square"
    assert "sq" not in r and "box" not in r
    r.register("sq", lambda: "not a square any more")  # the old alias is free again
    assert r.make("sq") == "not a square any more"


def test_a_name_or_alias_taken_by_another_entry_raises_even_with_replace():
    r = shapes()
    with pytest.raises(InvalidConfigError, match="shape name 'sq' is already taken by 'square'"):
        r.register("sq", lambda: "x", replace=True)
    with pytest.raises(InvalidConfigError, match="shape name 'circle' is already taken by 'circle'"):
        r.register("ring", lambda: "x", aliases=("circle",))
    with pytest.raises(InvalidConfigError, match="shape name 'Box' is already taken by 'square'"):
        r.register("cube", lambda: "x", aliases=("Box",), replace=True)
    assert "ring" not in r and "cube" not in r  # a failed registration leaves nothing behind
    assert r.make("box") == "square 1"


@pytest.mark.parametrize(
    ("name", "aliases", "factory", "match"),
    [
        ("", (), lambda: 0, "must be a non-empty string"),
        (" pad", (), lambda: 0, "without leading or trailing spaces"),
        ("ok", ("",), lambda: 0, "must be a non-empty string"),
        (None, (), lambda: 0, "must be a non-empty string"),
        ("ok", (), 42, "the factory must be callable"),
        ("ok", ("OK",), lambda: 0, "given twice"),
    ],
)
def test_bad_registrations_raise_clear_errors(name, aliases, factory, match):
    r = shapes()
    with pytest.raises(InvalidConfigError, match=match):
        r.register(name, factory, aliases=aliases)
    assert len(r) == 3


def test_pop_removes_a_name_with_its_aliases_like_dict_pop():
    r = shapes()
    entry = r.pop("SQ")
    assert entry.name == "square"
    assert "square" not in r and "box" not in r and r.names() == ["circle", "triangle"]
    assert r.pop("square", None) is None
    with pytest.raises(UnknownNameError):
        r.pop("square")
    r.register("square", lambda: "again", aliases=("sq",))  # free again, with its alias
    assert r.make("SQ") == "again"


def test_summary_line_is_the_first_docstring_line():
    class Documented:
        """First line.

        More.
        """

    class Bare:
        pass

    assert summary_line(Documented) == "First line."
    assert summary_line(Bare) == ""


# ------------------------------------------------------------------ the four registries
@pytest.mark.parametrize(
    ("registry", "kind"),
    [(POLICIES, "policy"), (PREDICTORS, "predictor"), (REWARDS, "reward"), (OBSERVATIONS, "observation")],
)
def test_every_registry_is_one_registry_with_described_entries(registry, kind):
    assert isinstance(registry, Registry)
    assert registry.kind == kind
    assert len(registry) > 0
    for name, entry in registry.items():
        assert entry.name == name
        assert entry.description, f"{kind} {name} has no description"
        assert registry.resolve(name.upper()) == name


def test_every_policy_builds_a_fresh_dispatcher_under_its_canonical_name():
    assert list(policy_specs()) == POLICIES.names()
    for name in POLICIES:
        a, b = make_policy(name.upper()), make_policy(name)
        assert callable(a) and a is not b
        assert policy_spec(name).name == name
    assert resolve_policy_name("EBF") == "easy"
    assert resolve_policy_name("Ljf") == "ljf-list"
    assert make_policy("EBF").name == "easy"


def test_every_predictor_builds_under_its_canonical_name():
    assert predictor_names() == PREDICTORS.descriptions()
    assert predictor_aliases() == PREDICTORS.aliases()
    for name in PREDICTORS:
        p = make_predictor(name)
        assert isinstance(p, Predictor) and p.name == name
    for alias, name in predictor_aliases().items():
        assert resolve_predictor_name(alias.upper()) == name
        assert make_predictor(f"{alias.upper()}+pcor").name == f"{name}+pcor"


def test_every_reward_and_observation_builds_under_its_name():
    assert reward_names() == REWARDS.descriptions()
    assert observation_names() == OBSERVATIONS.descriptions()
    for name in REWARDS:
        term = make_reward(name.upper())
        assert isinstance(term, RewardTerm) and term.name == name
    config = ObservationConfig()
    for name in OBSERVATIONS:
        builder = make_observation(name.upper(), config, 8, 64)
        assert isinstance(builder, ObservationBuilder) and builder.name == name
        assert builder.space().dtype == np.float32


@pytest.mark.parametrize(
    ("make", "name", "message"),
    [
        (make_policy, "esay", "unknown policy 'esay'; known policies: fcfs, "),
        (make_policy, "esay", "did you mean 'easy'"),
        (make_predictor, "user-avgg", "did you mean 'user-avg'"),
        (make_predictor, "wal", "(add ':key=value' parameters"),
        (make_reward, "bsld-sparce", "unknown reward 'bsld-sparce'; known rewards: bsld, wait, bsld-sparse"),
        (make_reward, "bsld-sparce", "did you mean 'bsld-sparse'"),
        (lambda n: make_observation(n, ObservationConfig(), 8, 64), "job", "did you mean 'jobs'"),
    ],
)
def test_unknown_names_hint_in_every_registry(make, name, message):
    with pytest.raises(UnknownNameError) as err:
        make(name)
    assert message in str(err.value)


def test_registering_a_taken_name_raises_in_every_registry():
    spec = policy_specs()["easy"]
    with pytest.raises(InvalidConfigError, match="policy 'easy' is already registered"):
        register_policy(spec)
    with pytest.raises(InvalidConfigError, match="policy name 'ebf' is already taken by 'easy'"):
        register_policy(PolicySpec("ebf", spec.factory, "walltime", "x"))
    with pytest.raises(InvalidConfigError, match="predictor 'walltime' is already registered"):
        register_predictor("walltime", Walltime, "again")
    with pytest.raises(InvalidConfigError, match="predictor name 'oracle' is already taken by 'real'"):
        register_predictor("mine", Walltime, "mine", aliases=("oracle",))
    assert "mine" not in PREDICTORS

    class Again(BsldDense):
        """Another bsld."""

    with pytest.raises(InvalidConfigError, match="reward 'bsld' is already registered"):
        register_reward(Again)

    class Jobs(ObservationBuilder):
        """Another jobs."""

        name = "jobs"

    with pytest.raises(InvalidConfigError, match="observation 'jobs' is already registered"):
        register_observation(Jobs)
    assert make_reward("bsld").__class__ is BsldDense


def test_a_replaced_policy_is_what_make_policy_builds_then_restored():
    original = policy_specs()["fcfs"]
    marker = PolicySpec("fcfs", lambda: original.factory(), "real", "replaced for a test")
    register_policy(marker, replace=True)
    try:
        assert policy_spec("FCFS") is marker
        assert POLICIES.names().index("fcfs") == 0
    finally:
        register_policy(original, replace=True)
    assert policy_spec("fcfs") is original


def test_a_factory_registered_directly_lists_as_a_walltime_preset():
    POLICIES.register("test-direct", lambda: make_policy("fcfs"), description="direct")
    try:
        spec = policy_specs()["test-direct"]
        assert (spec.name, spec.predictor, spec.description) == ("test-direct", "walltime", "direct")
        assert callable(make_policy("TEST-DIRECT"))
    finally:
        POLICIES.pop("test-direct")


def test_the_policies_command_shows_aliases(capsys):
    from hpcgym.cli import main

    assert main(["policies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert next(line for line in lines if line.startswith("easy ")).endswith("(alias: ebf, fcfs-bf)")
    assert main(["policies", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["easy"]["aliases"] == ["ebf", "fcfs-bf"] and listed["ljf-list"]["aliases"] == ["ljf"]
    assert listed["fcfs"]["aliases"] == []


def test_the_cli_hints_at_a_misspelt_policy(capsys):
    from hpcgym.cli import main

    assert main(["simulate", "--policy", "EASY-SJBF", "--jobs", "50", "--json", "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == "easy-sjbf"  # the canonical name
    assert main(["simulate", "--policy", "esay", "--jobs", "50"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: unknown policy 'esay'; known policies: fcfs, ")
    assert err.rstrip().endswith("did you mean 'easy'?")
