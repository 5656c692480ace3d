"""The engine: one discrete-event simulator, its kernels, the schedule record, metrics and pictures."""

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
from hpcgym.sim.gantt import ProcessorLayout, pack_processors
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
    queue_length_series,
    slowdown,
    steady_state_mask,
    trimmed_mask,
)
from hpcgym.sim.pictures import (
    COLOR_BY,
    PICTURE_SUFFIXES,
    VIEWS,
    check_picture_path,
    comparison_figure,
    parse_time,
    plot_comparison_files,
    plot_run,
    plot_schedule_file,
    schedule_figure,
    schedule_machine,
    write_figure,
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
from hpcgym.sim.schedule_file import ScheduleTable, read_schedule
from hpcgym.sim.view import SystemView

__all__ = [
    "COLOR_BY",
    "MEASURED_SETS",
    "PICTURE_SUFFIXES",
    "SMALL_SET_JOBS",
    "SMALL_SET_SHARE",
    "TAU",
    "VIEWS",
    "CallableDispatcher",
    "Decision",
    "Dispatcher",
    "DispatcherBase",
    "Jobs",
    "ProcessorLayout",
    "RunResult",
    "Schedule",
    "ScheduleTable",
    "Simulator",
    "State",
    "SystemView",
    "accuracy",
    "as_dispatcher",
    "bounded_slowdown",
    "callable_name",
    "check_picture_path",
    "common_measured_jobs",
    "comparison_figure",
    "compute_metrics",
    "corrections_per_job",
    "job_accuracy",
    "job_metrics",
    "measured_jobs",
    "measurement_notes",
    "pack_processors",
    "parse_time",
    "plot_comparison_files",
    "plot_run",
    "plot_schedule_file",
    "predictability",
    "prediction_metrics",
    "queue_length_distribution",
    "queue_length_series",
    "read_schedule",
    "report_run",
    "require_jobs",
    "run_dispatcher",
    "schedule_figure",
    "schedule_machine",
    "slowdown",
    "steady_state_mask",
    "trimmed_mask",
    "write_figure",
]
