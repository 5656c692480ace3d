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

:class:`RangeSetPredictor` is a :class:`~hpcgym.predict.base.Predictor` (``rangeset``):
any dispatcher can plan with its point prediction (capped by the estimate, as
``user-avg``). The steps on arrays are :mod:`hpcgym.predict.ranges`;
:func:`hpcgym.predict.runtime_eval.evaluate_runtime_predictor` scores the predictor on a
log (``hpcgym predict-eval``).
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import Any

import numpy as np

from hpcgym.predict.base import Predictor
from hpcgym.predict.ranges import WEEK, RangeSet, RangeSetConfig, fit_load_function, predict_rangeset


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
