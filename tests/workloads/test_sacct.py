"""Slurm accounting logs (``sacct --parsable2 --allocations``): the cells, the rows, the drops and
errors, time zones, the bundled sample converted and simulated, and a round trip."""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.cli import main
from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError
from hpcgym.machine import Machine
from hpcgym.workloads import (
    DROP_ARRAY_PENDING,
    DROP_CANCELLED,
    DROP_CHUNK,
    DROP_NO_RESOURCE,
    DROP_NO_START,
    DROP_PENDING,
    DROP_QUEUE,
    DROP_RUNNING,
    DROP_TOO_LARGE,
    read_jobs,
    read_sacct,
)
from hpcgym.workloads.sacct_fields import (
    parse_duration,
    parse_job_id,
    parse_limit,
    parse_memory,
    parse_state,
    parse_time,
    parse_tres,
    parse_zone,
    tres_amounts,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "hpcgym" / "workloads" / "data" / "slurm-sample.sacct"
HEADER = (
    "JobID|JobIDRaw|Partition|User|Group|Submit|Start|End|Elapsed|Timelimit|State|NNodes|NCPUS|ReqMem|"
    "ReqTRES|AllocTRES"
)
BERLIN = parse_zone("Europe/Berlin")


def row(
    job: str = "1",
    raw: str = "",
    partition: str = "normal",
    user: str = "alice",
    group: str = "physics",
    submit: str = "2024-01-01T00:00:00",
    start: str = "2024-01-01T00:00:10",
    end: str = "2024-01-01T01:00:10",
    elapsed: str = "01:00:00",
    limit: str = "02:00:00",
    state: str = "COMPLETED",
    nodes: str = "1",
    cpus: str = "4",
    reqmem: str = "4G",
    req: str = "cpu=4,mem=4G,node=1",
    alloc: str = "cpu=4,mem=4G,node=1",
) -> str:
    cells = (job, raw, partition, user, group, submit, start, end, elapsed, limit, state, nodes, cpus)
    return "|".join((*cells, reqmem, req, alloc))


def log(
    tmp_path: Path, *rows: str, header: str = HEADER, name: str = "log.sacct", comments: str = ""
) -> Path:
    path = tmp_path / name
    path.write_text(comments + "\n".join([header, *rows]) + "\n")
    return path


def node_machine() -> Machine:
    """8 CPU nodes (32 cores, 128 GB) and 4 GPU nodes (32 cores, 4 GPUs, 256 GB); four partitions."""
    return Machine.from_dict(
        {
            "name": "sample-cluster",
            "resources": ["cores", "gpus", "mem_gb"],
            "nodes": [
                {"count": 8, "group": "cpu", "cores": 32, "mem_gb": 128},
                {"count": 4, "group": "gpu", "cores": 32, "gpus": 4, "mem_gb": 256},
            ],
            "queues": {
                "debug": {"max_walltime_s": 1800},
                "normal": {"max_walltime_s": 172800},
                "gpu": {"max_walltime_s": 86400},
                "long": {"max_walltime_s": 604800},
            },
        }
    )


# ------------------------------------------------------------------ cells
@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1-02:03:04", 93784.0),
        ("0-00:00:01", 1.0),
        ("02:03:04", 7384.0),
        ("100:00:00", 360000.0),
        ("03:04", 184.0),
        ("00:01.500", 1.5),
        ("2-12", 216000.0),
        ("2-12:30", 217800.0),
    ],
)
def test_each_duration_form(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["30", "abc", "1:2:3:4", "01:60:00", "1-24:00:00", "05:60", "1-", "-5", ""])
def test_malformed_durations_are_refused(text):
    with pytest.raises(ValueError, match="is not a duration"):
        parse_duration(text)


