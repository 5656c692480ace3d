"""Run a dispatcher object with a predictor object on a workload: the schedule, its metrics, one report row.

This is the object-level run; the name-level one (preset names, the preset's predictor,
EASY's ``extra`` rule, a run through the environment) is
:func:`hpcgym.baselines.run_policy`, which builds the objects and calls
:func:`run_dispatcher` (or :func:`report_run` on a schedule made elsewhere). The row is
printed and written by :mod:`hpcgym.common.report`.

>>> from hpcgym.predict import Walltime
>>> from hpcgym.workloads import Workload
>>> w = Workload.from_columns([0, 0], [5, 5], [4, 4], [5, 5], procs=4, name="two")
>>> first = lambda view: view.queue[:1] if view.queue_fits[:1].any() else []
>>> r = run_dispatcher(w, first, Walltime(), name="first")
>>> r.row["policy"], r.row["jobs_simulated"], r.schedule.start.tolist()
('first', 2, [0.0, 5.0])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hpcgym.common.errors import EmptyWorkloadError
from hpcgym.predict import Predictor
from hpcgym.sim.dispatcher import Dispatcher, callable_name
from hpcgym.sim.engine import Simulator
from hpcgym.sim.metrics import compute_metrics
from hpcgym.sim.prediction_metrics import prediction_metrics
from hpcgym.sim.schedule import Schedule
from hpcgym.workloads import Workload

__all__ = ["RunResult", "report_run", "require_jobs", "run_dispatcher"]


@dataclass
class RunResult:
    """A finished run: the schedule and its report row."""

    schedule: Schedule
    row: dict[str, Any]


def require_jobs(workload: Workload) -> None:
    """Raise :class:`~hpcgym.common.errors.EmptyWorkloadError` if ``workload`` has no jobs."""
    if len(workload) == 0:
        where = f" of {workload.report.path}" if workload.report is not None else ""
        raise EmptyWorkloadError(f"workload {workload.name!r}{where} has no jobs to simulate")


def run_dispatcher(
    workload: Workload,
    dispatcher: Dispatcher,
    predictor: Predictor,
    *,
    name: str | None = None,
    kill_at_estimate: bool = False,
    include_all: bool = False,
    progress: bool | None = None,
    extra: str | None = None,
) -> RunResult:
    """Simulate ``workload`` under ``dispatcher`` planning with ``predictor``, and report it.

    Args:
        workload: the jobs (and machine size).
        dispatcher: any dispatcher (:class:`~hpcgym.sim.Dispatcher`: ``view -> jobs to start``).
        predictor: what it plans with (fresh or not: the engine resets it).
        name: the report name; by default the dispatcher's ``name`` attribute, else its
            ``__name__`` (:func:`~hpcgym.sim.callable_name`).
        kill_at_estimate: end jobs at their estimate.
        include_all: averages over every job (no warm-up/cool-down exclusion).
        progress: progress bar on stderr (default: only on a terminal, for big traces).
        extra: the row's ``extra`` (how an EASY-family dispatcher counts its extra
            processors); None for other dispatchers.

    Returns:
        The schedule and its row (:func:`report_run`).

    Raises:
        EmptyWorkloadError: the workload has no jobs.
    """
    require_jobs(workload)
    pred_name = predictor.name
    sim = Simulator(workload, predictor=predictor, kill_at_estimate=kill_at_estimate)
    schedule = sim.run(dispatcher, progress=progress)
    sim.close()  # the report needs only the schedule: the engine's buffers go first
    return report_run(
        workload,
        schedule,
        policy=name if name is not None else callable_name(dispatcher),
        predictor=pred_name,
        kill_at_estimate=kill_at_estimate,
        include_all=include_all,
        extra=extra,
    )


def report_run(
    workload: Workload,
    schedule: Schedule,
    *,
    policy: str,
    predictor: str,
    kill_at_estimate: bool = False,
    include_all: bool = False,
    extra: str | None = None,
) -> RunResult:
    """The report row of ``schedule``, a finished run of ``workload``; sets ``schedule.policy``.

    Returns:
        The schedule and one report row: ``trace, policy, predictor, procs, jobs_read,
        jobs_simulated, jobs_dropped, mean_wait_s, mean_slowdown, mean_bsld,
        utilization, makespan_s, sim_seconds, jobs_per_second, load_report``, ``extra``
        and more.
    """
    schedule.policy = policy
    metrics = compute_metrics(schedule, include_all=include_all)
    report = workload.report
    row: dict[str, Any] = {
        "trace": workload.name,
        "policy": policy,
        "predictor": predictor,
        "procs": workload.procs,
        "jobs_read": report.job_lines if report else len(workload),
        "jobs_simulated": len(workload),
        "jobs_dropped": report.jobs_dropped if report else 0,
        "dropped_by_reason": dict(report.dropped) if report else {},
        "offset": report.offset if report else 0,
        "load_factor": report.load_factor if report else 1.0,
        "kill_at_estimate": kill_at_estimate,
        "include_all": include_all,
        "load_report": report.to_dict() if report else None,
        "extra": extra,
    }
    row.update(metrics)
    row["prediction"] = prediction_metrics(schedule, include_all=include_all)
    row["sim_seconds"] = schedule.sim_seconds
    row["decisions"] = schedule.decisions
    if "cp" in schedule.extras:  # the CP dispatchers' figures (hpcgym.baselines.cp)
        row["cp"] = schedule.extras["cp"]
    if "replay" in schedule.extras:  # the logged schedule's fit (hpcgym.baselines.replay)
        row["replay"] = schedule.extras["replay"]
    row["jobs_per_second"] = (
        len(workload) / schedule.sim_seconds if schedule.sim_seconds > 0 else float("inf")
    )
    return RunResult(schedule, row)
