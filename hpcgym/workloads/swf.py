"""Workloads: Standard Workload Format (SWF) traces, read and written.

:func:`read_swf` reads a plain or gzipped SWF file, applies the rules of the design card
and returns a :class:`~hpcgym.workloads.Workload` together with a
:class:`~hpcgym.workloads.LoadReport` that counts every line read and every job dropped,
by reason. Nothing is dropped silently. :func:`write_swf` writes a workload back;
:func:`load_default` reads the trace slice shipped with hpcgym. The job lines are parsed
and checked in :mod:`hpcgym.workloads.swf_fields`, the header lines read in
:mod:`hpcgym.workloads.swf_header`.

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
  hpcgym uses (:data:`~hpcgym.workloads.USED_FIELDS`: id, submit, run time, sizes, estimate,
  user, executable, queue, partition), a value below -1 or a fractional value in a field
  that holds a whole number;
* odd values in the fields hpcgym does not use (a status of -4, a group id of 3.7) are
  not fatal: the lines are kept, and the odd values are counted in the report's
  ``warnings`` (and one :class:`~hpcgym.common.errors.TraceWarning` is issued);
* a file with no job left to simulate raises :class:`~hpcgym.common.errors.EmptyWorkloadError`
  naming the file and what was dropped.

The machine size is, in this order: the ``procs`` argument; the size the papers used for
a known trace (:data:`~hpcgym.workloads.KNOWN_MACHINES`, e.g. CTC-SP2: 512 where the header
says 338), with a note in the report; the header's ``MaxProcs``, else ``MaxNodes``; else the
largest job, with a warning, since a machine guessed too small makes queues explode.
"""

from __future__ import annotations

import gzip
import io
import math
import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

import numpy as np

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError, TraceFormatError, TraceWarning
from hpcgym.common.files import control_characters, text_lines, write_atomic
from hpcgym.workloads.catalogue import resolve_trace
from hpcgym.workloads.conversion import ConversionReport, swf_report
from hpcgym.workloads.swf_fields import _odd_values, _parse_job_lines, _validate_values
from hpcgym.workloads.swf_header import (
    DEFAULT_ESTIMATE_KEY,
    MACHINE_SOURCE_KEY,
    _header_default_estimate,
    _header_entries,
    _machine_size,
)
from hpcgym.workloads.workload import (
    _EXACT,
    DROP_REPEATED_ID,
    DROP_RUNTIME,
    DROP_TOO_LARGE,
    LoadReport,
    Workload,
    _show,
    check_procs,
    real_number,
    repeated_ids,
    repeated_ids_note,
    unsorted_note,
)

DROP_NO_SUBMIT = "submit time missing (-1)"
DROP_SIZE = "size <= 0"
DROP_PARTITION = "partition not selected (field 16)"
DROP_ZERO_RUNTIME = "runtime = 0 (RLScheduler's reading)"

