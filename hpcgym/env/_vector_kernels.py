"""One compiled call that steps N episodes of the dispatch environment (``job`` mode).

:class:`hpcgym.env.vector.DispatchVectorEnv` keeps each episode's engine state in rows
of padded ``(N, ...)`` arrays and calls :func:`step_all` once per vector step. For each
episode it applies the action exactly as :meth:`hpcgym.env.DispatchEnv.step` does in
``job`` mode without backfill, advances the engine to its next decision point with the
compiled event loop of the reference dispatchers
(:func:`hpcgym.baselines._loop._next_decision`, the very order of terminations and
arrivals of the Python engine), then writes the observation parts, the action mask and
the dense reward cost with the same kernels the single environment calls, in the same
order of floating-point operations. Episode ends, metrics and resets stay in Python
(they happen once per episode).

Layout of one episode's row:

* ``mem[i]``: the engine buffer (:mod:`hpcgym.sim._kernels`), padded;
* ``ctl[i]``: the loop counters (``hpcgym.sim._kernels.C_*``) then the ``X_*`` fields;
* ``fst[i]``: ``F_NOW`` (the clock) and the dense reward's state (``F_FROZEN``,
  ``F_PREV``, ``F_TIME``, the fields of :class:`hpcgym.env.rewards._Accrued`);
* per-job columns ``[i, :ctl[i, X_JOBS]]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hpcgym.baselines._loop import _next_decision
from hpcgym.env._kernels import accrued_sum, job_mask, job_window, system, user_history
from hpcgym.predict import histograms
from hpcgym.sim import _kernels as ek

X_JOBS = ek.COUNTERS  # jobs in the episode (context jobs included)
X_SEEN = ek.COUNTERS + 1  # ended jobs the user history has taken in
X_LO = ek.COUNTERS + 2  # the dense reward's first job that may still wait
X_DONE = ek.COUNTERS + 3  # every job has ended
CTL = ek.COUNTERS + 4

F_NOW = 0
F_FROZEN = 1
F_PREV = 2
F_TIME = 3
FST = 4

# entries of the layout table ``lay`` (offset, then up to four dimensions) of the arrays
# packed in the arenas step_all takes: one crossing with ten arrays, not fifty
# fixed arenas (float64, int64, bool, float32): they never grow
L_FPAR, L_FST, L_TOTAL, L_HLAST, L_HRUN, L_HACC, L_COST = range(7)
L_IPAR, L_CTL, L_HCOUNT, L_SCRATCH, L_ACTIONS = range(7, 12)
L_MASK, L_INVALID, L_FINAL, L_SKIP, L_PARTS = range(12, 17)
L_OJOBS, L_OHIST, L_OSYS, L_ORES, L_OREQ = range(17, 22)
# job arenas: grow with the longest episode
L_SUBMIT, L_RUNTIME, L_ESTIMATE, L_PREDICTION, L_START, L_END, L_HEAPT, L_RRUN, L_COUNTED = range(22, 31)
L_ENDED, L_HEAPS, L_HEAPJ, L_PROCS, L_USER, L_SIZEBIN = range(31, 37)
L_KILLED, L_FITBUF, L_TABLE = range(37, 40)
LAYOUT = 40
# ipar and fpar entries
I_K, I_KILL, I_REWARD, I_MACHINE, I_ORACLE, I_BY_ESTIMATE = range(6)
F_TAU, F_INV_LOG_T = range(2)

P_JOBS = 0
P_HISTOGRAMS = 1
P_SYSTEM = 2
P_RESOURCES = 3
P_REQUESTS = 4
PARTS = 5
"""Indices of ``parts``: which observation parts :func:`step_all` writes."""

NO_KERNEL = 0
"""``reward_kind`` of a reward the kernel leaves at 0 (``bsld-sparse``: Python charges it at the end)."""


@njit(cache=True, inline="always")
def _queue(mem: np.ndarray) -> np.ndarray:
    if mem[ek.H_QTOMBS]:
        ek.compact(mem)
    o = mem[ek.O_QUEUE]
    return mem[o + mem[ek.H_QLO] : o + mem[ek.H_QHI]]


@njit(cache=True, inline="always")
def _running(mem: np.ndarray) -> np.ndarray:
    o = mem[ek.O_RUNNING]
    return mem[o : o + mem[ek.H_NRUN]]


@njit(cache=True, inline="always")
def _future(ctl: np.ndarray) -> bool:
    return ctl[ek.C_HEAP] > 0 or ctl[ek.C_NEXT] < ctl[X_JOBS]


@njit(cache=True)
def _advance(
    mem: np.ndarray,
    ctl: np.ndarray,
    fst: np.ndarray,
    submit: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
) -> None:
    """``DispatchEnv._advance``: to the next decision point, or the episode is over."""
    n = ctl[X_JOBS]
    if not _next_decision(mem, fst[F_NOW : F_NOW + 1], ctl, submit[:n], ended, heap_t, heap_s, heap_j, n):
        ctl[X_DONE] = 1


@njit(cache=True)
def _start(
    mem: np.ndarray,
    ctl: np.ndarray,
    now: float,
    j: int,
    one: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    kill: bool,
) -> None:
    """``Simulator.start((j,))`` of a job that fits: place it, schedule its end."""
    one[0] = j
    ek.commit(mem, start, now, one, one, False)
    ctl[ek.C_WAITING] -= 1
    ctl[ek.C_RUNNING] += 1
    run = runtime[j]
    if kill and run > estimate[j]:
        run = estimate[j]
        killed[j] = True
    e = now + run
    end[j] = e
    ek.heap_push(heap_t, heap_s, heap_j, ctl[ek.C_HEAP], e, ctl[ek.C_SEQ], j)
    ctl[ek.C_HEAP] += 1
    ctl[ek.C_SEQ] += 1


@njit(cache=True)
def _act(
    a: int,
    k: int,
    kill: bool,
    mem: np.ndarray,
    ctl: np.ndarray,
    fst: np.ndarray,
    submit: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    ended: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    one: np.ndarray,
    fitbuf: np.ndarray,
) -> bool:
    """``DispatchEnv._step_job`` with ``backfill="none"``; True if the action was invalid."""
    started = False
    if 0 <= a < k:
        if a < ctl[ek.C_WAITING]:
            q = _queue(mem)
            ek.fits_jobs(mem, q[a : a + 1], fitbuf)
            if fitbuf[0]:
                _start(mem, ctl, fst[F_NOW], q[a], one, runtime, estimate, start, end, killed,
                       heap_t, heap_s, heap_j, kill)  # fmt: skip
                started = True
    elif a == k and _future(ctl):
        _advance(mem, ctl, fst, submit, ended, heap_t, heap_s, heap_j)
        return False
    if not started:  # the fallback: advance if an event is to come, else start the oldest that fits
        if _future(ctl):
            _advance(mem, ctl, fst, submit, ended, heap_t, heap_s, heap_j)
            return True
        q = _queue(mem)
        nfit = ek.fits_jobs(mem, q, fitbuf)
        if nfit:
            x = 0
            while not fitbuf[x]:
                x += 1
            _start(mem, ctl, fst[F_NOW], q[x], one, runtime, estimate, start, end, killed,
                   heap_t, heap_s, heap_j, kill)  # fmt: skip
    # _after_start: on to the next decision point unless a waiting job still fits
    if not (ctl[ek.C_WAITING] and ek.any_waiting_fits(mem)):
        _advance(mem, ctl, fst, submit, ended, heap_t, heap_s, heap_j)
    return not started


@njit(cache=True)
def _cost(
    kind: int,
    final: bool,
    ctl: np.ndarray,
    fst: np.ndarray,
    q: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    runtime: np.ndarray,
    counted: np.ndarray,
    tau: float,
) -> float:
    """``_Accrued.cost``: the growth of the counted jobs' accrued value since the last step."""
    if kind == NO_KERNEL:
        return 0.0
    now = fst[F_NOW]
    if now == fst[F_TIME] and not final:
        return 0.0
    fst[F_TIME] = now
    arrived = np.searchsorted(submit, now, side="right")
    lo = q[0] if len(q) else arrived
    if lo > ctl[X_LO]:
        fst[F_FROZEN] += accrued_sum(start, submit, runtime, counted, ctl[X_LO], lo, now, kind, tau)
        ctl[X_LO] = lo
    a = fst[F_FROZEN] + accrued_sum(start, submit, runtime, counted, lo, arrived, now, kind, tau)
    c = a - fst[F_PREV]
    fst[F_PREV] = a
    return c


