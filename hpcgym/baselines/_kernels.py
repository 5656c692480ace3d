"""Compiled decision kernels of FCFS, the list schedulers, the EASY backfilling family and PRB.

Plain numpy-array code compiled by numba (``cache=True``: compiled once per machine,
then loaded). Every kernel takes the three bundles of
:meth:`hpcgym.sim.SystemView.bundles` -- the machine (:class:`~hpcgym.machine.allocator.Nodes`),
the job columns (:class:`~hpcgym.sim.Jobs`) and the state at the decision point
(:class:`~hpcgym.sim.State`) -- as plain tuples, and rebuilds the named tuples on
entry. It places every job it starts with the one allocator (:mod:`hpcgym.machine.allocator`)
on its own copy of the free matrix, writes the jobs to start into ``out_jobs`` and
their placements, concatenated, into ``out_nodes``, and returns how many of each it
wrote: ``(jobs, node entries)``. Writing into the caller's buffers spares numba boxing
new arrays on every decision.

What the first run compiles: a dispatcher loads its own family in ``reset`` (:func:`load_kernels`;
FCFS, SJF/LJF and EASY: the event loop, :mod:`hpcgym.baselines._loop`, with their kernels inside;
families in the native core, :mod:`hpcgym.common.native`, compile nothing). The kernels are
``inline="always"`` into the adapters (``*_decide``); every call passes the same argument types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from hpcgym.common import native
from hpcgym.common._views import borrowed, matrix
from hpcgym.machine import BEST_FIT, Nodes, fits, place, take
from hpcgym.machine.allocator import stable_argsort, stable_argsort_into
from hpcgym.sim import Jobs, State
from hpcgym.sim._kernels import H_CHUNKS, jobs_of, nodes_of, state_of

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
def prb_order(
    queue: np.ndarray,
    now: float,
    submit: np.ndarray,
    weight: np.ndarray,
    size: np.ndarray,
    prediction: np.ndarray,
) -> np.ndarray:
    """The waiting jobs in PRB order: highest priority first, then smallest demand first.

    Priority of job ``j`` at ``now`` is ``weight[j] * (now - submit[j])`` (``weight`` =
    ``max ewt / ewt`` of the job's queue); demand is ``size[j] * prediction[j]``. Jobs
    equal in both keep ``queue`` (arrival) order: both sorts are stable.
    """
    prio = weight[queue] * (now - submit[queue])
    demand = size[queue] * prediction[queue]
    by_demand = stable_argsort(demand)
    by_priority = stable_argsort(-prio[by_demand])
    return queue[by_demand[by_priority]]


@njit(cache=True, inline="always")
def prb_kernel(
    machine: Nodes,
    jobs: Jobs,
    state: State,
    submit: np.ndarray,
    weight: np.ndarray,
    size: np.ndarray,
    allocation: int,
    out_jobs: np.ndarray,
    out_nodes: np.ndarray,
) -> tuple[int, int]:
    """PRB of Galleguillos et al.; see :class:`hpcgym.baselines.PriorityRuleBased`.

    Walks the whole queue in :func:`prb_order` and starts every job the allocator can
    place, with policy ``allocation`` (:data:`~hpcgym.machine.allocator.BEST_FIT` or
    ``FIRST_FIT``; -1: the machine's own); a job that cannot be placed waits and the
    next one is tried.
    """
    m0 = Nodes(*machine)
    m = Nodes(m0.capacity, m0.weight, m0.exclusive, m0.policy if allocation < 0 else allocation)
    jb = Jobs(*jobs)
    st = State(*state)
    free = st.free.copy()
    left = free.sum()
    k = 0
    pos = NO_LITERAL_ZERO
    if left == 0 or len(st.queue) == 0:
        return k, pos
    for j in prb_order(st.queue, st.now, submit, weight, size, jb.prediction):
        c = jb.chunks[j]
        if place(m, free, c, jb.per_chunk[j], out_nodes, pos):
            left -= take(m, free, jb.per_chunk[j], out_nodes[pos : pos + c])
            out_jobs[k] = j
            k += 1
            pos += c
            if left == 0:
                break
    return k, pos


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
    here if shorter).
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
    # 2. reservation: release jobs by predicted end until the head job fits
    n_ends = nr + k
    ends = ends_buf[:n_ends]
    for q in range(nr):
        r = running[q]
        ends[q] = jb.start[r] + ru.factor * pred[r]
    for q in range(k):
        ends[nr + q] = now + ru.factor * pred[out_jobs[q]]
    idx = stable_argsort_into(ends, sort_buf, spare)
    for a in range(n_nodes):
        for r in range(n_res):
            trial[a, r] = free[a, r]
    for r in range(n_res):
        trial_total[r] = total[r]
    cap = m.capacity
    ptr = jb.placement_ptr
    shadow = now
    q = 0
    while q < n_ends:
        enough = True  # the per-type totals first: cheap, and exact on one node
        for r in range(n_res):
            if hc * hv[r] > trial_total[r]:
                enough = False
                break
        if enough and (one_node or fits(m, trial, hc, hv)):
            break
        e = idx[q]
        if e < nr:
            rj = running[e]
            _release(trial, trial_total, cap, m.exclusive, per, rj, jb.placement_nodes, ptr[rj], ptr[rj + 1])
        else:
            rj = out_jobs[e - nr]
            lo = seg[e - nr]
            _release(trial, trial_total, cap, m.exclusive, per, rj, out_nodes, lo, lo + chunks[rj])
        shadow = ends[e]
        q += 1
    predicted_shadow = shadow
    if shadow < now:  # predictions already outlived: the scheduler thinks they are free now
        shadow = now
    # every job predicted to end by the reservation frees its resources then, too
    while ru.extra_all and q < n_ends and ends[idx[q]] <= shadow:
        e = idx[q]
        if e < nr:
            rj = running[e]
            _release(trial, trial_total, cap, m.exclusive, per, rj, jb.placement_nodes, ptr[rj], ptr[rj + 1])
        else:
            rj = out_jobs[e - nr]
            lo = seg[e - nr]
            _release(trial, trial_total, cap, m.exclusive, per, rj, out_nodes, lo, lo + chunks[rj])
        q += 1
    # the head's trial placement: in the sorting buffers, which are no longer needed
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
            if may_fit and fits(m, free, c, per[j]):
                fit[nf] = j
                nf += 1
        # sorted by prediction in the predicted ends' scratch (keys, then the sorted jobs)
        keys = ends_buf[:nf]
        for a in range(nf):
            keys[a] = pred[fit[a]]
        by_key = stable_argsort_into(keys, sort_buf, spare)
        rest = work[b + n_jobs : b + n_jobs + nf]
        for a in range(nf):
            rest[a] = fit[by_key[a]]
    # what a job that ends after the reservation may use: min(free, extra)
    for r in range(n_res):
        limit_total[r] = 0
    for a in range(n_nodes):
        for r in range(n_res):
            limit[a, r] = min(free[a, r], extra[a, r])
            limit_total[r] += limit[a, r]
    for j in rest:
        c = chunks[j]
        may_fit = True
        for r in range(n_res):
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


# The reference dispatchers call these adapters: the engine's buffer crosses into numba
# as one array (see hpcgym.sim._kernels) and the bundles are rebuilt here. ``out``
# holds the jobs to start in ``out[:n]`` and their placements from ``out[n]`` on (n
# jobs in the workload); the adapters return the two counts as the kernels do.
@njit(cache=True)
def prb_decide(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    submit: np.ndarray,
    weight: np.ndarray,
    size: np.ndarray,
    allocation: int,
    out: np.ndarray,
) -> tuple[int, int]:
    """:func:`prb_kernel` on the engine's buffer (see ``SystemView.kernel_inputs``)."""
    mem, prediction, start, submit = borrowed(mem), borrowed(prediction), borrowed(start), borrowed(submit)
    weight, size, out = borrowed(weight), borrowed(size), borrowed(out)
    n = len(start)
    state = state_of(mem, now, out[:0])
    jobs = jobs_of(mem, prediction, start)
    return prb_kernel(nodes_of(mem), jobs, state, submit, weight, size, allocation, out[:n], out[n:])


@njit(cache=True)
def easy_decide(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    rule: EasyRuleArg,
    out: np.ndarray,
    reservation: np.ndarray,
) -> tuple[int, int]:
    """:func:`easy_kernel` on the engine's buffer (see ``SystemView.kernel_inputs``)."""
    mem, prediction, start = borrowed(mem), borrowed(prediction), borrowed(start)
    out, reservation = borrowed(out), borrowed(reservation)
    n = len(start)
    state = state_of(mem, now, out[:0])
    jobs = jobs_of(mem, prediction, start)
    out_jobs, out_nodes, work = _parts(out, n, mem[H_CHUNKS])
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work)


@njit(cache=True)
def easy_decide_first(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    first: int,
    rule: EasyRuleArg,
    out: np.ndarray,
    reservation: np.ndarray,
) -> tuple[int, int]:
    """:func:`easy_decide` with waiting job ``first`` moved to the head of the queue.

    The other waiting jobs keep their arrival order; ``first`` is the one that gets the
    reservation if it does not fit.
    """
    mem, prediction, start = borrowed(mem), borrowed(prediction), borrowed(start)
    out, reservation = borrowed(out), borrowed(reservation)
    n = len(start)
    queue = state_of(mem, now, out[:0]).queue
    order = np.empty(len(queue) + 1, dtype=np.int64)
    order[0] = first
    k = 1
    for j in queue:
        if j != first:
            order[k] = j
            k += 1
    state = state_of(mem, now, order[:k])
    jobs = jobs_of(mem, prediction, start)
    out_jobs, out_nodes, work = _parts(out, n, mem[H_CHUNKS])
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work)


