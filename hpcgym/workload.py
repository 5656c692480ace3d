"""Workloads: Standard Workload Format (SWF) traces as numpy columns.

A :class:`Workload` holds one job per row in columnar numpy arrays, sorted by submit
time. :func:`read_swf` reads a plain or gzipped SWF file, applies the rules of the
design card and returns the workload together with a :class:`LoadReport` that counts
every line read and every job dropped, by reason. Nothing is dropped silently.

SWF rules (see the field table in ``traces/README.md``):

* requested processors = field 8 if > 0, else field 5 (allocated processors);
* estimate = field 9 if > 0, else ``default_estimate``;
* a job with run time < 0 (cancelled before it ran), no submit time (-1, as in the
  cancelled jobs of LLNL-Thunder), size <= 0, or size larger than the machine is
  dropped and counted in the report, under the first of these reasons that applies;
* a malformed line (wrong field count, a field that is not a number, an impossible
  value) raises :class:`~hpcgym.errors.TraceFormatError` naming the file and line.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import io
import os
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from hpcgym.errors import InvalidConfigError, TraceFormatError

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

DROP_RUNTIME = "runtime < 0 (cancelled before start)"
DROP_NO_SUBMIT = "submit time missing (-1)"
DROP_SIZE = "size <= 0"
DROP_TOO_LARGE = "size > machine"
DROP_NO_RESOURCE = "asks for a resource the machine lacks"
DEFAULT_ESTIMATE_KEY = "DefaultEstimate"
"""Header key in which :func:`write_swf` records the estimate of jobs without one."""
DEFAULT_TRACE = "SDSC-SP2-1998-4.2-cln-first10k.swf.gz"
"""File name of the slice of SDSC-SP2 shipped as package data (first 10,000 jobs)."""

_HEADER_RE = re.compile(r"^;\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")


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
        procs_source: where ``procs`` came from (``"MaxProcs"``, ``"MaxNodes"``,
            ``"argument"`` or ``"largest job"``).
        offset: jobs skipped at the start of the trace by the window.
        load_factor: the load scaling applied (1.0 = none).
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

    @property
    def jobs_dropped(self) -> int:
        """Total number of jobs dropped, all reasons together."""
        return int(sum(self.dropped.values()))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dictionary of the report."""
        out = dataclasses.asdict(self)
        out["dropped"] = dict(self.dropped)
        out["jobs_dropped"] = self.jobs_dropped
        return out

    def __str__(self) -> str:
        lines = [
            f"trace {self.path}: {self.job_lines} job lines, {self.jobs_kept} jobs kept, "
            f"{self.jobs_dropped} dropped",
        ]
        lines += [f"  dropped {n}: {reason}" for reason, n in self.dropped.items() if n]
        if self.default_estimates:
            lines.append(f"  {self.default_estimates} jobs had no estimate and got the default")
        lines.append(f"  machine: {self.procs} processors (from {self.procs_source})")
        if self.offset:
            lines.append(f"  window starts after {self.offset} jobs")
        if self.load_factor != 1.0:
            lines.append(
                f"  load scaled by {self.load_factor:g} (inter-arrival times / {self.load_factor:g})"
            )
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
            (:func:`hpcgym.machine.fit_workload`); ``None`` means
            ``Machine.processors(procs)``, one node of ``procs`` processors.
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
        if self.procs <= 0:
            raise InvalidConfigError(f"procs must be positive, got {self.procs}")

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
                are not checked against it here (:func:`hpcgym.machine.fit_workload`).

        Raises:
            InvalidConfigError: columns of different lengths, submit times not sorted,
                or a request that is not positive whole numbers; the message names the
                column and the job.

        >>> w = Workload.from_columns([0, 5], [60, 30], [4, 2], [100, 100], procs=8)
        >>> len(w), w.procs, int(w.user[0])
        (2, 8, 1)
        >>> g = Workload.from_columns([0], [60], None, [100], chunks=[2],
        ...                           per_chunk=[[8, 1]], resources=("cores", "gpus"), procs=16)
        >>> int(g.procs_req[0]), g.resources
        (16, ('cores', 'gpus'))
        """
        submit_a = np.asarray(submit, dtype=np.float64).reshape(-1)
        n = len(submit_a)
        runtime_a = np.asarray(runtime, dtype=np.float64).reshape(-1)
        estimate_a = np.asarray(estimate, dtype=np.float64).reshape(-1)
        request = _request_columns(n, procs_req, chunks, per_chunk, resources)
        chunks_a, per_chunk_a, resources_t = request
        if procs_req is None:
            names = list(resources_t)
            col = next((names.index(r) for r in ("cores", "procs") if r in names), None)
            size = chunks_a * per_chunk_a[:, col] if col is not None else chunks_a.copy()
        else:
            size = _whole(procs_req, "procs_req").reshape(-1)
        if procs is None:
            if machine is not None:
                procs = int(machine.total[0])
            else:
                procs = int(size.max()) if len(size) and size.max() > 0 else 1
        if not len(runtime_a) == len(size) == len(estimate_a) == n:
            raise InvalidConfigError(
                "submit, runtime, procs_req and estimate must have one entry per job; got lengths "
                f"{n}, {len(runtime_a)}, {len(size)}, {len(estimate_a)}"
            )
        if np.any(np.diff(submit_a) < 0):
            raise InvalidConfigError("submit times must be sorted (non-decreasing)")

        def ids(values: ArrayLike | None, default: int, what: str) -> np.ndarray:
            if values is None:
                return np.full(n, default, dtype=np.int64)
            out = np.asarray(values, dtype=np.int64).reshape(-1)
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
        return dataclasses.replace(self, procs=int(procs), machine=None)


def _whole(values: ArrayLike, name: str, n: int | None = None) -> np.ndarray:
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
        size = _whole(procs_req, "procs_req").reshape(-1)
        return np.ones(len(size), dtype=np.int64), size.reshape(-1, 1).copy(), ("procs",)
    names = tuple(str(r) for r in resources)  # type: ignore[union-attr]
    if not names or len(set(names)) != len(names):
        raise InvalidConfigError(f"resources must be distinct names, got {names!r}")
    chunks_a = _whole(chunks, "chunks", n).reshape(-1)  # type: ignore[arg-type]
    per = _whole(per_chunk, "per_chunk", n)  # type: ignore[arg-type]
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
    """The file's text, gunzipped if need be, with universal newlines (\r\n and \r become \n)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise TraceFormatError(name, None, f"not a readable gzip file ({err})") from err
    with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace") as fh:
        return fh.read()


