"""The models: APQ's chain (003 section II), IBL's nearest neighbours and QBETS's bound.

Distances and weights (Spearman weights, range-normalised feature differences, chi-square
distances of the histograms, distinctness), DBSCAN's noise count, the Gaussian-weighted
averages, APQ's chain of section II-C (:func:`apq_chain`: SDM, ridge regression, weighted
average) and QBETS's order statistic; each works on one job's history.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from hpcgym.predict.waitpred.config import REGRESSION, SDM, WEIGHTED, APQConfig


def spearman_weights(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|Spearman's rho| of each column of ``x`` with ``y`` (0 for a constant column).

    >>> spearman_weights(np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]]), np.array([3.0, 2.0, 1.0]))
    array([1., 0.])
    """
    rx = np.column_stack([_ranks(c) for c in np.asarray(x, np.float64).T]) if x.size else x
    ry = _ranks(np.asarray(y, np.float64))
    rx = rx - rx.mean(axis=0)
    ry = ry - ry.mean()
    den = np.sqrt((rx**2).sum(axis=0) * (ry**2).sum())
    num = np.abs(rx.T @ ry)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _ranks(v: np.ndarray) -> np.ndarray:
    """Ranks with ties given their average rank."""
    _, inv, counts = np.unique(v, return_inverse=True, return_counts=True)
    first = np.cumsum(counts) - counts
    return (first + (counts - 1) / 2.0)[inv]


def normalized_differences(f_hist: np.ndarray, f_target: np.ndarray) -> np.ndarray:
    """Per-feature distances in [0, 1]: 0/1 for the request size, range-normalised |difference| else.

    The range of each feature is taken over the history jobs and the target (eq. 2-4).
    """
    lo = np.minimum(f_hist.min(axis=0), f_target)
    span = np.maximum(f_hist.max(axis=0), f_target) - lo
    out = np.abs(f_hist - f_target) / np.where(span > 0, span, 1.0)
    out[:, 0] = f_hist[:, 0] != f_target[0]
    return out


def chi2_distances(hist: np.ndarray, rows: np.ndarray, target: int) -> np.ndarray:
    """``(len(rows), 6)`` chi-square distances (eq. 1) of ``hist[rows]`` to ``hist[target]``.

    Each row is divided by its largest entry, so each lies in [0, 1] (section II-B1).
    """
    out = np.zeros((len(rows), hist.shape[1]))
    _chi2(hist, np.asarray(rows, np.int64), int(target), out)
    return out


@njit(cache=True)
def _chi2(hist: np.ndarray, rows: np.ndarray, target: int, out: np.ndarray) -> None:
    q = hist[target]
    for r in range(len(rows)):
        p = hist[rows[r]]
        top = 0.0
        for i in range(p.shape[0]):
            acc = 0.0
            for b in range(p.shape[1]):
                den = p[i, b] + q[i, b]
                if den > 0.0:
                    diff = p[i, b] - q[i, b]
                    acc += diff * diff / den
            out[r, i] = acc
            if acc > top:
                top = acc
        if top > 0.0:
            for i in range(p.shape[0]):
                out[r, i] /= top


def dbscan_noise(x: np.ndarray, y: np.ndarray, eps: float, min_pts: int) -> int:
    """How many points DBSCAN(``eps``, ``min_pts``) leaves as noise (sklearn's convention).

    A point is core when at least ``min_pts`` points (itself included) lie within
    ``eps``; noise is every point that is neither core nor within ``eps`` of a core point.
    """
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    near = dx * dx + dy * dy <= eps * eps
    core = near.sum(axis=1) >= min_pts
    reached = core | near[:, core].any(axis=1)
    return int((~reached).sum())


def gaussian_average(d: np.ndarray, waits: np.ndarray) -> float:
    """The waits averaged with weights ``exp(-d**2)``."""
    w = np.exp(-(d * d))
    return float((w * waits).sum() / w.sum())


def nearest_average(d: np.ndarray, waits: np.ndarray, k: int) -> float:
    """The Gaussian-weighted average wait of the ``k`` nearest (ties by history order)."""
    k = min(k, len(d))
    near = np.argsort(d, kind="stable")[:k]
    return gaussian_average(d[near], waits[near])


