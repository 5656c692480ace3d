"""Workloads: Standard Workload Format (SWF) traces as numpy columns.

A :class:`Workload` holds one job per row in columnar numpy arrays, sorted by submit
time. :func:`read_swf` reads a plain or gzipped SWF file, applies the rules of the
design card and returns the workload together with a :class:`LoadReport` that counts
every line read and every job dropped, by reason. Nothing is dropped silently.

SWF rules (see the field table in ``traces/README.md``):

* requested processors = field 8 if > 0, else field 5 (allocated processors);
* estimate = field 9 if > 0, else ``default_estimate`` (the report says which value
  and where it came from);
* a job outside the selected ``partitions`` (field 16), with run time < 0 (cancelled
  before it ran), no submit time (-1, as in the cancelled jobs of LLNL-Thunder),
  size <= 0, or size larger than the machine is dropped and counted in the report,
  under the first of these reasons that applies;
* a malformed line raises :class:`~hpcgym.common.errors.TraceFormatError` naming the file and
  line: a wrong field count, a field that is not a finite number, and, in the fields
  hpcgym uses (:data:`USED_FIELDS`: id, submit, run time, sizes, estimate, user,
  executable, queue, partition), a value below -1 or a fractional value in a field that
  holds a whole number;
* odd values in the fields hpcgym does not use (a status of -4, a group id of 3.7) are
  not fatal: the lines are kept, and the odd values are counted in the report's
  ``warnings`` (and one :class:`~hpcgym.common.errors.TraceWarning` is issued);
* a file with no job left to simulate raises :class:`~hpcgym.common.errors.EmptyWorkloadError`
  naming the file and what was dropped.

The machine size is, in this order: the ``procs`` argument; the size the papers used for
a known trace (:data:`KNOWN_MACHINES`, e.g. CTC-SP2: 512 where the header says 338),
with a note in the report; the header's ``MaxProcs``, else ``MaxNodes``; else the
largest job, with a warning, since a machine guessed too small makes queues explode.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import io
import math
import numbers
import os
import re
import warnings
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError, TraceWarning

if TYPE_CHECKING:
    from hpcgym.machine import Machine

SWF_FIELDS = (
    "job_id",
    "submit",
    "wait",
    "runtime",
    "allocated_procs",
    "avg_cpu_time",
    "used_memory",
    "requested_procs",
    "requested_time",
    "requested_memory",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)
"""The 18 SWF fields, in file order."""

USED_FIELDS = (0, 1, 3, 4, 7, 8, 11, 13, 14, 15)
"""0-based indices of the SWF fields hpcgym uses: job id, submit, run time, allocated and
requested processors, requested time (estimate), user, executable, queue, partition."""
_WHOLE_FIELDS = (0, 4, 7, 10, 11, 12, 13, 14, 15, 16)
"""0-based indices of the SWF fields that hold whole numbers (ids, counts, status)."""
_WHOLE_USED = tuple(i for i in _WHOLE_FIELDS if i in USED_FIELDS)
_ID_FIELDS = (0, 11, 13, 14, 15)
"""0-based indices of the identifier fields hpcgym uses (job, user, executable, queue, partition)."""
_WHOLE_UNUSED = tuple(i for i in _WHOLE_FIELDS if i not in USED_FIELDS)
_UNUSED = tuple(i for i in range(18) if i not in USED_FIELDS)
_EXACT = 2.0**53
"""Whole numbers up to here survive the float64 round trip exactly."""

MAX_PROCS = 1_000_000_000
"""The largest machine size accepted, in processors (the largest machines have about 10^7 cores)."""

KNOWN_MACHINES: dict[str, tuple[int, str]] = {
    "SDSC-SP2": (128, "Tsafrir et al. 2007 Table 1"),
    "CTC-SP2": (512, "Tsafrir et al. 2007 Table 1"),
    "KTH-SP2": (100, "Tsafrir et al. 2007 Table 1"),
    "SDSC-BLUE": (1152, "Tsafrir et al. 2007 Table 1"),
}
"""Machine sizes the papers used for Parallel Workloads Archive traces, by the log's name.

:func:`read_swf` applies them to a file whose name (without ``.swf``/``.gz``) is the key
or starts with the key and ``-`` (``CTC-SP2-1996-3.1-cln.swf.gz``), says so in the load
report, and lets the ``procs`` argument override them."""

DROP_RUNTIME = "runtime < 0 (cancelled before start)"
DROP_NO_SUBMIT = "submit time missing (-1)"
DROP_SIZE = "size <= 0"
DROP_TOO_LARGE = "size > machine"
DROP_PARTITION = "partition not selected (field 16)"
DROP_NO_RESOURCE = "asks for a resource the machine lacks"
DROP_ZERO_RUNTIME = "runtime = 0 (RLScheduler's reading)"

READINGS = ("hpcgym", "rlscheduler")
"""How :func:`read_swf` turns SWF lines into jobs: hpcgym's rules (the design card) or
RLScheduler's (its ``job.py``, for ``--protocol rlscheduler``)."""
DEFAULT_ESTIMATE_KEY = "DefaultEstimate"
"""Header key in which :func:`write_swf` records the estimate of jobs without one."""
MACHINE_SOURCE_KEY = "MaxProcsSource"
"""Header key in which :func:`write_swf` says ``MaxProcs`` is the simulated machine's size, which
:func:`read_swf` then keeps even for a file named like a trace of :data:`KNOWN_MACHINES`."""
DEFAULT_TRACE = "SDSC-SP2-1998-4.2-cln-first10k.swf.gz"
"""File name of the slice of SDSC-SP2 shipped as package data (first 10,000 jobs)."""

_HEADER_RE = re.compile(r"^;\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")


def check_procs(value: object, name: str = "procs") -> int:
    """``value`` as a machine size: a whole number of processors from 1 to :data:`MAX_PROCS`.

    Raises:
        InvalidConfigError: anything else; the message names ``name`` and the accepted range.

    >>> check_procs(128), check_procs(64.0)
    (128, 64)
    """
    accepted = f"a whole number of processors from 1 to {MAX_PROCS:,}"
    number = real_number(value)
    shown = _show(value)
    if number is None or not math.isfinite(number) or number != math.floor(number):
        if number is not None and number == math.inf and isinstance(value, numbers.Integral):
            raise InvalidConfigError(f"{name} must be at most {MAX_PROCS:,} ({accepted}), got {shown}")
        raise InvalidConfigError(f"{name} must be {accepted}, got {shown}")
    if number < 1:
        raise InvalidConfigError(f"{name} must be positive ({accepted}), got {shown}")
    if number > MAX_PROCS:
        raise InvalidConfigError(f"{name} must be at most {MAX_PROCS:,} ({accepted}), got {shown}")
    return int(number)


