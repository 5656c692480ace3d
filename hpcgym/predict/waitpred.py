"""Queue-wait prediction on the system as it ran: APQ (Hariharan et al. 003, section II), IBL, QBETS.

003 predicts how long each arriving job will wait from jobs that arrived in similar
queue and processor states. The states are rebuilt from the SWF log itself: a job's
start is its submit time plus the logged wait (SWF field 3), its end the start plus the
logged run time. At the submission of job ``j`` (time ``t``) the **queue** holds the jobs
logged before ``j`` that have not started (start >= t) and the **running** set the jobs
with start < t < end (:class:`LogState`); nothing after ``t`` is read. A job's wait joins
the **history** once the job has started (start < t), the paper's "history set is updated
when a waiting job is removed from the waiting list"; the history keeps the last
``history`` jobs to start (the oldest dropped).

Methods (:func:`predict_waits`):

* ``apq``: the 16 features of Table II and the six histograms of Table I; the
  distribution-based (eq. 2) or feature-summary (eq. 3-4) distance with |Spearman rho|
  weights, chosen once per trace or, with ``state="adaptive"``, per job by the
  distinctness of the job's histograms (:func:`histogram_distinctness`); the chain
  of section II-C: if the closest ``k_percent`` % of the history are
  far (mean distance > ``sdm_threshold``, 003's case A), the model ``far_model``
  (ridge regression by default, or the weighted average; tuned); else if DBSCAN over
  their (distance, wait) points leaves fewer than a fraction ``outlier_fraction`` as
  noise (case B), SDM; else (case C) ridge regression on the feature summaries of the
  history jobs within ``ridge_max_distance``; if that gives a negative wait (or has
  too few jobs), the weighted average of the ``neighbors`` nearest by feature-summary
  distance.
* ``ibl`` (Li et al.): the k nearest history jobs by a heterogeneous Euclidean-overlap
  distance over the same 16 features, equal weights, their waits averaged with Gaussian
  weights.
* ``qbets`` (Nurmi et al.): an upper bound on the 0.95 quantile of the history's waits at
  95 % confidence (binomial order statistic), the same for every job at one instant.

Open details chosen here (each a parameter where it is a number):

* Job numbers of the protocol count the jobs of the trace as read (jobs that never ran,
  run time < 0, are dropped by the reader) after dropping jobs without a logged wait
  (field 3 < 0), which are counted in ``dropped_no_wait``; status 0/5 jobs that ran stay,
  which gives 003 Table III's job counts for SDSC-SP2 and SDSC-Par.
* Weights are recomputed every ``weight_refresh`` predictions (the paper: every added
  job), from the history of the first prediction of the block.
* "Distinctness in the shape" (section II-A) of a job's histograms is one minus their
  Shannon entropy over ``log(bins)``, averaged over the non-empty ones of the six
  (0: all uniform or all empty; 1: each in one bin); the paper's premise is that
  distributions help "if the distributions are not uniform". With
  ``state="adaptive"`` a job whose distinctness is below ``distinctness`` is compared
  by its feature summaries, the others by their distributions.
* DBSCAN runs on the closest jobs' points (distance, wait / largest wait among them).
* 003 names the model of case A (the neighbours too far away) nowhere: it gives SDM to
  case B, regression to "poor clustering" (case C) and the weighted average to a
  negative regression output. ``far_model`` chooses it and is tuned on the validation
  set. Its default, ``"regression"`` (case A through the regression, then the
  weighted average if that is negative), is the behaviour before the parameter
  existed, so the tuning starts where it did and ends at a validation AAE no higher;
  the other choice, ``"weighted_average"``, answers case A with the weighted average
  of the ``neighbors`` nearest by feature-summary distance. The measured effect is in
  docs/REPRODUCTION.md (Table V section).
* SDM windows need ``min_pts`` jobs; the Gaussian kernel is ``exp(-d**2)``, also for the
  weighted average and IBL.
* Ridge regression needs ``ridge_min_jobs`` history jobs within ``ridge_max_distance``.
* Histograms bin sizes by ``log2(procs) / log2(machine)`` and times by
  ``log1p(t) / log1p(max_time_s)``, as the environment's ``histograms`` observation.
* Tuning (:func:`tune`) varies one parameter at a time over values in Table IV's ranges
  on the validation set, keeping each change that lowers the validation AAE.

>>> from hpcgym.predict.waitpred import Protocol
>>> Protocol().test_first, Protocol().test_last
(20001, 60000)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.histograms import histograms as _histograms
from hpcgym.workloads import Workload, read_swf

METHODS = ("apq", "ibl", "qbets")
"""The predictors :func:`predict_waits` runs."""

FEATURES = (
    "req_size",
    "ert",
    "queue_size",
    "queue_ert",
    "queue_elapsed_wait",
    "running_size",
    "running_ert",
    "running_elapsed",
    "user_queue_hours",
    "user_queue_size",
    "user_queue_ert",
    "user_queue_jobs",
    "user_running_hours",
    "user_running_size",
    "user_running_ert",
    "user_running_jobs",
)
"""The 16 features of 003 Table II, in its order (sums over the queue/running sets)."""

TABLE_V = {
    "ANL-Intrepid": {"qbets": 25.87, "ibl": 5.68, "apq": 4.52},
    "CEA-Curie": {"qbets": 19.19, "ibl": 3.10, "apq": 2.65},
    "DAS2": {"qbets": 0.13, "ibl": 0.04, "apq": 0.03},
    "HPC2N": {"qbets": 30.99, "ibl": 7.65, "apq": 5.97},
    "SDSC-BLUE": {"qbets": 29.44, "ibl": 5.30, "apq": 4.83},
    "SDSC-Par": {"qbets": 14.99, "ibl": 0.88, "apq": 0.69},
    "SDSC-SP2": {"qbets": 44.37, "ibl": 9.42, "apq": 7.84},
}
"""003 Table V: AAE in hours of QBETS, IBL and APQ, by trace-name prefix."""

SDM, REGRESSION, WEIGHTED, EMPTY = 0, 1, 2, 3
CASES = ("sdm", "regression", "weighted_average", "no_history")
"""Which model of APQ's chain gave each prediction (``WaitPrediction.case``)."""

