"""Execution-time rangeSets of Hariharan et al. (003, section III), online and offline.

For a job about to be submitted, 003 predicts not one run time but a *rangeSet*: a few
disjoint ranges of run times, each with a probability. The steps, as the paper gives them
(section letters in brackets) and what hpcgym chooses where it leaves a detail open:

* **load** [A]: the load over an interval is the CPU time used in it divided by
  ``interval x P`` (P: machine size). A terminated job's *actual load* is that of the
  *other* jobs over its run (its own processors left out: 003 relates run time to "the
  number of other simultaneous executing jobs"); a job of zero length gets the other
  jobs' share of the machine at its start. The *predicted load* of a new job is the
  average load of the 30-minute intervals of the week before its submission, i.e. the
  CPU time used in that week over ``week x P`` (jobs still running count up to now).
* **load functions** [B]: from the jobs of the history, the tuples (user, request size,
  queue, group) with at least ``l`` (10) jobs whose loads span at least ``m`` (0.5)
  are candidates; the ``k`` (25) with most jobs each give one function. Their jobs are
  put in 20 load bins of width 0.05 (loads of 1 and more in the last); in each bin a
  1-D DBSCAN on the run times (``min_pts = 2``, ``eps`` in log run time: 0.1, about
  10 %) keeps the largest cluster (a bin without a cluster is dropped), and the bin
  becomes the point (mean load, mean run time) of that cluster. The longest sequence of
  bins with increasing load whose mean run times do not decrease and grow by at most
  ``X`` (50 %) from one to the next is found by dynamic programming over the DAG of
  003's Fig. 2, and a line is fitted to it (``numpy.polyfit``, degree 1); fewer than two
  points give no function. 003 fits the functions once on a validation set; here they
  are refitted from the history (below) after each ``refit`` (5,000) terminations, so
  the predictor stays online (no function before the first refit).
* **history** [V]: the latest ``history`` (15,000) terminated jobs, the oldest dropped
  as a new one ends (003 section V: "the history set consists of 15,000 jobs"); the
  load functions, the relevant history, the probabilities and the baseline read only
  it.
* **relevant history** [C]: the tuple's jobs in the history, latest termination first:
  the 10 latest, then older ones one by one until the span (max - min) of their run
  times reaches 90 % of the span of all the tuple's jobs.
* **rangeSet** [D]: each relevant job ``h`` (run time ``r_h``, actual load ``L_h``)
  and each load function ``f`` predict ``r_h + f(L*) - f(L_h)`` for the predicted load
  ``L*`` (003's shift; ``shift="relative"`` uses ``r_h * f(L*) / f(L_h)`` instead).
  With no function, the prediction is ``r_h``. Predictions below 0 are taken as 0. The
  range of ``h`` is [min, max] of its predictions, compacted to a width of at most 20 %
  of their median (``[0.9 c, 1.1 c]`` around the median ``c``, intersected).
* **merging** [E]: the ranges sorted by lower limit go through a stack; a range whose
  overlap with the top exceeds 50 % of the shorter of the two (a point inside a range
  overlaps it fully) is merged into the top, else its overlapping part is cut off (it
  starts where the top ends), so the final ranges are disjoint. A run time on the
  limit between two ranges belongs to the upper one.
* **probabilities** [F]: the share of the tuple's jobs in the history whose run time
  falls in each range. Ranges no job falls in ("new" ranges) share 0.1 equally and the
  others 0.9 in proportion to their counts (if every range is new, they share 1
  equally; if none is, the counts are normalised to 1). Only the 25 most probable
  ranges are kept (then renormalised).
* **point prediction** [VI-B]: the probability-weighted sum of the range medians
  (midpoints).
* a job whose tuple has no job in the history gets no rangeSet: the predictor then
  predicts its estimate, and the evaluation counts it apart (``jobs_without_history``).

Metrics (003 section VI-B, Tables VI and VII), over test jobs with history: **SR**, the
share of jobs whose run time lies in one of the ranges; **C**, coverage, the total
length of the ranges over the length of the *baseline* range [min, max] of the run
times of the tuple's jobs in the history, in percent, averaged over jobs whose baseline
range has a positive length (``C_of_totals``: the ratio of the summed lengths;
``C_median``: the median of the per-job ratios); the baseline's own SR; **AAE** of the
point prediction, in minutes.

:class:`RangeSetPredictor` is a :class:`~hpcgym.predict.Predictor` (``rangeset``):
any dispatcher can plan with its point prediction (capped by the estimate, as
``user-avg``). :func:`evaluate_runtime_predictor` feeds any predictor the logged
schedule (submit + SWF wait, :func:`hpcgym.workloads.logged.logged_start`) event by
event and scores its predictions at submission; ``hpcgym predict-eval`` prints them.
"""

