"""APQ, IBL and QBETS online, on a simulation's own state: the environment's ``predicted_wait``.

:class:`OnlineWaitPredictor` keeps the history and the features as the simulation runs;
its bookkeeping and IBL are one compiled kernel per update (:func:`_online_update`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hpcgym.predict.histograms import NO_BINS
from hpcgym.predict.histograms import histograms as _histograms
from hpcgym.predict.waitpred.config import EMPTY, method_config, parse_wait_predictor
from hpcgym.predict.waitpred.features import FEATURES, _state_features
from hpcgym.predict.waitpred.models import apq_chain, apq_distances, apq_weights, qbets_bound


class OnlineWaitPredictor:
    """APQ, IBL or QBETS run online on a simulation's own state and history.

    The environment's ``predicted_wait`` observation drives it: at each decision point
    :meth:`update` is given the engine's read-only columns. A job is predicted once,
    at the first update at which it waits (its submission instant whenever the engine
    stops there), from the system state then (the 16 Table II features, and the Table I
    histograms for APQ's distribution distance) and the history of the jobs that have
    started since being predicted, the last ``config.history`` of them in start order
    (ties by job index). A history job's wait counts from its own prediction instant,
    so what is learnt and what is predicted are the same quantity. Nothing is read of
    a job that has not been submitted, and no run time at all. An empty history
    predicts 0.

    The bookkeeping, the features and IBL run in one compiled kernel per update (IBL's
    distances and its k-nearest Gaussian-weighted average computed in a loop, equal to
    :func:`~hpcgym.predict.waitpred.models.ibl_distances` and
    :func:`~hpcgym.predict.waitpred.models.nearest_average` up to rounding, which a test
    checks); QBETS and APQ predict with the functions of :mod:`hpcgym.predict.waitpred.models`.

    Args:
        method: ``"apq"``, ``"ibl"`` or ``"qbets"``.
        config: the method's config (defaults when None).
        procs: machine size in processors (APQ's size histogram bins).

    Attributes:
        seen: per job, the instant it was predicted (-1 before).
        predicted: per job, its predicted wait in seconds (0 before).
        case: per job, APQ's model (:data:`~hpcgym.predict.waitpred.config.CASES`;
            ``no_history`` when predicted 0 for want of history), 0 for the other methods.
    """

    def __init__(self, method: str = "ibl", config: Any = None, *, procs: int = 1) -> None:
        self.method = method
        self.config = method_config(method, config, None)
        self.procs = int(procs)
        self.reset(0)

    @classmethod
    def from_spec(cls, spec: str, *, procs: int = 1) -> OnlineWaitPredictor:
        """A predictor from ``METHOD[:key=value,...]`` (:func:`parse_wait_predictor`)."""
        method, cfg = parse_wait_predictor(spec)
        return cls(method, cfg, procs=procs)

    def reset(self, n_jobs: int, user: np.ndarray | None = None) -> None:
        """Forget everything; the next simulation has ``n_jobs`` jobs of users ``user`` (dense ids)."""
        n = int(n_jobs)
        cfg = self.config
        self.user = np.asarray(user, np.int64) if user is not None else np.zeros(n, np.int64)
        self.seen = np.full(n, -1.0)
        self.predicted = np.zeros(n)
        self.case = np.full(n, EMPTY, np.int8)
        self._wait = np.zeros(n)
        self._order = np.zeros(n, np.int64)  # jobs in the history, in start order
        self._tracked = np.zeros(n, np.int64)  # predicted, not started
        self._fresh = np.zeros(n, np.int64)
        self._counts = np.zeros(2, np.int64)  # history length, tracked jobs
        self._summary = np.zeros((n if self.method != "qbets" else 0, len(FEATURES)))
        self._distributions = self.method == "apq" and cfg.state != "summaries"
        bins = cfg.bins if self.method == "apq" else 1
        self._hist = np.zeros((n if self._distributions else 0, 6, bins))
        self._inv_log_t = 1.0 / np.log1p(cfg.max_time_s) if self.method == "apq" else 0.0
        self._size_bin = np.zeros(0, np.int64)
        self._predictions = 0
        self._weights: tuple[np.ndarray, np.ndarray] | None = None

    def update(
        self,
        now: float,
        queue: np.ndarray,
        running: np.ndarray,
        size: np.ndarray,
        estimate: np.ndarray,
        submit: np.ndarray,
        start: np.ndarray,
    ) -> np.ndarray:
        """Take in the state at ``now``: jobs started since join the history, new waiting jobs are predicted.

        Args:
            now: the current time.
            queue, running: indices of the waiting and the running jobs.
            size, estimate, submit: per-job request size, user estimate and submit time.
            start: per-job start time, NaN while waiting.

        Returns:
            The jobs predicted by this call.
        """
        ibl = self.method == "ibl"
        fresh = _online_update(
            float(now),
            np.asarray(queue, np.int64),
            np.asarray(running, np.int64),
            size,
            estimate,
            submit,
            start,
            self.user,
            self.seen,
            self._wait,
            self._order,
            self._tracked,
            self._fresh,
            self._counts,
            self._summary,
            self.method != "qbets",
            ibl,
            self.config.history,
            self.config.neighbors if ibl else 1,
            self.predicted,
            self.case,
        )
        jobs = self._fresh[:fresh].copy()
        if not ibl:
            if self._distributions and len(self._size_bin) != len(size):
                scale = self.config.bins / np.log2(self.procs) if self.procs > 1 else 0.0
                b = (np.log2(np.maximum(size, 1)) * scale).astype(np.int64)
                self._size_bin = np.minimum(b, self.config.bins - 1)
            for j in jobs:
                self._predict(int(j), now, queue, running, estimate, submit, start)
        return jobs

    def history(self) -> np.ndarray:
        """The jobs whose waits the next prediction reads, oldest start first."""
        count = int(self._counts[0])
        return self._order[max(0, count - self.config.history) : count]

    def _predict(
        self,
        j: int,
        now: float,
        queue: np.ndarray,
        running: np.ndarray,
        estimate: np.ndarray,
        submit: np.ndarray,
        start: np.ndarray,
    ) -> None:
        cfg = self.config
        if self._distributions:
            before = queue[queue < j]  # 003's queue at j's submission: the jobs submitted before it
            _histograms(
                self._hist[j],
                before,
                running,
                now,
                self._size_bin,
                estimate,
                submit,
                start,
                self._inv_log_t,
                NO_BINS,
            )
        h = self.history()
        if len(h) == 0:
            return
        waits = self._wait[h]
        if self.method == "qbets":
            self.predicted[j], self.case[j] = qbets_bound(waits, cfg.quantile, cfg.confidence), 0
            return
        if self._weights is None or self._predictions % cfg.weight_refresh == 0:
            hist_h = self._hist[h] if self._distributions else np.zeros((len(h), 6, 1))
            self._weights = apq_weights(self._summary[h], hist_h, waits)
        d, d_summary = apq_distances(
            cfg.state, self._summary, self._hist, h, j, *self._weights, distinctness=cfg.distinctness
        )
        self.predicted[j], self.case[j] = apq_chain(
            cfg, d, d_summary, waits, self._summary[h], self._summary[j]
        )
        self._predictions += 1


@njit(cache=True)
def _online_update(
    now: float,
    queue: np.ndarray,
    running: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    user: np.ndarray,
    seen: np.ndarray,
    wait: np.ndarray,
    order: np.ndarray,
    tracked: np.ndarray,
    fresh: np.ndarray,
    counts: np.ndarray,
    summary: np.ndarray,
    features: bool,
    ibl: bool,
    history: int,
    neighbors: int,
    predicted: np.ndarray,
    case: np.ndarray,
) -> int:
    """:meth:`OnlineWaitPredictor.update`'s bookkeeping; returns how many jobs it put in ``fresh``."""
    # jobs started since the last update join the history in start order (ties by index)
    count, nt = counts[0], counts[1]
    first = count
    keep = 0
    for k in range(nt):
        i = tracked[k]
        if np.isnan(start[i]):
            tracked[keep] = i
            keep += 1
            continue
        wait[i] = start[i] - seen[i]
        p = count
        while p > first and (
            start[order[p - 1]] > start[i] or (start[order[p - 1]] == start[i] and order[p - 1] > i)
        ):
            order[p] = order[p - 1]
            p -= 1
        order[p] = i
        count += 1
    nt = keep
    nf = 0
    for i in queue:
        if seen[i] < 0.0:
            seen[i] = now
            fresh[nf] = i
            nf += 1
            tracked[nt] = i
            nt += 1
    counts[0], counts[1] = count, nt
    if not features:
        return nf
    before = np.empty(len(queue), np.int64)
    for f in range(nf):
        j = fresh[f]
        nb = 0
        for i in queue:
            if i < j:
                before[nb] = i
                nb += 1
        _state_features(summary[j], j, now, before[:nb], running, size, estimate, submit, start, user)
        if ibl and count > 0:
            h = order[max(0, count - history) : count]
            predicted[j] = _ibl_predict(summary, h, j, wait, neighbors)
            case[j] = 0
    return nf


@njit(cache=True)
def _ibl_predict(summary: np.ndarray, h: np.ndarray, j: int, wait: np.ndarray, neighbors: int) -> float:
    """IBL for job ``j`` from history ``h``, both steps in one loop.

    The steps are :func:`~hpcgym.predict.waitpred.models.ibl_distances` and
    :func:`~hpcgym.predict.waitpred.models.nearest_average`.
    """
    m, nf = len(h), summary.shape[1]
    target = summary[j]
    lo = target.copy()
    hi = target.copy()
    for r in range(m):
        row = summary[h[r]]
        for c in range(nf):
            lo[c] = min(lo[c], row[c])
            hi[c] = max(hi[c], row[c])
    d = np.empty(m)
    for r in range(m):
        row = summary[h[r]]
        acc = 1.0 if row[0] != target[0] else 0.0
        for c in range(1, nf):
            span = hi[c] - lo[c]
            x = abs(row[c] - target[c]) / (span if span > 0 else 1.0)
            acc += x * x
        d[r] = np.sqrt(acc / nf)
    near = np.argsort(d, kind="mergesort")[: min(neighbors, m)]
    num = 0.0
    den = 0.0
    for r in near:
        w = np.exp(-(d[r] * d[r]))
        num += w * wait[h[r]]
        den += w
    return num / den
