"""List schedules of a CP dispatching instance: 002's leftmost branch and the solution hints.

:func:`greedy_schedule` places the jobs one by one in a given order, each as early as it
fits (compiled); :func:`best_hint` keeps the cheapest, by the model's objective
(:func:`objective_value`), of the priority order and the Smith-rule orders of
:func:`hint_orders`. The CP dispatchers (:mod:`hpcgym.baselines.cp`) hand it to CP-SAT as
a solution hint, or take it as the decision when it is provably optimal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hpcgym.baselines.cp_problem import Problem

__all__ = ["best_hint", "greedy_schedule", "hint_orders", "objective_value"]


@njit(cache=True)
def _greedy_kernel(
    capacity: np.ndarray,
    chunks: np.ndarray,
    demand: np.ndarray,
    duration: np.ndarray,
    fixed: np.ndarray,
    allowed: np.ndarray,
    run_usage: np.ndarray,
    run_end: np.ndarray,
    horizon: int,
    rows: np.ndarray,
    start: np.ndarray,
    counts: np.ndarray,
) -> bool:
    """:func:`greedy_schedule` into ``start`` and ``counts``; False: no room by the horizon."""
    n_nodes, n_units = capacity.shape
    n_jobs = len(chunks)
    most = 2 + 2 * (len(run_end) + n_jobs)
    cuts = np.empty(most, dtype=np.int64)
    load = np.zeros((most, n_nodes, n_units), dtype=np.int64)
    cuts[0] = 0
    cuts[1] = horizon + 1
    n_cuts = 2
    usage = np.zeros((n_nodes, n_units), dtype=np.int64)
    room = np.zeros((n_nodes, n_units), dtype=np.int64)
    per = np.zeros(n_nodes, dtype=np.int64)
    # fixed and running intervals first, then the rows in order (index -1: running job k)
    for step in range(len(run_end) + n_jobs + len(rows)):
        if step < len(run_end):
            s, e = 0, run_end[step]
            usage[:, :] = run_usage[step]
        elif step < len(run_end) + n_jobs:
            i = step - len(run_end)
            if fixed[i] < 0:
                continue
            s, e = fixed[i], fixed[i] + duration[i]
            start[i] = fixed[i]
            counts[i, 0] = chunks[i]
            usage[:, :] = 0
            usage[0, :] = chunks[i] * demand[i]
        else:
            i = rows[step - len(run_end) - n_jobs]
            d, c = duration[i], chunks[i]
            found = False
            for b0 in range(n_cuts - 1):
                s = cuts[b0]
                if s + d > horizon:
                    return False
                room[:, :] = capacity
                b = b0
                while b < n_cuts - 1 and cuts[b] < s + d:
                    for n in range(n_nodes):
                        for u in range(n_units):
                            r = capacity[n, u] - load[b, n, u]
                            if r < room[n, u]:
                                room[n, u] = r
                    b += 1
                total = 0
                for n in range(n_nodes):
                    k = c
                    if allowed[i, n]:
                        for u in range(n_units):
                            if demand[i, u] > 0:
                                q = room[n, u] // demand[i, u] if room[n, u] > 0 else 0
                                if q < k:
                                    k = q
                    else:
                        k = 0
                    per[n] = k
                    total += k
                if total >= c:
                    left = c
                    usage[:, :] = 0
                    for n in range(n_nodes):
                        t = per[n] if per[n] < left else left
                        counts[i, n] = t
                        left -= t
                        for u in range(n_units):
                            usage[n, u] = t * demand[i, u]
                    start[i] = s
                    e = s + d
                    found = True
                    break
            if not found:
                return False
        if e <= s:
            continue
        if e > horizon + 1:
            e = horizon + 1
        # split at s and e, then add the usage on [s, e)
        for x in (s, e):
            b = n_cuts - 1
            while cuts[b] > x:
                b -= 1
            if cuts[b] != x:
                for q in range(n_cuts, b + 1, -1):
                    cuts[q] = cuts[q - 1]
                    load[q] = load[q - 1]
                cuts[b + 1] = x
                load[b + 1] = load[b]
                n_cuts += 1
        b = 0
        while cuts[b] < s:
            b += 1
        while cuts[b] < e:
            load[b] += usage
            b += 1
    return True


def greedy_schedule(problem: Problem, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A schedule of ``problem`` built job by job in the order ``rows`` (a list schedule).

    002's schedule-or-postpone picks, at each node of the search, the most urgent job
    and starts it as early as it fits. This is the leftmost branch of that search: each
    job in ``rows`` (modelled rows, most urgent first) starts at the earliest instant
    (0 or the end of an interval already placed) at which, throughout its duration,
    enough nodes have room for its chunks, and takes them node by node in index order.
    Fixed jobs and running jobs are placed first. Returns ``(start, counts)`` or None
    when some job finds no start by the horizon (a shrunk horizon, 002 section 4).
    Compiled (numba): a list schedule of 100 jobs on 64 nodes takes about a millisecond.
    """
    p = problem
    n_jobs = len(p.jobs)
    start = np.full(n_jobs, -1, dtype=np.int64)
    counts = np.zeros((n_jobs, len(p.capacity)), dtype=np.int64)
    ok = _greedy_kernel(
        np.ascontiguousarray(p.capacity, dtype=np.int64),
        np.ascontiguousarray(p.chunks, dtype=np.int64),
        np.ascontiguousarray(p.demand, dtype=np.int64),
        np.ascontiguousarray(p.duration, dtype=np.int64),
        np.ascontiguousarray(p.fixed, dtype=np.int64),
        np.ascontiguousarray(p.allowed, dtype=np.bool_),
        np.ascontiguousarray(p.run_usage, dtype=np.int64).reshape(len(p.run_end), *p.capacity.shape),
        np.ascontiguousarray(p.run_end, dtype=np.int64),
        int(p.horizon),
        np.ascontiguousarray(rows, dtype=np.int64),
        start,
        counts,
    )
    return (start, counts) if ok else None


