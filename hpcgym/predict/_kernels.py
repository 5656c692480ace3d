"""The built-in predictors' event hooks as compiled kernels, for the compiled event loop.

The compiled event loop (:mod:`hpcgym.baselines._loop`) calls these at exactly the points
where the Python loop (:class:`hpcgym.sim.Simulator`) calls a predictor's hooks, on a
:class:`PredictorArrays` that :func:`hpcgym.predict.loop.loop_predictor` builds from a
predictor right after its ``reset``. They compute what the Python classes compute, in the
same floating-point operations and order, so predictions, revisions and corrections are
bit for bit the Python predictor's:

* :class:`~hpcgym.predict.user_history.UserHistory` (``user-history:...``, ``user-avg``,
  ``user-avg-imm``): :func:`on_submit`, :func:`on_start`, :func:`on_end` (windows per
  user or per user and estimate, the relative fallback's ratios, propagation to the
  user's waiting jobs), with its own correction if it has one;
* :class:`~hpcgym.predict.modifiers.CorrectionSteps` (``+pcor``,
  :class:`~hpcgym.predict.modifiers.Corrected` on top of a fixed predictor or of a user
  history): :func:`correction`.

A revision after submission goes through :func:`revise`, which also logs it as
``Predictor.changes`` does: the log is one float array of ``(time, job, value)`` triples
that grows as needed, so a function that may revise returns the log (the same array or
a larger copy).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

FIXED = 0
"""``cfg[CFG_KIND]``: predictions set in ``reset`` and never changed by a hook."""
HISTORY = 1
"""``cfg[CFG_KIND]``: :class:`~hpcgym.predict.user_history.UserHistory`'s hooks."""

NO_CORRECTION = 0
ESTIMATE = 1
GRADUAL = 2
EXPONENTIAL = 3
CORRECTION_MODES = {
    "none": NO_CORRECTION,
    "estimate": ESTIMATE,
    "gradual": GRADUAL,
    "exponential": EXPONENTIAL,
}
"""A correction's name (``CorrectionSteps.mode``) -> ``cfg[CFG_CORRECTION]``."""

TYPE_ALL = 0
TYPE_IMMEDIATE = 1
TYPE_EXTENDED = 2
WINDOW_TYPES = {"all": TYPE_ALL, "immediate": TYPE_IMMEDIATE, "extended": TYPE_EXTENDED}
METRIC_AVG = 0
METRIC_MEDIAN = 1
METRIC_MIN = 2
METRIC_MAX = 3
METRICS = {"avg": METRIC_AVG, "median": METRIC_MEDIAN, "min": METRIC_MIN, "max": METRIC_MAX}

# cfg: the configuration, one int each
CFG_KIND = 0
CFG_CORRECTION = 1
CFG_K = 2
CFG_TYPE = 3
CFG_FULL = 4
CFG_METRIC = 5
CFG_RELATIVE = 6
CFG_PROPAGATE = 7
CFG_BY_SUBMIT = 8
CFG_FIELDS = 9

# cnt: the counters
CNT_ENDS = 0  # terminations so far (the window key of order=end)
CNT_LOG = 1  # revisions in the log
CNT_FIELDS = 2

MINUTE = 60.0  # as hpcgym.predict.modifiers
EXPONENTIAL_GROWTH = 0.2
MEMO = 64
"""Estimates a propagation remembers the prediction of (more are computed again)."""
_NONE = -1


class PredictorArrays(NamedTuple):
    """A predictor's state as arrays (``n`` jobs, ``U`` users, ``W`` windows of ``k`` slots).

    Attributes:
        cfg: the configuration (``CFG_*``).
        cnt: the counters (``CNT_*``).
        est: every job's estimate as the predictor sees it.
        user: every job's user, numbered 0 .. U-1.
        win: every job's window (its user's, or with ``type=extended`` its user and
            estimate's), numbered 0 .. W-1.
        wlen: jobs in each window.
        wkeys, wruns, wests: each window's ``k`` slots (window ``w`` at ``w * k``), oldest
            first: sort keys (job index or termination count), run times, estimates.
        rsum, rcnt: per user, the sum of run time / estimate and its count (the relative
            fallback); ``rcnt`` 0 if none.
        wnext, wprev, whead, wtail: every user's waiting jobs in submission order, a
            doubly linked list (propagation only), -1 at the ends.
        corrected, beyond: every job's corrections, and those beyond its estimate.
        memo_e, memo_p, scratch: working space (a propagation's predictions per estimate,
            a median's sorted run times).
    """

    cfg: np.ndarray
    cnt: np.ndarray
    est: np.ndarray
    user: np.ndarray
    win: np.ndarray
    wlen: np.ndarray
    wkeys: np.ndarray
    wruns: np.ndarray
    wests: np.ndarray
    rsum: np.ndarray
    rcnt: np.ndarray
    wnext: np.ndarray
    wprev: np.ndarray
    whead: np.ndarray
    wtail: np.ndarray
    corrected: np.ndarray
    beyond: np.ndarray
    memo_e: np.ndarray
    memo_p: np.ndarray
    scratch: np.ndarray


