"""The workload: jobs as numpy columns (:class:`Workload`) and what reading them reported.

A :class:`Workload` holds one job per row in columnar numpy arrays, sorted by submit
time; every reader (:func:`~hpcgym.workloads.read_swf`, :func:`~hpcgym.workloads.read_jobs`)
and generator (:func:`~hpcgym.workloads.eurora`) returns one, and its operations (a
window of jobs, a load scaled, the view a dispatcher may see) return new ones. Its
:class:`LoadReport` counts every line read and every job dropped, by reason. The checks
of a machine size (:func:`check_procs`) and of a number (:func:`real_number`) live here,
as every reader and the environment's configuration use them.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from hpcgym.common.errors import InvalidConfigError

if TYPE_CHECKING:
    from hpcgym.machine import Machine

_EXACT = 2.0**53
"""Whole numbers up to here survive the float64 round trip exactly."""

MAX_PROCS = 1_000_000_000
"""The largest machine size accepted, in processors (the largest machines have about 10^7 cores)."""

_HIDDEN_RAW = [2, 3, 5, 6]
"""0-based SWF fields :attr:`Workload.public` hides: wait, run time, CPU time and memory used."""
_RAW_COLUMNS = (
    (0, "job_id"),
    (1, "submit"),
    (2, "log_wait"),
    (3, "runtime"),
    (9, "requested_memory"),
    (10, "status"),
    (11, "user"),
    (12, "group"),
    (13, "executable"),
    (14, "queue"),
    (15, "partition"),
)
"""0-based SWF fields a :class:`Workload` column holds as read (``Workload._compact_raw``)."""
_RAW_REST = [4, 5, 6, 7, 8, 16, 17]
"""0-based SWF fields no column holds as read: sizes, CPU time, memory used, requested time,
preceding job and think time."""

DROP_RUNTIME = "runtime < 0 (cancelled before start)"
DROP_TOO_LARGE = "size > machine"
DROP_NO_RESOURCE = "asks for a resource the machine lacks"
DROP_REPEATED_ID = "job id repeats an earlier job's"
"""Reasons to drop a job that every reader shares (keys of :attr:`LoadReport.dropped`); the SWF
and job-table readers add their own."""


def repeated_ids(job_id: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The rows, among ``candidates``, whose job id an earlier candidate row already has.

    The rule of every reader (SWF, job tables, Slurm logs): a job id names one job, so a
    row (line) whose id an earlier row of the file has, among the jobs not dropped for
    another reason, is dropped as :data:`DROP_REPEATED_ID` and counted; the first row
    with the id is kept. Simulating both would give two jobs one id, and their schedule
    rows (``--schedule-out``) and everything matched by job id could not tell them apart.
    Ids below 0 (SWF's -1: unknown) never repeat.

    Args:
        job_id: every row's job id, in file order.
        candidates: a mask of the rows not dropped for another reason.

    >>> repeated_ids(np.array([3, 5, 3, -1, -1, 5]), np.array([True, False, True, True, True, True])).tolist()
    [False, False, True, False, False, False]
    """
    out = np.zeros(len(job_id), dtype=bool)
    rows = np.flatnonzero(candidates & (job_id >= 0))
    _, first = np.unique(job_id[rows], return_index=True)
    repeat = np.ones(len(rows), dtype=bool)
    repeat[first] = False
    out[rows[repeat]] = True
    return out


def repeated_ids_note(count: int, where: str, job: int) -> str:
    """The load report's note on the rows :func:`repeated_ids` dropped."""
    return (
        f"{count} job{'s' if count > 1 else ''} repeated an earlier job's id and "
        f"{'were' if count > 1 else 'was'} dropped, the first with each id kept (first repeat: "
        f"{where}, job {job}); give every job its own id to keep them all"
    )


