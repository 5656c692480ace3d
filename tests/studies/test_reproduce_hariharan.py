"""`hpcgym reproduce hariharan`: 003 Tables V-VII as JSON, CSV and PNG, the paper's figures beside."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import PAPER_TABLES, TABLE_V, predict_waits
from hpcgym.studies.hariharan import (
    FIGURES,
    QUICK_PROTOCOL,
    TABLE_V_SCALED,
    TABLES,
    Settings,
    TableBuilder,
    find_paper_traces,
    run_hariharan,
    select_tables,
)
from hpcgym.workloads import default_trace_path, load_default

QUICK = ["--quick", "--test-jobs", "150", "--no-progress"]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hariharan")
    assert main(["reproduce", "hariharan", "--trace", str(default_trace_path()), *QUICK, "-o", str(out)]) == 0
    return out


def test_writes_json_csv_and_png_of_every_table(written: Path) -> None:
    assert FIGURES == ("tableV", "tableVI", "tableVII", "tableVIII", "tableIX")
    for stem in FIGURES:
        assert (written / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert (written / f"{stem}.csv").stat().st_size > 0
    result = json.loads((written / "hariharan.json").read_text())
    assert result["reproduction"] == "hariharan" and set(result["tables"]) == {"V", "VI", "VII", "VIII", "IX"}
    assert result["settings"]["protocol"]["test_last"] == 2_150 and result["settings"]["tune"] is False


def test_table_v_has_the_papers_columns_and_waitpreds_numbers(written: Path) -> None:
    rows = json.loads((written / "hariharan.json").read_text())["tables"]["V"]["rows"]
    assert [r["method"] for r in rows] == ["qbets", "ibl", "apq"]
    for r in rows:
        assert r["jobs"] == 150 and r["paper_trace"] == "SDSC-SP2"
        assert r["paper_aae_hours"] == TABLE_V["SDSC-SP2"][r["method"]]
        assert r["paper_scaled_aae"] == TABLE_V_SCALED["SDSC-SP2"][r["method"]]
        assert r["aae_vs_paper_pct"] == pytest.approx(100 * (r["aae_hours"] / r["paper_aae_hours"] - 1))
    assert rows[2]["paper_aae_hours"] == 7.84
    protocol = Settings.make(quick=True, test_jobs=150).protocol
    direct = predict_waits(load_default(), "qbets", protocol=protocol, tune_on_validation=False)
    assert rows[0]["aae_hours"] == pytest.approx(direct.aae_hours)
    with open(written / "tableV.csv", newline="") as fh:
        header = next(csv.reader(fh))
    assert {"aae_hours", "paper_aae_hours", "scaled_aae", "paper_scaled_aae"} <= set(header)


def test_tables_vi_and_vii_have_the_papers_columns(written: Path) -> None:
    tables = json.loads((written / "hariharan.json").read_text())["tables"]
    (vi,) = tables["VI"]["rows"]
    (vii,) = tables["VII"]["rows"]
    paper = PAPER_TABLES["SDSC-SP2"]
    assert (vi["paper_baseline_SR"], vi["paper_SR"], vi["paper_C"]) == (79, 81, 26)
    assert (vi["paper_smith_SR"], vi["paper_li_C"]) == (69, 213)
    assert vii["paper_AAE_min"] == paper["AAE_min"] == 43 and vii["paper_li_AAE_min"] == 69
    assert vi["jobs_evaluated"] + vi["jobs_without_history"] == 150 == vi["test_jobs"]
    assert 0 <= vi["SR"] <= 100 and vii["AAE_min"] > 0
    with open(written / "tableVII.csv", newline="") as fh:
        assert {"AAE_min", "paper_AAE_min", "paper_smith_AAE_min"} <= set(next(csv.reader(fh)))


def test_a_trace_not_of_the_paper_has_no_paper_figures() -> None:
    w = load_default().window(8_000)
    w = type(w).from_columns(
        w.submit, w.runtime, w.procs_req, w.estimate, user=w.user, procs=w.procs, name="other-trace"
    )
    # from_columns gives no logged waits: a trace needs them for Table V, so only VI and VII run here
    result = run_hariharan([w], Settings.make(quick=True, test_jobs=50), tables=TABLES[1:])
    (vi,) = result["tables"]["VI"]["rows"]
    assert vi["paper_trace"] is None and "paper_SR" not in vi


def test_one_more_table_is_one_builder() -> None:
    extra = TableBuilder(
        "X",
        "jobs per trace",
        (("trace", "trace", ""), ("n", "jobs", ",d")),
        lambda run: [{"trace": run.name, "n": len(run.workload)}],
        lambda rows: None,
    )
    result = run_hariharan([load_default()], Settings.make(quick=True), tables=[extra])
    assert result["tables"] == {
        "X": {"title": "jobs per trace", "rows": [{"trace": load_default().name, "n": 8943}]}
    }


def test_finds_the_papers_traces_and_notes_the_absent(tmp_path: Path) -> None:
    for name in (
        "HPC2N-2002-2.2-cln.swf.gz",
        "HPC2N-2002-2.2.swf.gz",
        "SDSC-Par-1996-3.1-cln.swf",
        "CTC-SP2.swf",
    ):
        (tmp_path / name).write_text("")
    found, notes = find_paper_traces(tmp_path)
    assert [p.name for p in found] == ["HPC2N-2002-2.2-cln.swf.gz", "SDSC-Par-1996-3.1-cln.swf"]
    assert len(notes) == 2 and notes[0].startswith("SDSC-SP2") and notes[1].startswith("CEA-Curie")


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "hariharan", "--traces-dir", str(tmp_path), "--no-progress"]) == 2
    assert "none of the paper's traces" in capsys.readouterr().err
    trace = str(default_trace_path())
    assert main(["reproduce", "hariharan", "--trace", trace, "--predictability"]) == 2
    assert "tsafrir2007" in capsys.readouterr().err
    assert main(["reproduce", "hariharan", "--trace", trace, "--test-jobs", "0"]) == 2
    assert "--test-jobs" in capsys.readouterr().err
    assert main(["reproduce", "tsafrir2007", "--trace", trace, "--trace", trace]) == 2
    assert "one --trace" in capsys.readouterr().err
    assert main(["reproduce", "tsafrir2007", "--trace", trace, "-o", str(tmp_path)]) == 2
    assert "belong to hariharan" in capsys.readouterr().err
    # the full protocol needs 21,000 jobs; the slice has 8,943: the message says so, no traceback
    assert main(["reproduce", "hariharan", "--trace", trace, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "8,943 jobs" in err and "Traceback" not in err


def test_quick_protocol_fits_the_bundled_slice() -> None:
    _, test, first = QUICK_PROTOCOL.ranges(8_943)
    assert (int(test[0]), int(test[-1]), first) == (2_000, 2_999, 999)


@pytest.mark.parametrize(("key", "mode"), [("VIII", "molding"), ("IX", "delay")])
def test_tables_viii_and_ix_are_molds_run_beside_the_papers_row(written: Path, key: str, mode: str) -> None:
    from hpcgym.baselines import PAPER, MoldingConfig, run_managed

    (row,) = json.loads((written / "hariharan.json").read_text())["tables"][key]["rows"]
    settings = Settings.make(quick=True, test_jobs=150)
    assert (settings.mold_history, settings.mold_jobs, settings.mold_wait_predictor) == (2_000, 150, "ibl")
    config = MoldingConfig(mode=mode, history=2_000, jobs=150, wait_predictor="ibl")
    direct = run_managed(load_default(), config).summary()
    assert row["jobs"] == 150 and row["mode"] == mode
    for name in ("baseline_response_min", "response_min", "wait_min", "exec_min", "molded"):
        assert row[name] == pytest.approx(direct[name])
    paper = PAPER[mode]["SDSC-SP2"]
    assert (row["paper_baseline_response_min"], row["paper_response_min"]) == (paper[2], paper[5])
    assert row["paper_reduction_pct"] == pytest.approx(100 * (1 - paper[5] / paper[2]))


def test_tables_picks_some_tables_and_names_a_bad_one() -> None:
    assert [t.key for t in select_tables("ix, v")] == ["V", "IX"]
    assert select_tables(None) == TABLES
    with pytest.raises(InvalidConfigError, match="--tables: X; 003's tables here are V, VI, VII, VIII, IX"):
        select_tables("V,X")