def real_number(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else None.

    The one check behind every numeric parameter (workload loading, machine sizes, the
    environment's configuration): an integer too large for a float becomes ``inf`` or
    ``-inf``, so a caller's ``math.isfinite`` check refuses it with its usual message.

    >>> real_number(3), real_number(2.5), real_number(True), real_number("1"), real_number(10**400)
    (3.0, 2.5, None, None, inf)
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def check_partitions(value: object) -> tuple[int, ...] | None:
    """``value`` (``None``, a partition number, or several) as a sorted tuple of partition numbers.

    Raises:
        InvalidConfigError: a value that is not a whole number, or an empty selection.
    """
    if value is None:
        return None
    items = [value] if isinstance(value, (numbers.Number, str)) else value
    try:
        parts = sorted({_whole(item) for item in items})  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InvalidConfigError(
            f"partitions must be partition numbers (SWF field 16, whole numbers), got {value!r}"
        ) from None
    if not parts:
        raise InvalidConfigError("partitions must name at least one partition number (SWF field 16)")
    return tuple(parts)


def _whole(item: object) -> int:
    number = real_number(item)
    if number is None:
        raise TypeError(item)
    if not math.isfinite(number) or number != math.floor(number) or abs(number) >= _EXACT:
        raise ValueError(item)
    return int(number)


def _float_column(name: str, values: ArrayLike) -> np.ndarray:
    try:
        a = np.asarray(values)
        if a.dtype.kind == "b":
            raise TypeError("booleans")
        return np.asarray(a, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as err:
        raise InvalidConfigError(f"{name} must be numbers, one per job ({err})") from None


def _first_bad(name: str, values: np.ndarray, bad: np.ndarray, accepted: str) -> None:
    if bad.any():
        row = int(np.argmax(bad))
        raise InvalidConfigError(f"{name}[{row}] is {values[row].item()!r}: {name} must be {accepted}")


def _int_column(name: str, values: ArrayLike, accepted: str = "whole numbers") -> np.ndarray:
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return a.astype(np.int64).reshape(-1)
    f = _float_column(name, a)
    _first_bad(name, f, ~np.isfinite(f) | (f != np.floor(f)) | (np.abs(f) >= _EXACT), accepted)
    return f.astype(np.int64)


@dataclass(frozen=True)
class LoadReport:
    """What happened while reading a trace: lines, kept and dropped jobs, by reason.

    Attributes:
        path: the file read.
        job_lines: job lines read (comment and blank lines excluded).
        jobs_kept: jobs in the returned workload.
        dropped: jobs dropped, by reason (empty when none were dropped).
        default_estimates: kept jobs whose estimate came from ``default_estimate``.
        procs: the machine size used.
        procs_source: where ``procs`` came from (``"argument"``, a paper of
            :data:`KNOWN_MACHINES`, ``"MaxProcs"``, ``"MaxNodes"`` or ``"largest job"``).
        offset: jobs skipped at the start of the trace by the window.
        load_factor: the load scaling applied (1.0 = none).
        default_estimate: the estimate given to jobs without one, in seconds.
        default_estimate_source: where it came from (``"argument"``, ``"header
            DefaultEstimate"``, ``"the largest estimate in the trace"`` or ``"the longest
            run time, as the trace has no estimates"``).
        partitions: the partitions (SWF field 16) kept, or ``None`` for all.
        notes: things the reader decided that a user should know (a machine size from
            a paper, not the header).
        warnings: things that look wrong but were not fatal (odd values in unused
            fields, a machine size guessed from the largest job).
    """

    path: str
    job_lines: int
    jobs_kept: int
    dropped: Mapping[str, int]
    default_estimates: int
    procs: int
    procs_source: str
    offset: int = 0
    load_factor: float = 1.0
    default_estimate: float | None = None
    default_estimate_source: str = ""
    partitions: tuple[int, ...] | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def jobs_dropped(self) -> int:
        """Total number of jobs dropped, all reasons together."""
        return int(sum(self.dropped.values()))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dictionary of the report."""
        out = dataclasses.asdict(self)
        out["dropped"] = dict(self.dropped)
        out["jobs_dropped"] = self.jobs_dropped
        for key in ("partitions", "notes", "warnings"):
            if out[key] is not None:
                out[key] = list(out[key])
        return out

    def __str__(self) -> str:
        lines = [
            f"trace {self.path}: {self.job_lines} job lines, {self.jobs_kept} jobs kept, "
            f"{self.jobs_dropped} dropped",
        ]
        if self.partitions is not None:
            lines.append(f"  partitions kept: {', '.join(map(str, self.partitions))}")
        lines += [f"  dropped {n}: {reason}" for reason, n in self.dropped.items() if n]
        if self.default_estimates:
            given = ""
            if self.default_estimate is not None:
                given = f" {self.default_estimate:,.0f} s ({self.default_estimate / 3600:,.1f} h)"
            if self.default_estimate_source:
                given += f", from {self.default_estimate_source}"
            lines.append(
                f"  {self.default_estimates} jobs had no estimate and got the default{given} "
                "(--default-estimate SECONDS sets it)"
            )
        lines.append(f"  machine: {self.procs} processors (from {self.procs_source})")
        if self.offset:
            lines.append(f"  window starts after {self.offset} jobs")
        if self.load_factor != 1.0:
            lines.append(
                f"  load scaled by {self.load_factor:g} (inter-arrival times / {self.load_factor:g})"
            )
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  warning: {warning}" for warning in self.warnings]
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs as numpy columns, sorted by submit time (ties keep file order).

    Every column has one entry per job. Times are seconds as float64; counts and
    identifiers are int64. ``runtime`` is the real run time: the engine uses it to end
    jobs, and only the oracle predictor may show it to a dispatcher.

    A job's request is ``chunks[j]`` x ``per_chunk[j]`` (PBS ``select``): one amount per
    resource type named in ``resources``. An SWF job is one chunk of ``procs_req``
    processors on resource ``procs``; those columns are derived from ``procs_req`` when
    not given. The engine matches ``resources`` to the machine's by name when a
    simulation is built (:func:`hpcgym.machine.align_requests`).

    Attributes:
        name: a short name (the file name without extensions).
        procs: machine size in processors.
        job_id, submit, runtime, procs_req, estimate, user, group, executable, queue,
            partition, status, requested_memory, log_wait: the columns.
        raw: the 18 SWF fields of each job as read, the submit time as scaled by
            :meth:`scale_load` (used by :func:`write_swf`).
        header: ``; Key: value`` header lines of the file.
        report: the load report.
        chunks: ``(n,)`` int64, chunks per job.
        per_chunk: ``(n, len(resources))`` int64, the amount of each resource per chunk.
        resources: names of the ``per_chunk`` columns (``("procs",)`` for SWF).
        machine: the machine the workload was read for
            (:func:`hpcgym.workloads.fit_workload`); ``None`` means
            ``Machine.processors(procs)``, one node of ``procs`` processors.
        names: name tables of identifier columns read from names (a job table's
            ``user``, ``group``, ``job_name``, ``queue``, ``partition``): column ->
            names, so that ``names["queue"][queue[j]]`` is job ``j``'s queue (code -1:
            none given). A column without a table holds numeric ids as read (SWF).
    """

    name: str
    procs: int
    job_id: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    procs_req: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    group: np.ndarray
    executable: np.ndarray
    queue: np.ndarray
    partition: np.ndarray
    status: np.ndarray
    requested_memory: np.ndarray
    log_wait: np.ndarray
    raw: np.ndarray
    header: Mapping[str, str] = field(default_factory=dict)
    report: LoadReport | None = None
    chunks: np.ndarray = None  # type: ignore[assignment]
    per_chunk: np.ndarray = None  # type: ignore[assignment]
    resources: tuple[str, ...] = ()
    machine: Machine | None = None
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    _COLUMNS = (
        "job_id",
        "submit",
        "runtime",
        "procs_req",
        "estimate",
        "user",
        "group",
        "executable",
        "queue",
        "partition",
        "status",
        "requested_memory",
        "log_wait",
        "raw",
        "chunks",
        "per_chunk",
    )

    def __post_init__(self) -> None:
        n = len(self.submit)
        if self.chunks is None and self.per_chunk is None and not self.resources:
            # an SWF job: one chunk of procs_req processors
            object.__setattr__(self, "chunks", np.ones(len(self.procs_req), dtype=np.int64))
            object.__setattr__(
                self, "per_chunk", np.asarray(self.procs_req, dtype=np.int64).reshape(-1, 1).copy()
            )
            object.__setattr__(self, "resources", ("procs",))
        elif self.chunks is None or self.per_chunk is None or not self.resources:
            raise InvalidConfigError("chunks, per_chunk and resources must be given together")
        object.__setattr__(self, "resources", tuple(str(r) for r in self.resources))
        if np.ndim(self.per_chunk) != 2 or np.shape(self.per_chunk)[1] != len(self.resources):
            raise InvalidConfigError(
                f"per_chunk must have one column per resource ({', '.join(self.resources)}), "
                f"got shape {np.shape(self.per_chunk)}"
            )
        for name in self._COLUMNS:
            col = getattr(self, name)
            if len(col) != n:
                raise InvalidConfigError(f"column {name!r} has {len(col)} rows, expected {n}")
            col.flags.writeable = False
        object.__setattr__(self, "procs", check_procs(self.procs))

    def __len__(self) -> int:
        return len(self.submit)

    @classmethod
    def from_columns(
        cls,
        submit: ArrayLike,
        runtime: ArrayLike,
        procs_req: ArrayLike,
        estimate: ArrayLike,
        *,
        procs: int | None = None,
        user: ArrayLike | None = None,
        group: ArrayLike | None = None,
        executable: ArrayLike | None = None,
        queue: ArrayLike | None = None,
        partition: ArrayLike | None = None,
        name: str = "synthetic",
        chunks: ArrayLike | None = None,
        per_chunk: ArrayLike | None = None,
        resources: tuple[str, ...] | list[str] | None = None,
        machine: Machine | None = None,
    ) -> Workload:
        """A workload built from columns: a synthetic, generated or hand-made one.

        Job ``i`` gets SWF job id ``i + 1``; missing identifier columns are -1 (user 1).
        The raw SWF fields agree with the columns, so :func:`write_swf` writes a file
        that :func:`read_swf` reads back to the same columns (SWF keeps only
        ``procs_req`` of a heterogeneous request).

        Requests: either ``procs_req`` alone (one chunk of that many processors, as in
        SWF), or ``chunks``, ``per_chunk`` and ``resources`` (``chunks[j]`` x
        ``per_chunk[j]``, one column per resource name); ``procs_req`` may then be
        ``None`` and becomes each job's total of ``cores`` (or ``procs``), or its chunk
        count if it asks for neither.

        Args:
            procs: machine size in processors; by default the total of the first
                resource of ``machine`` if given, else the largest ``procs_req``.
            machine: the machine the workload is for (see :attr:`machine`); its jobs
                are not checked against it here (:func:`hpcgym.workloads.fit_workload`).

        Every value is checked, since one bad value breaks a simulation far from its
        cause (a NaN submit time never arrives, a negative size frees processors):
        submit times and run times are finite and >= 0, sizes whole numbers from 1 to
        ``procs``, estimates finite and > 0, identifiers whole numbers.

        Raises:
            InvalidConfigError: columns of different lengths, submit times not sorted, a
                value out of range, or a request that is not positive whole numbers; the
                message names the column and the first bad row (job).

        >>> w = Workload.from_columns([0, 5], [60, 30], [4, 2], [100, 100], procs=8)
        >>> len(w), w.procs, int(w.user[0])
        (2, 8, 1)
        >>> Workload.from_columns([0, 5], [60, float("nan")], [4, 2], [100, 100], procs=8)
        Traceback (most recent call last):
        ...
        hpcgym.common.errors.InvalidConfigError: runtime[1] is nan: runtime must be finite and >= 0 (seconds)
        >>> g = Workload.from_columns([0], [60], None, [100], chunks=[2],
        ...                           per_chunk=[[8, 1]], resources=("cores", "gpus"), procs=16)
        >>> int(g.procs_req[0]), g.resources
        (16, ('cores', 'gpus'))
        """
        submit_a = _float_column("submit", submit)
        n = len(submit_a)
        runtime_a = _float_column("runtime", runtime)
        estimate_a = _float_column("estimate", estimate)
        sizes = "whole numbers of processors from 1 to procs"
        if procs_req is not None:  # checked first, so a bad size is named as such
            procs_req = _int_column("procs_req", procs_req, sizes)
        request = _request_columns(n, procs_req, chunks, per_chunk, resources)
        chunks_a, per_chunk_a, resources_t = request
        if procs_req is None:
            names = list(resources_t)
            col = next((names.index(r) for r in ("cores", "procs") if r in names), None)
            size = chunks_a * per_chunk_a[:, col] if col is not None else chunks_a.copy()
        else:
            size = np.asarray(procs_req)
        if procs is None:
            if machine is not None:
                procs = int(machine.total[0])
            else:
                procs = int(size.max()) if len(size) and size.max() > 0 else 1
        procs = check_procs(procs)
        if not len(runtime_a) == len(size) == len(estimate_a) == n:
            raise InvalidConfigError(
                "submit, runtime, procs_req and estimate must have one entry per job; got lengths "
                f"{n}, {len(runtime_a)}, {len(size)}, {len(estimate_a)}"
            )
        for column, values in (("submit", submit_a), ("runtime", runtime_a)):
            _first_bad(column, values, ~(np.isfinite(values) & (values >= 0)), "finite and >= 0 (seconds)")
        _first_bad(
            "estimate", estimate_a, ~(np.isfinite(estimate_a) & (estimate_a > 0)), "finite and > 0 (seconds)"
        )
        if chunks is None:  # a heterogeneous request is checked against its machine instead
            _first_bad("procs_req", size, (size < 1) | (size > procs), f"{sizes} ({procs})")
        if np.any(np.diff(submit_a) < 0):
            row = int(np.argmax(np.diff(submit_a) < 0)) + 1
            raise InvalidConfigError(
                f"submit must be sorted (non-decreasing): submit[{row}] = {submit_a[row].item()!r} "
                f"comes before submit[{row - 1}] = {submit_a[row - 1].item()!r}"
            )

        def ids(values: ArrayLike | None, default: int, what: str) -> np.ndarray:
            if values is None:
                return np.full(n, default, dtype=np.int64)
            out = _int_column(what, values)
            if len(out) != n:
                raise InvalidConfigError(f"{what} must have one entry per job ({n}), got {len(out)}")
            return out

        user_a = ids(user, 1, "user")
        group_a = ids(group, -1, "group")
        executable_a = ids(executable, -1, "executable")
        queue_a = ids(queue, -1, "queue")
        partition_a = ids(partition, -1, "partition")
        raw = np.full((n, 18), -1.0)
        raw[:, 0] = np.arange(1, n + 1)
        raw[:, 1] = submit_a
        raw[:, 3] = runtime_a
        raw[:, 4] = size
        raw[:, 7] = size
        raw[:, 8] = estimate_a
        raw[:, 10] = 1
        raw[:, 11] = user_a
        raw[:, 12] = group_a
        raw[:, 13] = executable_a
        raw[:, 14] = queue_a
        raw[:, 15] = partition_a
        return cls(
            name=name,
            procs=int(procs),
            job_id=np.arange(1, n + 1, dtype=np.int64),
            submit=submit_a.copy(),
            runtime=runtime_a.copy(),
            procs_req=size.copy(),
            estimate=estimate_a.copy(),
            user=user_a,
            group=group_a,
            executable=executable_a,
            queue=queue_a,
            partition=partition_a,
            status=np.ones(n, dtype=np.int64),
            requested_memory=np.full(n, -1.0),
            log_wait=np.full(n, -1.0),
            raw=raw,
            chunks=chunks_a,
            per_chunk=per_chunk_a,
            resources=resources_t,
            machine=machine,
        )

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.submit)

    def _take(self, idx: np.ndarray | slice, **changes: object) -> Workload:
        cols = {name: np.ascontiguousarray(getattr(self, name)[idx]) for name in self._COLUMNS}
        cols.update(changes)  # type: ignore[arg-type]
        return dataclasses.replace(self, **cols)  # type: ignore[arg-type]

    def window(self, n: int | None = None, offset: int = 0) -> Workload:
        """The ``n`` consecutive jobs starting after the first ``offset`` jobs.

        Args:
            n: number of jobs; ``None`` takes every job from ``offset`` on.
            offset: jobs to skip at the start.

        Raises:
            InvalidConfigError: ``offset`` or ``n`` is negative, or the window is empty.
        """
        if offset < 0:
            raise InvalidConfigError(f"offset must be >= 0, got {offset}")
        if n is not None and n <= 0:
            raise InvalidConfigError(f"jobs must be > 0, got {n}")
        stop = len(self) if n is None else min(len(self), offset + n)
        if offset >= len(self):
            raise InvalidConfigError(f"offset {offset} is past the last of {len(self)} jobs")
        report = self.report
        if report is not None:
            report = dataclasses.replace(report, offset=report.offset + offset, jobs_kept=stop - offset)
        return self._take(slice(offset, stop), report=report)

    def scale_load(self, factor: float) -> Workload:
        """The same jobs with the offered load multiplied by ``factor``.

        As in Tsafrir et al. (2007) section 3.4, inter-arrival times are multiplied by a
        constant: here ``1 / factor``, so ``factor=1.2`` offers 20 % more load. The first
        submit time stays where it is.
        """
        if not np.isfinite(factor) or factor <= 0:
            raise InvalidConfigError(f"load factor must be a positive number, got {factor}")
        if factor == 1.0 or len(self) == 0:
            return self
        t0 = self.submit[0]
        submit = t0 + (self.submit - t0) / factor
        report = self.report
        if report is not None:
            report = dataclasses.replace(report, load_factor=report.load_factor * factor)
        raw = self.raw.copy()
        raw[:, 1] = submit  # raw keeps agreeing with the columns (write_swf writes it)
        return self._take(slice(None), submit=submit, raw=raw, report=report)

    @functools.cached_property
    def public(self) -> Workload:
        """This workload with what a dispatcher may not see hidden.

        The real run time (``runtime``, SWF fields 3, 4, 6 and 7: wait, run time, CPU time
        and memory used) is replaced by NaN/-1. Predictors other than the oracle are
        given this view, so they cannot learn from the future by accident.
        """
        raw = self.raw.copy()
        raw[:, [2, 3, 5, 6]] = -1
        hidden = np.full(len(self), np.nan)
        return dataclasses.replace(self, runtime=hidden, log_wait=hidden.copy(), raw=raw)

    def with_procs(self, procs: int) -> Workload:
        """The same jobs on a machine of ``procs`` processors (jobs larger are not dropped here)."""
        return dataclasses.replace(self, procs=check_procs(procs), machine=None)


def _whole_array(values: ArrayLike, name: str, n: int | None = None) -> np.ndarray:
    """``values`` as int64, refusing fractions and non-numbers (the error names ``name``)."""
    a = np.asarray(values)
    if a.dtype.kind not in "iub":
        try:
            f = a.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise InvalidConfigError(f"{name} must hold whole numbers: {err}") from err
        bad = ~np.isfinite(f) | (f != np.floor(f))
        if bad.any():
            idx = np.unravel_index(int(np.argmax(bad)), bad.shape)
            raise InvalidConfigError(f"{name}: entry {idx[0]} is not a whole number: {f[idx]!r}")
        a = f
    a = a.astype(np.int64)
    if n is not None and a.shape[:1] != (n,):
        raise InvalidConfigError(
            f"{name} must have one entry per job ({n}), got {a.shape[0] if a.ndim else 1}"
        )
    return a


def _request_columns(
    n: int,
    procs_req: ArrayLike | None,
    chunks: ArrayLike | None,
    per_chunk: ArrayLike | None,
    resources: tuple[str, ...] | list[str] | None,
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Validated ``(chunks, per_chunk, resources)`` of :meth:`Workload.from_columns`."""
    given = [x is not None for x in (chunks, per_chunk, resources)]
    if any(given) and not all(given):
        raise InvalidConfigError("chunks, per_chunk and resources must be given together")
    if not any(given):
        if procs_req is None:
            raise InvalidConfigError("procs_req is needed unless chunks, per_chunk and resources are given")
        size = _whole_array(procs_req, "procs_req").reshape(-1)
        return np.ones(len(size), dtype=np.int64), size.reshape(-1, 1).copy(), ("procs",)
    names = tuple(str(r) for r in resources)  # type: ignore[union-attr]
    if not names or len(set(names)) != len(names):
        raise InvalidConfigError(f"resources must be distinct names, got {names!r}")
    chunks_a = _whole_array(chunks, "chunks", n).reshape(-1)  # type: ignore[arg-type]
    per = _whole_array(per_chunk, "per_chunk", n)  # type: ignore[arg-type]
    if per.ndim != 2 or per.shape[1] != len(names):
        raise InvalidConfigError(
            f"per_chunk must be a (jobs, {len(names)}) matrix, one column per resource, got shape {per.shape}"
        )
    bad = chunks_a < 1
    if bad.any():
        j = int(np.argmax(bad))
        raise InvalidConfigError(f"chunks: job {j} asks for {chunks_a[j]} chunks; at least 1")
    if (per < 0).any():
        j, r = (int(x) for x in np.argwhere(per < 0)[0])
        raise InvalidConfigError(f"per_chunk: job {j} asks for {per[j, r]} of {names[r]}; amounts are >= 0")
    empty = per.sum(axis=1) == 0
    if empty.any():
        raise InvalidConfigError(f"per_chunk: job {int(np.argmax(empty))} asks for no resource at all")
    return chunks_a, per, names


def _open_text(path: Path, name: str) -> str:
    """The file's text, gunzipped if need be, with universal newlines (\r\n and \r become \n).

    A UTF-8 byte-order mark at the start (some editors on Windows write one) is dropped.
    """
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise TraceFormatError(name, None, f"not a readable gzip file ({err})") from err
    with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace") as fh:
        return fh.read()


_NUMBER_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)
"""A number as SWF files write it (non-finite spellings match here and are rejected as values)."""


def _field(i: int) -> str:
    return f"field {i + 1} ({SWF_FIELDS[i]})"


def _parse_line(path: str, lineno: int, line: str) -> np.ndarray:
    """One job line as 18 values; raises the precise error for a malformed line."""
    tokens = line.split()
    if len(tokens) != 18:
        raise TraceFormatError(
            path, lineno, f"expected 18 fields, found {len(tokens)}: {line.strip()[:80]!r}"
        )
    for i, tok in enumerate(tokens):
        if not _NUMBER_RE.fullmatch(tok):
            raise TraceFormatError(path, lineno, f"{_field(i)} is not a number: {tok!r}")
    row = np.array([float(tok) for tok in tokens], dtype=np.float64)
    _validate_values(path, row[None, :], np.array([lineno]))
    return row


def _parse_job_lines(path: str, job_lines: list[str], line_numbers: list[int]) -> np.ndarray:
    """The job lines as an (n, 18) array; the error for a malformed line names it."""
    try:
        values = np.loadtxt(io.StringIO("\n".join(job_lines)), dtype=np.float64, ndmin=2, comments=None)
        if values.shape == (len(job_lines), 18):
            return values
    except ValueError:
        pass
    # The fast parser failed: go line by line, which finds the first bad line or, for
    # spellings only it rejects (e.g. unusual whitespace), parses the file after all.
    rows = [_parse_line(path, ln, line) for ln, line in zip(line_numbers, job_lines, strict=True)]
    return np.array(rows, dtype=np.float64).reshape(-1, 18)


def _validate_values(path: str, data: np.ndarray, line_numbers: np.ndarray) -> None:
    """Reject values no SWF file can hold in a field hpcgym uses; the error names the first bad line."""
    whole = data[:, _WHOLE_USED]
    below = np.zeros_like(data, dtype=bool)
    below[:, USED_FIELDS] = data[:, USED_FIELDS] < -1
    fractional = np.zeros_like(data, dtype=bool)
    fractional[:, _WHOLE_USED] = whole != np.floor(whole)
    huge_id = np.zeros_like(data, dtype=bool)
    huge_id[:, _ID_FIELDS] = np.abs(data[:, _ID_FIELDS]) >= _EXACT
    negative_submit = np.zeros_like(data, dtype=bool)
    negative_submit[:, 1] = (data[:, 1] < 0) & (data[:, 1] != -1)
    checks = (  # in this order: the first that applies names what is wrong
        (~np.isfinite(data), "is not finite"),
        (below, "is below -1 (SWF uses -1 for 'missing')"),
        (negative_submit, "is negative"),
        (fractional, "is not a whole number"),
        (huge_id, "is too large for an identifier (at most 2^53)"),
    )
    bad_rows = np.zeros(len(data), dtype=bool)
    for bad, _ in checks:
        bad_rows |= bad.any(axis=1)
    if bad_rows.any():  # report the first bad line of the file, whatever is wrong with it
        row = int(np.argmax(bad_rows))
        col, what = next((int(np.argmax(bad[row])), what) for bad, what in checks if bad[row].any())
        fields = " ".join(f"{v:g}" for v in data[row])
        raise TraceFormatError(
            path, int(line_numbers[row]), f"{_field(col)} {what}: {data[row, col]:g}; the line: {fields}"
        )


def _odd_values(data: np.ndarray, line_numbers: np.ndarray) -> list[str]:
    """Odd values in the fields hpcgym does not use: counted, never fatal."""
    found = []
    for i in _UNUSED:
        col = data[:, i]
        kinds = [(col < -1, "below -1")]
        if i in _WHOLE_UNUSED:
            kinds.append((col != np.floor(col), "not a whole number"))
        for bad, what in kinds:
            if bad.any():
                first = int(line_numbers[int(np.argmax(bad))])
                n = int(bad.sum())
                found.append(
                    f"{n} job line{'s' if n > 1 else ''} with {_field(i)} {what} (first: line {first}); "
                    "hpcgym does not use this field, the jobs are kept"
                )
    return found


def parse_header(text: str) -> dict[str, str]:
    """``; Key: value`` header lines as a dict (the first value of a repeated key wins)."""
    return {key: value for key, (_, value) in _header_entries(text).items()}


def _header_entries(text: str) -> dict[str, tuple[int, str]]:
    """``; Key: value`` header lines as ``key -> (line number, value)``; the first of a key wins."""
    header: dict[str, tuple[int, str]] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        m = _HEADER_RE.match(line)
        if m and m.group(1) not in header:
            header[m.group(1)] = (lineno, m.group(2))
    return header


_THOUSANDS_RE = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")


def _header_size(path: str, key: str, entry: tuple[int, str]) -> int | None:
    """The machine size a ``MaxProcs``/``MaxNodes`` header value states, or None for 'unknown'.

    The first word counts (``1664 (72, 1368, 224)`` is 1664); ``1,024`` is 1024; an empty
    value, -1 (SWF's 'missing') and 0 mean unknown. Anything else is an error naming the
    file, line and key: a size read wrong would drop every job as too large.
    """
    lineno, value = entry
    words = value.split("(", 1)[0].split()
    if not words:
        return None
    word = words[0].rstrip(",;")
    if _THOUSANDS_RE.fullmatch(word):
        word = word.replace(",", "")
    try:
        size = float(word) if _NUMBER_RE.fullmatch(word) else math.nan
    except ValueError:
        size = math.nan
    if size in (-1.0, 0.0):
        return None
    if not (math.isfinite(size) and size == math.floor(size) and 1 <= size <= MAX_PROCS):
        raise TraceFormatError(
            path,
            lineno,
            f"header {key}: {value!r} is not a machine size (a whole number of processors from 1 to "
            f"{MAX_PROCS:,}; '1,024' is read as 1024); fix the header or set the size (--procs N)",
        )
    return int(size)


def known_machine(name: str) -> tuple[int, str] | None:
    """``(processors, source)`` of :data:`KNOWN_MACHINES` for a trace name, or None.

    >>> known_machine("CTC-SP2-1996-3.1-cln")
    (512, 'Tsafrir et al. 2007 Table 1')
    >>> known_machine("HPC2N-2002-2.2-cln") is None
    True
    """
    upper = name.upper()
    for key, value in KNOWN_MACHINES.items():
        if upper == key.upper() or upper.startswith(key.upper() + "-"):
            return value
    return None


def trace_name(path: str | os.PathLike[str]) -> str:
    """A trace's name: its file name without ``.gz`` and ``.swf``."""
    name = Path(path).name
    for ext in (".gz", ".swf"):
        name = name.removesuffix(ext)
    return name


def read_swf(
    path: str | os.PathLike[str],
    *,
    procs: int | None = None,
    default_estimate: float | None = None,
    partitions: int | Iterable[int] | None = None,
    reading: str = "hpcgym",
) -> Workload:
    """Read an SWF trace (plain or gzipped) into a :class:`Workload`.

    Args:
        path: the file.
        procs: machine size; by default the size the papers used for a known trace
            (:data:`KNOWN_MACHINES`), else the header's ``MaxProcs`` (else
            ``MaxNodes``), else the largest job (with a :class:`TraceWarning`). The
            report says which.
        default_estimate: estimate for jobs without one (field 9 <= 0), in seconds. By
            default the header's ``DefaultEstimate`` (written by :func:`write_swf`), else
            the largest estimate in the trace, or, in traces with no estimates at all,
            the longest run time (a stand-in for a queue's wall-time limit). The report
            says which.
        partitions: keep only jobs of these partitions (SWF field 16), for traces of
            machines with several; the others are dropped and counted.
        reading: one of :data:`READINGS`. ``"hpcgym"``: size = field 8 if > 0 else
            field 5; jobs with run time < 0 are dropped; estimate = field 9 if > 0 else
            the default estimate. ``"rlscheduler"``, RLScheduler's reading (Zhang et al.,
            SC'20, its ``job.py``): size = the larger of fields 5 and 8; a run time < 0
            (a cancelled job) becomes 10 s and the job is kept; jobs with run time 0 are
            dropped (counted); estimate = field 9 if > 0 else the run time. The report
            counts the jobs each rule changed.

    Returns:
        The workload; ``workload.report`` is its :class:`LoadReport`.

    Raises:
        TraceFormatError: a line or header value is malformed; the message names the
            file and line.
        EmptyWorkloadError: no job is left to simulate (an empty file, or every job was
            dropped); the message names the file and the drops.
        InvalidConfigError: ``procs``, ``default_estimate`` or ``partitions`` is out of range.
        FileNotFoundError: the file does not exist.
    """
    if reading not in READINGS:
        raise InvalidConfigError(f"reading: must be one of {', '.join(READINGS)}, got {reading!r}")
    if procs is not None:
        procs = check_procs(procs)
    if default_estimate is not None:
        default_estimate = _check_default_estimate(default_estimate)
    parts = check_partitions(partitions)
    p = Path(path)
    spath = str(path)
    name = trace_name(p)
    text = _open_text(p, spath)
    entries = _header_entries(text)
    header = {key: value for key, (_, value) in entries.items()}

    # Text mode already turned \r\n and \r into \n; other characters str.splitlines()
    # breaks at (form feed, U+2028, ...) do not end a line in SWF, so line numbers
    # stay those of an editor.
    lines = text.split("\n")
    job_lines: list[str] = []
    line_numbers: list[int] = []
    for i, line in enumerate(lines, start=1):
        s = line.lstrip()
        if not s or s.startswith(";"):
            continue
        job_lines.append(line)
        line_numbers.append(i)
    lineno = np.asarray(line_numbers, dtype=np.int64)

    n = len(job_lines)
    data = _parse_job_lines(spath, job_lines, line_numbers) if n else np.empty((0, 18), dtype=np.float64)
    _validate_values(spath, data, lineno)
    warns = _odd_values(data, lineno)
    notes: list[str] = []

    size = np.where(data[:, 7] > 0, data[:, 7], data[:, 4])  # float: 1e20 stays 1e20
    drop_zero = np.zeros(n, dtype=bool)
    if reading == "rlscheduler":
        data = _rlscheduler_fields(data, notes)
        size = data[:, 4]
        drop_zero = data[:, 3] == 0
    runtime = data[:, 3]
    drop_part = np.zeros(n, dtype=bool) if parts is None else ~np.isin(data[:, 15], parts)
    drop_zero &= ~drop_part
    drop_runtime = ~drop_part & (runtime < 0)
    drop_submit = ~drop_part & ~drop_runtime & (data[:, 1] < 0)
    drop_size = ~drop_part & ~drop_runtime & ~drop_submit & (size <= 0)
    candidates = ~(drop_part | drop_zero | drop_runtime | drop_submit | drop_size)

    procs, procs_source = _machine_size(spath, name, entries, procs, size[candidates], notes, warns)
    if parts is not None and procs_source in ("MaxProcs", "MaxNodes"):
        notes.append(
            f"the header's {procs_source} is the whole machine's; if partitions "
            f"{', '.join(map(str, parts))} had fewer processors, set the size (--procs N)"
        )

    drop_large = candidates & (size > procs)
    keep = candidates & ~drop_large
    dropped = {
        DROP_PARTITION: int(drop_part.sum()),
        DROP_RUNTIME: int(drop_runtime.sum()),
        DROP_ZERO_RUNTIME: int(drop_zero.sum()),
        DROP_NO_SUBMIT: int(drop_submit.sum()),
        DROP_SIZE: int(drop_size.sum()),
        DROP_TOO_LARGE: int(drop_large.sum()),
    }
    dropped = {k: v for k, v in dropped.items() if v}
    if parts is not None:
        present = set(np.unique(data[:, 15]).astype(np.int64).tolist())
        absent = [q for q in parts if q not in present]
        if absent:
            warns.append(f"no job line has partition {', '.join(map(str, absent))}")
    if not keep.any():
        raise EmptyWorkloadError(_nothing_left(spath, text, n, dropped, data, parts))

    kept = data[keep]
    order = np.argsort(kept[:, 1], kind="stable")
    kept = kept[order]
    size_kept = size[keep][order].astype(np.int64)

    est = kept[:, 8]
    has_est = est > 0
    if default_estimate is not None:
        estimate_source = "argument"
    elif DEFAULT_ESTIMATE_KEY in entries:
        default_estimate = _header_default_estimate(spath, entries[DEFAULT_ESTIMATE_KEY])
        estimate_source = f"header {DEFAULT_ESTIMATE_KEY}"
    elif has_est.any():
        default_estimate = float(est[has_est].max())
        estimate_source = "the largest estimate in the trace"
    else:
        default_estimate = float(max(kept[:, 3].max(), 1.0))
        estimate_source = "the longest run time, as the trace has no estimates"
    estimate = np.where(has_est, est, float(default_estimate))

    if warns:
        warnings.warn(f"{spath}: " + "; ".join(warns), TraceWarning, stacklevel=2)
    report = LoadReport(
        path=spath,
        job_lines=n,
        jobs_kept=len(kept),
        dropped=dropped,
        default_estimates=int((~has_est).sum()),
        procs=int(procs),
        procs_source=procs_source,
        default_estimate=float(default_estimate),
        default_estimate_source=estimate_source,
        partitions=parts,
        notes=tuple(notes),
        warnings=tuple(warns),
    )
    return Workload(
        name=name,
        procs=int(procs),
        job_id=kept[:, 0].astype(np.int64),
        submit=kept[:, 1].copy(),
        runtime=kept[:, 3].copy(),
        procs_req=size_kept,
        estimate=estimate,
        user=kept[:, 11].astype(np.int64),
        group=kept[:, 12].astype(np.int64),
        executable=kept[:, 13].astype(np.int64),
        queue=kept[:, 14].astype(np.int64),
        partition=kept[:, 15].astype(np.int64),
        status=kept[:, 10].astype(np.int64),
        requested_memory=kept[:, 9].copy(),
        log_wait=kept[:, 2].copy(),
        raw=kept,
        header=header,
        report=report,
    )


def _rlscheduler_fields(data: np.ndarray, notes: list[str]) -> np.ndarray:
    """The SWF fields as RLScheduler's reader sees them (see :func:`read_swf`'s ``reading``)."""
    data = data.copy()
    size = np.maximum(data[:, 4], data[:, 7])
    resized = int((size != np.where(data[:, 7] > 0, data[:, 7], data[:, 4])).sum())
    data[:, 4] = data[:, 7] = size
    cancelled = data[:, 3] < 0
    data[cancelled, 3] = 10.0
    no_est = data[:, 8] <= 0
    data[no_est, 8] = data[no_est, 3]
    notes.append(
        f"RLScheduler's reading: {int(cancelled.sum())} jobs with run time < 0 kept as 10-s jobs, "
        f"{resized} sized by field 5 (larger than field 8), {int(no_est.sum())} without an estimate "
        "given their run time"
    )
    return data


def _check_default_estimate(value: object, where: str = "default_estimate") -> float:
    number = real_number(value)
    if number is None or not (math.isfinite(number) and number > 0):
        raise InvalidConfigError(f"{where} must be a positive number of seconds, got {_show(value)}")
    return number


def _header_default_estimate(path: str, entry: tuple[int, str]) -> float:
    lineno, value = entry
    try:
        number = float(value) if _NUMBER_RE.fullmatch(value) else math.nan
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise TraceFormatError(
            path,
            lineno,
            f"header {DEFAULT_ESTIMATE_KEY}: {value!r} is not a positive number of seconds; "
            "fix the header or set it (--default-estimate SECONDS)",
        )
    return number


def _machine_size(
    path: str,
    name: str,
    entries: Mapping[str, tuple[int, str]],
    procs: int | None,
    sizes: np.ndarray,
    notes: list[str],
    warns: list[str],
) -> tuple[int, str]:
    """The machine size and where it came from; adds what the user should know to notes/warnings."""
    if procs is not None:
        return procs, "argument"
    known = None if MACHINE_SOURCE_KEY in entries else known_machine(name)
    if known is not None:
        size, source = known
        stated = {key: entries[key][1] for key in ("MaxProcs", "MaxNodes") if key in entries}
        if "MaxProcs" in stated and _header_size(path, "MaxProcs", entries["MaxProcs"]) == size:
            return size, "MaxProcs"  # the paper and the header agree: nothing to say
        says = "; ".join(f"{k}: {v}" for k, v in stated.items()) or "nothing"
        notes.append(f"machine size {size} from {source}; the header says {says}; --procs overrides")
        return size, source
    for key in ("MaxProcs", "MaxNodes"):
        if key in entries:
            size_ = _header_size(path, key, entries[key])
            if size_ is not None:
                return size_, key
    fits = sizes[(sizes > 0) & (sizes <= MAX_PROCS)]
    largest = int(fits.max()) if len(fits) else 1
    warns.append(
        f"machine size {largest} guessed from the largest job: the header states no usable MaxProcs or "
        "MaxNodes; if the machine was larger, queues will grow without bound. Set the size "
        "(--procs N, or read_swf(..., procs=N))"
    )
    return largest, "largest job"


def _nothing_left(
    path: str,
    text: str,
    n: int,
    dropped: Mapping[str, int],
    data: np.ndarray,
    parts: tuple[int, ...] | None,
) -> str:
    """The message of :class:`EmptyWorkloadError` for a file with no job left."""
    if n == 0:
        what = "comment and header lines only" if text.strip() else "it is empty"
        return f"{path}: no jobs to simulate: the file has no job lines ({what})"
    reasons = ", ".join(f"{count} {reason}" for reason, count in dropped.items())
    lines = "the only job line was" if n == 1 else f"all {n} job lines were"
    message = f"{path}: no jobs to simulate: {lines} dropped: {reasons}"
    if parts is not None:
        values, counts = np.unique(data[:, 15].astype(np.int64), return_counts=True)
        present = ", ".join(f"{v} ({c} jobs)" for v, c in zip(values.tolist(), counts.tolist(), strict=True))
        message += f"; partitions selected: {', '.join(map(str, parts))}; in the trace: {present}"
    if dropped.get(DROP_TOO_LARGE):
        message += "; a larger machine (--procs N) would keep the jobs dropped as too large"
    return message


def write_swf(
    path: str | os.PathLike[str],
    workload: Workload,
    *,
    start: np.ndarray | None = None,
    header: Mapping[str, str] | None = None,
) -> None:
    """Write a workload as SWF (gzipped when ``path`` ends in ``.gz``).

    The 18 fields of every job are written as read, except the submit time (which
    reflects load scaling). With ``start`` (one start time per job, e.g. a simulated
    schedule) field 3 (wait) becomes ``start - submit``. The estimate given to jobs
    without one goes into a ``DefaultEstimate`` header line, since a window of a trace
    would otherwise get a different default when read back; ``MaxProcs`` is the
    workload's machine size, marked by a ``MaxProcsSource`` line as hpcgym's so that
    reading the file back keeps it. Reading the file back with :func:`read_swf` gives
    the same columns and machine.
    """
    rows = np.array(workload.raw, dtype=np.float64, copy=True)
    rows[:, 1] = workload.submit
    if start is not None:
        rows[:, 2] = np.asarray(start, dtype=np.float64) - workload.submit
    hdr = dict(workload.header if header is None else header)
    hdr["MaxProcs"] = str(workload.procs)
    hdr[MACHINE_SOURCE_KEY] = "hpcgym (the simulated machine; read_swf keeps MaxProcs)"
    hdr.pop(DEFAULT_ESTIMATE_KEY, None)
    missing = rows[:, 8] <= 0
    if missing.any():
        default = float(workload.estimate[missing][0])
        hdr[DEFAULT_ESTIMATE_KEY] = f"{default:.17g}"
        other = missing & (workload.estimate != default)  # more than one default: write them out
        rows[other, 8] = workload.estimate[other]
    out = io.StringIO()
    for key, value in hdr.items():
        out.write(f"; {key}: {value}\n")
    if len(rows):
        np.savetxt(out, rows, fmt="%.17g", delimiter=" ")
    data = out.getvalue().encode()
    p = Path(path)
    p.write_bytes(gzip.compress(data, compresslevel=6, mtime=0) if p.suffix == ".gz" else data)


def default_trace_path() -> Path:
    """Path of the trace slice shipped with hpcgym (first 10,000 jobs of SDSC-SP2)."""
    return Path(str(resources.files("hpcgym.workloads.data").joinpath(DEFAULT_TRACE)))


def load_default(**kwargs: object) -> Workload:
    """Read the bundled default trace; keyword arguments go to :func:`read_swf`."""
    return read_swf(default_trace_path(), **kwargs)  # type: ignore[arg-type]
