"""Queue-wait prediction on the live state of a simulation, for 003's resource manager.

:class:`LiveWaitPredictor` runs APQ, IBL or QBETS (:mod:`hpcgym.predict.waitpred`) on
the features of the engine's queue and running jobs, as the manager
(:mod:`hpcgym.baselines.molding`) records them; the jobs' columns as the queue sees them
(molded sizes and estimates) are a :class:`_Columns`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.predict import (
    FEATURES,
    apq_chain,
    by_distributions,
    chi2_distances,
    gaussian_average,
    normalized_differences,
    qbets_bound,
    spearman_weights,
)
from hpcgym.predict.histograms import NO_BINS
from hpcgym.predict.histograms import histograms as _histograms
from hpcgym.predict.waitpred import _weighted

__all__ = ["LiveWaitPredictor"]


class LiveWaitPredictor:
    """APQ, IBL or QBETS (:mod:`hpcgym.predict.waitpred`) on the state of a running simulation.

    The manager records each job's Table I/II features at its submission to the queue
    (:meth:`record`) and its wait when it starts (:meth:`started`); :meth:`predict`
    predicts the waits of hypothetical jobs from a state's features. Nothing is read
    but what :meth:`record` and :meth:`started` were told.
    """

    def __init__(self, method: str, config: Any, n: int, procs: int) -> None:
        self.method = method
        self.config = config
        self.bins = int(getattr(config, "bins", 10))
        self.inv_log_t = 1.0 / np.log1p(float(getattr(config, "max_time_s", 7 * 86400.0)))
        self.scale = self.bins / np.log2(procs) if procs > 1 else 0.0
        self.summary = np.zeros((n, len(FEATURES)))
        self.hist = np.zeros((n + 1, 6, self.bins))  # the last row: the target's scratch
        self.wait = np.zeros(n)
        self.order = np.zeros(n, np.int64)  # jobs in start order
        self.count = 0
        self.predictions = 0
        self.w_sum = np.zeros(0)
        self.w_dist = np.zeros(0)

    def size_bins(self, size: np.ndarray) -> np.ndarray:
        """Request-size bins as :meth:`hpcgym.predict.waitpred.LogState.size_bins`."""
        b = (np.log2(np.maximum(size, 1)) * self.scale).astype(np.int64)
        return np.minimum(b, self.bins - 1)

    def state(
        self,
        now: float,
        user: int,
        queue: np.ndarray,
        running: np.ndarray,
        cols: _Columns,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Features 2-15 of Table II (0 and 1, the job's own, left 0) and the Table I histograms."""
        f = np.zeros(len(FEATURES))
        size, est = cols.size, cols.estimate
        qs, qe = size[queue], est[queue]
        rs, re = size[running], est[running]
        f[2], f[3], f[4] = qs.sum(), qe.sum(), (now - cols.submit[queue]).sum()
        f[5], f[6], f[7] = rs.sum(), re.sum(), (now - cols.start[running]).sum()
        for first, sz, es, members in ((8, qs, qe, queue), (12, rs, re, running)):
            mine = cols.user[members] == user
            f[first] = (sz[mine] * es[mine]).sum() / 3600.0
            f[first + 1], f[first + 2], f[first + 3] = sz[mine].sum(), es[mine].sum(), mine.sum()
        hist = np.zeros((6, self.bins))
        _histograms(
            hist, queue, running, now, cols.size_bin, est, cols.submit, cols.start, self.inv_log_t, NO_BINS
        )
        return f, hist

    def record(self, job: int, summary: np.ndarray, hist: np.ndarray) -> None:
        self.summary[job] = summary
        self.hist[job] = hist

    def started(self, job: int, wait: float) -> None:
        self.wait[job] = wait
        self.order[self.count] = job
        self.count += 1

    def predict(self, targets: np.ndarray, hist: np.ndarray) -> np.ndarray:
        """Predicted waits (s, >= 0) of jobs with Table II rows ``targets`` in the state of ``hist``."""
        cfg = self.config
        h = self.order[max(0, self.count - cfg.history) : self.count]
        out = np.zeros(len(targets))
        if not len(h):
            return out
        waits = self.wait[h]
        if self.method == "qbets":
            out[:] = qbets_bound(waits, cfg.quantile, cfg.confidence)
            return out
        f_hist = self.summary[h]
        if self.method == "ibl":
            for i, f in enumerate(targets):
                nd = normalized_differences(f_hist, f)
                d = np.sqrt((nd * nd).mean(axis=1))
                near = np.argsort(d, kind="stable")[: cfg.neighbors]
                out[i] = gaussian_average(d[near], waits[near])
            return out
        if self.predictions % cfg.weight_refresh == 0 or not len(self.w_sum):
            self.w_sum = spearman_weights(f_hist, waits)
            norms = np.sqrt((self.hist[h] ** 2).sum(axis=2))
            self.w_dist = np.concatenate([self.w_sum[:2], spearman_weights(norms, waits)])
        self.predictions += 1
        chi = None
        if by_distributions(cfg.state, hist, cfg.distinctness):
            self.hist[-1] = hist
            chi = chi2_distances(self.hist, h, len(self.hist) - 1)
        for i, f in enumerate(targets):
            nd = normalized_differences(f_hist, f)
            d_summary = _weighted(nd, self.w_sum)
            d = d_summary if chi is None else _weighted(np.column_stack([nd[:, :2], chi]), self.w_dist)
            out[i] = apq_chain(cfg, d, d_summary, waits, f_hist, f)[0]
        return np.maximum(out, 0.0)


@dataclass
class _Columns:
    """The managed jobs' columns as the queue sees them (molded sizes and estimates)."""

    size: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    submit: np.ndarray  # submission to the queue (after any hold)
    start: np.ndarray
    size_bin: np.ndarray
