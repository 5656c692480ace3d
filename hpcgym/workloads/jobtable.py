"""Job tables: heterogeneous workloads as CSV or Parquet (schema in ``docs/WORKLOADS.md``).

A job table has one row per job and named columns: when it was submitted, how long it
ran, the wall-time its user asked for, who submitted it, to which queue, and what it
asks for, PBS style: ``chunks`` x a per-chunk vector of ``cores, gpus, mics, mem_gb``
(or a ``select`` statement such as ``2:ncpus=8:ngpus=2:mem=8gb``). :func:`read_jobs`
reads one into a :class:`~hpcgym.workloads.Workload` with the same rules as the SWF
reader: malformed values are errors naming the file, the line (row) and the column;
jobs that can never run (cancelled before they started, a queue the machine lacks, a
chunk no node holds, more chunks than the machine holds) are dropped and counted by
reason in the :class:`~hpcgym.workloads.LoadReport`, never silently. :func:`write_jobs`
writes a workload back; reading what it wrote gives the same workload.

Columns (all but ``submit``, ``runtime`` and a request are optional; a blank cell takes
the default):

=============  =======================================================================
column         meaning (default when blank or absent)
=============  =======================================================================
job_id         whole number (the row's position among the data rows, from 1)
submit         seconds (>= 0), or ISO-8601 date-times, all rows alike (required)
runtime        seconds the job ran; < 0 means it never ran: dropped (required)
walltime       seconds the user asked for, > 0 (the queue's maximum wall-time on the
               machine, else ``default_estimate``, else the largest in the file)
user, group,   names or whole-number ids (none: code -1); names become codes with a
job_name,      name table (``Workload.names``); a column of whole numbers only is
queue,         kept as numeric ids, as in SWF
partition
chunks         whole number >= 1 (1); 0 asks for nothing: dropped
cores, gpus,   whole amounts per chunk (0); ``mem_gb`` in GB, fractions rounded up
mics, mem_gb
select         PBS select statement instead of the per-chunk columns; where both are
               given they must agree
status         whole number, SWF's meaning (-1: unknown)
=============  =======================================================================

Lines of a CSV file before the header row that start with ``#`` are comments; those of
the form ``# Key: value`` are kept in ``Workload.header``. Two keys mean something:
``Machine`` (a preset name, e.g. ``eurora``: the machine to read the jobs for when no
machine is given) and ``MaxProcs`` (the machine size in processors when no machine is
known). Parquet files keep the same keys in their schema metadata.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import difflib
import gzip
import io
import json
import math
import numbers
import os
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import (
    EmptyWorkloadError,
    InvalidConfigError,
    MissingExtraError,
    TraceFormatError,
    UnknownNameError,
)
from hpcgym.machine import (
    PBS_NAMES,
    UNPLACEABLE_REASONS,
    Machine,
    align_requests,
    machine_specs,
    make_machine,
    parse_select,
)
from hpcgym.workloads.swf import DROP_NO_RESOURCE, DROP_RUNTIME, MAX_PROCS, LoadReport, Workload, check_procs

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
)
"""Every column a job table may have, in the order :func:`write_jobs` writes them."""

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
"""File types :func:`read_jobs` and :func:`write_jobs` know, by suffix."""

DROP_NO_REQUEST = "asks for no resource (0 chunks or all amounts 0)"
DROP_QUEUE = "queue not on the machine"
DROP_CHUNK = UNPLACEABLE_REASONS[2]
DROP_CHUNKS = UNPLACEABLE_REASONS[3]
_ALIGN_DROPS = {1: DROP_NO_RESOURCE, 2: DROP_CHUNK, 3: DROP_CHUNKS}

_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE_RE = re.compile(r"[+-]?[0-9]+")
_HEADER_RE = re.compile(r"^#\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_EXACT = 2.0**53
_PBS_OF = {resource: pbs for pbs, resource in PBS_NAMES.items()}


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


def _open_bytes(path: Path, name: str) -> bytes:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise TraceFormatError(name, None, f"not a readable gzip file ({err})") from err
    return data


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


def _read_csv(path: Path, name: str) -> _Table:
    text = io.TextIOWrapper(io.BytesIO(_open_bytes(path, name)), encoding="utf-8-sig", errors="replace")
    lines = text.read().split("\n")
    header: dict[str, str] = {}
    first = 0
    while first < len(lines) and (not lines[first].strip() or lines[first].lstrip().startswith("#")):
        m = _HEADER_RE.match(lines[first].strip())
        if m and m.group(1) not in header:
            header[m.group(1)] = m.group(2)
        first += 1
    if first == len(lines):
        raise EmptyWorkloadError(f"{name}: no jobs: the file has no header row (the column names)")
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


def _pyarrow_parquet(what: str) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(
            f"{what} needs pyarrow, which is not installed: pip install 'hpcgym[parquet]'"
        ) from None
    return pq


# ------------------------------------------------------------ reading: conversions
def _blank(cell: Any) -> bool:
    if cell is None:
        return True
    if isinstance(cell, str):
        return not cell.strip()
    return isinstance(cell, float) and math.isnan(cell)  # Parquet writers' "missing"


def _numbers(t: _Table, column: str, *, whole: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A column as float64 and its blank mask; the error names the first bad cell."""
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
        if whole and (v != math.floor(v) or abs(v) >= _EXACT):
            raise t.error(r, column, f"{cell!r} is not {what}")
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