@njit(cache=True)
def _observe(
    i: int,
    k: int,
    machine_procs: int,
    oracle: bool,
    inv_log_t: float,
    parts: np.ndarray,
    by_estimate: bool,
    total: np.ndarray,
    mem: np.ndarray,
    ctl: np.ndarray,
    now: float,
    q: np.ndarray,
    fits: np.ndarray,
    submit: np.ndarray,
    runtime: np.ndarray,
    estimate: np.ndarray,
    prediction: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    ended: np.ndarray,
    procs: np.ndarray,
    user: np.ndarray,
    size_bin: np.ndarray,
    table: np.ndarray,
    h_count: np.ndarray,
    h_last: np.ndarray,
    h_run: np.ndarray,
    h_acc: np.ndarray,
    u_wait: np.ndarray,
    u_wait_procs: np.ndarray,
    u_run_procs: np.ndarray,
    obs_jobs: np.ndarray,
    obs_hist: np.ndarray,
    obs_sys: np.ndarray,
    obs_res: np.ndarray,
    obs_req: np.ndarray,
) -> None:
    """Row ``i`` of each observation part, as the builders of :mod:`hpcgym.env.observations` build it."""
    r = _running(mem)
    if parts[P_JOBS]:
        seen = ctl[X_SEEN]
        done = ctl[ek.C_DONE]
        if done > seen:  # _UserHistory.update
            jobs = ended[seen:done].copy()
            e = np.empty(len(jobs))
            for x in range(len(jobs)):
                e[x] = end[jobs[x]]
            user_history(jobs, e, start, estimate, user, h_count[i], h_last[i], h_run[i], h_acc[i])
            ctl[X_SEEN] = done
        out = obs_jobs[i]
        out[:] = 0.0
        job_window(out, q, fits, r, now, machine_procs, procs, estimate, prediction, submit, user, runtime,
                   oracle, inv_log_t, u_wait, u_wait_procs, u_run_procs, h_run[i], h_acc[i])  # fmt: skip
    if parts[P_HISTOGRAMS]:
        out2 = obs_hist[i]
        out2[:] = 0.0
        histograms(
            out2, q, r, now, size_bin, estimate if by_estimate else prediction, submit, start, inv_log_t
        )
    o_total = mem[ek.O_FREE_TOTAL]
    if parts[P_SYSTEM]:
        out1 = obs_sys[i]
        out1[:] = 0.0
        system(out1, q, fits, r, now, mem[o_total], machine_procs, k, procs, prediction, submit, start,
               inv_log_t)  # fmt: skip
    if parts[P_RESOURCES]:
        out1 = obs_res[i]
        for x in range(len(total)):
            out1[x] = mem[o_total + x] / total[x] if total[x] > 0 else 0.0
    if parts[P_REQUESTS]:
        out2 = obs_req[i]
        out2[:] = 0.0
        for x in range(min(len(q), k)):
            out2[x, :] = table[q[x]]