from __future__ import annotations

import bisect
import sys
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.runtime import Predictor, make_predictor
from hpcgym.workloads import Workload

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


# ------------------------------------------------------------------ load
class LoadTracker:
    """The machine's used CPU time so far, online: ``used(t)`` for any past ``t``.

    Told of starts and ends in time order; keeps the breakpoints of the usage step
    function, so the CPU time used in any past interval is two look-ups.
    """

    def __init__(self) -> None:
        self.times: list[float] = []
        self.used_at: list[float] = []  # CPU seconds used up to each breakpoint
        self.usage: list[float] = []  # processors in use from each breakpoint on

    def _move(self, t: float, delta: float) -> None:
        if not self.times:
            self.times.append(t)
            self.used_at.append(0.0)
            self.usage.append(delta)
            return
        last = self.times[-1]
        if t == last:
            self.usage[-1] += delta
            return
        self.used_at.append(self.used_at[-1] + self.usage[-1] * (t - last))
        self.times.append(t)
        self.usage.append(self.usage[-1] + delta)

    def start(self, t: float, procs: float) -> None:
        self._move(t, procs)

    def end(self, t: float, procs: float) -> None:
        self._move(t, -procs)

    def used(self, t: float) -> float:
        """CPU seconds used from the first event up to ``t`` (0 before it)."""
        i = bisect.bisect_right(self.times, t) - 1
        if i < 0:
            return 0.0
        return self.used_at[i] + self.usage[i] * (t - self.times[i])

    @property
    def first(self) -> float:
        """Time of the first event (inf before any)."""
        return self.times[0] if self.times else float("inf")

    @property
    def in_use(self) -> float:
        """Processors in use now."""
        return self.usage[-1] if self.usage else 0.0


class TupleHistory:
    """The latest ``size`` terminated jobs, by (user, size, queue, group) tuple.

    003 (section V) keeps a history of 15,000 jobs, dropping the oldest as a new one
    comes; both the rangeSets and the baseline range read it. Each tuple's run times and
    loads are kept oldest first.
    """

    def __init__(self, size: int | None = 15_000) -> None:
        self.size = size
        self.keys: deque[int] = deque()
        self.runtimes: deque[float] = deque()
        self.loads: deque[float] = deque()
        self._rt: dict[int, deque[float]] = {}
        self._load: dict[int, deque[float]] = {}

    def add(self, key: int, runtime: float, load: float = 0.0) -> None:
        self.keys.append(key)
        self.runtimes.append(runtime)
        self.loads.append(load)
        if key not in self._rt:
            self._rt[key] = deque()
            self._load[key] = deque()
        self._rt[key].append(runtime)
        self._load[key].append(load)
        if self.size is not None and len(self.keys) > self.size:
            old = self.keys.popleft()
            self.runtimes.popleft()
            self.loads.popleft()
            self._rt[old].popleft()  # a tuple's oldest is the window's oldest of that tuple
            self._load[old].popleft()

    def runtimes_of(self, key: int) -> deque[float] | None:
        """The tuple's run times, oldest first (None or empty: no history)."""
        return self._rt.get(key)

    def loads_of(self, key: int) -> deque[float]:
        return self._load[key]


