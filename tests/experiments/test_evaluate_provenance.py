"""Evaluation that cannot mislead (issue 24, points 1-4): where the windows lie for a model, enough
windows for an interval, the t-interval and the sign test beside the bootstrap, and a reference
picked on validation."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.stats import interval_text, paired_t_interval, sign_test
from hpcgym.experiments.evaluate import evaluate
from hpcgym.experiments.protocols import default_window_jobs, evaluation_offsets
from hpcgym.workloads import Workload, content_sha256, load_default

pytest.importorskip("sb3_contrib")

WINDOW = {"window_jobs": 20, "windows": 2, "n_resamples": 99}
"""Two 20-job windows: enough to place them, quick to play."""


@pytest.fixture(scope="module")
def bundled() -> Workload:
    return load_default()  # 8,943 jobs: train [0, 6260), validation [6260, 7602), test [7602, 8943)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained MaskablePPO saved as `hpcgym train` saves it, with the bundled trace's provenance."""
    from sb3_contrib import MaskablePPO

    from hpcgym.agents.common import TrainArgs, make_env
    from hpcgym.agents.models import model_metadata, save_model

    args = TrainArgs(window_jobs=40, window_size=8, net_arch=(8,), progress_bar=False)
    env = make_env(args, "train")
    agent = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=1, device="cpu")
    path = tmp_path_factory.mktemp("m") / "agent.zip"
    return save_model(agent, path, model_metadata("maskable-ppo", args, env))


