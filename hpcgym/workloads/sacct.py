"""Slurm accounting logs: the output of ``sacct --parsable2 --allocations`` read as a workload.

:func:`read_sacct` reads the pipe-separated table ``sacct`` prints (a header row of field
names, then one row per job) into a :class:`~hpcgym.workloads.Workload`, with the rules of
the other readers: a malformed cell is a :class:`~hpcgym.common.errors.TraceFormatError`
naming the file, the line and the column; a job that never ran, or that the machine can
never run, is dropped and counted by reason in the :class:`~hpcgym.workloads.LoadReport`,
never silently. The rows are read by :mod:`hpcgym.workloads.sacct_rows`, each cell by
:mod:`hpcgym.workloads.sacct_fields`; ``docs/WORKLOADS.md`` has the command line, the
columns and every rule with an example.

Rules where Slurm's manual leaves a choice (each also in the docs):

* rows are jobs; step rows (``123.batch``, ``123.extern``, ``123.0``) are skipped and
  counted in a note (``--allocations`` leaves them out already);
* an array task (``123_4``) is a job; a pending array row (``123_[5-9]``) stands for tasks
  that never started: dropped, one row counted, its tasks in a note;
* each component of a heterogeneous job (``123+0``, ``123+1``) is a job of its own, with
  the resources, partition and times of its row (Slurm starts them together; the
  simulator does not force that);
* a job never started (State PENDING, no Start, or cancelled before it was given
  nodes) or still running (State RUNNING or SUSPENDED, no End) is dropped, by reason;
* a job whose JobID an earlier kept row has (a requeued job of ``sacct --duplicates``,
  a row pasted twice) is dropped as a repeated id, the first row kept, as in every reader
  (:func:`~hpcgym.workloads.workload.repeated_ids`);
* times without a zone are local times of ``tz`` (daylight saving time included); a
  local time passed twice reads as the earlier instant, except that Start and End are
  the first readings not before Submit and Start;
* run time = Elapsed (which Slurm measures without the clock's jumps), else End - Start;
  estimate = Timelimit; for ``UNLIMITED``, ``Partition_Limit`` or blank: the
  ``default_estimate`` argument, else the partition's maximum wall-time on the machine,
  else the largest Timelimit of the partition in the log, else the largest in the log,
  else the longest run time (the report counts each);
* request: CPUs from NCPUS, nodes from NNodes, memory and GPUs from AllocTRES (what the
  job held), each else from ReqTRES, memory else from ReqMem.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError
from hpcgym.machine import Machine, align_requests
from hpcgym.workloads.jobtable import _ALIGN_DROPS, DROP_NO_REQUEST, DROP_QUEUE, _machine, _size
from hpcgym.workloads.sacct_fields import (
    NO_LIMIT,
    PARTITION_LIMIT,
    SWF_STATUS,
    ceil_div,
    parse_job_id,
    parse_state,
    parse_zone,
)
from hpcgym.workloads.sacct_rows import (
    DROP_ARRAY_PENDING,
    DROP_CANCELLED,
    DROP_NO_START,
    DROP_PENDING,
    DROP_RUNNING,
    SACCT_COLUMNS,
    _Job,
    _job,
    _Log,
    _never_started,
    _read_log,
)
from hpcgym.workloads.workload import (
    DROP_REPEATED_ID,
    DROP_TOO_LARGE,
    LoadReport,
    Workload,
    check_procs,
    real_number,
    repeated_ids,
)

__all__ = [
    "DROP_ARRAY_PENDING",
    "DROP_CANCELLED",
    "DROP_NO_START",
    "DROP_PENDING",
    "DROP_RUNNING",
    "SACCT_COLUMNS",
    "SACCT_SUFFIXES",
    "is_sacct_log",
    "read_sacct",
]

SACCT_SUFFIXES = (".sacct", ".sacct.gz")
"""File types :func:`read_sacct` is chosen for by suffix (``--workload FILE.sacct``)."""

_DROP_ORDER = (
    DROP_PENDING,
    DROP_CANCELLED,
    DROP_NO_START,
    DROP_ARRAY_PENDING,
    DROP_RUNNING,
    DROP_NO_REQUEST,
    DROP_QUEUE,
    *_ALIGN_DROPS.values(),
    DROP_TOO_LARGE,
    DROP_REPEATED_ID,
)


def is_sacct_log(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Slurm accounting log (:data:`SACCT_SUFFIXES`), by its suffix."""
    return str(path).lower().endswith(SACCT_SUFFIXES)


