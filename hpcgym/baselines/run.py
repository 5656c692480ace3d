"""Run a named policy on a workload: a schedule and a report row, the same for the CLI and benchmarks.

The name-level run: preset names, the preset's predictor, EASY's ``extra`` rule and,
handed in by the caller, a run through the environment. It builds the dispatcher and
the predictor and runs them with :func:`hpcgym.sim.run_dispatcher`. The row is printed
and written by :mod:`hpcgym.common.report`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from hpcgym.baselines.dispatchers import EasyBackfilling
from hpcgym.baselines.presets import make_policy, policy_specs, preset_predictor, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.report import SUMMARY_COLUMNS, format_table
from hpcgym.predict import make_predictor
from hpcgym.sim import (
    Dispatcher,
    RunResult,
    Schedule,
    callable_name,
    report_run,
    require_jobs,
    run_dispatcher,
)
from hpcgym.workloads import Workload

__all__ = [
    "SUMMARY_COLUMNS",  # tables live in hpcgym.common.report; these two names stay here for older imports
    "RunResult",
    "RunVia",
    "dispatcher_name",
    "format_table",
    "run_policy",
]


class RunVia(Protocol):
    """Another way to run a preset, with the signature of :func:`hpcgym.env.run_via_env`."""

    def __call__(
        self,
        workload: Workload,
        policy: str,
        predictor: str | None = None,
        *,
        kill_at_estimate: bool = False,
        extra: str | None = None,
    ) -> Schedule: ...


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
    via: RunVia | None = None,
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
        via: run the preset this way instead of directly, e.g. ``hpcgym.env.run_via_env``
            (as an agent acting through the Gymnasium environment); the schedule and the
            row are the same, apart from the timing fields. Presets only.
        extra: how an EASY-family preset counts its extra processors, ``"classic"`` or
            ``"all"`` (:class:`~hpcgym.baselines.EasyBackfilling`); by default the
            preset's own rule (``"classic"`` for every built-in preset).

    Returns:
        The schedule and one report row (:func:`hpcgym.sim.report_run`): ``trace, policy,
        predictor, procs, jobs_read, jobs_simulated, jobs_dropped, mean_wait_s,
        mean_slowdown, mean_bsld, utilization, makespan_s, sim_seconds, jobs_per_second,
        load_report``, ``extra`` (the EASY rule, None for other presets) and more.

    Raises:
        EmptyWorkloadError: the workload has no jobs.
        UnknownNameError: ``policy`` or ``predictor`` is not a registered name.
        InvalidConfigError: ``policy`` is neither a name nor callable, ``via`` with a
            callable, or ``extra`` with a preset that is not EASY-family.
    """
    require_jobs(workload)
    if isinstance(policy, str):
        name = resolve_policy_name(policy)
        pred = preset_predictor(name, predictor)
        dispatcher: Dispatcher | None = None
    elif callable(policy):
        if via is not None:
            raise InvalidConfigError(
                "via: only a preset name runs another way (e.g. through the environment), got a "
                f"{type(policy).__name__}; run it directly (via=None)"
            )
        name = dispatcher_name(policy)
        pred = make_predictor(predictor if predictor is not None else "walltime")
        dispatcher = policy
    else:
        raise InvalidConfigError(
            f"policy must be a preset name (hpcgym policies) or a dispatcher callable, got {policy!r}"
        )
    if dispatcher is None:
        dispatcher = make_policy(name)
    if extra is not None:
        dispatcher = with_extra(dispatcher, name, extra)
    rule = dispatcher.extra if isinstance(dispatcher, EasyBackfilling) else None
    if via is None:
        return run_dispatcher(
            workload,
            dispatcher,
            pred,
            name=name,
            kill_at_estimate=kill_at_estimate,
            include_all=include_all,
            progress=progress,
            extra=rule,
        )
    schedule = via(workload, name, predictor, kill_at_estimate=kill_at_estimate, extra=extra)
    return report_run(
        workload,
        schedule,
        policy=name,
        predictor=pred.name,
        kill_at_estimate=kill_at_estimate,
        include_all=include_all,
        extra=rule,
    )


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
