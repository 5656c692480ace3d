"""The env under Ray RLlib: registration, flattening, and one PPO iteration (needs ``ray[rllib]``).

RLlib is not one of hpcgym's extras (it pins its own Gymnasium release), so ``make test``
does not install it and the RLlib tests skip, saying so; the registration errors are
checked everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.common.errors import InvalidConfigError, MissingExtraError
from hpcgym.env import make_flat_env, register_rllib_env, rllib_available

needs_rllib = pytest.mark.skipif(
    not rllib_available(), reason="Ray RLlib is not installed (pip install 'ray[rllib]')"
)


def test_make_flat_env_gives_one_vector_inside_its_space():
    env = make_flat_env("hpcgym/Dispatch-v1", {"window_jobs": 32})
    obs, _ = env.reset(seed=3)
    assert obs.ndim == 1 and env.observation_space.contains(obs)
    obs, _, _, _, info = env.step(env.action_space.n - 1)
    assert env.observation_space.contains(obs) and "invalid_action" in info
    env.close()


def test_unknown_ids_are_named():
    with pytest.raises(InvalidConfigError, match="'CartPole-v1' is not an hpcgym id"):
        make_flat_env("CartPole-v1")
    with pytest.raises(InvalidConfigError, match="is not an hpcgym id"):
        register_rllib_env("hpcgym/Nope-v1")


def test_a_missing_rllib_is_named(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'ray\[rllib\]'") as info:
        register_rllib_env()
    assert "make rllib-test" in str(info.value)


def test_rllib_without_its_dependencies_names_the_module_and_make_rllib_test(monkeypatch):
    # issue 27: Ray ships RLlib's code without dm-tree; the docs' snippet failed inside Ray
    import sys

    monkeypatch.setitem(sys.modules, "ray.rllib", None)
    monkeypatch.setitem(sys.modules, "tree", None)
    import hpcgym.env.rllib as rllib

    def missing_tree() -> str:
        try:
            import tree  # noqa: F401
        except ImportError as err:
            return err.name or "tree"
        return "tree"  # pragma: no cover

    monkeypatch.setattr(rllib, "_rllib_missing", missing_tree)
    with pytest.raises(MissingExtraError, match=r"no module 'tree'.*make rllib-test"):
        register_rllib_env()


@needs_rllib
def test_one_ppo_iteration_under_rllib(tmp_path):
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    ray.init(num_cpus=1, include_dashboard=False, object_store_memory=100 * 2**20, log_to_driver=False)
    try:
        name = register_rllib_env("hpcgym/Dispatch-v1")
        config = (
            PPOConfig()
            .environment(name, env_config={"window_jobs": 32})
            .env_runners(num_env_runners=0, rollout_fragment_length=64)
            .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
            .debugging(seed=1)
        )
        algo = config.build_algo()
        try:
            result = algo.train()
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    sampled = result["env_runners"]["num_env_steps_sampled_lifetime"]
    assert sampled >= 64
    assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