# ------------------------------------------------------------------ the predictor
class RangeSetPredictor(Predictor):
    """003's execution-time rangeSets; the point prediction is what dispatchers plan with.

    See the module docstring for every step. The point prediction is capped by the
    estimate (a job would be killed there); a job whose (user, size, queue, group) tuple
    has no terminated job keeps its estimate. With ``record`` the rangeSet of each job
    is kept in :attr:`rangesets` (job -> :class:`RangeSet`).

    Args: the fields of :class:`RangeSetConfig`, and ``record``.
    """

    name = "rangeset"

    def __init__(
        self,
        k: int = 25,
        l: int = 10,  # noqa: E741 - the paper's name
        m: float = 0.5,
        x: float = 0.5,
        eps: float = 0.1,
        recent: int = 10,
        span: float = 0.9,
        compact: float = 0.2,
        overlap: float = 0.5,
        new_mass: float = 0.1,
        max_ranges: int = 25,
        window: float = WEEK,
        refit: int = 5000,
        shift: str = "additive",
        history: int = 15_000,
        record: bool = False,
    ) -> None:
        super().__init__()
        self.config = RangeSetConfig(
            k,
            l,
            m,
            x,
            eps,
            recent,
            span,
            compact,
            overlap,
            new_mass,
            max_ranges,
            window,
            refit,
            shift,
            history,
        )
        self.record = bool(record)

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        cols = np.column_stack(
            [
                np.asarray(workload.user, dtype=np.int64),
                np.asarray(workload.procs_req, dtype=np.int64),
                np.asarray(workload.queue, dtype=np.int64),
                np.asarray(workload.group, dtype=np.int64),
            ]
        )
        n = len(cols)
        if n:
            uniq, key = np.unique(cols, axis=0, return_inverse=True)
            self._key: list[int] = key.reshape(-1).tolist()
        else:
            uniq, self._key = np.zeros((0, 4), np.int64), []
        self._tuples: dict[tuple[int, ...], int] = {tuple(r): i for i, r in enumerate(uniq.tolist())}
        self._user = cols[:, 0].tolist()
        self._qg = cols[:, 2:].tolist()
        self._procs: list[float] = np.asarray(workload.procs_req, dtype=np.float64).tolist()
        self._machine = float(workload.procs)
        self._load = LoadTracker()
        self._started_used = np.zeros(n)
        self._started_at = np.zeros(n)
        self.history = TupleHistory(self.config.history or None)
        self._ends = 0
        self.slopes = np.zeros(0)
        self.intercepts = np.zeros(0)
        self.rangesets: dict[int, RangeSet] = {}
        self.predicted_load = np.full(n, np.nan)

    def on_start(self, job: int, now: float) -> None:
        tracker = self._load
        tracker.start(now, self._procs[job])
        self._started_at[job] = now
        self._started_used[job] = tracker.used(now)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        tracker = self._load
        procs = self._procs[job]
        if runtime > 0:
            others = tracker.used(now) - self._started_used[job] - procs * runtime
            load = others / (runtime * self._machine)
        else:
            load = (tracker.in_use - procs) / self._machine
        load = max(load, 0.0)
        tracker.end(now, procs)
        key = self._key[job]
        self.history.add(key, runtime, load)
        self._ends += 1
        if self._ends % self.config.refit == 0:
            self._refit()

    def _refit(self) -> None:
        """The load functions from the jobs of the history (003 III-B)."""
        cfg = self.config
        h = self.history
        key = np.array(h.keys, dtype=np.int64)
        rt = np.array(h.runtimes)
        load = np.array(h.loads)
        order = np.argsort(key, kind="stable")
        key, rt, load = key[order], rt[order], load[order]
        _, first, count = np.unique(key, return_index=True, return_counts=True)
        lmin = np.minimum.reduceat(load, first)
        lmax = np.maximum.reduceat(load, first)
        cand = np.flatnonzero((count >= cfg.l) & (lmax - lmin >= cfg.m))
        top = cand[np.argsort(-count[cand], kind="stable")[: cfg.k]]
        slopes, intercepts = [], []
        for c in top.tolist():
            s = slice(first[c], first[c] + count[c])
            fit = fit_load_function(load[s], rt[s], cfg.x, cfg.eps)
            if fit is not None:
                slopes.append(fit[0])
                intercepts.append(fit[1])
        self.slopes = np.array(slopes)
        self.intercepts = np.array(intercepts)

    def target_load(self, now: float) -> float:
        """The predicted load of a job submitted at ``now``: the week before's average (003 III-A)."""
        tracker = self._load
        since = max(now - self.config.window, tracker.first)
        if not now > since:
            return tracker.in_use / self._machine
        return (tracker.used(now) - tracker.used(since)) / ((now - since) * self._machine)

    def load_until(self, now: float, until: float, expected: float) -> float:
        """The predicted load of a job submitted at ``until`` (after ``now``; 003 V-D's *futureLoad*).

        The average load of the week before ``until``: the CPU time used up to ``now``
        plus ``expected`` CPU seconds for ``[now, until]`` (e.g. the running jobs until
        their predicted ends), over ``week x P``.
        """
        tracker = self._load
        since = max(until - self.config.window, tracker.first)
        if not until > since:
            return tracker.in_use / self._machine
        past = tracker.used(now) - tracker.used(min(since, now))
        return (past + expected) / ((until - since) * self._machine)

    def rangeset(self, job: int, now: float) -> RangeSet | None:
        """The rangeSet of ``job`` submitted at ``now``; None if its tuple has no history."""
        key = self._key[job]
        if not self.history.runtimes_of(key):
            return None
        target = self.target_load(now)
        self.predicted_load[job] = target
        return self.rangeset_at(key, target)

    def tuple_key(self, user: int, size: int, queue: int, group: int) -> int:
        """The history key of a (user, request size, queue, group) tuple (a new tuple gets a new key)."""
        t = (int(user), int(size), int(queue), int(group))
        return self._tuples.setdefault(t, len(self._tuples))

    def resize(self, job: int, size: int) -> int:
        """``job`` (not submitted yet) asks for ``size`` processors: its tuple changes; returns its key."""
        q, g = self._qg[job]
        key = self.tuple_key(self._user[job], size, q, g)
        self._key[job] = key
        self._procs[job] = float(size)
        return key

    def rangeset_at(self, key: int, load: float) -> RangeSet | None:
        """The rangeSet of a job of tuple ``key`` at the predicted load ``load``; None without history."""
        rts = self.history.runtimes_of(key)
        if not rts:
            return None
        return predict_rangeset(
            np.array(rts),
            np.array(self.history.loads_of(key)),
            load,
            self.slopes,
            self.intercepts,
            self.config,
        )

    def on_submit(self, job: int, now: float) -> None:
        rs = self.rangeset(job, now)
        if rs is None:
            return
        if self.record:
            self.rangesets[job] = rs
        point = rs.point
        est = self.estimate[job]
        self.prediction[job] = point if point < est else est

    def __repr__(self) -> str:
        return f"RangeSetPredictor({self.config!r})"


