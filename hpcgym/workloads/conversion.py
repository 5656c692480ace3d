"""What a file written from a workload keeps: the fields it loses and the values it fills in.

A workload read from SWF carries the 18 fields of every job (``Workload.raw``); a job
table has columns for most of them, not all. :func:`~hpcgym.workloads.write_jobs` and
:func:`~hpcgym.workloads.write_swf` return a :class:`ConversionReport` that counts, per
field, the jobs whose value the written file does not keep, and the jobs given a value
they did not have (an estimate from the default). ``hpcgym convert`` prints it.

What a job table keeps of SWF: job id, submit time, wait (``wait``), run time, requested
processors (``cores``), requested time (``walltime``), used memory (``used_mem_kb``),
status, user, group, executable (``job_name``), queue and partition. It loses the
average CPU time (field 6), the allocated processors (field 5) where they differ from
the requested ones, the requested memory (field 10: a job table's memory is a resource
the machine allocates, which SWF's processor machine lacks), the preceding job (17) and
the think time (18). It writes every job's size and estimate, so a job without a
requested size (field 8 <= 0) gets its allocated one (field 5), as the SWF reader sized it,
and a job without an estimate (field 9 <= 0) the default the reader gave it.

What SWF keeps of a workload: all 18 fields; a job without an estimate stays without
one, and the ``DefaultEstimate`` header gives it the default, unless jobs got different
defaults (a job table's per-queue wall-times): those are written out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hpcgym.workloads.workload import Workload

TABLE_LOSES = {
    5: "average CPU time (SWF field 6)",
    9: "requested memory (SWF field 10)",
    16: "preceding job (SWF field 17)",
    17: "think time (SWF field 18)",
}
"""SWF fields (0-based) a job table has no column for, and how the report names each."""
ALLOCATED = "allocated processors where they differ from requested (SWF field 5)"
REQUESTED = "requested processors"
ESTIMATE = "estimate"


@dataclass(frozen=True)
class ConversionReport:
    """What a written file does not keep of a workload, and what it fills in.

    Attributes:
        jobs: jobs written.
        target: what was written (``"job table"``, ``"SWF file"``).
        lost: per field, the jobs whose value the file does not keep (fields no job has
            a value in are left out).
        defaulted: per field, ``(jobs, what they were given)``: values the file holds
            that the source did not have.
    """

    jobs: int
    target: str
    lost: Mapping[str, int] = field(default_factory=dict)
    defaulted: Mapping[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether the file keeps every value and fills in none."""
        return not self.lost and not self.defaulted

    def __str__(self) -> str:
        text = f"{self.jobs:,} jobs"
        if self.lost:
            kept = ", ".join(f"{what} ({_jobs(n)})" for what, n in self.lost.items())
            text += f"; not kept in the {self.target}: {kept}"
        if self.defaulted:
            given = ", ".join(f"{what} ({_jobs(n)}, {how})" for what, (n, how) in self.defaulted.items())
            text += f"; defaulted: {given}"
        if self.complete:
            text += "; nothing lost, nothing defaulted"
        return text


def table_report(workload: Workload) -> ConversionReport:
    """What a job table written from ``workload`` loses and fills in (see the module)."""
    w = workload
    raw = np.asarray(w.raw, dtype=np.float64)
    lost: dict[str, int] = {}
    for k, what in TABLE_LOSES.items():
        n = int(_known(raw[:, k]).sum())
        if n:
            lost[what] = n
    differs = int((_known(raw[:, 4]) & (raw[:, 4] != np.asarray(w.procs_req))).sum())
    if differs:
        lost[ALLOCATED] = differs
    defaulted: dict[str, tuple[int, str]] = {}
    unrequested = int((~(raw[:, 7] > 0) & (raw[:, 4] > 0)).sum())
    if unrequested:
        defaulted[REQUESTED] = (unrequested, "set to the allocated ones (SWF field 5)")
    missing = ~(raw[:, 8] > 0)
    if missing.any():
        defaulted[ESTIMATE] = (int(missing.sum()), _given(w, w.estimate[missing]))
    return ConversionReport(len(w), "job table", lost, defaulted)


def swf_report(workload: Workload) -> ConversionReport:
    """What an SWF file written from ``workload`` fills in (it keeps every field; see the module)."""
    w = workload
    missing = ~(np.asarray(w.raw[:, 8], dtype=np.float64) > 0)
    defaulted: dict[str, tuple[int, str]] = {}
    if missing.any():
        first = float(w.estimate[missing][0])
        written = missing & (w.estimate != first)  # the DefaultEstimate header holds only one
        if written.any():
            defaulted[ESTIMATE] = (int(written.sum()), _given(w, w.estimate[written]))
    return ConversionReport(len(w), "SWF file", {}, defaulted)


def _known(values: np.ndarray) -> np.ndarray:
    """SWF's -1 is "unknown"; so is NaN (a public view)."""
    return np.isfinite(values) & (values != -1)


def _jobs(n: int) -> str:
    return "1 job" if n == 1 else f"{n:,} jobs"


def _given(w: Workload, values: np.ndarray) -> str:
    lo, hi = float(values.min()), float(values.max())
    text = f"set to {lo:,.0f} s" if lo == hi else f"set to {lo:,.0f}-{hi:,.0f} s"
    source = w.report.default_estimate_source if w.report is not None else ""
    return f"{text}, {source}" if source else text
