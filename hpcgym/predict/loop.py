"""Which predictors the compiled event loop can run, their state as arrays, and back.

The compiled event loop (:mod:`hpcgym.baselines._loop`) runs a built-in predictor's
hooks as kernels (:mod:`hpcgym.predict._kernels`). :func:`loop_predictor` says whether a
predictor is one of them and gives its :class:`~hpcgym.predict._kernels.PredictorArrays`
(after its ``reset``, before the first event); :func:`adopt_predictor` writes what the loop
did back into the Python object (its ``changes`` log, correction counts, user windows),
so it is in the state the Python loop would have left it in.

The built-in predictors the loop runs:

* a *fixed* one (:attr:`~hpcgym.predict.Predictor.fixed`: W, R, anything that only fills
  ``prediction`` in ``reset``), with or without :class:`~hpcgym.predict.Corrected` on top;
* :class:`~hpcgym.predict.UserHistory` (every configuration of 004 section 7's space,
  ``user-avg``, ``user-avg-imm``), with its own correction or with
  :class:`~hpcgym.predict.Corrected` on top.

A class that changes any hook of these (a user's subclass overriding ``on_submit``,
``predict``, ``on_expire``, ...) is not one of them: its run takes the Python loop.
:class:`~hpcgym.predict.Scaled` (the X2 presets) takes the Python loop too.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np

from hpcgym.machine import unique_ints
from hpcgym.predict import _kernels as pk
from hpcgym.predict.base import _EVENT_HOOKS, Predictor
from hpcgym.predict.modifiers import Corrected, CorrectionSteps
from hpcgym.predict.user_history import UserHistory

_HISTORY_METHODS = (*_EVENT_HOOKS, "reset", "predict", "_propagate_end")
_CORRECTED_METHODS = (*_EVENT_HOOKS, "reset")


def _keeps(predictor: Predictor, cls: type, methods: tuple[str, ...]) -> bool:
    """Whether ``predictor`` is a ``cls`` whose class keeps ``cls``'s ``methods``."""
    return isinstance(predictor, cls) and all(getattr(type(predictor), m) is getattr(cls, m) for m in methods)


def _history(predictor: Predictor) -> UserHistory | None:
    """``predictor`` if it predicts as :class:`UserHistory` does, with hooks the loop knows."""
    if _keeps(predictor, UserHistory, _HISTORY_METHODS) and not set(vars(predictor)) & set(_HISTORY_METHODS):
        return predictor  # type: ignore[return-value]
    return None


def runs_compiled(predictor: Predictor) -> bool:
    """Whether the compiled event loop can run ``predictor``'s hooks (see the module doc)."""
    if predictor.fixed:
        return True
    if _keeps(predictor, Corrected, _CORRECTED_METHODS):
        inner = predictor.inner  # type: ignore[attr-defined]
        return bool(inner.fixed) or _history(inner) is not None
    return _history(predictor) is not None


