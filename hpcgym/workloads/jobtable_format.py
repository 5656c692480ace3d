"""The job table format: its columns and file types, and its cells as read from a file.

:func:`_read_csv` and :func:`_read_parquet` read a job table's cells as they are
(a :class:`_Table`); the conversions below turn a column of cells into numbers, submit
times, identifiers or requests, and a malformed cell into an error naming the file, the
line (CSV), the row and the column. What the columns mean, and the rules that make jobs
of them: :mod:`hpcgym.workloads.jobtable`.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import difflib
import io
import json
import math
import numbers
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError
from hpcgym.common.extras import _pyarrow_parquet
from hpcgym.common.files import first_control_line, read_text
from hpcgym.machine import parse_select
from hpcgym.workloads.workload import _EXACT

COLUMNS = (
    "job_id",
    "submit",
    "runtime",
    "walltime",
    "user",
    "group",
    "job_name",
    "queue",
    "partition",
    "chunks",
    "cores",
    "gpus",
    "mics",
    "mem_gb",
    "select",
    "status",
    "wait",
    "used_mem_kb",
)
"""Every column a job table may have, in the order :func:`~hpcgym.workloads.write_jobs` writes them."""

LOG_COLUMNS = {"wait": 2, "used_mem_kb": 6}
"""Columns of what the logging system recorded, and the SWF field (0-based) each keeps: the
wait (field 3) and the average memory used per processor in KB (field 7). A blank cell is
SWF's -1 (unknown); :func:`~hpcgym.workloads.write_jobs` writes a column only if some job has
a value."""

REQUEST_COLUMNS = ("cores", "gpus", "mics", "mem_gb")
"""The per-chunk amount columns, and the first resources of every workload read."""

NAME_COLUMNS = {
    "user": "user",
    "group": "group",
    "job_name": "executable",
    "queue": "queue",
    "partition": "partition",
}
"""Identifier columns of a job table and the :class:`~hpcgym.workloads.Workload` column each fills."""

TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")
"""File types :func:`~hpcgym.workloads.read_jobs` and :func:`~hpcgym.workloads.write_jobs` know, by suffix."""

_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE_RE = re.compile(r"[+-]?[0-9]+")
_HEADER_RE = re.compile(r"^#\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")


def commented_header(lines: list[str]) -> tuple[dict[str, str], int]:
    """The ``# Key: value`` lines (and blank lines) before a table's first row.

    Returns:
        The keys and values (the first of a repeated key wins) and the index of the first
        line that is neither blank nor a comment: the table's header row.
    """
    header: dict[str, str] = {}
    first = 0
    while first < len(lines) and (not lines[first].strip() or lines[first].lstrip().startswith("#")):
        m = _HEADER_RE.match(lines[first].strip())
        if m and m.group(1) not in header:
            header[m.group(1)] = m.group(2)
        first += 1
    return header, first


def is_job_table(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a job table (:data:`TABLE_SUFFIXES`), by its suffix."""
    return str(path).lower().endswith(TABLE_SUFFIXES)


def _check_suffix(path: str | os.PathLike[str], what: str) -> None:
    if not is_job_table(path):
        raise InvalidConfigError(
            f"{what} {os.fspath(path)}: unknown file type; a job table ends in {', '.join(TABLE_SUFFIXES)}"
        )


# ------------------------------------------------------------------ reading: cells
@dataclasses.dataclass
class _Table:
    """The cells of a job table as read, one list per column, before any conversion."""

    path: str
    columns: dict[str, list[Any]]
    lines: list[int] | None  # CSV: the file line of each data row; Parquet: None
    header: dict[str, str]
    n: int

    def error(self, row: int, column: str, message: str) -> TraceFormatError:
        """An error naming the file, line (CSV) and row, and the column."""
        line = self.lines[row] if self.lines is not None else None
        return TraceFormatError(self.path, line, f"row {row + 1}, column {column!r}: {message}")

    def where(self, row: int) -> str:
        """A row, as a user finds it: ``line 7`` (CSV) or ``row 6`` (Parquet)."""
        return f"line {self.lines[row]}" if self.lines is not None else f"row {row + 1}"


