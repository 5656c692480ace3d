"""Job tables (CSV, Parquet): the reader's errors and drops, the writer, round trips, ``convert``,
``--workload`` and the Eurora sample run end to end."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpcgym.baselines import run_policy
from hpcgym.cli import main
from hpcgym.common.errors import (
    EmptyWorkloadError,
    InvalidConfigError,
    MissingExtraError,
    TraceFormatError,
    UnknownNameError,
)
from hpcgym.machine import Machine, make_machine
from hpcgym.workloads import (
    DROP_CHUNK,
    DROP_CHUNKS,
    DROP_NO_REQUEST,
    DROP_NO_RESOURCE,
    DROP_QUEUE,
    DROP_RUNTIME,
    Workload,
    load_default,
    read_jobs,
    read_swf,
    to_swf_workload,
    write_jobs,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
HEADER = "job_id,submit,runtime,walltime,user,queue,chunks,cores,gpus,mics,mem_gb"


def table(tmp_path: Path, *rows: str, header: str = HEADER, name: str = "jobs.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


COLUMNS = ("job_id", "submit", "runtime", "estimate", "chunks", "per_chunk", "status", "procs_req")


def decoded(w: Workload, column: str, attr: str) -> list[object]:
    """An identifier column as the names (or ids) it stands for; -1 for none."""
    names = w.names.get(column)
    codes = getattr(w, attr).tolist()
    if names is None:
        return codes
    return [names[c] if c >= 0 else -1 for c in codes]


def assert_same_jobs(a: Workload, b: Workload) -> None:
    for c in COLUMNS:
        assert np.array_equal(getattr(a, c), getattr(b, c)), c
    for column, attr in (
        ("user", "user"),
        ("group", "group"),
        ("job_name", "executable"),
        ("queue", "queue"),
    ):
        assert decoded(a, column, attr) == decoded(b, column, attr), column
    assert a.resources == b.resources


# ------------------------------------------------------------------ reading
def test_a_small_table_reads_with_names_defaults_and_the_machine(tmp_path):
    path = table(
        tmp_path,
        "7,0,60,600,alice,debug,1,4,0,0,2",
        "8,10,3000,,bob,parallel,2,8,2,0,8",
        "9,10,30,,alice,debug,1,1,0,1,",
    )
    w = read_jobs(path, "eurora")
    assert w.job_id.tolist() == [7, 8, 9]
    assert w.names["user"] == ("alice", "bob") and w.user.tolist() == [0, 1, 0]
    assert w.names["queue"] == ("debug", "parallel")
    assert w.resources == ("cores", "gpus", "mics", "mem_gb")
    assert w.chunks.tolist() == [1, 2, 1]
    assert w.per_chunk.tolist() == [[4, 0, 0, 2], [8, 2, 0, 8], [1, 0, 1, 0]]
    # blank wall-times: the queue's maximum on Eurora (parallel 4 h, debug 30 min), reported
    assert w.estimate.tolist() == [600.0, 14400.0, 1800.0]
    assert w.report.default_estimates == 2
    assert "queue's maximum wall-time" in w.report.default_estimate_source
    assert w.machine is not None and w.machine.name == "eurora" and w.procs == 1024
    assert w.group.tolist() == [-1, -1, -1] and "group" not in w.names


def test_without_a_machine_the_size_comes_from_max_procs_or_the_largest_job(tmp_path):
    rows = ("1,0,60,600,u,q,1,4,0,0,0", "2,5,60,600,u,q,2,3,0,0,0")
    w = read_jobs(table(tmp_path, *rows))
    assert w.machine is None and w.procs == 6 and w.report.procs_source == "largest job"
    assert any("guessed from the largest job" in x for x in w.report.warnings)
    path = tmp_path / "sized.csv"
    path.write_text("# MaxProcs: 64\n" + table(tmp_path, *rows).read_text())
    assert read_jobs(path).procs == 64
    assert read_jobs(path, procs=32).procs == 32


def test_iso_dates_become_seconds_from_the_earliest(tmp_path):
    path = table(
        tmp_path,
        "1,2014-03-01T10:00:30,60,600,u,q",
        "2,2014-03-01T10:00:00Z,60,600,u,q",
        header="job_id,submit,runtime,walltime,user,queue",
    )
    path.write_text(path.read_text().replace("queue\n", "queue,cores\n").replace(",q\n", ",q,1\n"))
    w = read_jobs(path)
    assert w.submit.tolist() == [0.0, 30.0] and w.job_id.tolist() == [2, 1]
    assert int(w.header["UnixStartTime"]) == 1393668000
    assert any("not in submit order" in note for note in w.report.notes)


def test_unsorted_rows_are_sorted_stably(tmp_path):
    w = read_jobs(
        table(tmp_path, "1,50,1,9,u,q,1,1,0,0,0", "2,10,1,9,u,q,1,1,0,0,0", "3,10,1,9,u,q,1,1,0,0,0")
    )
    assert w.job_id.tolist() == [2, 3, 1] and w.submit.tolist() == [10, 10, 50]


@pytest.mark.parametrize(
    ("row", "where", "what"),
    [
        ("1,0,abc,600,u,debug,1,1,0,0,0", "row 1, column 'runtime'", "'abc' is not a number"),
        ("1,0,60,600,u,debug,1.5,1,0,0,0", "row 1, column 'chunks'", "is not a whole number"),
        ("1,0,60,600,u,debug,1,-2,0,0,0", "row 1, column 'cores'", "is negative"),
        ("1,0,60,0,u,debug,1,1,0,0,0", "row 1, column 'walltime'", "is not > 0"),
        ("1,,60,600,u,debug,1,1,0,0,0", "row 1, column 'submit'", "is blank"),
        ("1,0,,600,u,debug,1,1,0,0,0", "row 1, column 'runtime'", "is blank"),
        ("1,yesterday,60,600,u,debug,1,1,0,0,0", "row 1, column 'submit'", "neither seconds nor"),
        ("1,0,inf,600,u,debug,1,1,0,0,0", "row 1, column 'runtime'", "is not a number"),
    ],
)
def test_a_malformed_value_names_file_line_row_and_column(tmp_path, row, where, what):
    path = table(tmp_path, "1,0,60,600,u,debug,1,1,0,0,0", row)
    with pytest.raises(TraceFormatError) as info:
        read_jobs(path)
    message = str(info.value)
    assert (
        message.startswith(f"{path}:3: ") and where.replace("row 1", "row 2") in message and what in message
    )
    assert info.value.line == 3


def test_file_level_errors(tmp_path):
    with pytest.raises(TraceFormatError, match="unknown column 'walltme'; did you mean 'walltime'"):
        read_jobs(table(tmp_path, "0,60,1", header="submit,runtime,walltme"))
    with pytest.raises(TraceFormatError, match=r":2: expected 11 fields .* found 3"):
        read_jobs(table(tmp_path, "1,2,3"))
    with pytest.raises(TraceFormatError, match="no 'runtime' column"):
        read_jobs(table(tmp_path, "0,1", header="submit,cores"))
    with pytest.raises(TraceFormatError, match="no request"):
        read_jobs(table(tmp_path, "0,1", header="submit,runtime"))
    with pytest.raises(TraceFormatError, match="mixes seconds and date-times"):
        read_jobs(table(tmp_path, "0,1,1", "2014-01-01T00:00:00,1,1", header="submit,runtime,cores"))
    with pytest.raises(EmptyWorkloadError, match="no rows"):
        read_jobs(table(tmp_path))
    with pytest.raises(InvalidConfigError, match="unknown file type"):
        read_jobs(tmp_path / "jobs.txt")
    bad = tmp_path / "named.csv"
    bad.write_text("# Machine: nowhere\nsubmit,runtime,cores\n0,1,1\n")
    with pytest.raises(UnknownNameError, match="header Machine: 'nowhere' is not a machine preset"):
        read_jobs(bad)


def test_select_column_and_its_agreement_with_the_per_chunk_columns(tmp_path):
    header = "submit,runtime,walltime,chunks,cores,gpus,select"
    w = read_jobs(
        table(
            tmp_path,
            "0,60,600,,,,2:ncpus=8:ngpus=2:mem=8gb",
            "1,60,600,2,8,2,2:ncpus=8:ngpus=2",
            header=header,
        )
    )
    assert w.chunks.tolist() == [2, 2] and w.per_chunk.tolist() == [[8, 2, 0, 8], [8, 2, 0, 0]]
    with pytest.raises(TraceFormatError, match=r"row 1, column 'cores': 4 disagrees with select"):
        read_jobs(table(tmp_path, "0,60,600,2,4,2,2:ncpus=8:ngpus=2", header=header))
    with pytest.raises(TraceFormatError, match=r"row 1, column 'chunks': 3 disagrees"):
        read_jobs(table(tmp_path, "0,60,600,3,,,2:ncpus=8", header=header))
    with pytest.raises(TraceFormatError, match=r"row 1, column 'select': select '2:ncpus=x'"):
        read_jobs(table(tmp_path, "0,60,600,,,,2:ncpus=x", header=header))
    other = read_jobs(table(tmp_path, "0,60,600,,,,1:ncpus=2:fpga=1", header=header))
    assert other.resources == ("cores", "gpus", "mics", "mem_gb", "fpga")
    assert other.per_chunk.tolist() == [[2, 0, 0, 0, 1]]


def test_unusable_jobs_are_dropped_and_counted_by_reason(tmp_path):
    path = table(
        tmp_path,
        "1,0,60,600,u,debug,1,1,0,0,1",  # fine
        "2,0,-1,600,u,debug,1,1,0,0,1",  # never ran
        "3,0,60,600,u,nosuchqueue,1,1,0,0,1",  # a queue Eurora lacks
        "4,0,60,600,u,debug,1,1,4,0,1",  # 4 GPUs in one chunk: no node has them
        "5,0,60,600,u,debug,1,17,0,0,1",  # 17 cores in one chunk
        "6,0,60,600,u,debug,65,16,0,0,1",  # 65 whole nodes
        "7,0,60,600,u,debug,33,1,2,0,1",  # 33 chunks with 2 GPUs: only 32 GPU nodes
        "8,0,60,600,u,debug,0,1,0,0,1",  # no chunks
        "9,0,60,600,u,debug,1,0,0,0,0",  # nothing at all
    )
    w = read_jobs(path, "eurora")
    assert w.job_id.tolist() == [1]
    assert dict(w.report.dropped) == {
        DROP_RUNTIME: 1,
        DROP_NO_REQUEST: 2,
        DROP_QUEUE: 1,
        DROP_CHUNK: 2,
        DROP_CHUNKS: 2,
    }
    assert w.report.jobs_dropped == 8 and w.report.job_lines == 9 and w.report.jobs_kept == 1
    assert f"first job dropped as '{DROP_QUEUE}': line 4 (job 3)" in w.report.notes
    text = str(w.report)
    assert "dropped 2: a chunk larger than any node" in text
    with pytest.raises(EmptyWorkloadError, match="all 1 rows were dropped: 1 queue not on the machine"):
        read_jobs(table(tmp_path, "3,0,60,600,u,nosuchqueue,1,1,0,0,1"), "eurora")


def test_a_resource_the_machine_lacks_is_a_drop_reason(tmp_path):
    path = table(tmp_path, "0,60,1,0", "0,60,1,1", header="submit,runtime,cores,gpus")
    w = read_jobs(path, Machine.processors(8))
    assert len(w) == 1 and dict(w.report.dropped) == {DROP_NO_RESOURCE: 1}


def test_walltime_above_the_queue_limit_is_kept_with_a_warning(tmp_path):
    w = read_jobs(table(tmp_path, "1,0,60,3600,u,debug,1,1,0,0,1"), "eurora")
    assert len(w) == 1 and any("more wall-time than their queue's maximum" in x for x in w.report.warnings)


def test_default_estimate_argument_overrides_the_queue(tmp_path):
    path = table(tmp_path, "1,0,60,,u,debug,1,1,0,0,1", "2,0,60,,u,parallel,1,1,0,0,1")
    w = read_jobs(path, "eurora", default_estimate=99)
    assert w.estimate.tolist() == [99.0, 99.0]
    # without a machine: the largest wall-time in the file, else the longest run time
    w = read_jobs(table(tmp_path, "1,0,60,,u,q,1,1,0,0,1", "2,0,70,500,u,q,1,1,0,0,1"))
    assert w.estimate.tolist() == [500.0, 500.0] and "largest wall-time" in w.report.default_estimate_source
    w = read_jobs(table(tmp_path, "1,0,60,,u,q,1,1,0,0,1", "2,0,70,,u,q,1,1,0,0,1"))
    assert w.estimate.tolist() == [70.0, 70.0]


def test_memory_fractions_are_rounded_up(tmp_path):
    w = read_jobs(table(tmp_path, "1,0,60,60,u,q,1,1,0,0,1.5"))
    assert w.per_chunk[0, 3] == 2 and any("rounded up" in n for n in w.report.notes)


def test_numeric_identifiers_stay_numbers(tmp_path):
    w = read_jobs(table(tmp_path, "1,0,60,60,12,3,1,1,0,0,1", "2,0,60,60,,4,1,1,0,0,1"))
    assert w.user.tolist() == [12, -1] and w.queue.tolist() == [3, 4] and not w.names


def test_gzipped_csv_reads(tmp_path):
    plain = table(tmp_path, "1,0,60,60,u,q,1,1,0,0,1")
    packed = tmp_path / "jobs.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_jobs(packed).job_id.tolist() == [1]


# ------------------------------------------------------------------ writing and round trips
def test_the_sample_round_trips_through_csv(tmp_path):
    w = read_jobs(SAMPLE)
    out = tmp_path / "again.csv"
    write_jobs(w, out)
    back = read_jobs(out)
    assert_same_jobs(w, back)
    assert back.machine is not None and back.machine.name == "eurora"
    assert back.report.default_estimates == 0  # every wall-time is written out


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow not installed")
def test_the_sample_round_trips_through_parquet(tmp_path):
    w = read_jobs(SAMPLE)
    out = tmp_path / "again.parquet"
    write_jobs(w, out)
    back = read_jobs(out)
    assert_same_jobs(w, back)
    assert back.header["Machine"] == "eurora"


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'hpcgym\[parquet\]'"):
        write_jobs(read_jobs(SAMPLE), tmp_path / "x.parquet")
    (tmp_path / "y.parquet").write_bytes(b"PAR1")
    with pytest.raises(MissingExtraError, match=r"pip install 'hpcgym\[parquet\]'"):
        read_jobs(tmp_path / "y.parquet")


NAMES = st.text(alphabet="abcxyz ,\"'-_é", min_size=1, max_size=6).map(lambda s: "n" + s.strip() + "x")


@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    n = draw(st.integers(1, 25))
    gaps = draw(st.lists(st.floats(0, 1e5, allow_nan=False), min_size=n, max_size=n))
    submit = np.cumsum(gaps)
    runtime = draw(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=n, max_size=n))
    estimate = draw(st.lists(st.floats(1e-3, 1e7, allow_nan=False), min_size=n, max_size=n))
    chunks = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    per = draw(
        st.lists(
            st.tuples(st.integers(1, 32), st.integers(0, 4), st.integers(0, 2), st.integers(0, 64)),
            min_size=n,
            max_size=n,
        )
    )
    w = Workload.from_columns(
        submit,
        runtime,
        None,
        estimate,
        chunks=chunks,
        per_chunk=per,
        resources=("cores", "gpus", "mics", "mem_gb"),
        procs=4096,
    )
    names: dict[str, tuple[str, ...]] = {}
    changes: dict[str, np.ndarray] = {}
    for column, attr in (("user", "user"), ("queue", "queue"), ("job_name", "executable")):
        table_ = tuple(draw(st.lists(NAMES, min_size=1, max_size=4, unique=True)))
        codes = draw(st.lists(st.integers(-1, len(table_) - 1), min_size=n, max_size=n))
        names[column] = table_
        changes[attr] = np.array(codes, dtype=np.int64)
    changes["group"] = np.array(draw(st.lists(st.integers(-1, 5000), min_size=n, max_size=n)), dtype=np.int64)
    import dataclasses

    return dataclasses.replace(w, names=names, **changes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(w=workloads(), suffix=st.sampled_from([".csv", ".csv.gz"] + ([".parquet"] if HAS_PYARROW else [])))
def test_write_then_read_gives_the_same_workload(tmp_path, w, suffix):
    path = tmp_path / f"w{suffix}"
    write_jobs(w, path)
    back = read_jobs(path)
    assert_same_jobs(w, back)
    assert back.submit.tolist() == w.submit.tolist()  # floats exactly
    assert back.procs == w.procs


# ------------------------------------------------------------------ SWF and convert
def test_swf_to_csv_and_back_keeps_the_jobs_and_the_schedule(tmp_path):
    swf = load_default().window(1500)
    csv_path = tmp_path / "sdsc.csv"
    write_jobs(swf, csv_path)
    table_ = read_jobs(csv_path)
    assert table_.procs == swf.procs and table_.report.procs_source == "MaxProcs"
    for c in ("job_id", "submit", "runtime", "estimate", "user", "group", "executable", "queue", "procs_req"):
        assert np.array_equal(getattr(table_, c), getattr(swf, c)), c
    for policy in ("easy", "sjf-list"):
        a = run_policy(swf, policy).schedule
        b = run_policy(table_, policy).schedule
        assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end), policy


def test_convert_swf_csv_swf_and_simulate_gives_the_same_schedule(tmp_path, capsys):
    src = tmp_path / "small.swf"
    from hpcgym.workloads import write_swf

    write_swf(src, load_default().window(800))
    assert main(["convert", str(src), str(tmp_path / "a.csv")]) == 0
    out, err = capsys.readouterr()
    assert "wrote 800 jobs" in out and "800 jobs kept" in err  # the load report on stderr
    assert main(["convert", str(tmp_path / "a.csv"), str(tmp_path / "b.swf.gz")]) == 0
    capsys.readouterr()
    back = read_swf(tmp_path / "b.swf.gz")
    orig = read_swf(src)
    for c in ("job_id", "submit", "runtime", "estimate", "procs_req", "user"):
        assert np.array_equal(getattr(orig, c), getattr(back, c)), c
    rows = []
    for args in (["--trace", str(src)], ["--workload", str(tmp_path / "a.csv")]):
        assert main(["simulate", *args, "--policy", "easy", "--json", "--no-progress"]) == 0
        rows.append(json.loads(capsys.readouterr().out))
    for key in ("mean_wait_s", "mean_bsld", "makespan_s", "jobs_simulated"):
        assert rows[0][key] == rows[1][key], key


def test_convert_to_swf_refuses_a_second_resource(tmp_path, capsys):
    assert main(["convert", str(SAMPLE), str(tmp_path / "x.swf")]) == 2
    err = capsys.readouterr().err
    assert "SWF holds one resource" in err and "job 100" in err and "Traceback" not in err
    assert not (tmp_path / "x.swf").exists()


def test_to_swf_writes_names_as_numbers(tmp_path):
    path = table(tmp_path, "1,0,60,60,alice,q,2,3,0,0,0", "2,0,60,60,bob,q,1,1,0,0,0")
    w, notes = to_swf_workload(read_jobs(path))
    assert w.user.tolist() == [1, 2] and w.procs_req.tolist() == [6, 1] and w.resources == ("procs",)
    assert any("user names written as numbers 1-2" in n for n in notes)


def test_convert_usage_errors_exit_2(tmp_path, capsys):
    assert main(["convert", str(SAMPLE), str(tmp_path / "x.txt")]) == 2
    assert "unknown file type" in capsys.readouterr().err
    assert main(["convert", str(SAMPLE), str(tmp_path / "nodir" / "x.csv")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(SAMPLE), "--trace", "x.swf"]) == 2
    assert "give one" in capsys.readouterr().err
    bad = table(tmp_path, "1,0,abc,60,u,q,1,1,0,0,0")
    assert main(["simulate", "--workload", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: row 1, column 'runtime'" in err and "Traceback" not in err


def test_convert_for_a_machine_drops_and_reports(tmp_path, capsys):
    path = table(tmp_path, "1,0,60,600,u,debug,1,1,0,0,1", "2,0,60,600,u,debug,1,1,4,0,1")
    assert main(["convert", str(path), str(tmp_path / "out.csv"), "--machine", "eurora"]) == 0
    err = capsys.readouterr().err
    assert "dropped 1: a chunk larger than any node" in err
    assert read_jobs(tmp_path / "out.csv").job_id.tolist() == [1]


# ------------------------------------------------------------------ the Eurora sample
def test_the_sample_is_what_its_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_eurora_sample", SAMPLE.with_name("make_eurora_sample.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_sample(tmp_path / "s.csv")
    assert (tmp_path / "s.csv").read_bytes() == SAMPLE.read_bytes()


def test_the_sample_matches_the_published_eurora_figures():
    w = read_jobs(SAMPLE)
    assert 200 <= len(w) <= 500 and w.report.jobs_dropped == 0
    rt = w.runtime
    assert 0.90 <= (rt < 3600).mean() <= 0.96  # 93 % short
    assert (rt > 24 * 3600).sum() == 0  # maximum job duration 24 h
    one_node = w.chunks == 1
    assert 0.92 <= one_node.mean() <= 0.98  # about 95 % on one node
    assert 0.57 <= (one_node & (w.per_chunk[:, 0] == 1)).mean() <= 0.67  # 62 % on one core
    assert 0.11 <= (w.per_chunk[:, 1] > 0).mean() <= 0.19  # 15 % ask for GPUs
    assert 0 < (w.per_chunk[:, 2] > 0).mean() < 0.01  # under 1 % for MICs
    share = {q: float((w.queue == i).mean()) for i, q in enumerate(w.names["queue"])}
    assert abs(share["debug"] - 0.50) < 0.05 and abs(share["parallel"] - 0.41) < 0.05
    gaps = np.diff(w.submit)
    assert np.median(gaps) == 0 and 40 <= gaps.mean() <= 80  # bursty, mean about 60 s
    eurora = make_machine("eurora")
    assert all(w.estimate[j] <= eurora.queues[w.names["queue"][w.queue[j]]][0] for j in range(len(w)))


def test_simulate_the_sample_on_eurora_end_to_end(tmp_path, capsys):
    sched = tmp_path / "s.csv"
    argv = ["simulate", "--workload", str(SAMPLE), "--policy", "easy", "--json", "--no-progress"]
    assert main([*argv, "--schedule-out", str(sched)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["jobs_simulated"] == 400 and row["procs"] == 1024
    # the placements: no node over its capacity at any instant, GPU jobs only on GPU nodes
    w = read_jobs(SAMPLE)
    schedule = run_policy(w, "easy").schedule
    m = w.machine
    assert m is not None
    gpu_nodes = set(m.groups["gpu"].tolist())
    events = sorted({*schedule.start.tolist(), *schedule.end.tolist()})
    for t in events:
        used = np.zeros_like(m.capacity)
        for j in np.flatnonzero((schedule.start <= t) & (schedule.end > t)):
            nodes = schedule.placement(int(j))
            assert len(nodes) == w.chunks[j]
            for node in nodes:
                used[node] += w.per_chunk[j]
        assert (used <= m.capacity).all(), t
    for j in np.flatnonzero(w.per_chunk[:, 1] > 0):
        assert set(schedule.placement(int(j)).tolist()) <= gpu_nodes
    assert (schedule.start >= w.submit).all()
