"""One CP dispatching instance (:class:`Problem`) and the check of a solution without the model.

:func:`verify_solution` checks every solution the CP dispatchers of
:mod:`hpcgym.baselines.cp` take, independently of the CP-SAT model
(:mod:`hpcgym.baselines.cp_solve`) and of the list schedules (:mod:`hpcgym.baselines.cp_hints`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.common.errors import HpcGymError

__all__ = ["Problem", "VerificationError", "verify_solution"]


class VerificationError(HpcGymError):
    """A CP solution breaks a constraint of the dispatching problem (the message says which)."""


@dataclass
class Problem:
    """One dispatching instance in integer seconds after ``now`` (``t = 0``).

    Resources are "units": the machine's types, or on an exclusive machine one unit per
    node. The pooled problem of HCP is the same with one node holding every unit.

    Attributes:
        capacity: ``(N, U)`` each node's units.
        jobs: ``(J,)`` the modelled waiting jobs (job indices of the workload).
        chunks: ``(J,)`` their chunk counts.
        demand: ``(J, U)`` their units per chunk.
        duration: ``(J,)`` their durations (s, >= 1).
        fixed: ``(J,)`` start fixed by the model (HCP v0's postponed jobs), else -1.
        run_usage: ``(K, N, U)`` what each modelled running job holds on each node.
        run_end: ``(K,)`` its remaining duration (s); it holds its units over ``[0, end)``.
        horizon: ``eoh``: every waiting job ends by it.
        allowed: ``(J, N)`` whether node ``n`` may hold chunks of job ``j`` (its
            capacity covers one chunk).
    """

    capacity: np.ndarray
    jobs: np.ndarray
    chunks: np.ndarray
    demand: np.ndarray
    duration: np.ndarray
    fixed: np.ndarray
    run_usage: np.ndarray
    run_end: np.ndarray
    horizon: int
    allowed: np.ndarray


def verify_solution(problem: Problem, start: np.ndarray, counts: np.ndarray) -> None:
    """Check a schedule and allocation of ``problem`` without the CP model.

    Args:
        problem: the instance.
        start: ``(J,)`` each modelled job's start (s after now).
        counts: ``(J, N)`` the chunks each job has on each node.

    Raises:
        VerificationError: a start before now or after ``horizon - duration``, a start
            that differs from a fixed one, a job whose chunks do not add up to its
            request, or a node and unit over capacity at some instant (the instant
            checked is every start, where the load can rise).
    """
    start = np.asarray(start, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    p = problem
    n_jobs = len(p.jobs)
    if start.shape != (n_jobs,) or counts.shape != (n_jobs, len(p.capacity)):
        raise VerificationError(f"solution shape {start.shape}, {counts.shape} does not match the problem")
    for i in range(n_jobs):
        j = int(p.jobs[i])
        if start[i] < 0:
            raise VerificationError(f"job {j} starts {-start[i]} s before now")
        if start[i] + p.duration[i] > p.horizon:
            raise VerificationError(f"job {j} ends after the horizon {p.horizon}")
        if p.fixed[i] >= 0 and start[i] != p.fixed[i]:
            raise VerificationError(f"job {j} was fixed at {p.fixed[i]}, starts at {start[i]}")
        if (counts[i, ~p.allowed[i]] != 0).any():
            raise VerificationError(f"job {j} has chunks on a node that cannot hold one")
        if (counts[i] < 0).any() or counts[i].sum() != p.chunks[i]:
            raise VerificationError(
                f"job {j} has {int(counts[i].sum())} chunks placed, requested {p.chunks[i]}"
            )
    times = np.unique(np.concatenate([start, np.zeros(1, dtype=np.int64)]))
    for t0 in times.tolist():
        load = p.run_usage[p.run_end > t0].sum(axis=0) if len(p.run_end) else np.zeros_like(p.capacity)
        active = (start <= t0) & (t0 < start + p.duration)
        if active.any():
            load = load + np.einsum("jn,ju->nu", counts[active], p.demand[active])
        over = load > p.capacity
        if over.any():
            n, u = np.argwhere(over)[0]
            raise VerificationError(
                f"node {n} unit {u} holds {load[n, u]} > capacity {p.capacity[n, u]} at {t0} s after now"
            )