def test_each_limit_form():
    assert parse_limit("1-00:00:00") == 86400.0
    assert parse_limit("30") == 1800.0  # a bare number is minutes, as in Slurm's --time
    assert parse_limit("UNLIMITED") == "UNLIMITED" and parse_limit("unlimited") == "UNLIMITED"
    assert parse_limit("Partition_Limit") == "Partition_Limit"
    assert parse_limit(" ") is None
    with pytest.raises(ValueError, match="must be > 0"):
        parse_limit("00:00:00")


def test_times_unknown_offsets_epochs_and_dst():
    utc = parse_zone("UTC")
    assert (
        parse_time("Unknown", utc) is None and parse_time("None", utc) is None and parse_time("", utc) is None
    )
    assert parse_time("2024-01-01T00:00:00", utc).first == 1704067200.0
    assert parse_time("2024-01-01T01:00:00", BERLIN).first == 1704067200.0  # CET = UTC+1
    assert parse_time("2024-07-01T02:00:00", BERLIN).first == 1719792000.0  # CEST = UTC+2
    assert parse_time("2024-01-01T01:00:00+0100", utc).first == 1704067200.0  # %z: the zone does not apply
    assert parse_time("1704067200", BERLIN).first == 1704067200.0  # SLURM_TIME_FORMAT=%s
    repeated = parse_time("2024-10-27T02:30:00", BERLIN)  # clocks went back from 03:00 to 02:00
    assert repeated.ambiguous and repeated.second - repeated.first == 3600
    with pytest.raises(ValueError, match="does not exist in time zone Europe/Berlin"):
        parse_time("2024-03-31T02:30:00", BERLIN)  # clocks jumped from 02:00 to 03:00
    with pytest.raises(ValueError, match="is not a time"):
        parse_time("Tomorrow 12:00", utc)
    with pytest.raises(ValueError, match="not a time zone"):
        parse_zone("Mars/Olympus")


@pytest.mark.parametrize(
    ("text", "mb", "per"),
    [
        ("4000Mc", 4000.0, "c"),
        ("16Gn", 16384.0, "n"),
        ("16G", 16384.0, ""),
        ("2048K", 2.0, ""),
        ("1T", 1048576.0, ""),
        ("1.5Gc", 1536.0, "c"),
        ("500", 500.0, ""),
        ("0n", 0.0, "n"),
    ],
)
def test_memory_suffixes(text, mb, per):
    assert parse_memory(text) == (mb, per)


def test_malformed_memory_and_tres_are_refused():
    for bad in ("16X", "G16", "4000Mx", ""):
        with pytest.raises(ValueError, match="not a memory size"):
            parse_memory(bad)
    with pytest.raises(ValueError, match="not name=value"):
        parse_tres("cpu=4,mem")
    with pytest.raises(ValueError, match="appears twice"):
        parse_tres("cpu=4,cpu=8")
    with pytest.raises(ValueError, match="not a whole number"):
        tres_amounts(parse_tres("cpu=four"))


def test_tres_gpus_typed_and_untyped_are_not_counted_twice():
    assert tres_amounts(parse_tres("cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1"))["gpu"] == 2
    assert tres_amounts(parse_tres("gres/gpu:a100=2,gres/gpu:v100=1"))["gpu"] == 3
    assert tres_amounts(parse_tres("billing=4,energy=120,license/matlab=1")) == {}


@pytest.mark.parametrize(
    ("text", "job", "task", "pending", "component", "step"),
    [
        ("123", 123, None, None, None, None),
        ("123_4", 123, 4, None, None, None),
        ("123_[5-9]", 123, None, 5, None, None),
        ("123_[1,3,5-7%2]", 123, None, 5, None, None),
        ("123_[0-10:5]", 123, None, 3, None, None),
        ("123+1", 123, None, None, 1, None),
        ("123.batch", 123, None, None, None, "batch"),
        ("123_4.extern", 123, 4, None, None, "extern"),
        ("123+0.0", 123, None, None, 0, "0"),
    ],
)
def test_job_ids(text, job, task, pending, component, step):
    j = parse_job_id(text)
    assert (j.job, j.task, j.pending_tasks, j.component, j.step) == (job, task, pending, component, step)


