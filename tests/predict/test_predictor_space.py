"""004 section 7's predictor space: every parameter value on a hand-made history.

One user's history, submitted and terminated in this order before the new job 4
(estimate 1,000 s) arrives:

====  ========  ========  ==========================
job   estimate  run time  run time / estimate
====  ========  ========  ==========================
0     1000      100       0.1
1     1000      400       0.4
2     500       250       0.5
3     1000      700       0.7
====  ========  ========  ==========================

So the 2 latest jobs are 2 and 3 (475 on average), the 3 latest 1, 2 and 3 (avg 450,
median 400, min 250, max 700), the 2 latest with job 4's estimate 1 and 3 (550), and the
user's mean accuracy is 1.7 / 4 = 0.425. Every expected number below is worked out from
this table.
"""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import build_workload, examples, random_workloads
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import (
    PREDICTOR_SPACE,
    CorrectionSteps,
    UserHistory,
    UserHistoryConfig,
    make_predictor,
    predictor_space,
    sample_predictor_space,
)
from hpcgym.sim import Simulator

HISTORY = [(1000.0, 100.0), (1000.0, 400.0), (500.0, 250.0), (1000.0, 700.0)]
NEW_ESTIMATE = 1000.0


def predict(spec: str) -> float:
    """The prediction of ``user-history:<spec>`` for job 4 after the whole history ended."""
    p = make_predictor(f"user-history:{spec}")
    estimates = [e for e, _ in HISTORY] + [NEW_ESTIMATE]
    p.reset(SimpleNamespace(estimate=estimates, user=[1] * len(estimates)))
    for job, (_, runtime) in enumerate(HISTORY):
        p.on_submit(job, float(job))
        p.on_start(job, float(job))
        p.on_end(job, 10.0 + job, runtime)
    p.on_submit(4, 20.0)
    return float(p.prediction[4])


# ------------------------------------------------------------------ one test per value
@pytest.mark.parametrize(("k", "expected"), [(1, 700.0), (2, 475.0), (3, 450.0), (4, 362.5), (30, 362.5)])
def test_window_size(k, expected):
    assert predict(f"k={k}") == expected


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ("all", 475.0),  # jobs 2 and 3
        ("immediate", 1000.0),  # jobs 2 and 3, but job 2's estimate is 500: the estimate
        ("extended", 550.0),  # the latest two with estimate 1000: jobs 1 and 3
    ],
)
def test_window_type(window, expected):
    assert predict(f"k=2,type={window}") == expected


def test_immediate_uses_the_window_when_every_estimate_matches():
    assert predict("k=1,type=immediate") == 700.0  # job 3 alone, same estimate


@pytest.mark.parametrize(("fullness", "expected"), [("partial", 362.5), ("full", 1000.0)])
def test_fullness(fullness, expected):
    # k=5 with 4 history jobs: partial averages the 4, full needs 5 and falls back
    assert predict(f"k=5,fullness={fullness}") == expected


@pytest.mark.parametrize(
    ("metric", "expected"), [("avg", 450.0), ("median", 400.0), ("min", 250.0), ("max", 700.0)]
)
def test_metric(metric, expected):
    assert predict(f"k=3,metric={metric}") == expected


def test_median_of_an_even_window_is_the_mean_of_the_middle_two():
    assert predict("k=4,metric=median") == 325.0  # 100, 250, 400, 700


@pytest.mark.parametrize(("fallback", "expected"), [("estimate", 1000.0), ("relative", 425.0)])
def test_fallback(fallback, expected):
    # the immediate window is unusable (job 2's estimate differs): the fallback decides
    assert predict(f"k=2,type=immediate,fallback={fallback}") == expected


def test_relative_fallback_without_any_history_is_the_estimate():
    p = make_predictor("user-history:fallback=relative")
    p.reset(SimpleNamespace(estimate=[300.0], user=[1]))
    p.on_submit(0, 0.0)
    assert p.prediction[0] == 300.0


@pytest.mark.parametrize(("propagation", "expected"), [("no", 325.0), ("yes", 475.0)])
def test_propagation(propagation, expected):
    # jobs 4 and 5 arrive after jobs 0-2 ended (window 400, 250: 325); job 5 starts;
    # then job 3 ends: with propagation the waiting job 4 is re-predicted (250, 700: 475)
    p = make_predictor(f"user-history:k=2,propagation={propagation}")
    estimates = [e for e, _ in HISTORY] + [NEW_ESTIMATE, NEW_ESTIMATE]
    p.reset(SimpleNamespace(estimate=estimates, user=[1] * 6))
    for job in range(4):
        p.on_submit(job, 0.0)
        p.on_start(job, 0.0)
    for job in range(3):
        p.on_end(job, 10.0 + job, HISTORY[job][1])
    p.on_submit(4, 20.0)
    p.on_submit(5, 20.0)
    p.on_start(5, 21.0)
    assert (p.prediction[4], p.prediction[5]) == (325.0, 325.0)
    assert not p.has_revised()
    p.on_end(3, 30.0, 700.0)
    assert (p.prediction[4], p.prediction[5]) == (expected, 325.0)  # a running job keeps its own
    if propagation == "yes":
        assert p.has_revised() and p.take_revised() == [4]
        assert p.changes == [(30.0, 4, 475.0)]
    else:
        assert not p.has_revised() and p.changes == []


