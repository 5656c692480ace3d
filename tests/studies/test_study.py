"""``hpcgym study galleguillos2017``: 001's study on a small heavy workload."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hpcgym.cli import main
from hpcgym.studies.eurora_runs import Run, cp_spec
from hpcgym.studies.galleguillos2017 import (
    _queue_intervals,
    _slowdowns,
    render,
    run_galleguillos2017,
    write_outputs,
)
from hpcgym.workloads import Workload, read_jobs

SAMPLE = Path(__file__).resolve().parents[2] / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"


@pytest.fixture(scope="module")
def heavy() -> Workload:
    """The bundled Eurora sample with inter-arrival times / 40: queues form."""
    return read_jobs(SAMPLE, "eurora").scale_load(40)


@pytest.fixture(scope="module")
def result(heavy: Workload) -> dict:
    return run_galleguillos2017(heavy, dispatchers=["sjf-list", "ljf-list", "easy"], processes=1)


def test_every_combination_runs_on_the_same_jobs(result: dict, heavy: Workload) -> None:
    rows = result["rows"]
    assert [(r["dispatcher"], r["prediction"]) for r in rows] == [
        (d, p) for d in ("sjf-list", "ljf-list", "easy") for p in "WDR"
    ]
    runs = result["_runs"]
    sd, kept, _ = _slowdowns(heavy, runs)
    assert result["kept"] == len(kept) > 0
    # kept: some run gives a slowdown other than 1; the rest have slowdown 1 in every run
    assert np.all(np.any(sd != 1.0, axis=0))
    runtime = heavy.runtime.astype(float)
    others = np.setdiff1d(np.flatnonzero(runtime > 0), kept)
    for r in runs:
        assert np.all(r.start[others] == heavy.submit[others])
    for i, row in enumerate(rows):
        assert row["mean_slowdown"] == pytest.approx(sd[i].mean())
        # R predicts exactly; W never under-predicts
        if row["prediction"] == "R":
            assert row["prediction_mae_min"] == 0.0
        if row["prediction"] == "W":
            assert np.all(runs[i].first_prediction >= runtime)


def test_queue_intervals_match_counting_every_second() -> None:
    submit = np.array([0.0, 0.0, 2.0, 5.0])
    w = Workload.from_columns(submit, [3, 4, 1, 2], [1, 1, 1, 1], [3, 4, 1, 2], procs=1)
    a = Run("x", "W", np.array([0.0, 3.0, 7.0, 8.0]), submit, 1, 0.0)
    b = Run("y", "W", np.array([0.0, 4.0, 3.0, 5.0]), submit, 1, 0.0)
    lengths, dur = _queue_intervals(w, [a, b])
    seconds = np.arange(0, 10)
    per_second = [[int(np.sum((submit <= t) & (r.start > t))) for t in seconds] for r in (a, b)]
    busy = [t for t in seconds if per_second[0][t] or per_second[1][t]]
    assert dur.sum() == len(busy)
    for k in range(2):
        # the same distribution: each length weighted by its seconds
        got = sorted(np.repeat(lengths[k], dur.astype(int)).tolist())
        assert got == sorted(per_second[k][t] for t in busy)


def test_findings_are_checked_with_intervals(result: dict) -> None:
    claims = {f["claim"]: f for f in result["findings"]}
    f = claims["D lowers SJF's slowdown against W"]
    assert f["holds"] == (f["ci_high"] < 0)
    assert claims["R leaves PRB's slowdown unchanged against W"]["holds"] is None  # PRB did not run
    assert "findings" in render(result)


def test_outputs(result: dict, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    written = write_outputs(result, tmp_path)
    names = {p.name for p in written}
    assert {"results.json", "results.csv", "fig3_slowdown.png", "fig5_queue.png"} <= names
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["kept"] == result["kept"] and "_runs" not in data
    assert (tmp_path / "results.csv").read_text().splitlines()[0].startswith("dispatcher,prediction")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["study", "galleguillos2017", "--workload", str(SAMPLE), "--dispatchers", "easy",
         "--processes", "1", "--no-plots", "-o", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    assert "EBF" in capsys.readouterr().out
    assert (tmp_path / "results.csv").exists()


def test_cli_on_generated_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "galleguillos2017", "--jobs", "400", "--seed", "3", "--load", "3"]
    argv += ["--dispatchers", "sjf-list,prb", "--processes", "1", "--no-plots", "-o", str(tmp_path), "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jobs"] == 400 and data["trace"].startswith("eurora-synthetic")
    assert [(r["dispatcher"], r["prediction"]) for r in data["rows"]][-1] == ("prb", "R")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["study", "nosuch"], "unknown study 'nosuch'"),
        (["study", "galleguillos2017", "--jobs", "0"], "--jobs must be at least 1"),
        (["study", "galleguillos2017", "--workload", str(SAMPLE), "--dispatchers", "no"], "unknown ['no']"),
    ],
)
def test_cli_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_cp_spec_gives_cp_presets_the_study_limit() -> None:
    assert cp_spec("cph", 0.05) == "cph:delta=0.05,delta_max=0.8"
    assert cp_spec("hcp3", 1.0) == "hcp3:delta=1,delta_max=16"
    assert cp_spec("cph:delta=2", 0.05) is None  # parameters given: as named
    assert cp_spec("easy", 0.05) is None and cp_spec("cph", None) is None


def test_cph_runs_in_the_study_with_its_findings(heavy: Workload) -> None:
    pytest.importorskip("ortools")
    res = run_galleguillos2017(heavy, dispatchers=["prb", "cph", "easy"], processes=1, cp_delta=0.02)
    rows = {(r["dispatcher"], r["prediction"]): r for r in res["rows"]}
    assert set(rows) == {(d, p) for d in ("prb", "cph", "easy") for p in "WDR"}
    claims = {f["claim"]: f for f in res["findings"]}
    assert claims["R lowers CPH's slowdown against W"]["holds"] is not None
    assert claims["D raises CPH's slowdown against W"]["holds"] is not None
    ranked = claims["PRB and CPH have the lowest mean slowdown with W"]
    assert list(ranked["mean_slowdown"]) == sorted(ranked["mean_slowdown"], key=ranked["mean_slowdown"].get)
    assert "CPH" in render(res)


def test_cph_is_a_default_dispatcher_when_ortools_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    import hpcgym.common.extras as extras
    from hpcgym.studies.galleguillos2017 import available_dispatchers

    monkeypatch.setattr(extras, "is_available", lambda m: m != "ortools")
    assert available_dispatchers() == ["sjf-list", "ljf-list", "easy", "prb"]
    monkeypatch.setattr(extras, "is_available", lambda m: True)
    assert available_dispatchers() == ["sjf-list", "ljf-list", "easy", "prb", "cph"]


def test_cli_rejects_a_bad_cp_delta(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "galleguillos2017", "--jobs", "10", "--cp-delta", "0"]) == 2
    assert "--cp-delta must be a positive number of seconds" in capsys.readouterr().err