def test_malformed_job_ids_and_states_are_refused():
    for bad in ("abc", "123_", "123_[9-5]", "123+", "12 3"):
        with pytest.raises(ValueError):
            parse_job_id(bad)
    assert parse_state("CANCELLED by 5012") == "CANCELLED" and parse_state("timeout") == "TIMEOUT"
    with pytest.raises(ValueError, match="not a Slurm job state"):
        parse_state("DONE")


# ------------------------------------------------------------------ rows
def test_a_small_log_reads_into_jobs(tmp_path):
    path = log(
        tmp_path,
        row("10", submit="2024-01-01T00:00:00", start="2024-01-01T00:01:00", elapsed="00:30:00"),
        row("11", user="bob", partition="debug", submit="2024-01-01T00:00:30", start="2024-01-01T00:00:40"),
    )
    w = read_sacct(path, procs=16)
    assert w.job_id.tolist() == [10, 11]
    assert w.submit.tolist() == [0.0, 30.0] and w.header["UnixStartTime"] == "1704067200"
    assert w.runtime.tolist() == [1800.0, 3600.0] and w.estimate.tolist() == [7200.0, 7200.0]
    assert w.log_wait.tolist() == [60.0, 10.0] and w.status.tolist() == [1, 1]
    assert w.names["user"] == ("alice", "bob") and w.names["queue"] == ("normal", "debug")
    assert w.resources == ("cores",) and w.per_chunk.ravel().tolist() == [4, 4] and w.procs == 16
    assert w.report.jobs_dropped == 0 and w.report.job_lines == 2


def test_steps_are_skipped_and_counted(tmp_path):
    w = read_sacct(
        log(tmp_path, row("7"), row("7.batch", limit=""), row("7.extern", limit=""), row("7.0", limit="")),
        procs=8,
    )
    assert len(w) == 1 and w.report.job_lines == 1
    assert any("3 step rows" in note for note in w.report.notes)


def test_array_tasks_are_jobs_and_pending_array_rows_are_dropped(tmp_path):
    pending = row(
        "5_[2-9%2]", raw="5", start="Unknown", end="Unknown", elapsed="00:00:00", state="PENDING", alloc=""
    )
    w = read_sacct(log(tmp_path, row("5_0", raw="6"), row("5_1", raw="7"), pending), procs=8)
    assert w.job_id.tolist() == [6, 7]  # JobIDRaw, each task's own number
    assert w.report.dropped == {DROP_ARRAY_PENDING: 1}
    assert any("8 array tasks" in note for note in w.report.notes)
    no_raw = HEADER.replace("JobIDRaw|", "")
    rows = [r.replace("|6|", "|").replace("|7|", "|") for r in (row("5_0", raw="6"), row("5_1", raw="7"))]
    assert read_sacct(log(tmp_path, *rows, header=no_raw), procs=8).job_id.tolist() == [5, 5]


def test_heterogeneous_components_are_jobs_of_their_own(tmp_path):
    rows = (
        row("9+0", raw="9", cpus="4", req="cpu=4,mem=8G,node=1", alloc="cpu=4,mem=8G,node=1"),
        row(
            "9+1",
            raw="10",
            partition="gpu",
            nodes="2",
            cpus="32",
            req="cpu=32,gres/gpu=4,mem=128G,node=2",
            alloc="cpu=32,gres/gpu=4,mem=128G,node=2",
        ),
        row("9+1.0", raw="10.0", limit=""),
    )
    w = read_sacct(log(tmp_path, *rows), node_machine())
    assert w.job_id.tolist() == [9, 10] and w.chunks.tolist() == [1, 2]
    assert w.resources == ("cores", "gpus", "mem_gb")
    assert w.per_chunk.tolist() == [[4, 0, 8], [16, 2, 64]]
    assert [w.names["queue"][q] for q in w.queue] == ["normal", "gpu"]
    assert (w.submit == w.submit[0]).all() and (w.log_wait == w.log_wait[0]).all()


