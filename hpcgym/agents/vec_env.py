"""stable-baselines3's ``VecEnv`` over the native vector environment (``DispatchVectorEnv``).

:class:`NativeVecEnv` gives a training script what ``make_vec_env`` of single
environments gives it -- ``DummyVecEnv`` or ``SubprocVecEnv`` of
``Monitor(FlattenDispatchObservation(env))`` -- with N episodes stepped in one compiled
call in this process: flattened observations (the same concatenation as
:class:`~hpcgym.env.FlattenDispatchObservation`), ``reset()`` returning the observations
only, ``step`` returning ``(obs, rewards, dones, infos)`` with one info dict per
episode (the single environment's keys, and at an episode's end its ``metrics``,
``terminal_observation``, ``TimeLimit.truncated`` and ``Monitor``'s ``episode``), and
the masks ``MaskablePPO`` asks for through ``env_method("action_masks")``. Episode ``i``
is the episode single environment ``i`` would play with the same seed and actions, so
a training run gives the same model with either (``tests/agents/test_vec_env.py``).

>>> venv = NativeVecEnv("hpcgym/Dispatch-v1", 2, {"window_jobs": 32, "window_size": 8})
>>> venv.seed(0)
[0, 1]
>>> obs = venv.reset()
>>> obs.shape, venv.env_method("action_masks")[0].shape
((2, 194), (9,))
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from hpcgym.env.vector import DispatchVectorEnv


class NativeVecEnv(VecEnv):
    """``n_envs`` episodes of ``env_id`` in one native vector environment, as an SB3 ``VecEnv``.

    Args:
        env_id: a registered id with a native vector environment (``hpcgym/Dispatch-v1`` ...),
            optionally with Gymnasium's ``module:`` prefix.
        n_envs: the number of episodes stepped together.
        env_kwargs: the environment's arguments.
        flatten: flatten the Dict observation into one ``Box`` (as
            :class:`~hpcgym.env.FlattenDispatchObservation`); False keeps the Dict.
    """

    def __init__(
        self, env_id: str, n_envs: int, env_kwargs: dict[str, Any] | None = None, *, flatten: bool = True
    ) -> None:
        envs = gym.make_vec(
            env_id,
            num_envs=n_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=AutoresetMode.SAME_STEP,
            **(env_kwargs or {}),
        )
        native = envs.unwrapped
        if not isinstance(native, DispatchVectorEnv):  # pragma: no cover - every Dispatch id has one
            raise TypeError(f"{env_id} has no native vector environment (got {type(native).__name__})")
        self.native = native
        single = native.single_observation_space
        assert isinstance(single, spaces.Dict)
        self._keys = list(single.spaces)
        self.flatten = bool(flatten)
        space: spaces.Space[Any] = single
        if self.flatten:
            size = sum(int(np.prod(s.shape)) for s in single.spaces.values())  # type: ignore[arg-type,misc]
            space = spaces.Box(0.0, 1.0, (size,), np.float32)
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, dtype=np.int64)
        self._t0 = time.time()
        self._actions = np.zeros(n_envs, dtype=np.int64)
        super().__init__(n_envs, space, native.single_action_space)

    @property
    def compiled(self) -> bool:
        """Whether the native environment runs its compiled kernel (else each episode steps in Python)."""
        return self.native.compiled

    def _obs(self, obs: dict[str, np.ndarray]) -> Any:
        if not self.flatten:
            return obs
        n = self.num_envs
        return np.concatenate([obs[k].reshape(n, -1) for k in self._keys], axis=1)

    def _one_obs(self, obs: dict[str, np.ndarray]) -> Any:
        if not self.flatten:
            return obs
        return np.concatenate([obs[k].ravel() for k in self._keys])

    def reset(self) -> Any:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        options = self._options[0] if self._options[0] else None
        if any(o != self._options[0] for o in self._options):
            raise ValueError("NativeVecEnv: every environment takes the same reset options")
        obs, info = self.native.reset(seed=seeds, options=options)
        self.reset_infos = [_unbatch(info, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self._obs(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, info = self.native.step(self._actions)
        dones = terminated | truncated
        self._returns += rewards
        self._lengths += 1
        final = info.get("_final_info", np.zeros(self.num_envs, dtype=bool))
        infos: list[dict[str, Any]] = []
        for i in range(self.num_envs):
            if final[i]:
                one = _unbatch(info["final_info"], i)
                one["terminal_observation"] = self._one_obs(info["final_obs"][i])
                one["episode"] = {
                    "r": round(float(self._returns[i]), 6),
                    "l": int(self._lengths[i]),
                    "t": round(time.time() - self._t0, 6),
                }
                self.reset_infos[i] = _unbatch(info, i)
                self._returns[i] = 0.0
                self._lengths[i] = 0
            else:
                one = _unbatch(info, i)
            one["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos.append(one)
        # DummyVecEnv's reward buffer is float32: the same rewards reach the rollout buffer
        return self._obs(obs), rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.native.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        frames = self.native.render()
        return list(frames) if frames is not None else [None] * self.num_envs

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "render_mode":
            return [self.native.render_mode for _ in self._indices(indices)]
        return [getattr(self.native.sync(i), attr_name) for i in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        for i in self._indices(indices):
            setattr(self.native.envs[i], attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        which = self._indices(indices)
        if method_name == "action_masks":  # MaskablePPO's every step: no per-episode call
            masks = self.native.action_masks()
            return [masks[i] for i in which]
        return [getattr(self.native.sync(i), method_name)(*method_args, **method_kwargs) for i in which]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]


class StackedVecEnv(VecEnv):
    """Several ``VecEnv`` as one: environment ``i`` is the next unused one of part ``which[i]``.

    Training on several traces (``hpcgym train --traces``) stacks one
    :class:`NativeVecEnv` per trace (one native vector environment steps episodes of one
    configuration): environment ``i`` of this one is, with ``which = [0, 1, 2, 0, 1, 2]``,
    environment ``i // 3`` of part ``i % 3``. Every call reaches each part once, with its
    environments' actions, seeds and reset options; observations, rewards, dones and
    infos come back in this one's order. The parts must share their observation and
    action spaces, and give observations as arrays (flattened).

    Args:
        parts: the vector environments.
        which: for each environment of the stack, the index of its part; part ``k``
            must have as many environments as ``which`` names it.

    Raises:
        ValueError: ``which`` does not match the parts' sizes, or the spaces differ.
    """

    def __init__(self, parts: Sequence[VecEnv], which: Sequence[int]) -> None:
        self.parts = list(parts)
        self.which = [int(k) for k in which]
        self.slots: list[list[int]] = [
            [i for i, k in enumerate(self.which) if k == p] for p in range(len(parts))
        ]
        """For each part, the stack's indices of its environments, in the part's order."""
        for p, part in enumerate(self.parts):
            if len(self.slots[p]) != part.num_envs:
                raise ValueError(
                    f"StackedVecEnv: part {p} has {part.num_envs} environments, `which` names it "
                    f"{len(self.slots[p])} times"
                )
            if (
                part.observation_space != parts[0].observation_space
                or part.action_space != parts[0].action_space
            ):
                raise ValueError(
                    f"StackedVecEnv: part {p}'s spaces ({part.observation_space}, {part.action_space}) are "
                    f"not part 0's ({parts[0].observation_space}, {parts[0].action_space})"
                )
        self._local = [0] * len(self.which)
        for slots in self.slots:
            for j, i in enumerate(slots):
                self._local[i] = j
        super().__init__(len(self.which), parts[0].observation_space, parts[0].action_space)

    def _gather(self, values: Sequence[Sequence[Any]]) -> list[Any]:
        """Per-part lists in each part's order -> one list in the stack's order."""
        out: list[Any] = [None] * self.num_envs
        for slots, vals in zip(self.slots, values, strict=True):
            for i, v in zip(slots, vals, strict=True):
                out[i] = v
        return out

    def _stack(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        first = np.asarray(arrays[0])
        out = np.empty((self.num_envs, *first.shape[1:]), dtype=first.dtype)
        for slots, a in zip(self.slots, arrays, strict=True):
            out[slots] = a
        return out

    def reset(self) -> Any:
        obs = []
        for part, slots in zip(self.parts, self.slots, strict=True):
            part._seeds = [self._seeds[i] for i in slots]
            part._options = [self._options[i] for i in slots]
            obs.append(part.reset())
        self.reset_infos = self._gather([part.reset_infos for part in self.parts])
        self._reset_seeds()
        self._reset_options()
        return self._stack(obs)

    def step_async(self, actions: np.ndarray) -> None:
        actions = np.asarray(actions)
        for part, slots in zip(self.parts, self.slots, strict=True):
            part.step_async(actions[slots])

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        results = [part.step_wait() for part in self.parts]
        for part, slots in zip(self.parts, self.slots, strict=True):
            for j, i in enumerate(slots):
                self.reset_infos[i] = part.reset_infos[j]
        return (
            self._stack([r[0] for r in results]),
            self._stack([r[1] for r in results]),
            self._stack([r[2] for r in results]),
            self._gather([r[3] for r in results]),
        )

    def close(self) -> None:
        for part in self.parts:
            part.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        return self._gather([part.get_images() for part in self.parts])

    def _by_part(self, indices: VecEnvIndices) -> tuple[list[int], dict[int, list[int]]]:
        """The stack's indices asked for, and each part's local indices among them."""
        if indices is None:
            wanted = list(range(self.num_envs))
        elif isinstance(indices, int):
            wanted = [indices]
        else:
            wanted = list(indices)
        local: dict[int, list[int]] = {}
        for i in wanted:
            local.setdefault(self.which[i], []).append(self._local[i])
        return wanted, local

    def _call(self, indices: VecEnvIndices, call: Any) -> list[Any]:
        wanted, local = self._by_part(indices)
        got = {p: iter(call(self.parts[p], idx)) for p, idx in local.items()}
        return [next(got[self.which[i]]) for i in wanted]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._call(indices, lambda part, idx: part.get_attr(attr_name, idx))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        _, local = self._by_part(indices)
        for p, idx in local.items():
            self.parts[p].set_attr(attr_name, value, idx)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        return self._call(
            indices,
            lambda part, idx: part.env_method(method_name, *method_args, indices=idx, **method_kwargs),
        )

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return self._call(indices, lambda part, idx: part.env_is_wrapped(wrapper_class, idx))


def _unbatch(info: dict[str, Any], i: int) -> dict[str, Any]:
    """Episode ``i``'s entries of a Gymnasium vector info (the keys its ``_key`` mask sets)."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        mask = info.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        out[key] = _unbatch(value, i) if isinstance(value, dict) else _item(value[i])
    return out


def _item(value: Any) -> Any:
    """A numpy scalar as the Python value the single environment gives; arrays as they are."""
    return value.item() if isinstance(value, np.generic) else value


def native_available(env_id: str, env_kwargs: dict[str, Any]) -> bool:
    """Whether ``env_id`` with ``env_kwargs`` runs the native vector environment's compiled kernel."""
    from hpcgym.env.vector import compiled_obstacle

    spec = gym.spec(env_id.rpartition(":")[2])
    if not isinstance(spec.vector_entry_point, str) or "DispatchVectorEnv" not in spec.vector_entry_point:
        return False
    env = gym.make(env_id, **env_kwargs).unwrapped
    try:
        return compiled_obstacle(env) is None  # type: ignore[arg-type]
    finally:
        env.close()


__all__ = ["NativeVecEnv", "StackedVecEnv", "native_available"]
