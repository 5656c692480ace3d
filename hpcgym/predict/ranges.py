"""The steps of 003's rangeSets on arrays: load functions, ranges, merging, probabilities.

Each function is one step of Hariharan et al. (003) section III (its letter in the
docstring); :func:`predict_rangeset` chains them for one job. The whole method, with the
choices hpcgym makes where the paper leaves a detail open, is described in
:mod:`hpcgym.predict.rangesets`, whose predictor calls these steps;
:class:`RangeSetConfig` holds their parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from hpcgym.common.errors import InvalidConfigError

WEEK = 7 * 86400.0
N_BINS = 20
SHIFTS = ("additive", "relative")


# ------------------------------------------------------------------ configuration
@dataclass(frozen=True)
class RangeSetConfig:
    """Parameters of the rangeSet predictor (003 section III; defaults are the paper's).

    Attributes:
        k: load functions from the ``k`` tuples with most jobs.
        l: a tuple needs at least ``l`` terminated jobs to give a load function.
        m: ... and loads spanning at least ``m``.
        x: largest relative step (0.5 = 50 %) between consecutive bins of a function.
        eps: DBSCAN radius on log run time within a load bin (not in the paper).
        recent: relevant history starts with this many latest jobs.
        span: relevant history grows until its run times span this share of the tuple's.
        compact: a job's range is at most this share of its median wide.
        overlap: ranges overlapping by more than this share of the shorter are merged.
        new_mass: total probability of ranges no history job falls in.
        max_ranges: at most this many ranges per rangeSet.
        window: seconds of history for the predicted load (a week).
        refit: refit the load functions after every ``refit`` terminations.
        history: the history is the latest ``history`` terminated jobs (003 V: 15,000);
            0 keeps every terminated job.
        shift: ``"additive"`` (003) or ``"relative"`` shift of a load function.
    """

    k: int = 25
    l: int = 10  # noqa: E741 - the paper's name
    m: float = 0.5
    x: float = 0.5
    eps: float = 0.1
    recent: int = 10
    span: float = 0.9
    compact: float = 0.2
    overlap: float = 0.5
    new_mass: float = 0.1
    max_ranges: int = 25
    window: float = WEEK
    refit: int = 5000
    shift: str = "additive"
    history: int = 15_000

    def __post_init__(self) -> None:
        for name in ("k", "l", "recent", "max_ranges", "refit"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise InvalidConfigError(f"rangeset: {name} must be a positive integer, got {v!r}")
        for name in ("m", "x", "eps", "span", "compact", "overlap", "new_mass", "window"):
            v = getattr(self, name)
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float, np.number))
                or not np.isfinite(v)
                or v < 0
            ):
                raise InvalidConfigError(f"rangeset: {name} must be a number >= 0, got {v!r}")
        for name in ("span", "overlap", "new_mass"):
            if getattr(self, name) > 1:
                raise InvalidConfigError(f"rangeset: {name} must be at most 1, got {getattr(self, name)!r}")
        if self.window <= 0:
            raise InvalidConfigError(f"rangeset: window must be positive seconds, got {self.window!r}")
        if (
            isinstance(self.history, bool)
            or not isinstance(self.history, (int, np.integer))
            or self.history < 0
        ):
            raise InvalidConfigError(f"rangeset: history must be a number of jobs >= 0, got {self.history!r}")
        if self.shift not in SHIFTS:
            raise InvalidConfigError(
                f"rangeset: shift must be one of {', '.join(SHIFTS)}, got {self.shift!r}"
            )


# ------------------------------------------------------------------ the steps
def merge_ranges(lo: np.ndarray, hi: np.ndarray, overlap: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping ranges into disjoint ones (003 section III-E), sorted.

    A range inside the last kept one disappears into it; one overlapping it by more than
    ``overlap`` of the shorter of the two is merged into it; otherwise it starts where
    the kept one ends.

    >>> merge_ranges(np.array([10.0, 0.0, 12.0, 30.0]), np.array([20.0, 4.0, 24.0, 30.0]))
    (array([ 0., 10., 30.]), array([ 4., 24., 30.]))
    >>> merge_ranges(np.array([0.0, 8.0]), np.array([10.0, 30.0]))  # 2 of 10 overlap: cut
    (array([ 0., 10.]), array([10., 30.]))
    """
    order = np.lexsort((hi, lo))
    out_lo = np.asarray(lo, dtype=np.float64)[order]
    out_hi = np.asarray(hi, dtype=np.float64)[order]
    k = _merge_sorted(out_lo, out_hi, float(overlap))
    return out_lo[:k].copy(), out_hi[:k].copy()


@njit(cache=True)
def _merge_sorted(lo: np.ndarray, hi: np.ndarray, overlap: float) -> int:
    """:func:`merge_ranges` in place on ranges sorted by (lo, hi); returns how many are kept."""
    k = 0
    for i in range(len(lo)):
        a = lo[i]
        b = hi[i]
        if k:
            ta = lo[k - 1]
            tb = hi[k - 1]
            if b <= tb:
                continue  # inside the kept range
            if a <= tb:
                shorter = min(tb - ta, b - a)
                if shorter <= 0 or tb - a > overlap * shorter:
                    hi[k - 1] = b
                    continue
                a = tb  # the overlapping part goes to the kept range
        lo[k] = a
        hi[k] = b
        k += 1
    return k


def locate(lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Index of the disjoint sorted range holding each of ``x`` (-1: none); a shared limit goes up.

    >>> locate(np.array([0.0, 10.0]), np.array([10.0, 20.0]), np.array([-1.0, 5.0, 10.0, 20.0, 21.0]))
    array([-1,  0,  1,  1, -1])
    """
    i = np.searchsorted(lo, x, side="right") - 1
    inside = (i >= 0) & (x <= hi[np.maximum(i, 0)])
    return np.where(inside, i, -1)


def range_probabilities(
    lo: np.ndarray, hi: np.ndarray, history: np.ndarray, new_mass: float = 0.1
) -> np.ndarray:
    """Each range's probability from the run times of the tuple's history (003 III-F).

    >>> range_probabilities(np.array([0.0, 10.0, 50.0]), np.array([5.0, 20.0, 60.0]),
    ...                     np.array([1.0, 2.0, 3.0, 15.0, 100.0])).round(3).tolist()
    [0.675, 0.225, 0.1]
    """
    counts = np.bincount(locate(lo, hi, history) + 1, minlength=len(lo) + 1)[1:].astype(np.float64)
    new = counts == 0
    if new.all():
        return np.full(len(lo), 1.0 / len(lo))
    p = counts / counts.sum()
    if new.any():
        p *= 1.0 - new_mass
        p[new] = new_mass / new.sum()
    return p


def relevant_count(runtimes: np.ndarray, recent: int = 10, span: float = 0.9) -> int:
    """How many of the latest jobs (``runtimes``: oldest first) form the relevant history (003 III-C).

    >>> relevant_count(np.array([1.0, 100.0, 5.0, 6.0, 5.5]), recent=2, span=0.9)
    4
    """
    n = len(runtimes)
    if n <= recent:
        return n
    back = runtimes[::-1]
    width = np.maximum.accumulate(back) - np.minimum.accumulate(back)
    need = span * (width[-1])
    ok = np.flatnonzero(width[recent - 1 :] >= need)
    return int(ok[0]) + recent if len(ok) else n


def _dbscan_largest(values: np.ndarray, eps: float) -> np.ndarray:
    """The largest cluster of a 1-D DBSCAN with ``min_pts = 2`` (empty: none); ties: lowest values.

    With two points per core, 1-D DBSCAN's clusters are the runs of sorted values whose
    gaps are at most ``eps``, of two or more values.
    """
    v = np.sort(values)
    if len(v) < 2:
        return v[:0]
    breaks = np.flatnonzero(np.diff(v) > eps) + 1
    edges = np.r_[0, breaks, len(v)]
    sizes = np.diff(edges)
    best = int(np.argmax(sizes))
    if sizes[best] < 2:
        return v[:0]
    return v[edges[best] : edges[best + 1]]


def fit_load_function(
    loads: np.ndarray, runtimes: np.ndarray, x: float = 0.5, eps: float = 0.1
) -> tuple[float, float] | None:
    """``(slope, intercept)`` of 003's load function for one tuple's jobs, or None (III-B).

    >>> loads = np.array([0.1, 0.11, 0.5, 0.52, 0.9, 0.91])
    >>> slope, icpt = fit_load_function(loads, np.array([100.0, 102, 120, 121, 150, 149]))
    >>> round(slope), round(icpt)
    (61, 93)
    """
    bins = np.clip((loads / (1.0 / N_BINS)).astype(np.int64), 0, N_BINS - 1)
    log_rt = np.log1p(np.maximum(runtimes, 0.0))
    pts_load: list[float] = []
    pts_rt: list[float] = []
    for b in np.unique(bins).tolist():
        sel = bins == b
        cluster = _dbscan_largest(log_rt[sel], eps)
        if not len(cluster):
            continue
        lo_c, hi_c = cluster[0], cluster[-1]
        members = sel & (log_rt >= lo_c) & (log_rt <= hi_c)
        pts_load.append(float(loads[members].mean()))
        pts_rt.append(float(runtimes[members].mean()))
    n = len(pts_load)
    if n < 2:
        return None
    # longest path in the DAG x -> y: load_x < load_y, r_x <= r_y <= r_x (1 + x)
    best = [1] * n
    nxt = [-1] * n
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            ri, rj = pts_rt[i], pts_rt[j]
            if pts_load[i] < pts_load[j] and ri <= rj <= ri * (1.0 + x) and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
                nxt[i] = j
    i = int(np.argmax(best))
    if best[i] < 2:
        return None
    chain = []
    while i >= 0:
        chain.append(i)
        i = nxt[i]
    slope, intercept = np.polyfit(np.array(pts_load)[chain], np.array(pts_rt)[chain], 1)
    return float(slope), float(intercept)


def job_ranges(
    runtimes: np.ndarray,
    loads: np.ndarray,
    target_load: float,
    slopes: np.ndarray,
    intercepts: np.ndarray,
    compact: float = 0.2,
    shift: str = "additive",
) -> tuple[np.ndarray, np.ndarray]:
    """One range per relevant history job from the load functions (003 III-D)."""
    if len(slopes):
        if shift == "additive":
            pred = runtimes[:, None] + slopes[None, :] * (target_load - loads[:, None])
        else:
            f_then = slopes[None, :] * loads[:, None] + intercepts[None, :]
            f_now = slopes[None, :] * target_load + intercepts[None, :]
            ok = (f_then > 0) & (f_now > 0)
            ratio = np.where(ok, f_now / np.where(ok, f_then, 1.0), 1.0)
            pred = runtimes[:, None] * ratio
        pred = np.maximum(pred, 0.0)
        lo, hi = pred.min(axis=1), pred.max(axis=1)
        c = np.median(pred, axis=1)
        half = 0.5 * compact * c
        return np.maximum(lo, c - half), np.minimum(hi, c + half)
    return runtimes.copy(), runtimes.copy()


@dataclass(frozen=True)
class RangeSet:
    """Disjoint ranges of run times (s), sorted, with their probabilities."""

    lo: np.ndarray
    hi: np.ndarray
    p: np.ndarray

    @property
    def point(self) -> float:
        """The probability-weighted sum of the range medians."""
        return float((self.p * 0.5 * (self.lo + self.hi)).sum())

    @property
    def length(self) -> float:
        return float((self.hi - self.lo).sum())

    def holds(self, runtime: float) -> bool:
        return bool(locate(self.lo, self.hi, np.array([runtime]))[0] >= 0)


def predict_rangeset(
    history_rt: np.ndarray,
    history_load: np.ndarray,
    target_load: float,
    slopes: np.ndarray,
    intercepts: np.ndarray,
    config: RangeSetConfig,
) -> RangeSet:
    """The rangeSet of a job from its tuple's history (oldest first) and the load functions."""
    n = relevant_count(history_rt, config.recent, config.span)
    rel_rt, rel_load = history_rt[-n:], history_load[-n:]
    lo, hi = job_ranges(rel_rt, rel_load, target_load, slopes, intercepts, config.compact, config.shift)
    lo, hi = merge_ranges(lo, hi, config.overlap)
    p = range_probabilities(lo, hi, history_rt, config.new_mass)
    if len(lo) > config.max_ranges:
        keep = np.sort(np.argsort(-p, kind="stable")[: config.max_ranges])
        lo, hi, p = lo[keep], hi[keep], p[keep] / p[keep].sum()
    return RangeSet(lo, hi, p)
