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
EASY's kernel and the helpers the kernels share are in :mod:`hpcgym.baselines._easy`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from hpcgym.baselines._easy import (
    NO_LITERAL_ZERO,
    RESERVATION_FIELDS,
    EasyRuleArg,
    _copy_free,
    _order,
    _parts,
    _start,
    easy_kernel,
)
from hpcgym.baselines._easy import RES_HEAD as RES_HEAD  # the EASY kernel's names, re-exported
from hpcgym.baselines._easy import RES_PREDICTED_TIME as RES_PREDICTED_TIME
from hpcgym.baselines._easy import RES_TIME as RES_TIME
from hpcgym.baselines._easy import EasyRule as EasyRule
from hpcgym.baselines._easy import work_words as work_words
from hpcgym.common import native
from hpcgym.common._views import borrowed, matrix
from hpcgym.machine import BEST_FIT, Nodes, place, take
from hpcgym.machine.allocator import stable_argsort
from hpcgym.sim import Jobs, State
from hpcgym.sim._kernels import H_CHUNKS, jobs_of, nodes_of, state_of


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


@njit(cache=True, inline="always")
def _easy_decide(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    rule: EasyRuleArg,
    out: np.ndarray,
    reservation: np.ndarray,
    by_end: np.ndarray,
) -> tuple[int, int]:
    """:func:`easy_kernel` on the engine's buffer, with ``by_end`` (empty: the kernel sorts)."""
    mem, prediction, start = borrowed(mem), borrowed(prediction), borrowed(start)
    out, reservation = borrowed(out), borrowed(reservation)
    n = len(start)
    state = state_of(mem, now, out[:0])
    jobs = jobs_of(mem, prediction, start)
    out_jobs, out_nodes, work = _parts(out, n, mem[H_CHUNKS])
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work, by_end)


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
    out = borrowed(out)
    return _easy_decide(mem, prediction, start, now, rule, out, reservation, out[:0])


@njit(cache=True, inline="always")
def easy_decide_by_end(
    mem: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    now: float,
    rule: EasyRuleArg,
    out: np.ndarray,
    reservation: np.ndarray,
    by_end: np.ndarray,
) -> tuple[int, int]:
    """:func:`easy_decide` given the running jobs in order of predicted end (``by_end``, kept by
    the compiled event loop: :func:`hpcgym.baselines._easy.insert_by_end`); inlined into that
    loop, its one caller."""
    return _easy_decide(mem, prediction, start, now, rule, out, reservation, borrowed(by_end))


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
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work, out[:0])


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
    return easy_kernel(nodes_of(mem), jobs, state, rule, out_jobs, out_nodes, reservation, work, out[:0])


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