READINGS = ("hpcgym", "rlscheduler")
"""How :func:`read_swf` turns SWF lines into jobs: hpcgym's rules (the design card) or
RLScheduler's (its ``job.py``, for ``--protocol rlscheduler``)."""
DEFAULT_TRACE = "SDSC-SP2-1998-4.2-cln-first10k.swf.gz"
"""File name of the slice of SDSC-SP2 shipped as package data (first 10,000 jobs)."""


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
        path: the file, or the name of a downloaded log of the trace catalogue
            (``"SDSC-SP2-1998-4.2-cln"``; an existing path wins, see
            :func:`~hpcgym.workloads.catalogue.resolve_trace`).
        procs: machine size; by default the size the papers used for a known trace
            (:data:`~hpcgym.workloads.KNOWN_MACHINES`), else the header's ``MaxProcs`` (else
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
        MissingTraceError: ``path`` is a catalogue name whose log is not downloaded (the
            message says ``hpcgym traces fetch NAME``).
    """
    if reading not in READINGS:
        raise InvalidConfigError(f"reading: must be one of {', '.join(READINGS)}, got {reading!r}")
    if procs is not None:
        procs = check_procs(procs)
    if default_estimate is not None:
        default_estimate = _check_default_estimate(default_estimate)
    parts = check_partitions(partitions)
    p = resolve_trace(path)
    spath = str(path) if p == Path(path) else str(p)
    name = trace_name(p)
    entries, data, lineno, content = _read_lines(p, spath)
    header = {key: value for key, (_, value) in entries.items()}

    n = len(data)
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
    drop_repeat = repeated_ids(data[:, 0], candidates & ~drop_large)
    keep = candidates & ~drop_large & ~drop_repeat
    if drop_repeat.any():
        first = int(np.argmax(drop_repeat))
        notes.append(repeated_ids_note(int(drop_repeat.sum()), f"line {lineno[first]}", int(data[first, 0])))
    dropped = {
        DROP_PARTITION: int(drop_part.sum()),
        DROP_RUNTIME: int(drop_runtime.sum()),
        DROP_ZERO_RUNTIME: int(drop_zero.sum()),
        DROP_NO_SUBMIT: int(drop_submit.sum()),
        DROP_SIZE: int(drop_size.sum()),
        DROP_TOO_LARGE: int(drop_large.sum()),
        DROP_REPEATED_ID: int(drop_repeat.sum()),
    }
    dropped = {k: v for k, v in dropped.items() if v}
    if parts is not None:
        present = set(np.unique(data[:, 15]).astype(np.int64).tolist())
        absent = [q for q in parts if q not in present]
        if absent:
            warns.append(f"no job line has partition {', '.join(map(str, absent))}")
    if not keep.any():
        raise EmptyWorkloadError(_nothing_left(spath, content, n, dropped, data, parts))

    rows = np.flatnonzero(keep)
    order = np.argsort(data[rows, 1], kind="stable")  # by submit time, ties in file order
    if (np.diff(data[rows, 1]) < 0).any():
        notes.append(unsorted_note(int((order != np.arange(len(rows))).sum()), "job lines"))
    rows = rows[order]
    size_kept = size[rows].astype(np.int64)
    kept = _take_rows(data, rows)
    del data, size, runtime, rows

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
    workload = Workload(
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
    workload._compact_raw()  # the raw fields the columns hold are not kept twice
    return workload


_PIECE_LINES = 16_384
"""Job lines parsed at a time: a trace's text is never in memory whole (a full PWA log
has 10^5 to 10^6 lines), only one piece of it and the numbers parsed so far."""


def _read_lines(path: Path, spath: str) -> tuple[dict[str, tuple[int, str]], np.ndarray, np.ndarray, str]:
    """Read an SWF file a piece at a time: its header, job lines and, without them, what it holds.

    Returns:
        The header entries (:func:`~hpcgym.workloads.swf_header._header_entries` of the
        lines before the first job line), the job lines as an ``(n, 18)`` array, their
        line numbers, and, when there are no job lines, what the file holds instead for
        the error ("it is empty", "comment and header lines only", or the first line
        that looks blank only because it holds control characters, such as 0x1C-0x1F,
        which Python counts as white space); "" when there are job lines.

    Each piece of :data:`_PIECE_LINES` job lines is parsed and checked as it is read, so
    the error names the first malformed line of the file, as when the file was parsed
    whole; a gzip file damaged further on is reported instead, as before (it used to be
    unpacked whole before any line was parsed).

    Text mode already turned \\r\\n and \\r into \\n; other characters ``str.splitlines()``
    breaks at (form feed, U+2028, ...) do not end a line in SWF, so line numbers stay those
    of an editor.
    """
    lines = text_lines(path, spath)
    head: list[str] = []  # the lines before the first job line
    in_header = True
    has_text = False
    control = ""  # the first line that looks blank only because it holds control characters
    pieces: list[np.ndarray] = []
    numbers: list[np.ndarray] = []
    job_lines: list[str] = []
    line_numbers: list[int] = []

    def parse_piece() -> None:
        lineno = np.asarray(line_numbers, dtype=np.int64)
        values = _parse_job_lines(spath, job_lines, line_numbers)
        _validate_values(spath, values, lineno)
        pieces.append(values)
        numbers.append(lineno)
        job_lines.clear()
        line_numbers.clear()

    try:
        for i, line in enumerate(lines, start=1):
            s = line.lstrip()
            if in_header:
                if s and not line.startswith(";"):
                    in_header = False
                else:
                    head.append(line)
            if not s:
                if not control and (found := control_characters(line)):
                    control = f"line {i} holds only white space and {found}: not SWF text"
                continue
            has_text = True
            if s.startswith(";"):
                continue
            job_lines.append(line)
            line_numbers.append(i)
            if len(job_lines) == _PIECE_LINES:
                parse_piece()
        if job_lines:
            parse_piece()
    except TraceFormatError:
        for _ in lines:  # a damaged gzip file further on is what to report first
            pass
        raise
    entries = _header_entries("\n".join(head))
    if not pieces:
        content = control or ("comment and header lines only" if has_text else "it is empty")
        return entries, np.empty((0, 18), dtype=np.float64), np.empty(0, dtype=np.int64), content
    data = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    pieces.clear()
    return entries, data, np.concatenate(numbers), ""


def _take_rows(data: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``data[rows]``; when ``rows`` only leaves rows out (ascending), made in ``data`` itself.

    A trace is usually in submit order already, so the kept rows are its rows less the
    dropped ones: moved up a piece at a time, they take no second copy of the file's
    numbers (``data`` is overwritten; the result is its first ``len(rows)`` rows).
    """
    m = len(rows)
    if not m or (rows[1:] <= rows[:-1]).any():
        return data[rows]
    if rows[-1] == m - 1:  # ascending from 0 to m - 1: every row, in order
        return data[:m]
    for first in range(0, m, _PIECE_LINES):
        block = rows[first : first + _PIECE_LINES]  # rows[i] >= i: nothing read yet is overwritten
        data[first : first + len(block)] = data[block]
    return data[:m]


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


