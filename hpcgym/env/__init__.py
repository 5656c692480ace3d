"""The Gymnasium environment of hpcgym: a thin adapter over the shared engine.

>>> import gymnasium as gym
>>> import hpcgym
>>> env = gym.make("hpcgym/Dispatch-v1", window_jobs=64)
>>> obs, info = env.reset(seed=1)
>>> env.action_space
Discrete(65)

Registered ids (``import hpcgym`` registers them):

| id | action mode |
|----|-------------|
| ``hpcgym/Dispatch-v1`` | ``job``: start one of K waiting jobs or advance |
| ``hpcgym/DispatchBackfill-v1`` | ``job`` with ``backfill="easy"`` |
| ``hpcgym/DispatchPolicy-v1`` | ``policy``: pick the reference dispatcher of this decision |
| ``hpcgym/DispatchLearnedBackfill-v1`` | ``backfill``: pick who backfills around EASY's reservation |
| ``hpcgym/UserSubmit-v0`` | a request size and a delay per arriving job, EASY underneath |

The ``-v0`` ids of the first three stay registered (:class:`DispatchEnvV0`): they show the
``jobs``, ``histograms`` and ``system`` parts on every machine, where ``v1`` adds
``resources`` and ``requests`` on machines of more than one resource type.

Each id's ``gymnasium.make_vec`` gives the native vector environment
(:class:`DispatchVectorEnv`): N episodes stepped in one compiled call when the
configuration allows it (see ``docs/ENV.md``).

Render modes: ``"ansi"`` (a status line) and ``"rgb_array"`` (a picture of the machine and
the queue, :mod:`hpcgym.env.rendering`), so stable-baselines3's ``make_vec_env`` works
as is. Its ``SubprocVecEnv`` starts fresh interpreters, which know the ids only if they
import hpcgym: a script that imports hpcgym at the top is re-imported in each one; from a
notebook or a test, write the id with Gymnasium's module prefix,
``make_vec_env("hpcgym:hpcgym/Dispatch-v1", vec_env_cls=SubprocVecEnv)``.
"""

from __future__ import annotations

from hpcgym.env.adapters import DispatcherPolicy, run_episode, run_via_env
from hpcgym.env.config import (
    ActionConfig,
    DispatchConfig,
    EpisodeConfig,
    ObservationConfig,
    RewardConfig,
    argument_names,
    make_config,
)
from hpcgym.env.dispatch import DispatchEnv, DispatchEnvV0
from hpcgym.env.episodes import evaluation_windows, sample_offset, split_range
from hpcgym.env.observations import (
    DEFAULT_OBSERVATIONS,
    HISTOGRAMS,
    JOB_FEATURES,
    OBSERVATIONS,
    RESOURCE_OBSERVATIONS,
    SYSTEM_FEATURES,
    ObservationBuilder,
    default_observations,
    make_observation,
    observation_names,
    register_observation,
)
from hpcgym.env.rendering import FRAME_SHAPE
from hpcgym.env.rewards import (
    REWARDS,
    BsldDense,
    RewardTerm,
    WaitDense,
    make_reward,
    register_reward,
    reward_names,
)
from hpcgym.env.rllib import make_flat_env, register_rllib_env, rllib_available
from hpcgym.env.vector import DispatchVectorEnv, DispatchVectorEnvV0
from hpcgym.env.wrappers import FlattenDispatchObservation

__all__ = [
    "DEFAULT_OBSERVATIONS",
    "FRAME_SHAPE",
    "HISTOGRAMS",
    "JOB_FEATURES",
    "OBSERVATIONS",
    "RESOURCE_OBSERVATIONS",
    "REWARDS",
    "SYSTEM_FEATURES",
    "ActionConfig",
    "BsldDense",
    "DispatchConfig",
    "DispatchEnv",
    "DispatchEnvV0",
    "DispatchVectorEnv",
    "DispatchVectorEnvV0",
    "DispatcherPolicy",
    "EpisodeConfig",
    "FlattenDispatchObservation",
    "ObservationBuilder",
    "ObservationConfig",
    "RewardConfig",
    "RewardTerm",
    "WaitDense",
    "argument_names",
    "default_observations",
    "evaluation_windows",
    "make_config",
    "make_flat_env",
    "make_observation",
    "make_reward",
    "observation_names",
    "register_observation",
    "register_reward",
    "register_rllib_env",
    "reward_names",
    "rllib_available",
    "run_episode",
    "run_via_env",
    "sample_offset",
    "split_range",
]
