"""Reading SWF: drop rules, sizes, estimates, machine size; windows, load scaling, writing."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.errors import InvalidConfigError
from hpcgym.workload import (
    DROP_NO_SUBMIT,
    DROP_RUNTIME,
    DROP_SIZE,
    DROP_TOO_LARGE,
    SWF_FIELDS,
    LoadReport,
    Workload,
    default_trace_path,
    load_default,
    read_swf,
    write_swf,
)


def swf_line(
    job: int,
    submit: float,
    runtime: float,
    alloc: int,
    req: int = -1,
    estimate: float = -1,
    user: int = 1,
) -> str:
    fields = [job, submit, -1, runtime, alloc, -1, -1, req, estimate, -1, 1, user, 1, 1, 1, 1, -1, -1]
    return " ".join(str(f) for f in fields)


@pytest.fixture
def swf(tmp_path, write_swf_text):
    def make(*lines: str, name: str = "t.swf") -> Path:
        return write_swf_text(tmp_path / name, "\n".join(lines) + "\n")

    return make


# ----------------------------------------------------------------- drop rules
def test_drop_rules_count_every_dropped_job_by_reason(swf):
    path = swf(
        "; MaxProcs: 16",
        swf_line(1, 0, 10, 4, estimate=20),  # kept
        swf_line(2, 5, -1, 4, estimate=20),  # cancelled: run time < 0
        swf_line(3, 6, 10, 0, 0, estimate=20),  # size 0
        swf_line(4, 7, 10, -1, -1, estimate=20),  # size missing
        swf_line(5, 8, 10, 4, 17, estimate=20),  # asks for 17 of 16
        swf_line(6, -1, 10, 4, estimate=20),  # no submit time
        swf_line(7, 9, -1, 0, 0, estimate=20),  # run time < 0 and size 0: counted once, first reason
        swf_line(8, 10, 0, 16, estimate=20),  # kept: run time 0 and the whole machine
    )
    w = read_swf(path)
    r = w.report
    assert r.job_lines == 8
    assert r.jobs_kept == 2 == len(w)
    assert dict(r.dropped) == {DROP_RUNTIME: 2, DROP_SIZE: 2, DROP_TOO_LARGE: 1, DROP_NO_SUBMIT: 1}
    assert r.jobs_dropped == 6
    np.testing.assert_array_equal(w.job_id, [1, 8])
    assert r.to_dict()["jobs_dropped"] == 6
    text = str(r)
    assert "8 job lines, 2 jobs kept, 6 dropped" in text
    assert f"dropped 2: {DROP_RUNTIME}" in text


def test_nothing_dropped_leaves_an_empty_reason_table(swf):
    r = read_swf(swf("; MaxProcs: 4", swf_line(1, 0, 10, 4, estimate=20))).report
    assert dict(r.dropped) == {} and r.jobs_dropped == 0


def test_size_is_field_8_if_positive_else_field_5(swf):
    w = read_swf(
        swf(
            "; MaxProcs: 64",
            swf_line(1, 0, 10, 4, 8),  # requested 8, allocated 4: 8
            swf_line(2, 1, 10, 4, -1),  # no request: allocated 4
            swf_line(3, 2, 10, 6, 0),  # request 0 is no request: 6
            swf_line(4, 3, 10, -1, 2),  # request only: 2
        )
    )
    np.testing.assert_array_equal(w.procs_req, [8, 4, 6, 2])


def test_a_job_that_fits_by_request_is_kept_even_if_its_allocation_does_not(swf):
    w = read_swf(swf("; MaxProcs: 8", swf_line(1, 0, 10, 12, 8)))
    assert len(w) == 1 and w.procs_req[0] == 8


def test_estimate_is_field_9_if_positive_else_the_default(swf):
    path = swf(
        "; MaxProcs: 8",
        swf_line(1, 0, 10, 1, estimate=300),
        swf_line(2, 1, 10, 1, estimate=-1),
        swf_line(3, 2, 10, 1, estimate=0),
        swf_line(4, 3, 10, 1, estimate=900),
    )
    w = read_swf(path)  # default: the largest estimate in the trace
    np.testing.assert_array_equal(w.estimate, [300, 900, 900, 900])
    assert w.report.default_estimates == 2
    assert "2 jobs had no estimate" in str(w.report)
    np.testing.assert_array_equal(read_swf(path, default_estimate=60).estimate, [300, 60, 60, 900])
    with pytest.raises(InvalidConfigError, match="default_estimate"):
        read_swf(path, default_estimate=0)


def test_without_any_estimate_the_default_is_the_longest_runtime(swf):
    w = read_swf(swf("; MaxNodes: 8", swf_line(1, 0, 10, 1), swf_line(2, 1, 70, 1), swf_line(3, 2, 0, 1)))
    np.testing.assert_array_equal(w.estimate, [70, 70, 70])
    assert w.report.default_estimates == 3


def test_jobs_are_sorted_by_submit_time_ties_in_file_order(swf):
    w = read_swf(
        swf(swf_line(1, 50, 1, 1), swf_line(2, 10, 1, 1), swf_line(3, 50, 1, 1), swf_line(4, 10, 1, 1))
    )
    np.testing.assert_array_equal(w.job_id, [2, 4, 1, 3])
    np.testing.assert_array_equal(w.submit, [10, 10, 50, 50])


def test_columns_follow_the_swf_fields(swf):
    fields = [7, 100, 30, 60, 4, 55.5, 1024, 8, 120, 2048, 1, 42, 3, 9, 2, 1, 5, 17]
    w = read_swf(swf("; MaxProcs: 8", " ".join(map(str, fields))))
    assert (w.job_id[0], w.submit[0], w.log_wait[0], w.runtime[0]) == (7, 100, 30, 60)
    assert (w.procs_req[0], w.estimate[0], w.requested_memory[0], w.status[0]) == (8, 120, 2048, 1)
    assert (w.user[0], w.group[0], w.executable[0], w.queue[0], w.partition[0]) == (42, 3, 9, 2, 1)
    np.testing.assert_array_equal(w.raw[0], fields)
    assert len(SWF_FIELDS) == 18


# --------------------------------------------------------------- machine size
@pytest.mark.parametrize(
    ("header", "procs", "source"),
    [
        (["; MaxProcs: 128"], 128, "MaxProcs"),
        (["; MaxNodes: 64"], 64, "MaxNodes"),
        (["; MaxNodes: 64", "; MaxProcs: 256"], 256, "MaxProcs"),
        (["; MaxProcs: 1664 (72, 1368, 224)"], 1664, "MaxProcs"),
        (["; MaxProcs: -1", "; MaxNodes: 32"], 32, "MaxNodes"),
        (["; MaxProcs: 0"], 24, "largest job"),
        (["; Note: no size here"], 24, "largest job"),
        ([], 24, "largest job"),
    ],
)
def test_machine_size_comes_from_the_header_or_the_largest_job(swf, header, procs, source):
    w = read_swf(swf(*header, swf_line(1, 0, 10, 4), swf_line(2, 1, 10, 24), swf_line(3, 2, 10, 2)))
    assert (w.procs, w.report.procs, w.report.procs_source) == (procs, procs, source)
    assert f"{procs} processors (from {source})" in str(w.report)


def test_machine_size_argument_wins_and_drops_larger_jobs(swf):
    path = swf("; MaxProcs: 128", swf_line(1, 0, 10, 4), swf_line(2, 1, 10, 100), swf_line(3, 2, 10, 64))
    w = read_swf(path, procs=64)
    assert (w.procs, w.report.procs_source) == (64, "argument")
    np.testing.assert_array_equal(w.job_id, [1, 3])
    assert dict(w.report.dropped) == {DROP_TOO_LARGE: 1}
    with pytest.raises(InvalidConfigError, match="procs"):
        read_swf(path, procs=0)


def test_the_first_value_of_a_repeated_header_key_wins(swf):
    w = read_swf(
        swf("; MaxProcs: 16", "; MaxProcs: 99", "; Note: first", "; Note: second", swf_line(1, 0, 1, 1))
    )
    assert w.procs == 16 and w.header["Note"] == "first"


def test_a_file_with_no_job_lines_is_an_empty_workload(swf):
    w = read_swf(swf("; MaxProcs: 16", "; nothing else"))
    assert len(w) == 0 and w.procs == 16
    assert (w.report.job_lines, w.report.jobs_kept) == (0, 0)


def test_crlf_line_endings_read_like_lf(tmp_path):
    text = "; MaxProcs: 8\n" + swf_line(1, 0, 10, 2) + "\n" + swf_line(2, 5, 10, 2) + "\n"
    (tmp_path / "lf.swf").write_bytes(text.encode())
    (tmp_path / "crlf.swf").write_bytes(text.replace("\n", "\r\n").encode())
    a, b = read_swf(tmp_path / "lf.swf"), read_swf(tmp_path / "crlf.swf")
    np.testing.assert_array_equal(a.raw, b.raw)


def test_gzipped_and_plain_files_read_the_same(swf):
    lines = ["; MaxProcs: 8", swf_line(1, 0, 10, 2, estimate=30), swf_line(2, 5, 10, 2)]
    plain, gz = read_swf(swf(*lines)), read_swf(swf(*lines, name="t.swf.gz"))
    np.testing.assert_array_equal(plain.raw, gz.raw)
    assert gz.name == plain.name == "t"


# ------------------------------------------------------------ window and load
def test_window_takes_consecutive_jobs_after_an_offset():
    w = load_default()
    sub = w.window(100, offset=50)
    assert len(sub) == 100
    np.testing.assert_array_equal(sub.job_id, w.job_id[50:150])
    np.testing.assert_array_equal(sub.runtime, w.runtime[50:150])
    assert sub.report.offset == 50 and sub.report.jobs_kept == 100
    assert sub.report.job_lines == w.report.job_lines  # the file did not change
    assert len(w.window(offset=len(w) - 3)) == 3
    assert len(w.window(10**9)) == len(w)
    assert w.window(10, 5).window(3, 2).report.offset == 7


@pytest.mark.parametrize(("n", "offset"), [(0, 0), (-1, 0), (5, -1), (5, 10**9)])
def test_window_rejects_empty_or_negative_ranges(n, offset):
    with pytest.raises(InvalidConfigError):
        load_default().window(n, offset)


def test_scale_load_divides_inter_arrival_times(make_workload):
    w = make_workload([(100, 1, 1, 1), (110, 1, 1, 1), (130, 1, 1, 1)], 4)
    twice = w.scale_load(2.0)
    np.testing.assert_array_equal(twice.submit, [100, 105, 115])  # the first submit stays
    np.testing.assert_array_equal(twice.runtime, w.runtime)
    half = w.scale_load(0.5)
    np.testing.assert_array_equal(half.submit, [100, 120, 160])
    assert w.scale_load(1.0) is w
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(InvalidConfigError, match="load factor"):
            w.scale_load(bad)


def test_scale_load_is_recorded_in_the_report():
    w = load_default().window(200).scale_load(1.5).scale_load(2.0)
    assert w.report.load_factor == pytest.approx(3.0)
    assert "load scaled by 3" in str(w.report)


def test_columns_are_read_only():
    w = load_default().window(10)
    with pytest.raises(ValueError, match="read-only"):
        w.submit[0] = 1.0


def test_public_view_hides_what_ran():
    w = load_default().window(50)
    pub = w.public
    assert np.isnan(pub.runtime).all() and np.isnan(pub.log_wait).all()
    assert (pub.raw[:, [2, 3, 5, 6]] == -1).all()
    np.testing.assert_array_equal(pub.estimate, w.estimate)
    np.testing.assert_array_equal(pub.submit, w.submit)
    assert not np.isnan(w.runtime).any()  # the original is untouched


def test_columns_must_have_one_row_per_job(make_workload):
    w = make_workload([(0, 1, 1, 1), (1, 1, 1, 1)], 2)
    with pytest.raises(InvalidConfigError, match="column 'user' has 1 rows, expected 2"):
        dataclasses.replace(w, user=w.user[:1])
    with pytest.raises(InvalidConfigError, match="procs must be positive"):
        dataclasses.replace(w, procs=0)


def test_the_bundled_trace_loads():
    w = load_default()
    assert default_trace_path().name.endswith(".swf.gz")
    assert (w.report.job_lines, w.report.jobs_kept, w.procs) == (10_000, 8_943, 128)
    assert dict(w.report.dropped) == {DROP_RUNTIME: 1_057}
    assert isinstance(w.report, LoadReport)


# ----------------------------------------------------------------- round trip
def assert_same_columns(a: Workload, b: Workload) -> None:
    for name in Workload._COLUMNS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.procs == b.procs


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_write_then_read_gives_the_same_columns(tmp_path, suffix):
    w = load_default()
    path = tmp_path / f"out{suffix}"
    write_swf(path, w)
    assert_same_columns(read_swf(path), w)


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_round_trip_after_window_and_scale_load(tmp_path, suffix):
    w = load_default().window(500, offset=1234).scale_load(1.37)
    path = tmp_path / f"out{suffix}"
    write_swf(path, w)
    back = read_swf(path)
    assert_same_columns(back, w)
    assert back.report.procs_source == "MaxProcs"


def test_a_window_keeps_the_trace_default_estimate(tmp_path, write_swf_text):
    # the full trace's default (largest estimate, 900) differs from the window's (300)
    lines = [swf_line(1, 0, 10, 1, estimate=300), swf_line(2, 1, 10, 1), swf_line(3, 2, 10, 1, estimate=900)]
    w = read_swf(write_swf_text(tmp_path / "t.swf", "\n".join(lines)))
    window = w.window(2)
    write_swf(tmp_path / "w.swf", window)
    back = read_swf(tmp_path / "w.swf")
    np.testing.assert_array_equal(back.estimate, [300, 900])
    assert back.report.default_estimates == 1


def test_gzip_output_is_reproducible(tmp_path):
    w = load_default().window(100)
    write_swf(tmp_path / "a.swf.gz", w)
    write_swf(tmp_path / "b.swf.gz", w)
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()


def test_written_start_times_become_the_wait_field(tmp_path, make_workload):
    w = make_workload([(0, 5, 1, 5), (2, 5, 1, 5)], 1)
    write_swf(tmp_path / "s.swf", w, start=np.array([0.0, 5.0]))
    back = read_swf(tmp_path / "s.swf")
    np.testing.assert_array_equal(back.log_wait, [0, 3])


@settings(max_examples=60)
@given(
    data=st.data(),
    gz=st.booleans(),
    factor=st.sampled_from([1.0, 0.7, 1.3, 3.0]),
    n=st.integers(1, 14),
    offset=st.integers(0, 13),
)
def test_round_trip_of_random_workloads(workload_strategy, data, gz, factor, n, offset):
    w = data.draw(workload_strategy())
    w = w.window(n, min(offset, len(w) - 1)).scale_load(factor)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / ("r.swf.gz" if gz else "r.swf")
        write_swf(path, w)
        back = read_swf(path)
    assert_same_columns(back, w)
    assert back.report.jobs_kept == len(w) and back.report.jobs_dropped == 0


@settings(max_examples=60)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 10**5),  # submit
            st.one_of(st.just(-1), st.integers(0, 10**4)),  # estimate
            st.integers(0, 10**4),  # runtime
            st.integers(1, 32),  # procs
        ),
        min_size=1,
        max_size=12,
    ),
    n=st.integers(1, 12),
)
def test_round_trip_keeps_default_estimates_of_any_window(rows, n):
    lines = [swf_line(i + 1, s, rt, p, estimate=e) for i, (s, e, rt, p) in enumerate(rows)]
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "src.swf"
        src.write_text("; MaxProcs: 32\n" + "\n".join(lines) + "\n")
        w = read_swf(src).window(n)
        write_swf(Path(d) / "out.swf", w)
        back = read_swf(Path(d) / "out.swf")
    assert_same_columns(back, w)
    assert back.report.default_estimates == int((w.raw[:, 8] <= 0).sum())
