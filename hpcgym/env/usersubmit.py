"""The user-side environment: mold and delay each arriving job, EASY underneath (003 IV, as a game)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hpcgym.baselines import UserHistory, make_policy, step_engine
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env.rendering import render_frame
from hpcgym.sim import Simulator, as_dispatcher
from hpcgym.workloads import Workload, load_default, read_swf

MAX_TIME_S = 7 * 86400.0
"""Time scale of the observation's log-scaled estimates."""


@dataclass(frozen=True)
class UserSubmitConfig:
    """Arguments of :class:`UserSubmitEnv` (each documented in its docstring).

    Raises:
        InvalidConfigError: a value out of range; the message names the argument.
    """

    trace: str | Path | Workload | None = None
    history: int = 2000
    jobs: int = 500
    sizes: int = 8
    delays: tuple[float, ...] = (0.0, 900.0, 3600.0, 4 * 3600.0)
    user: int | None = None

    def __post_init__(self) -> None:
        for name, low in (("history", 0), ("jobs", 1), ("sizes", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise InvalidConfigError(f"UserSubmit: {name} must be a whole number >= {low}, got {v!r}")
        d = tuple(self.delays)
        if not d or any(not (isinstance(x, (int, float)) and math.isfinite(x) and x >= 0) for x in d):
            raise InvalidConfigError(
                f"UserSubmit: delays must be seconds >= 0, at least one, got {self.delays!r}"
            )
        object.__setattr__(self, "delays", tuple(float(x) for x in d))


class UserSubmitEnv(gym.Env[np.ndarray, np.ndarray]):
    """Submit a user's jobs: pick each arriving job's request size and a delay; EASY schedules.

    ## Description

    The user's side of 003 (Hariharan et al., section IV): a resource manager between
    the users and the batch system picks, for each job as it arrives, a request size
    among the sizes its user has used before, and may hold it before submitting it.
    Here an agent is that manager. A window of ``history + jobs`` consecutive jobs of a
    trace (by default the bundled slice of SDSC-SP2 on 128 processors) is replayed on
    hpcgym's engine with EASY backfilling (the ``easy`` preset, wall-time estimates);
    the first ``history`` jobs run as logged, then each of the next ``jobs`` (those of
    user ``user`` only, if given) is one step. A molded job gets 003's estimate and a run
    time drawn by roulette wheel from its user's earlier jobs of that size
    (:class:`hpcgym.baselines.molding.UserHistory`), with the environment's seeded generator.

    ## Action Space

    ``MultiDiscrete([sizes, len(delays)])``: the index of a candidate size (0: the
    job's own, then the other sizes of its user's earlier jobs, ascending, at most
    ``sizes``) and of a delay. A size index without a candidate keeps the job's own size
    (flagged ``info["invalid_size"]``); :meth:`action_masks` marks the candidates that
    exist (sb3-contrib's MaskablePPO reads it). A held job is submitted at its arrival
    plus the delay, but never before the job before it: the hold queue keeps arrival order.

    ## Observation Space

    ``Box(0, 1, (5 + 3 * sizes,), float32)``:

    | index | value |
    |-------|-------|
    | 0 | the job's size / machine size |
    | 1 | log1p(its estimate) / log1p(7 days) |
    | 2 | free processors / machine size |
    | 3 | log1p(jobs waiting) / log1p(1000), at most 1 |
    | 4 | time until the hold queue's last release / the longest delay (0: none), at most 1 |
    | 5 + 3k | candidate k: 1 if it exists |
    | 6 + 3k | candidate k's size / machine size |
    | 7 + 3k | log1p(candidate k's molded estimate) / log1p(7 days) |

    ## Rewards

    Minus the response times (wait from the arrival, hold included, plus run time; in
    hours) of the managed jobs that ended since the previous step: a job's response is
    known only when it ends, so the return of an episode is minus the sum of its
    managed jobs' responses. ``info["ended"]`` lists those jobs.

    ## Episode End

    ``terminated`` after the last managed job's decision, once every job has ended (the
    last step carries the remaining responses). No truncation.

    ## Arguments

    ``trace`` (an SWF path or a :class:`~hpcgym.workloads.Workload`; None: the bundled
    slice), ``history`` (2000), ``jobs`` (500), ``sizes`` (8), ``delays`` (seconds;
    0, 15 min, 1 h, 4 h), ``user`` (None: every job). Each reset draws the window's
    first job uniformly with the environment's generator; with ``user``, it draws one of
    the user's jobs uniformly and a window in which that job is managed.

    ## Rendering

    ``render_mode="ansi"``: :meth:`render` returns a one-line status (time, step, the
    job, its size and candidate sizes, queue length, running jobs, free processors, jobs
    molded and held so far). ``render_mode="rgb_array"``: the dispatch environment's
    picture of the machine and the queue (:mod:`hpcgym.env.rendering`), so that
    stable-baselines3's ``make_vec_env``, which asks for it, works with this id too.

    ## Version History

    * v0: first version; ``render_mode="ansi"`` and ``"rgb_array"`` added later (no
      change to dynamics, observations or rewards).

    >>> import gymnasium as gym, hpcgym
    >>> env = gym.make("hpcgym/UserSubmit-v0", history=300, jobs=20)
    >>> obs, info = env.reset(seed=0)
    >>> env.action_space
    MultiDiscrete([8 4])
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 - Gymnasium's convention

    def __init__(
        self, config: UserSubmitConfig | None = None, *, render_mode: str | None = None, **kwargs: Any
    ) -> None:
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise InvalidConfigError(
                f"UserSubmit: render_mode must be None or one of {', '.join(map(repr, modes))}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        if config is not None and kwargs:
            raise InvalidConfigError("UserSubmit: pass a UserSubmitConfig or keyword arguments, not both")
        try:
            self.config = config if config is not None else UserSubmitConfig(**kwargs)
        except TypeError as err:
            raise InvalidConfigError(f"UserSubmit: {err}") from err
        cfg = self.config
        t = cfg.trace
        self.trace = load_default() if t is None else t if isinstance(t, Workload) else read_swf(t)
        if len(self.trace) < cfg.history + cfg.jobs:
            raise InvalidConfigError(
                f"UserSubmit: history + jobs = {cfg.history + cfg.jobs:,} but the trace {self.trace.name!r} "
                f"has {len(self.trace):,} jobs"
            )
        self.user_jobs = np.zeros(0, np.int64)
        if cfg.user is not None:
            self.user_jobs = np.flatnonzero(np.asarray(self.trace.user) == cfg.user)
            self.user_jobs = self.user_jobs[self.user_jobs >= cfg.history]
            if not len(self.user_jobs):
                raise InvalidConfigError(
                    f"UserSubmit: user {cfg.user} submits no job after the first history={cfg.history} "
                    f"jobs of {self.trace.name!r}"
                )
        k = cfg.sizes
        self.action_space = spaces.MultiDiscrete([k, len(cfg.delays)])
        self.obs_size = 5 + 3 * k
        self.observation_space = spaces.Box(0.0, 1.0, (self.obs_size,), np.float32)
        self._inv_t = 1.0 / math.log1p(MAX_TIME_S)

    # ---------------------------------------------------------------- episode
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        cfg = self.config
        n = cfg.history + cfg.jobs
        last = len(self.trace) - n
        if cfg.user is None:
            offset = int(self.np_random.integers(0, last + 1))
        else:  # a window in which one of the user's jobs (drawn uniformly) is managed
            job = int(self.np_random.choice(self.user_jobs))
            offset = min(max(job - cfg.history - int(self.np_random.integers(0, cfg.jobs)), 0), last)
        w = self.trace.window(n, offset)
        self.w = w
        self.submit = np.asarray(w.submit, np.float64)
        self.sim = Simulator(w)
        self.dispatcher = as_dispatcher(make_policy("easy"))
        self.sim.attach(self.dispatcher)
        self.users = UserHistory(w)
        managed = np.arange(cfg.history, n)
        if cfg.user is not None:
            managed = managed[np.asarray(w.user)[managed] == cfg.user]
        self.managed = managed
        self.is_managed = np.zeros(n, bool)
        self.is_managed[managed] = True
        self.step_index = 0
        self.last_release = -np.inf
        self.ended_seen = 0
        self.molded = 0
        self.held = 0
        self._go_to(int(self.managed[0]))
        return self._observation(), {"job": int(self.managed[0]), "offset": offset}

    def _go_to(self, job: int) -> None:
        step_engine(self.sim, self.dispatcher, float(self.submit[job]))
        self.users.see_until(job)
        self.candidates = self.users.candidates(job)[: self.config.sizes]
        self.job = job

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        cfg = self.config
        a = np.asarray(action, dtype=np.int64).reshape(-1)
        if a.shape != (2,) or not self.action_space.contains(a):
            raise InvalidConfigError(f"UserSubmit: action must be in {self.action_space}, got {action!r}")
        j = self.job
        own = int(self.w.procs_req[j])
        invalid = int(a[0]) >= len(self.candidates)
        size = own if invalid else self.candidates[int(a[0])]
        sim = self.sim
        if size != own:
            runtime, donor = self.users.draw(j, size, self.np_random)
            sim.amend(j, runtime=runtime, estimate=self.users.estimate(j, size), like=donor)
            self.molded += 1
        t = float(self.submit[j])
        release = max(t + cfg.delays[int(a[1])], self.last_release)
        if release > t:
            sim.amend(j, submit=release)
            self.held += 1
        self.last_release = release
        self.step_index += 1
        done = self.step_index >= len(self.managed)
        if done:
            step_engine(sim, self.dispatcher)
        else:
            self._go_to(int(self.managed[self.step_index]))
        ended = [e for e in sim.view.ended[self.ended_seen :] if self.is_managed[e]]
        self.ended_seen = len(sim.view.ended)
        response = sum(float(sim.end_time[e] - self.submit[e]) for e in ended)
        info: dict[str, Any] = {
            "job": j,
            "size": size,
            "submit": release,
            "invalid_size": invalid,
            "ended": ended,
            "molded": self.molded,
            "held": self.held,
        }
        obs = self._observation() if not done else np.zeros(self.obs_size, np.float32)
        return obs, -response / 3600.0, done, False, info

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        """A one-line status (``"ansi"``) or a ``uint8`` picture (``"rgb_array"``, of shape
        :data:`~hpcgym.env.rendering.FRAME_SHAPE`); None before :meth:`reset` or without a mode."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() was called without a render_mode; pass one at creation, e.g. "
                "gymnasium.make('hpcgym/UserSubmit-v0', render_mode='ansi')"
            )
            return None
        if getattr(self, "sim", None) is None:
            return None
        v, total = self.sim.view, int(self.sim.machine.total[0])
        if self.render_mode == "rgb_array":
            n = len(self.w)
            return render_frame(
                now=v.now,
                machine_procs=total,
                free_procs=int(v.free_total[0]),
                running=v.running,
                queue=v.queue,
                procs=v.procs,
                start=v.start,
                prediction=v.prediction,
                max_time_s=7 * 86400.0,
                done_fraction=self.sim.n_done / n,
                queue_fraction=v.queue_length / n,
            )
        return (
            f"t={v.now:.0f}s step={self.step_index}/{len(self.managed)} job={self.job} "
            f"size={int(self.w.procs_req[self.job])} candidates={list(self.candidates)} "
            f"queue={v.queue_length} running={len(v.running)} free={int(v.free_total[0])}/{total} "
            f"molded={self.molded} held={self.held}"
        )

    def action_masks(self) -> np.ndarray:
        """Valid choices of each action part, concatenated (sizes, then delays), as MaskablePPO reads them.

        A size index is valid when the job has that candidate (index 0, its own size,
        always); every delay is valid.
        """
        sizes = np.zeros(self.config.sizes, bool)
        sizes[: max(1, len(self.candidates))] = True
        return np.concatenate([sizes, np.ones(len(self.config.delays), bool)])

    # ---------------------------------------------------------------- observation
    def _observation(self) -> np.ndarray:
        cfg = self.config
        j, w, sim = self.job, self.w, self.sim
        procs = float(w.procs)
        out = np.zeros(self.obs_size, np.float32)
        out[0] = w.procs_req[j] / procs
        out[1] = math.log1p(float(w.estimate[j])) * self._inv_t
        out[2] = float(sim.view.free_total[0]) / float(sim.machine.total[0])
        out[3] = math.log1p(sim.view.queue_length) / math.log1p(1000.0)
        longest = max(cfg.delays)
        ahead = self.last_release - float(self.submit[j])
        out[4] = ahead / longest if longest > 0 and ahead > 0 else 0.0
        for k, s in enumerate(self.candidates):
            out[5 + 3 * k] = 1.0
            out[6 + 3 * k] = s / procs
            out[7 + 3 * k] = math.log1p(self.users.estimate(j, s)) * self._inv_t
        return np.clip(out, 0.0, 1.0)
