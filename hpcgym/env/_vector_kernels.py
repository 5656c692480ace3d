"""One compiled call that steps N episodes of the dispatch environment (``job`` mode).

:class:`hpcgym.env._compiled.CompiledEpisodes` (for the single environment, one row, and
for :class:`hpcgym.env.vector.DispatchVectorEnv`, N) keeps each episode's engine state in
rows of padded ``(N, ...)`` arrays, packed in a few flat arenas, and calls
:func:`step_all` once per step. For each
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
from hpcgym.common._views import borrowed, cube, matrix, vector
from hpcgym.env._kernels import accrued_sum, job_mask, job_window, system, time_norms, user_history
from hpcgym.predict.histograms import duration_bins, histograms
from hpcgym.sim import _kernels as ek

X_JOBS = ek.COUNTERS  # jobs in the episode (context jobs included)
X_SEEN = ek.COUNTERS + 1  # ended jobs the user history has taken in
X_LO = ek.COUNTERS + 2  # the dense reward's first job that may still wait
X_DONE = ek.COUNTERS + 3  # every job has ended
X_MEMO = ek.COUNTERS + 4  # the per-job memos below are filled (0 after a load: filled at the next step)
CTL = ek.COUNTERS + 5

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
# per-job memos of what does not change in an episode (fixed predictions): the scaled estimate
# and prediction of the job window and the duration's histogram bin, a logarithm each, once
L_ESTNORM, L_PREDNORM, L_DURBIN = range(40, 43)
LAYOUT = 43
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
    ek.commit(mem, start, now, one, one, ek.NOT_GIVEN)
    ctl[ek.C_WAITING] -= 1
    ctl[ek.C_RUNNING] += 1
    size, seq = ctl[ek.C_HEAP], ctl[ek.C_SEQ]
    ek.schedule_end(runtime, estimate, end, killed, kill, heap_t, heap_s, heap_j, size, seq, now, j)
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
    est_norm: np.ndarray,
    pred_norm: np.ndarray,
    dur_bin: np.ndarray,
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
    """One episode's observation parts (its rows), as the builders of the observations module build them.

    With the memos ``est_norm``, ``pred_norm`` (:func:`~hpcgym.env._kernels.time_norms`) and
    ``dur_bin`` (:func:`~hpcgym.predict.histograms.duration_bins`) of the episode's fixed
    predictions: the values the builders compute, a logarithm less each.
    """
    r = _running(mem)
    if parts[P_JOBS]:
        seen = ctl[X_SEEN]
        done = ctl[ek.C_DONE]
        if done > seen:  # _UserHistory.update
            jobs = ended[seen:done]  # read only, by user_history
            e = np.empty(len(jobs))
            for x in range(len(jobs)):
                e[x] = end[jobs[x]]
            user_history(jobs, e, start, estimate, user, h_count, h_last, h_run, h_acc)
            ctl[X_SEEN] = done
        out = obs_jobs
        out[:] = 0.0
        job_window(out, q, fits, r, now, machine_procs, procs, estimate, prediction, submit, user, runtime,
                   oracle, inv_log_t, u_wait, u_wait_procs, u_run_procs, h_run, h_acc, est_norm,
                   pred_norm)  # fmt: skip
    if parts[P_HISTOGRAMS]:
        out2 = obs_hist
        out2[:] = 0.0
        duration = estimate if by_estimate else prediction
        histograms(out2, q, r, now, size_bin, duration, submit, start, inv_log_t, dur_bin)
    o_total = mem[ek.O_FREE_TOTAL]
    if parts[P_SYSTEM]:
        out1 = obs_sys
        out1[:] = 0.0
        system(out1, q, fits, r, now, mem[o_total], machine_procs, k, procs, prediction, submit, start,
               inv_log_t)  # fmt: skip
    if parts[P_RESOURCES]:
        out1 = obs_res
        for x in range(len(total)):
            out1[x] = mem[o_total + x] / total[x] if total[x] > 0 else 0.0
    if parts[P_REQUESTS]:
        out2 = obs_req
        out2[:] = 0.0
        for x in range(min(len(q), k)):
            out2[x, :] = table[q[x]]


@njit(cache=True, inline="always")
def _v1(a: np.ndarray, lay: np.ndarray, e: int) -> np.ndarray:
    """Layout entry ``e`` of arena ``a``, flat."""
    return vector(a, lay[e, 0], lay[e, 1] * max(lay[e, 2], 1) * max(lay[e, 3], 1) * max(lay[e, 4], 1))


@njit(cache=True, inline="always")
def _r1(a: np.ndarray, lay: np.ndarray, e: int, i: int) -> np.ndarray:
    """Row ``i`` of the ``(N, X)`` entry ``e``: a view, no reshape (numba's reshape calls out to C)."""
    x = lay[e, 2]
    return vector(a, lay[e, 0] + i * x, x)


@njit(cache=True, inline="always")
def _r2(a: np.ndarray, lay: np.ndarray, e: int, i: int) -> np.ndarray:
    """Row ``i`` of the ``(N, X, Y)`` entry ``e``, shaped ``(X, Y)``."""
    x = lay[e, 2]
    y = lay[e, 3]
    return matrix(a, lay[e, 0] + i * x * y, x, y)  # built directly (hpcgym.common._views), no reshape


@njit(cache=True, inline="always")
def _r3(a: np.ndarray, lay: np.ndarray, e: int, i: int) -> np.ndarray:
    """Row ``i`` of the ``(N, X, Y, Z)`` entry ``e``, shaped ``(X, Y, Z)``."""
    x = lay[e, 2]
    y = lay[e, 3]
    z = lay[e, 4]
    return cube(a, lay[e, 0] + i * x * y * z, x, y, z)


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
    """Step every episode ``i`` with ``not skip[i]``: action, engine, observation, mask, cost.

    The arrays live in arenas: ``ff, fi, fb, fo`` the fixed float64, int64, bool and
    float32 ones, ``jf, ji, jb, jo`` the per-job ones, ``mem`` the engine rows; ``lay``
    holds each array's offset and dimensions (the ``L_*`` entries). Crossing into numba
    costs per array argument, so ten cross instead of fifty, and the episode's rows are
    sliced here.

    ``invalid[i]`` says whether the action was replaced by the fallback, ``final[i]``
    whether the episode ended at this step, ``cost[i]`` is the dense reward's cost
    (0 for :data:`NO_KERNEL`). An episode over before its first step (no decision point
    at all) ends at that step with the action flagged invalid, as in the single environment.
    """
    # borrowed: the caller holds the arenas for the call and no view of them outlives it, so
    # the views made here and in the kernels called skip numba's reference counts (atomic
    # operations, several hundred a step before; hpcgym.common._views)
    mem, lay = borrowed(mem), borrowed(lay)
    ff, fi, fb, fo = borrowed(ff), borrowed(fi), borrowed(fb), borrowed(fo)
    jf, ji, jb, jo = borrowed(jf), borrowed(ji), borrowed(jb), borrowed(jo)
    ipar = _v1(fi, lay, L_IPAR)
    fpar = _v1(ff, lay, L_FPAR)
    k = ipar[I_K]
    kill = ipar[I_KILL] != 0
    reward_kind = ipar[I_REWARD]
    machine_procs = ipar[I_MACHINE]
    oracle = ipar[I_ORACLE] != 0
    by_estimate = ipar[I_BY_ESTIMATE] != 0
    tau = fpar[F_TAU]
    inv_log_t = fpar[F_INV_LOG_T]
    parts = _v1(fb, lay, L_PARTS)
    total = _v1(ff, lay, L_TOTAL)
    fitbuf = _v1(jb, lay, L_FITBUF)
    actions = _v1(fi, lay, L_ACTIONS)
    skip = _v1(fb, lay, L_SKIP)
    cost = _v1(ff, lay, L_COST)
    invalid = _v1(fb, lay, L_INVALID)
    final = _v1(fb, lay, L_FINAL)
    u_wait = _r1(fi, lay, L_SCRATCH, 0)
    u_wait_procs = _r1(fi, lay, L_SCRATCH, 1)
    u_run_procs = _r1(fi, lay, L_SCRATCH, 2)
    one = np.zeros(1, dtype=np.int64)
    for i in range(len(actions)):
        if skip[i]:
            continue
        c = _r1(fi, lay, L_CTL, i)
        f = _r1(ff, lay, L_FST, i)
        m = mem[i]
        submit = _r1(jf, lay, L_SUBMIT, i)
        runtime = _r1(jf, lay, L_RUNTIME, i)
        estimate = _r1(jf, lay, L_ESTIMATE, i)
        start = _r1(jf, lay, L_START, i)
        end = _r1(jf, lay, L_END, i)
        ended = _r1(ji, lay, L_ENDED, i)
        heap_t = _r1(jf, lay, L_HEAPT, i)
        heap_s = _r1(ji, lay, L_HEAPS, i)
        heap_j = _r1(ji, lay, L_HEAPJ, i)
        rrun = _r1(jf, lay, L_RRUN, i)
        n = c[X_JOBS]
        prediction = _r1(jf, lay, L_PREDICTION, i)
        est_norm = _r1(jf, lay, L_ESTNORM, i)
        pred_norm = _r1(jf, lay, L_PREDNORM, i)
        dur_bin = _r1(ji, lay, L_DURBIN, i)
        if not c[X_MEMO]:  # the first step since the episode's load: its predictions are fixed
            if parts[P_JOBS]:
                time_norms(est_norm[:n], estimate, inv_log_t)
                time_norms(pred_norm[:n], prediction, inv_log_t)
            if parts[P_HISTOGRAMS]:
                bins = lay[L_OHIST, 3]
                duration_bins(dur_bin[:n], estimate if by_estimate else prediction, inv_log_t, bins)
            c[X_MEMO] = 1
        if c[X_DONE]:  # over at its reset: the single environment flags the step and ends it
            invalid[i] = True
        else:
            invalid[i] = _act(actions[i], k, kill, m, c, f, submit, runtime, estimate, start, end,
                              _r1(jb, lay, L_KILLED, i), ended, heap_t, heap_s, heap_j, one,
                              fitbuf)  # fmt: skip
        done = c[X_DONE] != 0
        final[i] = done
        q = _queue(m)
        ek.fits_jobs(m, q, fitbuf)
        fits = fitbuf[: len(q)]
        mask = _r1(fb, lay, L_MASK, i)
        if done:
            mask[:] = False
            mask[k] = True
        else:
            job_mask(mask, fits, False, _future(c))
        sub = submit[:n]
        cost[i] = _cost(
            reward_kind, done, c, f, q, sub, start[:n], rrun[:n], _r1(jf, lay, L_COUNTED, i)[:n], tau
        )
        _observe(k, machine_procs, oracle, inv_log_t, parts, by_estimate, total, m, c, f[F_NOW], q, fits, sub,
                 rrun, estimate, prediction, start, end, ended, _r1(ji, lay, L_PROCS, i),
                 _r1(ji, lay, L_USER, i), _r1(ji, lay, L_SIZEBIN, i), est_norm, pred_norm, dur_bin,
                 _r2(jo, lay, L_TABLE, i),
                 _r1(fi, lay, L_HCOUNT, i), _r3(ff, lay, L_HLAST, i), _r1(ff, lay, L_HRUN, i),
                 _r1(ff, lay, L_HACC, i), u_wait, u_wait_procs, u_run_procs, _r2(fo, lay, L_OJOBS, i),
                 _r2(fo, lay, L_OHIST, i), _r1(fo, lay, L_OSYS, i), _r1(fo, lay, L_ORES, i),
                 _r2(fo, lay, L_OREQ, i))  # fmt: skip
