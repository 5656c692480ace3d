"""The whole event loop of a run in compiled code, for the built-in dispatchers and predictors.

:meth:`hpcgym.sim.Simulator.run` returns to Python at every event instant and every
decision: the predictor's hooks, the dispatcher's ``__call__`` and the heap of events
are Python. When none of them does anything Python must see -- a reference dispatcher
of this module's families and a built-in predictor (:func:`hpcgym.predict.loop.runs_compiled`:
W, R, any predictor that only sets its ``prediction`` array in ``reset``, 004's user
history in any configuration, prediction correction on top of them) -- :func:`run_loop`
replays the run in one compiled call instead, on the engine's own buffer and with the
very kernels the Python path calls, in the same order:

* an instant is the earliest of the next event and the next submission; its
  terminations are taken in the order they were scheduled (the predictor's ``on_end``
  at each), then its live expiry alarms (a correction, then the next alarm:
  :mod:`hpcgym.sim._alarms`) -- the Python heap's ``(time, kind, seq, job)`` order --,
  then the arrivals, :func:`hpcgym.sim._kernels.instant`, and the predictor's
  ``on_submit`` of each arrival (:mod:`hpcgym.predict._kernels`);
* a decision is made when the queue is non-empty and a waiting job fits
  (``every_event`` dispatchers stay on the Python path); its jobs start through
  :func:`hpcgym.sim._kernels.commit` with the kernel's placements; a started job ends
  at start + run time (its estimate if ``kill_at_estimate`` and shorter), then the
  predictor's ``on_start`` and, if it corrects, the job's expiry alarm.

The schedule, placements, decision count, prediction log and every column of the
:class:`~hpcgym.sim.Schedule` are therefore bit for bit those of the Python path
(``tests/baselines/test_loop.py`` compares the two on random workloads and machines,
``tests/test_golden.py`` against the recorded schedules). The events are a binary heap
of three arrays keyed on (time, key), not Python tuples.

Two loops: :func:`run_loop` for fixed predictions, and :func:`run_loop_predicting`, the
same with the predictor's hooks and expiry alarms, compiled only when a run needs it
(:func:`load_loop`), so a first FCFS or EASY run with W does not compile the hooks.

The loop returns every ``chunk`` finished jobs (a progress bar then moves) and when a
decision went wrong (a placement the engine refuses, or nothing started with an idle
machine and no event left); :func:`run_compiled` then raises as the Python path would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from hpcgym.baselines._easy import drop_ended, insert_by_end, move_later, running_by_end
from hpcgym.baselines._kernels import (
    ARRIVAL,
    LOOPS,
    RESERVATION_FIELDS,
    easy_decide_by_end,
    load_kernels,
    order_decide,
)
from hpcgym.common import native
from hpcgym.common._views import borrowed
from hpcgym.predict import _kernels as pk
from hpcgym.predict.loop import runs_compiled
from hpcgym.sim import _kernels as ek
from hpcgym.sim._alarms import EXPIRE_KEY, arm, expire
from hpcgym.sim.loop import adopt_loop, compilable, example_workload, loop_state, predicting
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from hpcgym.sim import Simulator

ORDER = 0
"""``run_compiled(kind=ORDER)``: ``order_decide``'s decisions (FCFS, SJF/LJF list scheduling)."""
EASY = 1
"""``run_compiled(kind=EASY)``: ``easy_decide``'s decisions (the EASY family)."""


