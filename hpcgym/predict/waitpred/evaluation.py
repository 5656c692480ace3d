"""003 section V's protocol: the job ranges, the predictions of a method on a trace, and their errors.

:func:`predict_waits` tunes a method on the validation jobs (:func:`~hpcgym.predict.waitpred.tuning.tune`)
and predicts the test jobs (:class:`WaitPrediction`); :func:`compare_aae` and
:func:`apq_comparisons` set APQ against the others, with confidence intervals.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.waitpred.config import CASES, METHODS, _positive_int, method_config
from hpcgym.predict.waitpred.features import LogState
from hpcgym.predict.waitpred.runs import _Context, _run_many, aae_hours, scaled_aae
from hpcgym.predict.waitpred.tuning import tune
from hpcgym.workloads import Workload, read_swf

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
        config: the method's config (:class:`~hpcgym.predict.waitpred.config.APQConfig`,
            :class:`~hpcgym.predict.waitpred.config.IBLConfig`,
            :class:`~hpcgym.predict.waitpred.config.QBETSConfig`); defaults when None.
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
    cfg = method_config(method, config, params)
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
    :func:`hpcgym.common.stats.paired_difference_ci` (needs the ``stats`` extra). A negative
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