def test_jobs_that_never_ran_are_dropped_and_counted_by_reason(tmp_path):
    rows = (
        row("1"),
        row("2", start="Unknown", end="Unknown", elapsed="00:00:00", state="PENDING", alloc=""),
        row(
            "3",
            start="None",
            end="2024-01-01T00:05:00",
            elapsed="00:00:00",
            state="CANCELLED by 5012",
            alloc="",
        ),
        row(
            "4", end="2024-01-01T00:00:10", elapsed="00:00:00", state="CANCELLED by 0", alloc=""
        ),  # never given nodes
        row("5", start="Unknown", end="2024-01-01T02:00:00", elapsed="00:00:00", state="DEADLINE", alloc=""),
        row("6", end="Unknown", elapsed="05:00:00", state="RUNNING"),
        row("7", end="Unknown", elapsed="05:00:00", state="SUSPENDED"),
        row("8_[1-3]", start="Unknown", end="Unknown", elapsed="00:00:00", state="PENDING", alloc=""),
        row("9", cpus="0", req="cpu=0,node=1", alloc="cpu=0,node=1"),
        row("10", cpus="64", req="cpu=64,node=1", alloc="cpu=64,node=1"),
        row("11", state="CANCELLED by 5012", elapsed="00:10:00"),  # cancelled while it ran: kept
        row("13", state="CANCELLED by 5012", elapsed="00:10:00", alloc="", req="cpu=2,node=1", cpus="2"),
        row("12", start="garbage", state="PENDING"),  # cells past the drop are not read
    )
    w = read_sacct(log(tmp_path, *rows), procs=32)
    assert w.job_id.tolist() == [1, 11, 13] and w.status.tolist() == [1, 5, 5]  # 13: ran, AllocTRES lost
    assert w.report.dropped == {
        DROP_PENDING: 2,
        DROP_CANCELLED: 2,
        DROP_NO_START: 1,
        DROP_ARRAY_PENDING: 1,
        DROP_RUNNING: 2,
        "asks for no resource (0 chunks or all amounts 0)": 1,
        DROP_TOO_LARGE: 1,
    }
    assert w.report.job_lines == 13 and w.report.jobs_kept == 3
    notes = "\n".join(w.report.notes)
    assert "first job dropped as 'never started: cancelled before start': line 4 (job 3)" in notes
    assert "dropped 2: never started: pending when the log was written" in str(w.report)


def test_a_log_with_no_job_that_ran_is_empty(tmp_path):
    pending = row("2", start="Unknown", end="Unknown", elapsed="00:00:00", state="PENDING", alloc="")
    with pytest.raises(EmptyWorkloadError, match="all 1 job rows were dropped: 1 never started"):
        read_sacct(log(tmp_path, pending))


@pytest.mark.parametrize(
    ("cells", "line", "column", "what"),
    [
        ({"elapsed": "abc"}, 3, "Elapsed", "is not a duration"),
        ({"limit": "forever"}, 3, "Timelimit", "is not a duration"),
        ({"submit": "yesterday"}, 3, "Submit", "is not a time"),
        ({"submit": "Unknown"}, 3, "Submit", "no submit time"),
        ({"state": "DONE"}, 3, "State", "not a Slurm job state"),
        ({"job": "x1"}, 3, "JobID", "not a Slurm job id"),
        ({"cpus": "four"}, 3, "NCPUS", "not a whole number"),
        ({"nodes": "1-2"}, 3, "NNodes", "not a whole number"),
        ({"reqmem": "lots", "req": "cpu=4", "alloc": "cpu=4"}, 3, "ReqMem", "not a memory size"),
        ({"alloc": "cpu=4,mem"}, 3, "AllocTRES", "not name=value"),
        ({"req": "cpu=4,mem=4Q"}, 3, "ReqTRES", "not a memory size"),
        ({"start": "2024-03-31T02:30:00", "submit": "2024-03-31T01:00:00"}, 3, "Start", "does not exist"),
    ],
)
def test_a_bad_cell_names_file_line_and_column(tmp_path, cells, line, column, what):
    path = log(tmp_path, row("1"), row(**{"job": "2", **cells}))
    with pytest.raises(TraceFormatError, match=what) as err:
        read_sacct(path, procs=8, tz="Europe/Berlin")
    assert str(err.value).startswith(f"{path}:{line}: column {column}: ")
    assert err.value.line == line