@njit(cache=True, inline="always")
def _next_decision(
    mem: np.ndarray,
    clock: np.ndarray,
    ctl: np.ndarray,
    submit: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    stop_at: int,
) -> bool:
    """Handle instants until one is a decision point (True), or the loop must return (False).

    It returns False when no event is left (``ctl[C_STATUS]`` is then FINISHED) or once
    ``stop_at`` jobs have ended (a progress chunk; the status stays RUNNING_ON).
    """
    n = len(submit)
    o_ended = mem[ek.O_ENDED]
    na = ctl[ek.C_NEXT]
    size = ctl[ek.C_HEAP]
    done = ctl[ek.C_DONE]
    nq = ctl[ek.C_WAITING]
    nr = ctl[ek.C_RUNNING]
    decide = False
    while done < stop_at:
        # the next instant
        if size:
            t = heap_t[0]
            if na < n and submit[na] < t:
                t = submit[na]
        elif na < n:
            t = submit[na]
        else:
            ctl[ek.C_STATUS] = ek.FINISHED
            break
        clock[0] = t
        count = 0
        while size and heap_t[0] == t:  # terminations, in the order they were scheduled
            j = ek.heap_pop(heap_t, heap_s, heap_j, size)
            size -= 1
            mem[o_ended + count] = j
            ended[done + count] = j
            count += 1
        done += count
        nr -= count
        first = na
        while na < n and submit[na] == t:
            na += 1
        nq += na - first
        if ek.instant(mem, count, first, na, nq > 0) and nq:
            decide = True
            break
    if done == n and not size and na >= n:
        ctl[ek.C_STATUS] = ek.FINISHED
    ctl[ek.C_NEXT] = na
    ctl[ek.C_HEAP] = size
    ctl[ek.C_DONE] = done
    ctl[ek.C_WAITING] = nq
    ctl[ek.C_RUNNING] = nr
    if decide:
        ctl[ek.C_DECISIONS] += 1
        if mem[ek.H_QTOMBS]:
            ek.compact(mem)
    return decide


@njit(cache=True, inline="always")
def _start_decided(
    mem: np.ndarray,
    now: float,
    ctl: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    kill: bool,
    out: np.ndarray,
    k: int,
    pos: int,
) -> bool:
    """Start the decision's ``k`` jobs (``out``) and schedule their ends; False if the loop must stop."""
    n = len(runtime)
    if not k:
        if not ctl[ek.C_RUNNING] and not ctl[ek.C_HEAP] and ctl[ek.C_NEXT] >= n:
            ctl[ek.C_STATUS] = ek.STALLED
            return False
        return True
    started, code = ek.commit(mem, start, now, out[:k], out[n : n + pos], ek.GIVEN)
    ctl[ek.C_WAITING] -= started
    ctl[ek.C_RUNNING] += started
    size = ctl[ek.C_HEAP]
    seq = ctl[ek.C_SEQ]
    for i in range(started):
        j = out[i]
        ek.schedule_end(runtime, estimate, end, killed, kill, heap_t, heap_s, heap_j, size, seq, now, j)
        size += 1
        seq += 1
    ctl[ek.C_HEAP] = size
    ctl[ek.C_SEQ] = seq
    if code != ek.OK:
        ctl[ek.C_STATUS] = ek.REFUSED
        ctl[ek.C_REFUSED_AT] = started
        ctl[ek.C_REFUSED_CODE] = code
        return False
    return True


@njit(cache=True)
def run_loop(
    mem: np.ndarray,
    clock: np.ndarray,
    ctl: np.ndarray,
    submit: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    kill: bool,
    kind: int,
    every_fit: bool,
    sort: int,
    rule: tuple[float, bool, bool, bool],
    out: np.ndarray,
    reservation: np.ndarray,
    chunk: int,
) -> None:
    """Events and decisions until every job has ended or ``chunk`` more have.

    Decisions are :func:`~hpcgym.baselines._kernels.easy_decide`'s (``kind`` :data:`EASY`,
    with ``rule`` and ``reservation``) or
    :func:`~hpcgym.baselines._kernels.order_decide`'s (:data:`ORDER`, with ``every_fit``
    and ``sort``). One loop for both: the first run compiles the engine's kernels into
    it once, not once per kind. ``clock[0]`` is the engine's ``now``; ``ctl`` the counters
    (``hpcgym.sim._kernels.C_*``); ``ended`` receives the jobs in termination order
    (``ended[:ctl[C_DONE]]``).
    """
    # borrowed: every view the kernels make of these then skips numba's reference counts
    # (atomic operations that were most of the loop's time; hpcgym.common._views)
    mem, clock, ctl, out, reservation = (
        borrowed(mem),
        borrowed(clock),
        borrowed(ctl),
        borrowed(out),
        borrowed(reservation),
    )
    submit, runtime, estimate, prediction = (
        borrowed(submit),
        borrowed(runtime),
        borrowed(estimate),
        borrowed(prediction),
    )
    start, end, killed, ended = borrowed(start), borrowed(end), borrowed(killed), borrowed(ended)
    heap_t, heap_s, heap_j = borrowed(heap_t), borrowed(heap_s), borrowed(heap_j)
    stop_at = ctl[ek.C_DONE] + chunk
    no_order = out[:0]
    # EASY: the running jobs in order of predicted end, kept as they start and end (the predictions
    # do not change in this loop) rather than sorted at every decision; built anew on each call
    # (a run shown with a progress bar calls the loop once a chunk)
    factor = rule[0]
    by_end = np.empty(len(submit) if kind == EASY else 0, dtype=np.int64)
    n_by_end = 0
    if kind == EASY:
        o_run = mem[ek.O_RUNNING]
        n_by_end = running_by_end(mem[o_run : o_run + mem[ek.H_NRUN]], start, prediction, factor, by_end)
    state = mem[mem[ek.O_STATE] :]  # each job's state (EngineArrays.state)
    seen_done = ctl[ek.C_DONE]
    while _next_decision(mem, clock, ctl, submit, ended, heap_t, heap_s, heap_j, stop_at):
        now = clock[0]
        if kind == EASY:
            if ctl[ek.C_DONE] != seen_done:  # jobs ended since the last decision: drop them
                n_by_end = drop_ended(by_end, n_by_end, state)
                seen_done = ctl[ek.C_DONE]
            k, pos = easy_decide_by_end(
                mem, prediction, start, now, rule, out, reservation, by_end[:n_by_end]
            )
        else:
            k, pos = order_decide(mem, prediction, start, now, no_order, every_fit, sort, out)
        if not _start_decided(
            mem, now, ctl, runtime, estimate, start, end, killed, heap_t, heap_s, heap_j, kill, out, k, pos
        ):
            break
        if kind == EASY:
            for i in range(k):  # started after every job in by_end
                n_by_end = insert_by_end(by_end, n_by_end, out[i], start, prediction, factor)