# ------------------------------------------------------------------ offline evaluation
def logged_events(workload: Workload, stop: float = np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(kind, job, time)`` of the logged schedule in time order, up to ``stop``.

    Kinds: 0 end, 1 submission, 2 start; at one instant ends come first, then
    submissions, then starts (the engine's order). Starts are submit + SWF wait
    (:func:`hpcgym.workloads.logged.logged_start`: an unknown wait counts as 0).
    """
    from hpcgym.workloads import logged_start

    n = len(workload)
    start, _ = logged_start(workload)
    submit = np.asarray(workload.submit, dtype=np.float64)
    end = start + np.asarray(workload.runtime, dtype=np.float64)
    times = np.concatenate([end, submit, start])
    kinds = np.repeat(np.array([0, 1, 2]), n)
    jobs = np.tile(np.arange(n), 3)
    order = np.lexsort((jobs, kinds, times))
    order = order[times[order] <= stop]
    return kinds[order], jobs[order], times[order]


@dataclass
class RuntimeEvaluation:
    """Predictions at submission of the test jobs, with rangeSets where the predictor gives them.

    Attributes:
        trace, predictor: names.
        jobs: test job indices (into the workload).
        runtime: their run times (s).
        point: the prediction at submission (s), uncapped for a rangeSet predictor.
        has_history: whether the job's tuple had a terminated job (baseline defined).
        base_lo, base_hi: the baseline range [min, max] of the tuple's run times.
        ptr, lo, hi, p: rangeSets in compressed rows (job ``i``'s ranges are
            ``lo[ptr[i]:ptr[i+1]]``); empty rows for point predictors.
        load_functions: how many load functions were in use at the end.
        test_seconds: wall-clock seconds from the first test job's submission to the
            last's (the predictor's work on every event of that period).
    """

    trace: str
    predictor: str
    jobs: np.ndarray
    runtime: np.ndarray
    point: np.ndarray
    has_history: np.ndarray
    base_lo: np.ndarray
    base_hi: np.ndarray
    ptr: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    p: np.ndarray
    load_functions: int = 0
    test_seconds: float = float("nan")

    @property
    def has_ranges(self) -> bool:
        return len(self.lo) > 0

    def metrics(self) -> dict[str, Any]:
        """SR, C and AAE (003 Tables VI and VII) over the jobs with history; see the module docstring."""
        h = self.has_history
        rt = self.runtime[h]
        out: dict[str, Any] = {
            "trace": self.trace,
            "predictor": self.predictor,
            "test_jobs": len(self.jobs),
            "jobs_evaluated": int(h.sum()),
            "jobs_without_history": int((~h).sum()),
            "baseline_SR": _pct(((rt >= self.base_lo[h]) & (rt <= self.base_hi[h])).mean()),
            "AAE_min": float(np.abs(self.point[h] - rt).mean() / 60.0) if h.any() else float("nan"),
            "SR": float("nan"),
            "C": float("nan"),
            "C_of_totals": float("nan"),
            "C_median": float("nan"),
            "mean_ranges": float("nan"),
            "load_functions": self.load_functions,
        }
        if self.has_ranges and h.any():
            rows = np.flatnonzero(h)
            hit = np.zeros(len(rows), dtype=bool)
            length = np.zeros(len(rows))
            for i, r in enumerate(rows.tolist()):
                a, b = self.ptr[r], self.ptr[r + 1]
                lo, hi = self.lo[a:b], self.hi[a:b]
                hit[i] = locate(lo, hi, np.array([self.runtime[r]]))[0] >= 0
                length[i] = (hi - lo).sum()
            base = self.base_hi[h] - self.base_lo[h]
            pos = base > 0
            out["SR"] = _pct(hit.mean())
            out["C"] = _pct((length[pos] / base[pos]).mean()) if pos.any() else float("nan")
            out["C_of_totals"] = _pct(length[pos].sum() / base[pos].sum()) if pos.any() else float("nan")
            out["C_median"] = _pct(np.median(length[pos] / base[pos])) if pos.any() else float("nan")
            out["mean_ranges"] = float(np.diff(self.ptr)[h].mean())
        return out

    def table(self) -> dict[str, np.ndarray]:
        """One row per range (job, lo, hi, p) plus each job's point, for CSV or Parquet."""
        counts = np.diff(self.ptr)
        return {
            "job": np.repeat(self.jobs, counts),
            "runtime": np.repeat(self.runtime, counts),
            "point": np.repeat(self.point, counts),
            "lo": self.lo,
            "hi": self.hi,
            "p": self.p,
        }


def _pct(x: float) -> float:
    return float(100.0 * x)


def evaluate_runtime_predictor(
    workload: Workload,
    predictor: str | Predictor = "rangeset",
    first: int = 20_000,
    jobs: int | None = 40_000,
    *,
    history: int = 15_000,
    progress: bool = False,
) -> RuntimeEvaluation:
    """Predictions of ``predictor`` for jobs ``first .. first + jobs - 1``, fed the logged schedule.

    The predictor is told of the log's submissions, starts (submit + SWF wait) and ends
    in time order, as in a simulation, from the first job on (003 V: history from the
    trace's start, test set from job 20,001); its prediction of each test job right
    after that job's submission is scored. The baseline range of a job is [min, max] of
    the run times of its tuple's jobs among the latest ``history`` terminated before its
    submission (0: all of them); for a rangeSet predictor, its own ``history``.

    Raises:
        InvalidConfigError: ``first`` or ``jobs`` leave no test job.
    """
    n = len(workload)
    stop_job = n if jobs is None else min(n, first + jobs)
    if first < 0 or first >= stop_job:
        raise InvalidConfigError(
            f"test jobs: first={first}, jobs={jobs} leave no test job in a workload of {n} jobs"
        )
    pred = make_predictor(predictor) if isinstance(predictor, str) else predictor
    rset = _inner(pred)
    if rset is not None:
        rset.record = True
    w = workload.window(stop_job)
    pred.reset(w if pred.needs_runtime else w.public)
    kinds, evjobs, times = logged_events(w, float(w.submit[-1]))
    runtime = np.asarray(w.runtime, dtype=np.float64)
    test = np.arange(first, stop_job)
    point = np.full(stop_job, np.nan)
    key = _tuple_keys(w)
    base_lo = np.full(stop_job, np.inf)
    base_hi = np.full(stop_job, -np.inf)
    if rset is not None:
        history = rset.config.history
    seen = TupleHistory(history or None)
    on_end, on_submit, on_start = pred.on_end, pred.on_submit, pred.on_start
    prediction = pred.prediction
    bar = _bar(len(kinds), pred.name) if progress else None
    t0 = 0.0
    for i, (kind, j, t) in enumerate(zip(kinds.tolist(), evjobs.tolist(), times.tolist(), strict=True)):
        if kind == 0:
            on_end(j, t, runtime[j])
            seen.add(key[j], runtime[j])
        elif kind == 1:
            if j == first:
                t0 = time.perf_counter()
            on_submit(j, t)
            if j >= first:
                point[j] = prediction[j]
                rts = seen.runtimes_of(key[j])
                if rts:
                    base_lo[j], base_hi[j] = min(rts), max(rts)
        else:
            on_start(j, t)
        if bar is not None and i % 10_000 == 0:
            bar.update(min(10_000, len(kinds) - i))
    elapsed = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    has = np.isfinite(base_lo[test])
    ptr = np.zeros(len(test) + 1, dtype=np.int64)
    los: list[np.ndarray] = []
    his: list[np.ndarray] = []
    ps: list[np.ndarray] = []
    if rset is not None:
        for i, j in enumerate(test.tolist()):
            rs = rset.rangesets.get(j)
            if rs is not None:
                los.append(rs.lo)
                his.append(rs.hi)
                ps.append(rs.p)
                point[j] = rs.point  # uncapped: the paper's point prediction
            ptr[i + 1] = ptr[i] + (len(rs.lo) if rs is not None else 0)
    return RuntimeEvaluation(
        trace=workload.name,
        predictor=pred.name,
        jobs=test,
        runtime=runtime[test],
        point=point[test],
        has_history=has,
        base_lo=base_lo[test],
        base_hi=base_hi[test],
        ptr=ptr,
        lo=_cat(los),
        hi=_cat(his),
        p=_cat(ps),
        load_functions=len(rset.slopes) if rset is not None else 0,
        test_seconds=elapsed,
    )


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0)


