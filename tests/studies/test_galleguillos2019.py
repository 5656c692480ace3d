"""``hpcgym study galleguillos2019``: 002's CP study on a small heavy workload."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hpcgym.cli import main
from hpcgym.studies.eurora_runs import Run
from hpcgym.studies.galleguillos2019 import (
    HCP_RUNS,
    PAPER_TABLE2,
    PCP_RUNS,
    RUNS,
    findings,
    label,
    render,
    run_galleguillos2019,
    select_runs,
    write_outputs,
)
from hpcgym.workloads import Workload, read_jobs

pytest.importorskip("ortools")

SAMPLE = Path(__file__).resolve().parents[2] / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"
SMALL = [("hcp0", "W"), ("hcp1", "W"), ("hcp1", "D"), ("hcp3", "D"), ("hcp3", "R"), ("prb", "W")]


@pytest.fixture(scope="module")
def heavy() -> Workload:
    """The bundled Eurora sample with inter-arrival times / 40: queues form."""
    return read_jobs(SAMPLE, "eurora").scale_load(40)


@pytest.fixture(scope="module")
def result(heavy: Workload) -> dict:
    return run_galleguillos2019(heavy, runs=SMALL, cp_delta=0.02, processes=1)


def test_the_runs_are_002s_figures() -> None:
    assert ("hcp0", "W") in HCP_RUNS and ("hcp2", "D") in HCP_RUNS and len(HCP_RUNS) == 10
    assert ("pcp2", "D") in PCP_RUNS and not any(d == "pcp0" for d, _ in PCP_RUNS)
    assert label("hcp0", "W") == "HCP-W" and label("pcp3", "D") == "PCP3-D"
    assert {k.rsplit("-", 1)[0] for k in PAPER_TABLE2} <= {label(d, "X")[:-2] for d, _ in RUNS} | {"HCP"}
    assert select_runs(["hcp1"], ["W", "R"]) == [("hcp1", "W"), ("hcp1", "R")]
    assert select_runs(["pcp0"], ["W"]) == [("pcp0", "W")]  # not in RUNS: asked for
    assert select_runs(None, ["D"]) == [r for r in RUNS if r[1] == "D"]


def test_rows_hold_table2_and_the_means(result: dict, heavy: Workload) -> None:
    rows = {r["run"]: r for r in result["rows"]}
    assert list(rows) == ["HCP-W", "HCP1-W", "HCP1-D", "HCP3-D", "HCP3-R", "PRB-W"]
    for name, r in rows.items():
        assert r["mean_slowdown"] >= 1.0 and r["std_slowdown"] >= 0.0 and r["mean_wait_s"] >= 0.0
        if name != "PRB-W":
            assert r["dispatch_ms"] > 0 and r["intervals"] > 0 and r["available"] > 0
        else:
            assert np.isnan(r["dispatch_ms"])
    # the means are over every job: recompute one from its run
    run = result["_runs"][0]
    assert rows["HCP-W"]["mean_wait_s"] == pytest.approx(float((run.start - heavy.submit).mean()))


def test_findings_state_each_direction(result: dict) -> None:
    by = {f["claim"].split(":")[0] + f["claim"][-12:]: f for f in result["findings"]}
    assert len(result["findings"]) == 7
    speed = result["findings"][0]
    assert speed["holds"] in (True, False) and set(speed["dispatch_ms"]) == {"HCP1-W", "HCP-W"}
    for f in result["findings"]:
        if f["claim"].startswith("PCP") or "PCP" in f["claim"]:
            assert f["holds"] is None  # no PCP run here
    hcp = [f for f in result["findings"] if "HCP1-D" in f["claim"] or "HCP3-D" in f["claim"]]
    assert len(hcp) == 2 and all(f["holds"] in (True, False) and "wait" in f for f in hcp)
    assert by  # rendered below
    text = render(result)
    assert "002 Table 2" in text and "v3-D beats v1-W" in text and "HCP3-D" in text


def test_findings_read_the_direction_of_the_interval() -> None:
    """Hand-made runs: v1-D clearly worse than v1-W, v3-D clearly better."""
    n = 40
    submit = np.zeros(n)
    rng = np.random.default_rng(0)

    def run(d: str, p: str, wait: float) -> Run:
        return Run(d, p, submit + wait + rng.uniform(0, 1, n), np.ones(n), 1, 1.0)

    runs = [run("hcp1", "W", 100), run("hcp1", "D", 300), run("hcp3", "D", 10), run("hcp3", "R", 5)]
    runtime = np.full(n, 50.0)
    wait = np.stack([r.start - submit for r in runs])
    sd = (wait + runtime) / runtime
    rows = [
        {"run": label(r.dispatcher, r.prediction), "mean_slowdown": s.mean(), "mean_wait_s": w.mean()}
        for r, s, w in zip(runs, sd, wait, strict=True)
    ]
    out = {f["claim"]: f for f in findings(runs, sd, wait, rows)}
    assert out["naive D without v2 worse than W: HCP1-D's slowdown above HCP1-W's"]["holds"] is True
    assert out["v3-D beats v1-W: HCP3-D's slowdown below HCP1-W's"]["holds"] is True
    best = out["v3-R best: HCP3-R has the lowest mean slowdown and wait of the HCP runs"]
    assert best["holds"] is True and best["lowest_wait"] == "HCP3-R"


def test_outputs(result: dict, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    names = {p.name for p in write_outputs(result, tmp_path)}
    assert names == {"results.json", "results.csv", "fig3_hcp.png"}  # no PCP run: no Figure 2
    data = json.loads((tmp_path / "results.json").read_text())
    assert "_runs" not in data and data["paper_table2"]["HCP-W"]["dispatch_ms"] == 1014


def test_same_runs_same_schedule(heavy: Workload, result: dict) -> None:
    again = run_galleguillos2019(heavy, runs=SMALL[:2], cp_delta=0.02, processes=1)
    for a, b in zip(again["_runs"], result["_runs"][:2], strict=True):
        assert np.array_equal(a.start, b.start)


def test_cli_on_an_swf_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hpcgym.workloads import default_trace_path

    argv = ["study", "galleguillos2019", "--trace", str(default_trace_path()), "--jobs", "80"]
    argv += ["--dispatchers", "hcp1,easy", "--predictions", "W", "--cp-delta", "0.02"]
    argv += ["--processes", "1", "--no-plots", "-o", str(tmp_path), "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["jobs"] == 80 and [r["run"] for r in data["rows"]] == ["HCP1-W", "EASY-W"]
    assert data["cp_delta"] == 0.02


def test_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "galleguillos2019", "--jobs", "10", "--predictions", "X"]) == 2
    assert "predictions: unknown ['X']" in capsys.readouterr().err
    assert main(["study", "galleguillos2019", "--jobs", "10", "--dispatchers", "nope"]) == 2
    assert "unknown ['nope']" in capsys.readouterr().err
