"""The rows of a Slurm accounting log: its header and cells, and each job row read.

:func:`_read_log` splits a ``sacct --parsable2`` file into the columns it knows
(:data:`SACCT_COLUMNS`) and rows; :func:`_never_started` says which job rows never ran;
:func:`_job` reads the cells of the others (:mod:`hpcgym.workloads.sacct_fields` reads
each cell). :func:`~hpcgym.workloads.read_sacct` (:mod:`hpcgym.workloads.sacct`) makes
the workload of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from hpcgym.common.errors import TraceFormatError
from hpcgym.workloads.jobtable_format import header_row
from hpcgym.workloads.sacct_fields import (
    UNKNOWN_TIMES,
    Instant,
    JobId,
    parse_count,
    parse_duration,
    parse_limit,
    parse_memory,
    parse_time,
    parse_tres,
    tres_amounts,
)

SACCT_COLUMNS = (
    "JobID",
    "JobIDRaw",
    "JobName",
    "Submit",
    "Start",
    "End",
    "Elapsed",
    "Timelimit",
    "State",
    "Partition",
    "QOS",
    "User",
    "Group",
    "Account",
    "NNodes",
    "NCPUS",
    "ReqTRES",
    "AllocTRES",
    "ReqMem",
    "NodeList",
)
"""The ``sacct --format`` fields :func:`read_sacct` reads; other fields are skipped (noted).
JobID, Submit, Start and State are required, and End or Elapsed, and a CPU count (NCPUS,
AllocTRES or ReqTRES)."""

DROP_PENDING = "never started: pending when the log was written"
DROP_CANCELLED = "never started: cancelled before start"
DROP_NO_START = "never started: no start time"
DROP_ARRAY_PENDING = "array tasks never started (a pending row such as 123_[5-9])"
DROP_RUNNING = "still running when the log was written (no end time)"

_T = TypeVar("_T")


@dataclass
class _Log:
    """The rows of a log as read: the file, its ``# Key: value`` lines, its columns and rows."""

    path: str
    header: dict[str, str]
    columns: dict[str, int]  # canonical name -> index
    rows: list[tuple[int, list[str]]]  # (line, cells)
    skipped: list[str]  # columns not read

    def cell(self, cells: list[str], column: str) -> str:
        k = self.columns.get(column)
        return cells[k].strip() if k is not None else ""

    def read(self, line: int, cells: list[str], column: str, parse: Callable[[str], _T]) -> _T:
        """``parse`` of the cell; its ``ValueError`` as an error naming file, line and column."""
        try:
            return parse(self.cell(cells, column))
        except ValueError as err:
            raise TraceFormatError(self.path, line, f"column {column}: {err}") from None


@dataclass
class _Job:
    """One job row that started and ended, its cells read."""

    line: int
    job_id: int
    label: str  # the JobID cell as written (5_0, 9+1): one row per job, whatever JobIDRaw says
    state: str
    submit: float
    start: float
    runtime: float
    limit: float | str | None
    partition: str
    user: str
    group: str
    job_name: str
    cpus: int
    nodes: int
    mem_mb: float | None
    gpus: int
    ambiguous: bool


def _read_log(path: Path, name: str) -> _Log:
    lines, header, first = header_row(path, name, "the sacct field names")
    names = lines[first].split("|")
    trailing = len(names) > 1 and not names[-1].strip()  # --parsable ends every line with '|'
    if trailing:
        names = names[:-1]
    known = {c.lower(): c for c in SACCT_COLUMNS}
    columns: dict[str, int] = {}
    skipped = []
    for k, raw in enumerate(names):
        canon = known.get(raw.strip().lower())
        if canon is None:
            skipped.append(raw.strip())
            continue
        if canon in columns:
            raise TraceFormatError(name, first + 1, f"column {canon} appears twice in the header")
        columns[canon] = k
    if "JobID" not in columns:
        raise TraceFormatError(
            name,
            first + 1,
            f"no JobID column: the first line that is not a comment must be sacct's header row "
            f"(sacct --parsable2 without --noheader); it reads {lines[first][:80]!r}",
        )
    missing = [c for c in ("Submit", "Start", "State") if c not in columns]
    if "End" not in columns and "Elapsed" not in columns:
        missing.append("End or Elapsed")
    if not {"NCPUS", "AllocTRES", "ReqTRES"} & set(columns):
        missing.append("NCPUS (or AllocTRES, ReqTRES)")
    if missing:
        raise TraceFormatError(
            name, first + 1, f"no {', '.join(missing)} column; see docs/WORKLOADS.md for the sacct command"
        )
    rows = []
    for i in range(first + 1, len(lines)):
        text = lines[i]
        if not text.strip():
            continue
        cells = text.split("|")
        if trailing and len(cells) == len(names) + 1 and not cells[-1]:
            cells = cells[:-1]
        if len(cells) != len(names):
            raise TraceFormatError(
                name,
                i + 1,
                f"expected {len(names)} fields (one per column of the header), found {len(cells)}"
                + ("; a '|' inside a field (a JobName?) splits it" if len(cells) > len(names) else ""),
            )
        rows.append((i + 1, cells))
    return _Log(name, header, columns, rows, skipped)


