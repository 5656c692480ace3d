"""The Gymnasium environment: one decision of the shared engine per step."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import hpcgym.env._kernels as _kernels
import hpcgym.env.episodes as episodes
from hpcgym.baselines import EasyBackfilling, make_policy
from hpcgym.common import native
from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError
from hpcgym.env._compiled import CompiledEpisodes, compiled_obstacle
from hpcgym.env._engine import EpisodeEngine, trace_requests
from hpcgym.env._vector_kernels import F_NOW, NO_KERNEL, step_all
from hpcgym.env.backfill import LearnedBackfill, reserve_and_backfill
from hpcgym.env.config import DispatchConfig, make_config
from hpcgym.env.observations import (
    DEFAULT_OBSERVATIONS,
    EpisodeJobs,
    ObservationBuilder,
    default_observations,
    make_observation,
)
from hpcgym.env.rendering import render_frame
from hpcgym.env.rewards import Outcome, make_reward
from hpcgym.machine import Machine
from hpcgym.sim import DispatcherBase, Schedule, Simulator, SystemView, as_dispatcher, compute_metrics
from hpcgym.sim import _kernels as ek


class DispatchEnv(gym.Env[dict[str, np.ndarray], np.int64]):
    """Dispatch the jobs of an HPC workload trace on a cluster, one decision per step.

    ## Description

    A window of N consecutive jobs of a Parallel Workloads Archive trace (by default the
    bundled slice of SDSC-SP2 on 128 processors) or of a job table on a machine of nodes
    x resource types (``machine="eurora"``: 64 nodes of cores, GPUs, MICs and memory) is
    replayed by hpcgym's discrete-event
    engine, the same one every reference dispatcher of :mod:`hpcgym.baselines` runs
    on. Jobs arrive at their submit times and run for their real run time; the agent
    decides which waiting job starts when. Windows are sampled (with the environment's
    seeded generator) from a chronological split of the trace, so agents can be
    evaluated on jobs they never trained on. With ``warm_start`` an episode begins with
    the running and waiting jobs a full replay of the trace had when the window's first
    job arrived, instead of an empty machine.

    The engine moves from one *decision point* to the next: an instant (after that
    instant's terminations and arrivals) at which a job waits and at least one waiting
    job fits the free resources (the one allocator of :mod:`hpcgym.machine.allocator` decides,
    on the nodes, for the whole request vector).

    ## Action Space

    ``mode="job"`` (default): ``Discrete(K + 1)`` over the K oldest waiting jobs (slot
    ``i`` is the i-th oldest) plus "advance":

    | action   | meaning                                                         |
    |----------|-----------------------------------------------------------------|
    | 0 .. K-1 | start the job in that slot now                                  |
    | K        | start nothing more now: advance to the next decision point      |

    After a start the next step is at the same instant if another waiting job still
    fits, else at the next decision point.

    With ``backfill="easy"`` a chosen job that does not fit is not invalid: it gets
    EASY's reservation (the earliest time enough processors are predicted to be free)
    and the engine starts later jobs that do not delay it (the EASY rule, with the same
    compiled kernel as :class:`~hpcgym.baselines.EasyBackfilling`) at every event until
    it fits and starts; the agent acts as EASY's priority function (as in RLScheduler).
    :meth:`action_masks` (for sb3-contrib's ``MaskablePPO``) allows the occupied slots
    whose job fits now (every occupied slot with ``backfill="easy"``), and "advance"
    whenever an event is still to come.

    ``mode="policy"``: ``Discrete(len(policies))``; the chosen reference dispatcher
    (``fcfs``, ``sjf-list``, ``ljf-list``, ``easy`` by default) makes this decision,
    then the engine advances to the next decision point. Every dispatcher plans with
    the environment's predictor.

    ``mode="backfill"`` (learned backfilling, :mod:`hpcgym.env.backfill`): ``Discrete(K + 1)``.
    The preset ``order`` starts jobs in its priority order and keeps EASY's reservation for
    the first that does not fit; slot i < K backfills the i-th job that may backfill now
    without delaying it (in the preset's backfill order; later slots: the head, then the
    rest), K stops until the next decision point. Steps come only where a job may backfill;
    always slot 0 (:func:`~hpcgym.env.backfill.expert_action`) gives the preset's schedule.

    An invalid action never raises; it is flagged with ``info["invalid_action"]`` and
    replaced by the *fallback*: advance if an event is still to come, else start the
    oldest waiting job (which then fits, as the machine is idle). Invalid are: an empty
    slot, a job that does not fit (``backfill="none"``), advancing when nothing is left
    to happen, an out-of-range action, a slot that may not backfill (``backfill`` mode: the
    fallback is to stop), and in ``policy`` mode an out-of-range index
    (the first dispatcher then decides) or a dispatcher that would leave the idle
    machine waiting forever.

    ## Observation Space

    A ``Dict`` of the builders named in ``observations`` (all values in [0, 1]; times
    are ``log1p(t) / log1p(max_time_s)``, clipped). By default (``observations=None``)
    the first three on every machine, and the last two as well on a machine of more
    than one resource type (e.g. ``machine="eurora"``: cores, gpus, mics, mem_gb);
    ``v0`` ids show the first three on every machine:

    | key            | shape     | content                                                |
    |----------------|-----------|--------------------------------------------------------|
    | ``jobs``       | (K, 11)   | one row per shown job (``JOB_FEATURES``)               |
    | ``histograms`` | (6, B)    | the six distributions of Hariharan et al. Table I      |
    | ``system``     | (10,)     | free resources and summaries (``SYSTEM_FEATURES``)     |
    | ``resources``  | (R,)      | free amount of each resource type / its capacity       |
    | ``requests``   | (K, 1 + R)| each shown job's chunks and per-chunk request per type |
    | ``predicted_wait`` | (K, 2) | predicted queue wait of each shown job (off by default) |

    ``jobs`` columns: present, wait so far, requested processors / machine, estimate,
    prediction, fits now, the user's share of the waiting jobs and of the waiting
    processors, the user's running processors / machine, the user's history in the
    episode (mean run time and estimate accuracy of their last two jobs to end); with
    ``oracle`` a twelfth: the real run time. ``histograms`` rows: the waiting jobs' request sizes, durations
    (prediction or estimate) and elapsed waits, the running jobs' request sizes,
    durations and elapsed run times, each normalised to sum 1 over its jobs, in
    ``histogram_bins`` bins (B). ``system``: free processors, running jobs, queue
    length, queued demand, share of the queue beyond the window, share of it that fits
    now, oldest wait, next predicted end, mean predicted remaining time, share of
    running jobs past their prediction. "Processors" are the machine's first resource
    type (``cores`` on Eurora); "fits now" is the engine's allocator's answer on the
    whole request vector and the nodes.

    ``resources`` and ``requests`` columns are named by the machine's resource types
    in its own spelling (:attr:`observation_features`): ``resources`` holds the free
    amount of each type summed over the nodes over the machine's total of it;
    ``requests`` holds, per shown job, ``log1p(chunks) / log1p(c_max)`` and each
    type's per-chunk amount over the largest node's capacity of it (see
    :class:`~hpcgym.env.observations.JobRequests`). Keys are the builders' registered
    names however ``observations`` spells them (``"Jobs"`` gives the key ``jobs``).

    ``predicted_wait`` (only when ``observations`` names it), per shown job (row 0:
    the head job): the queue wait predicted when the job was first seen waiting, and
    that prediction minus the time waited since, by Hariharan et al.'s IBL (default),
    QBETS or APQ (``wait_predictor``) run online on the episode's own state and history
    (see :class:`~hpcgym.env.observations.PredictedWait`).

    A job's real run time never appears unless ``oracle=True``. Wrap with
    :class:`~hpcgym.env.FlattenDispatchObservation` for a single ``Box`` (MLP policies).

    ## Rewards

    By name, from the functions of :mod:`hpcgym.sim.metrics` (see :mod:`hpcgym.env.rewards`):
    ``bsld`` (default, dense: minus the growth of the window jobs' accrued bounded
    slowdown, so an episode's costs sum to its total bounded slowdown), ``bsld-sparse``
    (minus the episode's mean bounded slowdown on the last step) and ``wait`` (dense,
    waiting hours). The cost is multiplied by ``reward_scale`` (by default 1 / N for the
    dense rewards and 1 for ``bsld-sparse``: either way the return is minus a per-job
    mean) and ``invalid_penalty`` is subtracted for an invalid action.
    ``info["reward_terms"]`` holds the named terms.

    ## Starting State

    :meth:`reset` samples a window (or takes ``options={"offset": i}``), builds the
    engine, and advances to the first decision point.

    ## Episode End

    ``terminated`` once every job of the episode has ended (after the last job starts
    the engine runs to completion). The final ``info["metrics"]`` holds the window's
    metrics from :func:`~hpcgym.sim.metrics.compute_metrics` (``mean_wait_s``,
    ``mean_bsld``, ``utilization`` ...). There is no truncation; every episode is finite.

    ## Arguments

    Keyword arguments of ``gymnasium.make`` are the fields of
    :class:`~hpcgym.env.config.EpisodeConfig` (``trace``, ``machine``, ``procs``, ``load_factor``,
    ``window_jobs``, ``split``, ``split_fractions``, ``job_range``, ``warm_start``,
    ``warm_policy``, ``predictor``, ``predictor_of``, ``kill_at_estimate``),
    :class:`~hpcgym.env.config.ObservationConfig` (``window_size``, ``observations``,
    ``histogram_bins``, ``histogram_duration``, ``max_time_s``, ``oracle``,
    ``wait_predictor``),
    :class:`~hpcgym.env.config.ActionConfig` (``mode``, ``backfill``, ``policies``,
    ``order``, ``every_event``) and :class:`~hpcgym.env.config.RewardConfig` (``reward``,
    ``reward_scale``, ``invalid_penalty``, ``include_all``); or ``config=`` a whole
    :class:`~hpcgym.env.config.DispatchConfig`; ``render_mode`` (see Rendering); and
    ``compiled`` (see Compiled steps). An unknown name raises
    :class:`~hpcgym.common.errors.InvalidConfigError`.

    >>> import gymnasium as gym
    >>> import hpcgym
    >>> env = gym.make("hpcgym/Dispatch-v1", window_jobs=64, window_size=16)
    >>> obs, info = env.reset(seed=0)
    >>> sorted(obs), obs["jobs"].shape, env.action_space
    (['histograms', 'jobs', 'system'], (16, 11), Discrete(17))
    >>> mask = env.unwrapped.action_masks()
    >>> obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
    >>> info["invalid_action"]
    False

    ## Compiled steps

    In ``job`` mode without backfill, with a predictor whose predictions are fixed at
    reset and the built-in observation parts and rewards, a step is one numba call
    (:mod:`hpcgym.env._compiled`) with the same results as the Python path, which every
    other configuration takes. ``compiled=None`` (default) picks, ``True`` raises
    :class:`~hpcgym.common.errors.InvalidConfigError` naming what prevents it, ``False``
    keeps Python; :attr:`compiled` says which runs. Reading :attr:`sim`, :attr:`view` or
    :attr:`observation_builders`, or calling :meth:`place`, brings the engine up to date and
    plays the rest of the episode in Python.

    ## Rendering

    ``render_mode="ansi"``: :meth:`render` returns a one-line status (time, decisions,
    queue length, running jobs, free processors, jobs ended). ``render_mode="rgb_array"``
    (what stable-baselines3's ``make_vec_env`` asks for by default): a ``uint8`` picture
    of shape (176, 256, 3), drawn with numpy alone: a bar of the machine's processors
    (free ones white, then the running jobs coloured by remaining predicted time, red
    past their prediction), one row per waiting job of the first 16 action slots (bar
    length = processors on the machine's scale, colour = predicted run time, a green
    square when it fits now) and gauges of the queue length and the jobs ended (see
    :mod:`hpcgym.env.rendering`). ``gymnasium.make`` turns ``"human"`` into
    ``"rgb_array"`` shown by its ``HumanRendering`` wrapper (needs pygame) and
    ``"ansi_list"`` or ``"rgb_array_list"`` into its ``RenderCollection`` wrapper; any
    other mode raises :class:`~hpcgym.common.errors.InvalidConfigError`.

    ## Version History

    * v1: on a machine of more than one resource type the default observation adds
      the ``resources`` and ``requests`` parts (free amount per type, each shown job's
      request vector). On a one-resource machine (every SWF trace) v1 behaves exactly
      as v0. Also new, in both versions: the ``machine`` argument and job tables as
      ``trace``; observation keys spelt as the builders' names (a bug fix: ``"Jobs"``
      used to give the key ``Jobs``). Later, in both versions and off unless named in
      ``observations``: the ``predicted_wait`` part and its ``wait_predictor`` argument (the
      default observation is unchanged).
    * v0: initial version; observations ``jobs``, ``histograms``, ``system`` on every
      machine (:class:`DispatchEnvV0`, still registered). The ``rgb_array`` render
      mode was added later without a new version: as with Gymnasium's own
      ``render_mode`` API change, rendering does not touch dynamics, observations,
      rewards or episode ends, so results obtained with earlier v0 releases stay
      comparable.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 - Gymnasium's convention

    def __init__(
        self,
        config: DispatchConfig | None = None,
        *,
        render_mode: str | None = None,
        compiled: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if compiled not in (None, True, False):
            raise InvalidConfigError(f"compiled: must be None, True or False, got {compiled!r}")
        self.config = cfg = make_config(config, **kwargs)
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise InvalidConfigError(
                f"render_mode: must be None or one of {', '.join(map(repr, modes))}, got {render_mode!r} "
                "(gymnasium.make also accepts 'human', drawn from 'rgb_array' by its HumanRendering "
                "wrapper, and '<mode>_list' for each mode)"
            )
        self.render_mode = render_mode
        ep, oc, ac = cfg.episode, cfg.observation, cfg.action
        self.trace = trace = episodes.load_trace(ep.trace, ep.procs, ep.load_factor, ep.machine)
        self.machine = machine = (
            trace.machine if trace.machine is not None else Machine.processors(trace.procs)
        )
        self._predictor = episodes.build_predictor(ep.predictor, ep.predictor_of)
        if self._predictor.needs_runtime and not oc.oracle:
            raise InvalidConfigError(
                f"predictor: {self._predictor.name!r} shows real run times to the agent; "
                "pass oracle=True to allow it"
            )
        self._warm = episodes.WarmStart(trace, ep.warm_policy, ep.kill_at_estimate) if ep.warm_start else None
        self._trace_requests = trace_requests(trace, machine)
        self.job_range = episodes.split_range(len(trace), ep.split, ep.split_fractions, ep.job_range)
        lo, hi = self.job_range
        self.window_jobs = hi - lo if ep.window_jobs is None else int(ep.window_jobs)
        if self.window_jobs > hi - lo:
            raise InvalidConfigError(
                f"window_jobs: {self.window_jobs} jobs do not fit the job range [{lo}, {hi}) "
                f"of {hi - lo} jobs"
            )
        max_jobs = len(trace) if ep.warm_start else self.window_jobs
        self.window_size = k = max_jobs if oc.window_size is None else int(oc.window_size)
        self.mode = ac.mode
        self._easy = ac.backfill == "easy"
        self._every_event = bool(ac.every_event)
        self._users, self._user_index = np.unique(trace.user, return_inverse=True)
        names = oc.observations if oc.observations is not None else self.default_observations(machine)
        self._builders: dict[str, ObservationBuilder] = {}
        for asked in names:
            b = make_observation(asked, oc, k, trace.procs, machine)
            if b.name in self._builders:
                raise InvalidConfigError(f"observations: {asked!r} names the {b.name!r} part a second time")
            self._builders[b.name] = b  # the builder's own spelling, whatever the user wrote
        self.observation_space = spaces.Dict(  # type: ignore[assignment]
            {n: b.space() for n, b in self._builders.items()}
        )
        self._bf = LearnedBackfill(ac.order, k) if self.mode == "backfill" else None
        if self.mode != "policy":
            self.action_space = spaces.Discrete(k + 1)
            self._dispatchers: list[DispatcherBase] = []
        else:
            self._dispatchers = [as_dispatcher(make_policy(p)) for p in ac.policies]
            self.action_space = spaces.Discrete(len(self._dispatchers))
        self._reward = make_reward(cfg.scoring.reward)
        # backfill="easy" is the "easy" preset's own step, with the agent's job as the head
        easy = make_policy("easy")
        if not isinstance(easy, EasyBackfilling):  # pragma: no cover - a replaced preset
            raise InvalidConfigError("backfill: the 'easy' preset is no longer an EasyBackfilling")
        self._backfiller = easy
        self._sim: Simulator | None = None
        self._mask = np.zeros(self.action_space.n, dtype=bool)
        self._placements: dict[int, np.ndarray] = {}
        self._done = True
        self.decision_count = 0
        self.episode_offset = lo
        self._fast = False  # this episode runs compiled (self._core's row is ahead of self._sim)
        self._core: CompiledEpisodes | None = None
        obstacle = compiled_obstacle(self)
        if compiled and obstacle is not None:
            raise InvalidConfigError(f"compiled=True, but {obstacle}")
        if obstacle is None and compiled is not False:
            self._core = CompiledEpisodes(1, self)
            self._mask = self._core.mask[0]
        rc = cfg.scoring
        scale = rc.reward_scale
        self._scale = float(
            scale if scale is not None else (1.0 / self.window_jobs if self._reward.per_job else 1.0)
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a copy's mask must again be the compiled row's (a view does not survive pickling)
        self.__dict__.update(state)
        if self._core is not None:
            self._core.mask[0] = self._mask
            self._mask = self._core.mask[0]

    @property
    def compiled(self) -> bool:
        """Whether steps run in one compiled call (see Compiled steps in the class docstring)."""
        return self._core is not None

    @property
    def sim(self) -> Simulator | None:
        """The engine of the current episode (None before the first :meth:`reset`).

        Reading it brings the engine up to date, and the rest of the episode then
        steps in Python, so that the engine and its view stay live for the reader.
        """
        self._leave_compiled()
        return self._sim

    def _leave_compiled(self) -> None:
        """Bring the engine, builders and reward up to date and go on in Python for this episode."""
        if self._fast:
            assert self._core is not None
            self._core.sync(0, self)
            self._fast = False

    def _sync(self) -> None:
        """Bring the engine up to date for a read that keeps nothing (a schedule, a frame)."""
        if self._fast:
            assert self._core is not None
            self._core.sync(0, self)

    @staticmethod
    def default_observations(machine: Machine) -> tuple[str, ...]:
        """The observation parts shown when ``observations`` is None.

        See :func:`hpcgym.env.observations.default_observations`.
        """
        return default_observations(machine)

    @property
    def observation_builders(self) -> Mapping[str, ObservationBuilder]:
        """The builder of each observation part, by key (read-only), e.g. to read the
        ``predicted_wait`` part's predictor (``["predicted_wait"].predictor``)."""
        self._leave_compiled()
        return MappingProxyType(self._builders)

    @property
    def observation_features(self) -> dict[str, tuple[str, ...]]:
        """The names of each observation part's columns, by key (the rows for ``histograms``).

        >>> env = DispatchEnv(trace="hpcgym/workloads/data/eurora-sample.csv", split="all", window_jobs=50)
        >>> env.observation_features["resources"]
        ('cores', 'gpus', 'mics', 'mem_gb')
        >>> env.observation_features["requests"]
        ('chunks', 'cores', 'gpus', 'mics', 'mem_gb')
        """
        return {name: b.features for name, b in self._builders.items()}

    def place(self, job: int, nodes: Any) -> None:
        """Start ``job`` on ``nodes`` if an action starts it before time moves on.

        For adapters of dispatchers that place jobs themselves (EASY on nodes reserves
        concrete nodes for the head job and backfills elsewhere): a ``job``-mode action
        starts a job where the machine's allocation policy puts it, unless a placement
        was given here for this instant. Placements are forgotten when the
        environment advances to the next decision point.

        Args:
            job: the job (an index of ``env.view``).
            nodes: one node index per chunk of the job (``view.chunks[job]`` of them).

        Raises:
            InvalidDecisionError: ``nodes`` has the wrong length; a placement that does
                not fit when the job starts is refused by the engine with this error too.
        """
        sim = self.sim
        if sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        j = operator.index(job)
        ns = np.ascontiguousarray(nodes, dtype=np.int64).reshape(-1)
        want = int(sim.view.chunks[j])
        if len(ns) != want:
            raise InvalidDecisionError(f"place: job {j} has {want} chunks but {len(ns)} nodes were given")
        self._placements[j] = ns

    # ----------------------------------------------------------- episodes
    def window_offsets(self, count: int) -> list[int]:
        """First jobs of ``count`` evenly spaced, non-overlapping windows of the job range.

        See :func:`hpcgym.env.episodes.evaluation_windows` (fewer when fewer fit). Pass each
        as ``env.reset(options={"offset": offset})``.
        """
        return episodes.evaluation_windows(self.job_range, self.window_jobs, count)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode on a new window and advance to its first decision point.

        Args:
            seed: seeds the environment's generator (window sampling).
            options: ``{"offset": i}`` replays the window starting at trace job ``i``
                instead of a sampled one (any ``i`` with the window inside the trace).

        Returns:
            The first observation and an info dict (see :meth:`step`).
        """
        super().reset(seed=seed)
        self._fast = False
        unknown = set(options or ()) - {"offset"}
        if unknown:
            raise InvalidConfigError(
                f"options: unknown reset option(s) {sorted(unknown)}; the only one is 'offset'"
            )
        offset = None if options is None else options.get("offset")
        if offset is None:
            offset = episodes.sample_offset(self.np_random, self.job_range, self.window_jobs)
        else:
            offset = operator.index(offset)
            if not 0 <= offset <= len(self.trace) - self.window_jobs:
                raise InvalidConfigError(
                    f"offset: a window of {self.window_jobs} jobs cannot start at job {offset} "
                    f"of a trace of {len(self.trace)}"
                )
        self.episode_offset = offset
        ep = self.config.episode
        idx, running, starts = np.arange(offset, offset + self.window_jobs), np.zeros(0, np.int64), None
        if self._warm is not None:
            idx, running, starts = self._warm.jobs(offset, self.window_jobs)
        w = episodes.episode_workload(self.trace, idx)
        self.workload = w
        # the episode's machine and aligned requests are the trace's: built once, not per episode
        sim = self._sim = EpisodeEngine(
            w, idx, self._trace_requests, self.machine, self._predictor, kill_at_estimate=ep.kill_at_estimate
        )
        if starts is not None and len(running):
            sim.warm_start(float(self.trace.submit[offset]), running, starts)
        counted = np.zeros(len(w), dtype=np.float64)
        counted[len(idx) - self.window_jobs :] = 1.0
        self._counted = counted
        runtime = w.runtime
        if ep.kill_at_estimate:
            runtime = np.minimum(runtime, w.estimate)
        runtime = runtime.view()
        runtime.flags.writeable = False
        view = sim.view
        self._outcome = Outcome(view, runtime, counted, self.window_jobs)
        jobs = EpisodeJobs(
            user=self._user_index[idx],
            n_users=len(self._users),
            runtime=runtime if self.config.observation.oracle else np.zeros(0),
        )
        for b in self._builders.values():
            b.reset(view, jobs)
        if self._easy:  # backfill="easy" is the only user of the backfiller
            self._backfiller.reset(view)
        if self._bf is not None:
            self._bf.reset(view)
        self._reward.reset(self._outcome)
        for d in self._dispatchers:
            d.reset(view)
        self._done = False
        self._placements = {}
        self.decision_count = 0
        self._metrics: dict[str, Any] | None = None
        self._advance()
        self._unplayed = self._done  # backfill mode: no choice in the whole window
        self._update_mask()
        info = self._info(False)
        obs = self._observe()
        if self._core is not None:
            self._core.load(0, self)
            self._fast = True
        return obs, info

    # ------------------------------------------------------------- steps
    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply one decision and move on (see the class docstring for the meanings).

        Returns:
            ``(observation, reward, terminated, truncated, info)``. ``info`` holds
            ``invalid_action``, ``reward_terms``, ``action_mask``, ``time``,
            ``queue_length`` and ``decision``; the final step also ``metrics``.
        """
        if self._sim is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._fast:
            return self._step_compiled(action)
        if self._done:  # stepping a finished episode changes nothing; "stop" ends one without a choice
            invalid = not self._unplayed or episodes.as_action(action) != self.window_size
            self._unplayed = False
        else:
            step = {"job": self._step_job, "policy": self._step_policy}.get(self.mode, self._step_backfill)
            invalid = step(episodes.as_action(action))
        if self._done and self._metrics is None:
            self._metrics = self._episode_metrics()
            self._outcome = dataclasses.replace(self._outcome, metrics=self._metrics)
        self._update_mask()
        cost = self._reward.cost(self._outcome)
        reward = -self._scale * cost - (self.config.scoring.invalid_penalty if invalid else 0.0)
        info = self._info(invalid)
        info["reward_terms"] = {self._reward.name: cost, "invalid": float(invalid)}
        if self._done:
            info["metrics"] = self._metrics
        return self._observe(), float(reward), self._done, False, info

    def _step_compiled(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """:meth:`step` in one compiled call (the same results as the Python path, tested)."""
        core = self._core
        assert core is not None
        core.actions[0] = episodes.as_action(action)
        core.step(core.actions, core.skip)
        invalid = bool(core.invalid[0])
        done = self._done = bool(core.final[0])
        ctl = core.ctl[0]
        self.decision_count = int(ctl[ek.C_DECISIONS])
        cost = float(core.cost[0])
        if done:
            if self._metrics is None:
                self._metrics = self._episode_metrics()  # schedule() brings the engine up to date
                self._outcome = dataclasses.replace(self._outcome, metrics=self._metrics)
            if core.reward_kind == NO_KERNEL:
                cost = self._reward.cost(self._outcome)
        reward = -self._scale * cost - (self.config.scoring.invalid_penalty if invalid else 0.0)
        info = {
            "invalid_action": invalid,
            "action_mask": self._mask.copy(),
            "time": float(core.fst[0, F_NOW]),
            "queue_length": int(ctl[ek.C_WAITING]),
            "decision": self.decision_count,
            "reward_terms": {self._reward.name: cost, "invalid": float(invalid)},
        }
        if done:
            info["metrics"] = self._metrics
        obs = {name: a.copy() for name, a in core.obs0}
        return obs, float(reward), done, False, info

    def _step_job(self, a: int) -> bool:
        """Apply a ``job``-mode action; True if it was invalid (the fallback was applied)."""
        sim = self._sim
        assert sim is not None
        view = sim.view
        k = self.window_size
        if 0 <= a < k:
            q = view.queue
            if a < len(q):
                j = int(q[a])
                if view.queue_fits[a]:
                    sim.start((j,), self._placements.pop(j, None))
                    self._after_start()
                    return False
                if self._easy:
                    reserve_and_backfill(sim, self._backfiller, j)
                    self._after_start()
                    return False
        elif a == k and sim.has_future_event():
            self._advance()
            return False
        self._fallback()
        return True

    def _step_policy(self, a: int) -> bool:
        """Let dispatcher ``a`` decide; True if the action or its decision was invalid."""
        sim = self._sim
        assert sim is not None
        invalid = not 0 <= a < len(self._dispatchers)
        jobs = self._dispatchers[a if not invalid else 0](sim.view)
        if len(jobs):
            try:
                sim.start(jobs)
            except InvalidDecisionError:
                invalid = True
        if not len(jobs) and not len(sim.view.running) and not sim.has_future_event():
            self._fallback()
            return True
        self._advance()
        return invalid

    def _step_backfill(self, a: int) -> bool:
        """Apply a ``backfill``-mode action; True if it was invalid (then: stop)."""
        bf = self._bf
        assert bf is not None and self._sim is not None
        started = 0 <= a < min(bf.eligible, self.window_size)
        if not (started and bf.start(self._sim, a)):  # none may backfill any more, stop, or invalid
            self._advance()
        return not started and a != self.window_size

    def _fallback(self) -> None:
        """Advance if an event is still to come, else start the oldest waiting job."""
        sim = self._sim
        assert sim is not None
        if sim.has_future_event():
            self._advance()
            return
        j = episodes.fallback_job(sim.view)
        if j is not None:  # idle machine: the oldest job fits
            sim.start((j,))
        self._after_start()

    def _after_start(self) -> None:
        sim = self._sim
        assert sim is not None
        if not sim.any_fits():
            self._advance()

    def _advance(self) -> None:
        sim = self._sim
        assert sim is not None
        self._placements.clear()  # placements hold for one instant's decision
        while sim.advance(self._every_event):
            self.decision_count += 1
            sim.decisions += 1
            if self._bf is None or self._bf.arrive(sim):  # backfill mode: only instants with a choice
                return
        self._done = True

    # -------------------------------------------------------- observing
    def _observe(self) -> dict[str, np.ndarray]:
        view = self._sim.view  # type: ignore[union-attr]
        if self._bf is not None:
            return self._bf.observe(self._builders, view)
        return {name: b.build(view) for name, b in self._builders.items()}

    def _update_mask(self) -> None:
        sim = self._sim
        assert sim is not None
        mask = self._mask
        if self.mode == "policy":
            mask[:] = True
        elif self._done:
            mask[:] = False
            mask[-1] = True  # a finished episode accepts anything; keep one action valid
        elif self._bf is not None:
            self._bf.mask(mask)
        else:
            _kernels.job_mask(mask, sim.view.queue_fits, self._easy, sim.has_future_event())

    def action_masks(self) -> np.ndarray:
        """Which actions are valid now (the method sb3-contrib's ``MaskablePPO`` calls)."""
        return self._mask.copy()

    def _info(self, invalid: bool) -> dict[str, Any]:
        sim = self._sim
        assert sim is not None
        return {
            "invalid_action": invalid,
            "action_mask": self._mask.copy(),
            "time": sim.now,
            "queue_length": sim.view.queue_length,
            "decision": self.decision_count,
        }

    # ------------------------------------------------------------ results
    def schedule(self) -> Schedule:
        """The episode's schedule so far, restricted to the window's jobs."""
        self._sync()
        sim = self._sim
        if sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._window(sim.schedule(policy="env"))

    def _window(self, s: Schedule) -> Schedule:
        """The engine's schedule ``s`` on the window's jobs (a warm start's context jobs come first)."""
        context = len(self.workload) - self.window_jobs
        return s.jobs_slice(context) if context else s

    def _episode_metrics(self, schedule: Schedule | None = None) -> dict[str, Any]:
        """The window's metrics (:func:`~hpcgym.sim.metrics.compute_metrics`), as ``simulate`` gives them.

        ``measured_set`` names the jobs averaged: ``all`` (every window job, the jobs the
        dense rewards add up; the default ``include_all=True``) or ``steady-state`` (004's
        warm-up/cool-down rule, ``simulate``'s default). The same window gives the same
        figures as ``simulate --offset i --jobs N`` (with ``--include-all`` for ``all``)
        unless ``warm_start`` is on: then the window's jobs share the machine with the
        jobs a full replay had running and waiting, so the schedule itself differs.
        ``schedule``: the engine's schedule if already made (the compiled rows' own).
        """
        s = self.schedule() if schedule is None else self._window(schedule)
        return compute_metrics(s, include_all=self.config.scoring.include_all)

    @property
    def view(self) -> SystemView:
        """The engine's read-only view of the current episode (reading it: see :attr:`sim`)."""
        sim = self.sim
        if sim is None:
            raise gym.error.ResetNeeded("call reset() first")
        return sim.view

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """The current state in the environment's ``render_mode``.

        ``"ansi"``: a one-line status. ``"rgb_array"``: a ``uint8`` picture of shape
        :data:`~hpcgym.env.rendering.FRAME_SHAPE` of the machine's processors and the
        first waiting jobs (see :mod:`hpcgym.env.rendering`). Without a render mode it
        warns and returns None, as Gymnasium's environments do; before :meth:`reset`
        it returns None.
        """
        if self.render_mode is None:
            gym.logger.warn(
                "render() was called without a render_mode; pass one at creation, e.g. "
                f"gymnasium.make({self.spec.id if self.spec else 'hpcgym/Dispatch-v1'!r}, "
                "render_mode='rgb_array')"
            )
            return None
        if self._sim is None:
            return None
        self._sync()
        v = self._sim.view
        if self.render_mode == "ansi":
            m = self.machine
            free = f"{v.free_procs}/{self.trace.procs}"
            if m.n_resources > 1:
                free = " ".join(
                    f"{r}:{int(f)}/{int(t)}"
                    for r, f, t in zip(m.resources, v.free_total, m.total, strict=True)
                )
            return (
                f"t={v.now:.0f}s decision={self.decision_count} queue={v.queue_length} "
                f"running={len(v.running)} free={free} "
                f"done={self._sim.n_done}/{len(self.workload)}"
            )
        n = len(self.workload)
        return render_frame(
            now=v.now,
            machine_procs=self.trace.procs,
            free_procs=v.free_procs,
            running=v.running,
            queue=v.queue,
            procs=v.procs,
            start=v.start,
            prediction=v.prediction,
            max_time_s=self.config.observation.max_time_s,
            done_fraction=self._sim.n_done / n,
            queue_fraction=v.queue_length / n,
        )


class DispatchEnvV0(DispatchEnv):
    """The ``v0`` environment: ``jobs``, ``histograms`` and ``system`` on every machine.

    ``hpcgym/Dispatch-v0`` and its siblings stay registered so agents trained on them
    keep working; on a machine of one resource type they are the same as ``v1``.
    """

    @staticmethod
    def default_observations(machine: Machine) -> tuple[str, ...]:
        """Always :data:`~hpcgym.env.observations.DEFAULT_OBSERVATIONS`, whatever the machine."""
        return DEFAULT_OBSERVATIONS


def _step_all_example() -> tuple[Any, ...]:
    """The compiled step's arguments (its arenas) of the default environment, after a reset."""
    env = DispatchEnv()
    env.reset(seed=0)
    assert env._core is not None
    return env._core.args


native.register(step_all, _step_all_example, part="env")