def test_file_level_errors(tmp_path):
    with pytest.raises(TraceFormatError, match=r":2: expected 16 fields .* found 17; a '\|' inside"):
        read_sacct(log(tmp_path, row("1") + "|x"))
    with pytest.raises(TraceFormatError, match="no JobID column"):
        read_sacct(log(tmp_path, row("1"), header=HEADER.replace("JobID|JobIDRaw", "Job|JobIDRaw")))
    with pytest.raises(TraceFormatError, match="no Start, End or Elapsed column"):
        read_sacct(log(tmp_path, header="JobID|Submit|State|NCPUS"))
    with pytest.raises(TraceFormatError, match="column State appears twice"):
        read_sacct(log(tmp_path, header=HEADER + "|state"))
    with pytest.raises(EmptyWorkloadError, match="no header row"):
        read_sacct(log(tmp_path, header="# only a comment"))
    with pytest.raises(TraceFormatError, match="End: '2024-01-01T00:00:00' is before Start"):
        read_sacct(log(tmp_path, row("1", end="2024-01-01T00:00:00", elapsed="")))
    with pytest.raises(InvalidConfigError, match="tz: 'Nowhere' is not a time zone"):
        read_sacct(log(tmp_path, row("1")), tz="Nowhere")
    with pytest.raises(InvalidConfigError, match="default_estimate must be a positive number"):
        read_sacct(log(tmp_path, row("1")), default_estimate=0)


def test_parsable_with_a_trailing_bar_and_unknown_columns(tmp_path):
    header = HEADER + "|ExitCode|"
    w = read_sacct(log(tmp_path, row("1") + "|0:0|", header=header), procs=8)
    assert len(w) == 1 and any("columns not read: ExitCode" in note for note in w.report.notes)


# ------------------------------------------------------------------ limits
def test_limits_without_a_duration_take_the_documented_rule(tmp_path):
    rows = (
        row("1", partition="long", limit="3-00:00:00"),
        row("2", partition="long", limit="UNLIMITED"),
        row("3", partition="debug", limit="Partition_Limit"),
        row("4", partition="debug", limit="00:15:00"),
        row("5", partition="other", limit=""),
    )
    path = log(tmp_path, *rows)
    w = read_sacct(path, procs=8)  # the partition's largest Timelimit in the log, else the log's
    assert w.estimate.tolist() == [259200.0, 259200.0, 900.0, 900.0, 259200.0]
    assert w.report.default_estimates == 3 and w.raw[:, 8].tolist()[1] == -1
    assert "largest Timelimit of the partition in the log (2 jobs)" in w.report.default_estimate_source
    assert "Timelimit without a duration: UNLIMITED 1, Partition_Limit 1, blank 1" in w.report.notes
    on_machine = read_sacct(path, node_machine())  # the partition's maximum wall-time on the machine
    assert on_machine.estimate.tolist()[1:3] == [604800.0, 1800.0]
    assert on_machine.report.dropped == {DROP_QUEUE: 1}  # "other" is no queue of the machine
    assert read_sacct(path, procs=8, default_estimate=600).estimate.tolist()[1:3] == [600.0, 600.0]
    alone = read_sacct(log(tmp_path, row("1", limit="UNLIMITED", elapsed="00:20:00")), procs=8)
    assert alone.estimate.tolist() == [1200.0]  # no Timelimit anywhere: the longest run time