STATES = ("distributions", "summaries", "adaptive")
"""APQ's system-state statistics (:attr:`APQConfig.state`)."""

FAR_MODELS = ("regression", "weighted_average")
"""APQ's choices for 003's case A (:attr:`APQConfig.far_model`)."""


def _positive_int(name: str, value: object, low: int = 1, high: int | None = None) -> None:
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low
    if ok and high is not None:
        ok = value <= high  # type: ignore[operator]
    if not ok:
        rng = f"{low}..{high}" if high is not None else f">= {low}"
        raise InvalidConfigError(f"{name} must be a whole number {rng}, got {value!r}")


def _fraction(name: str, value: object, low: float, high: float, *, open_low: bool = True) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = (v > low if open_low else v >= low) and v <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise InvalidConfigError(f"{name} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")


@dataclass(frozen=True)
class Protocol:
    """The job ranges of 003 section V, as 1-based job numbers (inclusive).

    Attributes:
        history_first: the first job whose wait may enter the history (10,000).
        validation_first: the first job of the validation set (16,000).
        validation_jobs: jobs in the validation set (4,000).
        test_first: the first job of the test set (20,001).
        test_last: the last job of the test set (60,000); a shorter trace ends it early.
        min_test_jobs: the fewest test jobs accepted when the trace ends early.
    """

    history_first: int = 10_000
    validation_first: int = 16_000
    validation_jobs: int = 4_000
    test_first: int = 20_001
    test_last: int = 60_000
    min_test_jobs: int = 1_000

    def __post_init__(self) -> None:
        for name in ("history_first", "validation_first", "validation_jobs", "test_first", "test_last"):
            _positive_int(f"Protocol.{name}", getattr(self, name))
        _positive_int("Protocol.min_test_jobs", self.min_test_jobs)
        if not self.history_first < self.validation_first:
            raise InvalidConfigError(
                f"Protocol: history_first ({self.history_first}) must come before validation_first "
                f"({self.validation_first})"
            )
        if not self.history_first < self.test_first <= self.test_last:
            raise InvalidConfigError(
                f"Protocol: need history_first < test_first <= test_last, got {self.history_first}, "
                f"{self.test_first}, {self.test_last}"
            )

    def ranges(self, n: int, trace: str = "the trace") -> tuple[np.ndarray, np.ndarray, int]:
        """0-based ``(validation jobs, test jobs, first history job)`` for a trace of ``n`` jobs.

        Raises:
            InvalidConfigError: the trace is too short; the message names the job counts.
        """
        need = self.test_first - 1 + self.min_test_jobs
        if n < need:
            raise InvalidConfigError(
                f"{trace} has {n:,} jobs with a logged wait; the protocol needs at least {need:,} "
                f"(test set from job {self.test_first:,}, at least {self.min_test_jobs:,} test jobs); "
                "use a longer trace or a smaller Protocol"
            )
        val_end = min(self.validation_first - 1 + self.validation_jobs, n)
        validation = np.arange(self.validation_first - 1, val_end)
        test = np.arange(self.test_first - 1, min(self.test_last, n))
        return validation, test, self.history_first - 1


