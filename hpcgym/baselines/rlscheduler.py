"""RLScheduler's heuristics as its simulator runs them (for ``--protocol rlscheduler``).

RLScheduler (Zhang et al., SC'20) compares its agent with queue-order heuristics run by
its own simulator (``HPCSimPickJobs.py``, ``schedule_curr_sequence_reset``), whose rules
differ from hpcgym's :class:`~hpcgym.baselines.heuristics.QueueOrder` presets. These
presets (``rls-fcfs``, ``rls-sjf``, ``rls-f1``, ``rls-wfp3``, ``rls-unicep``, each also
``-bf``) follow those rules, so the published table can be checked job for job:

* **The head is committed.** The waiting jobs are sorted by score and the first is
  chosen; if it does not fit, the simulator waits for it: no later arrival with a better
  score overtakes it, and without backfilling nothing else starts until it has.
* **Backfilling** (``-bf``): when the chosen job does not fit, its earliest start is
  computed once, from the running jobs in order of their estimated end (start +
  estimate), adding their processors until it would fit; until it starts, any waiting
  job that fits now and whose estimated end is strictly before that time starts, taken
  in arrival order (FCFS, whatever the heuristic). No extra-processor rule (a job that
  would end later never backfills, even if it leaves the chosen job's processors free),
  and the earliest start is not revised when jobs end early.
* **Scores as coded.** ``fcfs``: submit time; ``sjf``: (estimate, submit);
  ``f1``: ``log10(r) * n + 870 * log10(s)`` (``r`` or ``s`` <= 0 taken as 0.1);
  ``wfp3`` and ``unicep`` use ``scheduled_time - submit_time`` as the wait, and a waiting
  job's ``scheduled_time`` is -1 in RLScheduler's code, so the "wait" is ``-(s + 1)``:
  ``wfp3`` = ``-(-(s + 1) / r)**3 * n`` and ``unicep`` =
  ``-(-(s + 1) + 1e-15) / (log2(n + 1e-15) * r)``. hpcgym's ``wfp3`` and ``unicep``
  presets use the real wait instead.

Ties go by arrival. RLScheduler counts processors only; on an SWF trace's machine (one
node of N processors) hpcgym's allocator does the same. On other machines whether a job
fits, and the chosen job's earliest start (running jobs given back to a copy of the free
resources in order of estimated end until it fits), come from hpcgym's allocator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import allocate, give, take
from hpcgym.sim import DispatcherBase, SystemView

RLS_SCORES = ("fcfs", "sjf", "f1", "wfp3", "unicep")
"""The scores of RLScheduler's table, as its code computes them."""


def rlscheduler_score(score: str, submit: np.ndarray, estimate: np.ndarray, procs: np.ndarray) -> np.ndarray:
    """Each job's score (lowest first) as RLScheduler's code computes it; see the module docstring.

    ``sjf`` ties by submit time are left to the caller's arrival order (submit order).

    >>> rlscheduler_score("wfp3", np.array([9.0]), np.array([10.0]), np.array([2]))
    array([2.])

    Raises:
        InvalidConfigError: an unknown score.
    """
    s = np.asarray(submit, dtype=np.float64)
    r = np.asarray(estimate, dtype=np.float64)
    n = np.asarray(procs, dtype=np.float64)
    if score == "fcfs":
        return s.copy()
    if score == "sjf":
        return r.copy()
    if score == "f1":
        return np.log10(np.where(r > 0, r, 0.1)) * n + 870.0 * np.log10(np.where(s > 0, s, 0.1))
    wait = -1.0 - s  # scheduled_time (-1 while waiting) - submit_time
    if score == "wfp3":
        return -((wait / r) ** 3) * n
    if score == "unicep":
        with np.errstate(divide="ignore"):
            return -(wait + 1e-15) / (np.log2(n + 1e-15) * r)
    raise InvalidConfigError(f"score must be one of {', '.join(RLS_SCORES)}; got {score!r}")


@dataclass
class RLSchedulerOrder(DispatcherBase):
    """A heuristic of RLScheduler's table under its simulator's rules (module docstring).

    Args:
        score: one of :data:`RLS_SCORES`.
        backfill: RLScheduler's backfilling (FCFS order, strict earliest-start bound).
        name: report name.

    Raises:
        InvalidConfigError: an unknown score.
    """

    score: str = "fcfs"
    backfill: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if self.score not in RLS_SCORES:
            raise InvalidConfigError(f"score must be one of {', '.join(RLS_SCORES)}; got {self.score!r}")
        if not self.name:
            self.name = f"rls-{self.score}" + ("-bf" if self.backfill else "")
        self._head = -1
        self._shadow = np.nan
        self._nodes: tuple[Any, ...] = ()

    @property
    def head(self) -> int:
        """The chosen job the simulator waits for (-1: none chosen)."""
        return self._head

    @property
    def every_event(self) -> bool:
        return True  # the committed head must be looked at whenever something changes

    def reset(self, view: SystemView) -> None:
        self._head, self._shadow = -1, np.nan
        self._nodes = tuple(view.machine.nodes)

    def _choose(self, view: SystemView, waiting: np.ndarray) -> int:
        sc = rlscheduler_score(self.score, view.submit[waiting], view.estimate[waiting], view.procs[waiting])
        return int(waiting[int(np.argsort(sc, kind="stable")[0])])

    def _try(self, view: SystemView, free: np.ndarray, job: int) -> np.ndarray | None:
        """Place ``job`` on ``free`` (taken from it) if it fits; its placement, else None."""
        v = view.per_chunk[job]
        placement = allocate(self._nodes, free, int(view.chunks[job]), v)
        if placement is not None:
            take(self._nodes, free, np.ascontiguousarray(v, dtype=np.int64), placement)
        return placement

    def _earliest_start(
        self, view: SystemView, free: np.ndarray, started: dict[int, np.ndarray], head: int
    ) -> float:
        running = np.concatenate([view.running, np.fromiter(started, dtype=np.int64, count=len(started))])
        start = np.where(np.isnan(view.start[running]), view.now, view.start[running])
        ends = start + view.estimate[running]
        trial = free.copy()
        v = np.ascontiguousarray(view.per_chunk[head], dtype=np.int64)
        earliest = view.now
        for k in np.argsort(ends, kind="stable"):
            j = int(running[k])
            place = started[j] if j in started else view.placement(j)
            give(self._nodes, trial, np.ascontiguousarray(view.per_chunk[j], dtype=np.int64), place)
            earliest = ends[k]
            if allocate(self._nodes, trial, int(view.chunks[head]), v) is not None:
                break
        return float(earliest)

    def __call__(self, view: SystemView) -> list[int]:
        if not self._nodes:  # called without reset (e.g. through a proxy)
            self._nodes = tuple(view.machine.nodes)
        waiting = view.queue.copy()  # arrival order
        free = np.array(view.free, dtype=np.int64)
        started: dict[int, np.ndarray] = {}
        while len(waiting):
            if self._head < 0:
                self._head, self._shadow = self._choose(view, waiting), np.nan
            head = self._head
            placement = self._try(view, free, head)
            if placement is not None:
                started[head] = placement
                waiting = waiting[waiting != head]
                self._head = -1
                continue
            if self.backfill:
                if np.isnan(self._shadow):
                    self._shadow = self._earliest_start(view, free, started, head)
                for j in waiting.tolist():
                    if j != head and view.now + view.estimate[j] < self._shadow:
                        placement = self._try(view, free, j)
                        if placement is not None:
                            started[j] = placement
            break
        return list(started)


__all__ = ["RLS_SCORES", "RLSchedulerOrder", "rlscheduler_score"]
