"""Run a named policy on a workload: a schedule and a report row, the same for the CLI and benchmarks.

The row is printed and written by :mod:`hpcgym.common.report`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs, preset_predictor, resolve_policy_name
from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError
from hpcgym.common.report import SUMMARY_COLUMNS, format_table
from hpcgym.predict import make_predictor
from hpcgym.sim import Dispatcher, Schedule, Simulator, callable_name, compute_metrics, prediction_metrics
from hpcgym.workloads import Workload

__all__ = [
    "SUMMARY_COLUMNS",  # tables live in hpcgym.common.report; these two names stay here for older imports
    "RunResult",
    "dispatcher_name",
    "format_table",
    "run_policy",
]


@dataclass
class RunResult:
    """A finished run: the schedule and its report row."""

    schedule: Schedule
    row: dict[str, Any]


def dispatcher_name(policy: Any) -> str:
    """The report name of a dispatcher callable: its ``name``, else its ``__name__``, else its type's."""
    return callable_name(policy)


def run_policy(
    workload: Workload,
    policy: str | Dispatcher,
    predictor: str | None = None,
    *,
    kill_at_estimate: bool = False,
    include_all: bool = False,
    progress: bool | None = None,
    via_env: bool = False,
    extra: str | None = None,
) -> RunResult:
    """Simulate ``workload`` under ``policy`` and compute its metrics.

    Args:
        workload: the jobs (and machine size).
        policy: a preset name (``hpcgym policies``) or any dispatcher callable
            (:class:`~hpcgym.sim.Dispatcher`: ``view -> jobs to start``); the report names
            a callable by its ``name`` attribute, else its ``__name__``.
        predictor: a predictor name (``hpcgym predictors``); by default the preset's own
            (``walltime`` for a callable).
        kill_at_estimate: end jobs at their estimate.
        include_all: averages over every job (no warm-up/cool-down exclusion).
        progress: progress bar on stderr (default: only on a terminal, for big traces).
        via_env: run the policy as an agent acting through the Gymnasium environment
            (:func:`hpcgym.env.run_via_env`) instead of directly; the schedule and the
            row are the same, apart from the timing fields. Presets only.
        extra: how an EASY-family preset counts its extra processors, ``"classic"`` or
            ``"all"`` (:class:`~hpcgym.baselines.EasyBackfilling`); by default the
            preset's own rule (``"classic"`` for every built-in preset).

    Returns:
        The schedule and one report row: ``trace, policy, predictor, procs, jobs_read,
        jobs_simulated, jobs_dropped, mean_wait_s, mean_slowdown, mean_bsld,
        utilization, makespan_s, sim_seconds, jobs_per_second, load_report``, ``extra``
        (the EASY rule, None for other presets) and more.

    Raises:
        EmptyWorkloadError: the workload has no jobs.
        UnknownNameError: ``policy`` or ``predictor`` is not a registered name.
        InvalidConfigError: ``policy`` is neither a name nor callable, ``via_env``
            with a callable, or ``extra`` with a preset that is not EASY-family.
    """
    if len(workload) == 0:
        where = f" of {workload.report.path}" if workload.report is not None else ""
        raise EmptyWorkloadError(f"workload {workload.name!r}{where} has no jobs to simulate")
    if isinstance(policy, str):
        name = resolve_policy_name(policy)
        pred = preset_predictor(name, predictor)
        dispatcher: Dispatcher | None = None
    elif callable(policy):
        if via_env:
            raise InvalidConfigError(
                "via_env: only a preset name runs through the environment, got a "
                f"{type(policy).__name__}; run it directly (via_env=False)"
            )
        name = dispatcher_name(policy)
        pred = make_predictor(predictor if predictor is not None else "walltime")
        dispatcher = policy
    else:
        raise InvalidConfigError(
            f"policy must be a preset name (hpcgym policies) or a dispatcher callable, got {policy!r}"
        )
    pred_name = pred.name
    if dispatcher is None:
        dispatcher = make_policy(name)
    if extra is not None:
        dispatcher = with_extra(dispatcher, name, extra)
    if via_env:
        from hpcgym.env import run_via_env

        schedule = run_via_env(workload, name, predictor, kill_at_estimate=kill_at_estimate, extra=extra)
    else:
        sim = Simulator(workload, predictor=pred, kill_at_estimate=kill_at_estimate)
        schedule = sim.run(dispatcher, progress=progress)
    schedule.policy = name
    metrics = compute_metrics(schedule, include_all=include_all)
    report = workload.report
    row: dict[str, Any] = {
        "trace": workload.name,
        "policy": name,
        "predictor": pred_name,
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
        "extra": dispatcher.extra if isinstance(dispatcher, EasyBackfilling) else None,
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


def easy_extra(policy: str) -> str | None:
    """How the preset ``policy`` counts EASY's extra processors; None if it is not EASY-family.

    >>> easy_extra("easy++"), easy_extra("fcfs")
    ('classic', None)
    """
    dispatcher = make_policy(policy)
    return dispatcher.extra if isinstance(dispatcher, EasyBackfilling) else None


def with_extra(dispatcher: object, name: str, extra: str) -> EasyBackfilling:
    """The EASY-family preset ``dispatcher`` (named ``name``) counting extra processors by ``extra``.

    Raises:
        InvalidConfigError: ``dispatcher`` is not EASY-family (it makes no reservation),
            or ``extra`` is not a rule :class:`~hpcgym.baselines.EasyBackfilling` knows.
    """
    if not isinstance(dispatcher, EasyBackfilling):
        easy = ", ".join(n for n in policy_specs() if easy_extra(n) is not None)
        raise InvalidConfigError(
            f"extra={extra!r} applies only to EASY-family presets ({easy}); "
            f"{name!r} makes no reservation, so it has no extra processors"
        )
    return dataclasses.replace(dispatcher, extra=extra)  # validates extra
