"""``hpcgym evaluate`` (issue 12 item 2): same windows for every policy, determinism, paired intervals."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import split_range
from hpcgym.experiments.evaluate import evaluate
from hpcgym.experiments.protocols import evaluation_offsets
from hpcgym.workloads import Workload, load_default

FRACTIONS = (0.7, 0.15, 0.15)


@pytest.fixture(scope="module")
def trace() -> Workload:
    return load_default().window(4000)  # test split: jobs [3400, 4000)


class OldestFirst:
    """An agent: the oldest waiting job if it fits, else advance (FCFS through the env)."""

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True,
                action_masks: np.ndarray | None = None) -> tuple[int, None]:  # fmt: skip
        assert action_masks is not None
        return (0 if action_masks[0] else len(action_masks) - 1), None


class AlwaysFirst:
    """An unmasked agent that always picks slot 0, fitting or not."""

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True):  # type: ignore[no-untyped-def]
        return 0, None


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(10, 100_000),
    window=st.integers(1, 3000),
    count=st.one_of(st.none(), st.integers(1, 50)),
    split=st.sampled_from(["train", "validation", "test", "all"]),
)
def test_windows_never_overlap_and_never_leave_the_split(
    n: int, window: int, count: int | None, split: str
) -> None:
    lo, hi = split_range(n, split, FRACTIONS)
    if window > hi - lo:
        with pytest.raises(InvalidConfigError, match="window_jobs"):
            evaluation_offsets(n, window, count, split, FRACTIONS)
        return
    job_range, offsets = evaluation_offsets(n, window, count, split, FRACTIONS)
    assert job_range == (lo, hi)
    fit = (hi - lo) // window
    assert len(offsets) == (fit if count is None else min(count, fit))
    assert offsets == sorted(offsets) and offsets[0] == lo
    assert all(lo <= o and o + window <= hi for o in offsets)
    assert all(b - a >= window for a, b in itertools.pairwise(offsets))


def test_default_is_as_many_1024_job_windows_as_the_test_split_holds() -> None:
    # the bundled trace: 8,943 jobs, test split [7602, 8943) = 1,341 jobs: one window
    assert evaluation_offsets(8943, 1024) == ((7602, 8943), [7602])
    assert evaluation_offsets(73_496, 1024)[1] == [62472 + i * (73496 - 1024 - 62472) // 9 for i in range(10)]


def test_same_seed_same_table_and_the_reference_is_added(trace: Workload) -> None:
    kw: dict[str, Any] = {"window_jobs": 150, "n_resamples": 500, "seed": 3}
    a = evaluate(["fcfs", "f1-bf", "random-fit:seed=2"], trace, **kw)
    b = evaluate(["fcfs", "f1-bf", "random-fit:seed=2"], trace, **kw)
    assert a.to_json() == b.to_json()
    assert a.table() == b.table()
    assert [r["policy"] for r in a.summary] == ["fcfs", "f1-bf", "random-fit:seed=2", "easy"]
    assert a.config["windows"] == 4 and [w["offset"] for w in a.windows] == [3400, 3550, 3700, 3850]
    # another bootstrap seed moves only the intervals
    c = evaluate(["fcfs", "f1-bf", "random-fit:seed=2"], trace, **{**kw, "seed": 4})
    assert c.per_window == a.per_window
    assert [r["bsld_diff"] for r in c.summary[:-1]] == [r["bsld_diff"] for r in a.summary[:-1]]
    assert [r["bsld_diff_low"] for r in c.summary[:-1]] != [r["bsld_diff_low"] for r in a.summary[:-1]]


def test_paired_differences_are_per_window_differences(trace: Workload) -> None:
    ev = evaluate(["fcfs"], trace, window_jobs=150, n_resamples=500)
    fcfs = np.array([r["mean_bsld"] for r in ev.per_window["fcfs"]])
    easy = np.array([r["mean_bsld"] for r in ev.per_window["easy"]])
    row = ev.summary[0]
    assert row["bsld_diff"] == pytest.approx(float(np.mean(fcfs - easy)))
    assert row["bsld_diff_low"] <= row["bsld_diff"] <= row["bsld_diff_high"]
    assert row["mean_bsld"] == pytest.approx(fcfs.mean()) and row["median_bsld"] == pytest.approx(
        np.median(fcfs)
    )
    assert row["invalid_rate"] is None and ev.summary[1]["bsld_vs_reference"] == "(reference)"


@pytest.mark.parametrize("warm", [False, True])
def test_an_agent_through_the_env_meets_the_dispatcher_on_the_same_windows(
    trace: Workload, warm: bool
) -> None:
    ev = evaluate(
        {"agent": OldestFirst(), "fcfs": "fcfs"}, trace, window_jobs=200, warm_start=warm, n_resamples=200
    )
    assert ev.per_window["agent"] == [
        {**r, "steps": a["steps"]} for r, a in zip(ev.per_window["fcfs"], ev.per_window["agent"], strict=True)
    ]
    agent = next(r for r in ev.summary if r["policy"] == "agent")
    assert agent["kind"] == "agent" and agent["invalid_rate"] == 0.0
    assert all(r["steps"] > 0 for r in ev.per_window["agent"])


class Always:
    """A policy-mode agent that always picks dispatcher ``a``."""

    def __init__(self, a: int) -> None:
        self.a = a

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True,
                action_masks: np.ndarray | None = None) -> tuple[np.ndarray, None]:  # fmt: skip
        return np.array(self.a), None


@pytest.mark.parametrize(("a", "preset"), [(0, "saf-bf"), (1, "f1-bf")])
def test_a_policy_mode_agent_that_always_picks_one_dispatcher_is_that_dispatcher(
    trace: Workload, a: int, preset: str
) -> None:
    ev = evaluate(
        {"agent": Always(a), preset: preset},
        trace,
        window_jobs=200,
        n_resamples=200,
        env_kwargs={"mode": "policy", "policies": ("saf-bf", "f1-bf", "easy")},
    )
    agent_rows = ev.per_window["agent"]
    dispatcher_rows = [
        {**r, "steps": a["steps"], "picks": a["picks"]}
        for r, a in zip(ev.per_window[preset], agent_rows, strict=True)
    ]
    assert agent_rows == dispatcher_rows
    assert all(r["picks"][preset] == r["steps"] == sum(r["picks"].values()) for r in agent_rows)
    decisions = sum(r["steps"] for r in agent_rows)
    note = f"agent (policy mode) picked, over its {decisions} decisions: {preset} 100.0 %, "
    assert any(n.startswith(note) for n in ev.notes)


def test_warm_start_changes_the_windows_schedule(trace: Workload) -> None:
    cold = evaluate(["fcfs"], trace, window_jobs=200, n_resamples=200)
    warm = evaluate(["fcfs"], trace, window_jobs=200, n_resamples=200, warm_start=True)
    assert cold.per_window["fcfs"] != warm.per_window["fcfs"]
    assert warm.config["warm_start"] and "starts warm" in warm.notes[0]


def test_invalid_actions_are_counted(trace: Workload) -> None:
    ev = evaluate({"first": AlwaysFirst()}, trace, window_jobs=200, windows=1, n_resamples=200)
    row = ev.summary[0]
    (w,) = ev.per_window["first"]
    assert 0 < w["invalid_steps"] < w["steps"]
    assert row["invalid_rate"] == pytest.approx(w["invalid_steps"] / w["steps"])
    assert "one window" in row["bsld_vs_reference"]


def test_any_dispatcher_callable(trace: Workload) -> None:
    def oldest(view):  # type: ignore[no-untyped-def]
        # FCFS on one node: waiting jobs in arrival order while their processors are free
        free, out = int(view.free_total[0]), []
        for j in view.queue.tolist():
            if view.procs[j] > free:
                break
            out.append(j)
            free -= int(view.procs[j])
        return out

    ev = evaluate(
        {"oldest": oldest, "instance": make_policy("fcfs")}, trace, window_jobs=200, n_resamples=200
    )
    fcfs = evaluate(["fcfs"], trace, window_jobs=200, n_resamples=200)
    assert ev.per_window["oldest"] == fcfs.per_window["fcfs"] == ev.per_window["instance"]


def test_bad_inputs_name_the_parameter(trace: Workload) -> None:
    with pytest.raises(InvalidConfigError, match="window_jobs: 700 jobs do not fit the 'test' split"):
        evaluate(["fcfs"], trace, window_jobs=700)
    with pytest.raises(InvalidConfigError, match="names the reference preset"):
        evaluate({"easy": "fcfs"}, trace, window_jobs=100)
    with pytest.raises(InvalidConfigError, match="given twice"):
        evaluate(["fcfs", "FCFS"], trace, window_jobs=100)
    with pytest.raises(InvalidConfigError, match="neither a preset name"):
        evaluate([3], trace, window_jobs=100)
    with pytest.raises(InvalidConfigError, match="model: no such file"):
        evaluate(["missing.zip"], trace, window_jobs=100)


def test_cli_writes_json_csv_and_plots(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    out = tmp_path / "ev"
    argv = ["evaluate", "--jobs", "3000", "--policies", "fcfs,f1-bf,wfp3-bf", "--window-jobs", "200",
            "--resamples", "300", "--out", str(out), "--json"]  # fmt: skip
    assert cli_main(argv) == 0
    cap = capsys.readouterr()
    data = json.loads(cap.out)
    assert [r["policy"] for r in data["summary"]] == ["fcfs", "f1-bf", "wfp3-bf", "easy"]
    assert "[1/4] fcfs window 1/2" in cap.err
    assert data["config"]["split_range"] == [2550, 3000] and len(data["windows"]) == 2
    for name in ("evaluation.json", "summary.csv", "windows.csv", "bsld_by_window.png", "paired_bsld.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "windows.csv").read_text().count("\n") == 1 + 4 * 2
    assert cli_main([*argv[:-3], "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "bsld - ref [95% CI]" in table and "(reference)" in table
    assert cli_main(["evaluate", "--jobs", "3000", "--window-jobs", "5000"]) == 2
    assert "window_jobs: 5000 jobs do not fit" in capsys.readouterr().err


def test_a_saved_maskable_ppo_model_is_reloaded_and_evaluated(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from hpcgym.env import FlattenDispatchObservation

    env = FlattenDispatchObservation(gym.make("hpcgym/Dispatch-v1", window_jobs=32, window_size=8))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=1, device="cpu")
    model.learn(total_timesteps=32)
    path = tmp_path / "agent.zip"
    model.save(path)
    argv = ["evaluate", "--jobs", "3000", "--policies", "easy", "--model", str(path), "--window-size", "8",
            "--window-jobs", "200", "--windows", "2", "--resamples", "200", "--json",
            "--no-progress"]  # fmt: skip
    assert cli_main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    agent = next(r for r in data["summary"] if r["policy"] == "agent")
    assert agent["kind"] == "agent" and agent["windows"] == 2 and 0.0 <= agent["invalid_rate"] <= 1.0
    # a model needs the environment it was trained in
    assert cli_main(argv[:7] + argv[9:]) == 2
    assert "observation space" in capsys.readouterr().err
    # two runs' best_model.zip are two rows, named by their folders
    (tmp_path / "b").mkdir()
    other = tmp_path / "b" / "agent.zip"
    other.write_bytes(path.read_bytes())
    assert cli_main([*argv, "--model", str(other)]) == 0
    names = [r["policy"] for r in json.loads(capsys.readouterr().out)["summary"]]
    assert f"{tmp_path.name}/agent" in names and "b/agent" in names
    assert cli_main([*argv, "--model", str(path)]) == 2
    assert "another model is named" in capsys.readouterr().err