def unsorted_note(moved: int, rows: str = "rows") -> str:
    """The load report's note when the jobs were not in submit order and were sorted."""
    return (
        f"{rows} were not in submit order: sorted by submit time (stable: equal times keep file order; "
        f"{moved} {rows} moved)"
    )


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
            :data:`~hpcgym.workloads.KNOWN_MACHINES`, ``"MaxProcs"``, ``"MaxNodes"`` or ``"largest job"``).
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
            :meth:`scale_load` (used by :func:`~hpcgym.workloads.write_swf`).
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
            # the same numbers as procs_req: both columns are read-only, so they share them
            per_chunk = np.ascontiguousarray(self.procs_req, dtype=np.int64).reshape(-1, 1)
            object.__setattr__(self, "per_chunk", per_chunk)
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
        The raw SWF fields agree with the columns, so :func:`~hpcgym.workloads.write_swf` writes a
        file that :func:`~hpcgym.workloads.read_swf` reads back to the same columns (SWF keeps only
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
        """Jobs ``idx`` with ``changes``; checked again unless only ``report`` changes."""
        cols = {name: np.ascontiguousarray(getattr(self, name)[idx]) for name in self._COLUMNS}
        cols.update(changes)  # type: ignore[arg-type]
        if changes.keys() <= {"report"}:  # rows of a checked workload pass every check
            return self._derive(cols)
        return dataclasses.replace(self, **cols)  # type: ignore[arg-type]

    def _derive(self, changes: dict[str, object]) -> Workload:
        """``dataclasses.replace(self, **changes)`` without :meth:`__post_init__`'s checks.

        Only for values made from this workload's own, which passed them: its rows (a
        window, an episode's jobs) and hidden columns (:attr:`public`); an episode's reset
        makes two such workloads, and the checks were a fifth of it. The changed columns
        are made read-only, as the checks make them.
        """
        new = object.__new__(type(self))
        d = new.__dict__
        for name in _FIELDS:
            d[name] = changes[name] if name in changes else getattr(self, name)
        for name in changes.keys() & _COLUMN_SET:
            d[name].flags.writeable = False  # type: ignore[attr-defined]
        return new

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

        The view's ``raw`` is made when it is first read: predictors and dispatchers read
        the columns, and a full trace's raw fields take tens of MB (232,000 jobs: 33 MB).
        """
        hidden = np.full(len(self), np.nan)  # run time and logged wait: one read-only NaN column
        d = self.__dict__
        parts = {key: d[key] for key in ("_raw_rest", "_raw_source") if key in d}
        if not parts:
            parts = {"_raw_source": self.raw}
        stand_in = next(iter(parts.values()))  # for the column checks; the view has no raw yet
        view = self._derive({"runtime": hidden, "log_wait": hidden, "raw": stand_in})
        object.__delattr__(view, "raw")
        for key, value in parts.items():
            object.__setattr__(view, key, value)
        object.__setattr__(view, "_raw_hide", True)
        return view

    def _compact_raw(self) -> None:
        """Keep of ``raw`` only the fields no column holds, if the columns give back the rest exactly.

        A reader calls it on the workload it has just made (:func:`~hpcgym.workloads.read_swf`):
        ``raw`` is a full trace's largest array (232,000 jobs: 33 MB) and 11 of its 18 fields
        are columns already, so 7 are kept (13 MB). ``raw`` is made again, the same bytes,
        when first read (writing SWF, a window, load scaling); a file whose columns do not
        give its fields back bit for bit (a fractional status, a -0) keeps ``raw`` whole.
        """
        raw = self.__dict__.get("raw")
        if raw is None or raw.ndim != 2 or raw.shape[1] != 18:
            return
        for k, name in _RAW_COLUMNS:
            column = np.asarray(getattr(self, name), dtype=np.float64)
            if not np.array_equal(column.view(np.int64), raw[:, k].view(np.int64)):
                return
        rest = np.ascontiguousarray(raw[:, _RAW_REST])
        rest.flags.writeable = False
        object.__setattr__(self, "_raw_rest", rest)
        object.__delattr__(self, "raw")

    def __getattr__(self, name: str) -> np.ndarray:
        # reached only when an attribute is missing: raw fields kept in parts, made on first use
        d = self.__dict__
        if name != "raw" or not ("_raw_rest" in d or "_raw_source" in d):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if "_raw_rest" in d:
            raw = np.empty((len(self), 18))
            for k, column in _RAW_COLUMNS:
                raw[:, k] = d[column]
            raw[:, _RAW_REST] = d["_raw_rest"]
        else:
            raw = d["_raw_source"].copy()
        if d.get("_raw_hide"):
            raw[:, _HIDDEN_RAW] = -1
        raw.flags.writeable = False
        object.__setattr__(self, "raw", raw)
        for key in ("_raw_rest", "_raw_source"):
            d.pop(key, None)
        return raw

    def with_procs(self, procs: int) -> Workload:
        """The same jobs on a machine of ``procs`` processors (jobs larger are not dropped here)."""
        return dataclasses.replace(self, procs=check_procs(procs), machine=None)


_FIELDS = tuple(f.name for f in dataclasses.fields(Workload))
_COLUMN_SET = frozenset(Workload._COLUMNS)


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