def _never_started(log: _Log, line: int, cells: list[str], state: str) -> str:
    """The drop reason of a job that never started, or "" if it started."""
    if state == "PENDING":
        return DROP_PENDING
    if log.cell(cells, "Start").lower() in UNKNOWN_TIMES:
        return DROP_CANCELLED if state == "CANCELLED" else DROP_NO_START
    if state == "CANCELLED":
        if log.cell(cells, "NodeList").lower() == "none assigned":
            return DROP_CANCELLED
        ran = log.read(line, cells, "Elapsed", lambda s: parse_duration(s) if s else 0.0) > 0
        if not ran and "AllocTRES" in log.columns and not log.cell(cells, "AllocTRES"):
            return DROP_CANCELLED  # no allocation and no time: cancelled while pending
    return ""


def _resources(log: _Log, line: int, cells: list[str]) -> tuple[int, int, float | None, int]:
    """``(cpus, nodes, memory in MB or None, gpus)`` of a job row, totals over its nodes."""
    alloc = log.read(line, cells, "AllocTRES", lambda s: tres_amounts(parse_tres(s)))
    req = log.read(line, cells, "ReqTRES", lambda s: tres_amounts(parse_tres(s)))

    def first(column: str, key: str) -> float | None:
        value = log.read(line, cells, column, parse_count)
        return float(value) if value is not None else alloc.get(key, req.get(key))

    cpus = first("NCPUS", "cpu")
    if cpus is None:
        raise TraceFormatError(log.path, line, "no CPU count: NCPUS is blank and no TRES list gives cpu=")
    nodes = first("NNodes", "node")
    if nodes is None:
        nodes = 1.0
    mem = alloc.get("mem", req.get("mem"))
    if mem is None and log.cell(cells, "ReqMem"):
        mb, per = log.read(line, cells, "ReqMem", parse_memory)
        mem = mb * (cpus if per == "c" else max(nodes, 1.0))
    gpus = alloc.get("gpu", req.get("gpu", 0.0))
    return int(cpus), int(nodes), mem, int(gpus)


def _job(log: _Log, line: int, cells: list[str], jid: JobId, state: str, zone: dt.tzinfo) -> _Job | str:
    """The job of a row that started: its cells read, or the reason it is dropped."""

    def time(column: str) -> Instant | None:
        return log.read(line, cells, column, lambda s: parse_time(s, zone))

    submit_t, start_t = time("Submit"), time("Start")
    if submit_t is None:
        raise TraceFormatError(
            log.path, line, f"column Submit: {log.cell(cells, 'Submit')!r}: no submit time"
        )
    assert start_t is not None  # _never_started looked
    end_t = time("End") if "End" in log.columns else None
    if state in ("RUNNING", "SUSPENDED") or ("End" in log.columns and end_t is None):
        return DROP_RUNNING
    elapsed = log.read(line, cells, "Elapsed", parse_duration) if log.cell(cells, "Elapsed") else None
    if elapsed is None and end_t is None:
        raise TraceFormatError(log.path, line, "column Elapsed: blank, and no End: the job has no run time")
    submit = submit_t.first
    start = start_t.first if start_t.first >= submit else start_t.second
    if elapsed is not None:
        runtime = elapsed
    else:
        assert end_t is not None
        end = end_t.first if end_t.first >= start else end_t.second
        if end < start:
            raise TraceFormatError(
                log.path,
                line,
                f"column End: {log.cell(cells, 'End')!r} is before Start {log.cell(cells, 'Start')!r}",
            )
        runtime = end - start
    raw_id = log.read(line, cells, "JobIDRaw", parse_count) if "JobIDRaw" in log.columns else None
    cpus, nodes, mem, gpus = _resources(log, line, cells)
    return _Job(
        line=line,
        job_id=raw_id if raw_id is not None else jid.job,
        label=log.cell(cells, "JobID"),
        state=state,
        submit=submit,
        start=start,
        runtime=float(runtime),
        limit=log.read(line, cells, "Timelimit", parse_limit),
        partition=log.cell(cells, "Partition"),
        user=log.cell(cells, "User"),
        group=log.cell(cells, "Group"),
        job_name=log.cell(cells, "JobName"),
        cpus=cpus,
        nodes=nodes,
        mem_mb=mem,
        gpus=gpus,
        ambiguous=submit_t.ambiguous or start_t.ambiguous or (end_t is not None and end_t.ambiguous),
    )
