"""SWF header lines, and what :func:`~hpcgym.workloads.read_swf` takes from them.

A trace's ``; Key: value`` lines state its machine (``MaxProcs``, ``MaxNodes``) and, in a
file :func:`~hpcgym.workloads.write_swf` wrote, the estimate of jobs without one
(:data:`DEFAULT_ESTIMATE_KEY`). :func:`_machine_size` decides the machine size by the rule
of :mod:`hpcgym.workloads.swf`, with the sizes the papers used for known traces
(:data:`KNOWN_MACHINES`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

from hpcgym.common.errors import TraceFormatError
from hpcgym.workloads.swf_fields import _NUMBER_RE
from hpcgym.workloads.workload import MAX_PROCS

KNOWN_MACHINES: dict[str, tuple[int, str]] = {
    "SDSC-SP2": (128, "Tsafrir et al. 2007 Table 1"),
    "CTC-SP2": (512, "Tsafrir et al. 2007 Table 1"),
    "KTH-SP2": (100, "Tsafrir et al. 2007 Table 1"),
    "SDSC-BLUE": (1152, "Tsafrir et al. 2007 Table 1"),
}
"""Machine sizes the papers used for Parallel Workloads Archive traces, by the log's name.

:func:`~hpcgym.workloads.read_swf` applies them to a file whose name (without ``.swf``/``.gz``)
is the key or starts with the key and ``-`` (``CTC-SP2-1996-3.1-cln.swf.gz``), says so in the
load report, and lets the ``procs`` argument override them."""

DEFAULT_ESTIMATE_KEY = "DefaultEstimate"
"""Header key in which :func:`~hpcgym.workloads.write_swf` records the estimate of jobs without one."""
MACHINE_SOURCE_KEY = "MaxProcsSource"
"""Header key in which :func:`~hpcgym.workloads.write_swf` says ``MaxProcs`` is the simulated
machine's size, which :func:`~hpcgym.workloads.read_swf` then keeps even for a file named like a
trace of :data:`KNOWN_MACHINES`."""

_HEADER_RE = re.compile(r"^;\s*([A-Za-z]+)\s*:\s*(.*?)\s*$")


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