@dataclass(frozen=True)
class APQConfig:
    """Parameters of APQ (003 section II, ranges of Table IV).

    Attributes:
        history: size of the history set (2000-6000).
        bins: bins of each Table I histogram (5-50).
        state: ``"distributions"`` (eq. 2), ``"summaries"`` (eq. 3-4) or ``"adaptive"``
            (per job: distributions when its histograms' distinctness is at least
            ``distinctness``, else summaries).
        distinctness: the threshold of ``state="adaptive"``, in [0, 1]
            (:func:`histogram_distinctness`).
        k_percent: the closest k % of the history examined by the clustering (1-5).
        outlier_fraction: SDM when DBSCAN leaves fewer than this fraction as noise (0.1-0.9).
        eps: DBSCAN's neighbourhood radius (0.05-0.1).
        min_pts: DBSCAN's core-point count, also the fewest jobs of an SDM window (2-5).
        sdm_window: width of SDM's distance windows (0.01-0.1).
        sdm_threshold: SDM's maximum distance, also the case-A threshold (0.3-0.6).
        far_model: the model of case A (the closest ``k_percent`` % farther than
            ``sdm_threshold`` on average), which 003 leaves open: ``"regression"`` (the
            default and the behaviour before this parameter existed: the regression,
            then the weighted average if it is negative) or ``"weighted_average"``.
        ridge_max_distance: history jobs within this distance train the regression (0.4-1.0).
        ridge_alpha: ridge regularisation on standardised features.
        ridge_min_jobs: the fewest jobs the regression is fitted on.
        neighbors: k of the weighted-average fallback (1-20).
        weight_refresh: predictions between recomputations of the Spearman weights.
        max_time_s: time scale of the histograms' log bins, seconds.
        backend: ``"numpy"`` (fast, the default) or ``"sklearn"`` (scikit-learn's DBSCAN
            and Ridge; the same predictions, slower; needs the ``learn`` extra).
    """

    history: int = 6000
    bins: int = 10
    state: str = "distributions"
    distinctness: float = 0.4
    k_percent: float = 3.0
    outlier_fraction: float = 0.5
    eps: float = 0.1
    min_pts: int = 3
    sdm_window: float = 0.05
    sdm_threshold: float = 0.45
    far_model: str = "regression"
    ridge_max_distance: float = 0.7
    ridge_alpha: float = 1.0
    ridge_min_jobs: int = 32
    neighbors: int = 10
    weight_refresh: int = 100
    max_time_s: float = 7 * 86400.0
    backend: str = "numpy"

    def __post_init__(self) -> None:
        _positive_int("apq history", self.history)
        _positive_int("apq bins", self.bins, 2)
        if self.state not in STATES:
            raise InvalidConfigError(f"apq state must be one of {', '.join(STATES)}, got {self.state!r}")
        _fraction("apq distinctness", self.distinctness, 0.0, 1.0, open_low=False)
        _fraction("apq k_percent", self.k_percent, 0.0, 100.0)
        _fraction("apq outlier_fraction", self.outlier_fraction, 0.0, 1.0)
        _fraction("apq eps", self.eps, 0.0, 1.0)
        _positive_int("apq min_pts", self.min_pts)
        _fraction("apq sdm_window", self.sdm_window, 0.0, 1.0)
        _fraction("apq sdm_threshold", self.sdm_threshold, 0.0, 1.0)
        if self.far_model not in FAR_MODELS:
            raise InvalidConfigError(
                f"apq far_model must be one of {', '.join(FAR_MODELS)}, got {self.far_model!r}"
            )
        _fraction("apq ridge_max_distance", self.ridge_max_distance, 0.0, 1.0)
        _fraction("apq ridge_alpha", self.ridge_alpha, 0.0, 1e12, open_low=False)
        _positive_int("apq ridge_min_jobs", self.ridge_min_jobs, 2)
        _positive_int("apq neighbors", self.neighbors)
        _positive_int("apq weight_refresh", self.weight_refresh)
        _fraction("apq max_time_s", self.max_time_s, 1.0, 1e12)
        if self.backend not in ("numpy", "sklearn"):
            raise InvalidConfigError(f"apq backend must be 'numpy' or 'sklearn', got {self.backend!r}")


