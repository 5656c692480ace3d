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

Each builder names the columns of its array in ``features`` (the last axis; the rows
for ``histograms``); :attr:`hpcgym.env.DispatchEnv.observation_features` collects them.
The ``resources`` and ``requests`` builders describe machines of several resource
types: their features are the machine's resource names, spelt as the machine spells
them (an SWF job's ``procs`` is the ``cores`` of a machine of cores).

>>> sorted(observation_names())
['histograms', 'jobs', 'predicted_wait', 'requests', 'resources', 'system']
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from gymnasium import spaces

import hpcgym.env._kernels as _kernels
from hpcgym.common import native
from hpcgym.common.registry import Registry, summary_line
from hpcgym.env.config import ObservationConfig
from hpcgym.machine import Machine
from hpcgym.predict.histograms import NO_BINS, histograms
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

PREDICTED_WAIT_FEATURES = ("predicted_wait", "predicted_remaining")
"""Columns of the ``predicted_wait`` observation (off by default)."""

DEFAULT_OBSERVATIONS = ("jobs", "histograms", "system")
"""The observation parts of every machine (and of every ``v0`` environment)."""

RESOURCE_OBSERVATIONS = ("resources", "requests")
"""The parts added by default on a machine of more than one resource type."""


def default_observations(machine: Machine) -> tuple[str, ...]:
    """The observation parts an environment shows when ``observations`` is None.

    :data:`DEFAULT_OBSERVATIONS`, plus :data:`RESOURCE_OBSERVATIONS` when ``machine``
    has more than one resource type. On a one-resource machine (every SWF trace,
    whatever its node size) the free amount and a job's request are already the
    ``system`` and ``jobs`` processor columns, so the observation stays as it was;
    name the parts in ``observations`` to add them there too.

    >>> from hpcgym.machine import make_machine
    >>> default_observations(make_machine("eurora"))
    ('jobs', 'histograms', 'system', 'resources', 'requests')
    >>> default_observations(Machine.processors(128))
    ('jobs', 'histograms', 'system')
    """
    return DEFAULT_OBSERVATIONS + (RESOURCE_OBSERVATIONS if machine.n_resources > 1 else ())


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
        procs: machine size in processors (the total of its first resource type).
        machine: the machine (default: one node of ``procs`` processors).

    Attributes:
        name: the key in the Dict observation and the name in the registry.
        features: names of the columns of the array (empty if the builder does not
            name them).
    """

    name: ClassVar[str]
    features: tuple[str, ...] = ()

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        self.config = config
        self.k = int(window_size)
        self.procs = int(procs)
        self.machine = machine if machine is not None else Machine.processors(self.procs)
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
    name: str, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
) -> ObservationBuilder:
    """A builder by registered name (case-insensitive); its key is ``builder.name``."""
    return OBSERVATIONS.make(name, config, window_size, procs, machine)


@register_observation
class JobWindow(ObservationBuilder):
    """The K oldest waiting jobs, one row of features each (``JOB_FEATURES``)."""

    name = "jobs"

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        super().__init__(config, window_size, procs, machine)
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
            _NO_MEMO,  # predictions may change here: scaled at every build
            _NO_MEMO,
        )
        return out


_NO_MEMO = np.zeros(0)
"""No memos for :func:`~hpcgym.env._kernels.job_window`: it scales the times itself (empty)."""


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
    features = HISTOGRAMS

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        super().__init__(config, window_size, procs, machine)
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
        native.get(histograms)(
            out,
            view.queue,
            view.running,
            view.now,
            self._size_bin,
            duration,
            view.submit,
            view.start,
            self.inv_log_t,
            NO_BINS,  # predictions may change here: binned at every build
        )
        return out


def _histograms_example() -> tuple[object, ...]:
    """Arguments of the types :meth:`Histograms.build` passes (the native core's example)."""
    from hpcgym.sim.loop import example_engine

    view = example_engine().view
    out, size_bin = np.zeros((len(HISTOGRAMS), 4), np.float32), np.zeros(1, np.int64)
    times = view.prediction, view.submit, view.start, 1.0
    return out, view.queue, view.running, view.now, size_bin, *times, NO_BINS


native.register(histograms, _histograms_example, part="env")


@register_observation
class SystemSummary(ObservationBuilder):
    """Free resources, queue summary and running-job summary (``SYSTEM_FEATURES``)."""

    name = "system"
    features = SYSTEM_FEATURES

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


@register_observation
class FreeResources(ObservationBuilder):
    """Free amount of each resource type over the capacity of that type (``features``: the resource names).

    Column ``r`` is the free amount of the machine's resource ``r`` summed over its
    nodes (``view.free_total``) divided by the machine's total of it (0 for a type of
    total 0). The columns follow the machine's resource order and are named by it
    (e.g. ``cores, gpus, mics, mem_gb`` on Eurora). A free total says nothing of how
    it is spread over nodes: whether a job fits is the ``fits_now`` job feature.
    """

    name = "resources"

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        super().__init__(config, window_size, procs, machine)
        m = self.machine
        self.features = tuple(m.resources)
        self._total = m.total.astype(np.float64)

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (len(self.features),), np.float32)

    def build(self, view: SystemView) -> np.ndarray:
        total = self._total
        share = np.divide(view.free_total, total, out=np.zeros(len(total)), where=total > 0)
        return share.astype(np.float32)


@register_observation
class JobRequests(ObservationBuilder):
    """Each shown job's request: chunks and the per-chunk amount of each resource type.

    One row per job slot, in the ``jobs`` order (the K oldest waiting jobs; rows past
    the queue are 0); ``features`` are ``chunks`` then the machine's resource names.
    The request is the one the engine places, aligned to the machine
    (:func:`hpcgym.machine.align_requests`: an SWF job's ``procs`` counts as
    ``cores``; on an exclusive machine a chunk larger than a node is split into whole
    nodes). Normalisation (the papers give none; chosen so every value lies in [0, 1]
    without clipping):

    * ``chunks``: ``log1p(chunks) / log1p(c_max)``, where ``c_max`` bounds the chunks
      a job the machine can run may have: the node count on an exclusive machine
      (each chunk takes a whole node), else the machine's summed capacity of all
      types (each chunk takes at least one unit of some type). Log-scaled since
      most jobs ask for one chunk and a few for many.
    * each resource ``r``: the per-chunk amount divided by the largest capacity of
      ``r`` on one node (a chunk must fit one node, so it is at most 1); 0 for a type
      no node has.
    """

    name = "requests"

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        super().__init__(config, window_size, procs, machine)
        m = self.machine
        self.features = ("chunks", *m.resources)
        bound = m.n_nodes if m.exclusive else int(m.capacity.sum())
        self._inv_log_chunks = 1.0 / float(np.log1p(max(bound, 1)))
        self._largest = m.capacity.max(axis=0).astype(np.float64)
        self._table = np.zeros((0, len(self.features)), np.float32)

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (self.k, len(self.features)), np.float32)

    def reset(self, view: SystemView, jobs: EpisodeJobs) -> None:
        # a job's request never changes: one row per job of the episode, looked up per step
        table = np.empty((len(view.chunks), len(self.features)), np.float32)
        table[:, 0] = np.log1p(view.chunks) * self._inv_log_chunks
        largest = self._largest
        table[:, 1:] = np.divide(
            view.per_chunk, largest, out=np.zeros(view.per_chunk.shape), where=largest > 0
        )
        np.clip(table, 0.0, 1.0, out=table)  # float32 rounding of exact bounds
        self._table = table

    def build(self, view: SystemView) -> np.ndarray:
        out = np.zeros((self.k, len(self.features)), np.float32)
        shown = view.queue[: self.k]
        out[: len(shown)] = self._table[shown]
        return out


