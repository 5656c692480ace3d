"""The methods run over jobs of a log: each job's history and features, configurations batched.

:class:`_Context` gives each job the history of 003 section V (the last jobs to start
before its submission); the runners predict a set of jobs for several configurations at
once, computing the distances the configurations share once (:func:`_run_many`).
:func:`aae_hours` and :func:`scaled_aae` measure the error.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.predict.waitpred.config import EMPTY, APQConfig, IBLConfig, QBETSConfig
from hpcgym.predict.waitpred.features import LogState
from hpcgym.predict.waitpred.models import (
    apq_chain,
    apq_distances,
    apq_weights,
    gaussian_average,
    ibl_distances,
    qbets_bound,
    qbets_rank,
)


@dataclass
class _Context:
    """A log state, its features and the history order, shared by the methods."""

    state: LogState
    last: int
    history_first: int

    def __post_init__(self) -> None:
        s = self.state
        pool = np.arange(self.history_first, self.last)
        order = np.lexsort((pool, s.start[pool]))
        self.pool = pool[order]
        self.pool_start = s.start[self.pool]

    def features(self, bins: int, max_time_s: float) -> tuple[np.ndarray, np.ndarray]:
        return self.state.features(self.last, bins, max_time_s)

    def summary(self) -> np.ndarray:
        """The Table II features (they do not depend on the histograms' bins)."""
        for (last, _, _), (summary, _) in self.state._features.items():
            if last == self.last:
                return summary
        return self.features(2, 7 * 86400.0)[0]

    def history(self, j: int, size: int) -> np.ndarray:
        """The last ``size`` jobs (from ``history_first``) to start before job ``j``'s submission."""
        cnt = int(np.searchsorted(self.pool_start, self.state.submit[j], side="left"))
        return self.pool[max(0, cnt - size) : cnt]


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="job", file=sys.stderr, leave=False, disable=not enabled)


def _run_apq(ctx: _Context, targets: np.ndarray, cfgs: Sequence[APQConfig], progress: bool) -> tuple:
    """Predictions ``(len(cfgs), len(targets))`` and cases; the configs share history, bins, state."""
    base = cfgs[0]
    summary, hist = ctx.features(base.bins, base.max_time_s)
    waits_all = ctx.state.wait
    pred = np.zeros((len(cfgs), len(targets)))
    case = np.full((len(cfgs), len(targets)), EMPTY, np.int8)
    w_sum = w_dist = np.zeros(0)
    with _progress(len(targets), f"apq {ctx.state.name}", progress) as bar:
        for n, j in enumerate(targets):
            h = ctx.history(int(j), base.history)
            bar.update(1)
            if len(h) == 0:
                continue
            waits = waits_all[h]
            if n % base.weight_refresh == 0 or len(w_sum) == 0:
                w_sum, w_dist = apq_weights(summary[h], hist[h], waits)
            d, d_summary = apq_distances(
                base.state, summary, hist, h, int(j), w_sum, w_dist, distinctness=base.distinctness
            )
            for c, cfg in enumerate(cfgs):
                pred[c, n], case[c, n] = apq_chain(cfg, d, d_summary, waits, summary[h], summary[j])
    return pred, case


def _run_ibl(ctx: _Context, targets: np.ndarray, cfgs: Sequence[IBLConfig], progress: bool) -> tuple:
    summary = ctx.summary()
    pred = np.zeros((len(cfgs), len(targets)))
    with _progress(len(targets), f"ibl {ctx.state.name}", progress) as bar:
        for n, j in enumerate(targets):
            h = ctx.history(int(j), cfgs[0].history)
            bar.update(1)
            if len(h) == 0:
                continue
            d = ibl_distances(summary[h], summary[j])
            order = np.argsort(d, kind="stable")
            for c, cfg in enumerate(cfgs):
                near = order[: cfg.neighbors]
                pred[c, n] = gaussian_average(d[near], ctx.state.wait[h[near]])
    return pred, np.zeros_like(pred, np.int8)


def _run_qbets(ctx: _Context, targets: np.ndarray, cfgs: Sequence[QBETSConfig], progress: bool) -> tuple:
    cfg = cfgs[0]
    pred = np.zeros((len(cfgs), len(targets)))
    cnt = np.searchsorted(ctx.pool_start, ctx.state.submit[targets], side="left")
    k_full = qbets_rank(cfg.history, cfg.quantile, cfg.confidence)
    with _progress(len(targets), f"qbets {ctx.state.name}", progress) as bar:
        for n, c in enumerate(cnt):
            lo = max(0, int(c) - cfg.history)
            waits = ctx.state.wait[ctx.pool[lo : int(c)]]
            bar.update(1)
            if len(waits) == cfg.history:
                k = min(k_full, len(waits))
                pred[0, n] = np.partition(waits, k - 1)[k - 1]
            else:
                pred[0, n] = qbets_bound(waits, cfg.quantile, cfg.confidence)
    return pred, np.zeros_like(pred, np.int8)


_RUNNERS: dict[str, Callable[..., tuple]] = {"apq": _run_apq, "ibl": _run_ibl, "qbets": _run_qbets}
_SHARED = {
    "apq": ("history", "bins", "state", "distinctness", "max_time_s", "weight_refresh"),
    "ibl": ("history",),
    "qbets": (),
}
"""Parameters a batch of configs must share (everything else reuses the same distances)."""


def _run_many(ctx: _Context, method: str, targets: np.ndarray, cfgs: Sequence[Any], progress: bool) -> list:
    """Predictions and cases of each config, computing shared distances once per group."""
    out: list[Any] = [None] * len(cfgs)
    groups: dict[tuple, list[int]] = {}
    for i, cfg in enumerate(cfgs):
        key = tuple(getattr(cfg, k) for k in _SHARED[method]) if method != "qbets" else (i,)
        groups.setdefault(key, []).append(i)
    for members in groups.values():
        pred, case = _RUNNERS[method](ctx, targets, [cfgs[i] for i in members], progress)
        for row, i in enumerate(members):
            out[i] = (pred[row], case[row])
    return out


def aae_hours(pred: np.ndarray, actual: np.ndarray) -> float:
    """Average absolute error in hours."""
    return float(np.mean(np.abs(pred - actual)) / 3600.0) if len(actual) else math.nan


def scaled_aae(pred: np.ndarray, actual: np.ndarray, runtime: np.ndarray) -> float:
    """003's scaled AAE: each job's absolute error divided by its response time (>= 1 s), averaged."""
    response = np.maximum(actual + runtime, 1.0)
    return float(np.mean(np.abs(pred - actual) / response)) if len(actual) else math.nan