# ------------------------------------------------------------------ time zones
def test_time_zones_with_a_dst_change(tmp_path):
    # a job across the end of summer time in Berlin: 11:42:44 on the wall clock, 12:42:44 elapsed
    across = row(
        "1", submit="2024-10-26T20:30:00", start="2024-10-26T20:30:01", end="2024-10-27T08:12:45", elapsed=""
    )
    # submitted in the first 02:40 (00:40 UTC), started in the second 02:10 (01:10 UTC)
    repeated = row("2", submit="2024-10-27T02:40:00", start="2024-10-27T02:10:00", end="2024-10-27T02:30:00")
    path = log(tmp_path, across, repeated)
    berlin = read_sacct(path, procs=8, tz="Europe/Berlin")
    assert berlin.runtime.tolist()[0] == 12 * 3600 + 42 * 60 + 44
    assert berlin.log_wait.tolist() == [1.0, 1800.0]
    assert berlin.header["UnixStartTime"] == str(1729967400)  # 2024-10-26T18:30:00Z
    assert any("local time passed twice" in note for note in berlin.report.notes)
    utc = read_sacct(path, procs=8)
    assert utc.runtime.tolist()[0] == 11 * 3600 + 42 * 60 + 44 and utc.header["TimeZone"] == "UTC"
    assert utc.log_wait.tolist()[1] == 0.0  # read in UTC it starts before its submit: wait 0, warned
    assert any("start before their submit" in w for w in utc.report.warnings)
    # the file's own zone, and the argument over it
    commented = log(tmp_path, across, repeated, name="c.sacct", comments="# TimeZone: Europe/Berlin\n")
    assert read_sacct(commented, procs=8).runtime.tolist()[0] == berlin.runtime[0]
    assert read_sacct(commented, procs=8, tz="UTC").runtime.tolist()[0] == utc.runtime[0]
    ny = read_sacct(path, procs=8, tz="America/New_York")
    assert ny.header["UnixStartTime"] == str(
        int(dt.datetime(2024, 10, 27, 0, 30, tzinfo=dt.timezone.utc).timestamp())
    )


# ------------------------------------------------------------------ memory and machines
def test_memory_per_node_and_per_cpu_on_a_node_machine(tmp_path):
    no_tres = HEADER.replace("|ReqTRES|AllocTRES", "")
    strip = lambda r: r.rsplit("|", 2)[0]  # noqa: E731
    rows = (
        strip(row("1", nodes="2", cpus="64", reqmem="4000Mc")),  # 4000 MB x 32 CPUs per node = 125 GB
        strip(row("2", reqmem="16Gn")),
        strip(row("3", reqmem="2048K")),  # 2 MB: rounded up to 1 GB
        strip(row("4", nodes="3", cpus="40", reqmem="1000Mc")),  # 14 cores per node, rounded up
    )
    w = read_sacct(log(tmp_path, *rows, header=no_tres), node_machine())
    assert w.per_chunk.tolist() == [[32, 0, 125], [4, 0, 16], [4, 0, 1], [14, 0, 14]]
    assert w.chunks.tolist() == [2, 1, 1, 3] and w.procs == 384
    assert any("1 CPU or GPU counts do not divide evenly" in note for note in w.report.notes)
    # TRES over ReqMem, AllocTRES over ReqTRES
    both = row("5", reqmem="1Gn", req="cpu=4,mem=8G,node=1", alloc="cpu=4,mem=16G,node=1,gres/gpu=1")
    assert read_sacct(log(tmp_path, both), node_machine()).per_chunk.tolist() == [[4, 1, 16]]
    assert read_sacct(log(tmp_path, row("6", reqmem="1Gn", alloc="")), node_machine()).per_chunk.tolist() == [
        [4, 0, 4]
    ]