# ------------------------------------------------------------------ reading
def read_jobs(
    path: str | os.PathLike[str],
    machine: Machine | str | os.PathLike[str] | None = None,
    *,
    procs: int | None = None,
    default_estimate: float | None = None,
) -> Workload:
    """Read a job table (CSV, gzipped CSV or Parquet) into a :class:`~hpcgym.workloads.Workload`.

    Args:
        path: the file (``.csv``, ``.csv.gz`` or ``.parquet``).
        machine: the machine to read the jobs for (a :class:`~hpcgym.machine.Machine`,
            a preset name or a TOML file); by default the preset the file's ``Machine``
            header names, if any. With a machine, jobs it can never run are dropped and
            counted (a queue it lacks, a resource it lacks, a chunk no node holds, more
            chunks than it holds), jobs without a wall-time get their queue's maximum,
            and the workload is attached to it (``workload.machine``).
        procs: the machine size in processors when there is no machine (default: the
            ``MaxProcs`` header, else the largest job, with a warning in the report).
        default_estimate: wall-time in seconds of jobs without one; by default their
            queue's maximum wall-time on the machine, else the largest wall-time in the
            file, else the longest run time. The report says which, and how many.

    Returns:
        The workload, sorted by submit time (rows with equal submit times keep their
        order; the report notes it if the file was not sorted). ``workload.report`` is
        its :class:`~hpcgym.workloads.LoadReport`.

    Raises:
        TraceFormatError: a malformed value or line; the message names the file, the
            line (CSV), the row and the column.
        EmptyWorkloadError: no job left to simulate.
        MissingExtraError: a Parquet file without pyarrow installed.
        InvalidConfigError: ``procs`` or ``default_estimate`` out of range, or an
            unknown file type.
        UnknownNameError: the ``Machine`` header names no preset.
    """
    _check_suffix(path, "job table")
    p = Path(path)
    spath = os.fspath(path)
    if procs is not None:
        procs = check_procs(procs)
    if default_estimate is not None:
        number = default_estimate if isinstance(default_estimate, numbers.Real) else math.nan
        if isinstance(default_estimate, bool) or not (math.isfinite(number) and number > 0):
            raise InvalidConfigError(
                f"default_estimate must be a positive number of seconds, got {default_estimate!r}"
            )
        default_estimate = float(number)
    t = _read_parquet(p, spath) if spath.lower().endswith(".parquet") else _read_csv(p, spath)
    header = dict(t.header)
    for required in ("submit", "runtime"):
        if required not in t.columns:
            raise TraceFormatError(
                spath, None, f"no {required!r} column; every job table needs submit and runtime"
            )
    if t.n == 0:
        raise EmptyWorkloadError(f"{spath}: no jobs to simulate: the table has no rows")
    m, machine_source = _machine(machine, header, spath)

    # values: malformed ones are errors here
    submit = _submit_times(t, header)
    runtime, runtime_blank = _numbers(t, "runtime")
    if runtime_blank.any():
        raise t.error(
            _first(runtime_blank), "runtime", "is blank; every job needs a run time (< 0: never ran)"
        )
    walltime, wall_blank = _numbers(t, "walltime")
    if (~wall_blank & (walltime <= 0)).any():
        r = _first(~wall_blank & (walltime <= 0))
        raise t.error(
            r, "walltime", f"{t.columns['walltime'][r]!r} is not > 0; leave it blank for the default"
        )
    job_id, id_blank = _numbers(t, "job_id", whole=True)
    job_id = np.where(id_blank, np.arange(1, t.n + 1), job_id).astype(np.int64)
    status, status_blank = _numbers(t, "status", whole=True)
    status = np.where(status_blank, -1, status).astype(np.int64)
    idents = {c: _identifiers(t, c) for c in NAME_COLUMNS}
    chunks, per_chunk, resources, rounded = _requests(t)

    # unusable jobs: dropped and counted, the first applicable reason each
    reason = np.full(t.n, "", dtype=object)

    def drop(mask: np.ndarray, why: str) -> None:
        reason[mask & (reason == "")] = why

    drop(runtime < 0, DROP_RUNTIME)
    drop((chunks == 0) | (per_chunk.sum(axis=1) == 0), DROP_NO_REQUEST)
    queue_names, _ = idents["queue"]
    if m is not None and m.queues and queue_names is not None:
        drop(np.array([bool(q) and q not in m.queues for q in queue_names]), DROP_QUEUE)
    if m is not None:
        ok = np.flatnonzero(reason == "")
        _, _, code = align_requests(m, resources, chunks[ok], per_chunk[ok])
        for k, why in _ALIGN_DROPS.items():
            sel = np.zeros(t.n, dtype=bool)
            sel[ok[code == k]] = True
            drop(sel, why)
    dropped: dict[str, int] = {}
    notes: list[str] = []
    warns: list[str] = []
    for why in (DROP_RUNTIME, DROP_NO_REQUEST, DROP_QUEUE, DROP_NO_RESOURCE, DROP_CHUNK, DROP_CHUNKS):
        sel = reason == why
        if sel.any():
            dropped[why] = int(sel.sum())
            r = _first(sel)
            notes.append(f"first job dropped as '{why}': {t.where(r)} (job {job_id[r]})")
    keep = np.flatnonzero(reason == "")
    if len(keep) == 0:
        reasons = ", ".join(f"{n} {why}" for why, n in dropped.items())
        raise EmptyWorkloadError(f"{spath}: no jobs to simulate: all {t.n} rows were dropped: {reasons}")
    order = keep[np.argsort(submit[keep], kind="stable")]
    if (np.diff(submit[keep]) < 0).any():
        moved = int((order != keep).sum())
        notes.append(
            f"rows were not in submit order: sorted by submit time (stable: equal times keep file order; "
            f"{moved} rows moved)"
        )
    if rounded:
        notes.append(f"{rounded} mem_gb values rounded up to whole GB")

    # estimates: the wall-time asked for, else a default (reported)
    estimate = walltime[order].copy()
    missing = wall_blank[order]
    given_wall = walltime[keep][~wall_blank[keep]]
    default_value: float | None = None
    source = ""
    if missing.any():
        sources: dict[str, int] = {}
        if default_estimate is not None:
            estimate[missing] = default_estimate
            default_value, source = default_estimate, "argument"
        else:
            if m is not None and m.queues and queue_names is not None:
                per_queue: dict[str, int] = {}
                for i in np.flatnonzero(missing):
                    q = queue_names[order[i]]
                    if q in m.queues:
                        estimate[i] = m.queues[q][0]
                        per_queue[q] = per_queue.get(q, 0) + 1
                if per_queue:
                    given = ", ".join(f"{q} {m.queues[q][0]:g} s ({n})" for q, n in per_queue.items())
                    sources[f"their queue's maximum wall-time on machine {m.name!r}"] = sum(
                        per_queue.values()
                    )
                    notes.append(f"wall-time from the queue's maximum: {given}")
            rest = missing & np.isnan(estimate)
            if rest.any():
                if len(given_wall):
                    default_value = float(given_wall.max())
                    what = "the largest wall-time in the file"
                else:
                    default_value = float(max(runtime[keep].max(), 1.0))
                    what = "the longest run time, as the file has no wall-times"
                estimate[rest] = default_value
                sources[what] = int(rest.sum())
            source = "; ".join(f"{what} ({n} jobs)" for what, n in sources.items())
    if m is not None and m.queues and queue_names is not None:
        limit = np.array([m.queues.get(queue_names[i], (math.inf, 0.0))[0] for i in order])
        over = estimate > limit
        if over.any():
            first = int(order[_first(over)])
            warns.append(
                f"{int(over.sum())} jobs ask for more wall-time than their queue's maximum "
                f"(first: {t.where(first)}, job {job_id[first]}); they are kept"
            )

    # identifiers: codes in the order names first appear among the jobs kept
    columns: dict[str, np.ndarray] = {}
    tables: dict[str, tuple[str, ...]] = {}
    for c, attr in NAME_COLUMNS.items():
        names, ids = idents[c]
        if names is None:
            columns[attr] = ids[order]
            continue
        codes: dict[str, int] = {}
        columns[attr] = np.array(
            [codes.setdefault(names[i], len(codes)) if names[i] else -1 for i in order], dtype=np.int64
        )
        if codes:
            tables[c] = tuple(codes)

    chunks_k, per_k = chunks[order], per_chunk[order]
    size = chunks_k * per_k[:, 0]
    procs, procs_source = _size(m, machine_source, procs, header, spath, size, warns)
    n = len(order)
    raw = np.full((n, 18), -1.0)
    raw[:, 0] = job_id[order]
    raw[:, 1] = submit[order]
    raw[:, 3] = runtime[order]
    raw[:, 4] = size
    raw[:, 7] = size
    raw[:, 8] = np.where(missing, -1.0, estimate)
    raw[:, 10] = status[order]
    for k, attr in zip(
        (11, 12, 13, 14, 15), ("user", "group", "executable", "queue", "partition"), strict=True
    ):
        raw[:, k] = columns[attr]
    report = LoadReport(
        path=spath,
        job_lines=t.n,
        jobs_kept=n,
        dropped=dropped,
        default_estimates=int(missing.sum()),
        procs=procs,
        procs_source=procs_source,
        default_estimate=default_value,
        default_estimate_source=source,
        notes=tuple(notes),
        warnings=tuple(warns),
    )
    name = Path(spath).name
    for ext in (".gz", ".csv", ".parquet"):
        name = name.removesuffix(ext)
    return Workload(
        name=name,
        procs=procs,
        job_id=job_id[order],
        submit=submit[order],
        runtime=runtime[order],
        procs_req=size,
        estimate=estimate,
        user=columns["user"],
        group=columns["group"],
        executable=columns["executable"],
        queue=columns["queue"],
        partition=columns["partition"],
        status=status[order],
        requested_memory=np.full(n, -1.0),
        log_wait=np.full(n, -1.0),
        raw=raw,
        header=header,
        report=report,
        chunks=chunks_k,
        per_chunk=per_k,
        resources=resources,
        machine=m,
        names=tables,
    )


