"""Training sweeps of ``hpcgym sweep``: the same table from every backend, resuming, bad specs.

Tiny budgets (256 timesteps, windows of 64 jobs, K = 8, one validation window, two test
windows) on the bundled slice: a trial takes about two seconds.
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sb3_contrib", reason="the rl extra is not installed (pip install 'hpcgym[rl]')")

from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError, MissingExtraError, UnknownNameError
from hpcgym.experiments.sweep import preset_path
from hpcgym.experiments.sweep.train_runs import run_train_sweep
from hpcgym.experiments.sweep.train_spec import TIMING_COLUMNS, TrainSweepSpec, columns

TRAIN = {
    "algorithm": "maskable-ppo",
    "seeds": [1],
    "args": {
        "total_timesteps": 256,
        "window_jobs": 64,
        "window_size": 8,
        "eval_windows": 1,
        "n_steps": 128,
        "batch_size": 64,
    },
    "grid": {"learning_rate": [3e-4, 1e-3]},
    "evaluate": {"windows": 2, "n_resamples": 200},
}
"""Two trials: one seed x two learning rates."""

SPEC_TOML = """\
name = "tiny"

[train]
algorithm = "maskable-ppo"
seeds = [1]

[train.args]
total_timesteps = 256
window_jobs = 64
window_size = 8
eval_windows = 1
n_steps = 128
batch_size = 64

[train.grid]
learning_rate = [3e-4, 1e-3]

[train.evaluate]
windows = 2
n_resamples = 200
"""
"""The same sweep as a spec file."""


def make_spec(**train: Any) -> TrainSweepSpec:
    return TrainSweepSpec.from_mapping({"name": "tiny", "train": {**TRAIN, **train}})


@pytest.fixture(scope="module")
def spec() -> TrainSweepSpec:
    return make_spec()


@pytest.fixture(scope="module")
def reference_out(spec: TrainSweepSpec, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two trials, one after the other in this process."""
    out = tmp_path_factory.mktemp("ref")
    result = run_train_sweep(spec, out, processes=1, progress=False)
    assert (result.total, result.skipped, result.ran) == (2, 0, 2)
    return out


@pytest.fixture(scope="module")
def reference(spec: TrainSweepSpec, reference_out: Path) -> list[dict[str, Any]]:
    return run_train_sweep(spec, reference_out, processes=1, progress=False).rows


def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


# ---------------------------------------------------------------------------- the table
def test_reference_table_has_a_row_per_trial_and_policy(
    spec: TrainSweepSpec, reference: list[dict[str, Any]], reference_out: Path
) -> None:
    assert [(r["learning_rate"], r["policy"]) for r in reference] == [
        (3e-4, "maskable-ppo"),
        (3e-4, "easy"),
        (1e-3, "maskable-ppo"),
        (1e-3, "easy"),
    ]
    assert len({r["key"] for r in reference}) == 2
    with open(reference_out / "results.csv", newline="") as fh:
        assert tuple(next(csv.reader(fh))) == columns(spec)
    agent, easy = reference[0], reference[1]
    assert agent["kind"] == "agent" and easy["kind"] == "dispatcher"
    assert agent["invalid_rate"] == 0.0  # masked
    assert agent["windows"] == easy["windows"] == 2
    assert agent["timesteps"] >= 256
    # the agent's paired difference with EASY is its mean minus EASY's, on the same windows
    assert agent["bsld_diff"] == pytest.approx(agent["mean_bsld"] - easy["mean_bsld"])
    assert agent["bsld_diff_low"] <= agent["bsld_diff"] <= agent["bsld_diff_high"]
    assert easy["bsld_diff"] is None  # the reference
    for r in reference:  # each trial's run folder: its models and its evaluation
        run = reference_out / r["run"]
        assert (run / "best_model.zip").is_file() and (run / "training.json").is_file()
        evaluation = json.loads((run / "evaluation" / "evaluation.json").read_text())
        assert {s["policy"] for s in evaluation["summary"]} == {"maskable-ppo", "easy"}
        assert r["best_validation_bsld"] == min(
            v["mean_bsld"] for v in json.loads((run / "training.json").read_text())["validations"]
        )


