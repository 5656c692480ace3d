"""SWF job lines: the 18 fields, parsed into an array and checked.

:func:`~hpcgym.workloads.read_swf` gives its job lines to :func:`_parse_job_lines`, which
returns one row of 18 values per line, and checks them with :func:`_validate_values`: a
malformed line is a :class:`~hpcgym.common.errors.TraceFormatError` naming the file and
line; :func:`_odd_values` counts the odd values of the fields hpcgym does not use, which
are never fatal.
"""

from __future__ import annotations

import io
import re

import numpy as np

from hpcgym.common.errors import TraceFormatError
from hpcgym.workloads.workload import _EXACT

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
