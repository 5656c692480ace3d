"""Playing one window: a dispatcher simulated directly by the engine, an agent through the env.

Both build the window's episode from the same functions (:mod:`hpcgym.env.episodes`),
so a dispatcher and an agent that decide alike give the same schedule;
:func:`_window_metrics` measures every job of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError
from hpcgym.env import episodes
from hpcgym.experiments.evaluate.policies import Candidate
from hpcgym.sim import Schedule, Simulator, as_dispatcher, bounded_slowdown, compute_metrics
from hpcgym.workloads import Workload


def _window_metrics(s: Schedule) -> dict[str, float]:
    m = compute_metrics(s, include_all=True)
    bsld = bounded_slowdown(s.wait, s.runtime)
    return {
        "jobs": int(m["jobs_measured"]),
        "mean_bsld": float(m["mean_bsld"]),
        "median_bsld": float(np.median(bsld)),
        "mean_wait_s": float(m["mean_wait_s"]),
        "utilization": float(m["utilization"]),
    }


def _run_dispatcher(
    c: Candidate, trace: Workload, offset: int, window_jobs: int, warm: episodes.WarmStart | None
) -> Schedule:
    """One window simulated directly, from the same episode the env builds (see DispatchEnv.reset)."""
    idx, running, starts = np.arange(offset, offset + window_jobs), np.zeros(0, np.int64), None
    if warm is not None:
        idx, running, starts = warm.jobs(offset, window_jobs)
    w = episodes.episode_workload(trace, idx)
    assert c.make is not None and c.predictor is not None
    sim = Simulator(w, predictor=c.predictor())
    if starts is not None and len(running):
        sim.warm_start(float(trace.submit[offset]), running, starts)
    d = as_dispatcher(c.make())
    d.reset(sim.view)
    every_event = bool(d.every_event)
    view = sim.view
    while sim.advance(every_event):
        sim.decisions += 1
        decision = d(view)
        if len(decision):
            sim.start(decision)
        elif not len(view.running) and not sim.has_future_event():
            raise InvalidDecisionError(
                f"dispatcher {c.name!r} started nothing at t={sim.now:g} with {view.queue_length} jobs "
                "waiting, an idle machine and no event left"
            )
    s = sim.schedule(policy=c.name)
    return s if len(w) == window_jobs else s.jobs_slice(len(w) - window_jobs)


class _AgentEnv:
    """The environment an agent plays the windows in, built once per agent."""

    def __init__(
        self,
        agent: Any,
        trace: Workload,
        window_jobs: int,
        job_range: tuple[int, int],
        warm_start: bool,
        warm_policy: str,
        predictor: str | None,
        env_kwargs: Mapping[str, Any],
    ) -> None:
        from gymnasium import spaces

        from hpcgym.env import DispatchEnv, FlattenDispatchObservation

        env: Any = DispatchEnv(
            trace=trace,
            window_jobs=window_jobs,
            job_range=job_range,
            warm_start=warm_start,
            warm_policy=warm_policy,
            predictor=predictor,
            **dict(env_kwargs),
        )
        space = getattr(agent, "observation_space", None)
        if isinstance(space, spaces.Box) and not isinstance(env.observation_space, spaces.Box):
            env = FlattenDispatchObservation(env)
        if space is not None and space != env.observation_space:
            raise InvalidConfigError(
                f"model: its observation space {space} is not the environment's {env.observation_space}; "
                "give the environment arguments it was trained with (e.g. --window-size, --backfill)"
            )
        self.env = env
        try:
            import inspect

            self.masked = "action_masks" in inspect.signature(agent.predict).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            self.masked = False
        self.agent = agent

    def policies(self) -> tuple[str, ...]:
        """The dispatchers a ``policy``-mode agent picks among (empty in ``job`` mode)."""
        u = self.env.unwrapped
        return tuple(u.config.action.policies) if u.mode == "policy" else ()

    def play(self, offset: int) -> tuple[Schedule, int, int, dict[str, int]]:
        """The window's schedule, steps, invalid steps and, in policy mode, each dispatcher's picks."""
        env = self.env
        obs, _ = env.reset(options={"offset": offset})
        steps = invalid = 0
        names = self.policies()
        picks = np.zeros(len(names), dtype=np.int64)
        while True:
            if self.masked:
                action, _ = self.agent.predict(
                    obs, deterministic=True, action_masks=env.get_wrapper_attr("action_masks")()
                )
            else:
                action, _ = self.agent.predict(obs, deterministic=True)
            if names and 0 <= (a := int(np.asarray(action).reshape(-1)[0])) < len(names):
                picks[a] += 1
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            invalid += bool(info["invalid_action"])
            if terminated or truncated:
                return env.unwrapped.schedule(), steps, invalid, dict(zip(names, picks.tolist(), strict=True))