@functools.lru_cache(maxsize=256)
def qbets_rank(n: int, quantile: float = 0.95, confidence: float = 0.95) -> int:
    """The 1-based order statistic of ``n`` values bounding the ``quantile`` at ``confidence``.

    The smallest ``k`` with P(Binomial(n, quantile) <= k - 1) >= ``confidence``; ``n + 1``
    when no order statistic of ``n`` values is a bound that sure.

    >>> qbets_rank(100)
    99
    """
    if n <= 0:
        return 1
    j = np.arange(n + 1)
    logpmf = (
        np.array([math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in range(n + 1)])
        + j * math.log(quantile)
        + (n - j) * math.log1p(-quantile)
    )
    cdf = np.cumsum(np.exp(logpmf))
    hit = np.flatnonzero(cdf >= confidence - 1e-12)
    return int(hit[0]) + 1 if len(hit) else n + 1


def qbets_bound(waits: np.ndarray, quantile: float = 0.95, confidence: float = 0.95) -> float:
    """QBETS's upper bound on the ``quantile`` of ``waits`` at ``confidence`` (the largest if none)."""
    n = len(waits)
    if n == 0:
        return 0.0
    k = min(qbets_rank(n, quantile, confidence), n)
    return float(np.partition(waits, k - 1)[k - 1])


def _sdm(d: np.ndarray, waits: np.ndarray, cfg: APQConfig) -> float | None:
    inside = d < cfg.sdm_threshold
    if not inside.any():
        return None
    di, wi = d[inside], waits[inside]
    win = (di / cfg.sdm_window).astype(np.int64)
    count = np.bincount(win)
    s1 = np.bincount(win, wi)
    s2 = np.bincount(win, wi * wi)
    ok = count >= cfg.min_pts
    if not ok.any():
        return None
    c = np.where(ok, count, 1)
    std = np.sqrt(np.maximum(s2 / c - (s1 / c) ** 2, 0.0))
    best = int(np.argmin(np.where(ok, std, np.inf)))
    pick = win == best
    return gaussian_average(di[pick], wi[pick])


def _ridge(f_hist: np.ndarray, waits: np.ndarray, f_target: np.ndarray, cfg: APQConfig) -> float:
    mu = f_hist.mean(axis=0)
    sd = f_hist.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    z = (f_hist - mu) / sd
    zt = (f_target - mu) / sd
    if cfg.backend == "sklearn":
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=cfg.ridge_alpha).fit(z, waits)
        return float(model.predict(zt[None, :])[0])
    ym = waits.mean()
    gram = z.T @ z + cfg.ridge_alpha * np.eye(z.shape[1])
    coef = np.linalg.lstsq(gram, z.T @ (waits - ym), rcond=None)[0]
    return float(ym + zt @ coef)


def _noise(x: np.ndarray, y: np.ndarray, cfg: APQConfig) -> int:
    if cfg.backend == "sklearn":
        from sklearn.cluster import DBSCAN

        labels = DBSCAN(eps=cfg.eps, min_samples=cfg.min_pts).fit(np.column_stack([x, y])).labels_
        return int((labels == -1).sum())
    return dbscan_noise(x, y, cfg.eps, cfg.min_pts)


def apq_chain(
    cfg: APQConfig,
    d: np.ndarray,
    d_summary: np.ndarray,
    waits: np.ndarray,
    f_hist: np.ndarray,
    f_target: np.ndarray,
) -> tuple[float, int]:
    """APQ's prediction from the distances to the history: ``(wait, case)``.

    ``case`` is the model that answered (:data:`~hpcgym.predict.waitpred.config.CASES`).

    Args:
        cfg: the parameters.
        d: distances of the history jobs by ``cfg.state``'s metric, in [0, 1].
        d_summary: their feature-summary distances (eq. 3), for the weighted average.
        waits: their waits, seconds.
        f_hist: their Table II features.
        f_target: the target's Table II features.
    """
    n = len(d)
    kn = min(n, max(cfg.min_pts, math.ceil(cfg.k_percent / 100.0 * n)))
    near = np.argpartition(d, kn - 1)[:kn] if kn < n else np.arange(n)
    if d[near].mean() > cfg.sdm_threshold:  # case A: the neighbours are too far away
        if cfg.far_model == "weighted_average":
            return nearest_average(d_summary, waits, cfg.neighbors), WEIGHTED
    else:
        wn = waits[near]
        top = wn.max()
        if _noise(d[near], wn / top if top > 0 else wn, cfg) < cfg.outlier_fraction * kn:
            pred = _sdm(d, waits, cfg)
            if pred is not None:
                return pred, SDM
    sel = d <= cfg.ridge_max_distance
    if sel.sum() >= cfg.ridge_min_jobs:
        pred = _ridge(f_hist[sel], waits[sel], f_target, cfg)
        if pred >= 0:
            return pred, REGRESSION
    return nearest_average(d_summary, waits, cfg.neighbors), WEIGHTED


