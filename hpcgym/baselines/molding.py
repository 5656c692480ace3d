"""Job molding and delayed submission: 003's resource manager in front of EASY (sections IV, V-C, V-D).

Hariharan et al. (003) put a resource manager between the users and the batch system.
For each job a user submits it predicts, for each request size the user has used
before, the job's queue wait (:mod:`hpcgym.predict.waitpred`'s predictors on the live system
state) and a rangeSet of run times (:mod:`hpcgym.predict.rangesets`), and submits the job with
the size whose rangeSet of response times scores best (**molding**, IV-A); with
**delayed submission** (IV-B) it may also hold the job until a predicted better time.
EASY backfilling (the ``easy`` preset, wall-time estimates) schedules underneath, on
hpcgym's one engine: the manager steps it up to each of its own instants
(:meth:`~hpcgym.sim.Simulator.advance_until`) and changes jobs before they reach the
queue (:meth:`~hpcgym.sim.Simulator.amend`).

What the paper says, and what hpcgym chooses where it leaves a detail open:

* **jobs** (V): the first ``history`` (10,000) jobs of the trace run unmanaged and
  fill the predictors' histories; the next ``jobs`` are managed (20,000 for molding,
  6,000 for delayed submission); later jobs are not simulated. The baseline is plain
  EASY on the same window with the jobs as logged. Means are over the managed jobs.
* **candidate sizes** (IV-A): the distinct request sizes of the user's earlier jobs in
  the trace (as logged), and the job's own. A size is scored only if its tuple (user,
  size, the job's queue and group) has a terminated job in the rangeSet history. Molding
  compares the response rangeSets of the sizes, so the job's own size must be among the
  scored ones: a job whose own size has no rangeSet keeps its request, as does a job
  with no scoreable size (both counted in ``no_candidate``). Without this rule
  (``score_own=False``, the behaviour before) a job moves to the only size with a
  prediction unopposed: on SDSC-Par a burst of 854 jobs of one user (8 processors, 11
  min each as logged, no earlier job of that tuple ended yet) all went to 64 processors,
  where that user's jobs ran 266 min, and the queue grew without bound.
* **score** (IV-A, eq. 5): each size's response rangeSet is its run-time rangeSet
  (at the predicted load) shifted by its predicted wait; all ranges of a job's
  candidates are divided by the largest upper limit among them, and a rangeSet scores
  ``sum_i integral_{l_i}^{u_i} (1 - t) dt / sum_i (u_i - l_i)`` (normalised by its
  coverage, as the paper says), i.e. ``1 -`` the length-weighted mean of the range
  midpoints. A range of zero length counts with a length of 1e-9 (a rangeSet of points
  scores ``1 -`` the mean of its points). The probabilities do not enter (eq. 5 has
  none). The highest score wins; ties keep the job's own size, else the smaller size.
* **molded estimate** (V-C): *maxPrevious* is the largest estimate of the user's
  earlier jobs of the chosen size; *maxLimit* the largest estimate of any job submitted
  so far (the site's limit is not in the SWF header). Shrunk: the smaller of the two
  that exceeds the logged estimate (neither: the logged estimate); expanded: the logged
  estimate.
* **molded run time** (V-C): drawn by roulette wheel, every earlier job of the user at
  the chosen size (as logged) equally likely, with a ``numpy.random.Generator`` seeded
  by ``seed``. This models the job's real run time at its new size, not a prediction,
  so it reads the log's run times of earlier submissions whether or not they ended.
  The job takes the request of the latest such job (:meth:`Simulator.amend`'s ``like``).
* **queue-wait prediction**: ``apq`` (default), ``ibl`` or ``qbets`` of
  :mod:`hpcgym.predict.waitpred` with their default parameters (no tuning), on the features
  of the live state: the engine's queue and running jobs with their (molded) sizes and
  estimates, elapsed times from their submission to the queue. The history is the last
  ``APQConfig.history`` jobs to start in this simulation, each with its features at its
  own submission and its wait in the queue. A decision at time ``t`` sees the state
  before the engine handles instant ``t`` (a job ending at ``t`` still runs).
* **delayed submission** (IV-B): with the hold queue empty, a job arriving at ``c``
  gets ``predicted_cur``, the point prediction (wait + probability-weighted range
  medians) of its best size now. The future time: the earliest predicted end after
  ``c`` of a running job (start + its rangeSet point prediction, capped by its
  estimate), moved on to the next predicted end while that comes within ``settle``
  (5 %) of the time from ``c``; the state then: those jobs gone, the queue as it is,
  the load *futureLoad* (:meth:`~hpcgym.predict.rangesets.RangeSetPredictor.load_until`, the
  running jobs counted until their predicted ends). ``predicted_future`` is the delay
  plus the best point prediction in that state. The job is held if
  ``predicted_future < (1 - threshold) * predicted_cur`` (30 %). Jobs arriving while
  a job is held join the hold queue; at the future time they are all submitted, in
  arrival order (003's "same temporal relationships": the order is kept, not the gaps,
  which would hold every later job back too), each molded then with the state of that
  instant. Wait and response count from the submission to the manager (the hold
  included).

Counts reported: ``molded`` (``expanded``, ``shrunk``), ``delayed`` (held), and the jobs
the trace reader dropped (the load report), which no simulation sees.

>>> from hpcgym.workloads import load_default
>>> r = run_managed(load_default().window(700), MoldingConfig(history=500, jobs=200, wait_predictor="qbets"))
>>> r.summary()["jobs"], r.molded <= 200
(200, True)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.report import format_table, to_json, write_csv
from hpcgym.predict import (
    FEATURES,
    APQConfig,
    IBLConfig,
    QBETSConfig,
    RangeSet,
    RangeSetConfig,
    RangeSetPredictor,
    Walltime,
    apq_chain,
    by_distributions,
    chi2_distances,
    gaussian_average,
    normalized_differences,
    qbets_bound,
    spearman_weights,
)
from hpcgym.predict import histograms as _histograms
from hpcgym.predict.waitpred import _weighted
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from hpcgym.sim import DispatcherBase, Schedule, Simulator

MODES = ("molding", "delay")
WAIT_PREDICTORS = ("apq", "ibl", "qbets")
DEFAULT_JOBS = {"molding": 20_000, "delay": 6_000}
"""Managed jobs by mode (003 V: molding on 20,000 jobs, delayed submission on 6,000)."""

PAPER = {
    "molding": {  # 003 Table VIII, minutes: baseline wait, exec, response; molding wait, exec, response
        "CEA-Curie": (15, 95, 110, 8, 64, 72),
        "HPC2N": (72, 289, 361, 50, 210, 260),
        "SDSC-Par": (102, 79, 181, 76, 51, 127),
        "SDSC-SP2": (198, 133, 331, 147, 98, 245),
    },
    "delay": {  # 003 Table IX
        "CEA-Curie": (11, 84, 95, 5, 50, 55),
        "HPC2N": (68, 265, 333, 47, 180, 227),
        "SDSC-Par": (114, 89, 203, 71, 42, 113),
        "SDSC-SP2": (200, 142, 342, 153, 79, 232),
    },
}
"""003 Tables VIII (molding) and IX (delayed submission) by trace-name prefix, minutes."""

_ZERO_WIDTH = 1e-9


# ------------------------------------------------------------------ configuration
@dataclass(frozen=True)
class MoldingConfig:
    """What the resource manager does (003 IV, V-C, V-D; defaults are the paper's).

    Attributes:
        mode: ``"molding"`` (IV-A) or ``"delay"`` (IV-B: molding plus the hold queue).
        history: jobs at the trace's start run unmanaged, as the predictors' history.
        jobs: managed jobs after them; None: 20,000 for molding, 6,000 for delay.
        seed: seed of the roulette wheel drawing molded run times.
        wait_predictor: ``"apq"``, ``"ibl"`` or ``"qbets"`` (:mod:`hpcgym.predict.waitpred`).
        wait_config: that predictor's config (its defaults when None).
        rangeset: the rangeSet predictor's config.
        threshold: hold a job if its predicted response at the future time is below
            ``(1 - threshold)`` times the one now (delay).
        settle: the future time moves on to the next predicted end of a running job
            while it comes within this share of the time from now (delay).
        block: consecutive managed jobs per block of the paired confidence interval.
        score_own: a job is molded only if its own size can be scored too (False: the
            best of whichever sizes can be scored, the own size or not).
    """

    mode: str = "molding"
    history: int = 10_000
    jobs: int | None = None
    seed: int = 0
    wait_predictor: str = "apq"
    wait_config: APQConfig | IBLConfig | QBETSConfig | None = None
    rangeset: RangeSetConfig = field(default_factory=RangeSetConfig)
    threshold: float = 0.3
    settle: float = 0.05
    block: int = 1000
    score_own: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        for name, low in (("history", 0), ("seed", 0), ("block", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise InvalidConfigError(f"{name} must be a whole number >= {low}, got {v!r}")
        if self.jobs is not None and (
            isinstance(self.jobs, bool) or not isinstance(self.jobs, (int, np.integer)) or self.jobs < 1
        ):
            raise InvalidConfigError(f"jobs must be a whole number >= 1 (managed jobs), got {self.jobs!r}")
        if self.wait_predictor not in WAIT_PREDICTORS:
            raise InvalidConfigError(
                f"wait_predictor must be one of {', '.join(WAIT_PREDICTORS)}, got {self.wait_predictor!r}"
            )
        expected = {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}[self.wait_predictor]
        if self.wait_config is not None and not isinstance(self.wait_config, expected):
            raise InvalidConfigError(
                f"wait_config must be a {expected.__name__} for {self.wait_predictor}, "
                f"got {type(self.wait_config).__name__}"
            )
        if not isinstance(self.rangeset, RangeSetConfig):
            raise InvalidConfigError(f"rangeset must be a RangeSetConfig, got {type(self.rangeset).__name__}")
        if not isinstance(self.score_own, bool):
            raise InvalidConfigError(f"score_own must be True or False, got {self.score_own!r}")
        for name in ("threshold", "settle"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v < 1.0:
                raise InvalidConfigError(f"{name} must be a number in [0, 1), got {v!r}")

    @property
    def managed(self) -> int:
        """Managed jobs (the mode's default when ``jobs`` is None)."""
        return self.jobs if self.jobs is not None else DEFAULT_JOBS[self.mode]

    @property
    def wait(self) -> APQConfig | IBLConfig | QBETSConfig:
        """The queue-wait predictor's config."""
        if self.wait_config is not None:
            return self.wait_config
        return {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}[self.wait_predictor]()


# ------------------------------------------------------------------ pieces
def gain_score(lo: np.ndarray, hi: np.ndarray, scale: float) -> float:
    """003's gain score (eq. 5, normalised by coverage) of response ranges ``[lo, hi]`` divided by ``scale``.

    With ``f(t) = 1 - t``, the sum of the integrals over the ranges divided by their
    total length: 1 minus the length-weighted mean of the range midpoints. A range of
    zero length counts with a tiny length (a set of points scores 1 - their mean).

    >>> gain_score(np.array([0.0]), np.array([10.0]), 10.0)  # the whole [0, 1]: mean gain 1/2
    0.5
    >>> round(gain_score(np.array([0.0, 8.0]), np.array([2.0, 10.0]), 10.0), 3)  # midpoints .1, .9
    0.5
    >>> gain_score(np.array([2.0, 4.0]), np.array([2.0, 4.0]), 10.0)  # points .2 and .4
    0.7
    """
    lo_n = np.asarray(lo, np.float64) / scale
    hi_n = np.asarray(hi, np.float64) / scale
    width = np.maximum(hi_n - lo_n, _ZERO_WIDTH)
    mid = 0.5 * (lo_n + hi_n)
    return float(1.0 - (width * mid).sum() / width.sum())


def choose_size(rangesets: list[RangeSet], waits: np.ndarray) -> tuple[int, np.ndarray]:
    """The index of the best candidate and every candidate's score (003 IV-A).

    Each candidate's response rangeSet is its run-time rangeSet shifted by its predicted
    wait; all are normalised by the largest upper limit among them. Ties go to the
    lowest index (callers list the job's own size first).

    >>> a = RangeSet(np.array([100.0]), np.array([200.0]), np.array([1.0]))
    >>> b = RangeSet(np.array([50.0]), np.array([60.0]), np.array([1.0]))
    >>> best, scores = choose_size([a, b], np.array([0.0, 500.0]))  # b waits 500 s more
    >>> int(best), scores.round(3).tolist()
    (0, [0.732, 0.009])
    """
    scale = max(float(rs.hi.max()) + float(w) for rs, w in zip(rangesets, waits, strict=True))
    scale = scale if scale > 0 else 1.0
    scores = np.array(
        [gain_score(rs.lo + w, rs.hi + w, scale) for rs, w in zip(rangesets, waits, strict=True)]
    )
    return int(np.argmax(scores)), scores


def molded_estimate(
    original: float, original_size: int, size: int, max_previous: float, max_limit: float
) -> float:
    """The molded job's estimate (003 V-C).

    Shrunk (``size < original_size``): the smaller of *maxPrevious* and *maxLimit* that
    exceeds the original estimate (neither does: the original); otherwise the original.

    >>> molded_estimate(3600.0, 64, 32, 7200.0, 86400.0)
    7200.0
    >>> molded_estimate(3600.0, 64, 32, 1800.0, 86400.0)  # maxPrevious is not longer
    86400.0
    >>> molded_estimate(3600.0, 64, 128, 7200.0, 86400.0)  # expanded: the original
    3600.0
    """
    if size < original_size:
        longer = [v for v in (max_previous, max_limit) if v > original]
        return float(min(longer)) if longer else float(original)
    return float(original)


def roulette(runtimes: np.ndarray, rng: np.random.Generator) -> float:
    """One run time drawn by roulette wheel: each earlier job's slot is equally wide.

    >>> roulette(np.array([5.0, 5.0, 9.0]), np.random.default_rng(0)) in (5.0, 9.0)
    True
    """
    return float(runtimes[int(rng.integers(len(runtimes)))])


def settle_time(now: float, ends: np.ndarray, settle: float = 0.05) -> float:
    """003 IV-B's future time: the earliest predicted end after ``now``, moved on while the next comes soon.

    From the earliest end ``t``, the next end is taken while it is within ``settle``
    times ``t - now`` of ``t``; inf if no end lies after ``now``.

    >>> settle_time(0.0, np.array([100.0, 104.0, 108.0, 200.0]))
    108.0
    >>> settle_time(0.0, np.array([-5.0]))
    inf
    """
    e = np.sort(np.asarray(ends, np.float64))
    e = e[e > now]
    if not len(e):
        return float("inf")
    t = float(e[0])
    for x in e[1:].tolist():
        if x - t > settle * (t - now):
            break
        t = x
    return t


# ------------------------------------------------------------------ the users' earlier jobs
class UserHistory:
    """Each user's earlier jobs by request size (as logged), told of the jobs in order.

    The candidate sizes, *maxPrevious*, *maxLimit* and the roulette wheel of 003 V-C
    read it; :meth:`see_until` adds the jobs before a given one, so nothing submitted
    later is ever read.
    """

    def __init__(self, workload: Workload) -> None:
        self.w = workload
        self.seen = 0
        self.by_user: dict[int, dict[int, list[int]]] = {}
        self.max_estimate = 0.0

    def see_until(self, job: int) -> None:
        """Add the jobs before ``job``."""
        w = self.w
        for k in range(self.seen, job):
            u, s = int(w.user[k]), int(w.procs_req[k])
            self.by_user.setdefault(u, {}).setdefault(s, []).append(k)
            self.max_estimate = max(self.max_estimate, float(w.estimate[k]))
        self.seen = max(self.seen, job)

    def candidates(self, job: int) -> list[int]:
        """``job``'s own size, then the other sizes of its user's earlier jobs, ascending."""
        own = int(self.w.procs_req[job])
        sizes = sorted(self.by_user.get(int(self.w.user[job]), {}))
        return [own, *(s for s in sizes if s != own)]

    def estimate(self, job: int, size: int) -> float:
        """The estimate of ``job`` molded to ``size`` (:func:`molded_estimate`)."""
        w = self.w
        own, est0 = int(w.procs_req[job]), float(w.estimate[job])
        if size == own:
            return est0
        prev = self.by_user.get(int(w.user[job]), {}).get(size, ())
        mp = max((float(w.estimate[k]) for k in prev), default=0.0)
        return molded_estimate(est0, own, size, mp, self.max_estimate)

    def draw(self, job: int, size: int, rng: np.random.Generator) -> tuple[float, int]:
        """``(run time, donor)`` of ``job`` molded to ``size``: the roulette wheel over the
        user's earlier jobs of that size, and the latest of them (whose request it takes)."""
        donors = self.by_user[int(self.w.user[job])][size]
        return roulette(np.asarray(self.w.runtime)[donors], rng), donors[-1]


# ------------------------------------------------------------------ queue-wait prediction on the live state
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
        _histograms(hist, queue, running, now, cols.size_bin, est, cols.submit, cols.start, self.inv_log_t)
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


# ------------------------------------------------------------------ the manager
class _Observer(Walltime):
    """The engine's predictor: wall-time for EASY, and the manager's eyes on the engine's events."""

    def __init__(self, manager: _Manager) -> None:
        super().__init__()
        self._m = manager

    def on_submit(self, job: int, now: float) -> None:
        self._m.submitted(job, now)

    def on_start(self, job: int, now: float) -> None:
        self._m.started(job, now)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        self._m.rset.on_end(job, now, runtime)


class _Manager:
    """The resource manager of one run: predictors, the user's history and the decisions."""

    def __init__(self, w: Workload, cfg: MoldingConfig) -> None:
        from hpcgym.sim import Simulator

        self.w = w
        self.cfg = cfg
        n = len(w)
        self.rng = np.random.default_rng(cfg.seed)
        self.rset = RangeSetPredictor(**dataclasses.asdict(cfg.rangeset))
        self.waits = LiveWaitPredictor(cfg.wait_predictor, cfg.wait, n, int(w.procs))
        size = np.asarray(w.procs_req, np.int64).copy()
        self.cols = _Columns(
            size=size,
            estimate=np.asarray(w.estimate, np.float64).copy(),
            user=np.asarray(w.user, np.int64),
            submit=np.asarray(w.submit, np.float64).copy(),
            start=np.full(n, np.nan),
            size_bin=self.waits.size_bins(size),
        )
        self.sim = Simulator(w, predictor=_Observer(self))
        self.rset.reset(w.public)
        self.rset.estimate = self.rset.estimate.copy()
        self.users = UserHistory(w)
        self.decide_seconds = 0.0
        self.decisions = 0
        self.no_candidate = 0

    # ---- the engine's events
    def submitted(self, job: int, now: float) -> None:
        self.rset.on_submit(job, now)
        sim = self.sim
        q = sim.view.queue
        f, hist = self.waits.state(now, int(self.cols.user[job]), q[q < job], sim.view.running, self.cols)
        f[0], f[1] = self.cols.size[job], self.cols.estimate[job]
        self.waits.record(job, f, hist)

    def started(self, job: int, now: float) -> None:
        self.rset.on_start(job, now)
        self.cols.start[job] = now
        self.waits.started(job, now - self.cols.submit[job])

    # ---- a decision
    def evaluate(
        self, job: int, now: float, queue: np.ndarray, running: np.ndarray, load: float
    ) -> tuple[int, float, float] | None:
        """``(size, estimate, point response)`` of the best size in a state; None: no scoreable
        size, or (``score_own``) none for the job's own size."""
        w, cols = self.w, self.cols
        own = int(w.procs_req[job])
        q, g = int(w.queue[job]), int(w.group[job])
        user = int(w.user[job])
        sizes, ests, sets = [], [], []
        for s in self.users.candidates(job):  # the own size first
            rs = self.rset.rangeset_at(self.rset.tuple_key(user, s, q, g), load)
            if rs is None:
                if s == own and self.cfg.score_own:
                    return None
                continue
            sizes.append(s)
            ests.append(self.users.estimate(job, s))
            sets.append(rs)
        if not sets:
            return None
        base, hist = self.waits.state(now, user, queue, running, cols)
        targets = np.tile(base, (len(sizes), 1))
        targets[:, 0], targets[:, 1] = sizes, ests
        pw = self.waits.predict(targets, hist)
        order = np.lexsort((np.array(sizes), np.array([s != own for s in sizes])))
        best_i, _ = choose_size([sets[i] for i in order], pw[order])
        i = int(order[best_i])
        return sizes[i], ests[i], float(pw[i] + sets[i].point)

    def mold(self, job: int, now: float) -> int:
        """Choose ``job``'s size now and amend it; returns -1 shrunk, 0 kept, 1 expanded."""
        t0 = time.perf_counter()
        view = self.sim.view
        best = self.evaluate(job, now, view.queue, view.running, self.rset.target_load(now))
        self.decisions += 1
        out = 0
        if best is None:
            self.no_candidate += 1
        elif best[0] != int(self.w.procs_req[job]):
            size, est, _ = best
            runtime, donor = self.users.draw(job, size, self.rng)
            self.sim.amend(job, runtime=runtime, estimate=est, like=donor)
            self.cols.size[job] = size
            self.cols.size_bin[job] = self.waits.size_bins(np.array([size]))[0]
            self.cols.estimate[job] = est
            self.rset.resize(job, size)
            self.rset.estimate[job] = est
            out = 1 if size > int(self.w.procs_req[job]) else -1
        self.decide_seconds += time.perf_counter() - t0
        return out

    def hold_until(self, job: int, now: float) -> float:
        """003 IV-B: the time to hold ``job`` until, or ``now`` to submit it at once."""
        t0 = time.perf_counter()
        view = self.sim.view
        queue, running = view.queue, view.running
        cur = self.evaluate(job, now, queue, running, self.rset.target_load(now))
        out = now
        if cur is not None and len(running):
            pred = np.minimum(np.asarray(self.rset.prediction)[running], self.cols.estimate[running])
            ends = self.cols.start[running] + pred
            t = settle_time(now, ends, self.cfg.settle)
            if np.isfinite(t):
                stay = running[ends > t]
                expected = float(
                    (self.cols.size[running] * np.clip(np.minimum(ends, t) - now, 0.0, None)).sum()
                )
                load = self.rset.load_until(now, t, expected)
                fut = self.evaluate(job, t, queue, stay, load)
                if fut is not None and (t - now) + fut[2] < (1.0 - self.cfg.threshold) * cur[2]:
                    out = t
        self.decide_seconds += time.perf_counter() - t0
        return out


# ------------------------------------------------------------------ results
@dataclass
class MoldingResult:
    """The managed run and the baseline on the same jobs.

    Attributes:
        trace, mode: names.
        config: the manager's config.
        jobs: the managed jobs (indices into the simulated window).
        baseline_wait, baseline_runtime: plain EASY, s (wait from the submission).
        wait, runtime: the managed run, s (wait from the submission to the manager,
            any hold included).
        original_size, size: the logged and the submitted request sizes.
        hold: seconds each managed job was held (0 unless delayed).
        molded, expanded, shrunk, delayed, no_candidate: counts over the managed jobs.
        jobs_dropped: jobs the trace reader dropped (load report), never simulated.
        simulated: jobs simulated (history + managed).
        decisions, decide_seconds: the manager's decisions and the time spent on them.
        sim_seconds: wall-clock seconds of the managed and baseline simulations.
        utilization: busy processor-seconds over capacity x makespan, managed and baseline.
        schedule: the managed run's schedule (its workload holds the submitted jobs:
            molded sizes, run times and estimates, held jobs' submit times).
    """

    trace: str
    mode: str
    config: MoldingConfig
    jobs: np.ndarray
    baseline_wait: np.ndarray
    baseline_runtime: np.ndarray
    wait: np.ndarray
    runtime: np.ndarray
    original_size: np.ndarray
    size: np.ndarray
    hold: np.ndarray
    molded: int
    expanded: int
    shrunk: int
    delayed: int
    no_candidate: int
    jobs_dropped: int
    simulated: int
    decisions: int
    decide_seconds: float
    sim_seconds: dict[str, float]
    utilization: dict[str, float]
    schedule: Schedule | None = field(default=None, repr=False)

    def block_means(self) -> tuple[np.ndarray, np.ndarray]:
        """``(managed, baseline)`` mean response (min) of each block of ``config.block`` consecutive jobs."""
        blocks = max(1, len(self.jobs) // self.config.block)
        man = [b.mean() / 60 for b in np.array_split(self.wait + self.runtime, blocks)]
        base = [b.mean() / 60 for b in np.array_split(self.baseline_wait + self.baseline_runtime, blocks)]
        return np.array(man), np.array(base)

    def comparison(self) -> dict[str, Any]:
        """Managed minus baseline mean response (min), paired over blocks of consecutive jobs, 95 % CI."""
        return over_seeds([self])

    def paper(self) -> tuple[int, ...] | None:
        """003's Table VIII or IX row for this trace, or None."""
        for prefix, row in PAPER[self.mode].items():
            if self.trace.lower().startswith(prefix.lower()):
                return row
        return None

    def summary(self) -> dict[str, Any]:
        """Means in minutes, the counts and the paper's row."""
        bw, br = self.baseline_wait.mean() / 60, self.baseline_runtime.mean() / 60
        mw, mr = self.wait.mean() / 60, self.runtime.mean() / 60
        row: dict[str, Any] = {
            "trace": self.trace,
            "mode": self.mode,
            "jobs": len(self.jobs),
            "first_job": int(self.jobs[0]) + 1 if len(self.jobs) else None,
            "baseline_wait_min": bw,
            "baseline_exec_min": br,
            "baseline_response_min": bw + br,
            "wait_min": mw,
            "exec_min": mr,
            "response_min": mw + mr,
            "reduction_pct": 100.0 * (1.0 - (mw + mr) / (bw + br)) if bw + br > 0 else float("nan"),
            "molded": self.molded,
            "expanded": self.expanded,
            "shrunk": self.shrunk,
            "delayed": self.delayed,
            "no_candidate": self.no_candidate,
            "jobs_dropped": self.jobs_dropped,
            "mean_hold_min": float(self.hold.mean() / 60) if len(self.hold) else 0.0,
            "utilization": self.utilization,
            "decisions_per_second": self.decisions / self.decide_seconds if self.decide_seconds > 0 else None,
        }
        p = self.paper()
        if p is not None:
            row["paper_baseline_response_min"], row["paper_response_min"] = p[2], p[5]
        return row

    def to_dict(self) -> dict[str, Any]:
        """Everything JSON-ready: the summary, the config, the timings and the paired comparison."""
        out = self.summary()
        out["config"] = dataclasses.asdict(self.config)
        out["simulated"] = self.simulated
        out["decisions"] = self.decisions
        out["decide_seconds"] = self.decide_seconds
        out["sim_seconds"] = self.sim_seconds
        try:
            out["comparison"] = self.comparison()
        except ImportError:
            out["comparison"] = None
        return out

    def table(self) -> dict[str, np.ndarray]:
        """One row per managed job, for CSV."""
        return {
            "job": self.jobs + 1,
            "original_size": self.original_size,
            "size": self.size,
            "hold_s": self.hold,
            "baseline_wait_s": self.baseline_wait,
            "baseline_runtime_s": self.baseline_runtime,
            "wait_s": self.wait,
            "runtime_s": self.runtime,
        }


def over_seeds(results: Sequence[MoldingResult]) -> dict[str, Any]:
    """Managed minus baseline mean response (min) over runs that differ only in the seed, 95 % CI.

    The roulette wheel's draws move a run's mean response a lot (a few long draws at a
    larger size can fill the machine for days), so one seed is one sample of the
    manager's effect. Each block's managed mean response is averaged over the runs and
    paired with the block's baseline (the same in every run); the interval is the BCa
    bootstrap over the blocks (:func:`hpcgym.sim.metrics.paired_difference_ci`). With one
    run it is that run's :meth:`MoldingResult.comparison`.

    Raises:
        InvalidConfigError: no run, or runs of different jobs, modes or configs other than the seed.
    """
    from hpcgym.common.stats import paired_difference_ci

    if not results:
        raise InvalidConfigError("over_seeds: no run given")
    first = results[0]
    for r in results[1:]:
        if (
            r.trace != first.trace
            or not np.array_equal(r.jobs, first.jobs)
            or dataclasses.replace(r.config, seed=first.config.seed) != first.config
        ):
            raise InvalidConfigError(
                f"over_seeds: the runs must differ only in the seed; {r.trace} {r.mode} (seed "
                f"{r.config.seed}) is not {first.trace} {first.mode} with another seed"
            )
    per_run = [r.block_means() for r in results]
    man = np.mean([m for m, _ in per_run], axis=0)
    mean, low, high = paired_difference_ci(man, per_run[0][1], seed=first.config.seed)
    return {
        "seeds": [r.config.seed for r in results],
        "blocks": len(man),
        "response_difference_min": mean,
        "ci_low": low,
        "ci_high": high,
    }


def _utilization(schedule: Any) -> float:
    w = schedule.workload
    busy = float((np.asarray(w.procs_req) * (schedule.end - schedule.start)).sum())
    span = float(schedule.end.max() - w.submit.min())
    return busy / (w.procs * span) if span > 0 else float("nan")


# ------------------------------------------------------------------ running
def step_engine(sim: Simulator, dispatcher: DispatcherBase, until: float = np.inf) -> None:
    """Run ``sim`` with ``dispatcher`` over every instant before ``until`` (all: to the end)."""
    view = sim.view
    every = bool(dispatcher.every_event)
    while sim.advance_until(until, every) if until < np.inf else sim.advance(every):
        sim.decisions += 1
        decision = dispatcher(view)
        if len(decision):
            sim.start(decision)


def run_managed(
    workload: Workload, config: MoldingConfig | None = None, *, progress: bool = False
) -> MoldingResult:
    """Run the resource manager over ``workload`` and plain EASY beside it (003 V-C, V-D).

    Args:
        workload: the trace (its first ``history + jobs`` jobs are simulated).
        config: what the manager does (:class:`MoldingConfig`).
        progress: a progress bar over the managed jobs on stderr.

    Raises:
        InvalidConfigError: the trace has no managed job (``history`` is too large).
    """
    from tqdm import tqdm

    from hpcgym.baselines import make_policy
    from hpcgym.baselines.run import run_policy
    from hpcgym.sim import as_dispatcher

    cfg = config if config is not None else MoldingConfig()
    n = min(len(workload), cfg.history + cfg.managed)
    if n <= cfg.history:
        raise InvalidConfigError(
            f"history={cfg.history}: the trace {workload.name!r} has {len(workload):,} jobs, "
            "none left to manage; use a longer trace or a smaller history"
        )
    w = workload.window(n)
    t0 = time.perf_counter()
    base = run_policy(w, "easy").schedule
    base_seconds = time.perf_counter() - t0
    m = _Manager(w, cfg)
    sim = m.sim
    d = as_dispatcher(make_policy("easy"))
    sim.attach(d)
    orig_submit = np.asarray(w.submit, np.float64)
    hold = np.zeros(n)
    nexts = cfg.history  # next job to reach the manager
    held: list[int] = []  # the hold queue, arrival order
    release = np.inf
    molded = [0, 0]  # shrunk, expanded
    delayed = 0
    t0 = time.perf_counter()

    with tqdm(
        total=n - cfg.history,
        desc=f"{cfg.mode} {w.name}",
        unit="job",
        file=sys.stderr,
        leave=False,
        disable=not progress,
    ) as bar:
        while nexts < n or held:
            t = min(orig_submit[nexts] if nexts < n else np.inf, release)
            step_engine(sim, d, t)
            if release <= t:  # release first: a job arriving at the release time is not held
                for j in held:
                    sim.amend(j, submit=release)
                    m.cols.submit[j] = release
                    hold[j] = release - orig_submit[j]
                    r = m.mold(j, release)
                    if r:
                        molded[r > 0] += 1
                held, release = [], np.inf
                continue
            j = nexts
            nexts += 1
            bar.update(1)
            m.users.see_until(j)
            if held:
                sim.amend(j, submit=release)
                held.append(j)
                continue
            if cfg.mode == "delay":
                until = m.hold_until(j, t)
                if until > t:
                    sim.amend(j, submit=until)
                    held, release = [j], until
                    delayed += 1
                    continue
            r = m.mold(j, t)
            if r:
                molded[r > 0] += 1
        step_engine(sim, d)
    managed_seconds = time.perf_counter() - t0
    sched = sim.schedule(policy="easy", sim_seconds=managed_seconds)
    jobs = np.arange(cfg.history, n)
    report = workload.report
    return MoldingResult(
        trace=workload.name,
        mode=cfg.mode,
        config=cfg,
        jobs=jobs,
        baseline_wait=base.wait[jobs],
        baseline_runtime=base.runtime[jobs],
        wait=sched.start[jobs] - orig_submit[jobs],
        runtime=sched.runtime[jobs],
        original_size=np.asarray(w.procs_req)[jobs],
        size=np.asarray(sched.workload.procs_req)[jobs],
        hold=hold[jobs],
        molded=molded[0] + molded[1],
        expanded=molded[1],
        shrunk=molded[0],
        delayed=delayed,
        no_candidate=m.no_candidate,
        jobs_dropped=report.jobs_dropped if report is not None else 0,
        simulated=n,
        decisions=m.decisions,
        decide_seconds=m.decide_seconds,
        sim_seconds={"managed": managed_seconds, "baseline": base_seconds},
        utilization={"managed": _utilization(sched), "baseline": _utilization(base)},
        schedule=sched,
    )


# ------------------------------------------------------------------ CLI
TABLE = [
    ("trace", "trace", ""),
    ("mode", "mode", ""),
    ("jobs", "jobs", ",d"),
    ("baseline_wait_min", "EASY wait", ".0f"),
    ("baseline_exec_min", "exec", ".0f"),
    ("baseline_response_min", "response", ".0f"),
    ("wait_min", "managed wait", ".0f"),
    ("exec_min", "exec", ".0f"),
    ("response_min", "response", ".0f"),
    ("reduction_pct", "reduction %", ".1f"),
    ("paper_baseline_response_min", "003 EASY", ".0f"),
    ("paper_response_min", "003 managed", ".0f"),
]
"""The table ``hpcgym mold`` prints (minutes)."""


def _seeds(text: str) -> tuple[int, ...]:
    """``--seed``'s value: whole numbers >= 0, comma-separated, no repeats."""
    parts = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() for t in parts) or len(set(parts)) != len(parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give whole numbers >= 0, comma-separated, each once")
    return tuple(int(t) for t in parts)


def _configure(p: argparse.ArgumentParser) -> None:
    from hpcgym.cli._common import add_trace_arguments

    add_trace_arguments(p)
    p._option_string_actions[
        "--jobs"
    ].help = "managed jobs after the history (default: 20,000 for molding, 6,000 for delay; 003 V)"
    p._option_string_actions["--offset"].help = "skip this many jobs of the trace first"
    p.add_argument("--mode", choices=MODES, default="molding", help="molding (003 IV-A) or delay (IV-B)")
    p.add_argument(
        "--history", type=int, default=10_000, help="unmanaged jobs first, the predictors' history (10,000)"
    )
    p.add_argument(
        "--seed",
        type=_seeds,
        default=(0,),
        metavar="N[,N...]",
        help="seed of the roulette wheel (molded run times); several (0,1,2): one run each, and their "
        "blocks' mean response averaged over the seeds against EASY",
    )
    p.add_argument(
        "--wait-predictor", choices=WAIT_PREDICTORS, default="apq", help="queue-wait predictor (default apq)"
    )
    p.add_argument(
        "--no-score-own",
        action="store_true",
        help="mold a job even when its own size has no rangeSet to compare with (off by default)",
    )
    p.add_argument("--json", type=Path, default=None, help="write the summary, config and CI here")
    p.add_argument("--out", type=Path, default=None, help="directory for summary.json and jobs.csv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _mold(args: argparse.Namespace) -> int:
    from hpcgym.cli._common import load_trace

    configs = [
        MoldingConfig(
            mode=args.mode,
            history=args.history,
            jobs=args.jobs,
            seed=seed,
            wait_predictor=args.wait_predictor,
            score_own=not args.no_score_own,
        )
        for seed in args.seed
    ]
    cfg = configs[0]
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise InvalidConfigError(f"--out {args.out}: exists and is not a directory")
    trace_args = argparse.Namespace(**vars(args))
    trace_args.jobs = cfg.history + cfg.managed
    w = load_trace(trace_args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    results = [run_managed(w, c, progress=not args.no_progress) for c in configs]
    fulls = [r.to_dict() for r in results]  # the summary, the config and the comparison
    notes = []
    for row in fulls:
        seed = f"seed {row['config']['seed']}: " if len(results) > 1 else ""
        notes.append(
            f"{seed}{row['molded']:,} of {row['jobs']:,} managed jobs molded ({row['expanded']:,} expanded, "
            f"{row['shrunk']:,} shrunk), {row['no_candidate']:,} kept without a rangeSet to compare"
        )
        if cfg.mode == "delay":
            notes.append(
                f"{seed}{row['delayed']:,} jobs held by the manager, mean hold {row['mean_hold_min']:.1f} min"
            )
        c = row["comparison"]
        if c is not None:
            notes.append(
                f"{seed}managed - EASY mean response: {c['response_difference_min']:+.1f} min, 95 % CI "
                f"[{c['ci_low']:+.1f}, {c['ci_high']:+.1f}] over {c['blocks']} blocks of consecutive jobs"
            )
    if fulls[0]["jobs_dropped"]:
        notes.append(f"{fulls[0]['jobs_dropped']:,} jobs dropped by the trace reader (see the load report)")
    out: dict[str, Any] = fulls[0]
    if len(results) > 1:
        both = None
        with contextlib.suppress(ImportError):
            both = over_seeds(results)
        out = {"runs": fulls, "over_seeds": both}
        if both is not None:
            notes.append(
                f"over seeds {', '.join(map(str, both['seeds']))}: managed - EASY mean response "
                f"{both['response_difference_min']:+.1f} min, 95 % CI [{both['ci_low']:+.1f}, "
                f"{both['ci_high']:+.1f}] over {both['blocks']} blocks (each block's managed mean "
                "averaged over the seeds)"
            )
    columns = TABLE if len(results) == 1 else [*TABLE[:2], ("seed", "seed", "d"), *TABLE[2:]]
    shown = [{**row, "seed": row["config"]["seed"]} for row in fulls]
    print(format_table(shown, columns, notes))
    if args.json is not None:
        args.json.write_text(to_json(out))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(to_json(out))
        keys = ["seed", *results[0].table()] if len(results) > 1 else list(results[0].table())
        table_rows = []
        for r in results:
            table = r.table()
            if len(results) > 1:
                table = {"seed": np.full(len(r.jobs), r.config.seed), **table}
            table_rows += [
                dict(zip(keys, vals, strict=True))
                for vals in zip(*(table[k].tolist() for k in keys), strict=True)
            ]
        write_csv(args.out / "jobs.csv", table_rows, keys)
    return 0


__all__ = [
    "MODES",
    "PAPER",
    "LiveWaitPredictor",
    "MoldingConfig",
    "MoldingResult",
    "UserHistory",
    "choose_size",
    "gain_score",
    "molded_estimate",
    "over_seeds",
    "roulette",
    "run_managed",
    "settle_time",
    "step_engine",
]