@register_observation
class PredictedWait(ObservationBuilder):
    """Predicted queue wait of each shown job (row 0: the head job), by 003's APQ, IBL or QBETS run online.

    One row per job slot, in the ``jobs`` order (the K oldest waiting jobs, the head job
    first; rows past the queue are 0), two columns (``PREDICTED_WAIT_FEATURES``):

    * ``predicted_wait``: the wait predicted for the job when it was first seen waiting,
    * ``predicted_remaining``: that prediction minus the time waited since, at least 0,

    both scaled as ``log1p(t) / log1p(max_time_s)`` and clipped to 1. The predictor
    (``wait_predictor``: ``ibl`` by default, ``qbets``, ``apq``) is
    :class:`hpcgym.predict.waitpred.OnlineWaitPredictor` run on the episode's own state and
    history: a job is predicted once, at the first decision point at which it waits
    (its submission whenever the engine stops there: always with ``every_event``),
    from the 16 features of 003 Table II at that instant and the waits of the jobs of
    this episode that have started since their own prediction; nothing is read of jobs
    not yet submitted and no run time. The history starts empty each episode (the
    first jobs are predicted 0). IBL is the default: in ``docs/REPRODUCTION.md`` it is at
    least as accurate as APQ on the four logs (more so on two, paired 95 % intervals)
    at a fraction of the cost (no histograms, clustering or regression; a compiled
    loop); QBETS is as cheap but predicts a 95 % upper bound, the same for every job
    predicted at one instant, with an error several times the mean wait.
    """

    name = "predicted_wait"
    features = PREDICTED_WAIT_FEATURES

    def __init__(
        self, config: ObservationConfig, window_size: int, procs: int, machine: Machine | None = None
    ) -> None:
        super().__init__(config, window_size, procs, machine)
        from hpcgym.predict import OnlineWaitPredictor

        self.predictor = OnlineWaitPredictor.from_spec(config.wait_predictor, procs=self.procs)

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (self.k, len(self.features)), np.float32)

    def reset(self, view: SystemView, jobs: EpisodeJobs) -> None:
        self.predictor.reset(len(view.submit), jobs.user)

    def build(self, view: SystemView) -> np.ndarray:
        p = self.predictor
        p.update(view.now, view.queue, view.running, view.procs, view.estimate, view.submit, view.start)
        out = np.zeros((self.k, len(self.features)), np.float32)
        _kernels.predicted_wait(out, view.queue, p.predicted, p.seen, view.now, self.inv_log_t)
        return out