def _nothing_left(
    path: str,
    content: str,
    n: int,
    dropped: Mapping[str, int],
    data: np.ndarray,
    parts: tuple[int, ...] | None,
) -> str:
    """The message of :class:`EmptyWorkloadError` for a file with no job left."""
    if n == 0:
        return f"{path}: no jobs to simulate: the file has no job lines ({content})"
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
) -> ConversionReport:
    """Write a workload as SWF (gzipped when ``path`` ends in ``.gz``).

    The 18 fields of every job are written as read, except the submit time (which
    reflects load scaling). With ``start`` (one start time per job, e.g. a simulated
    schedule) field 3 (wait) becomes ``start - submit``. The estimate given to jobs
    without one goes into a ``DefaultEstimate`` header line, since a window of a trace
    would otherwise get a different default when read back; ``MaxProcs`` is the
    workload's machine size, marked by a ``MaxProcsSource`` line as hpcgym's so that
    reading the file back keeps it. Reading the file back with :func:`read_swf` gives
    the same columns and machine. The file is written to a temporary file in its folder and
    renamed into place.

    Returns:
        What the file fills in: the estimates written out for jobs that had none when
        they got different defaults (:class:`~hpcgym.workloads.conversion.ConversionReport`;
        SWF keeps every field of the workload).
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
    write_atomic(p, gzip.compress(data, compresslevel=6, mtime=0) if p.suffix == ".gz" else data)
    return swf_report(workload)


def default_trace_path() -> Path:
    """Path of the trace slice shipped with hpcgym (first 10,000 jobs of SDSC-SP2)."""
    return Path(str(resources.files("hpcgym.workloads.data").joinpath(DEFAULT_TRACE)))


def load_default(**kwargs: object) -> Workload:
    """Read the bundled default trace; keyword arguments go to :func:`read_swf`."""
    return read_swf(default_trace_path(), **kwargs)  # type: ignore[arg-type]