def _machine(
    machine: Machine | str | os.PathLike[str] | None, header: Mapping[str, str], path: str
) -> tuple[Machine | None, str]:
    if machine is not None:
        m = make_machine(machine)
        return m, f"machine {m.name!r}"
    name = header.get("Machine", "").strip()
    if not name:
        return None, ""
    if name.lower() not in machine_specs():
        raise UnknownNameError(
            f"{path}: header Machine: {name!r} is not a machine preset ({', '.join(machine_specs())}); "
            "fix the header or give the machine (--machine)"
        )
    m = make_machine(name)
    return m, f"machine {m.name!r} (the file's Machine header)"


def _size(
    m: Machine | None,
    machine_source: str,
    procs: int | None,
    header: Mapping[str, str],
    path: str,
    size: np.ndarray,
    warns: list[str],
) -> tuple[int, str]:
    """The machine size in processors, and where it came from."""
    if procs is not None:
        return procs, "argument"
    if m is not None:
        col = next((m.resources.index(r) for r in ("cores", "procs") if r in m.resources), 0)
        return int(m.total[col]), machine_source
    if "MaxProcs" in header:
        words = header["MaxProcs"].split()
        if not words or not _WHOLE_RE.fullmatch(words[0]) or not 1 <= int(words[0]) <= MAX_PROCS:
            raise TraceFormatError(
                path, None, f"header MaxProcs: {header['MaxProcs']!r} is not a machine size (a whole number)"
            )
        return int(words[0]), "MaxProcs"
    largest = max(int(size.max()), 1)
    warns.append(
        f"machine size {largest} guessed from the largest job: the file names no machine and no MaxProcs; "
        "give the machine (--machine NAME) or the size (--procs N)"
    )
    return largest, "largest job"


