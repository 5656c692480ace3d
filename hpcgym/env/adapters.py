"""Reference dispatchers as policies acting through the environment.

:class:`DispatcherPolicy` gives any dispatcher of :mod:`hpcgym.baselines` the
``predict(observation) -> (action, state)`` of a stable-baselines3 model, so heuristics
and agents share one evaluation loop. In ``job`` mode it starts, one step each, the
jobs the dispatcher would start at this decision point, then advances: the schedule is
exactly the one of the dispatcher run directly by the engine.

>>> from hpcgym.workloads import load_default
>>> w = load_default().window(300)
>>> via_env = run_via_env(w, "easy")
>>> from hpcgym.baselines import make_policy, preset_predictor
>>> from hpcgym.sim import Simulator
>>> direct = Simulator(w, predictor=preset_predictor("easy")).run(make_policy("easy"))
>>> bool((via_env.start == direct.start).all())
True
"""

from __future__ import annotations

import inspect
import time
from typing import Any

import gymnasium as gym
import numpy as np

from hpcgym.baselines import make_policy, preset_predictor, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env.dispatch import DispatchEnv
from hpcgym.sim import Decision, Dispatcher, Schedule, as_dispatcher
from hpcgym.workloads import Workload


class DispatcherPolicy:
    """A dispatcher acting through a :class:`DispatchEnv` in ``job`` mode.

    At every new decision point of the environment the dispatcher is called once on
    the engine's read-only view; :meth:`predict` then returns the window slot of each
    job it chose, one per step, and finally "advance" (if the environment has not
    already moved on because nothing else fits). Placements the dispatcher chose (a
    :class:`~hpcgym.sim.Decision` with nodes, as EASY on a machine of several nodes
    returns) are handed to :meth:`DispatchEnv.place`, so each job starts on the
    dispatcher's nodes, exactly as in a direct run.

    Args:
        dispatcher: the dispatcher, e.g. ``make_policy("easy")``.
        env: the environment it acts in (any wrapper of a :class:`DispatchEnv`).

    Raises:
        InvalidConfigError: the environment is not in ``job`` mode.
    """

    def __init__(self, dispatcher: Dispatcher, env: gym.Env[Any, Any]) -> None:
        self.dispatcher = d = as_dispatcher(dispatcher)
        self.name = d.name
        unwrapped = env.unwrapped
        if not isinstance(unwrapped, DispatchEnv) or unwrapped.mode != "job":
            raise InvalidConfigError("env: DispatcherPolicy acts through a DispatchEnv in mode='job'")
        self.env = unwrapped
        self._sim: object = None
        self._decision = -1
        self._pending: list[int] = []

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, None]:
        """The next action (the observation itself is not needed: the view is richer).

        Raises:
            InvalidConfigError: the chosen job is not among the K shown ones (make the
                environment with ``window_size=None``).
        """
        env = self.env
        if env.sim is not self._sim:  # a new episode
            self._sim = env.sim
            self._decision = -1
            assert env.sim is not None  # the environment has been reset
            env.sim.attach(self.dispatcher)  # reset, and the replay's log and wake-up times
        if env.decision_count != self._decision:
            self._decision = env.decision_count
            decision = self.dispatcher(env.view)
            self._pending = [int(j) for j in decision][::-1]
            if isinstance(decision, Decision) and decision.nodes is not None:
                # keep the dispatcher's placements (EASY on nodes reserves concrete nodes)
                jobs = np.asarray(decision.jobs, dtype=np.int64)
                nodes = np.asarray(decision.nodes, dtype=np.int64)
                ends = np.cumsum(env.view.chunks[jobs])
                for j, end, n in zip(
                    jobs.tolist(), ends.tolist(), env.view.chunks[jobs].tolist(), strict=True
                ):
                    env.place(j, nodes[end - n : end])
        if not self._pending:
            return np.int64(env.window_size), None  # type: ignore[return-value]
        j = self._pending.pop()
        slots = np.flatnonzero(env.view.queue[: env.window_size] == j)
        if not len(slots):
            raise InvalidConfigError(
                f"window_size: {self.name} chose job {j}, which is not among the {env.window_size} "
                "shown; make the environment with window_size=None"
            )
        return np.int64(slots[0]), None  # type: ignore[return-value]

    def next_shown(self) -> int | None:
        """The slot of the current decision's next job among the K shown, the ones before it
        that are not shown dropped; None when none of the decision's remaining jobs is shown.

        What a caller does when :meth:`predict` raised because the dispatcher's next job is
        beyond the window (:class:`~hpcgym.env.experts.Expert` counts such decisions).
        """
        env = self.env
        shown = env.view.queue[: env.window_size]
        while self._pending:  # the rest of its decision at this instant, in its order
            slots = np.flatnonzero(shown == self._pending.pop())
            if len(slots):
                return int(slots[0])
        return None

    def __call__(self, observation: Any) -> int:
        return int(self.predict(observation)[0])


