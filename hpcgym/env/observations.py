"""Observation builders, chosen by name; each becomes one key of the Dict observation.

A builder reads the engine's read-only :class:`~hpcgym.sim.SystemView` (and, per
episode, the public job columns in an :class:`EpisodeJobs`) and returns a fresh array
in [0, 1]. It never sees the environment, and never a real run time unless the
configuration sets ``oracle``.

Writing your own::

    @register_observation
    class FreeShare(ObservationBuilder):
        name = "free"

        def space(self) -> spaces.Box:
            return spaces.Box(0.0, 1.0, (1,), np.float32)

        def build(self, view: SystemView) -> np.ndarray:
            return np.array([view.free_procs / self.procs], np.float32)

>>> sorted(observation_names())
['histograms', 'jobs', 'system']
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from gymnasium import spaces

from hpcgym.env import _kernels
from hpcgym.env.config import ObservationConfig
from hpcgym.registry import Registry, summary_line
from hpcgym.sim import SystemView

JOB_FEATURES = (
    "present",
    "wait",
    "procs",
    "estimate",
    "prediction",
    "fits_now",
    "user_waiting_jobs",
    "user_waiting_procs",
    "user_running_procs",
    "user_recent_runtime",
    "user_recent_accuracy",
)
"""Columns of the ``jobs`` observation (``runtime`` is appended with ``oracle=True``).

The ``user_*`` columns describe the job's user: the share of the waiting jobs and of
the waiting processors that are theirs and the processors their running jobs hold (the
user features of Hariharan et al. Table II), and their history in this episode: the
mean run time of their last two jobs to end and the mean accuracy of those jobs'
estimates (Tsafrir et al.: run time / estimate, or estimate / run time if smaller), 0
until one of their jobs has ended.
"""

HISTOGRAMS = (
    "queue_procs",
    "queue_duration",
    "queue_wait",
    "running_procs",
    "running_duration",
    "running_elapsed",
)
"""Rows of the ``histograms`` observation: the six distributions of Hariharan et al. Table I."""

SYSTEM_FEATURES = (
    "free_procs",
    "running_jobs",
    "queue_length",
    "queue_demand",
    "queue_beyond_window",
    "queue_fits_now",
    "oldest_wait",
    "next_predicted_end",
    "mean_predicted_remaining",
    "running_overrun",
)
"""Entries of the ``system`` observation."""


@dataclass(frozen=True)
class EpisodeJobs:
    """Per-episode job columns a builder may read (run times hidden unless ``oracle``).

    Attributes:
        user: dense user index of every job (0 .. n_users - 1).
        n_users: number of distinct users in the trace.
        runtime: real run times, only with ``oracle``; otherwise empty.
    """

    user: np.ndarray
    n_users: int
    runtime: np.ndarray


class ObservationBuilder(ABC):
    """One named part of the observation.

    Args:
        config: the observation configuration.
        window_size: K, the number of job slots.
        procs: machine size.

    Attributes:
        name: the key in the Dict observation and the name in the registry.
    """

    name: ClassVar[str]

    def __init__(self, config: ObservationConfig, window_size: int, procs: int) -> None:
        self.config = config
        self.k = int(window_size)
        self.procs = int(procs)
        self.inv_log_t = 1.0 / float(np.log1p(config.max_time_s))

    @abstractmethod
    def space(self) -> spaces.Box:
        """The Box this builder fills."""

    def reset(self, view: SystemView, jobs: EpisodeJobs) -> None:  # noqa: B027 - optional hook
        """A new episode starts (``view`` is the new engine's view)."""

    @abstractmethod
    def build(self, view: SystemView) -> np.ndarray:
        """A fresh array for the current state."""


OBSERVATIONS: Registry[ObservationBuilder] = Registry("observation")
"""Every observation builder by name; each factory is the builder's class."""


def register_observation(cls: type[ObservationBuilder]) -> type[ObservationBuilder]:
    """Class decorator: make a builder available by its ``name``.

    Raises:
        InvalidConfigError: the name is taken.
    """
    OBSERVATIONS.register(cls.name, cls, description=summary_line(cls))
    return cls


def observation_names() -> dict[str, str]:
    """Registered builder names with the first line of each docstring."""
    return OBSERVATIONS.descriptions()


def make_observation(
    name: str, config: ObservationConfig, window_size: int, procs: int
) -> ObservationBuilder:
    """A builder by registered name (case-insensitive)."""
    return OBSERVATIONS.make(name, config, window_size, procs)


@register_observation
class JobWindow(ObservationBuilder):
    """The K oldest waiting jobs, one row of features each (``JOB_FEATURES``)."""

    name = "jobs"

    def __init__(self, config: ObservationConfig, window_size: int, procs: int) -> None:
        super().__init__(config, window_size, procs)
        self.features = JOB_FEATURES + (("runtime",) if config.oracle else ())
        self._runtime = np.zeros(0)
        self._user = np.zeros(0, dtype=np.int64)
        self._scratch = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
        self._history = _UserHistory(0)

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (self.k, len(self.features)), np.float32)

    def reset(self, view: SystemView, jobs: EpisodeJobs) -> None:
        self._user = jobs.user
        self._runtime = jobs.runtime if self.config.oracle else np.zeros(1)
        if len(self._scratch[0]) != jobs.n_users:
            self._scratch = tuple(np.zeros(jobs.n_users, np.int64) for _ in range(3))  # type: ignore[assignment]
        self._history = _UserHistory(jobs.n_users)

    def build(self, view: SystemView) -> np.ndarray:
        history = self._history
        history.update(view, self._user)
        out = np.zeros((self.k, len(self.features)), np.float32)
        _kernels.job_window(
            out,
            view.queue,
            view.queue_fits,
            view.running,
            view.now,
            self.procs,
            view.procs,
            view.estimate,
            view.prediction,
            view.submit,
            self._user,
            self._runtime,
            self.config.oracle,
            self.inv_log_t,
            *self._scratch,
            history.runtime,
            history.accuracy,
        )
        return out


