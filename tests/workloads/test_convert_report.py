"""``convert`` says what it drops: the logged wait and used memory kept in job tables, the rest counted."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from checks import run_cli

from hpcgym.baselines import run_policy
from hpcgym.workloads import (
    ConversionReport,
    load_default,
    read_jobs,
    read_swf,
    to_swf_workload,
    write_jobs,
    write_swf,
)

HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None

# job submit wait run alloc cpu used_mem req_p req_t req_mem status user group exe queue part prec think
SWF = """; MaxProcs: 32
1 0 10 100 4 90 2048 4 200 4096 1 1 1 1 1 1 -1 -1
2 5 -1 50 8 -1 -1 4 -1 -1 1 2 1 2 1 1 1 30
3 7 0 20 2 18.5 1024.5 -1 100 -1 0 1 1 1 2 1 -1 -1
4 9 3 30 16 -1 -1 16 300 -1 5 3 2 3 2 1 -1 -1
"""
"""Job 1 has an average CPU time, used and requested memory; job 2 was allocated 8 processors
for a request of 4, has no estimate, a preceding job and a think time; job 3 has a fractional
CPU time and used memory and no requested size (field 5 is its size)."""


@pytest.fixture
def swf(tmp_path: Path) -> Path:
    path = tmp_path / "log.swf"
    path.write_text(SWF)
    return path


def test_a_table_keeps_wait_and_used_memory_and_counts_the_rest(swf, tmp_path):
    w = read_swf(swf)
    report = write_jobs(w, tmp_path / "t.csv")
    assert report == ConversionReport(
        4,
        "job table",
        {
            "average CPU time (SWF field 6)": 2,
            "requested memory (SWF field 10)": 1,
            "preceding job (SWF field 17)": 1,
            "think time (SWF field 18)": 1,
            "allocated processors where they differ from requested (SWF field 5)": 1,
        },
        {
            "requested processors": (1, "set to the allocated ones (SWF field 5)"),
            "estimate": (1, "set to 300 s, the largest estimate in the trace"),
        },
    )
    text = (tmp_path / "t.csv").read_text()
    assert next(x for x in text.splitlines() if not x.startswith("#")).endswith(",status,wait,used_mem_kb")
    assert ",1,10,2048\n" in text and ",1,,\n" in text and ",0,0,1024.5\n" in text  # -1 is a blank cell
    t = read_jobs(tmp_path / "t.csv")
    np.testing.assert_array_equal(t.log_wait, w.log_wait)
    np.testing.assert_array_equal(t.raw[:, 6], w.raw[:, 6])
    back = tmp_path / "back.swf"
    assert write_swf(back, t) == ConversionReport(4, "SWF file")
    rows = np.loadtxt(back, comments=";")
    kept = [0, 1, 2, 3, 6, 10, 11, 12, 13, 14, 15]
    np.testing.assert_array_equal(rows[:, kept], w.raw[:, kept])
    assert rows[:, 4].tolist() == rows[:, 7].tolist() == [4, 4, 2, 16]  # the size: allocations are not kept
    assert (rows[:, [5, 9, 16, 17]] == -1).all()
    assert rows[:, 8].tolist() == [200, 300, 100, 300]  # job 2's default is written out


def test_convert_prints_the_report_on_stderr(swf, tmp_path):
    code, out, err = run_cli("convert", str(swf), str(tmp_path / "t.csv"))
    assert code == 0 and out == f"wrote 4 jobs to {tmp_path / 't.csv'}\n"
    line = next(x for x in err.splitlines() if x.startswith("convert: "))
    assert line == (
        "convert: 4 jobs; not kept in the job table: average CPU time (SWF field 6) (2 jobs), "
        "requested memory (SWF field 10) (1 job), preceding job (SWF field 17) (1 job), think time "
        "(SWF field 18) (1 job), allocated processors where they differ from requested (SWF field 5) "
        "(1 job); defaulted: requested processors (1 job, set to the allocated ones (SWF field 5)), "
        "estimate (1 job, set to 300 s, the largest estimate in the trace)"
    )
    code, _, err = run_cli("convert", str(tmp_path / "t.csv"), str(tmp_path / "t.swf"))
    assert code == 0 and "convert: 4 jobs; nothing lost, nothing defaulted" in err
    assert read_swf(tmp_path / "t.swf").log_wait.tolist() == [10, -1, 0, 3]


def test_tables_without_logged_values_get_no_columns_and_blanks_are_unknown(tmp_path):
    w = load_default().window(5)
    w = dataclasses.replace(w, log_wait=np.full(5, -1.0))
    write_jobs(w, tmp_path / "a.csv")
    header = next(x for x in (tmp_path / "a.csv").read_text().splitlines() if not x.startswith("#"))
    assert header.endswith(",status")
    path = tmp_path / "b.csv"
    path.write_text("submit,runtime,cores,wait,used_mem_kb\n0,10,1,,\n1,10,1,-5,3\n2,10,1,7.5,\n")
    t = read_jobs(path)
    assert t.log_wait.tolist() == [-1, -5, 7.5] and t.raw[:, 6].tolist() == [-1, 3, -1]
    path.write_text("submit,runtime,cores,wait\n0,10,1,soon\n")
    code, _, err = run_cli("simulate", "--workload", str(path))
    assert code == 2 and f"{path}:2: row 1, column 'wait': 'soon' is not a number" in err


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow not installed")
def test_parquet_keeps_the_logged_columns(swf, tmp_path):
    w = read_swf(swf)
    write_jobs(w, tmp_path / "t.parquet")
    t = read_jobs(tmp_path / "t.parquet")
    np.testing.assert_array_equal(t.log_wait, w.log_wait)
    np.testing.assert_array_equal(t.raw[:, 6], w.raw[:, 6])


def test_replay_of_the_table_is_replay_of_the_log(tmp_path):
    w = load_default().window(300)
    write_jobs(w, tmp_path / "t.csv")
    t = read_jobs(tmp_path / "t.csv")
    a, b = run_policy(w, "replay").schedule, run_policy(t, "replay").schedule
    np.testing.assert_array_equal(a.start, b.start)
    assert b.extras["replay"]["unknown_wait_jobs"] == 0


def test_swf_from_a_table_writes_out_differing_defaults_and_counts_chunks(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(
        "# Machine: eurora\nsubmit,runtime,walltime,queue,chunks,cores\n"
        "0,10,,debug,1,1\n1,10,,parallel,2,4\n2,10,,debug,1,2\n3,10,60,debug,1,1\n"
    )
    w, notes = to_swf_workload(read_jobs(path))
    assert any("1 job of several chunks written as one request" in n for n in notes)
    report = write_swf(tmp_path / "q.swf", w)
    assert report.defaulted == {
        "estimate": (1, "set to 14,400 s, their queue's maximum wall-time on machine 'eurora' (3 jobs)")
    }
    assert "defaulted: estimate (1 job, set to 14,400 s" in str(report)
    np.testing.assert_array_equal(read_swf(tmp_path / "q.swf").estimate, [1800, 14400, 1800, 60])
