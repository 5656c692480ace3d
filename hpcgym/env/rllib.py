"""The hpcgym environments under Ray RLlib.

RLlib builds environments from a name given to :func:`ray.tune.registry.register_env`
and a creator called with the run's ``env_config`` in every env runner process.
:func:`register_rllib_env` registers one hpcgym id under such a name; the creator
imports hpcgym (so the ids exist in fresh worker processes), makes the id with
``env_config`` as its keyword arguments and flattens the observation dictionary into
one vector (:class:`~hpcgym.env.FlattenDispatchObservation`), which RLlib's default
models take as is.

RLlib's default PPO has no action masks: an action that names no waiting job or a job
that does not fit is handled as every hpcgym env handles it (documented in
``docs/ENV.md``; flagged ``info["invalid_action"]``), never an error.

RLlib is not one of hpcgym's extras: ``ray[rllib]`` pins its own Gymnasium release,
so it is installed on its own (``pip install 'ray[rllib]'``), not by ``make test``.

Example (needs ``ray[rllib]``)::

    from ray.rllib.algorithms.ppo import PPOConfig
    from hpcgym.env.rllib import register_rllib_env

    name = register_rllib_env("hpcgym/Dispatch-v1")
    algo = PPOConfig().environment(name, env_config={"window_jobs": 256}).build_algo()
    algo.train()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from hpcgym.common.errors import InvalidConfigError, MissingExtraError
from hpcgym.env.wrappers import FlattenDispatchObservation

__all__ = ["make_flat_env", "register_rllib_env", "rllib_available"]


def rllib_available() -> bool:
    """Whether Ray RLlib imports (Ray alone ships RLlib's code but not what it needs)."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        return False
    return True


def _check_id(env_id: str) -> None:
    import hpcgym  # also registers the ids in a fresh worker process

    if env_id not in hpcgym.ENV_IDS:
        known = ", ".join(hpcgym.ENV_IDS)
        raise InvalidConfigError(f"env_id: {env_id!r} is not an hpcgym id; known: {known}")


def make_flat_env(env_id: str, env_config: Mapping[str, Any] | None = None) -> gym.Env[Any, Any]:
    """``gym.make(env_id, **env_config)`` with the observation flattened into one vector.

    Raises:
        InvalidConfigError: ``env_id`` is not a registered hpcgym id.
    """
    _check_id(env_id)
    return FlattenDispatchObservation(gym.make(env_id, **dict(env_config or {})))


def register_rllib_env(env_id: str = "hpcgym/Dispatch-v1", name: str | None = None) -> str:
    """Register ``env_id`` with RLlib; returns the name to give ``AlgorithmConfig.environment``.

    Args:
        env_id: an hpcgym id (``hpcgym.ENV_IDS``).
        name: the RLlib name (default: the id with ``/`` replaced by ``-``).

    Raises:
        MissingExtraError: Ray RLlib is not installed.
        InvalidConfigError: ``env_id`` is not an hpcgym id.
    """
    _check_id(env_id)
    if not rllib_available():
        raise MissingExtraError(
            "the RLlib environment needs Ray RLlib, which is not installed: pip install 'ray[rllib]'"
        )
    from ray.tune.registry import register_env

    rllib_name = name or env_id.replace("/", "-")

    def creator(env_config: Mapping[str, Any]) -> gym.Env[Any, Any]:
        return make_flat_env(env_id, env_config)

    register_env(rllib_name, creator)
    return rllib_name