def test_jobs_the_machine_cannot_run_are_dropped(tmp_path):
    rows = (
        row("1"),
        row("2", alloc="cpu=4,mem=4G,node=1,gres/gpu=8"),  # 8 GPUs on one node: none has
        row("3", nodes="13", cpus="416", alloc="cpu=416,node=13"),  # 13 whole nodes: the machine has 12
    )
    w = read_sacct(log(tmp_path, *rows), node_machine())
    assert w.job_id.tolist() == [1]
    assert w.report.dropped == {DROP_CHUNK: 1, "more chunks than the machine can hold": 1}
    cores_only = Machine.from_dict(
        {"name": "plain", "resources": ["cores"], "nodes": [{"count": 4, "cores": 8}]}
    )
    w = read_sacct(log(tmp_path, row("1"), row("2", alloc="cpu=4,gres/gpu=1,node=1")), cores_only)
    assert w.report.dropped == {DROP_NO_RESOURCE: 1}
    assert any("memory not requested: machine 'plain' has no mem_gb" in note for note in w.report.notes)


# ------------------------------------------------------------------ the sample
def test_the_sample_reads_with_every_odd_case_accounted_for():
    w = read_sacct(SAMPLE, tz="Europe/Berlin", procs=384)
    r = w.report
    assert r.job_lines == 35 and r.jobs_kept == 30
    assert r.dropped == {
        DROP_PENDING: 1,
        DROP_CANCELLED: 1,
        DROP_NO_START: 1,
        DROP_ARRAY_PENDING: 1,
        DROP_RUNNING: 1,
    }
    notes = "\n".join(r.notes)
    assert (
        "19 step rows" in notes
        and "6 array tasks" in notes
        and "2 jobs have a local time passed twice" in notes
    )
    assert r.default_estimates == 4  # 2 UNLIMITED, 2 Partition_Limit
    # every kept job: End - Start in Berlin time is its Elapsed (one crosses the change of time)
    lines = SAMPLE.read_text().splitlines()
    head = lines[0].split("|")
    for line in lines[1:]:
        cells = dict(zip(head, line.split("|"), strict=True))
        if cells["JobIDRaw"].isdigit() and int(cells["JobIDRaw"]) in w.job_id:
            start, end = (parse_time(cells[c], BERLIN) for c in ("Start", "End"))
            j = int(np.flatnonzero(w.job_id == int(cells["JobIDRaw"]))[0])
            if not (start.ambiguous or end.ambiguous):
                assert end.first - start.first == w.runtime[j], cells["JobID"]


def test_the_sample_converts_to_a_job_table(tmp_path, capsys):
    out = tmp_path / "jobs.csv"
    argv = ["convert", "--from", "sacct", str(SAMPLE), "-o", str(out), "--timezone", "Europe/Berlin"]
    assert main([*argv, "--procs", "384"]) == 0
    captured = capsys.readouterr()
    assert "wrote 30 jobs" in captured.out and "dropped 1: never started: pending" in captured.err
    table = read_jobs(out)
    sample = read_sacct(SAMPLE, tz="Europe/Berlin", procs=384)
    for column in ("job_id", "submit", "runtime", "estimate", "chunks"):
        assert np.array_equal(getattr(table, column), getattr(sample, column)), column
    assert np.array_equal(table.per_chunk[:, :1], sample.per_chunk)  # cores; gpus, mics, mem_gb 0