def loop_predictor(predictor: Predictor, n: int) -> pk.PredictorArrays | None:
    """``predictor``'s state as arrays for ``n`` jobs, after its ``reset``; None if the loop cannot run it."""
    if not runs_compiled(predictor):
        return None
    if predictor.fixed:
        return pk.empty_arrays(n)
    corrected = isinstance(predictor, Corrected)
    inner = predictor.inner if corrected else predictor  # type: ignore[attr-defined]
    history = _history(inner)
    mode = predictor.mode if corrected else (history.config.correction if history is not None else "none")  # type: ignore[attr-defined]
    est = np.array(predictor.estimate, dtype=np.float64)
    if history is None:  # a fixed predictor, corrected
        ps = pk.empty_arrays(n)._replace(
            est=est, corrected=np.zeros(n, dtype=np.int64), beyond=np.zeros(n, dtype=np.int64)
        )
        ps.cfg[pk.CFG_CORRECTION] = pk.CORRECTION_MODES[mode]
        return ps
    c = history.config
    user = _group_ids(np.asarray(history.workload.user, dtype=np.int64))
    users = int(user.max()) + 1 if n else 0
    if c.type == "extended":  # a window per (user, estimate)
        win = _group_ids(user, est)
    else:
        win = user
    windows = int(win.max()) + 1 if n else 0
    k = c.k
    cfg = np.zeros(pk.CFG_FIELDS, dtype=np.int64)
    cfg[pk.CFG_KIND] = pk.HISTORY
    cfg[pk.CFG_CORRECTION] = pk.CORRECTION_MODES[mode]
    cfg[pk.CFG_K] = k
    cfg[pk.CFG_TYPE] = pk.WINDOW_TYPES[c.type]
    cfg[pk.CFG_FULL] = c.fullness == "full"
    cfg[pk.CFG_METRIC] = pk.METRICS[c.metric]
    cfg[pk.CFG_RELATIVE] = c.fallback == "relative"
    cfg[pk.CFG_PROPAGATE] = bool(c.propagation)
    cfg[pk.CFG_BY_SUBMIT] = c.order == "submit"
    propagate = bool(c.propagation)
    return pk.PredictorArrays(
        cfg=cfg,
        cnt=np.zeros(pk.CNT_FIELDS, dtype=np.int64),
        est=est,
        user=user,
        win=win,
        wlen=np.zeros(windows, dtype=np.int64),
        wkeys=np.zeros(windows * k, dtype=np.int64),
        wruns=np.zeros(windows * k),
        wests=np.zeros(windows * k),
        rsum=np.zeros(users),
        rcnt=np.zeros(users),
        wnext=np.full(n if propagate else 0, -1, dtype=np.int64),
        wprev=np.full(n if propagate else 0, -1, dtype=np.int64),
        whead=np.full(users if propagate else 0, -1, dtype=np.int64),
        wtail=np.full(users if propagate else 0, -1, dtype=np.int64),
        corrected=np.zeros(n, dtype=np.int64),
        beyond=np.zeros(n, dtype=np.int64),
        memo_e=np.zeros(pk.MEMO),
        memo_p=np.zeros(pk.MEMO),
        scratch=np.zeros(k),
    )


