"""Issue 27, points 1-5: the last bad inputs that crashed, misled or were silently taken.

Each gave a traceback, a wrong cause, or a silently doubled job on the main branch the issue
was filed against; here each is a clear error naming the file, line, row, column or
parameter (on the command line: ``hpcgym: error: ...``, status 2, no traceback), or a
counted, reported decision.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hpcgym import cli
from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError
from hpcgym.machine import Machine, expand_hostlist, read_slurm_nodes
from hpcgym.machine.model import MAX_AMOUNT, MAX_NODES
from hpcgym.workloads import (
    DROP_REPEATED_ID,
    EURORA_MAX_JOBS,
    eurora,
    read_jobs,
    read_sacct,
    read_swf,
)

GOOD = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
SACCT_HEADER = "JobID|JobIDRaw|Partition|Submit|Start|End|Elapsed|Timelimit|State|NNodes|NCPUS"


def swf_line(job: int, submit: int) -> str:
    tokens = GOOD.split()
    tokens[0], tokens[1] = str(job), str(submit)
    return " ".join(tokens)


def sacct_row(job: str, cpus: str = "4", limit: str = "02:00:00") -> str:
    times = "2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T01:00:10|01:00:00"
    return f"{job}|{job}|normal|{times}|{limit}|COMPLETED|1|{cpus}"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = cli.main(list(args))
    _, err = capsys.readouterr()
    return code, err


# ------------------------------------------------------------- 1. sizes bounded
def test_a_machine_file_of_a_hundred_billion_nodes_names_the_count(tmp_path, capsys):
    path = tmp_path / "m.toml"
    path.write_text('name = "x"\nresources = ["cores"]\n[[nodes]]\ncount = 100000000000\ncores = 4\n')
    with pytest.raises(InvalidConfigError, match=r"nodes\[0\]\.count: 100,000,000,000 nodes .* 1,000,000"):
        Machine.from_file(path)
    code, err = run_cli(capsys, "simulate", "--machine", str(path))
    assert code == 2 and "nodes[0].count" in err and "Traceback" not in err


def test_node_counts_and_amounts_are_bounded_everywhere_a_machine_is_made(tmp_path):
    two = {"name": "x", "resources": ["cores"], "nodes": [{"count": 2, "cores": 1}, {"count": MAX_NODES - 1}]}
    with pytest.raises(InvalidConfigError, match=r"nodes\[1\]\.count"):
        Machine.from_dict(two)
    with pytest.raises(InvalidConfigError, match=r"nodes\[0\]\.mem: must be at most"):
        Machine.from_dict({"resources": ["mem"], "nodes": [{"mem": MAX_AMOUNT + 1}]})
    with pytest.raises(InvalidConfigError, match=r"node_size: .* choose a larger node size"):
        Machine.processors(10**9, node_size=1)
    with pytest.raises(ValueError, match="names more than 5 nodes"):
        expand_hostlist("cn[0-99999999999]", 5)
    listing = tmp_path / "nodes.txt"
    listing.write_text("cn[0-99999999999] 32 128000 (null) normal\n")
    with pytest.raises(TraceFormatError, match=r"nodes.txt:1: field 1 .* more than 1,000,000 nodes"):
        read_slurm_nodes(listing)


def test_generating_a_trillion_eurora_jobs_names_the_limit(tmp_path, capsys):
    with pytest.raises(InvalidConfigError, match=r"n_jobs must be at most 10,000,000"):
        eurora(EURORA_MAX_JOBS + 1)
    code, err = run_cli(capsys, "generate", "eurora", "--jobs", str(10**12), "-o", str(tmp_path / "g.csv"))
    assert code == 2 and "--jobs must be at most 10,000,000" in err and "Traceback" not in err


# --------------------------------------------- 2. numbers of every column bounded
@pytest.mark.parametrize("column", ["mem_gb", "runtime", "walltime", "wait", "submit"])
def test_a_huge_number_in_any_job_table_column_names_its_row(tmp_path, column):
    cells = {"job_id": "1", "submit": "0", "runtime": "100", "walltime": "200", "cores": "4", "mem_gb": "8"}
    cells["wait"] = "0"
    path = tmp_path / "jobs.csv"
    good = dict(cells)
    cells[column] = "1e20"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(cells))
        w.writeheader()
        w.writerows([{**good, "job_id": "2"}, cells])
    with pytest.raises(TraceFormatError, match=rf"jobs.csv:3: row 2, column '{column}': '1e20' is too large"):
        read_jobs(path, procs=64)


def test_a_huge_count_in_a_slurm_log_names_its_cell(tmp_path):
    path = tmp_path / "log.sacct"
    path.write_text(f"{SACCT_HEADER}\n{sacct_row('7', cpus='64000000000000000000000')}\n")
    with pytest.raises(TraceFormatError, match=r"log.sacct:2: column NCPUS: .* is too large"):
        read_sacct(path, procs=8)
    path.write_text(f"{SACCT_HEADER}\n{sacct_row('7', limit='99999999999999999-00:00:00')}\n")
    with pytest.raises(TraceFormatError, match=r"column Timelimit: .* is too large"):
        read_sacct(path, procs=8)


# ------------------------------------------------------------ 3. the real cause
def test_a_model_folder_is_named_as_a_folder_even_when_named_like_a_preset(tmp_path, monkeypatch):
    from hpcgym.experiments.evaluate.policies import _candidate

    monkeypatch.chdir(tmp_path)
    (tmp_path / "easy").mkdir()
    (tmp_path / "easy" / "best_model.zip").write_bytes(b"")
    with pytest.raises(InvalidConfigError, match=r"model easy: is a folder; .*holds best_model.zip"):
        _candidate(Path("easy"), None, None)
    assert _candidate("easy", None, None).kind == "dispatcher"  # a name stays a name


def test_evaluate_model_folder_on_the_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    code, err = run_cli(capsys, "evaluate", "--model", "runs", "--windows", "1")
    assert code == 2 and "model runs: is a folder" in err and "unknown policy" not in err


@pytest.mark.parametrize("name", ["t.swf", "t.csv", "t.sacct"])
def test_a_file_of_control_characters_is_not_called_empty(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"\x1c" * 5000)
    read = {"t.swf": read_swf, "t.csv": read_jobs, "t.sacct": read_sacct}[name]
    with pytest.raises(EmptyWorkloadError) as info:
        read(path)
    message = str(info.value)
    assert "line 1 holds only white space and 5,000 control characters (the first 0x1C" in message
    assert "it is empty" not in message


# ------------------------------------------------------------- 4. repeated ids
def test_a_repeated_swf_job_id_is_dropped_counted_and_noted(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join([swf_line(1, 0), swf_line(2, 5), swf_line(1, 9)]) + "\n")
    w = read_swf(path)
    assert w.job_id.tolist() == [1, 2] and w.submit.tolist() == [0, 5]  # the first line of id 1 kept
    assert w.report.dropped == {DROP_REPEATED_ID: 1}
    assert any("first repeat: line 4, job 1" in note for note in w.report.notes)


def test_a_repeated_job_table_id_is_dropped_and_the_schedule_keeps_one_row_per_id(tmp_path, capsys):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit,runtime,walltime,cores\n1,0,100,200,4\n2,10,100,200,4\n1,20,100,200,4\n")
    w = read_jobs(path, procs=8)
    assert w.job_id.tolist() == [1, 2] and w.report.dropped == {DROP_REPEATED_ID: 1}
    assert any("first repeat: line 4, job 1" in note for note in w.report.notes)
    out = tmp_path / "schedule.csv"
    assert cli.main(["simulate", "--workload", str(path), "--procs", "8", "--schedule-out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1 dropped" in err and "job id repeats an earlier job's" in err
    ids = [row["job_id"] for row in csv.DictReader(out.open())]
    assert sorted(ids) == ["1", "2"]


def test_a_repeated_slurm_job_is_dropped_but_array_tasks_without_jobidraw_are_kept(tmp_path):
    path = tmp_path / "log.sacct"
    path.write_text(f"{SACCT_HEADER}\n{sacct_row('7')}\n{sacct_row('8')}\n{sacct_row('7')}\n")
    w = read_sacct(path, procs=8)
    assert w.job_id.tolist() == [7, 8] and w.report.dropped == {DROP_REPEATED_ID: 1}
    header = SACCT_HEADER.replace("JobIDRaw|", "")
    rows = [sacct_row(j).split("|", 1)[1] for j in ("5_0", "5_1")]
    rows = [f"{j}|{r.split('|', 1)[1]}" for j, r in zip(("5_0", "5_1"), rows, strict=True)]
    path.write_text("\n".join([header, *rows]) + "\n")
    assert len(read_sacct(path, procs=8)) == 2


# --------------------------------------------------------- 5. unsorted submits
def test_unsorted_swf_submits_are_sorted_with_a_note(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join([swf_line(1, 50), swf_line(2, 10), swf_line(3, 30)]) + "\n")
    w = read_swf(path)
    assert w.job_id.tolist() == [2, 3, 1]
    assert any("job lines were not in submit order: sorted by submit time" in n for n in w.report.notes)
    path.write_text("; MaxProcs: 8\n" + "\n".join([swf_line(1, 0), swf_line(2, 10)]) + "\n")
    assert not any("submit order" in n for n in read_swf(path).report.notes)