@njit(cache=True, inline="always")
def _next_decision_predicting(
    mem: np.ndarray,
    clock: np.ndarray,
    ctl: np.ndarray,
    submit: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    stop_at: int,
    prediction: np.ndarray,
    first: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    alarm: np.ndarray,
    ps: pk.PredictorArrays,
    log: np.ndarray,
    by_end: np.ndarray,
    n_by_end: int,
    rank: np.ndarray,
    factor: float,
) -> tuple[bool, np.ndarray]:
    """:func:`_next_decision` with the predictor's hooks and expiry alarms.

    With the bool, the predictor's revision log (the same array or a larger one). A
    correction moves its job in ``by_end[:n_by_end]`` (EASY's running jobs by predicted
    end, ties by ``rank``; empty for other kinds).
    """
    n = len(submit)
    o_ended = mem[ek.O_ENDED]
    hooks = ps.cfg[pk.CFG_KIND] != pk.FIXED
    na = ctl[ek.C_NEXT]
    size = ctl[ek.C_HEAP]
    done = ctl[ek.C_DONE]
    nq = ctl[ek.C_WAITING]
    nr = ctl[ek.C_RUNNING]
    decide = False
    while done < stop_at:
        # the next instant
        if size:
            t = heap_t[0]
            if na < n and submit[na] < t:
                t = submit[na]
        elif na < n:
            t = submit[na]
        else:
            ctl[ek.C_STATUS] = ek.FINISHED
            break
        clock[0] = t
        count = 0
        # terminations in the order they were scheduled, then expiry alarms (their keys sort after)
        while size and heap_t[0] == t:
            key = heap_s[0]
            j = ek.heap_pop(heap_t, heap_s, heap_j, size)
            size -= 1
            if key < EXPIRE_KEY:
                mem[o_ended + count] = j
                ended[done + count] = j
                count += 1
                if hooks:
                    log = pk.on_end(ps, prediction, log, j, t, t - start[j])
            elif alarm[j] == t:  # the live alarm (a job's alarm rings before its end)
                ctl[ek.C_HEAP] = size
                log = expire(ps, prediction, log, alarm, start, end, heap_t, heap_s, heap_j, ctl, t, j)
                size = ctl[ek.C_HEAP]
                if len(by_end):  # its predicted end grew
                    move_later(by_end, n_by_end, j, rank, start, prediction, factor)
        done += count
        nr -= count
        arrived = na
        while na < n and submit[na] == t:
            na += 1
        nq += na - arrived
        fit = ek.instant(mem, count, arrived, na, nq > 0)
        for j in range(arrived, na):  # the predictor learns of the arrivals after the engine queued them
            if hooks:
                pk.on_submit(ps, prediction, j)
            first[j] = prediction[j]
        if fit and nq:
            decide = True
            break
    if done == n and not size and na >= n:
        ctl[ek.C_STATUS] = ek.FINISHED
    ctl[ek.C_NEXT] = na
    ctl[ek.C_HEAP] = size
    ctl[ek.C_DONE] = done
    ctl[ek.C_WAITING] = nq
    ctl[ek.C_RUNNING] = nr
    if decide:
        ctl[ek.C_DECISIONS] += 1
        if mem[ek.H_QTOMBS]:
            ek.compact(mem)
    return decide, log


