"""The engine: one discrete-event simulator, its kernels, the schedule record and the metrics."""

from __future__ import annotations

from hpcgym.sim.engine import (
    Decision,
    Dispatcher,
    Jobs,
    Schedule,
    Simulator,
    State,
    SystemView,
)

__all__ = [
    "Decision",
    "Dispatcher",
    "Jobs",
    "Schedule",
    "Simulator",
    "State",
    "SystemView",
]