def apq_weights(
    summary_h: np.ndarray, hist_h: np.ndarray, waits: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """APQ's |Spearman rho| weights from the history: of the 16 features, and of the distribution distance.

    The distribution distance weighs the two job features and the six histograms (each
    by the rho of its norm with the wait).
    """
    w_sum = spearman_weights(summary_h, waits)
    norms = np.sqrt((hist_h**2).sum(axis=2))
    return w_sum, np.concatenate([w_sum[:2], spearman_weights(norms, waits)])


def apq_distances(
    state: str,
    summary: np.ndarray,
    hist: np.ndarray,
    h: np.ndarray,
    j: int,
    w_sum: np.ndarray,
    w_dist: np.ndarray,
    *,
    distinctness: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(d, d_summary)``: distances of the history jobs ``h`` to job ``j`` (rows of ``summary``, ``hist``).

    ``d`` by ``state``'s metric (eq. 2 for ``"distributions"``, eq. 3-4 for
    ``"summaries"``; for ``"adaptive"`` eq. 2 when job ``j``'s
    :func:`histogram_distinctness` is at least ``distinctness``, else eq. 3-4),
    ``d_summary`` the feature-summary distance; ``w_sum`` and ``w_dist`` from
    :func:`apq_weights`.
    """
    nd = normalized_differences(summary[h], summary[j])
    d_summary = _weighted(nd, w_sum)
    if not by_distributions(state, hist[j], distinctness):
        return d_summary, d_summary
    parts = np.column_stack([nd[:, :2], chi2_distances(hist, h, j)])
    return _weighted(parts, w_dist), d_summary


def by_distributions(state: str, hist: np.ndarray, distinctness: float) -> bool:
    """Whether APQ compares a job with histograms ``hist`` by its distributions (eq. 2).

    ``"distributions"``: always; ``"summaries"``: never; ``"adaptive"``: when the job's
    :func:`histogram_distinctness` is at least ``distinctness`` (003 II-A).
    """
    if state == "adaptive":
        return bool(histogram_distinctness(hist) >= distinctness)
    return state == "distributions"


def histogram_distinctness(hist: np.ndarray) -> np.ndarray | float:
    """How far from uniform the Table I histograms ``hist[..., 6, bins]`` are, in [0, 1].

    One minus the Shannon entropy of each non-empty histogram over ``log(bins)``,
    averaged over the non-empty ones; 0 when all six are empty (no shape to compare).

    >>> flat, peaked = np.full(4, 0.25), np.array([1.0, 0, 0, 0])
    >>> float(histogram_distinctness(np.stack([flat, peaked, np.zeros(4), flat, peaked, np.zeros(4)])))
    0.5
    """
    p = np.asarray(hist, np.float64)
    bins = p.shape[-1]
    if bins < 2:
        return np.zeros(p.shape[:-2]) if p.ndim > 2 else 0.0
    logp = np.log(np.where(p > 0, p, 1.0))
    shape = 1.0 + (p * logp).sum(axis=-1) / math.log(bins)
    filled = p.sum(axis=-1) > 0
    count = filled.sum(axis=-1)
    out = np.where(count > 0, (shape * filled).sum(axis=-1) / np.maximum(count, 1), 0.0)
    return float(out) if out.ndim == 0 else out


def ibl_distances(f_hist: np.ndarray, f_target: np.ndarray) -> np.ndarray:
    """IBL's heterogeneous Euclidean-overlap distances of the history jobs to the target (equal weights)."""
    nd = normalized_differences(f_hist, f_target)
    return np.sqrt((nd * nd).mean(axis=1))


def _weighted(parts: np.ndarray, w: np.ndarray) -> np.ndarray:
    total = w.sum()
    if total <= 0:
        return parts.mean(axis=1)
    return np.asarray(parts @ (w / total))
