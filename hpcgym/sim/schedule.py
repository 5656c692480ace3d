"""The schedule record: what a simulation did (:class:`Schedule`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hpcgym.machine import Machine
from hpcgym.predict import ChangeLog, change_rows
from hpcgym.workloads import Workload

__all__ = ["Schedule"]


@dataclass
class Schedule:
    """What a simulation did: every job's start, end and nodes, and how predictions evolved.

    Attributes:
        workload: the simulated jobs.
        start, end: start and end time of every job.
        killed: jobs ended at their estimate (only with ``kill_at_estimate``).
        first_prediction: each job's prediction right after it was submitted.
        prediction_changes: ``(time, job, prediction)`` revisions in time order (the
            engine gives a :class:`~hpcgym.predict.ChangeLog`; any sequence of tuples works).
        policy, predictor: names.
        sim_seconds: wall-clock seconds spent in the simulation loop.
        decisions: number of dispatcher calls.
        extras: anything a dispatcher recorded (e.g. reservations), by name.
        machine: the machine the jobs ran on.
        placement_ptr, placement_nodes: the placements, in compressed rows: job ``j``
            ran its chunks on nodes ``placement_nodes[placement_ptr[j]:placement_ptr[j + 1]]``
            (see :meth:`placement`).
    """

    workload: Workload
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    first_prediction: np.ndarray
    prediction_changes: Sequence[tuple[float, int, float]]
    policy: str = ""
    predictor: str = ""
    sim_seconds: float = 0.0
    decisions: int = 0
    extras: dict[str, object] = field(default_factory=dict)
    machine: Machine | None = None
    placement_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    placement_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.workload.submit

    @property
    def runtime(self) -> np.ndarray:
        """Time each job actually ran (its real run time, or less if killed)."""
        return self.end - self.start

    def placement(self, job: int) -> np.ndarray:
        """The node of each chunk of ``job``."""
        p = self.placement_ptr
        return self.placement_nodes[p[job] : p[job + 1]]

    def jobs_slice(self, first: int) -> Schedule:
        """The schedule of jobs ``first`` onwards only (their workload window)."""
        import dataclasses

        keep = slice(first, len(self.start))
        p0 = int(self.placement_ptr[first])
        return dataclasses.replace(
            self,
            workload=self.workload.window(None, first),
            start=self.start[keep],
            end=self.end[keep],
            killed=self.killed[keep],
            first_prediction=self.first_prediction[keep],
            prediction_changes=_changes_from(self.prediction_changes, first),
            placement_ptr=self.placement_ptr[first:] - p0,
            placement_nodes=self.placement_nodes[p0:],
        )


def _changes_from(changes: Sequence[tuple[float, int, float]], first: int) -> ChangeLog:
    """The revisions of jobs ``first`` onwards, their jobs renumbered from 0."""
    rows = change_rows(changes)
    rows = rows[rows[:, 1] >= first]
    rows[:, 1] -= first
    log = ChangeLog()
    log.add_rows(rows)
    return log
