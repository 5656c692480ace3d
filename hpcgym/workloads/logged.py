"""The log's own schedule: when each job of a trace started on the system that logged it.

A trace records every job's wait (SWF field 3), so ``submit + wait`` is its logged start.
The replay dispatcher (:class:`hpcgym.baselines.replay.Replay`) runs it, 003's rangeSets
(:mod:`hpcgym.predict.rangesets`) read the system's state from it, and the log can be
checked on its own for instants that ran more than the machine holds.
"""

from __future__ import annotations

import numpy as np

from hpcgym.workloads.workload import Workload


def logged_start(workload: Workload) -> tuple[np.ndarray, np.ndarray]:
    """Every job's logged start ``submit + wait`` and whether its wait is unknown.

    A job with an unknown (-1) or negative wait gets its submit time.
    """
    wait = np.asarray(workload.log_wait, dtype=np.float64)
    unknown = ~(wait >= 0)  # NaN (a public view) counts as unknown too
    return np.asarray(workload.submit, dtype=np.float64) + np.where(unknown, 0.0, wait), unknown


def log_overcommit(
    start: np.ndarray, runtime: np.ndarray, size: np.ndarray, capacity: float
) -> tuple[int, float]:
    """Instants at which a schedule runs more than ``capacity``, and for how long in all.

    Jobs run over ``[start, start + runtime)``; at one instant the jobs that end there end
    first. An instant counts if it starts a job and the jobs running after it exceed
    ``capacity``, or if a job of zero length starting there does not fit beside the jobs
    running once that instant's ends are done (zero-length jobs may run one after
    another, before the instant's other starts: each must fit alone).
    The time in all is how long the usage stays above ``capacity``.

    >>> log_overcommit(np.array([0.0, 0.0, 5.0]), np.array([10.0, 10.0, 10.0]), np.array([3, 2, 1]), 4)
    (2, 10.0)
    >>> log_overcommit(np.array([0.0, 5.0, 5.0]), np.array([10.0, 0.0, 0.0]), np.array([3, 1, 2]), 4)
    (1, 0.0)
    """
    if len(start) == 0:
        return 0, 0.0
    size = np.asarray(size, dtype=np.float64)
    ran = runtime > 0
    st, rt, sz = start[ran], runtime[ran], size[ran]
    m = len(st)
    times = np.concatenate([st + rt, st])
    delta = np.concatenate([-sz, sz])
    is_start = np.r_[np.zeros(m, dtype=bool), np.ones(m, dtype=bool)]
    order = np.lexsort((is_start, times))  # ends before starts at one instant
    times, delta, is_start = times[order], delta[order], is_start[order]
    usage = np.cumsum(delta)
    new = np.r_[True, times[1:] != times[:-1]] if m else np.zeros(0, dtype=bool)
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(times))[: len(first)] - 1
    t = times[first]
    after = usage[last]  # from this instant to the next
    starts_here = np.logical_or.reduceat(is_start, first) if m else np.zeros(0, dtype=bool)
    over_at = set(t[starts_here & (after > capacity)].tolist())
    # zero-length jobs: each beside the jobs running once its instant's ends are done
    # (before that instant's other starts: replay starts them first)
    zs, zsize = start[~ran], size[~ran]
    if m:
        ends_sum = np.add.reduceat(np.where(is_start, 0.0, delta), first)
        after_ends = np.r_[0.0, after[:-1]] + ends_sum
        i = np.maximum(np.searchsorted(t, zs, side="right") - 1, 0)
        beside = np.where(t[i] == zs, after_ends[i], np.where(t[i] < zs, after[i], 0.0))
    else:
        beside = np.zeros(len(zs))
    over_at.update(zs[beside + zsize > capacity].tolist())
    duration = np.diff(t, append=t[-1]) if m else np.zeros(0)
    return len(over_at), float(duration[after > capacity].sum())