def run_episode(
    env: gym.Env[Any, Any], policy: Any, *, seed: int | None = None, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Play one episode with anything that has ``predict`` and return the final info.

    Masks are passed to ``predict`` as ``action_masks=`` when the policy accepts them
    (``MaskablePPO``). The final info also holds ``steps`` (the episode's steps) and
    ``invalid_steps`` (how many of them the environment flagged ``invalid_action``).
    """
    obs, info = env.reset(seed=seed, options=options)
    try:
        masked = "action_masks" in inspect.signature(policy.predict).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        masked = False
    steps = invalid = 0
    while True:
        if masked:
            action, _ = policy.predict(
                obs, deterministic=True, action_masks=env.get_wrapper_attr("action_masks")()
            )
        else:
            action, _ = policy.predict(obs, deterministic=True)
        obs, _, terminated, truncated, info = env.step(action)
        steps += 1
        invalid += bool(info.get("invalid_action", False))
        if terminated or truncated:
            return {**info, "steps": steps, "invalid_steps": invalid}


def run_via_env(
    workload: Workload,
    policy: str,
    predictor: str | None = None,
    *,
    kill_at_estimate: bool = False,
    extra: str | None = None,
) -> Schedule:
    """Replay ``workload`` under the preset ``policy`` acting through the environment.

    The whole workload is one episode (the same jobs a direct run simulates), the
    environment plans with ``preset_predictor(policy, predictor)`` as the direct run
    does, and shows every waiting job so the dispatcher can pick any of them.

    Args:
        workload: the jobs, on their machine.
        policy: a preset name (``hpcgym policies``).
        predictor: a predictor name; by default the preset's own.
        kill_at_estimate: end jobs at their estimate.
        extra: how an EASY-family preset counts its extra processors (``"classic"`` or
            ``"all"``, :class:`~hpcgym.baselines.EasyBackfilling`); by default the
            preset's own rule. The dispatcher is the agent here, so its rule is applied
            exactly as in a direct run; the environment itself does no backfilling
            (``backfill="none"``).

    Returns:
        The schedule, with ``policy``, ``decisions`` and ``sim_seconds`` set as
        :meth:`hpcgym.sim.Simulator.run` sets them.

    Raises:
        InvalidConfigError: ``extra`` with a preset that is not EASY-family, or a rule
            other than ``"classic"`` and ``"all"``.
    """
    name = resolve_policy_name(policy)
    pred = preset_predictor(name, predictor)
    preset = make_policy(name)
    if extra is not None:
        from hpcgym.baselines import with_extra

        preset = with_extra(preset, name, extra)
    dispatcher = as_dispatcher(preset)
    env = DispatchEnv(
        trace=workload,
        window_jobs=None,
        split="all",
        window_size=None,
        observations=("system",),
        predictor_of=name,
        predictor=predictor,
        kill_at_estimate=kill_at_estimate,
        oracle=pred.needs_runtime,
        every_event=dispatcher.every_event,
    )
    agent = DispatcherPolicy(dispatcher, env)
    t0 = time.perf_counter()
    obs, _ = env.reset(options={"offset": 0})
    done = False
    while not done:
        action, _ = agent.predict(obs)
        obs, _, done, _, info = env.step(action)
        if info["invalid_action"]:
            raise InvalidConfigError(f"policy: {name} made an invalid decision through the environment")
    elapsed = time.perf_counter() - t0
    schedule = env.schedule()
    schedule.policy = name
    schedule.sim_seconds = elapsed
    schedule.extras.update(dispatcher.extras())
    return schedule