@njit(cache=True, inline="always")
def _start_decided_predicting(
    mem: np.ndarray,
    now: float,
    ctl: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    kill: bool,
    out: np.ndarray,
    k: int,
    pos: int,
    prediction: np.ndarray,
    alarm: np.ndarray,
    ps: pk.PredictorArrays,
    log: np.ndarray,
) -> tuple[bool, np.ndarray]:
    """Start the decision's ``k`` jobs (``out``), schedule their ends and arm their alarms.

    Returns False if the loop must stop, and the predictor's revision log.
    """
    n = len(runtime)
    if not k:
        if not ctl[ek.C_RUNNING] and not ctl[ek.C_HEAP] and ctl[ek.C_NEXT] >= n:
            ctl[ek.C_STATUS] = ek.STALLED
            return False, log
        return True, log
    hooks = ps.cfg[pk.CFG_KIND] != pk.FIXED
    corrects = ps.cfg[pk.CFG_CORRECTION] != pk.NO_CORRECTION
    started, code = ek.commit(mem, start, now, out[:k], out[n : n + pos], ek.GIVEN)
    ctl[ek.C_WAITING] -= started
    ctl[ek.C_RUNNING] += started
    size = ctl[ek.C_HEAP]
    seq = ctl[ek.C_SEQ]
    for i in range(started):
        j = out[i]
        ek.schedule_end(runtime, estimate, end, killed, kill, heap_t, heap_s, heap_j, size, seq, now, j)
        size += 1
        seq += 1
        if hooks:
            pk.on_start(ps, j)
        if corrects:  # the expiry alarm, if the job will outlive its prediction
            ctl[ek.C_HEAP] = size
            ctl[ek.C_SEQ] = seq
            log = arm(ps, prediction, log, alarm, start, end, heap_t, heap_s, heap_j, ctl, now, j)
            size = ctl[ek.C_HEAP]
            seq = ctl[ek.C_SEQ]
    ctl[ek.C_HEAP] = size
    ctl[ek.C_SEQ] = seq
    if code != ek.OK:
        ctl[ek.C_STATUS] = ek.REFUSED
        ctl[ek.C_REFUSED_AT] = started
        ctl[ek.C_REFUSED_CODE] = code
        return False, log
    return True, log