def test_simulate_reads_a_sacct_workload(capsys):
    argv = ["simulate", "--workload", str(SAMPLE), "--timezone", "Europe/Berlin", "--procs", "384"]
    assert main([*argv, "--policy", "easy", "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs_simulated"] == 30 and out["procs"] == 384


def test_cli_usage_errors_exit_2(tmp_path, capsys):
    swf = ROOT / "hpcgym" / "workloads" / "data" / "SDSC-SP2-1998-4.2-cln-first10k.swf.gz"
    cases = [
        (["convert", str(SAMPLE)], "give the file to write once"),
        (["convert", str(SAMPLE), str(tmp_path / "a.csv"), "-o", str(tmp_path / "b.csv")], "give the file"),
        (["convert", str(SAMPLE), str(tmp_path / "a.sacct")], "unknown file type"),
        (
            ["convert", str(swf), str(tmp_path / "a.csv"), "--timezone", "UTC"],
            "--timezone sets the time zone",
        ),
        (["simulate", "--timezone", "UTC", "--jobs", "10"], "--timezone sets the time zone"),
        (["convert", str(SAMPLE), str(tmp_path / "a.csv"), "--timezone", "Nowhere"], "not a time zone"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "hpcgym: error:" in err and message in err and "Traceback" not in err
    bad = tmp_path / "bad.sacct"
    bad.write_text(SAMPLE.read_text().replace("|00:12:31|", "|00:12:x|"))
    assert main(["convert", str(bad), str(tmp_path / "a.csv")]) == 2
    assert f"{bad}:6: column Elapsed: '00:12:x' is not a duration" in capsys.readouterr().err


# ------------------------------------------------------------------ round trip
def _clock(seconds: float) -> str:
    d, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


def _stamp(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).replace(tzinfo=None).isoformat()


jobs = st.lists(
    st.tuples(
        st.integers(0, 10 * 86400),  # submit
        st.integers(0, 86400),  # wait
        st.integers(0, 3 * 86400),  # run time
        st.integers(1, 4 * 86400 // 60),  # Timelimit in minutes
        st.integers(1, 4),  # nodes
        st.integers(1, 32),  # CPUs per node
        st.integers(0, 4),  # GPUs per node
        st.integers(0, 64 * 1024),  # memory per node in MB
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(25), deadline=None)
@given(jobs)
def test_what_sacct_prints_reads_back_to_the_same_jobs(rows):
    t0 = 1_700_000_000
    lines = []
    for k, (submit, wait, runtime, limit, nodes, cpn, gpn, mem) in enumerate(rows):
        start = t0 + submit + wait
        tres = f"cpu={nodes * cpn},mem={nodes * mem}M,node={nodes}" + (
            f",gres/gpu={nodes * gpn}" if gpn else ""
        )
        lines.append(
            row(
                str(100 + k),
                submit=_stamp(t0 + submit),
                start=_stamp(start),
                end=_stamp(start + runtime),
                elapsed=_clock(runtime),
                limit=_clock(limit * 60),
                nodes=str(nodes),
                cpus=str(nodes * cpn),
                reqmem=f"{mem}Mn",
                req=tres,
                alloc=tres,
            )
        )
    text = "\n".join([HEADER, *lines]) + "\n"
    machine = Machine.from_dict(
        {
            "name": "big",
            "resources": ["cores", "gpus", "mem_gb"],
            "nodes": [{"count": 4, "cores": 32, "gpus": 4, "mem_gb": 64}],
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rt.sacct"
        path.write_text(text)
        w = read_sacct(path, machine)
    order = sorted(range(len(rows)), key=lambda k: rows[k][0])  # stable, as the reader sorts
    first = min(r[0] for r in rows)
    assert w.job_id.tolist() == [100 + k for k in order]
    assert w.submit.tolist() == [float(rows[k][0] - first) for k in order]
    assert w.log_wait.tolist() == [float(rows[k][1]) for k in order]
    assert w.runtime.tolist() == [float(rows[k][2]) for k in order]
    assert w.estimate.tolist() == [float(rows[k][3] * 60) for k in order]
    assert w.chunks.tolist() == [rows[k][4] for k in order]
    expected = [[rows[k][5], rows[k][6], -(-rows[k][7] // 1024)] for k in order]
    assert w.per_chunk.tolist() == expected