@njit(cache=True)
def _step_rows(
    actions: np.ndarray,
    skip: np.ndarray,
    k: int,
    kill: bool,
    reward_kind: int,
    tau: float,
    machine_procs: int,
    oracle: bool,
    inv_log_t: float,
    parts: np.ndarray,
    by_estimate: bool,
    total: np.ndarray,
    mem: np.ndarray,
    ctl: np.ndarray,
    fst: np.ndarray,
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
    reward_runtime: np.ndarray,
    counted: np.ndarray,
    procs: np.ndarray,
    user: np.ndarray,
    size_bin: np.ndarray,
    table: np.ndarray,
    h_count: np.ndarray,
    h_last: np.ndarray,
    h_run: np.ndarray,
    h_acc: np.ndarray,
    u_wait: np.ndarray,
    u_wait_procs: np.ndarray,
    u_run_procs: np.ndarray,
    fitbuf: np.ndarray,
    obs_jobs: np.ndarray,
    obs_hist: np.ndarray,
    obs_sys: np.ndarray,
    obs_res: np.ndarray,
    obs_req: np.ndarray,
    mask: np.ndarray,
    cost: np.ndarray,
    invalid: np.ndarray,
    final: np.ndarray,
) -> None:
    """Step every episode ``i`` with ``not skip[i]``: action, engine, observation, mask, cost.

    ``invalid[i]`` says whether the action was replaced by the fallback, ``final[i]``
    whether the episode ended at this step, ``cost[i]`` is the dense reward's cost
    (0 for :data:`NO_KERNEL`). An episode over before its first step (no decision point
    at all) ends at that step with the action flagged invalid, as in the single environment.
    """
    one = np.zeros(1, dtype=np.int64)
    for i in range(len(actions)):
        if skip[i]:
            continue
        c = ctl[i]
        f = fst[i]
        m = mem[i]
        n = c[X_JOBS]
        if c[X_DONE]:  # over at its reset: the single environment flags the step and ends it
            invalid[i] = True
        else:
            invalid[i] = _act(actions[i], k, kill, m, c, f, submit[i], runtime[i], estimate[i],
                              start[i], end[i], killed[i], ended[i], heap_t[i], heap_s[i], heap_j[i],
                              one, fitbuf)  # fmt: skip
        done = c[X_DONE] != 0
        final[i] = done
        q = _queue(m)
        ek.fits_jobs(m, q, fitbuf)
        fits = fitbuf[: len(q)]
        if done:
            mask[i, :] = False
            mask[i, k] = True
        else:
            job_mask(mask[i], fits, False, _future(c))
        sub = submit[i, :n]
        cost[i] = _cost(
            reward_kind, done, c, f, q, sub, start[i, :n], reward_runtime[i, :n], counted[i, :n], tau
        )
        _observe(i, k, machine_procs, oracle, inv_log_t, parts, by_estimate, total, m, c, f[F_NOW], q, fits,
                 sub, reward_runtime[i], estimate[i], prediction[i], start[i], end[i], ended[i], procs[i],
                 user[i], size_bin[i], table[i], h_count, h_last, h_run, h_acc, u_wait, u_wait_procs,
                 u_run_procs, obs_jobs, obs_hist, obs_sys, obs_res, obs_req)  # fmt: skip