@dataclass(frozen=True)
class IBLConfig:
    """Parameters of IBL: history size and the k of its k-nearest weighted average."""

    history: int = 6000
    neighbors: int = 10

    def __post_init__(self) -> None:
        _positive_int("ibl history", self.history)
        _positive_int("ibl neighbors", self.neighbors)


@dataclass(frozen=True)
class QBETSConfig:
    """Parameters of QBETS: history size, the quantile bounded and the confidence of the bound."""

    history: int = 6000
    quantile: float = 0.95
    confidence: float = 0.95

    def __post_init__(self) -> None:
        _positive_int("qbets history", self.history)
        _fraction("qbets quantile", self.quantile, 0.0, 1.0)
        _fraction("qbets confidence", self.confidence, 0.0, 1.0)


CONFIGS: dict[str, Any] = {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}

TUNING: dict[str, dict[str, tuple[Any, ...]]] = {
    "apq": {
        "history": (2000, 4000, 6000),
        "bins": (5, 10, 20),
        "state": STATES,
        "distinctness": (0.4, 0.5, 0.6),
        "k_percent": (1.0, 3.0, 5.0),
        "outlier_fraction": (0.1, 0.5, 0.9),
        "eps": (0.05, 0.1),
        "min_pts": (2, 3, 5),
        "sdm_window": (0.01, 0.05, 0.1),
        "sdm_threshold": (0.3, 0.45, 0.6),
        "far_model": FAR_MODELS,
        "ridge_max_distance": (0.4, 0.7, 1.0),
        "neighbors": (1, 5, 10, 20),
    },
    "ibl": {"history": (2000, 4000, 6000), "neighbors": (1, 5, 10, 20)},
    "qbets": {"history": (2000, 4000, 6000)},
}
"""Values tried on the validation set, one parameter at a time (within 003 Table IV's ranges)."""

_APPLIES: dict[str, Callable[[Any], bool]] = {"distinctness": lambda cfg: cfg.state == "adaptive"}
"""Parameters tuned only when they can change the predictions."""


# ---------------------------------------------------------------- the log's system state


