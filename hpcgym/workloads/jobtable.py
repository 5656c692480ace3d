"""Job tables: heterogeneous workloads as CSV or Parquet (schema in ``docs/WORKLOADS.md``).

A job table has one row per job and named columns: when it was submitted, how long it
ran, the wall-time its user asked for, who submitted it, to which queue, and what it
asks for, PBS style: ``chunks`` x a per-chunk vector of ``cores, gpus, mics, mem_gb``
(or a ``select`` statement such as ``2:ncpus=8:ngpus=2:mem=8gb``). :func:`read_jobs`
reads one into a :class:`~hpcgym.workloads.Workload` with the same rules as the SWF
reader: malformed values are errors naming the file, the line (row) and the column;
jobs that can never run (cancelled before they started, a queue the machine lacks, a
chunk no node holds, more chunks than the machine holds) are dropped and counted by
reason in the :class:`~hpcgym.workloads.LoadReport`, never silently.
:func:`~hpcgym.workloads.write_jobs` writes a workload back; reading what it wrote gives
the same workload. The cells of a file and their conversions are in
:mod:`hpcgym.workloads.jobtable_format`, the writing in :mod:`hpcgym.workloads.jobtable_write`.

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
wait           seconds the job waited on the system that logged it, SWF field 3
               (``--policy replay`` starts it at ``submit + wait``); below 0: unknown
               (unknown)
used_mem_kb    average memory used per processor in KB, SWF field 7; kept for the
               round trip, not simulated (unknown)
=============  =======================================================================

Lines of a CSV file before the header row that start with ``#`` are comments; those of
the form ``# Key: value`` are kept in ``Workload.header``. Two keys mean something:
``Machine`` (a preset name, e.g. ``eurora``: the machine to read the jobs for when no
machine is given) and ``MaxProcs`` (the machine size in processors when no machine is
known). Parquet files keep the same keys in their schema metadata.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError, UnknownNameError
from hpcgym.machine import UNPLACEABLE_REASONS, Machine, align_requests, machine_specs, make_machine
from hpcgym.workloads.jobtable_format import (
    _WHOLE_RE,
    LOG_COLUMNS,
    NAME_COLUMNS,
    _check_suffix,
    _first,
    _identifiers,
    _numbers,
    _read_csv,
    _read_parquet,
    _requests,
    _submit_times,
)
from hpcgym.workloads.workload import (
    DROP_NO_RESOURCE,
    DROP_REPEATED_ID,
    DROP_RUNTIME,
    MAX_PROCS,
    LoadReport,
    Workload,
    check_procs,
    repeated_ids,
    repeated_ids_note,
    unsorted_note,
)

DROP_NO_REQUEST = "asks for no resource (0 chunks or all amounts 0)"
DROP_QUEUE = "queue not on the machine"
DROP_CHUNK = UNPLACEABLE_REASONS[2]
DROP_CHUNKS = UNPLACEABLE_REASONS[3]
_ALIGN_DROPS = {1: DROP_NO_RESOURCE, 2: DROP_CHUNK, 3: DROP_CHUNKS}


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
    logged: dict[str, np.ndarray] = {}  # SWF's -1 where blank
    for c in LOG_COLUMNS:
        values, blank = _numbers(t, c)
        logged[c] = np.where(blank, -1.0, values)
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
    repeat = repeated_ids(job_id, reason == "")
    drop(repeat, DROP_REPEATED_ID)
    if repeat.any():
        r = _first(repeat)
        notes.append(repeated_ids_note(int(repeat.sum()), t.where(r), int(job_id[r])))
    for why in (
        DROP_RUNTIME,
        DROP_NO_REQUEST,
        DROP_QUEUE,
        DROP_NO_RESOURCE,
        DROP_CHUNK,
        DROP_CHUNKS,
        DROP_REPEATED_ID,
    ):
        sel = reason == why
        if sel.any():
            dropped[why] = int(sel.sum())
            r = _first(sel)
            if why != DROP_REPEATED_ID:  # its own note, above
                notes.append(f"first job dropped as '{why}': {t.where(r)} (job {job_id[r]})")
    keep = np.flatnonzero(reason == "")
    if len(keep) == 0:
        reasons = ", ".join(f"{n} {why}" for why, n in dropped.items())
        raise EmptyWorkloadError(f"{spath}: no jobs to simulate: all {t.n} rows were dropped: {reasons}")
    order = keep[np.argsort(submit[keep], kind="stable")]
    if (np.diff(submit[keep]) < 0).any():
        moved = int((order != keep).sum())
        notes.append(unsorted_note(moved))
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
    for c, k in LOG_COLUMNS.items():
        raw[:, k] = logged[c][order]
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
        log_wait=logged["wait"][order],
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