@njit(cache=True)
def run_loop_predicting(
    mem: np.ndarray,
    clock: np.ndarray,
    ctl: np.ndarray,
    submit: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    kill: bool,
    kind: int,
    every_fit: bool,
    sort: int,
    rule: tuple[float, bool, bool, bool],
    out: np.ndarray,
    reservation: np.ndarray,
    chunk: int,
    first: np.ndarray,
    alarm: np.ndarray,
    ps: pk.PredictorArrays,
    log: np.ndarray,
) -> np.ndarray:
    """:func:`run_loop` with a predictor whose hooks run as kernels.

    ``first`` receives every arrival's first prediction. The predictor's hooks are
    ``ps``'s kernels (:mod:`hpcgym.predict._kernels`), its expiry alarms ``alarm``
    (:mod:`hpcgym.sim._alarms`); it returns the revision log ``log`` (the same array, or
    a larger one when it filled up). A loop of its own, compiled only when a run has
    such a predictor: the hooks would cost every FCFS or EASY run with W a longer first
    compilation (about 15-20 s of CPU more for the loop).
    """
    # borrowed as in run_loop, the predictor's arrays too (none is reallocated); not ``log``,
    # which the hooks may replace by a larger one and which is returned
    ps = pk.PredictorArrays(
        borrowed(ps.cfg), borrowed(ps.cnt), borrowed(ps.est), borrowed(ps.user), borrowed(ps.win),
        borrowed(ps.wlen), borrowed(ps.wkeys), borrowed(ps.wruns), borrowed(ps.wests), borrowed(ps.rsum),
        borrowed(ps.rcnt), borrowed(ps.wnext), borrowed(ps.wprev), borrowed(ps.whead), borrowed(ps.wtail),
        borrowed(ps.corrected), borrowed(ps.beyond), borrowed(ps.memo_e), borrowed(ps.memo_p),
        borrowed(ps.scratch),
    )  # fmt: skip
    mem, clock, ctl, out = borrowed(mem), borrowed(clock), borrowed(ctl), borrowed(out)
    submit, runtime, estimate = borrowed(submit), borrowed(runtime), borrowed(estimate)
    prediction, start, end = borrowed(prediction), borrowed(start), borrowed(end)
    killed, ended, reservation = borrowed(killed), borrowed(ended), borrowed(reservation)
    heap_t, heap_s, heap_j = borrowed(heap_t), borrowed(heap_s), borrowed(heap_j)
    first, alarm = borrowed(first), borrowed(alarm)
    stop_at = ctl[ek.C_DONE] + chunk
    no_order = out[:0]
    # EASY: the running jobs by predicted end, kept as in run_loop; a correction grows a running
    # job's prediction and moves it later (move_later), ties by start (``rank``: the running
    # jobs' order when the loop is entered, then the order they start in)
    factor = rule[0]
    n = len(submit) if kind == EASY else 0
    by_end = np.empty(n, dtype=np.int64)
    rank = np.empty(n, dtype=np.int64)
    n_by_end = 0
    next_rank = 0
    if kind == EASY:
        o_run = mem[ek.O_RUNNING]
        running = mem[o_run : o_run + mem[ek.H_NRUN]]
        n_by_end = running_by_end(running, start, prediction, factor, by_end)
        for q in range(len(running)):
            rank[running[q]] = q
        next_rank = len(running)
    state = mem[mem[ek.O_STATE] :]  # each job's state (EngineArrays.state)
    seen_done = ctl[ek.C_DONE]
    while True:
        decide, log = _next_decision_predicting(
            mem, clock, ctl, submit, ended, heap_t, heap_s, heap_j, stop_at,
            prediction, first, start, end, alarm, ps, log, by_end, n_by_end, rank, factor,
        )  # fmt: skip
        if not decide:
            break
        now = clock[0]
        if kind == EASY:
            if ctl[ek.C_DONE] != seen_done:  # jobs ended since the last decision: drop them
                n_by_end = drop_ended(by_end, n_by_end, state)
                seen_done = ctl[ek.C_DONE]
            k, pos = easy_decide_by_end(
                mem, prediction, start, now, rule, out, reservation, by_end[:n_by_end]
            )
        else:
            k, pos = order_decide(mem, prediction, start, now, no_order, every_fit, sort, out)
        going, log = _start_decided_predicting(
            mem, now, ctl, runtime, estimate, start, end, killed, heap_t, heap_s, heap_j, kill, out, k, pos,
            prediction, alarm, ps, log,
        )  # fmt: skip
        if not going:
            break
        if kind == EASY:
            for i in range(k):  # started after every job in by_end, their alarms armed
                j = out[i]
                rank[j] = next_rank
                next_rank += 1
                n_by_end = insert_by_end(by_end, n_by_end, j, start, prediction, factor)
    return log


def load_loop(view: Any) -> None:
    """Load the compiled loop a run on ``view``'s engine takes: with the predictor's hooks, or without.

    The dispatchers call it in ``reset``, so loading (or, the first time, compiling) is not
    part of a run's clock.
    """
    predictor = getattr(getattr(view, "_sim", None), "predictor", None)
    hooks = predictor is not None and not predictor.fixed and runs_compiled(predictor)
    load_kernels("loop-predicting" if hooks else "loop")


PROGRESS_CHUNK = 5000
"""Jobs ended between two returns to Python when a progress bar is shown."""


