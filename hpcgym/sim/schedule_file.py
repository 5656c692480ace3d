"""A schedule as its pictures need it: read from a schedule file, or taken from a run.

``hpcgym simulate --schedule-out FILE.csv`` writes one row per job with the columns
``job_id, submit, start, end, procs, estimate, wait, nodes`` (``.json``: the same keys, one
record per job). ``procs`` is the job's processors (cores) in all, ``nodes`` the node of
each of its chunks (``;``-separated in CSV, a list in JSON; every job runs on node 0 of the
one-node machine of an SWF trace). :func:`write_schedule` writes a simulated schedule so
(or as SWF), atomically; :func:`read_schedule` reads a CSV or JSON one back into a
:class:`ScheduleTable`; :meth:`ScheduleTable.from_schedule` builds one from a
:class:`~hpcgym.sim.Schedule` in memory. A schedule file has no users and no queues;
:meth:`ScheduleTable.with_labels_from` takes them from the workload the schedule was
simulated from, matched by job id.

>>> import io, os, tempfile
>>> text = "job_id,submit,start,end,procs,estimate,wait,nodes\\n7,0,0,60,4,100,0,0\\n8,10,60,90,2,50,50,0\\n"
>>> with tempfile.TemporaryDirectory() as d:
...     path = os.path.join(d, "s.csv")
...     _ = open(path, "w").write(text)
...     t = read_schedule(path)
>>> len(t), t.job_id.tolist(), t.wait.tolist(), t.nodes_of(1).tolist()
(2, [7, 8], [0.0, 50.0], [0])
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, TraceFormatError
from hpcgym.common.files import write_atomic
from hpcgym.common.report import to_json
from hpcgym.sim.schedule import Schedule
from hpcgym.workloads import Workload, write_swf

SCHEDULE_SUFFIXES = (".csv", ".json", ".swf", ".swf.gz")
"""File types :func:`write_schedule` writes, by suffix."""
SCHEDULE_COLUMNS = ("job_id", "submit", "start", "end", "procs", "estimate", "wait", "nodes")
"""Columns of a schedule file as :func:`write_schedule` writes it; ``nodes`` is the node of each
chunk, ``;``-separated in CSV."""
SCHEDULE_FILE_COLUMNS = ("job_id", "submit", "start", "end", "procs", "nodes")
"""The columns of a schedule file that its pictures need (others, such as ``wait``, are ignored)."""

NO_LABEL = "(none)"
"""The label of a job whose user or queue the log does not give (code -1)."""


@dataclass(frozen=True, eq=False)
class ScheduleTable:
    """Each job's submission, start, end, processors and nodes, and optionally its user and queue.

    Attributes:
        source: where the schedule came from (a file name, or a policy's name).
        job_id: ``(n,)`` int64 job ids.
        submit, start, end: ``(n,)`` float64 seconds; ``start`` and ``end`` are NaN for a job
            that never ran.
        procs: ``(n,)`` int64 processors (cores) of each job in all.
        node_ptr, node: the nodes of each job's chunks in compressed rows: job ``j`` ran
            its chunks on ``node[node_ptr[j]:node_ptr[j + 1]]`` (none: not recorded).
        user, queue: ``(n,)`` labels (str objects), or None when not known.
        line: ``(n,)`` the line of the file each job was read from (0 when not read from a file).
    """

    source: str
    job_id: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    procs: np.ndarray
    node_ptr: np.ndarray
    node: np.ndarray
    user: np.ndarray | None = None
    queue: np.ndarray | None = None
    line: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.submit  # type: ignore[no-any-return]

    @property
    def ran(self) -> np.ndarray:
        """Jobs with a finite start and end."""
        return np.isfinite(self.start) & np.isfinite(self.end)  # type: ignore[no-any-return]

    def nodes_of(self, job: int) -> np.ndarray:
        """The node of each chunk of ``job``."""
        return self.node[self.node_ptr[job] : self.node_ptr[job + 1]]  # type: ignore[no-any-return]

    def where(self, job: int) -> str:
        """``FILE:LINE (job ID)`` or ``SOURCE: job ID``, for messages."""
        jid = int(self.job_id[job])
        if self.line is not None and int(self.line[job]) > 0:
            return f"{self.source}:{int(self.line[job])} (job {jid})"
        return f"{self.source}: job {jid}"

    @classmethod
    def from_schedule(cls, schedule: Schedule, source: str | None = None) -> ScheduleTable:
        """The table of a simulated schedule, with its workload's users and queues."""
        w = schedule.workload
        n = len(w)
        ptr = np.asarray(schedule.placement_ptr, dtype=np.int64)
        nodes = np.asarray(schedule.placement_nodes, dtype=np.int64)
        if len(ptr) != n + 1:  # a schedule made without placements
            ptr, nodes = np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return cls(
            source=source or (f"{schedule.policy} on {w.name}" if schedule.policy else w.name),
            job_id=np.asarray(w.job_id, dtype=np.int64),
            submit=np.asarray(w.submit, dtype=np.float64),
            start=np.asarray(schedule.start, dtype=np.float64),
            end=np.asarray(schedule.end, dtype=np.float64),
            procs=np.asarray(w.procs_req, dtype=np.int64),
            node_ptr=ptr,
            node=nodes,
            user=workload_labels(w, "user"),
            queue=workload_labels(w, "queue"),
        )

    def with_labels_from(self, workload: Workload, what: str) -> ScheduleTable:
        """This table with the users and queues of ``workload`` (``what`` names it in messages).

        Jobs are matched by job id; each job must be in the workload and ask there for the
        processors the schedule gives it, so a schedule of another trace is an error and not
        a chart with the wrong users.

        Raises:
            InvalidConfigError: a job id the workload lacks, or one whose processors differ.
        """
        ids = np.asarray(workload.job_id, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        pos = np.searchsorted(ids[order], self.job_id)
        pos = np.minimum(pos, len(ids) - 1)
        found = ids[order][pos] == self.job_id
        if not found.all():
            j = int(np.argmax(~found))
            raise InvalidConfigError(
                f"{what}: has no job {int(self.job_id[j])}, which {self.where(j)} schedules "
                f"({int((~found).sum()):,} of {len(self):,} jobs are missing): the schedule was not "
                "simulated from this trace"
            )
        match = order[pos]
        other = np.asarray(workload.procs_req, dtype=np.int64)[match]
        differ = other != self.procs
        if differ.any():
            j = int(np.argmax(differ))
            raise InvalidConfigError(
                f"{what}: job {int(self.job_id[j])} asks for {int(other[j])} processors there but "
                f"{int(self.procs[j])} in {self.where(j)}: the schedule was not simulated from this trace"
            )
        users, queues = workload_labels(workload, "user"), workload_labels(workload, "queue")
        return dataclasses.replace(self, user=users[match], queue=queues[match])


def workload_labels(w: Workload, column: str) -> np.ndarray:
    """Each job's ``user`` or ``queue`` as text: its name when the log names it, else its number.

    Code -1 (not given) is :data:`NO_LABEL`.
    """
    codes = np.asarray(getattr(w, column), dtype=np.int64)
    names = w.names.get(column)
    if names is not None:
        table = np.array([*names, NO_LABEL], dtype=object)
        return table[np.where(codes >= 0, codes, len(names))]  # type: ignore[no-any-return]
    out = codes.astype(str).astype(object)
    out[codes < 0] = NO_LABEL
    return out  # type: ignore[no-any-return]


def check_schedule_path(path: str | os.PathLike[str], what: str = "schedule file") -> None:
    """Raise unless ``path`` ends in a suffix of :data:`SCHEDULE_SUFFIXES` and its folder exists.

    Raises:
        InvalidConfigError: either not so; the message starts with ``what`` (the command's
            option, e.g. ``--schedule-out``) and the path.
    """
    p = Path(path)
    if not p.name.lower().endswith(SCHEDULE_SUFFIXES):
        raise InvalidConfigError(f"{what} {p}: unknown file type; use one of {', '.join(SCHEDULE_SUFFIXES)}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidConfigError(f"{what} {p}: no such directory: {parent}")


def write_schedule(path: str | os.PathLike[str], schedule: Schedule) -> None:
    """Write each job's schedule as CSV, JSON records (:data:`SCHEDULE_COLUMNS`) or SWF, by suffix.

    ``nodes`` lists the node of each of the job's chunks (``0;0;3`` in CSV, a list in
    JSON; SWF has no place for it): on the one-node machine of an SWF trace every job
    runs on node 0. Numbers are written exactly (``%.17g`` in CSV), so
    :func:`read_schedule` reads back the times simulated. The file is written to a
    temporary file in its folder and renamed into place: a reader never sees part of it.

    Raises:
        InvalidConfigError: an unknown suffix or a missing folder (:func:`check_schedule_path`).
    """
    check_schedule_path(path)
    p = Path(path)
    w = schedule.workload
    name = p.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        write_swf(p, w, start=schedule.start)
        return
    columns = [w.job_id, w.submit, schedule.start, schedule.end, w.procs_req, w.estimate, schedule.wait]
    ptr = np.asarray(schedule.placement_ptr)
    placed = len(ptr) == len(w) + 1  # else a schedule made without placements: no nodes
    if name.endswith(".json"):
        flat = np.asarray(schedule.placement_nodes).tolist()
        bounds = ptr.tolist()
        whole = {"job_id", "procs"}
        records = [
            {
                **{
                    key: int(value) if key in whole else float(value)
                    for key, value in zip(SCHEDULE_COLUMNS, row, strict=False)
                },
                "nodes": flat[bounds[j] : bounds[j + 1]] if placed else [],
            }
            for j, row in enumerate(zip(*(np.asarray(c).tolist() for c in columns), strict=True))
        ]
        write_atomic(p, (to_json(records) + "\n").encode("utf-8"))
        return
    write_atomic(p, _csv_blocks(columns, ptr if placed else None, np.asarray(schedule.placement_nodes)))


_CSV_ROWS = 8192
"""Jobs formatted at a time by :func:`_csv_blocks`."""


def _csv_blocks(columns: list[Any], ptr: np.ndarray | None, nodes: np.ndarray) -> Iterator[bytes]:
    """The schedule CSV of :func:`write_schedule`, :data:`_CSV_ROWS` jobs at a time.

    Each block is formatted as the whole file would be (``numpy.savetxt`` with ``%.17g``,
    then the ``;``-separated nodes, none when ``ptr`` is None), so the bytes do not depend
    on the block size, and the text of a full trace is never in memory whole.
    """
    import io

    yield (",".join(SCHEDULE_COLUMNS) + "\n").encode("utf-8")
    n = len(columns[0])
    for a in range(0, n, _CSV_ROWS):
        b = min(a + _CSV_ROWS, n)
        numbers = io.StringIO()
        np.savetxt(numbers, np.column_stack([c[a:b] for c in columns]), fmt="%.17g", delimiter=",")
        lines = numbers.getvalue().splitlines()
        if ptr is not None:
            bounds = (ptr[a : b + 1] - ptr[a]).tolist()
            flat = nodes[ptr[a] : ptr[b]].tolist()
            where = [";".join(map(str, flat[bounds[k] : bounds[k + 1]])) for k in range(b - a)]
        else:
            where = [""] * (b - a)
        yield "".join(f"{line},{at}\n" for line, at in zip(lines, where, strict=True)).encode("utf-8")


def read_schedule(path: str | os.PathLike[str]) -> ScheduleTable:
    """Read a schedule file that ``hpcgym simulate --schedule-out`` wrote (``.csv`` or ``.json``).

    Columns are found by name (:data:`SCHEDULE_FILE_COLUMNS`; ``nodes`` may be absent or
    empty, as for a schedule without placements); columns ``user`` and ``queue``, if a
    file has them, label the jobs. Rows keep the file's order. A job without a start or
    end (``nan``) never ran: it is kept, and the pictures count it.

    Raises:
        TraceFormatError: a missing column, a value that is not a number, a job that ends
            before it starts or starts before it is submitted, or no job at all; the
            message names the file, the line and the column.
        FileNotFoundError: no such file.
    """
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".json"):
        rows, lines = _json_rows(p)
    elif name.endswith(".csv"):
        rows, lines = _csv_rows(p)
    else:
        raise InvalidConfigError(
            f"{p}: a schedule file is .csv or .json (as `hpcgym simulate --schedule-out` writes)"
        )
    if not rows:
        raise TraceFormatError(str(p), None, "no jobs: the schedule file has a header but no rows")
    n = len(rows)
    numbers = {c: np.empty(n, dtype=np.float64) for c in ("job_id", "submit", "start", "end", "procs")}
    ptr = np.zeros(n + 1, dtype=np.int64)
    nodes: list[int] = []
    for i, (row, line) in enumerate(zip(rows, lines, strict=True)):
        for column, values in numbers.items():
            values[i] = _number(row.get(column), str(p), line, column)
        placed = _nodes(row.get("nodes"), str(p), line)
        nodes.extend(placed)
        ptr[i + 1] = len(nodes)
    for column in ("job_id", "procs"):
        v = numbers[column]
        bad = ~np.isfinite(v) | (v != np.floor(v)) | (v < (1 if column == "procs" else -np.inf))
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceFormatError(
                str(p),
                lines[i],
                f"column {column}: {v[i]:g} is not a whole number{' >= 1' * (column == 'procs')}",
            )
    submit, start, end = numbers["submit"], numbers["start"], numbers["end"]
    if not np.isfinite(submit).all():
        i = int(np.argmax(~np.isfinite(submit)))
        raise TraceFormatError(str(p), lines[i], f"column submit: {submit[i]:g} is not a finite time")
    with np.errstate(invalid="ignore"):
        early, backwards = start < submit, end < start
    for bad, what in ((early, "starts before it is submitted"), (backwards, "ends before it starts")):
        if bad.any():
            i = int(np.argmax(bad))
            raise TraceFormatError(
                str(p),
                lines[i],
                f"job {int(numbers['job_id'][i])} {what} (submit {submit[i]:g}, "
                f"start {start[i]:g}, end {end[i]:g})",
            )
    labels = {c: np.array([str(r.get(c) or NO_LABEL) for r in rows], dtype=object) for c in ("user", "queue")}
    return ScheduleTable(
        source=str(p),
        job_id=numbers["job_id"].astype(np.int64),
        submit=submit,
        start=start,
        end=end,
        procs=numbers["procs"].astype(np.int64),
        node_ptr=ptr,
        node=np.asarray(nodes, dtype=np.int64),
        user=labels["user"] if "user" in rows[0] else None,
        queue=labels["queue"] if "queue" in rows[0] else None,
        line=np.asarray(lines, dtype=np.int64),
    )


def _csv_rows(p: Path) -> tuple[list[dict[str, Any]], list[int]]:
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        _check_columns(header, p, 1)
        rows, lines = [], []
        for row in reader:
            if None in row:  # more values than the header has columns
                raise TraceFormatError(
                    str(p),
                    reader.line_num,
                    f"{len(header) + len(row[None])} values, the header has {len(header)}",
                )
            if not any(row.values()):
                continue  # a blank line
            rows.append(row)
            lines.append(reader.line_num)
    return rows, lines


def _json_rows(p: Path) -> tuple[list[dict[str, Any]], list[int]]:
    try:
        records = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise TraceFormatError(str(p), err.lineno, f"not JSON: {err.msg}") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TraceFormatError(str(p), None, "a JSON schedule is a list of records, one object per job")
    if records:
        _check_columns(list(records[0]), p, None)
    # JSON records have no lines: the record's number (from 1) stands in for it
    return records, list(range(1, len(records) + 1))


def _check_columns(header: Sequence[str], p: Path, line: int | None) -> None:
    missing = [c for c in SCHEDULE_FILE_COLUMNS if c != "nodes" and c not in header]
    if missing:
        raise TraceFormatError(
            str(p),
            line,
            f"no column {', '.join(missing)}: a schedule file has the columns "
            f"{', '.join(SCHEDULE_FILE_COLUMNS)} (as `hpcgym simulate --schedule-out` writes)",
        )


def _number(value: Any, path: str, line: int, column: str) -> float:
    if isinstance(value, bool) or value is None or value == "":
        raise TraceFormatError(path, line, f"column {column}: no value")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TraceFormatError(path, line, f"column {column}: {value!r} is not a number") from None


def _nodes(value: Any, path: str, line: int) -> list[int]:
    if value is None or value == "":
        return []
    items = value if isinstance(value, list) else str(value).split(";")
    try:
        nodes = [int(x) for x in items]
    except (TypeError, ValueError):
        raise TraceFormatError(
            path, line, f"column nodes: {value!r} is not a list of node numbers (0;0;3 in CSV)"
        ) from None
    if any(x < 0 for x in nodes):
        raise TraceFormatError(path, line, f"column nodes: {value!r} has a negative node number")
    return nodes