@njit(cache=True, inline="always")
def order_kernel(
    machine: Nodes,
    jobs: Jobs,
    state: State,
    every_fit: bool,
    out_jobs: np.ndarray,
    out_nodes: np.ndarray,
    work: np.ndarray,
) -> tuple[int, int]:
    """Start waiting jobs in the state's queue order, which the caller chose.

    Without ``every_fit`` it stops at the first job that does not fit (a strict queue
    order, nothing overtakes its head); with it, it walks the whole order and starts
    every job that fits (list scheduling, no reservation). ``work``: scratch for a copy of
    the free matrix and its per-type totals (allocated here if shorter).
    """
    m = Nodes(*machine)
    jb = Jobs(*jobs)
    st = State(*state)
    n_nodes, n_res = st.free.shape
    if len(work) < n_nodes * n_res + n_res:
        work = np.empty(n_nodes * n_res + n_res, dtype=np.int64)
    free = matrix(work, 0, n_nodes, n_res)
    total = work[n_nodes * n_res : n_nodes * n_res + n_res]
    _copy_free(st.free, free, total)
    left = total.sum()
    per = jb.per_chunk
    k = 0
    pos = NO_LITERAL_ZERO
    if left == 0:
        return k, pos
    for j in st.queue:
        c = jb.chunks[j]
        may_fit = True
        for r in range(n_res):
            if c * per[j, r] > total[r]:
                may_fit = False
                break
        taken = _start(m, free, total, per, j, c, out_nodes, pos) if may_fit else -1
        if taken < 0:
            if every_fit:
                continue
            break
        left -= taken
        out_jobs[k] = j
        k += 1
        pos += c
        if left == 0:
            break
    return k, pos