def read_sacct(
    path: str | os.PathLike[str],
    machine: Machine | str | os.PathLike[str] | None = None,
    *,
    procs: int | None = None,
    tz: str | None = None,
    default_estimate: float | None = None,
) -> Workload:
    """Read a Slurm accounting log (``sacct --parsable2 --allocations``) into a workload.

    Args:
        path: the file, plain or gzipped (``docs/WORKLOADS.md`` has the sacct command).
        machine: the machine to read the jobs for (a :class:`~hpcgym.machine.Machine`, a
            preset name or a TOML file; default: the preset a ``# Machine:`` line before
            the header names, if any). With a machine a job asks for NNodes chunks of
            its CPUs, GPUs and memory (``mem_gb``, if the machine has it) per node, a
            partition is a queue, and jobs it can never run are dropped and counted;
            without one a job is one chunk of NCPUS processors (as in SWF) and the
            machine is one node of ``procs`` processors.
        procs: the machine size in processors when there is no machine (default: a
            ``# MaxProcs:`` line, else the largest job, with a warning); larger jobs
            are dropped and counted.
        tz: the time zone of the log's local times (an IANA name such as
            ``Europe/Berlin``; default: a ``# TimeZone:`` line before the header, else UTC).
        default_estimate: the estimate in seconds of jobs without a Timelimit (UNLIMITED,
            Partition_Limit or blank); by default their partition's maximum wall-time on
            the machine, else the largest Timelimit of the partition, else of the log.

    Returns:
        The workload, submit times in seconds from the earliest (whose Unix time the
        header keeps as ``UnixStartTime``), sorted by submit time (ties keep file
        order); ``log_wait`` holds each job's logged wait (Start - Submit), so the
        ``replay`` policy runs the log's own schedule. ``workload.report`` counts the
        drops by reason.

    Raises:
        TraceFormatError: a malformed row or cell; the message names the file, the line
            and the column.
        EmptyWorkloadError: no job left to simulate.
        InvalidConfigError: ``tz``, ``procs`` or ``default_estimate`` out of range.
    """
    spath = os.fspath(path)
    if procs is not None:
        procs = check_procs(procs)
    if default_estimate is not None:
        number = real_number(default_estimate)
        if number is None or not (math.isfinite(number) and number > 0):
            raise InvalidConfigError(
                f"default_estimate must be a positive number of seconds, got {default_estimate!r}"
            )
        default_estimate = number
    log = _read_log(Path(path), spath)
    header = dict(log.header)
    zone_name, zone_source = (tz, "argument") if tz is not None else (header.get("TimeZone"), "TimeZone line")
    if zone_name is None:
        zone_name, zone_source = "UTC", "the default"
    try:
        zone = parse_zone(zone_name)
    except ValueError as err:
        where = "tz" if tz is not None else f"{spath}: header TimeZone"
        raise InvalidConfigError(f"{where}: {err}") from None
    m, machine_source = _machine(machine, header, spath)

    # rows: steps skipped, jobs that never ran dropped, the others read
    steps = pending_tasks = job_lines = 0
    dropped: dict[str, int] = {}
    first_drop: dict[str, str] = {}
    jobs: list[_Job] = []

    def drop(why: str, line: int, label: str) -> None:
        dropped[why] = dropped.get(why, 0) + 1
        first_drop.setdefault(why, f"line {line} (job {label})")

    for line, cells in log.rows:
        jid = log.read(line, cells, "JobID", parse_job_id)
        if jid.step is not None:
            steps += 1
            continue
        job_lines += 1
        label = log.cell(cells, "JobID")
        if jid.pending_tasks is not None:
            pending_tasks += jid.pending_tasks
            drop(DROP_ARRAY_PENDING, line, label)
            continue
        state = log.read(line, cells, "State", parse_state)
        why = _never_started(log, line, cells, state)
        job = why or _job(log, line, cells, jid, state, zone)
        if isinstance(job, str):
            drop(job, line, label)
        else:
            jobs.append(job)
    return _assemble(
        log,
        jobs,
        dropped,
        first_drop,
        steps,
        pending_tasks,
        job_lines,
        m,
        machine_source,
        procs,
        default_estimate,
        header,
        (zone_name, zone_source),
    )


