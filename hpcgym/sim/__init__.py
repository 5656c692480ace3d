"""The engine: one discrete-event simulator, its kernels, the schedule record and the metrics."""

from __future__ import annotations

from hpcgym.sim._kernels import Jobs, State
from hpcgym.sim.dispatcher import (
    CallableDispatcher,
    Decision,
    Dispatcher,
    DispatcherBase,
    as_dispatcher,
    callable_name,
)
from hpcgym.sim.engine import Simulator
from hpcgym.sim.metrics import (
    MEASURED_SETS,
    SMALL_SET_JOBS,
    SMALL_SET_SHARE,
    TAU,
    bounded_slowdown,
    common_measured_jobs,
    compute_metrics,
    job_metrics,
    measured_jobs,
    measurement_notes,
    queue_length_distribution,
    slowdown,
    steady_state_mask,
    trimmed_mask,
)
from hpcgym.sim.prediction_metrics import (
    accuracy,
    corrections_per_job,
    job_accuracy,
    predictability,
    prediction_metrics,
)
from hpcgym.sim.run import RunResult, report_run, require_jobs, run_dispatcher
from hpcgym.sim.schedule import Schedule
from hpcgym.sim.view import SystemView

__all__ = [
    "MEASURED_SETS",
    "SMALL_SET_JOBS",
    "SMALL_SET_SHARE",
    "TAU",
    "CallableDispatcher",
    "Decision",
    "Dispatcher",
    "DispatcherBase",
    "Jobs",
    "RunResult",
    "Schedule",
    "Simulator",
    "State",
    "SystemView",
    "accuracy",
    "as_dispatcher",
    "bounded_slowdown",
    "callable_name",
    "common_measured_jobs",
    "compute_metrics",
    "corrections_per_job",
    "job_accuracy",
    "job_metrics",
    "measured_jobs",
    "measurement_notes",
    "predictability",
    "prediction_metrics",
    "queue_length_distribution",
    "report_run",
    "require_jobs",
    "run_dispatcher",
    "slowdown",
    "steady_state_mask",
    "trimmed_mask",
]