def test_propagation_reaches_the_dispatcher_through_the_engine():
    # 2 processors; job 0 fills them until t=100; job 1 (same user) waits from t=10 with no
    # history (prediction: its estimate); job 0's end at t=100 comes before the decision
    # that starts job 1, so with propagation job 1 starts with the prediction 100
    w = build_workload([(0, 100, 2, 1000, 1), (10, 50, 2, 1000, 1)], 2)
    for propagation, changes in (("no", []), ("yes", [(100.0, 1, 100.0)])):
        s = Simulator(w, predictor=make_predictor(f"user-history:k=2,propagation={propagation}")).run(
            make_policy("fcfs"), progress=False
        )
        assert s.prediction_changes == changes
        assert s.first_prediction.tolist() == [1000.0, 1000.0]


@pytest.mark.parametrize(
    ("mode", "first", "expected"),
    [
        # below the estimate (1000): straight to it; beyond: +1 min, +15 min, +30 min
        ("estimate", 300.0, [1000.0, 1060.0, 1960.0, 3760.0]),
        # +1 min, +15 min (stops at the estimate), then +30 min, +1 h
        ("gradual", 300.0, [360.0, 1000.0, 2800.0, 6400.0]),
        # +20 % (at least 1 min) up to the estimate, then as "estimate"
        ("exponential", 500.0, [600.0, 720.0, 864.0, 1000.0, 1060.0, 1960.0]),
        ("exponential", 0.0, [60.0, 120.0, 180.0, 240.0, 300.0]),  # 20 % of little: 1 min
    ],
)
def test_correction(mode, first, expected):
    p = make_predictor(f"user-history:correction={mode}")
    assert p.corrects
    p.reset(SimpleNamespace(estimate=[1000.0], user=[1]))
    p.on_submit(0, 0.0)
    p.prediction[0] = first
    got = []
    for _ in expected:
        new = p.on_expire(0, 0.0, float(p.prediction[0]))
        p.revise(0, 0.0, new)
        got.append(new)
    assert got == pytest.approx(expected, rel=0, abs=1e-9)
    assert p.corrections.tolist() == [len(expected)]  # type: ignore[attr-defined]


def test_no_correction_is_outside_the_space():
    p = make_predictor("user-history:correction=none")
    assert not p.corrects
    assert not UserHistoryConfig(correction="none").in_space


def test_correction_steps_match_the_pcor_wrapper_float_for_float():
    steps = CorrectionSteps("estimate", [1000.0])
    wrapped = make_predictor("walltime+pcor")
    wrapped.reset(SimpleNamespace(estimate=[1000.0], user=[1]))
    wrapped.prediction[0] = 300.0
    old = 300.0
    for _ in range(6):
        new = steps.next(0, old)
        assert new == wrapped.on_expire(0, 0.0, old)
        wrapped.revise(0, 0.0, new)
        old = new


# ------------------------------------------------------------------ the presets
@pytest.mark.parametrize(
    ("policy", "preset", "config"),
    [
        ("easy++", None, "user-history"),
        ("easy++", None, "user-history:k=2,type=all,fullness=partial,metric=avg,correction=estimate"),
        ("easy+", None, "user-history:k=2,correction=est"),
        ("easy", "user-avg", "user-history:correction=none"),
        ("easy", "user-avg", "user-history"),
        ("easy", "user-avg+pcor", "user-history:correction=estimate"),
        ("easy", "user-avg+pcor", "user-history+pcor"),
        ("easy", "user-avg-imm", "user-history:type=immediate,correction=none"),
        ("x2+", None, "user-history:correction=none"),  # x2+ corrects the doubled prediction
        ("easy++", "user-avg:k=4,full=true,order=end", "user-history:k=4,fullness=full,order=end"),
    ],
)
def test_presets_are_points_of_the_space_bit_for_bit(bundled_slice, policy, preset, config):
    runs = [
        Simulator(bundled_slice, predictor=preset_predictor(policy, pred)).run(
            make_policy(policy), progress=False
        )
        for pred in (preset, config)
    ]
    np.testing.assert_array_equal(runs[0].start, runs[1].start)
    np.testing.assert_array_equal(runs[0].end, runs[1].end)
    np.testing.assert_array_equal(runs[0].first_prediction, runs[1].first_prediction)
    assert runs[0].prediction_changes == runs[1].prediction_changes


