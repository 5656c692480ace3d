"""Why the engine refused a decision: the message of :class:`~hpcgym.common.errors.InvalidDecisionError`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcgym.machine import Machine
from hpcgym.sim import _kernels as ek

_STATE_NAMES = ("not submitted yet", "waiting", "already running", "already ended")


def refusal(
    machine: Machine, a: Any, now: float, j: int, code: int, jobs: np.ndarray, nodes: np.ndarray, k: int
) -> str:
    """Why the engine refused to start job ``j`` (the ``k``-th of ``jobs``) at ``now``.

    Args:
        machine: the engine's machine.
        a: the engine's buffers (:func:`hpcgym.sim._kernels.views`).
        code: the kernel's refusal (``NOT_WAITING``, ``DOES_NOT_FIT`` or a bad placement).
        jobs, nodes: the decision; ``nodes`` the placements, concatenated in job order.
    """
    if code == ek.NOT_WAITING:
        what = "no such job" if not 0 <= j < len(a.state) else _STATE_NAMES[a.state[j]]
        return f"cannot start job {j} at t={now:g}: {what}"
    ask = _amounts(machine.resources, a.per_chunk[j])
    chunks = int(a.chunks[j])
    free = _amounts(machine.resources, a.free.sum(axis=0), machine.total)
    if code == ek.DOES_NOT_FIT:
        nodes_note = f" on {machine.n_nodes} nodes" if machine.n_nodes > 1 else ""
        return (
            f"job {j} needs {chunks} x ({ask}) but it does not fit the free resources at "
            f"t={now:g} (free: {free}{nodes_note})"
        )
    valid = jobs[(jobs >= 0) & (jobs < len(a.chunks))]
    need = int(a.chunks[valid].sum())
    if k == 0 and len(nodes) != need:
        return (
            f"placement: {len(nodes)} node indices given for {len(jobs)} jobs with {need} chunks "
            "in all (one node per chunk, concatenated in job order)"
        )
    pos = int(a.chunks[jobs[:k]].sum())
    placement = nodes[pos : pos + chunks].tolist()
    return (
        f"job {j} cannot start at t={now:g} on nodes {placement}: a node does not exist "
        f"(the machine has {machine.n_nodes}) or would be over-used by its chunks of ({ask})"
        + (" (this machine gives each chunk a whole, entirely free node)" if machine.exclusive else "")
    )


def _amounts(names: Sequence[str], values: np.ndarray, of: np.ndarray | None = None) -> str:
    parts = []
    for i, (r, v) in enumerate(zip(names, values, strict=True)):
        if of is None and not v:
            continue
        parts.append(f"{r}={int(v)}" + (f" of {int(of[i])}" if of is not None else ""))
    return ", ".join(parts)