def _assemble(
    log: _Log,
    jobs: list[_Job],
    dropped: dict[str, int],
    first_drop: dict[str, str],
    steps: int,
    pending_tasks: int,
    job_lines: int,
    m: Machine | None,
    machine_source: str,
    procs: int | None,
    default_estimate: float | None,
    header: dict[str, str],
    zone: tuple[str, str],
) -> Workload:
    """The workload of the jobs read: requests for the machine, drops, estimates, columns."""
    spath = log.path
    notes: list[str] = [f"times read as local times of {zone[0]} (from {zone[1]}; --timezone sets it)"]
    warns: list[str] = []
    if steps:
        notes.append(f"{steps} step rows (.batch, .extern, .0, ...) skipped: jobs only (sacct --allocations)")
    if pending_tasks:
        notes.append(f"the pending array rows stand for {pending_tasks} array tasks that never started")
    if log.skipped:
        notes.append(f"columns not read: {', '.join(log.skipped)}")
    n = len(jobs)
    cpus = np.array([j.cpus for j in jobs], dtype=np.int64)
    nodes = np.array([j.nodes for j in jobs], dtype=np.int64)
    mem = np.array([math.nan if j.mem_mb is None else j.mem_mb for j in jobs])
    gpus = np.array([j.gpus for j in jobs], dtype=np.int64)
    partitions = [j.partition for j in jobs]
    reason = np.full(n, "", dtype=object)

    def mark(mask: np.ndarray, why: str) -> None:
        reason[mask & (reason == "")] = why

    mark((cpus <= 0) | (nodes <= 0), DROP_NO_REQUEST)
    safe_nodes = np.maximum(nodes, 1)
    if m is not None:
        resources: tuple[str, ...] = (
            ("cores", "gpus", "mem_gb") if "mem_gb" in m.resources else ("cores", "gpus")
        )
        if "mem_gb" not in m.resources and (np.nan_to_num(mem) > 0).any():
            notes.append(f"memory not requested: machine {m.name!r} has no mem_gb")
        chunks = safe_nodes.copy()
        per = [np.array([ceil_div(c, k) for c, k in zip(cpus, safe_nodes, strict=True)], dtype=np.int64)]
        per.append(np.array([ceil_div(g, k) for g, k in zip(gpus, safe_nodes, strict=True)], dtype=np.int64))
        if "mem_gb" in resources:
            per.append(
                np.array(
                    [
                        0 if math.isnan(x) else ceil_div(x / 1024.0, k)
                        for x, k in zip(mem, safe_nodes, strict=True)
                    ],
                    dtype=np.int64,
                )
            )
            per_node_gb = np.nan_to_num(mem) / 1024.0 / safe_nodes
            rounded = int((np.abs(per[-1] - per_node_gb) > 1e-9).sum())
            if rounded:
                notes.append(f"{rounded} jobs' memory per node rounded up to whole GB (machines count GB)")
        per_chunk = np.column_stack(per)
        uneven = int(((cpus % safe_nodes) != 0).sum() + ((gpus % safe_nodes) != 0).sum())
        if uneven:
            notes.append(
                f"{uneven} CPU or GPU counts do not divide evenly among their job's nodes: each node asks "
                "for the count rounded up"
            )
        if m.queues:
            mark(np.array([bool(p) and p not in m.queues for p in partitions], dtype=bool), DROP_QUEUE)
        ok = np.flatnonzero(reason == "")
        _, _, code = align_requests(m, resources, chunks[ok], per_chunk[ok])
        for k, why in _ALIGN_DROPS.items():
            sel = np.zeros(n, dtype=bool)
            sel[ok[code == k]] = True
            mark(sel, why)
    else:
        resources = ("cores",)
        chunks = np.ones(n, dtype=np.int64)
        per_chunk = cpus.reshape(-1, 1).copy()
        held = [
            what for what, amount in (("GPUs", gpus), ("memory", np.nan_to_num(mem))) if (amount > 0).any()
        ]
        if held:
            notes.append(
                f"no machine: each job is one chunk of its NCPUS processors; its {' and '.join(held)} "
                "not kept (give --machine to keep them)"
            )
        if procs is not None:
            mark(cpus > procs, DROP_TOO_LARGE)
    # A row whose JobID an earlier row has (a requeued job of sacct --duplicates, a row pasted
    # twice); by JobID, not job_id, so that array tasks of a log without JobIDRaw stay jobs
    _, ids = np.unique(np.array([j.label for j in jobs], dtype=object), return_inverse=True)
    mark(repeated_ids(ids.astype(np.int64), reason == ""), DROP_REPEATED_ID)
    for j, why in enumerate(reason):
        if why:
            dropped[why] = dropped.get(why, 0) + 1
            first_drop.setdefault(why, f"line {jobs[j].line} (job {jobs[j].job_id})")
    dropped = {why: dropped[why] for why in _DROP_ORDER if why in dropped}
    notes += [f"first job dropped as '{why}': {first_drop[why]}" for why in dropped]
    keep = np.flatnonzero(reason == "")
    if len(keep) == 0:
        reasons = ", ".join(f"{k} {why}" for why, k in dropped.items()) or "no job rows"
        raise EmptyWorkloadError(
            f"{spath}: no jobs to simulate: all {job_lines} job rows were dropped: {reasons}"
        )
    submit_abs = np.array([jobs[j].submit for j in keep])
    order = keep[np.argsort(submit_abs, kind="stable")]
    if (np.diff(submit_abs) < 0).any():
        notes.append("rows were not in submit order: sorted by submit time (stable)")
    kept = [jobs[j] for j in order]
    ambiguous = sum(j.ambiguous for j in kept)
    if ambiguous:
        notes.append(
            f"{ambiguous} jobs have a local time passed twice (daylight saving time ended): read as the "
            "earlier instant, Start and End as the first not before Submit and Start"
        )
    t0 = math.floor(min(j.submit for j in kept))
    header["UnixStartTime"] = str(t0)
    header["TimeZone"] = zone[0]
    submit = np.array([j.submit for j in kept]) - t0
    wait = np.array([j.start - j.submit for j in kept])
    if (wait < 0).any():
        warns.append(
            f"{int((wait < 0).sum())} jobs start before their submit time; their logged wait is taken as 0"
        )
        wait = np.maximum(wait, 0.0)
    runtime = np.array([j.runtime for j in kept])
    estimate, given, default_value, source = _estimates(kept, runtime, m, default_estimate, notes)
    if m is not None and m.queues:
        limit = np.array([m.queues.get(j.partition, (math.inf, 0.0))[0] for j in kept])
        over = estimate > limit
        if over.any():
            warns.append(
                f"{int(over.sum())} jobs have a Timelimit above their partition's maximum; they are kept"
            )

    columns: dict[str, np.ndarray] = {}
    tables: dict[str, tuple[str, ...]] = {}
    for column, attr, values in (
        ("user", "user", [j.user for j in kept]),
        ("group", "group", [j.group for j in kept]),
        ("job_name", "executable", [j.job_name for j in kept]),
        ("queue", "queue", [j.partition for j in kept]),
        ("partition", "partition", [j.partition for j in kept]),
    ):
        codes: dict[str, int] = {}
        columns[attr] = np.array(
            [codes.setdefault(v, len(codes)) if v else -1 for v in values], dtype=np.int64
        )
        if codes:
            tables[column] = tuple(codes)
    chunks_k, per_k = chunks[order], per_chunk[order]
    size = chunks_k * per_k[:, 0]
    procs_k, procs_source = _size(m, machine_source, procs, header, spath, size, warns)
    job_id = np.array([j.job_id for j in kept], dtype=np.int64)
    status = np.array([SWF_STATUS.get(j.state, -1) for j in kept], dtype=np.int64)
    cpus_k = cpus[order]
    mem_k = mem[order]
    req_mem = np.where(np.isnan(mem_k), -1.0, np.round(mem_k * 1024.0 / np.maximum(cpus_k, 1)))
    k = len(kept)
    raw = np.full((k, 18), -1.0)
    raw[:, 0] = job_id
    raw[:, 1] = submit
    raw[:, 2] = wait
    raw[:, 3] = runtime
    raw[:, 4] = size
    raw[:, 7] = size
    raw[:, 8] = np.where(given, estimate, -1.0)
    raw[:, 9] = req_mem
    raw[:, 10] = status
    for col, attr in zip(
        (11, 12, 13, 14, 15), ("user", "group", "executable", "queue", "partition"), strict=True
    ):
        raw[:, col] = columns[attr]
    report = LoadReport(
        path=spath,
        job_lines=job_lines,
        jobs_kept=k,
        dropped=dropped,
        default_estimates=int((~given).sum()),
        procs=procs_k,
        procs_source=procs_source,
        default_estimate=default_value,
        default_estimate_source=source,
        notes=tuple(notes),
        warnings=tuple(warns),
    )
    name = Path(spath).name
    for ext in (".gz", ".sacct"):
        name = name.removesuffix(ext)
    return Workload(
        name=name,
        procs=procs_k,
        job_id=job_id,
        submit=submit,
        runtime=runtime,
        procs_req=size,
        estimate=estimate,
        user=columns["user"],
        group=columns["group"],
        executable=columns["executable"],
        queue=columns["queue"],
        partition=columns["partition"],
        status=status,
        requested_memory=req_mem,
        log_wait=wait,
        raw=raw,
        header=header,
        report=report,
        chunks=chunks_k,
        per_chunk=per_k,
        resources=resources,
        machine=m,
        names=tables,
    )