def empty_arrays(n: int = 0) -> PredictorArrays:
    """A :data:`FIXED` predictor without correction (the arrays the loop's types need)."""
    i0 = np.zeros(0, dtype=np.int64)
    f0 = np.zeros(0)
    return PredictorArrays(
        cfg=np.zeros(CFG_FIELDS, dtype=np.int64),
        cnt=np.zeros(CNT_FIELDS, dtype=np.int64),
        est=np.zeros(n),
        user=i0, win=i0, wlen=i0, wkeys=i0, wruns=f0, wests=f0, rsum=f0, rcnt=f0,
        wnext=i0, wprev=i0, whead=i0, wtail=i0, corrected=i0, beyond=i0,
        memo_e=np.zeros(MEMO), memo_p=np.zeros(MEMO), scratch=f0,
    )  # fmt: skip


@njit(cache=True, inline="always")
def revise(
    ps: PredictorArrays, pred: np.ndarray, log: np.ndarray, now: float, j: int, value: float
) -> np.ndarray:
    """``Predictor.revise``: set ``j``'s prediction and log ``(now, j, value)``; returns the log."""
    pred[j] = value
    n = ps.cnt[CNT_LOG]
    if 3 * n + 3 > len(log):
        grown = np.empty(max(2 * len(log), 3 * n + 3))
        grown[: 3 * n] = log[: 3 * n]
        log = grown
    log[3 * n] = now
    log[3 * n + 1] = j
    log[3 * n + 2] = value
    ps.cnt[CNT_LOG] = n + 1
    return log


@njit(cache=True, inline="always")
def _step(i: int) -> float:
    """``modifiers._correction_step``: 1 min, then 15 x 2^(i-2) min."""
    return MINUTE if i == 1 else 15.0 * MINUTE * 2.0 ** float(i - 2)


@njit(cache=True, inline="always")
def correction(ps: PredictorArrays, j: int, old: float) -> float:
    """``CorrectionSteps.next``: the corrected prediction of ``j``, which outlived ``old``; counts it."""
    c = ps.corrected[j] + 1
    ps.corrected[j] = c
    est = ps.est[j]
    mode = ps.cfg[CFG_CORRECTION]
    if mode == GRADUAL:
        new = old + _step(c)
        return est if old < est < new else new
    if old < est:
        if mode == ESTIMATE:
            return est
        new = old + max(EXPONENTIAL_GROWTH * old, MINUTE)
        return new if new < est else est
    i = ps.beyond[j] + 1
    ps.beyond[j] = i
    return old + _step(i)


@njit(cache=True, inline="always")
def predict(ps: PredictorArrays, j: int) -> float:
    """``UserHistory.predict``: what the history known now predicts for ``j``."""
    cfg = ps.cfg
    est = ps.est[j]
    w = ps.win[j]
    n = ps.wlen[w]
    k = cfg[CFG_K]
    if n and (not cfg[CFG_FULL] or n >= k):
        base = w * k
        usable = True
        if cfg[CFG_TYPE] == TYPE_IMMEDIATE:
            for i in range(n):
                if ps.wests[base + i] != est:
                    usable = False
                    break
        if usable:
            runs = ps.wruns
            metric = cfg[CFG_METRIC]
            if metric == METRIC_AVG:
                s = 0.0
                for i in range(n):
                    s += runs[base + i]
                p = s / n
            elif metric == METRIC_MEDIAN:
                # sorted by insertion: at most k (<= a few tens) values, where numba's sort
                # costs a fixed half a microsecond a call (the median is the same either way)
                srt = ps.scratch
                for i in range(n):
                    v = runs[base + i]
                    q = i
                    while q > 0 and srt[q - 1] > v:
                        srt[q] = srt[q - 1]
                        q -= 1
                    srt[q] = v
                m = n // 2
                p = srt[m] if n % 2 else (srt[m - 1] + srt[m]) / 2.0
            elif metric == METRIC_MIN:
                p = runs[base]
                for i in range(1, n):
                    if runs[base + i] < p:
                        p = runs[base + i]
            else:
                p = runs[base]
                for i in range(1, n):
                    if runs[base + i] > p:
                        p = runs[base + i]
            return p if p < est else est
    if cfg[CFG_RELATIVE]:
        u = ps.user[j]
        if ps.rcnt[u] > 0.0:
            p = est * (ps.rsum[u] / ps.rcnt[u])
            return p if p < est else est
    return est