# ------------------------------------------------------------------ writing
def _number(v: float) -> str:
    """Shortest text that reads back as the same float; whole numbers without a point."""
    if v == math.floor(v) and abs(v) < _EXACT:
        return str(int(v))
    return repr(float(v))


def _table_columns(workload: Workload) -> dict[str, list[Any]]:
    """The columns :func:`write_jobs` writes, as Python values (None: blank)."""
    w = workload
    n = len(w)
    out: dict[str, list[Any]] = {
        "job_id": w.job_id.tolist(),
        "submit": w.submit.tolist(),
        "runtime": w.runtime.tolist(),
        "walltime": w.estimate.tolist(),
    }
    for c, attr in NAME_COLUMNS.items():
        codes = getattr(w, attr).tolist()
        table = w.names.get(c)
        if table is None:
            out[c] = [None if v == -1 else int(v) for v in codes]
        else:
            out[c] = [None if v < 0 else table[v] for v in codes]
    targets = ["cores" if r in ("procs", "cores") else r for r in w.resources]
    if len(set(targets)) != len(targets):
        raise InvalidConfigError(
            f"workload {w.name!r}: resources {', '.join(w.resources)} ask for both procs and cores"
        )
    per = np.asarray(w.per_chunk)
    if set(targets) <= set(REQUEST_COLUMNS):
        out["chunks"] = w.chunks.tolist()
        for c in REQUEST_COLUMNS:
            out[c] = per[:, targets.index(c)].tolist() if c in targets else [0] * n
    else:  # a resource without a column of its own: PBS select statements
        selects = []
        for j in range(n):
            parts = [str(int(w.chunks[j]))]
            for r, a in zip(targets, per[j].tolist(), strict=True):
                if a:
                    parts.append(f"mem={a}gb" if r == "mem_gb" else f"{_PBS_OF.get(r, r)}={a}")
            selects.append(":".join(parts))
        out["select"] = selects
    out["status"] = [None if v == -1 else int(v) for v in w.status.tolist()]
    return out