def _estimates(
    jobs: list[_Job],
    runtime: np.ndarray,
    m: Machine | None,
    default_estimate: float | None,
    notes: list[str],
) -> tuple[np.ndarray, np.ndarray, float | None, str]:
    """``(estimate, given, default value, its source)``: Timelimit, else the rule of :func:`read_sacct`."""
    estimate = np.array([j.limit if isinstance(j.limit, float) else math.nan for j in jobs])
    given = ~np.isnan(estimate)
    if given.all():
        return estimate, given, None, ""
    missing = np.flatnonzero(~given)
    kinds: dict[str, int] = {}
    for j in missing:
        kind = jobs[j].limit if isinstance(jobs[j].limit, str) else "blank"
        kinds[str(kind)] = kinds.get(str(kind), 0) + 1
    shown = {NO_LIMIT: NO_LIMIT, PARTITION_LIMIT: PARTITION_LIMIT, "blank": "blank"}
    notes.append("Timelimit without a duration: " + ", ".join(f"{shown[k]} {n}" for k, n in kinds.items()))
    if default_estimate is not None:
        estimate[missing] = default_estimate
        return estimate, given, default_estimate, f"argument ({len(missing)} jobs)"
    sources: dict[str, int] = {}
    largest_of: dict[str, float] = {}
    for j in np.flatnonzero(given):
        p = jobs[j].partition
        largest_of[p] = max(largest_of.get(p, 0.0), float(estimate[j]))
    default_value: float | None = None
    for j in missing:
        p = jobs[j].partition
        if m is not None and p in m.queues:
            estimate[j] = m.queues[p][0]
            what = f"the partition's maximum wall-time on machine {m.name!r}"
        elif p in largest_of:
            estimate[j] = largest_of[p]
            what = "the largest Timelimit of the partition in the log"
        else:
            if default_value is None:
                if given.any():
                    default_value = float(estimate[given].max())
                else:
                    default_value = float(max(runtime.max(), 1.0))
            estimate[j] = default_value
            what = (
                "the largest Timelimit in the log"
                if given.any()
                else "the longest run time, as the log has no Timelimit"
            )
        sources[what] = sources.get(what, 0) + 1
    source = "; ".join(f"{what} ({n} jobs)" for what, n in sources.items())
    return estimate, given, default_value, source