@njit(cache=True, inline="always")
def on_submit(ps: PredictorArrays, pred: np.ndarray, j: int) -> None:
    """``UserHistory.on_submit``: ``j`` waits (propagation) and gets its prediction."""
    if ps.cfg[CFG_PROPAGATE]:
        u = ps.user[j]
        last = ps.wtail[u]
        ps.wprev[j] = last
        ps.wnext[j] = _NONE
        if last == _NONE:
            ps.whead[u] = j
        else:
            ps.wnext[last] = j
        ps.wtail[u] = j
    pred[j] = predict(ps, j)


@njit(cache=True, inline="always")
def on_start(ps: PredictorArrays, j: int) -> None:
    """``UserHistory.on_start``: ``j`` no longer waits (propagation)."""
    if ps.cfg[CFG_PROPAGATE]:
        u = ps.user[j]
        p = ps.wprev[j]
        q = ps.wnext[j]
        if p == _NONE:
            ps.whead[u] = q
        else:
            ps.wnext[p] = q
        if q == _NONE:
            ps.wtail[u] = p
        else:
            ps.wprev[q] = p
        ps.wprev[j] = _NONE
        ps.wnext[j] = _NONE


@njit(cache=True, inline="always")
def _remember(ps: PredictorArrays, j: int, runtime: float, est: float) -> bool:
    """Add terminated job ``j`` to its window, oldest first, ``k`` at most (``UserHistory.on_end``).

    Returns False when the window is full and ``j`` is older than every job it holds.
    """
    cfg = ps.cfg
    k = cfg[CFG_K]
    w = ps.win[j]
    if cfg[CFG_BY_SUBMIT]:
        key = j
    else:
        key = ps.cnt[CNT_ENDS]
        ps.cnt[CNT_ENDS] = key + 1
    n = ps.wlen[w]
    base = w * k
    keys = ps.wkeys
    runs = ps.wruns
    ests = ps.wests
    if n == k and key < keys[base]:
        return False  # older than every job the window holds
    if n == 0 or key > keys[base + n - 1]:
        i = n  # the usual case: the newest so far
    else:  # bisect.bisect: after every key not above it
        i = 0
        while i < n and keys[base + i] <= key:
            i += 1
    if n < k:  # room: the later slots move up one
        for s in range(n, i, -1):
            keys[base + s] = keys[base + s - 1]
            runs[base + s] = runs[base + s - 1]
            ests[base + s] = ests[base + s - 1]
        ps.wlen[w] = n + 1
    else:  # full: the oldest goes, the earlier slots move down one
        i -= 1
        for s in range(i):
            keys[base + s] = keys[base + s + 1]
            runs[base + s] = runs[base + s + 1]
            ests[base + s] = ests[base + s + 1]
    keys[base + i] = key
    runs[base + i] = runtime
    ests[base + i] = est
    return True


@njit(cache=True, inline="always")
def on_end(
    ps: PredictorArrays, pred: np.ndarray, log: np.ndarray, j: int, now: float, runtime: float
) -> np.ndarray:
    """``UserHistory.on_end``: ``j`` ended after ``runtime`` s; returns the log (propagation revises)."""
    cfg = ps.cfg
    est = ps.est[j]
    changed = _remember(ps, j, runtime, est)
    u = ps.user[j]
    if cfg[CFG_RELATIVE] and est > 0:
        changed = True
        ps.rsum[u] += runtime / est
        ps.rcnt[u] += 1.0
    if cfg[CFG_PROPAGATE] and changed:
        log = _propagate(ps, pred, log, u, est, now)
    return log


@njit(cache=True)
def _propagate(
    ps: PredictorArrays, pred: np.ndarray, log: np.ndarray, u: int, est: float, now: float
) -> np.ndarray:
    """``UserHistory._propagate_end``: re-predict ``u``'s waiting jobs, in submission order."""
    only_same = ps.cfg[CFG_TYPE] == TYPE_EXTENDED and not ps.cfg[CFG_RELATIVE]
    memo_e = ps.memo_e
    memo_p = ps.memo_p
    remembered = 0
    w = ps.whead[u]
    while w != _NONE:
        e = ps.est[w]
        if not (only_same and e != est):
            found = False
            p = 0.0
            for i in range(remembered):
                if memo_e[i] == e:
                    p = memo_p[i]
                    found = True
                    break
            if not found:
                p = predict(ps, w)
                if remembered < MEMO:
                    memo_e[remembered] = e
                    memo_p[remembered] = p
                    remembered += 1
            if p != pred[w]:
                log = revise(ps, pred, log, now, w, p)
        w = ps.wnext[w]
    return log