@pytest.fixture(scope="module")
def bundled_slice():
    from hpcgym.workloads import load_default

    return load_default().window(3000)


# ------------------------------------------------------------------ the string form
@pytest.mark.parametrize("config", sample_predictor_space(40, seed=3))
def test_string_form_round_trips(config):
    assert UserHistoryConfig.parse(str(config)) == config
    p = make_predictor(str(config))
    assert isinstance(p, UserHistory) and p.config == config and p.name == str(config)


def test_the_name_lists_only_what_differs_from_user_avg():
    assert str(UserHistoryConfig()) == "user-history" == make_predictor("user-history").name
    assert str(UserHistoryConfig(k=3, correction="est")) == "user-history:k=3,correction=estimate"
    assert make_predictor("history:correction=none,k=2+pcor").name == "user-history+pcor"


def test_aliases_and_spellings_name_one_configuration():
    a = UserHistoryConfig.parse(
        "History:k=3,type=EXT,metric=average,fallback=rel,propagation=true,correction=exp"
    )
    b = UserHistoryConfig(
        k=3, type="extended", metric="avg", fallback="relative", propagation=True, correction="exponential"
    )
    assert a == b and hash(a) == hash(b)
    assert (
        make_predictor("history:k=3,type=ext").name == make_predictor("user-history:type=extended,k=3").name
    )
    assert pickle.loads(pickle.dumps(b)) == b


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("user-history:k=0", "k must be a positive integer"),
        ("user-history:k=2.5", "k must be a positive integer"),
        ("user-history:k=true", "k must be a positive integer"),
        ("user-history:type=recent", "type must be all | immediate | extended"),
        ("user-history:fullness=half", "fullness must be partial | full"),
        ("user-history:metric=mode", "metric must be avg | median | min | max"),
        ("user-history:fallback=zero", "fallback must be estimate | relative"),
        ("user-history:propagation=maybe", "propagation must be yes | no"),
        ("user-history:correction=linear", "correction must be estimate | gradual | exponential | none"),
        ("user-history:order=random", "order must be submit | end"),
        ("user-history:size=3", "unknown parameter 'size'"),
        ("user-history:k", "is not key=value"),
    ],
)
def test_invalid_values_name_the_parameter_and_the_allowed_values(text, message):
    with pytest.raises(InvalidConfigError, match=message):
        make_predictor(text)
    with pytest.raises(InvalidConfigError, match=message):
        UserHistoryConfig.parse(text)


def test_parse_rejects_other_predictors_and_modifiers():
    with pytest.raises(InvalidConfigError, match="not a user-history configuration"):
        UserHistoryConfig.parse("user-avg:k=2")
    with pytest.raises(InvalidConfigError, match="no '\\+' modifiers"):
        UserHistoryConfig.parse("user-history:k=2+pcor")


def test_cli_plans_with_a_configuration(capsys):
    from hpcgym.cli import main

    name = "user-history:k=3,type=ext,metric=median,propagation=yes,correction=gradual"
    assert main(["simulate", "--jobs", "300", "--policy", "easy++", "--predictor", name, "--json"]) == 0
    assert str(UserHistoryConfig.parse(name)) in capsys.readouterr().out
    assert main(["simulate", "--jobs", "10", "--predictor", "user-history:metric=mode"]) == 2
    assert "metric must be avg | median | min | max" in capsys.readouterr().err


# ------------------------------------------------------------------ the space
def test_the_space_has_004s_8640_configurations():
    sizes = [len(v) for v in PREDICTOR_SPACE.values()]
    assert sizes == [3, 2, 2, 2, 4, 3, 30]  # footnote 8, Fig. 9's order
    configs = list(predictor_space())
    assert len(configs) == 8640 == len(set(configs)) == int(np.prod(sizes))
    assert all(c.in_space for c in configs)
    assert UserHistoryConfig(correction="estimate") in set(configs)  # EASY++'s predictor
    assert UserHistoryConfig() not in set(configs)  # user-avg's: no correction


def test_space_restriction_and_errors():
    sub = list(predictor_space(type="all", correction="estimate", k=range(1, 4)))
    assert len(sub) == 2 * 2 * 2 * 4 * 3
    assert {(c.type, c.correction) for c in sub} == {("all", "estimate")}
    with pytest.raises(InvalidConfigError, match="unknown parameter"):
        list(predictor_space(window=[1]))
    with pytest.raises(InvalidConfigError, match="metric must be"):
        list(predictor_space(metric=["mode"]))