_NUMBER_RE = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE
)
"""A number as SWF files write it (non-finite spellings match here and are rejected as values)."""


def _parse_line(path: str, lineno: int, line: str) -> np.ndarray:
    """One job line as 18 values; raises the precise error for a malformed line."""
    tokens = line.split()
    if len(tokens) != 18:
        raise TraceFormatError(
            path, lineno, f"expected 18 fields, found {len(tokens)}: {line.strip()[:80]!r}"
        )
    for i, tok in enumerate(tokens):
        if not _NUMBER_RE.fullmatch(tok):
            raise TraceFormatError(path, lineno, f"field {i + 1} ({SWF_FIELDS[i]}) is not a number: {tok!r}")
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
    """Reject values no SWF file can hold; the error names the first offending line."""
    checks: tuple[tuple[np.ndarray, str], ...] = (
        (~np.isfinite(data).all(axis=1), "a field is not finite"),
        (np.asarray((data < -1).any(axis=1)), "a field is below -1 (SWF uses -1 for 'missing')"),
        ((data[:, 1] < 0) & (data[:, 1] != -1), "submit time (field 2) is negative"),
        (data[:, 0] != np.floor(data[:, 0]), "job id (field 1) is not a whole number"),
        (
            (data[:, 4] != np.floor(data[:, 4])) | (data[:, 7] != np.floor(data[:, 7])),
            "processor count (field 5 or 8) is not a whole number",
        ),
    )
    bad_rows = np.zeros(len(data), dtype=bool)
    for bad, _ in checks:
        bad_rows |= bad
    if bad_rows.any():  # report the first bad line of the file, whatever is wrong with it
        row = int(np.argmax(bad_rows))
        what = next(what for bad, what in checks if bad[row])
        fields = " ".join(f"{v:g}" for v in data[row])
        raise TraceFormatError(path, int(line_numbers[row]), f"{what}: {fields}")


def parse_header(text: str) -> dict[str, str]:
    """``; Key: value`` header lines as a dict (the first value of a repeated key wins)."""
    header: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        m = _HEADER_RE.match(line)
        if m and m.group(1) not in header:
            header[m.group(1)] = m.group(2)
    return header


