"""Reading an SWF file a piece at a time gives what reading it whole gave.

:func:`~hpcgym.workloads.read_swf` never holds a trace's text whole: it reads lines with
:func:`~hpcgym.common.files.text_lines` and parses :data:`_PIECE_LINES` job lines at a
time. These tests shrink the pieces to a few lines so that piece boundaries fall
everywhere, and check the columns, the error for the first malformed line and a damaged
gzip file against the whole-file reading.
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from hpcgym.common.errors import TraceFormatError
from hpcgym.common.files import read_text, text_lines
from hpcgym.workloads import read_swf, write_swf
from hpcgym.workloads import swf as swf_module

GOOD = "{i} {t} 5 10 2 -1 -1 2 20 -1 1 {u} 1 1 1 1 -1 -1"


def _lines(n: int) -> list[str]:
    # submit times out of order (ties too), comments and blank lines among the jobs
    out = ["; MaxProcs: 8", "; Note: a header", ""]
    for i in range(1, n + 1):
        out.append(GOOD.format(i=i, t=(7 * i) % 5, u=i % 3))
        if i % 4 == 0:
            out += ["; a comment", "   "]
    return out


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"a",
        b"a\r\nb\rc\n\r",
        b"\xef\xbb\xbf; MaxProcs: 4\nx",
        "x\u2028y\x0cz\n".encode(),
        b"\xff\xfe not utf-8\n\n",
        b"x" * 8191 + b"\r\n" + b"y" * 9000 + b"\r",  # a \r\n across the reader's 8 KiB blocks
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_text_lines_are_the_lines_of_the_whole_text(tmp_path, data, gz):
    path = tmp_path / ("t.swf.gz" if gz else "t.swf")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert list(text_lines(path, str(path))) == read_text(path, str(path)).split("\n")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_small_pieces_read_the_same_workload(tmp_path, monkeypatch, newline):
    path = tmp_path / "t.swf"
    path.write_text(newline.join(_lines(23)) + newline)
    whole = read_swf(path)
    monkeypatch.setattr(swf_module, "_PIECE_LINES", 3)
    pieces = read_swf(path)
    for column in whole._COLUMNS:
        np.testing.assert_array_equal(getattr(pieces, column), getattr(whole, column), err_msg=column)
    assert pieces.header == whole.header == {"MaxProcs": "8", "Note": "a header"}
    assert pieces.report == whole.report


def _expect_line(path: Path, line: int) -> None:
    with pytest.raises(TraceFormatError, match=rf"^{path}:{line}: "):
        read_swf(path)


def test_the_first_malformed_line_is_named_across_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_module, "_PIECE_LINES", 3)
    lines = _lines(20)
    jobs = [k for k, line in enumerate(lines) if line[:1].isdigit()]
    lines[jobs[4]] = lines[jobs[4]].replace(" 20 ", " -5 ", 1)  # a bad value in the second piece
    lines[jobs[13]] += " 1"  # a wrong field count in the fifth, which the fast parser fails on
    path = tmp_path / "t.swf"
    path.write_text("\n".join(lines) + "\n")
    _expect_line(path, jobs[4] + 1)
    lines[jobs[4]] = lines[jobs[4]].replace(" -5 ", " 20 ", 1)
    path.write_text("\n".join(lines) + "\n")
    _expect_line(path, jobs[13] + 1)


def test_a_damaged_gzip_end_is_reported_before_an_early_bad_line(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_module, "_PIECE_LINES", 3)
    lines = _lines(400)
    lines[5] += " 1"
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    path = tmp_path / "t.swf.gz"
    path.write_bytes(data[: len(data) - 12])  # the last block and the trailer cut off
    with pytest.raises(TraceFormatError, match="not a readable gzip file"):
        read_swf(path)


def _cancel(line: str) -> str:
    return line.replace(" 5 10 ", " 5 -1 ", 1)  # run time -1: dropped


@pytest.mark.parametrize("in_order", [True, False])
def test_dropped_jobs_leave_the_same_columns_as_lines_never_there(tmp_path, monkeypatch, in_order):
    # kept rows are moved up in place when the file is in submit order, copied otherwise
    monkeypatch.setattr(swf_module, "_PIECE_LINES", 3)
    lines = [GOOD.format(i=i, t=i if in_order else (7 * i) % 5, u=i % 3) for i in range(1, 30)]
    cancelled = {0, 4, 5, 6, 17, 28}
    with_drops = [_cancel(line) if k in cancelled else line for k, line in enumerate(lines)]
    without = ["; gone" if k in cancelled else line for k, line in enumerate(lines)]
    (tmp_path / "a.swf").write_text("\n".join(with_drops) + "\n")
    (tmp_path / "b.swf").write_text("\n".join(without) + "\n")
    a, b = read_swf(tmp_path / "a.swf", procs=8), read_swf(tmp_path / "b.swf", procs=8)
    assert a.report.dropped == {"runtime < 0 (cancelled before start)": len(cancelled)}
    for column in a._COLUMNS:
        np.testing.assert_array_equal(getattr(a, column), getattr(b, column), err_msg=column)


@pytest.mark.parametrize(
    ("odd", "compacted"),
    [
        (None, True),
        ("status 1.5", False),  # a fractional status (kept, with a warning): its column is truncated
        ("job id -0", False),  # -0 reads back as 0 from the whole-number column
    ],
)
@pytest.mark.filterwarnings("ignore::hpcgym.common.errors.TraceWarning")
def test_raw_fields_the_columns_hold_are_not_kept_twice(tmp_path, odd, compacted):
    lines = [GOOD.format(i=i, t=i, u=i % 3).replace(" 20 -1 1 ", f" 20 {i * 1.5} 1 ", 1) for i in range(1, 9)]
    lines[2] = lines[2].replace("-1 -1", "2 30.5")  # preceding job and think time
    if odd == "status 1.5":
        lines[4] = lines[4].replace(" 20 7.5 1 ", " 20 7.5 1.5 ", 1)
    if odd == "job id -0":
        lines[0] = "-0" + lines[0][1:]
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n" + "\n".join(lines) + "\n")
    w = read_swf(path)
    assert ("raw" not in vars(w)) == compacted
    file_rows = np.loadtxt(path, comments=";", ndmin=2)
    twin = pickle.loads(pickle.dumps(w))
    public = w.public  # made from the kept fields, before the workload's own raw is made
    np.testing.assert_array_equal(twin.raw, file_rows)
    assert np.array_equal(w.raw.view(np.int64), file_rows.view(np.int64))  # bit for bit (a -0 stays -0)
    assert not w.raw.flags.writeable and "_raw_rest" not in vars(w)
    hidden = file_rows.copy()
    hidden[:, [2, 3, 5, 6]] = -1
    np.testing.assert_array_equal(public.raw, hidden)
    np.testing.assert_array_equal(w.window(3, 2).raw, file_rows[2:5])
    write_swf(tmp_path / "back.swf", w)
    np.testing.assert_array_equal(read_swf(tmp_path / "back.swf").raw, file_rows)
