"""Malformed SWF input: a TraceFormatError naming the file and the right line, nothing else.

Line numbers count every physical line, comments and blank lines included, as an editor
shows them. Whatever reads is also simulated (FCFS and EASY): a file either gives a clean
result or a clear :class:`~hpcgym.common.errors.HpcGymError`, never a crash further down.
"""

from __future__ import annotations

import gzip
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hpcgym.baselines import run_policy
from hpcgym.common.errors import EmptyWorkloadError, HpcGymError, TraceFormatError, TraceWarning
from hpcgym.workloads import SWF_FIELDS, USED_FIELDS, Workload, read_swf

ID_FIELDS = (0, 11, 13, 14, 15)  # job, user, executable, queue, partition: whole numbers hpcgym uses
UNUSED_FIELDS = tuple(i for i in range(18) if i not in USED_FIELDS)
UNUSED_WHOLE_FIELDS = (10, 12, 16)  # status, group, preceding job


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- valid job lines
missing_or = lambda values: st.one_of(st.just(-1), values)  # noqa: E731
whole = st.integers(0, 10**6)
times = st.one_of(whole, st.integers(0, 10**6).map(lambda x: x / 4))


@st.composite
def valid_fields(draw: st.DrawFn) -> list[float]:
    return [
        draw(st.integers(1, 10**6)),  # 1 job id
        draw(times),  # 2 submit
        draw(missing_or(times)),  # 3 wait
        draw(missing_or(times)),  # 4 run time
        draw(missing_or(st.integers(0, 64))),  # 5 allocated procs
        draw(missing_or(times)),  # 6 cpu time
        draw(missing_or(whole)),  # 7 memory
        draw(missing_or(st.integers(0, 64))),  # 8 requested procs
        draw(missing_or(times)),  # 9 requested time
        *[draw(missing_or(whole)) for _ in range(9)],  # 10-18
    ]


separators = st.sampled_from([" ", "  ", "\t", " \t  "])


@st.composite
def join(draw: st.DrawFn, tokens: list[str]) -> str:
    indent = draw(st.sampled_from(["", " ", "   ", "\t"]))
    return indent + "".join(
        tok + (draw(separators) if i < len(tokens) - 1 else "") for i, tok in enumerate(tokens)
    )


def fmt(value: float) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@st.composite
def valid_lines(draw: st.DrawFn) -> str:
    return draw(join([fmt(v) for v in draw(valid_fields())]))


comment_lines = st.sampled_from(
    ["; Note: a comment", ";", "   ; indented comment", "", "   ", "\t", "; MaxProcs: 64"]
)


# ---------------------------------------------------------------- malformed lines
def _with(fields: list[float], index: int, token: str) -> list[str]:
    tokens = [fmt(v) for v in fields]
    tokens[index] = token
    return tokens


non_numbers = st.text(min_size=1, max_size=6).filter(
    lambda t: not any(c.isspace() for c in t) and not _is_float(t)
)


@st.composite
def malformed_lines(draw: st.DrawFn) -> tuple[str, str]:
    """A job line no SWF file may hold, and what is wrong with it."""
    fields = draw(valid_fields())
    kind = draw(
        st.sampled_from(
            [
                "count",
                "not a number",
                "not finite",
                "below -1",
                "negative submit",
                "fractional id",
                "fractional procs",
            ]
        )
    )
    if kind == "count":
        k = draw(st.one_of(st.integers(1, 17), st.integers(19, 30)))
        tokens = [fmt(v) for v in (fields * 2)[:k]]
    elif kind == "not a number":
        index = draw(st.integers(0, 17))
        token = draw(non_numbers)
        assume(not (index == 0 and token.startswith(";")))  # that would be a comment line
        tokens = _with(fields, index, token)
    elif kind == "not finite":
        token = draw(
            st.sampled_from(["nan", "NaN", "inf", "-inf", "+inf", "Infinity", "-Infinity", "1e999", "-1e400"])
        )
        tokens = _with(fields, draw(st.integers(0, 17)), token)
    elif kind == "below -1":  # in a field hpcgym uses; elsewhere it is a warning
        value = draw(st.floats(-1e12, -1, exclude_max=True))
        tokens = _with(fields, draw(st.sampled_from(USED_FIELDS)), repr(value))
    elif kind == "negative submit":
        value = draw(st.floats(-1, 0, exclude_min=True, exclude_max=True).filter(lambda x: x < 0))
        tokens = _with(fields, 1, repr(value))
    elif kind == "fractional id":  # job, user, executable, queue or partition
        value = draw(st.integers(1, 10**6)) + draw(st.sampled_from([0.5, 0.25, 0.1, 0.999]))
        tokens = _with(fields, draw(st.sampled_from(ID_FIELDS)), repr(value))
    else:
        value = draw(st.integers(0, 64)) + draw(st.sampled_from([0.5, 0.25, 0.1]))
        tokens = _with(fields, draw(st.sampled_from([4, 7])), repr(value))
    return draw(join(tokens)), kind