ARRIVAL = 0
"""``order_decide(sort=ARRIVAL)``: the order as given (the queue: arrival order)."""
SHORTEST_FIRST = 1
"""``order_decide(sort=SHORTEST_FIRST)``: sorted by prediction, shortest first (stable)."""
LONGEST_FIRST = -1
"""``order_decide(sort=LONGEST_FIRST)``: sorted by prediction, longest first (stable)."""


@njit(cache=True)
def order_decide(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    order: np.ndarray,
    every_fit: bool,
    sort: int,
    out: np.ndarray,
) -> tuple[int, int]:
    """:func:`order_kernel` on the engine's buffer: FCFS, SJF/LJF list scheduling, any order.

    The waiting jobs are taken in ``order`` (empty: the queue, in arrival order), sorted
    first by ``sort`` (:data:`ARRIVAL`: not sorted; :data:`SHORTEST_FIRST` or
    :data:`LONGEST_FIRST`: by prediction, ties keeping the order). FCFS is the queue
    without ``every_fit``; SJF and LJF of Galleguillos et al. are the queue sorted by
    prediction with ``every_fit``. One kernel for all of them: one compilation.
    """
    mem, prediction, start = borrowed(mem), borrowed(prediction), borrowed(start)
    order, out = borrowed(order), borrowed(out)
    n = len(start)
    state = state_of(mem, now, order)
    if sort != ARRIVAL:
        queue = state.queue
        key = prediction[queue]
        if sort == LONGEST_FIRST:
            key = -key
        state = State(state.now, state.free, _order(queue, key), state.running)
    jobs = jobs_of(mem, prediction, start)
    out_jobs, out_nodes, work = _parts(out, n, mem[H_CHUNKS])
    return order_kernel(nodes_of(mem), jobs, state, every_fit, out_jobs, out_nodes, work)