def _group_ids(*keys: np.ndarray) -> np.ndarray:
    """Each row's group among the distinct rows of ``keys`` (columns), numbered in lexicographic order.

    What ``numpy.unique(np.column_stack(keys), axis=0, return_inverse=True)`` numbers,
    from one stable sort of the rows (numpy's sorts structured rows far more slowly).

    >>> _group_ids(np.array([3, 1, 3, 1]), np.array([5.0, 7.0, 2.0, 7.0])).tolist()
    [2, 0, 1, 0]
    """
    if len(keys) == 1 and len(keys[0]) and keys[0].dtype.kind in "iu":  # user ids: a table if few
        key = keys[0]
        lo = int(key.min())
        span = int(key.max()) - lo + 1
        if span < 2**62:
            return unique_ints(key - lo, span)[1]
    order = np.lexsort(keys[::-1])
    new = np.zeros(len(order), dtype=bool)
    new[:1] = True
    for key in keys:
        sorted_key = key[order]
        new[1:] |= sorted_key[1:] != sorted_key[:-1]
    ids = np.empty(len(order), dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids


def _steps(predictor: Predictor) -> CorrectionSteps | None:
    """The correction counters the Python predictor keeps, if it corrects."""
    steps = getattr(predictor, "_steps", None)
    return steps if isinstance(steps, CorrectionSteps) else None


def adopt_predictor(predictor: Predictor, ps: pk.PredictorArrays, log: np.ndarray, arrived: int) -> None:
    """Write what the compiled loop did into ``predictor`` (its ``prediction`` is already shared).

    ``arrived`` jobs were submitted.

    ``predictor.changes`` receives the logged revisions (as rows, no tuple made), the
    correction counters their counts and a user history its windows, relative ratios and
    waiting jobs, as the Python loop would have left them. The counters and the history
    are completed when first read (:class:`~hpcgym.predict.base.Deferred`): tens of
    thousands of dict entries a sweep run never reads.
    """
    if ps.cfg[pk.CFG_KIND] == pk.FIXED and ps.cfg[pk.CFG_CORRECTION] == pk.NO_CORRECTION:
        return
    m = int(ps.cnt[pk.CNT_LOG])
    if m:
        predictor.changes.add_rows(log[: 3 * m].reshape(m, 3).copy())
    steps = _steps(predictor)
    if steps is not None and ps.cfg[pk.CFG_CORRECTION] != pk.NO_CORRECTION:
        steps.defer(("_count", "_beyond"), lambda: _without_gc(_adopt_steps, steps, ps))
    if ps.cfg[pk.CFG_KIND] == pk.HISTORY:
        inner = predictor.inner if isinstance(predictor, Corrected) else predictor  # type: ignore[attr-defined]
        names = ("_windows", "_ends", "_ratio", "_waiting")
        inner.defer(names, lambda: _without_gc(_adopt_history, inner, ps, arrived))


def _without_gc(adopt: Callable[..., None], *args: Any) -> None:
    """``adopt(*args)`` with the garbage collector off.

    Tens of thousands of tuples and dict entries at once: each of the collector's full
    passes walks every object of the process (numba's are many), and these allocations
    set off several (EASY++ over SDSC-SP2: 15-35 ms of a 0.12 s run).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        adopt(*args)
    finally:
        if enabled:
            gc.enable()


def _adopt_steps(steps: CorrectionSteps, ps: pk.PredictorArrays) -> None:
    """The correction counters: how many times each job was corrected, and beyond its estimate."""
    for counter, counts in ((steps._count, ps.corrected), (steps._beyond, ps.beyond)):
        jobs = np.flatnonzero(counts)
        counter.update(zip(jobs.tolist(), counts[jobs].tolist(), strict=True))


def _adopt_history(history: UserHistory, ps: pk.PredictorArrays, arrived: int) -> None:
    """A user history's windows, ratios, termination count and waiting jobs (of ``arrived`` submissions)."""
    k = int(ps.cfg[pk.CFG_K])
    users = np.asarray(history.workload.user, dtype=np.int64)  # the ids of history._user
    first = np.full(len(ps.wlen), -1, dtype=np.int64)  # a job of each window: its key
    first[ps.win[::-1]] = np.arange(len(ps.win))[::-1]
    extended = ps.cfg[pk.CFG_TYPE] == pk.TYPE_EXTENDED
    windows: dict[Any, tuple[list[int], list[float], list[float]]] = {}
    live = np.flatnonzero(ps.wlen)
    # Python values of the live windows' arrays at once, sliced per window below
    wkeys, wruns, wests = ps.wkeys.tolist(), ps.wruns.tolist(), ps.wests.tolist()
    jobs = first[live]
    lengths = ps.wlen[live].tolist()
    owners = users[jobs].tolist()
    ests = ps.est[jobs].tolist()
    for w, n, user, est in zip(live.tolist(), lengths, owners, ests, strict=True):
        key = (user, est) if extended else user
        lo = w * k
        windows[key] = (wkeys[lo : lo + n], wruns[lo : lo + n], wests[lo : lo + n])
    history._windows = windows  # type: ignore[assignment]
    history._ends = int(ps.cnt[pk.CNT_ENDS])
    uid_first = np.full(len(ps.rsum), -1, dtype=np.int64)
    uid_first[ps.user[::-1]] = np.arange(len(ps.user))[::-1]
    history._ratio = {
        int(users[uid_first[u]]): [float(ps.rsum[u]), float(ps.rcnt[u])]
        for u in np.flatnonzero(ps.rcnt).tolist()
    }
    if ps.cfg[pk.CFG_PROPAGATE]:  # every user with a submitted job has a (maybe empty) set
        waiting: dict[int, dict[int, None]] = {u: {} for u in dict.fromkeys(users[:arrived].tolist())}
        for u in np.flatnonzero(ps.whead >= 0).tolist():
            jobs = waiting[int(users[uid_first[u]])]
            j = int(ps.whead[u])
            while j >= 0:
                jobs[j] = None
                j = int(ps.wnext[j])
        history._waiting = waiting
