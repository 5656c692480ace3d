"""Compiled decision kernels of the list schedulers and the EASY backfilling family.

Plain numpy-array code compiled by numba (``cache=True``: compiled once per machine,
then loaded). Every kernel takes the waiting jobs in arrival order, the running jobs,
the job columns and the free processors, and returns the jobs to start now, in order.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _order(jobs: np.ndarray, key: np.ndarray, descending: bool) -> np.ndarray:
    """``jobs`` sorted by ``key[jobs]``; ties keep the given (arrival) order."""
    k = key[jobs]
    if descending:
        k = -k
    return jobs[np.argsort(k, kind="mergesort")]


@njit(cache=True)
def list_kernel(
    queue: np.ndarray, procs: np.ndarray, key: np.ndarray, free: int, descending: bool
) -> np.ndarray:
    """SJF / LJF of Galleguillos et al.: sort by expected duration, start every job that fits."""
    order = _order(queue, key, descending)
    out = np.empty(len(queue), dtype=np.int64)
    n = 0
    for j in order:
        if procs[j] <= free:
            free -= procs[j]
            out[n] = j
            n += 1
            if free == 0:
                break
    return out[:n]


@njit(cache=True)
def easy_kernel(
    now: float,
    free: int,
    queue: np.ndarray,
    running: np.ndarray,
    procs: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    factor: float,
    sjbf: bool,
    reserve_shortest: bool,
    out_reservation: np.ndarray,
    extra_all_ending: bool = False,
) -> np.ndarray:
    """EASY backfilling and its variants; see :class:`hpcgym.baselines.EasyBackfilling`.

    ``out_reservation`` receives ``[head job, reservation time, extra processors]``
    (head -1 when every waiting job started) and, if it has a fourth element, the
    reservation as the predicted ends give it, before it is moved up to ``now`` (earlier
    than ``now`` when every prediction it rests on is already outlived). By default the
    extra processors are only those of the jobs needed to reach the head job's size (the
    classic count); with ``extra_all_ending`` every job predicted to end by the
    reservation adds its processors (see ``EasyBackfilling(extra=...)``).
    """
    nq = len(queue)
    out = np.empty(nq, dtype=np.int64)
    n = 0
    if reserve_shortest:
        order = _order(queue, prediction, False)
    else:
        order = queue
    # 1. start jobs in reservation order while they fit
    i = 0
    while i < nq and procs[order[i]] <= free:
        j = order[i]
        free -= procs[j]
        out[n] = j
        n += 1
        i += 1
    out_reservation[0] = -1.0
    if i == nq:
        return out[:n]
    head = order[i]
    need = procs[head]
    # 2. reservation: when enough processors are predicted to be free for the head job
    nr = len(running)
    ends = np.empty(nr + n, dtype=np.float64)
    sizes = np.empty(nr + n, dtype=np.int64)
    for k in range(nr):
        r = running[k]
        ends[k] = start[r] + factor * prediction[r]
        sizes[k] = procs[r]
    for k in range(n):
        r = out[k]
        ends[nr + k] = now + factor * prediction[r]
        sizes[nr + k] = procs[r]
    idx = np.argsort(ends, kind="mergesort")
    m = nr + n
    avail = free
    shadow = now
    k = 0
    while k < m and avail < need:
        avail += sizes[idx[k]]
        shadow = ends[idx[k]]
        k += 1
    predicted_shadow = shadow
    if shadow < now:  # predictions already outlived: the scheduler thinks they are free now
        shadow = now
    # every job predicted to end by the reservation frees its processors then, too: the
    # extra processors are all those free at the reservation beyond the head job's need
    while extra_all_ending and k < m and ends[idx[k]] <= shadow:
        avail += sizes[idx[k]]
        k += 1
    extra = avail - need
    out_reservation[0] = head
    out_reservation[1] = shadow
    out_reservation[2] = extra
    if len(out_reservation) > 3:  # also the reservation before the clamp to now
        out_reservation[3] = predicted_shadow
    # 3. backfill: later jobs that fit now and end by the reservation or use only the extra
    if free == 0:
        return out[:n]
    rest = order[i + 1 :]
    if sjbf:  # sort only the candidates that fit now: the others cannot start in this pass
        fit = rest[procs[rest] <= free]
        rest = _order(fit, prediction, False)
    for j in rest:
        p = procs[j]
        if p > free:
            continue
        if now + factor * prediction[j] <= shadow:
            free -= p
            out[n] = j
            n += 1
        elif p <= extra:
            free -= p
            extra -= p
            out[n] = j
            n += 1
        if free == 0:
            break
    return out[:n]


_loaded = False


def load_kernels() -> None:
    """Compile or load every kernel now (once per process), so timed runs measure simulation only."""
    global _loaded
    if _loaded:
        return
    # the engine hands read-only arrays, a type of their own for numba: warm up with those
    jobs = np.zeros(1, dtype=np.int64)
    procs = np.ones(1, dtype=np.int64)
    times = np.zeros(1)
    for a in (jobs, procs, times):
        a.flags.writeable = False
    list_kernel(jobs, procs, times, 1, False)
    for flag in (False, True):
        easy_kernel(0.0, 0, jobs, jobs[:0], procs, times, times, 1.0, flag, flag, np.zeros(3), flag)
    _loaded = True
