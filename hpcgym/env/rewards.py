"""Reward terms, chosen by name, computed with the functions of :mod:`hpcgym.sim.metrics`.

A term reads an :class:`Outcome` (the engine's read-only view plus the real run times
and which jobs count) and returns a non-negative *cost* for the step; the
environment's reward is ``-reward_scale * cost - invalid_penalty * invalid``. Both
named terms are reported in ``info["reward_terms"]``.

* ``bsld``: dense. A counted job's *accrued* bounded slowdown at time t is
  ``bounded_slowdown(w, runtime)`` with ``w`` its wait so far (its final wait once it
  has started), and 0 before it is submitted. The cost of a step is the growth of the
  sum over jobs since the previous step, so an episode's costs add up to the total
  bounded slowdown of its jobs, exactly as :func:`hpcgym.sim.metrics.compute_metrics`
  computes it (up to floating-point rounding).
* ``bsld-sparse``: 0 until the last step, then the episode's ``mean_bsld`` from
  :func:`~hpcgym.sim.metrics.compute_metrics`.
* ``wait``: dense, like ``bsld`` with the accrued wait in hours; the costs add up to
  the total waiting time of the episode's jobs in hours.

Rewards, unlike observations, use real run times: slowdown is defined by them.

>>> sorted(reward_names())
['bsld', 'bsld-sparse', 'wait']
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import hpcgym.env._kernels as _kernels
from hpcgym.common.registry import Registry, summary_line
from hpcgym.sim import TAU, SystemView, bounded_slowdown


@dataclass(frozen=True)
class Outcome:
    """What a reward term may read.

    Attributes:
        view: the engine's read-only view (time, queue, start times ...).
        runtime: each job's effective run time (its real run time, or its estimate when
            it is killed there), read-only.
        counted: which jobs count (the window's; not warm-start context jobs).
        n_counted: how many jobs count.
        metrics: the episode's metrics (``compute_metrics``), only on the last step.
    """

    view: SystemView
    runtime: np.ndarray
    counted: np.ndarray
    n_counted: int
    metrics: dict[str, Any] | None = None


class RewardTerm(ABC):
    """A named cost, reset at every episode.

    Attributes:
        name: the registry name.
        per_job: the costs of an episode add up to a total over its jobs (the default
            ``reward_scale`` then divides by the number of jobs); False for a cost that
            is already a mean.
    """

    name: ClassVar[str]
    per_job: ClassVar[bool] = True

    def reset(self, outcome: Outcome) -> None:  # noqa: B027 - optional hook
        """A new episode starts."""

    @abstractmethod
    def cost(self, outcome: Outcome) -> float:
        """This step's cost (>= 0)."""


REWARDS: Registry[RewardTerm] = Registry("reward")
"""Every reward term by name; each factory is the term's class."""


def register_reward(cls: type[RewardTerm]) -> type[RewardTerm]:
    """Class decorator: make a reward term available by its ``name``.

    Raises:
        InvalidConfigError: the name is taken.
    """
    REWARDS.register(cls.name, cls, description=summary_line(cls))
    return cls


def reward_names() -> dict[str, str]:
    """Registered reward names with the first line of each docstring."""
    return REWARDS.descriptions()


def make_reward(name: str) -> RewardTerm:
    """A reward term by registered name (case-insensitive)."""
    return REWARDS.make(name)


class _Accrued(RewardTerm):
    """Dense cost: growth of a per-job quantity that freezes when the job starts.

    Jobs before ``self._lo`` have all started: their frozen values are summed once in
    ``self._frozen``; only the jobs from the oldest waiting one to the last arrival
    are evaluated at each step, and only when time has moved.
    """

    def reset(self, outcome: Outcome) -> None:
        self._lo = 0
        self._frozen = 0.0
        self._prev = 0.0
        self._time = -np.inf

    kernel: ClassVar[int] = 0
    """A compiled twin of :meth:`value` in :func:`hpcgym.env._kernels.accrued_sum`
    (``ACCRUED_*``), used instead of it; 0 for none (a subclass's own :meth:`value`)."""

    def value(self, wait: np.ndarray, runtime: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _segment(self, o: Outcome, lo: int, hi: int, now: float) -> float:
        view = o.view
        if self.kernel:
            start, submit, k = view.start, view.submit, self.kernel
            return float(_kernels.accrued_sum(start, submit, o.runtime, o.counted, lo, hi, now, k, TAU))
        start = view.start[lo:hi]
        wait = np.where(np.isnan(start), now, start) - view.submit[lo:hi]
        return float(np.dot(self.value(wait, o.runtime[lo:hi]), o.counted[lo:hi]))

    def accrued(self, o: Outcome) -> float:
        """Sum over counted jobs of the accrued value now."""
        view = o.view
        now = view.now
        arrived = int(np.searchsorted(view.submit, now, side="right"))
        q = view.queue
        lo = int(q[0]) if len(q) else arrived
        if lo > self._lo:
            self._frozen += self._segment(o, self._lo, lo, now)
            self._lo = lo
        return self._frozen + self._segment(o, lo, arrived, now)

    def cost(self, o: Outcome) -> float:
        now = o.view.now
        if now == self._time and o.metrics is None:
            return 0.0  # starting a job does not change its accrued value; only time does
        self._time = now
        a = self.accrued(o)
        c = a - self._prev
        self._prev = a
        return c


@register_reward
class BsldDense(_Accrued):
    """Dense bounded-slowdown increments; an episode's costs sum to its total bsld."""

    name = "bsld"
    kernel = _kernels.ACCRUED_BSLD

    def value(self, wait: np.ndarray, runtime: np.ndarray) -> np.ndarray:
        return bounded_slowdown(wait, runtime)


@register_reward
class WaitDense(_Accrued):
    """Dense waiting-time increments in hours; an episode's costs sum to its total wait."""

    name = "wait"
    kernel = _kernels.ACCRUED_WAIT_HOURS

    def value(self, wait: np.ndarray, runtime: np.ndarray) -> np.ndarray:
        return wait / 3600.0


@register_reward
class BsldSparse(RewardTerm):
    """The episode's mean bounded slowdown, charged on the last step only."""

    name = "bsld-sparse"
    per_job = False

    def cost(self, o: Outcome) -> float:
        return 0.0 if o.metrics is None else float(o.metrics["mean_bsld"])
