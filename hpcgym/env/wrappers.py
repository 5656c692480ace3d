"""Wrappers of the dispatch environment."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class FlattenDispatchObservation(
    gym.ObservationWrapper[np.ndarray, np.int64, dict[str, np.ndarray]], gym.utils.RecordConstructorArgs
):
    """Flattens the Dict observation into one float32 ``Box`` in [0, 1] for MLP policies.

    The keys are concatenated in the Dict space's (sorted) order, each raveled in C
    order. :meth:`action_masks` is passed through for ``MaskablePPO``.

    >>> import gymnasium as gym
    >>> import hpcgym
    >>> env = FlattenDispatchObservation(gym.make("hpcgym/Dispatch-v1", window_jobs=32, window_size=8))
    >>> env.observation_space.shape
    (194,)
    """

    def __init__(self, env: gym.Env[dict[str, np.ndarray], np.int64]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict):
            raise TypeError(f"FlattenDispatchObservation needs a Dict observation space, got {space}")
        self._keys: list[str] = list(space.spaces)
        self._sizes = [int(np.prod(s.shape)) for s in space.spaces.values()]  # type: ignore[arg-type]
        self.observation_space = spaces.Box(0.0, 1.0, (sum(self._sizes),), np.float32)

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.concatenate([observation[k].ravel() for k in self._keys])

    def action_masks(self) -> np.ndarray:
        """The wrapped environment's action mask."""
        return self.env.get_wrapper_attr("action_masks")()  # type: ignore[no-any-return]
