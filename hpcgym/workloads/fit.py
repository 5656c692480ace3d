"""A workload on a machine: which jobs it can never run, and the workload without them.

A trace or job table names resources and sizes; a :class:`~hpcgym.machine.Machine` may
lack a resource or hold no node large enough. :func:`fit_workload` drops those jobs and
counts them by reason in the load report (nothing is dropped silently);
:func:`describe_unplaceable` says in one sentence why a job cannot run.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from hpcgym.machine import RESOURCE_ALIASES, Machine, align_requests, make_machine
from hpcgym.workloads.workload import DROP_NO_RESOURCE, DROP_TOO_LARGE, Workload


def describe_unplaceable(machine: Machine, workload: Workload, job: int, reason: int) -> str:
    """Why job ``job`` of ``workload`` can never run on ``machine``, in one sentence."""
    chunks = int(workload.chunks[job])
    ask = ", ".join(
        f"{r}={int(a)}" for r, a in zip(workload.resources, workload.per_chunk[job], strict=True) if a
    )
    what = f"job {job} (id {int(workload.job_id[job])}) asks for {chunks} x ({ask})"
    largest = ", ".join(
        f"{r}={int(a)}" for r, a in zip(machine.resources, machine.capacity.max(axis=0), strict=True)
    )
    if reason == 1:
        lacking = [
            r
            for r, a in zip(workload.resources, workload.per_chunk[job], strict=True)
            if a and r not in machine.resources and RESOURCE_ALIASES.get(r) not in machine.resources
        ]
        has = ", ".join(machine.resources)
        return f"{what}, but machine {machine.name!r} has no {', '.join(lacking)} (it has {has})"
    name = f"machine {machine.name!r}"
    if reason == 2:
        return f"{what}, but no node of {name} holds such a chunk (largest per type: {largest})"
    return f"{what}, more than {name} can hold at once ({machine.n_nodes} nodes; largest per type: {largest})"


def fit_workload(workload: Workload, machine: Machine | str | os.PathLike[str]) -> Workload:
    """``workload`` for ``machine``: jobs it can never run dropped and counted, machine attached.

    As for jobs larger than the machine in :func:`~hpcgym.workloads.read_swf`, nothing is
    dropped silently: the load report counts the drops by reason. The returned
    workload's ``machine`` is ``machine``, so a :class:`~hpcgym.sim.Simulator` built on
    it runs on that machine, and its ``procs`` (the size the processor utilization
    divides by) is the machine's total of ``procs`` or ``cores`` if it has either.
    """
    m = make_machine(machine)
    _, _, reason = align_requests(m, workload.resources, workload.chunks, workload.per_chunk)
    keep = reason == 0
    procs = workload.procs
    for name in ("procs", "cores"):
        if name in m.resources:
            procs = int(m.total[m.resources.index(name)])
            break
    report = workload.report
    if report is not None:
        dropped = dict(report.dropped)
        for key, sel in ((DROP_NO_RESOURCE, reason == 1), (DROP_TOO_LARGE, reason >= 2)):
            if sel.any():
                dropped[key] = dropped.get(key, 0) + int(sel.sum())
        changes: dict[str, Any] = {"dropped": dropped, "jobs_kept": int(keep.sum())}
        if procs != report.procs:
            changes.update(procs=procs, procs_source=f"machine {m.name!r}")
        report = dataclasses.replace(report, **changes)
    if keep.all():
        return dataclasses.replace(workload, machine=m, report=report, procs=procs)
    return workload._take(np.flatnonzero(keep), machine=m, report=report, procs=procs)