def _inner(pred: Predictor) -> RangeSetPredictor | None:
    """The rangeSet predictor inside ``pred`` (itself or under +x / +pcor wrappers)."""
    while not isinstance(pred, RangeSetPredictor):
        inner = getattr(pred, "inner", None)
        if inner is None:
            return None
        pred = inner
    return pred


def _tuple_keys(w: Workload) -> list[int]:
    cols = np.column_stack([w.user, w.procs_req, w.queue, w.group]).astype(np.int64)
    _, key = np.unique(cols, axis=0, return_inverse=True)
    return key.reshape(-1).tolist()  # type: ignore[no-any-return]


def _bar(total: int, desc: str):  # type: ignore[no-untyped-def]
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="event", file=sys.stderr, leave=False)


# ------------------------------------------------------------------ CLI
PAPER_TABLES = {
    # 003 Table VI (baseline SR; rangeSet SR, C) and Table VII (rangeSet AAE, minutes)
    "SDSC-SP2": {"baseline_SR": 79, "SR": 81, "C": 26, "AAE_min": 43},
    "HPC2N": {"baseline_SR": 83, "SR": 77, "C": 19, "AAE_min": 64},
    "CEA-Curie": {"baseline_SR": 88, "SR": 72, "C": 23, "AAE_min": 116},
    "SDSC-Par": {"baseline_SR": 89, "SR": 78, "C": 8, "AAE_min": 36},
}
"""003's figures for rangeSets, by trace name prefix."""