def objective_value(
    problem: Problem, start: np.ndarray, weights: np.ndarray, offset: np.ndarray | None
) -> int:
    """The model's objective of ``start``: ``sum w_i s_i``, or ``sum w_i max(0, s_i + o_i)`` (PCP v0-v2)."""
    n = len(weights)
    s = np.asarray(start[:n], dtype=np.int64)
    if offset is not None:
        s = np.maximum(0, s + offset)
    return int((np.asarray(weights, dtype=np.int64) * s).sum())


def hint_orders(problem: Problem, rows: np.ndarray, weights: np.ndarray) -> list[np.ndarray]:
    """The list-schedule orders :func:`best_hint` tries: the priority order ``rows`` first.

    Then three Smith-rule orders (weighted shortest processing time, optimal for
    ``sum w_i C_i`` on one machine and a classic list-scheduling rule for the
    cumulative case): by ``d_i / w_i``; by ``d_i a_i / w_i`` with ``a_i`` the job's share
    of the machine summed over resource types; and by ``d_i u_i / w_i`` with ``u_i`` its
    units summed over types. Ties keep arrival order.
    """
    n = len(weights)
    idx = np.arange(n)
    d = problem.duration[:n].astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    total = np.asarray(problem.chunks[:n, None] * problem.demand[:n], dtype=np.float64)
    share = (total / np.maximum(problem.capacity.sum(axis=0), 1)[None, :]).sum(axis=1)
    keys = (d / w, d * share / w, d * total.sum(axis=1) / w)
    return [np.asarray(rows, dtype=np.int64)] + [np.lexsort((idx, k)) for k in keys]


def best_hint(
    problem: Problem, rows: np.ndarray, weights: np.ndarray, offset: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The best list schedule (lowest objective) over :func:`hint_orders`, or None if none fits.

    002 searches from the priority order; a hint only tells CP-SAT where to start, and
    the objective decides. Trying the Smith-rule orders as well costs well under a
    millisecond each (:func:`greedy_schedule` is compiled), and with one worker and a
    short limit CP-SAT seldom improves much on where it starts: ``docs/CP.md`` compares
    the decisions of this hint (``search=hint``) and of the priority one alone
    (``search=priority``).
    Ties go to the earlier order, so the priority schedule wins when it is as good.
    """
    best: tuple[np.ndarray, np.ndarray] | None = None
    best_value = 0
    for order in hint_orders(problem, rows, weights):
        sched = greedy_schedule(problem, order)
        if sched is None:
            continue
        value = objective_value(problem, sched[0], weights, offset)
        if best is None or value < best_value:
            best, best_value = sched, value
    return best