@njit(cache=True, inline="always")
def _v1(a: np.ndarray, lay: np.ndarray, i: int) -> np.ndarray:
    o = lay[i, 0]
    return a[o : o + lay[i, 1]]


@njit(cache=True, inline="always")
def _v2(a: np.ndarray, lay: np.ndarray, i: int) -> np.ndarray:
    o = lay[i, 0]
    return a[o : o + lay[i, 1] * lay[i, 2]].reshape((lay[i, 1], lay[i, 2]))


@njit(cache=True, inline="always")
def _v3(a: np.ndarray, lay: np.ndarray, i: int) -> np.ndarray:
    o = lay[i, 0]
    return a[o : o + lay[i, 1] * lay[i, 2] * lay[i, 3]].reshape((lay[i, 1], lay[i, 2], lay[i, 3]))


@njit(cache=True, inline="always")
def _v4(a: np.ndarray, lay: np.ndarray, i: int) -> np.ndarray:
    o = lay[i, 0]
    size = lay[i, 1] * lay[i, 2] * lay[i, 3] * lay[i, 4]
    return a[o : o + size].reshape((lay[i, 1], lay[i, 2], lay[i, 3], lay[i, 4]))


@njit(cache=True)
def step_all(
    mem: np.ndarray,
    ff: np.ndarray,
    fi: np.ndarray,
    fb: np.ndarray,
    fo: np.ndarray,
    jf: np.ndarray,
    ji: np.ndarray,
    jb: np.ndarray,
    jo: np.ndarray,
    lay: np.ndarray,
) -> None:
    """Step every episode ``i`` with ``not skip[i]`` (:func:`_step_rows`), its arrays packed in arenas.

    ``ff, fi, fb, fo`` are the fixed float64, int64, bool and float32 arenas, ``jf, ji,
    jb, jo`` the per-job ones, ``lay`` the layout (the ``L_*`` entries: offset and
    dimensions of each array in its arena). Crossing into numba costs per array argument;
    ten arrays cross faster than fifty.
    """
    ipar = _v1(fi, lay, L_IPAR)
    fpar = _v1(ff, lay, L_FPAR)
    scratch = _v2(fi, lay, L_SCRATCH)
    _step_rows(
        _v1(fi, lay, L_ACTIONS), _v1(fb, lay, L_SKIP), ipar[I_K], ipar[I_KILL] != 0, ipar[I_REWARD],
        fpar[F_TAU], ipar[I_MACHINE], ipar[I_ORACLE] != 0, fpar[F_INV_LOG_T], _v1(fb, lay, L_PARTS),
        ipar[I_BY_ESTIMATE] != 0, _v1(ff, lay, L_TOTAL), mem, _v2(fi, lay, L_CTL), _v2(ff, lay, L_FST),
        _v2(jf, lay, L_SUBMIT), _v2(jf, lay, L_RUNTIME), _v2(jf, lay, L_ESTIMATE), _v2(jf, lay, L_PREDICTION),
        _v2(jf, lay, L_START), _v2(jf, lay, L_END), _v2(jb, lay, L_KILLED), _v2(ji, lay, L_ENDED),
        _v2(jf, lay, L_HEAPT), _v2(ji, lay, L_HEAPS), _v2(ji, lay, L_HEAPJ), _v2(jf, lay, L_RRUN),
        _v2(jf, lay, L_COUNTED), _v2(ji, lay, L_PROCS), _v2(ji, lay, L_USER), _v2(ji, lay, L_SIZEBIN),
        _v3(jo, lay, L_TABLE), _v2(fi, lay, L_HCOUNT), _v4(ff, lay, L_HLAST), _v2(ff, lay, L_HRUN),
        _v2(ff, lay, L_HACC), scratch[0], scratch[1], scratch[2], _v1(jb, lay, L_FITBUF),
        _v3(fo, lay, L_OJOBS), _v3(fo, lay, L_OHIST), _v2(fo, lay, L_OSYS), _v2(fo, lay, L_ORES),
        _v3(fo, lay, L_OREQ), _v2(fb, lay, L_MASK), _v1(ff, lay, L_COST), _v1(fb, lay, L_INVALID),
        _v1(fb, lay, L_FINAL),
    )  # fmt: skip