COLUMNS = (
    ("trace", "trace", ""),
    ("predictor", "predictor", ""),
    ("jobs_evaluated", "jobs", ","),
    ("jobs_without_history", "no history", ","),
    ("baseline_SR", "baseline SR %", ".1f"),
    ("SR", "SR %", ".1f"),
    ("C", "C %", ".1f"),
    ("C_of_totals", "C totals %", ".1f"),
    ("C_median", "C median %", ".1f"),
    ("AAE_min", "AAE [min]", ".1f"),
)
"""The table ``hpcgym predict-eval`` prints: ``(key, header, format)``."""


def paper_row(trace: str) -> dict[str, Any] | None:
    """003's Table VI/VII figures for ``trace`` (matched by name prefix), or None."""
    for prefix, row in PAPER_TABLES.items():
        if trace.startswith(prefix):
            return {"trace": trace, "predictor": "003 (paper)", **row}
    return None


__all__ = [
    "LoadTracker",
    "RangeSet",
    "RangeSetConfig",
    "RangeSetPredictor",
    "RuntimeEvaluation",
    "TupleHistory",
    "evaluate_runtime_predictor",
    "fit_load_function",
    "job_ranges",
    "locate",
    "logged_events",
    "merge_ranges",
    "predict_rangeset",
    "range_probabilities",
    "relevant_count",
]