def _machine_header(workload: Workload) -> dict[str, str]:
    header = {k: v for k, v in workload.header.items() if k not in ("Machine", "MaxProcs")}
    m = workload.machine
    if m is not None and m.name.lower() in machine_specs():
        preset = make_machine(m.name)
        same = (
            preset.resources == m.resources
            and np.array_equal(preset.capacity, m.capacity)
            and dict(preset.queues) == dict(m.queues)
            and preset.exclusive == m.exclusive
        )
        if same:
            header["Machine"] = m.name
    header["MaxProcs"] = str(workload.procs)
    return header


def write_jobs(workload: Workload, path: str | os.PathLike[str]) -> None:
    """Write a workload as a job table: CSV (gzipped for ``.csv.gz``) or Parquet.

    Every job gets its wall-time (``estimate``) written out; names go back through the
    workload's name tables; the request goes into the per-chunk columns (an SWF job's
    ``procs`` into ``cores``), or into ``select`` statements if the workload asks for a
    resource without a column of its own. The header keeps the workload's ``; Key:
    value`` lines, ``MaxProcs`` and, for a workload read for a preset machine, its
    ``Machine``. :func:`read_jobs` reads the file back to the same jobs.

    Raises:
        InvalidConfigError: an unknown file type.
        MissingExtraError: ``.parquet`` without pyarrow installed.
    """
    _check_suffix(path, "job table")
    spath = os.fspath(path)
    cols = _table_columns(workload)
    header = _machine_header(workload)
    if spath.lower().endswith(".parquet"):
        _pyarrow_parquet(f"writing {spath}")
        import pyarrow as pa

        types = {c: pa.float64() for c in ("submit", "runtime", "walltime")}
        for c in NAME_COLUMNS:
            types[c] = pa.string() if c in workload.names else pa.int64()
        arrays = {
            c: pa.array(v, type=types.get(c, pa.string() if c == "select" else pa.int64()))
            for c, v in cols.items()
        }
        table = pa.table(arrays).replace_schema_metadata({"hpcgym.header": json.dumps(header)})
        import pyarrow.parquet as pq

        pq.write_table(table, spath)
        return
    out = io.StringIO()
    for key, value in header.items():
        out.write(f"# {key}: {value}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(cols))
    floats = {"submit", "runtime", "walltime"}
    texts = [
        [_number(v) for v in col] if c in floats else ["" if v is None else v for v in col]
        for c, col in cols.items()
    ]
    writer.writerows(zip(*texts, strict=True))
    data = out.getvalue().encode()
    Path(spath).write_bytes(gzip.compress(data, mtime=0) if spath.lower().endswith(".gz") else data)


# ------------------------------------------------------------------ SWF
def to_swf_workload(workload: Workload) -> tuple[Workload, list[str]]:
    """``workload`` as SWF holds it: one chunk of processors per job, numeric ids.

    A job's processors are its chunks times its ``cores`` (or ``procs``). Identifier
    columns with names are written as numbers 1, 2, ... in the order of the name table
    (SWF holds no names); the returned notes say which.

    Raises:
        InvalidConfigError: a job asks for another resource (GPUs, MICs, memory, ...),
            which SWF cannot hold; the message names the first such job and resource.
    """
    w = workload
    proc_cols = [k for k, r in enumerate(w.resources) if r in ("procs", "cores")]
    per = np.asarray(w.per_chunk)
    for k, r in enumerate(w.resources):
        if k in proc_cols or not per[:, k].any():
            continue
        j = _first(per[:, k] != 0)
        raise InvalidConfigError(
            f"{w.name}: job {int(w.job_id[j])} asks for {r}={int(per[j, k])} per chunk: SWF holds one "
            "resource (processors), so this workload cannot be written as SWF; keep it as CSV or Parquet"
        )
    procs_req = w.chunks * (per[:, proc_cols].sum(axis=1) if proc_cols else 0)
    if (procs_req < 1).any():
        j = _first(procs_req < 1)
        raise InvalidConfigError(
            f"{w.name}: job {int(w.job_id[j])} asks for no processors; SWF cannot hold it"
        )
    raw = np.array(w.raw, dtype=np.float64, copy=True)
    raw[:, 4] = procs_req
    raw[:, 7] = procs_req
    notes = []
    changes: dict[str, Any] = {}
    for c, attr in NAME_COLUMNS.items():
        if c in w.names:
            codes = getattr(w, attr)
            ids = np.where(codes >= 0, codes + 1, -1)
            changes[attr] = ids
            raw[:, 11 + ("user", "group", "executable", "queue", "partition").index(attr)] = ids
            notes.append(f"{c} names written as numbers 1-{len(w.names[c])} (SWF holds no names)")
    out = dataclasses.replace(
        w,
        raw=raw,
        procs_req=procs_req.astype(np.int64),
        chunks=np.ones(len(w), dtype=np.int64),
        per_chunk=procs_req.astype(np.int64).reshape(-1, 1),
        resources=("procs",),
        names={},
        **changes,
    )
    return out, notes