def _header_int(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.match(r"\s*(\d+)", value)
    return int(m.group(1)) if m else None


def read_swf(
    path: str | os.PathLike[str],
    *,
    procs: int | None = None,
    default_estimate: float | None = None,
) -> Workload:
    """Read an SWF trace (plain or gzipped) into a :class:`Workload`.

    Args:
        path: the file.
        procs: machine size; by default the header's ``MaxProcs`` (else ``MaxNodes``,
            else the largest job, which the report then says).
        default_estimate: estimate for jobs without one (field 9 <= 0). By default the
            header's ``DefaultEstimate`` (written by :func:`write_swf`), else the
            largest estimate in the trace, or, in traces with no estimates at all, the
            largest run time (a stand-in for a queue's wall-time limit).

    Returns:
        The workload; ``workload.report`` is its :class:`LoadReport`.

    Raises:
        TraceFormatError: a line is malformed; the message names the file and line.
        FileNotFoundError: the file does not exist.
    """
    p = Path(path)
    spath = str(path)
    text = _open_text(p, spath)
    header = parse_header(text)

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

    procs_source = "argument"
    if procs is None:
        for key in ("MaxProcs", "MaxNodes"):
            v = _header_int(header.get(key))
            if v:
                procs, procs_source = v, key
                break
    size = np.where(data[:, 7] > 0, data[:, 7], data[:, 4]).astype(np.int64)
    runtime = data[:, 3]
    if procs is None:
        runs = runtime >= 0  # cancelled jobs are dropped anyway: they do not size the machine
        largest = int(size[runs].max()) if runs.any() else 0
        procs = largest if largest > 0 else 1
        procs_source = "largest job"
    if procs <= 0:
        raise InvalidConfigError(f"procs must be positive, got {procs}")

    drop_runtime = runtime < 0
    drop_submit = ~drop_runtime & (data[:, 1] < 0)
    drop_size = ~drop_runtime & ~drop_submit & (size <= 0)
    drop_large = ~drop_runtime & ~drop_submit & ~drop_size & (size > procs)
    keep = ~(drop_runtime | drop_submit | drop_size | drop_large)
    dropped = {
        DROP_RUNTIME: int(drop_runtime.sum()),
        DROP_NO_SUBMIT: int(drop_submit.sum()),
        DROP_SIZE: int(drop_size.sum()),
        DROP_TOO_LARGE: int(drop_large.sum()),
    }
    dropped = {k: v for k, v in dropped.items() if v}

    kept = data[keep]
    order = np.argsort(kept[:, 1], kind="stable")
    kept = kept[order]
    size = size[keep][order]

    est = kept[:, 8]
    has_est = est > 0
    if default_estimate is None and DEFAULT_ESTIMATE_KEY in header:
        try:
            default_estimate = float(header[DEFAULT_ESTIMATE_KEY])
        except ValueError:
            raise TraceFormatError(
                spath,
                None,
                f"header {DEFAULT_ESTIMATE_KEY} is not a number: {header[DEFAULT_ESTIMATE_KEY]!r}",
            ) from None
    if default_estimate is None:
        if has_est.any():
            default_estimate = float(est[has_est].max())
        elif len(kept):
            default_estimate = float(max(kept[:, 3].max(), 1.0))
        else:
            default_estimate = 1.0
    if not (np.isfinite(default_estimate) and default_estimate > 0):
        raise InvalidConfigError(f"default_estimate must be positive, got {default_estimate}")
    estimate = np.where(has_est, est, float(default_estimate))

    report = LoadReport(
        path=spath,
        job_lines=n,
        jobs_kept=len(kept),
        dropped=dropped,
        default_estimates=int((~has_est).sum()),
        procs=int(procs),
        procs_source=procs_source,
    )
    name = p.name
    for ext in (".gz", ".swf"):
        name = name.removesuffix(ext)
    return Workload(
        name=name,
        procs=int(procs),
        job_id=kept[:, 0].astype(np.int64),
        submit=kept[:, 1].copy(),
        runtime=kept[:, 3].copy(),
        procs_req=size,
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
    would otherwise get a different default when read back. Reading the file back with
    :func:`read_swf` gives the same columns.
    """
    rows = np.array(workload.raw, dtype=np.float64, copy=True)
    rows[:, 1] = workload.submit
    if start is not None:
        rows[:, 2] = np.asarray(start, dtype=np.float64) - workload.submit
    hdr = dict(workload.header if header is None else header)
    hdr["MaxProcs"] = str(workload.procs)
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
    return Path(str(resources.files("hpcgym.data").joinpath(DEFAULT_TRACE)))


def load_default(**kwargs: object) -> Workload:
    """Read the bundled default trace; keyword arguments go to :func:`read_swf`."""
    return read_swf(default_trace_path(), **kwargs)  # type: ignore[arg-type]