def test_the_metadata_records_the_trace_hash_and_split_ranges(model: Path, bundled: Workload) -> None:
    from hpcgym.agents.models import read_metadata

    env = read_metadata(model)["env"]  # type: ignore[index]
    assert env["trace_sha256"] == content_sha256(bundled) and env["trace_jobs"] == 8943
    assert {k: v["jobs"] for k, v in env["splits"].items()} == {
        "train": [0, 6260],
        "validation": [6260, 7602],
        "test": [7602, 8943],
    }
    assert env["splits"]["test"]["job_ids"] == [int(bundled.job_id[7602]), int(bundled.job_id[-1])]
    assert env["job_ids_increasing"] and len(env["fingerprint"]["job_id"]) == -(-8943 // 64)


def test_a_cut_trace_whose_test_windows_hold_training_jobs_fails(model: Path, bundled: Workload) -> None:
    # issue 24.1: the "test" split of the first 4,000 jobs lies in the model's train split
    with pytest.raises(InvalidConfigError, match=r"2 of the 2 test windows hold jobs it was trained") as info:
        evaluate([str(model)], bundled.window(4000), **WINDOW)
    assert "window 1 (jobs 3400-3419 of these 4000): train" in str(info.value)
    assert "train jobs [0, 6260) (job numbers" in str(info.value)
    # cut from the middle (--offset): matched by job number, the test split here is the model's validation
    with pytest.raises(InvalidConfigError, match=r"window 1 \(jobs 2550-2569 of these 3000\): validation"):
        evaluate([str(model)], bundled.window(3000, offset=5000), **WINDOW)


def test_held_out_says_where_the_windows_lie_for_the_model(model: Path, bundled: Workload) -> None:
    test = evaluate([str(model)], bundled, **WINDOW)
    mw = test.config["model_windows"]["agent"]
    assert test.config["held_out"] is True and mw["relation"] == "test" and mw["match"] == "identical"
    assert "agent: test" in test.table()
    # issue 24.2: --split train is labelled, not held out
    train = evaluate([str(model)], bundled, split="train", **WINDOW)
    assert train.config["held_out"] is False
    assert train.config["model_windows"]["agent"]["relation"] == "train"
    assert "agent: train" in train.table() and "NOT held out" in train.table()
    # the same jobs read again, load-scaled: still the model's test split, matched by job number
    scaled = evaluate([str(model)], bundled.scale_load(1.2), **WINDOW)
    assert scaled.config["model_windows"]["agent"]["match"] == "same jobs" and scaled.config["held_out"]


def test_another_trace_is_a_transfer_run(model: Path, bundled: Workload) -> None:
    n = 3000
    runtime = bundled.runtime[:n][::-1]
    other = Workload.from_columns(
        bundled.submit[:n], runtime, bundled.procs_req[:n], runtime * 2 + 60, procs=128, name="other"
    )
    ev = evaluate([str(model)], other, **WINDOW)
    assert ev.config["model_windows"]["agent"]["relation"] == "transfer" and ev.config["held_out"]
    assert "agent: transfer" in ev.table() and "a transfer run: trained on SDSC-SP2" in ev.table()
    assert json.loads(ev.to_json())["summary"][0]["windows_vs_model"] == "transfer"


def test_old_metadata_gains_the_provenance_without_touching_the_weights(
    model: Path, bundled: Workload, tmp_path: Path
) -> None:
    from hpcgym.agents.models import METADATA_MEMBER, add_trace_provenance, read_metadata

    old = tmp_path / "old.zip"
    meta = read_metadata(model)
    for key in ("trace_sha256", "splits", "job_ids_increasing", "fingerprint"):
        del meta["env"][key]  # type: ignore[index]
    with zipfile.ZipFile(model) as src, zipfile.ZipFile(old, "w") as dst:
        for info in src.infolist():
            data = json.dumps(meta).encode() if info.filename == METADATA_MEMBER else src.read(info)
            dst.writestr(info, data)
    # without the fingerprint, the trace is recognised by name and placed by index
    assert evaluate([str(old)], bundled, **WINDOW).config["model_windows"]["old"]["match"] == "same name"
    add_trace_provenance(old, bundled)
    assert read_metadata(old) == read_metadata(model)
    with zipfile.ZipFile(old) as a, zipfile.ZipFile(model) as b:
        assert [(i.filename, i.CRC) for i in a.infolist()] == [(i.filename, i.CRC) for i in b.infolist()]
    with pytest.raises(InvalidConfigError, match="not synthetic"):
        add_trace_provenance(old, Workload.from_columns([0], [1], [1], [1], procs=128))


# ---------------------------------------------------------------- point 3: enough windows, three views
def test_default_windows_give_each_development_trace_at_least_20() -> None:
    for n_jobs in (54_044, 202_871):  # SDSC-SP2 and HPC2N, cleaned
        wj = default_window_jobs(n_jobs)
        assert len(evaluation_offsets(n_jobs, wj)[1]) >= 20
    assert default_window_jobs(54_044) == 405 and default_window_jobs(202_871) == 1024
    assert default_window_jobs(54_044, windows=3) == 1024  # a few windows asked for: long ones


def test_the_t_interval_and_the_sign_test_beside_the_bootstrap(bundled: Workload) -> None:
    diff = np.array([3.0, 5.0, 4.0, 6.0, 5.5]) - np.array([1.0, 2.0, 2.5, 2.0, 3.0])
    half = 2.7764451051977987 * diff.std(ddof=1) / np.sqrt(5)  # t(4, 0.975)
    assert paired_t_interval(diff, np.zeros(5))[1:] == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert sign_test([1, 1, 1, 1, 1], [2, 2, 2, 2, 2]).p_value == pytest.approx(2 / 32)
    assert sign_test([1, 3, 2], [2, 2, 2]) == sign_test([1, 3, 2], [2, 2, 2]).__class__(1, 1, 1, 1.0)
    assert interval_text(float("nan"), float("nan")) == "no interval (one pair)"
    ev = evaluate(["fcfs"], bundled.window(4000), window_jobs=100, n_resamples=99)
    row = ev.summary[0]
    fcfs = np.array([r["mean_bsld"] for r in ev.per_window["fcfs"]])
    easy = np.array([r["mean_bsld"] for r in ev.per_window["easy"]])
    assert row["bsld_wins"] == int((fcfs < easy).sum()) and row["bsld_losses"] == int((fcfs > easy).sum())
    t_interval = (row["bsld_diff_t_low"], row["bsld_diff_t_high"])
    assert t_interval == pytest.approx(paired_t_interval(fcfs, easy)[1:])
    assert ev.config["windows"] == 6 and ev.config["intervals_approximate"]
    table = ev.table()
    assert "t-interval" in table and "wins (sign p)" in table and f"{row['bsld_wins']}/6 (p " in table
    assert "only 6 windows: the intervals are approximate" in table


# ---------------------------------------------------------------- point 4: the reference picked on validation
def test_reference_best_is_picked_on_validation_and_the_test_best_is_shown(bundled: Workload) -> None:
    trace = bundled.window(4000)
    policies = ["fcfs", "easy", "sjf", "f1-bf", "saf-bf"]
    kw = {"window_jobs": 100, "n_resamples": 99}
    ev = evaluate(policies, trace, reference="best", **kw)
    val = evaluate(policies, trace, split="validation", **kw)
    on_val = {r["policy"]: r["mean_bsld"] for r in val.summary}
    on_test = {r["policy"]: r["mean_bsld"] for r in ev.summary}
    choice = ev.config["reference_choice"]
    assert choice["picked_on"] == "validation" and choice["validation_mean_bsld"] == pytest.approx(on_val)
    assert ev.config["reference"] == choice["picked"] == min(on_val, key=on_val.get)  # type: ignore[arg-type]
    assert choice["test_best"] == min(on_test, key=on_test.get)  # type: ignore[arg-type]
    assert f"reference {choice['picked']}: picked on the validation split" in ev.table()
    assert [r["policy"] for r in ev.summary] == policies  # nothing added
    with pytest.raises(InvalidConfigError, match="'best' picks among the dispatcher presets"):
        evaluate({"mine": lambda view: view.queue[:1]}, trace, reference="best", **kw)