def run_compiled(
    sim: Simulator,
    name: str,
    out: np.ndarray,
    *,
    kind: int,
    progress: Callable[[int], None] | None = None,
    every_fit: bool = False,
    sort: int = 0,
    rule: tuple[float, bool, bool, bool] = (1.0, False, False, False),
    reservation: np.ndarray | None = None,
) -> bool:
    """Run ``sim``'s whole run in :func:`run_loop` and write the result into ``sim``.

    Args:
        sim: an engine right after ``reset`` and ``attach``, for which
            :func:`hpcgym.sim.loop.compilable` holds.
        name: the dispatcher's report name (for errors).
        out: the dispatcher's output buffer (jobs, then placements).
        kind: :data:`ORDER` or :data:`EASY`.
        progress: called with the jobs ended since its last call, every
            :data:`PROGRESS_CHUNK` jobs.
        every_fit, sort: :func:`~hpcgym.baselines._kernels.order_decide`'s (``ORDER``).
        rule, reservation: :func:`~hpcgym.baselines._kernels.easy_decide`'s (``EASY``).

    Returns:
        True once the run is complete; False, having done nothing, when the run needs
        Python between events (:func:`hpcgym.sim.loop.compilable`).

    Raises:
        InvalidDecisionError: as the Python loop would (see :func:`hpcgym.sim.loop.adopt_loop`).
    """
    if not compilable(sim):
        return False
    st = loop_state(sim)
    hooks = predicting(st)
    load_kernels("loop-predicting" if hooks else "loop")
    n = len(st.submit)
    chunk = PROGRESS_CHUNK if progress is not None else n + 1
    if reservation is None:
        reservation = np.zeros(RESERVATION_FIELDS)
    rule = (float(rule[0]), bool(rule[1]), bool(rule[2]), bool(rule[3]))
    ctl = st.ctl
    while ctl[ek.C_STATUS] == ek.RUNNING_ON:
        before = int(ctl[ek.C_DONE])
        # the arguments have the types of the native core's examples (_loop_args below): the
        # engine's own buffers (hpcgym.sim.loop.loop_state), Python scalars, a float tuple
        if hooks:
            st.log[0] = native.get(run_loop_predicting)(
                st.mem, st.clock, ctl, st.submit, st.runtime, st.estimate, st.prediction,
                st.start, st.end, st.killed, st.ended, st.heap_t, st.heap_s, st.heap_j, st.kill,
                int(kind), bool(every_fit), int(sort), rule, out, reservation, chunk,
                st.first_prediction, st.alarm, st.predictor, st.log[0],
            )  # fmt: skip
        else:
            native.get(run_loop)(
                st.mem, st.clock, ctl, st.submit, st.runtime, st.estimate, st.prediction,
                st.start, st.end, st.killed, st.ended, st.heap_t, st.heap_s, st.heap_j, st.kill,
                int(kind), bool(every_fit), int(sort), rule, out, reservation, chunk,
            )  # fmt: skip
        if progress is not None:
            progress(int(ctl[ek.C_DONE]) - before)
    adopt_loop(sim, st, name)
    return True


def _loop_args(w: Workload, predicting: bool) -> tuple[Any, ...]:
    """Arguments of :func:`run_loop` (or :func:`run_loop_predicting`) of the types a run passes."""
    from hpcgym.predict import Corrected, UserHistory
    from hpcgym.sim import Simulator

    st = loop_state(Simulator(w, predictor=Corrected(UserHistory()) if predicting else None))
    args = (
        st.mem, st.clock, st.ctl, st.submit, st.runtime, st.estimate, st.prediction,
        st.start, st.end, st.killed, st.ended, st.heap_t, st.heap_s, st.heap_j, st.kill,
        EASY, False, ARRIVAL, (1.0, False, False, False), np.zeros(2 * len(w), dtype=np.int64),
        np.zeros(RESERVATION_FIELDS), len(w) + 1,
    )  # fmt: skip
    return (*args, st.first_prediction, st.alarm, st.predictor, st.log[0]) if predicting else args


def _warm_up(w: Workload) -> None:
    """Call :func:`run_loop` with the types a run passes (see :data:`LOOPS`)."""
    loop: Any = run_loop  # numba's stubs type a dispatcher's call by its first signature
    loop(*_loop_args(w, False))


def _warm_up_predicting(w: Workload) -> None:
    """Call :func:`run_loop_predicting` with the types a run passes (see :data:`LOOPS`)."""
    loop: Any = run_loop_predicting
    loop(*_loop_args(w, True))


LOOPS["loop"] = (run_loop, _warm_up)
LOOPS["loop-predicting"] = (run_loop_predicting, _warm_up_predicting)
native.register(run_loop, lambda: _loop_args(example_workload(), False))
native.register(run_loop_predicting, lambda: _loop_args(example_workload(), True))