def test_sampler_is_seeded_distinct_and_in_the_space():
    a = sample_predictor_space(200, seed=7)
    assert a == sample_predictor_space(200, seed=7)
    assert a != sample_predictor_space(200, seed=8)
    assert len(set(a)) == 200 and set(a) <= set(predictor_space())
    with pytest.raises(InvalidConfigError, match="exceeds"):
        sample_predictor_space(8641)
    with pytest.raises(InvalidConfigError, match="positive integer"):
        sample_predictor_space(0)


def test_equivalent_configurations_predict_alike():
    # 004 footnote 9: k=1 makes metric and fullness irrelevant; k=2's median is its mean
    for spec, canonical in (("k=1,metric=max,fullness=full", "k=1"), ("k=2,metric=median", "k=2")):
        assert predict(spec) == predict(canonical)
        assert UserHistoryConfig.parse(f"user-history:{spec}").canonical() == UserHistoryConfig.parse(
            f"user-history:{canonical}"
        )
    distinct = {c.canonical() for c in predictor_space()}
    assert len(distinct) == 7620


# ------------------------------------------------------------------ properties
configs = st.builds(
    UserHistoryConfig,
    k=st.integers(1, 6) | st.just(30),
    type=st.sampled_from(PREDICTOR_SPACE["type"]),
    fullness=st.sampled_from(PREDICTOR_SPACE["fullness"]),
    metric=st.sampled_from(PREDICTOR_SPACE["metric"]),
    fallback=st.sampled_from(PREDICTOR_SPACE["fallback"]),
    propagation=st.booleans(),
    correction=st.sampled_from(PREDICTOR_SPACE["correction"]),
    order=st.sampled_from(("submit", "end")),
)


def _drive(config: UserHistoryConfig, w, wait: list[float], cut: float):
    """Feed ``config``'s predictor ``w``'s jobs (start = submit + wait) up to time ``cut``."""
    p = UserHistory(config)
    p.reset(w.public)
    submit = w.submit.tolist()
    runtime = w.runtime.tolist()
    events = []
    for j in range(len(w)):
        start = submit[j] + wait[j]
        events += [(submit[j], 1, j), (start, 2, j), (start + runtime[j], 0, j)]
    for t, kind, j in sorted(events):  # ends, then submissions, then starts at one instant
        if t > cut:
            break
        if kind == 1:
            p.on_submit(j, t)
        elif kind == 2:
            p.on_start(j, t)
        else:
            p.on_end(j, t, runtime[j])
    return p


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), config=configs)
def test_predictions_are_bounded_and_never_see_the_future(data, config):
    w = data.draw(random_workloads(max_jobs=25))
    n = len(w)
    wait = [float(x) for x in data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))]
    cut = float(data.draw(st.sampled_from(sorted(set(w.submit.tolist())))))
    p = _drive(config, w, wait, float("inf"))
    submitted = p.prediction  # every job was submitted
    assert np.all(submitted >= 0) and np.all(submitted <= w.estimate)
    if np.all(w.runtime > 0):
        assert np.all(submitted > 0)
    # jobs that have not ended by ``cut`` run for other times: nothing known at ``cut`` moves
    start = w.submit + np.asarray(wait)
    later = start + w.runtime > cut
    other = w.runtime.copy()
    other[later] += 1000.0
    w2 = build_workload(
        [
            (s, r, q, e, u)
            for s, r, q, e, u in zip(w.submit, other, w.procs_req, w.estimate, w.user, strict=True)
        ],
        w.procs,
    )
    a, b = _drive(config, w, wait, cut), _drive(config, w2, wait, cut)
    np.testing.assert_array_equal(a.prediction, b.prediction)
    assert a.changes == b.changes


@settings(max_examples=examples(15), deadline=None)
@given(data=st.data(), config=configs)
def test_engine_runs_are_valid_and_repeatable(data, config):
    w = data.draw(random_workloads(max_jobs=20))
    runs = [
        Simulator(w, predictor=UserHistory(config)).run(make_policy("easy++"), progress=False)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].start, runs[1].start)
    assert runs[0].prediction_changes == runs[1].prediction_changes
    assert np.all(runs[0].start >= w.submit)
    assert all(p >= 0 for _, _, p in runs[0].prediction_changes)


def test_cli_prints_the_space_and_a_seeded_sample(capsys):
    import json

    from hpcgym.cli import main

    assert main(["predictors", "--sample", "5", "--seed", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [str(c) for c in sample_predictor_space(5, seed=2)]
    assert main(["predictors", "--space"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8640 and lines[0] == str(next(predictor_space()))
    assert main(["predictors", "--sample", "9000"]) == 2
    assert "exceeds the space's 8640 configurations" in capsys.readouterr().err
