"""EASY backfilling's compiled kernel, the running jobs in order of predicted end, and the helpers
the dispatch kernels of :mod:`hpcgym.baselines._kernels` share.

:func:`easy_kernel` is EASY and its variants (see :class:`hpcgym.baselines.EasyBackfilling`).
Its reservation releases the running jobs and the jobs the decision itself starts in order of
predicted end (start + factor x prediction), as a stable sort of their ends orders them: on a
tie, running jobs first, in start order, then the started ones in the order the decision starts
them. A caller that makes many decisions -- the compiled event loops of
:mod:`hpcgym.baselines._loop` -- keeps the running jobs in that order as they start, end and
have their predictions corrected (:func:`insert_by_end` on a start, :func:`move_later` when a
correction grows a running job's prediction; ended jobs are dropped before the next decision)
and passes it in; otherwise (a Python dispatcher's call) the kernel sorts them. Either way it
releases the same jobs in the same order, so every schedule is the same.

On one shared node (a processor machine) the kernel places, releases and takes on node 0
without the allocator's calls: every placement there is node 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from hpcgym.common._views import matrix
from hpcgym.machine import Nodes, fits, place, take
from hpcgym.machine.allocator import (
    INSERTION_RUN,
    insertion_sort_by,
    sorts_before,
    stable_argsort,
    stable_argsort_into,
)
from hpcgym.sim import Jobs, State

RES_HEAD = 0
"""Index, in an EASY kernel's ``reservation`` array, of the job given the reservation (-1: none)."""
RES_TIME = 1
"""Index of the reservation time: when the head job is predicted to fit (not before now)."""
RES_PREDICTED_TIME = 2
"""Index of the reservation time as the predicted ends give it, before it is moved up to now."""
RESERVATION_FIELDS = 3


class EasyRule(NamedTuple):
    """The variant of EASY a kernel applies (see :class:`hpcgym.baselines.EasyBackfilling`).

    Attributes:
        factor: multiply every prediction by this when planning (2 for X2).
        sjbf: backfill candidates shortest predicted first.
        reserve_shortest: the reservation goes to the shortest predicted waiting job.
        extra_all: every job predicted to end by the reservation frees its resources
            for the extra (``extra="all"``); else only those released to reach it.
    """

    factor: float
    sjbf: bool
    reserve_shortest: bool
    extra_all: bool


EasyRuleArg = EasyRule | tuple[float, bool, bool, bool]
"""An :class:`EasyRule`, or its fields as a plain tuple."""


@njit(cache=True)
def work_words(nodes: int, n_res: int, n_jobs: int) -> int:
    """The scratch (int64 words) the EASY and order kernels need on a machine of ``nodes`` x
    ``n_res`` with ``n_jobs`` jobs: three free matrices, three per-type totals, and four
    job-length arrays (positions, predicted ends, two for sorting them).

    The adapters (``*_decide``) take it from the end of their ``out`` buffer, after the jobs
    and their placements (allocated per decision, it cost a quarter of the compiled loop's
    time in ``malloc``, ``free`` and reference counts); with a shorter ``out`` it is allocated.
    """
    return 3 * nodes * n_res + 3 * n_res + 4 * n_jobs


