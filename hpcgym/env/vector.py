"""The native vector environment: N episodes of the dispatch environment stepped per call."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import hpcgym.env._vector_kernels as vk
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env._compiled import CompiledEpisodes, compiled_obstacle
from hpcgym.env.config import DispatchConfig, make_config
from hpcgym.env.dispatch import DispatchEnv, DispatchEnvV0
from hpcgym.sim import _kernels as ek

__all__ = ["DispatchVectorEnv", "DispatchVectorEnvV0", "compiled_obstacle"]


class DispatchVectorEnv(VectorEnv):
    """``num_envs`` episodes of :class:`~hpcgym.env.DispatchEnv`, stepped together in one compiled call.

    ``gym.make_vec("hpcgym/Dispatch-v1", num_envs=N, vectorization_mode="vector_entry_point",
    **kwargs)`` makes one (``kwargs`` are the environment's arguments, plus this class's
    ``autoreset_mode``, ``copy`` and ``compiled``). Each episode is exactly the episode
    the single environment gives for the same seed (or offset) and actions: the same
    windows, schedule, observations, masks, rewards and infos, and the same automatic
    resets as Gymnasium's ``SyncVectorEnv`` of single environments (``tests/env/test_vector.py``
    compares the two step by step).

    ## How it steps

    In ``job`` mode without backfill, with a predictor whose predictions are fixed at
    reset (the default wall-time, or the oracle), and the built-in observation parts
    and rewards, one numba call per :meth:`step` applies the N actions, advances each
    engine to its next decision point and writes the observations, masks and reward
    costs into preallocated ``(N, ...)`` arrays (:mod:`hpcgym.env._vector_kernels`).
    Episode ends (metrics) and resets run in Python, once per episode. Any other
    configuration -- ``mode="policy"``, ``backfill="easy"``, ``every_event``, a
    predictor that learns online, the ``predicted_wait`` part, a user's observation
    builder or reward term -- is stepped through each single environment's Python
    ``step`` inside this same class (as fast as ``SyncVectorEnv``, no faster).
    :attr:`compiled` says which path runs; ``compiled=True`` demands the compiled one
    and raises :class:`~hpcgym.common.errors.InvalidConfigError` naming the parameter
    that prevents it; ``compiled=False`` forces the Python path.

    ## Spaces

    ``single_observation_space`` and ``single_action_space`` are the single
    environment's; ``observation_space`` is the batched ``Dict`` (each part ``(N, ...)``),
    ``action_space`` a ``MultiDiscrete`` of N ``K + 1`` choices. :meth:`action_masks`
    returns the ``(N, K + 1)`` mask (for sb3-contrib's ``MaskablePPO``).

    ## Resets

    ``metadata["autoreset_mode"]``: ``NEXT_STEP`` by default, as Gymnasium 1.x
    specifies: the step that ends an episode returns its last observation with
    ``terminated``; the next step ignores that episode's action, resets it and returns
    its first observation with reward 0 and the reset's info. ``SAME_STEP`` resets at
    once and puts the last observation and info in ``info["final_obs"]`` and
    ``info["final_info"]``; ``DISABLED`` leaves resets to the caller
    (``reset(options={"reset_mask": ...})``). ``reset(seed=s)`` seeds episode ``i``
    with ``s + i``; a list gives one seed each.

    ## Infos

    The single environment's keys as Gymnasium vector infos (an array per key and a
    ``_key`` mask): ``invalid_action``, ``action_mask``, ``time``, ``queue_length``,
    ``decision``, ``reward_terms`` and, on an episode's last step, ``metrics``.

    Args:
        num_envs: N, the number of episodes.
        config: a whole :class:`~hpcgym.env.config.DispatchConfig` (or pass its fields
            as keyword arguments, as to ``gymnasium.make``).
        autoreset_mode: ``"NextStep"`` (default), ``"SameStep"`` or ``"Disabled"`` (or
            an :class:`~gymnasium.vector.AutoresetMode`).
        copy: return copies of the observation arrays (default) rather than the arrays
            the next step overwrites.
        compiled: None (compiled when the configuration allows), True (required) or
            False (the Python path).
        render_mode: the single environment's; :meth:`render` returns one frame per episode.

    >>> import gymnasium as gym
    >>> import hpcgym
    >>> envs = gym.make_vec("hpcgym/Dispatch-v1", num_envs=4, vectorization_mode="vector_entry_point",
    ...                     window_jobs=64, window_size=16)
    >>> obs, info = envs.reset(seed=0)
    >>> obs["jobs"].shape, envs.action_space, envs.unwrapped.compiled
    ((4, 16, 11), MultiDiscrete([17 17 17 17]), True)
    >>> masks = envs.unwrapped.action_masks()
    >>> obs, rewards, terminated, truncated, info = envs.step(masks.argmax(axis=1))
    >>> rewards.shape, bool(info["invalid_action"].any())
    ((4,), False)
    """

    metadata = {  # noqa: RUF012 - Gymnasium's convention
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    env_class: type[DispatchEnv] = DispatchEnv

    def __init__(
        self,
        num_envs: int = 1,
        config: DispatchConfig | None = None,
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        compiled: bool | None = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        ok = isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) and num_envs >= 1
        if not ok:
            raise InvalidConfigError(f"num_envs: must be an integer >= 1, got {num_envs!r}")
        try:
            mode = (
                autoreset_mode if isinstance(autoreset_mode, AutoresetMode) else AutoresetMode(autoreset_mode)
            )
        except ValueError as err:
            allowed = ", ".join(repr(m.value) for m in AutoresetMode)
            raise InvalidConfigError(
                f"autoreset_mode: must be one of {allowed}, got {autoreset_mode!r}"
            ) from err
        if compiled not in (None, True, False):
            raise InvalidConfigError(f"compiled: must be None, True or False, got {compiled!r}")
        cfg = make_config(config, **kwargs)
        self.num_envs = n = int(num_envs)
        self.envs = [self.env_class(cfg, render_mode=render_mode, compiled=False) for _ in range(n)]
        first = self.envs[0]
        self.config = cfg
        self.render_mode = render_mode
        self.autoreset_mode = mode
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.copy = bool(copy)
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        obstacle = compiled_obstacle(first)
        if compiled and obstacle is not None:
            raise InvalidConfigError(f"compiled=True, but {obstacle}")
        self.compiled = obstacle is None and compiled is not False
        """Whether :meth:`step` runs the compiled kernel (else each single environment's ``step``)."""
        self.window_size = first.window_size
        self._obs = {
            name: np.zeros((n, *space.shape), dtype=space.dtype)
            for name, space in first.observation_space.spaces.items()  # type: ignore[attr-defined]
        }
        self._mask = np.zeros((n, int(first.action_space.n)), dtype=np.bool_)  # type: ignore[attr-defined]
        self._rewards = np.zeros(n)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._autoreset = np.zeros(n, dtype=bool)
        self._pending = False  # whether _autoreset has an episode (asked at every compiled step)
        self._same_step = mode == AutoresetMode.SAME_STEP
        self._none = np.zeros(n, dtype=bool)  # constants: no episode, every episode (never written)
        self._all = np.ones(n, dtype=bool)
        self._ones = np.ones((8, n), dtype=bool)  # copied for the infos' masks (never written)
        rc = cfg.scoring
        reward = first._reward
        self._reward_name = reward.name
        scale = rc.reward_scale
        self._scale = float(
            scale if scale is not None else (1.0 / first.window_jobs if reward.per_job else 1.0)
        )
        self._penalty = float(rc.invalid_penalty)
        self._was_reset = False
        if self.compiled:
            core = self._core = CompiledEpisodes(n, first)
            self._obs, self._mask = core.obs, core.mask

    def sync(self, i: int) -> DispatchEnv:
        """Episode ``i``'s single environment, brought up to date with the compiled rows.

        Its :meth:`~hpcgym.env.DispatchEnv.schedule`, ``view`` and
        :meth:`~hpcgym.env.DispatchEnv.render` then show the episode as it is now. On the
        Python path the environment is always up to date. Do not step it yourself: the
        vector environment steps it.
        """
        i = operator.index(i)
        env = self.envs[i]
        if self.compiled and env._sim is not None and self._was_reset:
            self._core.sync(i, env)
        return env

    # ----------------------------------------------------------------- resets
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset every episode (or those of ``options["reset_mask"]``).

        Args:
            seed: None, an int (episode ``i`` gets ``seed + i``) or one seed per episode.
            options: the single environment's reset options (``{"offset": i}``) for every
                episode reset, plus ``reset_mask``: a bool array of shape ``(N,)``, the
                episodes to reset.

        Returns:
            The batched observation and the vector info of the resets.
        """
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise InvalidConfigError(
                    f"seed: a list of seeds must have num_envs={n} entries, got {len(seeds)}"
                )
        options = dict(options) if options is not None else None
        which = np.ones(n, dtype=bool)
        if options is not None and "reset_mask" in options:
            which = np.asarray(options.pop("reset_mask"))
            if which.shape != (n,) or which.dtype != np.bool_ or not which.any():
                raise InvalidConfigError(
                    f"reset_mask: must be a bool array of shape ({n},) with at least one True, got {which!r}"
                )
        infos: dict[str, Any] = {}
        for i in np.flatnonzero(which).tolist():
            infos = self._reset_one(i, infos, seed=seeds[i], options=options)
            self._terminated[i] = self._truncated[i] = self._autoreset[i] = False
        self._pending = bool(self._autoreset.any())
        self._was_reset = True
        return self._observation(), infos

    def _reset_one(self, i: int, infos: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, info = self.envs[i].reset(**kwargs)
        self._set_obs(i, obs)
        self._mask[i] = self.envs[i]._mask
        if self.compiled:
            self._core.load(i, self.envs[i])
        return self._add_info(infos, info, i)

    def _set_obs(self, i: int, obs: dict[str, np.ndarray]) -> None:
        for name, a in self._obs.items():
            a[i] = obs[name]

    def _row(self, i: int) -> dict[str, np.ndarray]:
        return {name: a[i].copy() for name, a in self._obs.items()}

    def _observation(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {name: a.copy() for name, a in self._obs.items()}
        return dict(self._obs)

    # ------------------------------------------------------------------ steps
    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per episode (see :class:`~hpcgym.env.DispatchEnv` for their meaning).

        Args:
            actions: N integers (an array of shape ``(N,)``); anything that is not an
                integer is an invalid action, as in the single environment.

        Returns:
            ``(observations, rewards, terminated, truncated, infos)``, batched.
        """
        if not self._was_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        acts = self._actions(actions)
        if self.compiled:
            return self._step_compiled(acts)
        return self._step_python(acts)

    def _actions(self, actions: Any) -> np.ndarray:
        if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (self.num_envs,):
            return actions  # the usual case, read as it is (the kernel copies it)
        a = np.asarray(actions)
        if a.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise InvalidConfigError(
                f"actions: expected {self.num_envs} actions (shape ({self.num_envs},)), got shape {a.shape}"
            )
        a = a.reshape(-1)
        if not np.issubdtype(a.dtype, np.integer):
            return np.full(self.num_envs, -1, dtype=np.int64)  # the single environment's reading
        return a.astype(np.int64)

    def _pending_resets(self, infos: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        """NEXT_STEP: reset the episodes that ended at the last step (their actions are ignored)."""
        skip = np.zeros(self.num_envs, dtype=bool)
        if not self._autoreset.any():
            return skip, infos
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            skip = self._autoreset.copy()
            for i in np.flatnonzero(skip).tolist():
                infos = self._reset_one(i, infos)
        elif self.autoreset_mode == AutoresetMode.DISABLED and self._autoreset.any():
            i = int(np.flatnonzero(self._autoreset)[0])
            raise gym.error.ResetNeeded(
                f"episode {i} has ended; with autoreset_mode=Disabled reset it with "
                "reset(options={'reset_mask': ...})"
            )
        return skip, infos

    def _step_python(self, acts: np.ndarray) -> tuple:  # type: ignore[type-arg]
        infos: dict[str, Any] = {}
        skip, infos = self._pending_resets(infos)
        for i, env in enumerate(self.envs):
            if skip[i]:
                self._rewards[i] = 0.0
                self._terminated[i] = False
                continue
            obs, reward, terminated, _, info = env.step(acts[i])
            self._rewards[i] = reward
            self._terminated[i] = terminated
            self._set_obs(i, obs)
            self._mask[i] = env._mask
            if terminated and self.autoreset_mode == AutoresetMode.SAME_STEP:
                infos = self._add_info(infos, {"final_obs": obs, "final_info": info}, i)
                infos = self._reset_one(i, infos)
            else:
                infos = self._add_info(infos, info, i)
        self._autoreset = self._terminated.copy()
        return (
            self._observation(),
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
            infos,
        )

    def _step_compiled(self, acts: np.ndarray) -> tuple:  # type: ignore[type-arg]
        core = self._core
        if self._pending:  # an episode ended at the last step (NEXT_STEP resets it now)
            skip, _ = self._pending_resets({})
            stepped = ~skip
            core.step(acts, skip)
            invalid = core.invalid & stepped
            final = core.final & stepped
        else:  # the usual step: every episode moves (the masks below are then all true)
            skip, stepped = self._none, self._all
            core.step(acts, skip)
            invalid = core.invalid.copy()
            final = core.final.copy()
        ended = bool(final.any())
        metrics = {i: self._finish(i) for i in np.flatnonzero(final).tolist()} if ended else {}
        rewards = -self._scale * core.cost
        if self._penalty:  # x - 0.0 is x, bit for bit: no need to subtract a zero penalty
            rewards -= np.where(invalid, self._penalty, 0.0)
        if skip is not self._none:
            rewards[skip] = 0.0
        same = self._same_step
        # the reset episodes' infos are their resets' (the rows now hold the reset state); with
        # SAME_STEP an ended episode's step info goes to final_info and its reset's shows instead
        if same and metrics:
            infos = self._vector_info(stepped & ~final, invalid & ~final)
        else:
            infos = self._vector_info(stepped, invalid)
        for i, m in metrics.items():
            if same:
                step_info = self._single_info(i, bool(invalid[i]))
                step_info["metrics"] = m
                infos = self._add_info(infos, {"final_obs": self._row(i), "final_info": step_info}, i)
                infos = self._reset_one(i, infos)
            else:
                infos = self._add_info(infos, {"metrics": m}, i)
        self._rewards[:] = rewards
        self._terminated[:] = final
        self._autoreset = final
        self._pending = ended and not same
        return self._observation(), rewards, final.copy(), self._truncated.copy(), infos

    def _finish(self, i: int) -> dict[str, Any]:
        """Episode ``i`` ended at this step: its metrics (and the sparse reward's cost).

        From the row's schedule: the single environment is brought up to date only when
        asked (:meth:`sync`), as at any other step.
        """
        env = self.envs[i]
        m = env._episode_metrics(self._core.schedule(i, env))
        env._metrics = m
        if self._core.reward_kind == vk.NO_KERNEL:
            self._core.cost[i] = float(m["mean_bsld"])
        return m

    def _vector_info(self, stepped: np.ndarray, invalid: np.ndarray) -> dict[str, Any]:
        core = self._core
        every = stepped is self._all
        # the "_key" masks of every episode: rows of one fresh array (each key its own row)
        ones = self._ones.copy()  # a copy of a kept array: np.ones is a Python function
        info: dict[str, Any] = {
            "invalid_action": invalid, "_invalid_action": ones[0],
            "action_mask": self._mask.copy(), "_action_mask": ones[1],
            "time": core.fst[:, vk.F_NOW].copy(), "_time": ones[2],
            "queue_length": core.ctl[:, ek.C_WAITING].copy(), "_queue_length": ones[3],
            "decision": core.ctl[:, ek.C_DECISIONS].copy(), "_decision": ones[4],
        }  # fmt: skip
        name = self._reward_name
        if every:
            info["reward_terms"] = {
                name: core.cost.copy(),
                "_" + name: ones[5],
                "invalid": invalid.astype(np.float64),
                "_invalid": ones[6],
            }
            info["_reward_terms"] = ones[7]
        elif stepped.any():
            info["reward_terms"] = {
                name: np.where(stepped, core.cost, 0.0),
                "_" + name: stepped.copy(),
                "invalid": np.where(stepped, invalid.astype(np.float64), 0.0),
                "_invalid": stepped.copy(),
            }
            info["_reward_terms"] = stepped.copy()
        return info

    def _single_info(self, i: int, invalid: bool) -> dict[str, Any]:
        """Episode ``i``'s info of this step as the single environment gives it."""
        return {
            "invalid_action": bool(invalid),
            "action_mask": self._mask[i].copy(),
            "time": float(self._core.fst[i, vk.F_NOW]),
            "queue_length": int(self._core.ctl[i, ek.C_WAITING]),
            "decision": int(self._core.ctl[i, ek.C_DECISIONS]),
            "reward_terms": {self._reward_name: float(self._core.cost[i]), "invalid": float(invalid)},
        }

    # ----------------------------------------------------------------- others
    def action_masks(self) -> np.ndarray:
        """The ``(N, K + 1)`` valid actions of each episode (what ``MaskablePPO`` calls)."""
        return self._mask.copy()

    def render(self) -> tuple[Any, ...] | None:
        """One frame per episode, in the single environment's ``render_mode``."""
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode; pass one at creation")
            return None
        return tuple(self.sync(i).render() for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()


class DispatchVectorEnvV0(DispatchVectorEnv):
    """The vector environment of the ``v0`` ids (:class:`~hpcgym.env.DispatchEnvV0` episodes)."""

    env_class = DispatchEnvV0
