"""Run a named policy on a workload and report, the same way for the CLI, demo and benchmarks."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs, preset_predictor, resolve_policy_name
from hpcgym.errors import InvalidConfigError
from hpcgym.metrics import compute_metrics
from hpcgym.prediction_metrics import prediction_metrics
from hpcgym.sim import Schedule, Simulator
from hpcgym.workload import Workload


@dataclass
class RunResult:
    """A finished run: the schedule and its report row."""

    schedule: Schedule
    row: dict[str, Any]


def run_policy(
    workload: Workload,
    policy: str,
    predictor: str | None = None,
    *,
    kill_at_estimate: bool = False,
    include_all: bool = False,
    progress: bool | None = None,
    via_env: bool = False,
    extra: str | None = None,
) -> RunResult:
    """Simulate ``workload`` under the preset ``policy`` and compute its metrics.

    Args:
        workload: the jobs (and machine size).
        policy: a preset name (``hpcgym policies``).
        predictor: a predictor name (``hpcgym predictors``); by default the preset's own.
        kill_at_estimate: end jobs at their estimate.
        include_all: averages over every job (no warm-up/cool-down exclusion).
        progress: progress bar on stderr (default: only on a terminal, for big traces).
        via_env: run the policy as an agent acting through the Gymnasium environment
            (:func:`hpcgym.env.run_via_env`) instead of directly; the schedule and the
            row are the same, apart from the timing fields.
        extra: how an EASY-family preset counts its extra processors, ``"classic"`` or
            ``"all"`` (:class:`~hpcgym.baselines.EasyBackfilling`); by default the
            preset's own rule (``"classic"`` for every built-in preset).

    Raises:
        InvalidConfigError: ``extra`` with a preset that is not EASY-family, or
            ``extra="all"`` with ``via_env`` (the environment builds the preset itself).

    Returns:
        The schedule and one report row: ``trace, policy, predictor, procs, jobs_read,
        jobs_simulated, jobs_dropped, mean_wait_s, mean_slowdown, mean_bsld,
        utilization, makespan_s, sim_seconds, jobs_per_second``, ``extra`` (the EASY
        rule, None for other presets) and more.
    """
    name = resolve_policy_name(policy)
    pred = preset_predictor(name, predictor)
    pred_name = pred.name
    dispatcher = make_policy(name)
    if extra is not None:
        dispatcher = _with_extra(dispatcher, name, extra, via_env)
    if via_env:
        from hpcgym.env.adapters import run_via_env

        schedule = run_via_env(workload, name, predictor, kill_at_estimate=kill_at_estimate)
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
        "extra": dispatcher.extra if isinstance(dispatcher, EasyBackfilling) else None,
    }
    row.update(metrics)
    row["prediction"] = prediction_metrics(schedule, include_all=include_all)
    row["sim_seconds"] = schedule.sim_seconds
    row["decisions"] = schedule.decisions
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


def _with_extra(dispatcher: object, name: str, extra: str, via_env: bool) -> EasyBackfilling:
    if not isinstance(dispatcher, EasyBackfilling):
        easy = ", ".join(n for n in policy_specs() if easy_extra(n) is not None)
        raise InvalidConfigError(
            f"extra={extra!r} applies only to EASY-family presets ({easy}); "
            f"{name!r} makes no reservation, so it has no extra processors"
        )
    if via_env and extra != dispatcher.extra:
        raise InvalidConfigError(
            f"extra={extra!r} cannot be combined with via_env: the environment builds the preset "
            f"{name!r} itself, with its own rule ({dispatcher.extra!r})"
        )
    return dataclasses.replace(dispatcher, extra=extra)  # validates extra


def format_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> str:
    """A plain-text table: ``columns`` are (key, header, format) triples."""
    cells = [[h for _, h, _ in columns]]
    for r in rows:
        cells.append(
            [format(r[k], f) if isinstance(r[k], (int, float)) else str(r[k]) for k, _, f in columns]
        )
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = []
    for i, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


SUMMARY_COLUMNS = [
    ("policy", "policy", ""),
    ("predictor", "predictor", ""),
    ("jobs_measured", "jobs", "d"),
    ("mean_wait_min", "wait [min]", ".1f"),
    ("mean_slowdown", "slowdown", ".2f"),
    ("mean_bsld", "bsld", ".2f"),
    ("utilization", "util", ".3f"),
    ("sim_seconds", "sim [s]", ".3f"),
    ("jobs_per_second", "jobs/s", ",.0f"),
]


def with_minutes(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` plus ``mean_wait_min`` for tables."""
    return {**row, "mean_wait_min": row["mean_wait_s"] / 60.0}