class _UserHistory:
    """Each user's last two jobs to end in this episode: mean run time and accuracy."""

    def __init__(self, n_users: int) -> None:
        self.seen = 0
        self.count = np.zeros(n_users, np.int64)
        self.last = np.zeros((n_users, 2, 2))  # [user, newest/older, run time/accuracy]
        self.runtime = np.zeros(n_users)
        self.accuracy = np.zeros(n_users)

    def update(self, view: SystemView, user: np.ndarray) -> None:
        ended = view.ended
        if len(ended) == self.seen:
            return
        jobs = np.array(ended[self.seen :], dtype=np.int64)
        self.seen = len(ended)
        _kernels.user_history(
            jobs,
            view.end(jobs),
            view.start,
            view.estimate,
            user,
            self.count,
            self.last,
            self.runtime,
            self.accuracy,
        )


@register_observation
class Histograms(ObservationBuilder):
    """The six queue and running-job histograms of Hariharan et al. Table I (``HISTOGRAMS``).

    Sizes are binned by ``log2(procs) / log2(machine)``, times by
    ``log1p(t) / log1p(max_time_s)``, each in ``histogram_bins`` equal bins; every
    histogram is normalised by its number of jobs, as in the paper.
    """

    name = "histograms"

    def __init__(self, config: ObservationConfig, window_size: int, procs: int) -> None:
        super().__init__(config, window_size, procs)
        self.bins = int(config.histogram_bins)
        self._size_bin = np.zeros(0, np.int64)

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (len(HISTOGRAMS), self.bins), np.float32)

    def reset(self, view: SystemView, jobs: EpisodeJobs) -> None:
        scale = self.bins / np.log2(self.procs) if self.procs > 1 else 0.0
        b = (np.log2(np.maximum(view.procs, 1)) * scale).astype(np.int64)
        self._size_bin = np.minimum(b, self.bins - 1)

    def build(self, view: SystemView) -> np.ndarray:
        out = np.zeros((len(HISTOGRAMS), self.bins), np.float32)
        duration = view.prediction if self.config.histogram_duration == "prediction" else view.estimate
        _kernels.histograms(
            out,
            view.queue,
            view.running,
            view.now,
            self._size_bin,
            duration,
            view.submit,
            view.start,
            self.inv_log_t,
        )
        return out


@register_observation
class SystemSummary(ObservationBuilder):
    """Free resources, queue summary and running-job summary (``SYSTEM_FEATURES``)."""

    name = "system"

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (len(SYSTEM_FEATURES),), np.float32)

    def build(self, view: SystemView) -> np.ndarray:
        out = np.zeros(len(SYSTEM_FEATURES), np.float32)
        _kernels.system(
            out,
            view.queue,
            view.queue_fits,
            view.running,
            view.now,
            view.free_procs,
            self.procs,
            self.k,
            view.procs,
            view.prediction,
            view.submit,
            view.start,
            self.inv_log_t,
        )
        return out