@njit(cache=True, inline="always")
def _parts(out: np.ndarray, n: int, chunks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``out`` as (jobs to start, their placements, scratch): ``n`` jobs, ``chunks`` placement entries."""
    return out[:n], out[n : n + chunks], out[n + chunks :]


NO_LITERAL_ZERO = np.int64(0)
"""0 as an int64, not a literal: a compiled function called with a literal argument
(``f(x, 0)``, or a variable that starts at 0) is compiled once more for that literal
type, several seconds on the first run. Booleans likewise: ``np.bool_(True)``."""


@njit(cache=True, inline="always")
def _order(jobs: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``jobs`` sorted by ``key`` (``key[i]`` is job ``jobs[i]``'s); ties keep the given (arrival) order."""
    return jobs[stable_argsort(key)]


# The loops over waiting jobs first ask whether a job's whole request is within the free
# amount of each type (necessary to fit, sufficient on one shared node, cheap), spelt out:
# a helper inlined there makes numba count references to its arrays on every turn.


@njit(cache=True, inline="always")
def _copy_free(src: np.ndarray, free: np.ndarray, total: np.ndarray) -> None:
    """``free[:] = src`` and ``total`` = its per-type sums, as loops (see the note above)."""
    n_nodes, n_res = src.shape
    for r in range(n_res):
        total[r] = 0
    for a in range(n_nodes):
        for r in range(n_res):
            free[a, r] = src[a, r]
            total[r] += src[a, r]


@njit(cache=True, inline="always")
def _take(m: Nodes, free: np.ndarray, total: np.ndarray, v: np.ndarray, placement: np.ndarray) -> int:
    """:func:`~hpcgym.machine.allocator.take`, also off the per-type totals; returns the units taken."""
    taken = 0
    n_res = free.shape[1]
    for i in placement:
        for r in range(n_res):
            a = free[i, r] if m.exclusive else v[r]
            free[i, r] -= a
            total[r] -= a
            taken += a
    return taken


@njit(cache=True, inline="always")
def _start(
    m: Nodes,
    free: np.ndarray,
    total: np.ndarray,
    per_chunk: np.ndarray,
    j: int,
    chunks: int,
    out_nodes: np.ndarray,
    pos: int,
    one_node: bool = False,
) -> int:
    """Place job ``j`` on ``free`` and take it (``out_nodes[pos:]`` gets its nodes).

    Returns the units taken, or -1 if it does not fit. ``one_node``: one shared node, which
    the caller found holds the request (within the free totals), so no allocator call.
    Called only for jobs within the free totals, so its views cost the other turns of a
    kernel's queue loop nothing. Inlined: compiled on its own it was compiled (allocator
    linked in) once more than its callers, 1-2 s of a first run, for no speed
    (docs/BENCHMARKS.md, "First run").
    """
    v = per_chunk[j]
    placed = out_nodes[pos : pos + chunks]
    if one_node:
        for q in range(chunks):
            placed[q] = 0
    elif not place(m, free, chunks, v, out_nodes, pos):
        return -1
    return _take(m, free, total, v, placed)


@njit(cache=True)
def _release(
    trial: np.ndarray,
    trial_total: np.ndarray,
    capacity: np.ndarray,
    exclusive: bool,
    per_chunk: np.ndarray,
    job: int,
    nodes: np.ndarray,
    lo: int,
    hi: int,
) -> None:
    """Give back, on ``trial`` and its per-type totals, the nodes ``nodes[lo:hi]`` of ``job``."""
    n_res = trial.shape[1]
    for c in range(lo, hi):
        i = nodes[c]
        for r in range(n_res):
            a = capacity[i, r] - trial[i, r] if exclusive else per_chunk[job, r]
            trial[i, r] += a
            trial_total[r] += a


@njit(cache=True, inline="always")
def _backfill(
    m: Nodes,
    free: np.ndarray,
    total: np.ndarray,
    extra: np.ndarray,
    limit: np.ndarray,
    limit_total: np.ndarray,
    per_chunk: np.ndarray,
    j: int,
    chunks: int,
    ends_in_time: bool,
    out_nodes: np.ndarray,
    pos: int,
    one_node: bool,
) -> int:
    """Backfill job ``j`` if it may start now without delaying the reservation.

    A job predicted to end by the reservation needs only to fit ``free``; any other must
    fit ``limit`` = min(free, extra) node by node, and then takes from both ``free`` and
    ``extra``. Returns the units taken from ``free``, or -1 if ``j`` does not start.
    ``one_node``: as for :func:`_start` (the caller tested ``limit``'s totals for a job
    ending after the reservation).
    """
    v = per_chunk[j]
    placed = out_nodes[pos : pos + chunks]
    if one_node:
        for q in range(chunks):
            placed[q] = 0
    if ends_in_time:
        if not one_node and not place(m, free, chunks, v, out_nodes, pos):
            return -1
        taken = _take(m, free, total, v, placed)
        for node in placed:
            for r in range(free.shape[1]):
                low = min(free[node, r], extra[node, r])
                limit_total[r] += low - limit[node, r]
                limit[node, r] = low
        return taken
    # a placement within the limit is one within what is free now
    if not one_node and not place(m, limit, chunks, v, out_nodes, pos):
        return -1
    if one_node:  # every chunk on node 0
        for r in range(free.shape[1]):
            extra[0, r] -= chunks * v[r]
    else:
        take(m, extra, v, placed)
    _take(m, limit, limit_total, v, placed)
    return _take(m, free, total, v, placed)


@njit(cache=True, inline="always")
def easy_kernel(
    machine: Nodes,
    jobs: Jobs,
    state: State,
    rule: EasyRuleArg,
    out_jobs: np.ndarray,
    out_nodes: np.ndarray,
    reservation: np.ndarray,
    work: np.ndarray,
    by_end: np.ndarray,
) -> tuple[int, int]:
    """EASY backfilling and its variants; see :class:`hpcgym.baselines.EasyBackfilling`.

    1. Start waiting jobs in reservation order while they fit.
    2. The first that does not, the head, gets a reservation by trial allocation: on a
       copy of the free matrix, release the running jobs (and those just started) in
       order of predicted end until the head fits; the reservation is the predicted end
       of the last one released (not before now). The head's trial placement reserves
       those nodes; the *extra* resources are the trial free matrix minus that
       placement (with ``extra_all``, after also releasing every further job predicted
       to end by the reservation).
    3. A later job starts now if it fits and is predicted to end by the reservation, or
       if it fits within ``min(free, extra)`` node by node; it is then placed there and
       consumes both.

    On a machine of one node and one resource type this is exactly Lifka's EASY with
    processor counts. ``reservation`` receives ``[head, time, predicted time]`` at the
    indices :data:`RES_HEAD`, :data:`RES_TIME`, :data:`RES_PREDICTED_TIME` (head -1 when
    every waiting job started). ``work`` is the scratch (:func:`work_words`; allocated
    here if shorter). ``by_end``: the running jobs in order of predicted end, ties in start
    order (:func:`running_by_end`, :func:`insert_by_end`), if the caller keeps them so; of
    another length than the running jobs (empty), the kernel sorts them itself.
    """
    m = Nodes(*machine)
    jb = Jobs(*jobs)
    st = State(*state)
    ru = EasyRule(*rule)
    chunks = jb.chunks
    per = jb.per_chunk
    pred = jb.prediction
    now = st.now
    queue = st.queue
    nq = len(queue)
    running = st.running
    nr = len(running)
    # scratch: the free matrix now, at the reservation, and their minimum, with their
    # per-type totals; where each started job's placement sits in out_nodes; the
    # predicted ends and the two buffers that sort them
    n_nodes, n_res = st.free.shape
    n_jobs = len(chunks)
    if len(work) < work_words(n_nodes, n_res, n_jobs):
        work = np.empty(work_words(n_nodes, n_res, n_jobs), dtype=np.int64)
    size = n_nodes * n_res
    free = matrix(work, 0, n_nodes, n_res)
    trial = matrix(work, size, n_nodes, n_res)
    limit = matrix(work, 2 * size, n_nodes, n_res)
    b = 3 * size
    total = work[b : b + n_res]
    trial_total = work[b + n_res : b + 2 * n_res]
    limit_total = work[b + 2 * n_res : b + 3 * n_res]
    b += 3 * n_res
    seg = work[b : b + n_jobs]
    ends_buf = work[b + n_jobs : b + 2 * n_jobs].view(np.float64)
    sort_buf = work[b + 2 * n_jobs : b + 3 * n_jobs]
    spare = work[b + 3 * n_jobs : b + 4 * n_jobs]
    # copies and minimums as loops: numba compiles ``a[:] = b`` and ``np.minimum(a, b, out)``
    # with a shape-mismatch error path that formats a message (seconds of compiling)
    _copy_free(st.free, free, total)
    left = total.sum()
    # one shared node: a request within the per-type totals fits, on node 0
    one_node = n_nodes == 1 and not m.exclusive
    order = _order(queue, pred[queue]) if ru.reserve_shortest else queue
    k = 0
    pos = NO_LITERAL_ZERO
    # 1. start jobs in reservation order while they fit
    i = 0
    while i < nq:
        j = order[i]
        c = chunks[j]
        may_fit = True
        for r in range(n_res):
            if c * per[j, r] > total[r]:
                may_fit = False
                break
        if not may_fit:
            break
        taken = _start(m, free, total, per, j, c, out_nodes, pos, one_node)
        if taken < 0:
            break
        left -= taken
        out_jobs[k] = j
        seg[k] = pos
        k += 1
        pos += c
        i += 1
    reservation[RES_HEAD] = -1.0
    if i == nq:
        return k, pos
    head = order[i]
    hc = chunks[head]
    hv = per[head]
    # 2. reservation: release jobs by predicted end until the head job fits: the running jobs
    # by predicted end (given, or sorted here) merged with those started now by theirs, as a
    # stable sort of all their ends would order them (running jobs first on a tie)
    factor = ru.factor
    if len(by_end) == nr:
        run_order = by_end
    else:
        keys = ends_buf[:nr]
        for q in range(nr):
            r = running[q]
            keys[q] = jb.start[r] + factor * pred[r]
        run_order = stable_argsort_into(keys, sort_buf, spare)
        for q in range(nr):  # positions in the running jobs -> the jobs
            run_order[q] = running[run_order[q]]
    started_ends = ends_buf[nr : nr + k]
    for q in range(k):
        started_ends[q] = now + factor * pred[out_jobs[q]]
    if k > 1:
        started_order = stable_argsort_into(started_ends, sort_buf[nr:], spare[nr:])
    else:
        started_order = sort_buf[nr : nr + k]
        if k:
            started_order[0] = 0
    for a in range(n_nodes):
        for r in range(n_res):
            trial[a, r] = free[a, r]
    for r in range(n_res):
        trial_total[r] = total[r]
    shadow = now
    predicted_shadow = now
    na = 0  # the next running job to release (in run_order)
    nb = 0  # the next started one (in started_order)
    placed_nodes, ptr = jb.placement_nodes, jb.placement_ptr
    # release jobs by predicted end until the head fits (the reservation is the last one's end);
    # then, with extra_all, every further job predicted to end by the reservation. One loop for
    # both, written out here: inlined helpers taking these arrays cost numba reference counts
    # (calls) at every turn, and this is the hottest loop of a decision after the backfill scan
    head_fits = False
    while na < nr or nb < k:
        if not head_fits:
            enough = True  # the per-type totals first: cheap, and exact on one node
            for r in range(n_res):
                if hc * hv[r] > trial_total[r]:
                    enough = False
                    break
            if enough and (one_node or fits(m, trial, hc, hv)):
                head_fits = True
                predicted_shadow = shadow
                if shadow < now:  # predictions already outlived: the scheduler thinks they are free now
                    shadow = now
                if not ru.extra_all:
                    break
                continue
        # the next job by predicted end: the merge step of a stable sort of the running jobs'
        # ends followed by the started ones' (a started job goes first only if its end sorts
        # strictly before, NaN last, as numpy sorts)
        running_next = False
        q = rj = 0
        e = shadow
        if na < nr:
            rj = run_order[na]
            e = jb.start[rj] + factor * pred[rj]
            running_next = nb >= k or not sorts_before(started_ends[started_order[nb]], e)
        if not running_next:
            q = started_order[nb]
            rj = out_jobs[q]
            e = started_ends[q]
        if head_fits:
            if not e <= shadow:  # every job predicted to end by the reservation frees its resources then
                break
        else:
            shadow = e
        if one_node:  # every chunk on node 0: a few additions instead of _release
            for r in range(n_res):
                units = chunks[rj] * per[rj, r]
                trial[0, r] += units
                trial_total[r] += units
        elif running_next:
            _release(trial, trial_total, m.capacity, m.exclusive, per, rj, placed_nodes, ptr[rj], ptr[rj + 1])
        else:
            lo = seg[q]
            _release(trial, trial_total, m.capacity, m.exclusive, per, rj, out_nodes, lo, lo + chunks[rj])
        if running_next:
            na += 1
        else:
            nb += 1
    if not head_fits:
        predicted_shadow = shadow
        if shadow < now:
            shadow = now
    # the head's trial placement: in the sorting buffers, which are no longer needed
    if one_node:  # all on node 0: the loop above stopped with the head within the totals
        for r in range(n_res):
            if hc * hv[r] > trial[0, r]:  # pragma: no cover - fits an empty machine
                return k, pos
            trial[0, r] -= hc * hv[r]
    else:
        held = spare[:hc] if hc <= n_jobs else np.empty(hc, dtype=np.int64)
        if not place(m, trial, hc, hv, held, NO_LITERAL_ZERO):  # pragma: no cover - fits an empty machine
            return k, pos
        take(m, trial, hv, held)
    extra = trial  # free at the reservation beyond the head job's nodes
    reservation[RES_HEAD] = head
    reservation[RES_TIME] = shadow
    reservation[RES_PREDICTED_TIME] = predicted_shadow
    # 3. backfill: later jobs that fit now and end by the reservation or use only the extra
    if left == 0:
        return k, pos
    # what a job that ends after the reservation may use: min(free, extra)
    for r in range(n_res):
        limit_total[r] = 0
    for a in range(n_nodes):
        for r in range(n_res):
            limit[a, r] = min(free[a, r], extra[a, r])
            limit_total[r] += limit[a, r]
    rest = order[i + 1 :]
    if ru.sjbf:  # sort only the candidates that fit now: the others cannot start in this pass
        fit = seg[: len(rest)]  # the positions of step 1 are no longer needed
        nf = 0
        for j in rest:
            c = chunks[j]
            may_fit = True
            for r in range(n_res):
                if c * per[j, r] > total[r]:
                    may_fit = False
                    break
            # nor can a job predicted to end after the reservation that exceeds the limit's
            # totals: the pass only lowers them (the loop below would pass it over)
            if may_fit and not now + ru.factor * pred[j] <= shadow:
                for r in range(n_res):
                    if c * per[j, r] > limit_total[r]:
                        may_fit = False
                        break
            if may_fit and (one_node or fits(m, free, c, per[j])):
                fit[nf] = j
                nf += 1
        # sorted by prediction, stably: a few candidates (most decisions) in place by insertion,
        # the order stable_argsort_into gives them, without its call
        if nf <= INSERTION_RUN:
            rest = fit[:nf]
            insertion_sort_by(rest, 0, nf, pred)
        else:  # in the predicted ends' scratch (keys, then the sorted jobs)
            keys = ends_buf[:nf]
            for a in range(nf):
                keys[a] = pred[fit[a]]
            by_key = stable_argsort_into(keys, sort_buf, spare)
            rest = work[b + n_jobs : b + n_jobs + nf]
            for a in range(nf):
                rest[a] = fit[by_key[a]]
    for j in rest:
        u = np.uint64(j)  # a job (never negative): indexed so, the loads skip numba's wraparound code
        c = chunks[u]
        if c * per[u, 0] > total[0]:  # the first type alone rules most jobs out: the cheap test first
            continue
        may_fit = True
        for r in range(1, n_res):
            if c * per[j, r] > total[r]:
                may_fit = False
                break
        if not may_fit:
            continue
        ends_in_time = now + ru.factor * pred[j] <= shadow
        if not ends_in_time:
            for r in range(n_res):
                if c * per[j, r] > limit_total[r]:
                    may_fit = False
                    break
            if not may_fit:
                continue
        taken = _backfill(
            m, free, total, extra, limit, limit_total, per, j, c, ends_in_time, out_nodes, pos, one_node
        )
        if taken < 0:
            continue
        left -= taken
        out_jobs[k] = j
        k += 1
        pos += c
        if left == 0:
            break
    return k, pos


# The running jobs in order of predicted end, kept by a caller that makes many decisions (the
# compiled event loops): ``by_end[:count]``, ordered as easy_kernel's stable sort of the running
# jobs' predicted ends orders them.


@njit(cache=True, inline="always")
def running_by_end(
    running: np.ndarray, start: np.ndarray, pred: np.ndarray, factor: float, by_end: np.ndarray
) -> int:
    """Write ``running`` (in start order) into ``by_end`` in order of predicted end
    (``start + factor * pred``, ties in start order); returns how many."""
    nr = len(running)
    keys = np.empty(nr)
    for q in range(nr):
        r = running[q]
        keys[q] = start[r] + factor * pred[r]
    order = stable_argsort(keys)
    for q in range(nr):
        by_end[q] = running[order[q]]
    return nr


@njit(cache=True, inline="always")
def drop_ended(by_end: np.ndarray, count: int, state: np.ndarray) -> int:
    """``by_end[:count]`` without the jobs that are no longer running (``state[j] != 2``, the
    engine's running state), in the same order; returns the new count."""
    w = 0
    for i in range(count):
        j = by_end[i]
        if state[j] == 2:
            by_end[w] = j
            w += 1
    return w


@njit(cache=True, inline="always")
def insert_by_end(
    by_end: np.ndarray, count: int, j: int, start: np.ndarray, pred: np.ndarray, factor: float
) -> int:
    """Job ``j``, started after every job of ``by_end[:count]``, inserted in its order; returns the count.

    After every job whose predicted end does not sort after ``j``'s: ties go in start order.
    ``by_end`` may still hold jobs that ended (their ends have not moved, so it is sorted).
    """
    e = start[j] + factor * pred[j]
    lo = 0
    hi = count
    while lo < hi:
        mid = (lo + hi) >> 1
        m = by_end[mid]
        if sorts_before(e, start[m] + factor * pred[m]):
            hi = mid
        else:
            lo = mid + 1
    for p in range(count, lo, -1):
        by_end[p] = by_end[p - 1]
    by_end[lo] = j
    return count + 1


@njit(cache=True, inline="always")
def move_later(
    by_end: np.ndarray,
    count: int,
    j: int,
    rank: np.ndarray,
    start: np.ndarray,
    pred: np.ndarray,
    factor: float,
) -> None:
    """Running job ``j`` of ``by_end[:count]``, whose prediction grew, moved to its new place.

    The order stays that of a stable sort of the running jobs (in start order) by predicted
    end: on a tie, the job of the lower ``rank`` (the earlier start) first. ``j``'s end only
    grew, so it moves towards the end; ``by_end`` may still hold jobs that ended, as for
    :func:`insert_by_end`.
    """
    i = 0
    while i < count and by_end[i] != j:
        i += 1
    if i == count:  # pragma: no cover - a corrected job is running, so kept
        return
    e = start[j] + factor * pred[j]
    rj = rank[j]
    while i + 1 < count:
        m = by_end[i + 1]
        em = start[m] + factor * pred[m]
        if sorts_before(e, em) or (not sorts_before(em, e) and rj < rank[m]):
            break  # j sorts before its next neighbour: its place
        by_end[i] = m
        i += 1
    by_end[i] = j
