"""A study keeps its finished runs and reads them back: an interrupted study resumes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hpcgym.studies.eurora_runs as eurora_runs
from hpcgym.cli import main
from hpcgym.studies.eurora_runs import run_all
from hpcgym.workloads import Workload, content_sha256, read_jobs

SAMPLE = Path(__file__).resolve().parents[2] / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"
COMBOS = [("easy", "W", None), ("sjf-list", "D", None)]


@pytest.fixture(scope="module")
def heavy() -> Workload:
    return read_jobs(SAMPLE, "eurora").scale_load(40)


def _same(a: list[eurora_runs.Run], b: list[eurora_runs.Run]) -> None:
    for x, y in zip(a, b, strict=True):
        assert (x.dispatcher, x.prediction, x.decisions, x.sim_seconds, x.cp) == (
            y.dispatcher,
            y.prediction,
            y.decisions,
            y.sim_seconds,
            y.cp,
        )
        np.testing.assert_array_equal(x.start, y.start)
        np.testing.assert_array_equal(x.first_prediction, y.first_prediction)


def test_finished_runs_are_read_back_not_run_again(
    heavy: Workload, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_all(heavy, COMBOS, processes=1, runs_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2
    ran: list[str] = []
    real = eurora_runs._run_one
    monkeypatch.setattr(eurora_runs, "_run_one", lambda w, d, p, s=None: ran.append(d) or real(w, d, p, s))
    lines: list[str] = []
    again = run_all(
        heavy, [*COMBOS, ("fcfs", "R", None)], processes=1, runs_dir=tmp_path, progress=lines.append
    )
    assert ran == ["fcfs"]  # only the new run ran
    assert lines[0] == f"2 of 3 runs read back from {tmp_path}"
    _same(first, again[:2])


def test_another_workload_or_a_broken_file_runs_again(heavy: Workload, tmp_path: Path) -> None:
    first = run_all(heavy, COMBOS[:1], processes=1, runs_dir=tmp_path)
    (path,) = tmp_path.glob("*.npz")
    other = heavy.scale_load(2)  # other submit times: another content hash, another file
    run_all(other, COMBOS[:1], processes=1, runs_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2
    path.write_bytes(b"not a run")  # e.g. a disk that filled up earlier
    again = run_all(heavy, COMBOS[:1], processes=1, runs_dir=tmp_path)
    np.testing.assert_array_equal(again[0].start, first[0].start)  # run again, the same schedule
    assert eurora_runs.load_run(path, eurora_runs.run_key(content_sha256(heavy), "easy", "W", None))


def test_cli_resumes_from_its_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "galleguillos2017", "--workload", str(SAMPLE), "--dispatchers", "easy",
            "--processes", "1", "--no-plots", "-o", str(tmp_path), "--json"]  # fmt: skip
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert len(list((tmp_path / "runs").glob("*.npz"))) == 3  # easy with W, D and R
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "3 of 3 runs read back" in err
    assert out == first
