"""Metrics: one module for every report and every reward.

Definitions (design card):

* wait = start - submit; response = wait + runtime;
* slowdown = (wait + runtime) / runtime, over jobs with runtime > 0;
* bounded slowdown = max(1, (wait + runtime) / max(tau, runtime)), tau = 10 s;
* averages leave out warm-up and cool-down as in Tsafrir et al. (2007): the first 1 %
  of terminated jobs and the jobs that terminate after the last arrival
  (``include_all=True`` keeps every job);
* utilization = busy processor-seconds / (processors x makespan), makespan = last end -
  first submit;
* queue length: number of waiting jobs over time, time-weighted over the makespan;
* job classes (Galleguillos et al.): short < 1 h, medium 1-12 h, long > 12 h.

Here ``runtime`` is the time a job actually ran (``end - start``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcgym.sim import Schedule

TAU = 10.0
"""Bounded-slowdown threshold in seconds."""

CLASS_EDGES = (3600.0, 43200.0)
"""Short/medium and medium/long boundaries in seconds (1 h, 12 h)."""


def slowdown(wait: np.ndarray, runtime: np.ndarray) -> np.ndarray:
    """(wait + runtime) / runtime; NaN where runtime is 0."""
    wait = np.asarray(wait, dtype=np.float64)
    runtime = np.asarray(runtime, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(runtime > 0, (wait + runtime) / np.where(runtime > 0, runtime, 1.0), np.nan)


def bounded_slowdown(wait: np.ndarray | float, runtime: np.ndarray | float, tau: float = TAU) -> np.ndarray:
    """max(1, (wait + runtime) / max(tau, runtime))."""
    wait = np.asarray(wait, dtype=np.float64)
    runtime = np.asarray(runtime, dtype=np.float64)
    return np.maximum(1.0, (wait + runtime) / np.maximum(tau, runtime))


def steady_state_mask(submit: np.ndarray, end: np.ndarray, warmup_fraction: float = 0.01) -> np.ndarray:
    """Jobs counted in averages: not among the first 1 % to terminate, not ending after the last arrival."""
    n = len(end)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    k = int(warmup_fraction * n)
    if k:
        first = np.argsort(end, kind="stable")[:k]
        keep[first] = False
    keep &= end <= submit.max()
    return keep


def measured_jobs(schedule: Schedule, include_all: bool = False) -> np.ndarray:
    """Which jobs of a complete schedule the averages count (see :func:`steady_state_mask`).

    Raises:
        ValueError: some jobs never started or ended.
    """
    if np.isnan(schedule.start).any() or np.isnan(schedule.end).any():
        raise ValueError("schedule is incomplete: some jobs never started or ended")
    if include_all:
        return np.ones(len(schedule.workload), dtype=bool)
    return steady_state_mask(schedule.workload.submit, schedule.end)


def queue_length_distribution(
    submit: np.ndarray, start: np.ndarray, until: float | None = None
) -> dict[str, float]:
    """Time-weighted statistics of the number of waiting jobs (mean, median, p95, max).

    The window runs from the first submit to ``until`` (``compute_metrics`` passes the
    last end, so it matches the makespan that utilization uses; by default the last
    start, after which the queue is empty).
    """
    if len(submit) == 0:
        return {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}
    times = np.concatenate([submit, start])
    delta = np.concatenate([np.ones(len(submit)), -np.ones(len(start))])
    order = np.lexsort((delta, times))  # at one instant, starts (-1) before arrivals
    times, delta = times[order], delta[order]
    length = np.cumsum(delta)
    last = times[-1] if until is None else max(float(until), float(times[-1]))
    dt = np.diff(times, append=last)
    total = dt.sum()
    if total <= 0:
        return {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": float(length.max())}
    mean = float((length * dt).sum() / total)
    o = np.argsort(length, kind="stable")
    cw = np.cumsum(dt[o]) / total
    median = float(length[o][np.searchsorted(cw, 0.5)])
    p95 = float(length[o][min(int(np.searchsorted(cw, 0.95)), len(o) - 1)])
    return {"mean": mean, "median": median, "p95": p95, "max": float(length.max())}


def job_metrics(wait: np.ndarray, runtime: np.ndarray, tau: float = TAU) -> dict[str, float]:
    """Mean wait (s), slowdown and bounded slowdown of a set of jobs."""
    if len(wait) == 0:
        return {
            "jobs": 0,
            "mean_wait_s": float("nan"),
            "mean_slowdown": float("nan"),
            "mean_bsld": float("nan"),
        }
    sld = slowdown(wait, runtime)
    return {
        "jobs": len(wait),
        "mean_wait_s": float(np.mean(wait)),
        "mean_slowdown": float(np.nanmean(sld)) if np.isfinite(sld).any() else float("nan"),
        "mean_bsld": float(np.mean(bounded_slowdown(wait, runtime, tau))),
    }


def compute_metrics(
    schedule: Schedule,
    *,
    include_all: bool = False,
    tau: float = TAU,
    class_edges: Sequence[float] = CLASS_EDGES,
) -> dict[str, Any]:
    """Every report metric of a finished schedule.

    Args:
        schedule: a complete schedule.
        include_all: average over every job instead of leaving out warm-up/cool-down.
        tau: bounded-slowdown threshold (s).
        class_edges: short/medium and medium/long boundaries (s).

    Returns:
        A dict with ``jobs_measured``, ``mean_wait_s``, ``mean_slowdown``, ``mean_bsld``,
        ``max_wait_s``, ``utilization``, ``makespan_s``, ``queue_length`` (time-weighted
        mean/median/p95/max) and ``classes`` (short/medium/long: jobs, mean wait, mean bsld).
    """
    w = schedule.workload
    submit = w.submit
    start, end = schedule.start, schedule.end
    mask = measured_jobs(schedule, include_all)
    wait = start - submit
    runtime = end - start
    out: dict[str, Any] = {}
    base = job_metrics(wait[mask], runtime[mask], tau)
    out["jobs_measured"] = base.pop("jobs")
    out.update(base)
    out["max_wait_s"] = float(wait[mask].max()) if mask.any() else float("nan")
    makespan = float(end.max() - submit.min()) if len(w) else 0.0
    busy = float((runtime * w.procs_req).sum())
    out["utilization"] = busy / (w.procs * makespan) if makespan > 0 else 0.0
    out["makespan_s"] = makespan
    out["queue_length"] = queue_length_distribution(submit, start, until=float(end.max()))
    lo, hi = class_edges
    classes = {
        "short": runtime < lo,
        "medium": (runtime >= lo) & (runtime <= hi),
        "long": runtime > hi,
    }
    out["classes"] = {
        name: job_metrics(wait[mask & sel], runtime[mask & sel], tau) for name, sel in classes.items()
    }
    out["killed"] = int(schedule.killed.sum())
    return out