@dataclass(frozen=True, eq=False)
class LogState:
    """The jobs of an SWF log with their logged start and end, for rebuilding the system state.

    Attributes:
        name: the trace's name.
        procs: machine size in processors.
        submit, start, end, size, estimate, user, wait, runtime: one entry per job kept,
            in submit order (ties in log order).
        dropped_no_wait: jobs dropped because the log gives no wait (field 3 < 0).
    """

    name: str
    procs: int
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    size: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    wait: np.ndarray
    runtime: np.ndarray
    dropped_no_wait: int = 0
    _features: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False
    )

    @classmethod
    def from_workload(cls, w: Workload) -> LogState:
        """The log state of ``w``; jobs without a logged wait (field 3 < 0) are dropped and counted."""
        keep = w.log_wait >= 0
        return cls.from_columns(
            w.submit[keep],
            w.log_wait[keep],
            w.runtime[keep],
            w.procs_req[keep],
            w.estimate[keep],
            w.user[keep],
            procs=int(w.procs),
            name=w.name,
            dropped_no_wait=int((~keep).sum()),
        )

    @classmethod
    def from_columns(
        cls,
        submit: Any,
        wait: Any,
        runtime: Any,
        size: Any,
        estimate: Any,
        user: Any,
        *,
        procs: int,
        name: str = "log",
        dropped_no_wait: int = 0,
    ) -> LogState:
        """A log state from columns in submit order (waits and run times >= 0, seconds).

        Raises:
            InvalidConfigError: columns of different lengths, submit times out of order,
                or a negative wait or run time.
        """
        cols = [np.asarray(c, np.float64) for c in (submit, wait, runtime, estimate)]
        sub, wt, rt, est = cols
        if len({len(c) for c in (*cols, np.asarray(size), np.asarray(user))}) != 1:
            raise InvalidConfigError("LogState.from_columns: the columns must have one entry per job")
        if np.any(np.diff(sub) < 0):
            raise InvalidConfigError("LogState.from_columns: submit times must be in order")
        if np.any(wt < 0) or np.any(rt < 0):
            raise InvalidConfigError("LogState.from_columns: waits and run times must be >= 0")
        return cls(
            name=name,
            procs=int(procs),
            submit=sub,
            start=sub + wt,
            end=sub + wt + rt,
            size=np.asarray(size, np.int64),
            estimate=est,
            user=np.asarray(user, np.int64),
            wait=wt,
            runtime=rt,
            dropped_no_wait=dropped_no_wait,
        )

    def __len__(self) -> int:
        return len(self.submit)

    def at(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the queued and running jobs when job ``j`` is submitted.

        Queued: logged before ``j`` and start >= ``submit[j]``; running: start <
        ``submit[j]`` < end. Events at one instant: ends, then submissions, then starts.
        """
        t = self.submit[j]
        before = np.arange(len(self)) < j
        queue = np.flatnonzero(before & (self.start >= t))
        running = np.flatnonzero((self.start < t) & (self.end > t))
        return queue, running

    def size_bins(self, bins: int) -> np.ndarray:
        """Each job's request-size bin: ``log2(size) / log2(machine)`` in ``bins`` bins."""
        scale = bins / np.log2(self.procs) if self.procs > 1 else 0.0
        b = (np.log2(np.maximum(self.size, 1)) * scale).astype(np.int64)
        return np.minimum(b, bins - 1)

    def features(self, last: int, bins: int, max_time_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Table II features ``(last, 16)`` and Table I histograms ``(last, 6, bins)`` of the first jobs.

        One sweep over the log's events in time order (compiled); each job's row reads
        only the state at its submission. The result is kept for the next call.
        """
        last = min(int(last), len(self))
        key = (last, int(bins), float(max_time_s))
        if key in self._features:
            return self._features[key]
        n = len(self)
        idx = np.arange(n)
        start_order = np.lexsort((idx, self.start))
        end_order = np.lexsort((idx, self.end))
        summary = np.zeros((last, len(FEATURES)))
        hist = np.zeros((last, 6, bins))
        _sweep(
            self.submit,
            self.start,
            self.end,
            self.size,
            self.estimate,
            self.user,
            start_order,
            end_order,
            self.size_bins(bins),
            1.0 / np.log1p(max_time_s),
            summary,
            hist,
        )
        self._features[key] = (summary, hist)
        return summary, hist


@njit(cache=True)
def _remove(lst: np.ndarray, pos: np.ndarray, count: int, i: int) -> int:
    p = pos[i]
    last = lst[count - 1]
    lst[p] = last
    pos[last] = p
    pos[i] = -1
    return count - 1


@njit(cache=True)
def _sweep(
    submit: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    user: np.ndarray,
    start_order: np.ndarray,
    end_order: np.ndarray,
    size_bin: np.ndarray,
    inv_log_t: float,
    summary: np.ndarray,
    hist: np.ndarray,
) -> None:
    n = len(submit)
    qlist = np.empty(n, np.int64)
    qpos = np.full(n, -1, np.int64)
    rlist = np.empty(n, np.int64)
    rpos = np.full(n, -1, np.int64)
    nq = 0
    nr = 0
    sp = 0
    ep = 0
    for j in range(summary.shape[0]):
        t = submit[j]
        while sp < n and start[start_order[sp]] < t:
            i = start_order[sp]
            sp += 1
            if qpos[i] >= 0:
                nq = _remove(qlist, qpos, nq, i)
            if end[i] > t:
                rlist[nr] = i
                rpos[i] = nr
                nr += 1
        while ep < n and end[end_order[ep]] <= t:
            i = end_order[ep]
            ep += 1
            if rpos[i] >= 0:
                nr = _remove(rlist, rpos, nr, i)
        _state_features(summary[j], j, t, qlist[:nq], rlist[:nr], size, estimate, submit, start, user)
        _histograms(hist[j], qlist[:nq], rlist[:nr], t, size_bin, estimate, submit, start, inv_log_t)
        qlist[nq] = j
        qpos[j] = nq
        nq += 1


@njit(cache=True)
def _state_features(
    f: np.ndarray,
    j: int,
    t: float,
    queue: np.ndarray,
    running: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    user: np.ndarray,
) -> None:
    """Add job ``j``'s Table II features at time ``t`` to ``f`` (zeros), given the queued and running jobs."""
    f[0] = size[j]
    f[1] = estimate[j]
    u = user[j]
    for i in queue:
        f[2] += size[i]
        f[3] += estimate[i]
        f[4] += t - submit[i]
        if user[i] == u:
            f[8] += size[i] * estimate[i] / 3600.0
            f[9] += size[i]
            f[10] += estimate[i]
            f[11] += 1.0
    for i in running:
        f[5] += size[i]
        f[6] += estimate[i]
        f[7] += t - start[i]
        if user[i] == u:
            f[12] += size[i] * estimate[i] / 3600.0
            f[13] += size[i]
            f[14] += estimate[i]
            f[15] += 1.0


# ---------------------------------------------------------------- building blocks


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


# ---------------------------------------------------------------- APQ's chain


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
    """APQ's prediction from the distances to the history: ``(wait, case)`` (:data:`CASES`).

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


# ---------------------------------------------------------------- running predictors


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


def tune(
    ctx: _Context,
    method: str,
    targets: np.ndarray,
    base: Any,
    fixed: Iterable[str] = (),
    progress: bool = False,
) -> tuple[Any, list[dict[str, Any]]]:
    """``base`` tuned on ``targets`` one parameter at a time (coordinate descent).

    The parameters of :data:`TUNING` are varied one at a time, in its order, over its
    values (003 section V varies each parameter alone); a value is kept when it lowers
    the AAE of the current config, so the returned config is the best one evaluated.
    (Picking each parameter's best value independently and combining them gave a
    combination never evaluated, worse on the bundled slice's test jobs.) ``fixed``
    parameters keep ``base``'s value. Returns the tuned config and one row per config
    tried: the parameter varied, its value and the validation AAE in hours.
    """
    actual = ctx.state.wait[targets]
    cfg = base
    best = aae_hours(_run_many(ctx, method, targets, [cfg], progress)[0][0], actual)
    rows: list[dict[str, Any]] = [{"parameter": "base", "value": None, "aae_hours": best}]
    for name, values in TUNING[method].items():
        alternatives = [v for v in values if v != getattr(cfg, name)]
        applies = _APPLIES.get(name)
        if name in fixed or not alternatives or (applies is not None and not applies(cfg)):
            continue
        cfgs = [dataclasses.replace(cfg, **{name: v}) for v in alternatives]
        results = _run_many(ctx, method, targets, cfgs, progress)
        for v, c, res in zip(alternatives, cfgs, results, strict=True):
            aae = aae_hours(res[0], actual)
            rows.append({"parameter": name, "value": v, "aae_hours": aae})
            if aae < best:
                best, cfg = aae, c
    rows.append({"parameter": "tuned", "value": None, "aae_hours": best})
    return cfg, rows


@dataclass(frozen=True, eq=False)
class WaitPrediction:
    """Predictions of one method on one job set.

    Attributes:
        method: ``apq``, ``ibl`` or ``qbets``.
        trace: the trace's name.
        jobs: 0-based indices of the predicted jobs (into the jobs with a logged wait).
        predicted, actual, runtime: seconds, one per job.
        case: APQ's model of each prediction (:data:`CASES`), 0 for the other methods.
        config: the parameters used.
        tuning: the validation runs behind ``config`` (empty when not tuned).
        dropped_no_wait: jobs of the trace dropped as they have no logged wait.
    """

    method: str
    trace: str
    jobs: np.ndarray
    predicted: np.ndarray
    actual: np.ndarray
    runtime: np.ndarray
    case: np.ndarray
    config: Any
    tuning: list[dict[str, Any]] = field(default_factory=list)
    dropped_no_wait: int = 0

    @property
    def aae_hours(self) -> float:
        """Average absolute error in hours."""
        return aae_hours(self.predicted, self.actual)

    @property
    def scaled_aae(self) -> float:
        """003's scaled AAE (error / response time)."""
        return scaled_aae(self.predicted, self.actual, self.runtime)

    def paper_aae_hours(self) -> float | None:
        """003 Table V's AAE for this trace and method, if the trace is one of its."""
        for prefix, row in TABLE_V.items():
            if self.trace.lower().startswith(prefix.lower()):
                return row[self.method]
        return None

    def summary(self) -> dict[str, Any]:
        """A JSON-ready row: AAE, scaled AAE, the paper's AAE, the cases and the config."""
        row: dict[str, Any] = {
            "trace": self.trace,
            "method": self.method,
            "jobs": len(self.jobs),
            "first_job": int(self.jobs[0]) + 1 if len(self.jobs) else None,
            "last_job": int(self.jobs[-1]) + 1 if len(self.jobs) else None,
            "aae_hours": self.aae_hours,
            "paper_aae_hours": self.paper_aae_hours(),
            "scaled_aae": self.scaled_aae,
            "mean_wait_hours": float(np.mean(self.actual) / 3600.0) if len(self.actual) else math.nan,
            "dropped_no_wait": self.dropped_no_wait,
            "config": dataclasses.asdict(self.config),
        }
        if self.method == "apq":
            row["cases"] = {name: int((self.case == i).sum()) for i, name in enumerate(CASES)}
        return row


def _config(method: str, config: Any, overrides: dict[str, Any] | None) -> Any:
    if method not in METHODS:
        raise InvalidConfigError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    cls = CONFIGS[method]
    cfg: Any = config if config is not None else cls()
    if not isinstance(cfg, cls):
        raise InvalidConfigError(f"config of {method} must be a {cls.__name__}, got {type(cfg).__name__}")
    if overrides:
        known = {f.name for f in dataclasses.fields(cls)}
        for key in overrides:
            if key not in known:
                raise InvalidConfigError(
                    f"{method}: unknown parameter {key!r}; known: {', '.join(sorted(known))}"
                )
        try:
            cfg = dataclasses.replace(cfg, **overrides)
        except TypeError as err:
            raise InvalidConfigError(f"{method}: {err}") from err
    if method == "apq" and cfg.backend == "sklearn":
        from hpcgym.common.extras import require

        require("learn", what="apq backend=sklearn")
    return cfg


def _state(trace: str | Path | Workload | LogState) -> LogState:
    if isinstance(trace, LogState):
        return trace
    if isinstance(trace, Workload):
        return LogState.from_workload(trace)
    return LogState.from_workload(read_swf(trace))


def predict_waits(
    trace: str | Path | Workload | LogState,
    method: str = "apq",
    *,
    config: Any = None,
    params: dict[str, Any] | None = None,
    protocol: Protocol | None = None,
    tune_on_validation: bool = True,
    jobs: Sequence[int] | np.ndarray | None = None,
    progress: bool = False,
) -> WaitPrediction:
    """Predict the queue wait of the test jobs of ``trace`` (003 section V's protocol).

    Args:
        trace: an SWF file, a workload or a :class:`LogState`.
        method: ``"apq"``, ``"ibl"`` or ``"qbets"``.
        config: the method's config (:class:`APQConfig`, :class:`IBLConfig`,
            :class:`QBETSConfig`); defaults when None.
        params: parameters set on ``config``; these are not tuned.
        protocol: the job ranges (:class:`Protocol`'s defaults are 003's).
        tune_on_validation: tune the free parameters on the validation set first.
        jobs: predict these 0-based jobs instead of the test set (no tuning unless asked).
        progress: show progress bars on stderr.

    Returns:
        The predictions (:attr:`WaitPrediction.aae_hours` is the AAE in hours).

    Raises:
        InvalidConfigError: an unknown method or parameter, a value out of range, or a
            trace too short for the protocol (the message names the job counts).

    >>> from hpcgym.workloads import load_default
    >>> small = Protocol(1000, 1500, 500, 2001, 3000)
    >>> p = predict_waits(load_default(), "qbets", protocol=small, tune_on_validation=False)
    >>> len(p.jobs), int(p.jobs[0])
    (1000, 2000)
    """
    cfg = _config(method, config, params)
    state = _state(trace)
    protocol = protocol if protocol is not None else Protocol()
    if jobs is None:
        validation, test, first = protocol.ranges(len(state), state.name)
    else:
        test = np.asarray(jobs, np.int64)
        if test.ndim != 1 or len(test) == 0 or test.min() < 0 or test.max() >= len(state):
            raise InvalidConfigError(f"jobs must be 0-based job indices below {len(state)}, got {jobs!r}")
        validation, first = np.zeros(0, np.int64), protocol.history_first - 1
    ctx = _Context(state, int(test.max()) + 1, first)
    rows: list[dict[str, Any]] = []
    if tune_on_validation and len(validation):
        cfg, rows = tune(ctx, method, validation, cfg, fixed=params or {}, progress=progress)
    pred, case = _run_many(ctx, method, test, [cfg], progress)[0]
    return WaitPrediction(
        method=method,
        trace=state.name,
        jobs=test,
        predicted=pred,
        actual=state.wait[test],
        runtime=state.runtime[test],
        case=case,
        config=cfg,
        tuning=rows,
        dropped_no_wait=state.dropped_no_wait,
    )


def evaluate_waits(
    trace: str | Path | Workload | LogState,
    methods: Sequence[str] = METHODS,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """:meth:`WaitPrediction.summary` of each method on the test set.

    ``kwargs`` go to :func:`predict_waits`.
    """
    state = _state(trace)
    return [predict_waits(state, m, **kwargs).summary() for m in methods]


def compare_aae(a: WaitPrediction, b: WaitPrediction, block: int = 1000, seed: int = 0) -> dict[str, Any]:
    """``a``'s AAE minus ``b``'s, paired over consecutive blocks of ``block`` jobs, with a 95 % CI.

    Both must predict the same jobs. Errors of neighbouring jobs are correlated (they
    share a system state), so the pairs are blocks of consecutive jobs (the evaluation
    protocol's windows), not single jobs; the interval is the BCa bootstrap of
    :func:`hpcgym.sim.metrics.paired_difference_ci` (needs the ``stats`` extra). A negative
    interval means ``a`` is more accurate. When ``a`` is APQ, ``by_case`` splits the
    jobs by the model of APQ's chain that answered them (:data:`CASES`) and gives both
    AAEs on each part, to show where APQ gains or loses.

    Raises:
        InvalidConfigError: the two predict different jobs, or ``block`` < 1.
    """
    from hpcgym.common.stats import paired_difference_ci

    _positive_int("block", block)
    if not np.array_equal(a.jobs, b.jobs):
        raise InvalidConfigError(f"compare_aae: {a.method} and {b.method} predict different jobs")
    blocks = max(1, len(a.jobs) // block)
    ea = np.array_split(np.abs(a.predicted - a.actual) / 3600.0, blocks)
    eb = np.array_split(np.abs(b.predicted - b.actual) / 3600.0, blocks)
    mean, low, high = paired_difference_ci([x.mean() for x in ea], [x.mean() for x in eb], seed=seed)
    out: dict[str, Any] = {
        "a": a.method,
        "b": b.method,
        "blocks": blocks,
        "aae_difference_hours": mean,
        "ci_low": low,
        "ci_high": high,
    }
    if a.method == "apq":
        out["by_case"] = [
            {
                "case": name,
                "jobs": int(part.sum()),
                "a_aae_hours": aae_hours(a.predicted[part], a.actual[part]),
                "b_aae_hours": aae_hours(b.predicted[part], b.actual[part]),
            }
            for i, name in enumerate(CASES)
            if (part := a.case == i).any()
        ]
    return out


# ---------------------------------------------------------------- online, inside a simulation


def parse_wait_predictor(spec: str) -> tuple[str, Any]:
    """``(method, config)`` of ``METHOD[:key=value,...]`` (e.g. ``"ibl:neighbors=5"``).

    Raises:
        InvalidConfigError: not text, an unknown method or parameter, or a bad value;
            the message names it.

    >>> parse_wait_predictor("qbets:history=500")[1].history
    500
    """
    from hpcgym.predict.runtime import _parse_parameters

    if not isinstance(spec, str):
        raise InvalidConfigError(
            f"wait_predictor must be text such as 'ibl' or 'qbets:history=500', got {spec!r}"
        )
    method, _, params = spec.partition(":")
    method = method.strip().lower()
    if method not in METHODS:
        raise InvalidConfigError(f"wait_predictor {spec!r}: the method must be one of {', '.join(METHODS)}")
    known = tuple(f.name for f in dataclasses.fields(CONFIGS[method]))
    try:
        kwargs = _parse_parameters(spec, params, method, known)
        return method, _config(method, None, kwargs)
    except InvalidConfigError as err:
        raise InvalidConfigError(f"wait_predictor {spec!r}: {err}") from err


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
    :func:`ibl_distances` and :func:`nearest_average` up to rounding, which a test
    checks); QBETS and APQ predict with this module's functions.

    Args:
        method: ``"apq"``, ``"ibl"`` or ``"qbets"``.
        config: the method's config (defaults when None).
        procs: machine size in processors (APQ's size histogram bins).

    Attributes:
        seen: per job, the instant it was predicted (-1 before).
        predicted: per job, its predicted wait in seconds (0 before).
        case: per job, APQ's model (:data:`CASES`; ``no_history`` when predicted 0
            for want of history), 0 for the other methods.
    """

    def __init__(self, method: str = "ibl", config: Any = None, *, procs: int = 1) -> None:
        self.method = method
        self.config = _config(method, config, None)
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
                self._hist[j], before, running, now, self._size_bin, estimate, submit, start, self._inv_log_t
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
    """IBL for job ``j`` from history ``h``: :func:`ibl_distances` and :func:`nearest_average` in one loop."""
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


def apq_comparisons(results: Sequence[WaitPrediction]) -> list[dict[str, Any]]:
    """APQ against each other method run (none without APQ or without scipy, said on stderr)."""
    from hpcgym.common.extras import is_available

    apq = [r for r in results if r.method == "apq"]
    others = [r for r in results if r.method != "apq"]
    if not apq or not others:
        return []
    if not is_available("scipy"):
        print("hpcgym: no confidence intervals: pip install 'hpcgym[stats]'", file=sys.stderr)
        return []
    return [compare_aae(apq[0], o) for o in others]
