"""A runtime predictor scored on a trace's logged schedule: 003's SR, coverage and AAE.

:func:`evaluate_runtime_predictor` feeds any predictor the logged schedule (submit + SWF
wait, :func:`hpcgym.workloads.logged.logged_start`) event by event, in time order as a
simulation would (:func:`logged_events`), and keeps its prediction of each test job at
submission, with the rangeSet of a rangeSet predictor (:mod:`hpcgym.predict.rangesets`).

Metrics (003 section VI-B, Tables VI and VII), over test jobs with history: **SR**, the
share of jobs whose run time lies in one of the ranges; **C**, coverage, the total
length of the ranges over the length of the *baseline* range [min, max] of the run
times of the tuple's jobs in the history, in percent, averaged over jobs whose baseline
range has a positive length (``C_of_totals``: the ratio of the summed lengths;
``C_median``: the median of the per-job ratios); the baseline's own SR; **AAE** of the
point prediction, in minutes.

:data:`PAPER_TABLES` holds 003's figures (:func:`paper_row`), which ``hpcgym predict-eval``
prints beside the measured ones.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.base import Predictor
from hpcgym.predict.ranges import locate
from hpcgym.predict.rangesets import RangeSetPredictor, TupleHistory
from hpcgym.predict.runtime import make_predictor
from hpcgym.workloads import Workload, logged_start


def logged_events(workload: Workload, stop: float = np.inf) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(kind, job, time)`` of the logged schedule in time order, up to ``stop``.

    Kinds: 0 end, 1 submission, 2 start; at one instant ends come first, then
    submissions, then starts (the engine's order). Starts are submit + SWF wait
    (:func:`hpcgym.workloads.logged.logged_start`: an unknown wait counts as 0).
    """
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

    return tqdm(total=total, desc=desc, unit="event", file=sys.stderr, leave=False, disable=None)


# ------------------------------------------------------------------ 003's figures
PAPER_TABLES = {
    # 003 Table VI (baseline SR; rangeSet SR, C) and Table VII (rangeSet AAE, minutes)
    "SDSC-SP2": {"baseline_SR": 79, "SR": 81, "C": 26, "AAE_min": 43},
    "HPC2N": {"baseline_SR": 83, "SR": 77, "C": 19, "AAE_min": 64},
    "CEA-Curie": {"baseline_SR": 88, "SR": 72, "C": 23, "AAE_min": 116},
    "SDSC-Par": {"baseline_SR": 89, "SR": 78, "C": 8, "AAE_min": 36},
}
"""003's figures for rangeSets, by trace name prefix."""


def paper_row(trace: str) -> dict[str, Any] | None:
    """003's Table VI/VII figures for ``trace`` (matched by name prefix), or None."""
    for prefix, row in PAPER_TABLES.items():
        if trace.startswith(prefix):
            return {"trace": trace, "predictor": "003 (paper)", **row}
    return None