@st.composite
def swf_files(draw: st.DrawFn, bad_lines: int) -> tuple[list[str], list[int]]:
    """SWF lines with ``bad_lines`` malformed job lines among valid ones; their line numbers."""
    lines: list[str] = draw(st.lists(comment_lines, max_size=4))
    bad_at: list[int] = []
    for _ in range(bad_lines):
        lines += draw(st.lists(st.one_of(valid_lines(), comment_lines), max_size=6))
        bad, _ = draw(malformed_lines())
        lines.append(bad)
        bad_at.append(len(lines))  # 1-based number of the line just added
    lines += draw(st.lists(st.one_of(valid_lines(), comment_lines), max_size=4))
    return lines, bad_at


def _write(lines: list[str], directory: str, gz: bool, newline: str) -> Path:
    path = Path(directory) / ("trace.swf.gz" if gz else "trace.swf")
    data = (newline.join(lines) + newline).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def read_and_simulate(path: Path) -> Workload | None:
    """Read ``path`` and, if it reads, simulate it under FCFS and EASY.

    Returns the workload, or None when the file has no job to simulate (which must then be
    an :class:`EmptyWorkloadError` naming the file). Any other failure of reading or
    simulating fails the test unless it is a :class:`HpcGymError`, which is re-raised.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            w = read_swf(path)
    except EmptyWorkloadError as err:
        assert str(err).startswith(f"{path}: no jobs to simulate: "), err
        return None
    assert len(w) > 0 and w.report is not None
    assert w.report.jobs_kept + w.report.jobs_dropped == w.report.job_lines
    for policy in ("fcfs", "easy"):
        try:
            result = run_policy(w, policy, progress=False)
        except HpcGymError:  # a clear error is acceptable; a crash is not
            continue
        s = result.schedule
        assert np.isfinite(s.start).all() and (s.start >= w.submit).all()
        assert (s.end >= s.start).all() and result.row["jobs_simulated"] == len(w)
        assert 0 <= result.row["utilization"] <= 1 + 1e-9 or not math.isfinite(result.row["utilization"])
    return w


def _expect_error_at(path: Path, line: int) -> TraceFormatError:
    with pytest.raises(TraceFormatError) as info:
        read_swf(path)
    err = info.value
    assert err.line == line, f"error names line {err.line}, the bad line is {line}: {err}"
    assert err.path == str(path)
    assert str(err).startswith(f"{path}:{line}: ")
    return err


@settings(max_examples=150)
@given(
    file=swf_files(bad_lines=1),
    gz=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_a_malformed_line_is_reported_with_its_file_and_line(file, gz, newline):
    lines, (bad,) = file
    with tempfile.TemporaryDirectory() as d:
        _expect_error_at(_write(lines, d, gz, newline), bad)
        # without the bad line the same file reads (or has no job left, a clear error) and simulates
        good = lines[: bad - 1] + lines[bad:]
        read_and_simulate(_write(good, d, gz, newline))


@settings(max_examples=50)
@given(file=swf_files(bad_lines=2))
def test_the_first_of_several_malformed_lines_is_reported(file):
    lines, bad = file
    with tempfile.TemporaryDirectory() as d:
        _expect_error_at(_write(lines, d, False, "\n"), bad[0])


@pytest.mark.parametrize(
    ("field", "token", "what"),
    [
        (3, "1_000", "field 3 (wait) is not a number"),  # Python's float() takes it; SWF has not
        (3, "１２", "is not a number"),  # full-width digits
        (3, "0x10", "is not a number"),
        (3, "1,5", "is not a number"),
        (3, "nan", "field 3 (wait) is not finite"),
        (4, "-2", "field 4 (runtime) is below -1"),
        (9, "-7", "field 9 (requested_time) is below -1"),
        (12, "-4", "field 12 (user) is below -1"),
        (12, "3.7", "field 12 (user) is not a whole number: 3.7"),
        (16, "1.5", "field 16 (partition) is not a whole number"),
        (1, "1e17", "field 1 (job_id) is too large for an identifier"),
        (2, "-0.5", "field 2 (submit) is negative"),
    ],
)
def test_each_kind_of_bad_value_is_named(tmp_path, field, token, what):
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
    tokens = good.split()
    tokens[field - 1] = token
    bad = " ".join(tokens)
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxProcs: 8\n{good}\n\n{bad}\n")
    err = _expect_error_at(path, 4)
    assert what in str(err)


@pytest.mark.parametrize(("field", "token"), [(11, "-4"), (3, "-2"), (13, "3.7"), (17, "-9"), (18, "-2.5")])
def test_an_odd_value_in_an_unused_field_is_a_warning_not_an_error(tmp_path, field, token):
    # a real archive trace had a status of -4 on one line and was rejected whole
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
    tokens = good.split()
    tokens[field - 1] = token
    path = tmp_path / "t.swf"
    odd = [" ".join([str(k), *tokens[1:]]) for k in (2, 3)]  # each job its own id
    path.write_text(f"; MaxProcs: 8\n{good}\n{odd[0]}\n{odd[1]}\n")
    with pytest.warns(TraceWarning) as caught:
        w = read_swf(path)
    assert len(caught) == 1, "one warning per file"
    assert len(w) == 3
    (warning,) = w.report.warnings
    name = SWF_FIELDS[field - 1]
    assert f"2 job lines with field {field} ({name})" in warning and "(first: line 3)" in warning
    assert warning in str(caught[0].message) and f"warning: {warning}" in str(w.report)


@settings(max_examples=60)
@given(
    file=swf_files(bad_lines=0),
    odd=st.lists(
        st.tuples(
            st.sampled_from(UNUSED_FIELDS),
            st.one_of(
                st.floats(-1e9, -1, exclude_max=True),
                st.integers(-(10**6), 10**6).map(lambda x: x + 0.5),
            ),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_odd_values_in_unused_fields_are_counted_and_never_fatal(file, odd):
    lines, _ = file
    job_at = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(";")]
    assume(job_at)
    lines = list(lines)
    changed: dict[int, set[int]] = {}
    for k, (field, value) in enumerate(odd):
        at = job_at[k % len(job_at)]
        tokens = lines[at].split()
        tokens[field] = repr(float(value))
        lines[at] = " ".join(tokens)
        changed.setdefault(field, set()).add(at)
    with tempfile.TemporaryDirectory() as d:
        path = _write(lines, d, False, "\n")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                w = read_swf(path)
            except EmptyWorkloadError:
                return  # every job dropped for another reason (a size of 0, a run time of -1)
        odd_warnings = [x for x in w.report.warnings if "hpcgym does not use this field" in x]
        flagged = {int(x.split("field ")[1].split()[0]) - 1 for x in odd_warnings}
        for field, rows in changed.items():
            values = [float(lines[r].split()[field]) for r in rows]
            odd_here = any(v < -1 for v in values) or (
                field in UNUSED_WHOLE_FIELDS and any(v != int(v) for v in values)
            )
            assert (field in flagged) == odd_here, (field, values, w.report.warnings)
        assert sum(issubclass(x.category, TraceWarning) for x in caught) <= 1


def test_a_trailing_hash_comment_is_a_wrong_field_count(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1 # not SWF\n")
    assert "expected 18 fields, found 21" in str(_expect_error_at(path, 1))


@pytest.mark.filterwarnings("ignore::hpcgym.common.errors.TraceWarning")  # no MaxProcs: a guessed size
@pytest.mark.parametrize("space", ["\x0c", "\x0b", "\x1c", "\u2028", "\x85"])
def test_unusual_whitespace_does_not_shift_line_numbers(tmp_path, space):
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
    odd = good.replace(" ", space, 3)  # str.splitlines() would break this line in two
    second = "2" + good[1:]  # its own job id
    bad = good + " 7"
    path = tmp_path / "t.swf"
    path.write_text(f"; c\n{odd}\n{second}\n{bad}\n", encoding="utf-8")
    _expect_error_at(path, 4)
    path.write_text(f"; c\n{odd}\n{second}\n", encoding="utf-8")
    assert len(read_swf(path)) == 2


def test_old_mac_line_endings_count_as_lines(tmp_path):
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
    path = tmp_path / "t.swf"
    path.write_bytes(f"; c\r{good}\r{good} 1\r".encode())
    _expect_error_at(path, 3)


def test_a_corrupt_gzip_file_is_a_trace_format_error(tmp_path):
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n" * 50
    data = gzip.compress(good.encode())
    path = tmp_path / "t.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match=r"t\.swf\.gz: "):
        read_swf(path)
    path.write_bytes(data[:10] + b"\x00" * 40 + data[50:])
    with pytest.raises(TraceFormatError):
        read_swf(path)


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_swf(tmp_path / "absent.swf")


swf_alphabet = st.sampled_from([*"0123456789 .-+e\t;:\n\r", "nan", "inf", "MaxProcs", "x", "\x0c", "é"])


@settings(max_examples=300)
@given(text=st.lists(swf_alphabet, max_size=200).map("".join))
@example(text="1 " * 18)
@example(text="; MaxProcs: 4\n" + "1 " * 17 + "1.5")
def test_arbitrary_text_reads_and_simulates_or_raises_a_clear_error(text):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.swf"
        path.write_bytes(text.encode("utf-8"))
        try:
            read_and_simulate(path)
        except TraceFormatError as err:
            n_lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
            assert err.line is not None and 1 <= err.line <= n_lines


@settings(max_examples=200)
@given(data=st.binary(max_size=300))
@example(data=b"")
@example(data=b"; MaxProcs: 8\n")
@example(data=b"1 0 5 -1 2 -1 -1 2 20 -1 5 1 1 1 1 1 -1 -1\n")  # all cancelled
def test_arbitrary_bytes_read_and_simulate_or_raise_a_clear_error(data):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.swf"
        path.write_bytes(data)
        try:
            read_and_simulate(path)
        except TraceFormatError as err:
            assert err.path == str(path)


@settings(max_examples=150)
@given(file=swf_files(bad_lines=0), gz=st.booleans())
@example(file=([], []), gz=False)  # an empty file
@example(file=(["; MaxProcs: 64", "; Note: header only"], []), gz=False)
@example(file=(["1 0 -1 -1 4 -1 -1 4 60 -1 5 1 1 1 1 1 -1 -1"] * 3, []), gz=True)  # all cancelled
def test_every_valid_file_simulates_or_says_it_has_no_jobs(file, gz):
    lines, _ = file
    with tempfile.TemporaryDirectory() as d:
        path = _write(lines, d, gz, "\n")
        w = read_and_simulate(path)
        n_job_lines = sum(1 for x in lines if x.strip() and not x.lstrip().startswith(";"))
        if w is None:  # then no job line was usable
            with pytest.raises(EmptyWorkloadError, match="no jobs to simulate") as info:
                read_swf(path)
            assert ("no job lines" in str(info.value)) == (n_job_lines == 0)