@njit(cache=True)
def easy_decide_order(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    order: np.ndarray,
    rule: EasyRuleArg,
    out: np.ndarray,
    reservation: np.ndarray,
) -> tuple[int, int]:
    """:func:`easy_kernel` with the waiting jobs in ``order`` (a permutation of the queue).

    With a rule without ``reserve_shortest`` and ``sjbf``, the jobs start in ``order``
    while they fit, the first that does not gets the reservation, and the rest are
    backfilled in ``order``.
    """
    mem, prediction, start = borrowed(mem), borrowed(prediction), borrowed(start)
    order, out, reservation = borrowed(order), borrowed(out), borrowed(reservation)
    n = len(start)
    state = state_of(mem, now, order)
    jobs = jobs_of(mem, prediction, start)
    out_jobs, out_nodes, work = _parts(out, n, mem[H_CHUNKS])
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work)


FAMILIES = ("order", "prb", "easy", "easy-first", "easy-order", "loop", "loop-predicting")
"""The kernel families :func:`load_kernels` knows: one entry point each (see :func:`entry_points`)."""

_loaded: set[str] = set()

LOOPS: dict[str, tuple[Any, Callable[[Any], None]]] = {}
"""The event loops' families: entry point and warm-up (a call on a small workload), filled by
:mod:`hpcgym.baselines._loop` (it imports this module's kernels, so this module cannot import it)."""


def entry_points(family: str) -> list[Any]:
    """The compiled functions Python calls for ``family`` (``"engine"``: the engine's own)."""
    from hpcgym.sim import _kernels as ek

    if family in LOOPS:
        return [LOOPS[family][0]]
    families: dict[str, list[Any]] = {
        "engine": [ek.instant, ek.commit, ek.compact],
        "prb": [prb_decide],
        "easy": [easy_decide],
        "easy-first": [easy_decide_first],
        "order": [order_decide, ek.fits_job],  # FCFS asks whether the first job fits first
        "easy-order": [easy_decide_order],
    }
    return families[family]


def load_kernels(*families: str) -> None:
    """Compile or load the kernels of ``families`` and the engine's now, once per process.

    A dispatcher loads its own family in ``reset``, so a run's clock measures simulation only and a
    run compiles nothing it does not use; with no family named, every one is loaded (a sweep, before
    its workers start). If the notice is on (:func:`hpcgym.baselines._compile.announce_compilation`)
    and a kernel about to be compiled has no cache, one line on stderr says so.

    Raises:
        KeyError: an unknown family (not in :data:`FAMILIES`).
    """
    todo = [f for f in ("engine", *(families or FAMILIES)) if f not in _loaded]
    if not todo:
        return
    from hpcgym.baselines._compile import announce_compilation_of

    # a family whose every entry point is in the native core (hpcgym.common.native) is ready
    compile = [f for f in todo if not all(native.has(k) for k in entry_points(f))]
    with announce_compilation_of([k for f in compile for k in entry_points(f)]):
        if compile:
            _warm_up(compile)
    _loaded.update(todo)


def _warm_up(families: list[str]) -> None:
    """Call each family's entry point (and the engine's kernels) with the types a run passes."""
    from hpcgym.sim import Simulator
    from hpcgym.sim.loop import example_workload

    # the types of a run: the dispatchers' (see SystemView.kernel_inputs(live=True))
    w = example_workload()
    sim = Simulator(w)
    sim.advance()
    mem, prediction, start, now = sim.view.kernel_inputs(live=True)
    out = np.zeros(3 + 3, dtype=np.int64)
    reservation = np.zeros(RESERVATION_FIELDS)
    order = np.ascontiguousarray(sim.view.queue[::-1])
    rule = (1.0, False, False, False)
    for family in families:
        if family == "order":
            sim.view.fits(1)
            order_decide(mem, prediction, start, now, order, False, ARRIVAL, out)
        elif family == "prb":
            ones = np.ones(3)
            prb_decide(mem, prediction, start, now, np.zeros(3), ones, ones, BEST_FIT, out)
        elif family == "easy":
            easy_decide(mem, prediction, start, now, rule, out, reservation)
        elif family == "easy-first":
            easy_decide_first(mem, prediction, start, now, 0, rule, out, reservation)
        elif family == "easy-order":
            easy_decide_order(mem, prediction, start, now, order, rule, out, reservation)
        elif family in LOOPS:
            LOOPS[family][1](w)
    if "engine" not in families:
        return
    out_jobs = out[:3]
    out_nodes = out[3:]
    out_jobs[0] = 1
    out_nodes[0] = 0
    sim.start(out_jobs[:1], out_nodes[:1])  # a given placement, and a gap in the queue
    sim.start([0])
    sim.view.queue  # noqa: B018 - compacts the queue
    while sim.advance():
        sim.start(sim.view.queue[:1])