def _header_names(path: str, names: Sequence[str], line: int | None) -> list[str]:
    """The column names, lower case; unknown and repeated names are errors."""
    out = [str(name).strip().lower() for name in names]
    for name in out:
        if name not in COLUMNS:
            close = difflib.get_close_matches(name, COLUMNS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise TraceFormatError(
                path, line, f"unknown column {name!r}; {hint}a job table has columns {', '.join(COLUMNS)}"
            )
        if out.count(name) > 1:
            raise TraceFormatError(path, line, f"column {name!r} appears more than once")
    return out


def header_row(path: Path, name: str, names: str) -> tuple[list[str], dict[str, str], int]:
    """The file's lines, its ``# Key: value`` header (:func:`commented_header`) and the index of
    its header row.

    Raises:
        EmptyWorkloadError: no header row; the message says what it should hold (``names``),
            or which line holds only control characters.
    """
    lines = read_text(path, name).split("\n")
    header, first = commented_header(lines)
    if first == len(lines):
        control = first_control_line(lines)
        if control:
            raise EmptyWorkloadError(f"{name}: no jobs: the file has no header row ({control})")
        raise EmptyWorkloadError(f"{name}: no jobs: the file has no header row ({names})")
    return lines, header, first


def _read_csv(path: Path, name: str) -> _Table:
    lines, header, first = header_row(path, name, "the column names")
    reader = csv.reader(io.StringIO("\n".join(lines[first:])))
    names = _header_names(name, next(reader), first + 1)
    columns: dict[str, list[Any]] = {c: [] for c in names}
    cells = [columns[c] for c in names]
    line_of: list[int] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            line = first + reader.line_num
            if len(row) != len(names):
                raise TraceFormatError(
                    name,
                    line,
                    f"expected {len(names)} fields (one per column of the header), found {len(row)}",
                )
            for values, cell in zip(cells, row, strict=True):
                values.append(cell)
            line_of.append(line)
    except csv.Error as err:
        raise TraceFormatError(name, first + reader.line_num, f"not valid CSV: {err}") from err
    return _Table(name, columns, line_of, header, len(line_of))


def _read_parquet(path: Path, name: str) -> _Table:
    pq = _pyarrow_parquet(f"reading {name}")
    try:
        table = pq.read_table(path)
    except Exception as err:  # pyarrow raises its own error types for a damaged file
        raise TraceFormatError(name, None, f"not a readable Parquet file ({err})") from err
    names = _header_names(name, table.column_names, None)
    meta = table.schema.metadata or {}
    header: dict[str, str] = {}
    if b"hpcgym.header" in meta:
        try:
            header = {str(k): str(v) for k, v in json.loads(meta[b"hpcgym.header"]).items()}
        except (ValueError, AttributeError) as err:
            raise TraceFormatError(
                name, None, f"metadata hpcgym.header is not a JSON object ({err})"
            ) from err
    columns = {c: table.column(i).to_pylist() for i, c in enumerate(names)}
    return _Table(name, columns, None, header, table.num_rows)


# ------------------------------------------------------------ reading: conversions
def _blank(cell: Any) -> bool:
    if cell is None:
        return True
    if isinstance(cell, str):
        return not cell.strip()
    return isinstance(cell, float) and math.isnan(cell)  # Parquet writers' "missing"


def _numbers(t: _Table, column: str, *, whole: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A column as float64 and its blank mask; the error names the first bad cell.

    Every number, whole or not, must be below 2**53 in size (the bound of ``chunks``), so
    that it converts to int64 and back exactly: ``mem_gb = 1e20`` is an error naming its
    row, not an overflow that keeps the job with a wrapped request.
    """
    values = np.full(t.n, np.nan)
    blank = np.ones(t.n, dtype=bool)
    cells = t.columns.get(column)
    if cells is None:
        return values, blank
    what = "a whole number" if whole else "a number"
    for r, cell in enumerate(cells):
        if _blank(cell):
            continue
        if isinstance(cell, str):
            s = cell.strip()
            if not _NUMBER_RE.fullmatch(s):
                raise t.error(r, column, f"{s!r} is not {what}")
            v = float(s)
        elif isinstance(cell, numbers.Real) and not isinstance(cell, bool):
            v = float(cell)
        else:
            raise t.error(r, column, f"{cell!r} is not {what}")
        if not math.isfinite(v):
            raise t.error(r, column, f"{cell!r} is not a finite number")
        if whole and v != math.floor(v):
            raise t.error(r, column, f"{cell!r} is not {what}")
        if abs(v) >= _EXACT:
            raise t.error(r, column, f"{cell!r} is too large: numbers must be below 2**53 ({_EXACT:,.0f})")
        values[r] = v
        blank[r] = False
    return values, blank


def _first(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _submit_times(t: _Table, header: dict[str, str]) -> np.ndarray:
    """Submit times in seconds: numbers as given, ISO-8601 date-times from the earliest one."""
    cells = t.columns["submit"]
    kinds = np.zeros(t.n, dtype=np.int64)  # 1: number, 2: date-time
    seconds = np.zeros(t.n)
    stamps: list[dt.datetime | None] = [None] * t.n
    for r, cell in enumerate(cells):
        if _blank(cell):
            raise t.error(r, "submit", "is blank; every job needs a submit time")
        if isinstance(cell, dt.datetime):
            stamps[r], kinds[r] = cell, 2
        elif isinstance(cell, numbers.Real) and not isinstance(cell, bool):
            seconds[r], kinds[r] = float(cell), 1
        elif isinstance(cell, str):
            s = cell.strip()
            if _NUMBER_RE.fullmatch(s):
                seconds[r], kinds[r] = float(s), 1
            else:
                try:
                    stamps[r] = dt.datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith("Z") else s)
                except ValueError:
                    raise t.error(
                        r,
                        "submit",
                        f"{s!r} is neither seconds nor an ISO-8601 date-time (2014-03-01T09:30:00)",
                    ) from None
                kinds[r] = 2
        else:
            raise t.error(r, "submit", f"{cell!r} is neither seconds nor a date-time")
    if t.n and (kinds != kinds[0]).any():
        r = _first(kinds != kinds[0])
        raise t.error(r, "submit", "mixes seconds and date-times; write every submit time the same way")
    if t.n and kinds[0] == 2:
        utc = [s if s.tzinfo is not None else s.replace(tzinfo=dt.timezone.utc) for s in stamps if s]
        epoch = np.array([s.timestamp() for s in utc])
        start = math.floor(epoch.min())
        header["UnixStartTime"] = str(start)
        return epoch - start  # type: ignore[no-any-return]
    bad = ~np.isfinite(seconds) | (seconds < 0)
    if bad.any():
        r = _first(bad)
        raise t.error(r, "submit", f"{cells[r]!r} is not a time: seconds must be finite and >= 0")
    if (seconds >= _EXACT).any():
        r = _first(seconds >= _EXACT)
        raise t.error(r, "submit", f"{cells[r]!r} is too large: numbers must be below 2**53 ({_EXACT:,.0f})")
    return seconds


def _identifiers(t: _Table, column: str) -> tuple[list[str] | None, np.ndarray]:
    """An identifier column: ``(None, ids)`` if every value is a whole number, else ``(names, -1)``.

    Names are the stripped strings ("" for blank); they get codes later, once the rows
    kept and their order are known.
    """
    cells = t.columns.get(column)
    ids = np.full(t.n, -1, dtype=np.int64)
    if cells is None:
        return None, ids
    texts = [_identifier_text(c) for c in cells]
    numeric = all((not s) or (_WHOLE_RE.fullmatch(s) is not None and abs(int(s)) < _EXACT) for s in texts)
    if numeric:
        for r, s in enumerate(texts):
            if s:
                ids[r] = int(s)
        return None, ids
    return texts, ids


def _identifier_text(cell: Any) -> str:
    if _blank(cell):
        return ""
    if isinstance(cell, float) and cell == math.floor(cell) and abs(cell) < _EXACT:
        return str(int(cell))  # a Parquet id column with blanks comes as floats
    return str(cell).strip()


def _requests(t: _Table) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], int]:
    """``(chunks, per_chunk, resources, memory rounded up)`` from the per-chunk and select columns."""
    if "select" not in t.columns and not any(c in t.columns for c in REQUEST_COLUMNS):
        raise TraceFormatError(
            t.path,
            None,
            "no request: a job table needs a select column or per-chunk columns "
            f"({', '.join(REQUEST_COLUMNS)})",
        )
    chunks, chunks_blank = _numbers(t, "chunks", whole=True)
    if (chunks < 0).any():
        r = _first(chunks < 0)
        raise t.error(r, "chunks", f"{t.columns['chunks'][r]!r} is negative; chunks are >= 1")
    amounts: dict[str, np.ndarray] = {}
    blanks: dict[str, np.ndarray] = {}
    rounded = 0
    for c in REQUEST_COLUMNS:
        values, blank = _numbers(t, c, whole=c != "mem_gb")
        if (values < 0).any():
            r = _first(values < 0)
            raise t.error(r, c, f"{t.columns[c][r]!r} is negative; amounts are >= 0")
        if c == "mem_gb":
            up = np.ceil(values)
            rounded = int((~blank & (up != values)).sum())
            values = up
        amounts[c], blanks[c] = values, blank
    resources = list(REQUEST_COLUMNS)
    selected: dict[int, tuple[int, dict[str, int]]] = {}
    for r, cell in enumerate(t.columns.get("select", ())):
        if _blank(cell):
            continue
        try:
            selected[r] = parse_select(str(cell))
        except InvalidConfigError as err:
            raise t.error(r, "select", str(err)) from None
        for res in selected[r][1]:
            if res not in resources:
                resources.append(res)
    per = np.zeros((t.n, len(resources)), dtype=np.int64)
    for k, c in enumerate(REQUEST_COLUMNS):
        per[:, k] = np.where(blanks[c], 0, amounts[c]).astype(np.int64)
    out_chunks = np.where(chunks_blank, 1, chunks).astype(np.int64)
    for r, (n_chunks, asks) in selected.items():
        if not chunks_blank[r] and int(chunks[r]) != n_chunks:
            raise t.error(
                r, "chunks", f"{int(chunks[r])} disagrees with select {t.columns['select'][r]!r} ({n_chunks})"
            )
        for c in REQUEST_COLUMNS:
            if not blanks[c][r] and int(amounts[c][r]) != asks.get(c, 0):
                raise t.error(
                    r,
                    c,
                    f"{int(amounts[c][r])} disagrees with select {t.columns['select'][r]!r} "
                    f"({c}={asks.get(c, 0)}); give one or make them agree",
                )
        out_chunks[r] = n_chunks
        per[r] = [asks.get(res, 0) for res in resources]
    return out_chunks, per, tuple(resources), rounded
