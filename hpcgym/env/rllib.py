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

Example (needs ``ray[rllib]``; registering first says what is missing, where importing
RLlib would fail inside Ray)::

    from hpcgym.env.rllib import register_rllib_env

    name = register_rllib_env("hpcgym/Dispatch-v1")

    from ray.rllib.algorithms.ppo import PPOConfig
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
    return _rllib_missing() is None


def _rllib_missing() -> str | None:
    """Why ``import ray.rllib`` fails (the module it misses), or None if it imports."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        return getattr(err, "name", None) or str(err)
    return None


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
    missing = _rllib_missing()
    if missing is not None:
        # Ray ships RLlib's code without its dependencies (dm-tree, ...): ``import ray.rllib``
        # then fails deep inside Ray with "No module named 'tree'"
        raise MissingExtraError(
            f"the RLlib environment needs Ray RLlib, which does not import here (no module {missing!r}); "
            "RLlib pins its own Gymnasium, so it lives in a virtual environment of its own: run "
            "`make rllib-test` (which builds one with ray[rllib] and runs tests/env/test_rllib.py), "
            "or pip install 'ray[rllib]' in a fresh one"
        )
    from ray.tune.registry import register_env

    rllib_name = name or env_id.replace("/", "-")

    def creator(env_config: Mapping[str, Any]) -> gym.Env[Any, Any]:
        return make_flat_env(env_id, env_config)

    register_env(rllib_name, creator)
    return rllib_name