def test_process_pool_gives_the_same_table(
    spec: TrainSweepSpec, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    result = run_train_sweep(spec, tmp_path, processes=2, progress=False)
    assert result.ran == 2
    assert without_timing(result.rows) == without_timing(reference)


def test_ray_tune_gives_the_same_table(
    spec: TrainSweepSpec, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'hpcgym[ray]')")
    import ray

    result = run_train_sweep(spec, tmp_path, backend="ray", processes=2, progress=False)
    assert not ray.is_initialized()  # the sweep started Ray, so it shut it down
    assert (result.skipped, result.ran) == (0, 2)
    assert without_timing(result.rows) == without_timing(reference)
    # Tune's own record of each trial: the validation score reported as training went
    reports = [
        json.loads(line)
        for path in sorted((tmp_path / "tune").glob("*/*/result.json"))
        for line in path.read_text().splitlines()
    ]
    assert len({r["trial_id"] for r in reports}) == 2
    assert all("validation_mean_bsld" in r for r in reports)


# ---------------------------------------------------------------------------- resuming
def test_a_re_run_skips_finished_trials(
    spec: TrainSweepSpec, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    first = run_train_sweep(spec, tmp_path, processes=1, max_runs=1, progress=False)
    assert (first.skipped, first.ran, len(first.rows)) == (0, 1, 2)
    second = run_train_sweep(spec, tmp_path, processes=1, progress=False)
    assert (second.skipped, second.ran) == (1, 1)
    assert without_timing(second.rows) == without_timing(reference)
    third = run_train_sweep(spec, tmp_path, processes=1, progress=False)
    assert (third.skipped, third.ran) == (2, 0)


def test_a_trial_cut_short_while_written_runs_again(
    spec: TrainSweepSpec, reference: list[dict[str, Any]], reference_out: Path, tmp_path: Path
) -> None:
    lines = (reference_out / "results.csv").read_text().splitlines(keepends=True)
    (tmp_path / "results.csv").write_text("".join(lines[:-1]))  # the second trial's last row lost
    result = run_train_sweep(spec, tmp_path, processes=1, progress=False)
    assert (result.skipped, result.ran) == (1, 1)
    assert without_timing(result.rows) == without_timing(reference)


def test_cli_resumes_from_the_table_and_prints_it(
    reference_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text(SPEC_TOML)
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(reference_out / "results.csv", out / "results.csv")
    assert main(["sweep", str(spec_file), "-o", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "tiny: 2 trials; 2 already done, 0 run now" in text
    assert "maskable-ppo-seed1-" in text and "(reference)" in text
    # flags replace the file's keys: one learning rate is one of the two finished trials
    flags = ["sweep", str(spec_file), "-o", str(out), "--json", "--train-grid", "learning_rate=[1e-3]"]
    assert main(flags) == 0
    assert json.loads(capsys.readouterr().out) | {"seconds": 0} == {
        "name": "tiny",
        "trials": 1,
        "skipped": 1,
        "ran": 0,
        "left": 0,
        "seconds": 0,
        "table": str(out / "results.csv"),
    }
    # a grid of other names is another table: refused, naming the file, not appended to
    assert main([*flags[:-2], "--train-grid", "ent_coef=[0.0]"]) == 2
    assert "results.csv:1: not a results table of this sweep" in capsys.readouterr().err


def test_dry_run_lists_the_trials_and_an_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_file = tmp_path / "tiny.toml"
    spec_file.write_text(SPEC_TOML)
    assert main(["sweep", str(spec_file), "-o", str(tmp_path / "out"), "--dry-run", "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert [t["parameters"] for t in est["trials"]] == [
        "seed=1 learning_rate=0.0003",
        "seed=1 learning_rate=0.001",
    ]
    assert (est["runs"], est["pending"]) == (2, 2)
    assert est["core_seconds"] > 0 and est["probe"]["timesteps"] == 128  # one rollout
    assert not (tmp_path / "out").exists()  # nothing written


# ---------------------------------------------------------------------------- the spec
def test_train_seeds_preset_is_three_seeds_by_two_learning_rates() -> None:
    from hpcgym.common.files import read_toml_or_yaml

    path = preset_path("train-seeds")
    spec = TrainSweepSpec.from_mapping(read_toml_or_yaml(path, "sweep spec"), source=str(path))
    trials = spec.trials()
    assert spec.algorithm == "maskable-ppo" and len(trials) == 6
    assert {(t.seed, dict(t.params)["learning_rate"]) for t in trials} == {
        (s, lr) for s in (1, 2, 3) for lr in (3e-4, 1e-4)
    }
    assert len({t.key() for t in trials}) == 6


def test_a_sample_of_trials_is_seeded() -> None:
    spec = make_spec(seeds=[1, 2, 3], sample=3, sample_seed=5)
    again = make_spec(seeds=[1, 2, 3], sample=3, sample_seed=5)
    assert len(spec.trials()) == 3
    assert [t.key() for t in spec.trials()] == [t.key() for t in again.trials()]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"grid": {"learning_rat": [1e-3]}}, r"unknown training argument 'learning_rat'.*'learning_rate'"),
        ({"args": {"n_stepz": 64}}, r"unknown training argument 'n_stepz'"),
        ({"grid": {"seed": [1, 2]}}, r"train\.grid\.seed: set by the sweep"),
        ({"args": {"out": "x"}}, r"train\.args\.out: set by the sweep"),
        ({"grid": {"learning_rate": 1e-3}}, r"train\.grid\.learning_rate: give a non-empty list"),
        ({"grid": {"net_arch": [64, 64]}}, r"train\.grid\.net_arch: each value is a list"),
        ({"grid": {"learning_rate": [2.0]}}, r"--learning-rate: must be in \(0, 1\]"),
        ({"seeds": [1, 1]}, r"train\.seeds: a seed is given twice"),
        ({"evaluate": {"windowz": 2}}, r"train\.evaluate: unknown key 'windowz'"),
    ],
)
def test_bad_specs_name_the_key(change: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidConfigError, match=match):
        make_spec(**change)


def test_unknown_algorithm_and_keys() -> None:
    with pytest.raises(UnknownNameError, match=r"train\.algorithm: unknown 'a2c'"):
        make_spec(algorithm="a2c")
    with pytest.raises(InvalidConfigError, match=r"train: unknown key 'grids'"):
        make_spec(grids={})
    with pytest.raises(InvalidConfigError, match=r"dispatchers: a training sweep has only name and"):
        TrainSweepSpec.from_mapping({"train": TRAIN, "dispatchers": ["easy"]})


def test_cli_errors_name_the_flag_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", "--train", "maskable-ppo", "--train-grid", "learning_rat=[1e-3]"]) == 2
    assert "unknown training argument 'learning_rat'" in capsys.readouterr().err
    assert main(["sweep", "--train", "maskable-ppo", "--dispatchers", "easy"]) == 2
    assert "--dispatchers: not an option of a training sweep" in capsys.readouterr().err
    assert main(["sweep", "--train", "maskable-ppo", "--train-arg", "learning_rate"]) == 2
    assert "--train-arg 'learning_rate': give KEY=VALUE" in capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


def test_without_ray_the_ray_backend_names_the_extra(
    spec: TrainSweepSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"hpcgym\[ray\]"):
        run_train_sweep(spec, tmp_path, backend="ray", progress=False)
    assert not (tmp_path / "results.csv").exists()  # refused before anything is written


def test_a_relative_trace_leaves_for_workers_absolute_with_the_same_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.experiments.sweep.train_runs import _absolute_paths
    from hpcgym.workloads import default_trace_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    shutil.copy(default_trace_path(), tmp_path / "traces" / "slice.swf.gz")
    spec = make_spec(args={**TRAIN["args"], "trace": "traces/slice.swf.gz"})  # type: ignore[dict-item]
    trial = spec.trials()[0]
    moved = _absolute_paths(trial)
    assert moved.fields()["trace"] == str(tmp_path / "traces" / "slice.swf.gz")
    assert moved.key() == trial.key()  # the key holds the trace's file name only


@settings(max_examples=15, deadline=None)
@given(
    seeds=st.lists(st.integers(0, 50), min_size=1, max_size=3, unique=True),
    rates=st.lists(st.sampled_from([1e-4, 3e-4, 1e-3, 3e-3]), min_size=1, max_size=3, unique=True),
    coefs=st.lists(st.sampled_from([0.0, 0.01, 0.1]), min_size=1, max_size=2, unique=True),
    sample=st.one_of(st.none(), st.integers(1, 20)),
)
def test_trials_are_seeds_times_the_grid_or_a_sample_of_them(
    seeds: list[int], rates: list[float], coefs: list[float], sample: int | None
) -> None:
    grid = {"learning_rate": rates, "ent_coef": coefs}
    full = make_spec(seeds=seeds, grid=grid).trials()
    assert len(full) == len(seeds) * len(rates) * len(coefs)
    assert len({t.key() for t in full}) == len(full)  # every trial its own key and run folder
    assert {(t.seed, *dict(t.params).values()) for t in full} == {
        (s, r, c) for s in seeds for r in rates for c in coefs
    }
    drawn = make_spec(seeds=seeds, grid=grid, sample=sample).trials()
    keys = [t.key() for t in full]
    assert [keys.index(t.key()) for t in drawn] == sorted(keys.index(t.key()) for t in drawn)  # grid order
    assert len(drawn) == min(len(full), sample or len(full))
