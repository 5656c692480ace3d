"""The native vector environment gives, step for step, what a SyncVectorEnv of single environments gives."""

from __future__ import annotations

from importlib import resources
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcgym
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv, DispatchEnvV0
from hpcgym.env.vector import DispatchVectorEnv, DispatchVectorEnvV0

SMALL = {"window_jobs": 20, "window_size": 8}
EURORA = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))

COMPILED: list[dict[str, Any]] = [
    {},
    {"warm_start": True, "split": "test"},
    {"predictor": "real", "oracle": True, "reward": "bsld-sparse"},
    {"reward": "wait", "kill_at_estimate": True, "histogram_duration": "estimate", "invalid_penalty": 0.5},
    {"trace": EURORA, "split": "all", "window_jobs": 30},
    {"observations": ("system", "jobs"), "reward_scale": 2.0},
]
PYTHON: list[dict[str, Any]] = [
    {"backfill": "easy"},
    {"mode": "policy"},
    {"every_event": True},
    {"observations": ("jobs", "predicted_wait")},
    {"predictor": "user-history"},
]


def same(x: Any, y: Any) -> bool:
    """Exact equality of nested observations and infos (NaN equals NaN; dtypes must match)."""
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, np.ndarray):
        if not isinstance(y, np.ndarray) or x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype == object:
            return all(same(a, b) for a, b in zip(x, y, strict=True))
        return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y):
        return True
    return type(x) is type(y) and bool(x == y)


def lockstep(
    kwargs: dict[str, Any],
    n: int,
    steps: int,
    seed: int,
    mode: str = "NextStep",
    *,
    env_class: type = DispatchEnv,
) -> tuple[DispatchVectorEnv, int]:
    """Step a native vector env and a SyncVectorEnv with the same seeded actions; assert every output equal.

    Returns the vector env and the number of episode ends seen.
    """
    vec_class = DispatchVectorEnvV0 if env_class is DispatchEnvV0 else DispatchVectorEnv
    cfg = {**SMALL, **kwargs}
    native = vec_class(n, autoreset_mode=mode, **cfg)
    sync = SyncVectorEnv([lambda: env_class(**cfg, compiled=False) for _ in range(n)], autoreset_mode=mode)
    got, want = native.reset(seed=seed), sync.reset(seed=seed)
    assert same(got, want)
    rng = np.random.default_rng(seed)
    ends = 0
    for t in range(steps):
        mask = native.action_masks()
        np.testing.assert_array_equal(mask, np.array([e.action_masks() for e in sync.envs]))
        valid = [np.flatnonzero(m) for m in mask]
        actions = np.array(
            [
                v[rng.integers(len(v))] if rng.random() < 0.85 else rng.integers(-2, mask.shape[1] + 2)
                for v in valid
            ]
        )
        got, want = native.step(actions), sync.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), got, want, strict=True):
            assert same(a, b), f"step {t}: {name} differs"
        for i in np.flatnonzero(got[2]).tolist():
            ends += 1
            if mode == "NextStep":  # the ended episode's schedule, before its reset
                s, r = native.sync(i).schedule(), sync.envs[i].schedule()
                np.testing.assert_array_equal(s.start, r.start)
                np.testing.assert_array_equal(s.placement_nodes, r.placement_nodes)
    native.close()
    sync.close()
    return native, ends


@pytest.mark.parametrize("kwargs", COMPILED, ids=lambda kw: "-".join(map(str, kw)) or "default")
def test_compiled_matches_sync_vector_env(kwargs: dict[str, Any]) -> None:
    native, ends = lockstep(kwargs, n=3, steps=160, seed=3)
    assert native.compiled
    assert ends >= 2, "the run must cross automatic resets"


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_autoreset_modes_match_sync_vector_env(mode: str) -> None:
    _, ends = lockstep({}, n=2, steps=150, seed=11, mode=mode)
    assert ends >= 2


def test_v0_matches() -> None:
    native, _ = lockstep({"trace": EURORA, "split": "all"}, n=2, steps=60, seed=5, env_class=DispatchEnvV0)
    assert native.compiled and "resources" not in native.single_observation_space.spaces


@pytest.mark.parametrize("kwargs", PYTHON, ids=lambda kw: "-".join(map(str, kw)))
def test_python_path_matches_sync_vector_env(kwargs: dict[str, Any]) -> None:
    native, _ = lockstep(kwargs, n=2, steps=60, seed=7)
    assert not native.compiled


def test_forced_python_path_matches() -> None:
    native = DispatchVectorEnv(2, compiled=False, **SMALL)
    assert not native.compiled


@settings(max_examples=6)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 5), window=st.integers(2, 30))
def test_any_seed_and_size_matches(seed: int, n: int, window: int) -> None:
    lockstep({"window_jobs": window, "window_size": 4}, n=n, steps=40, seed=seed)


def test_compiled_true_names_the_parameter_that_prevents_it() -> None:
    with pytest.raises(InvalidConfigError, match="backfill"):
        DispatchVectorEnv(2, compiled=True, backfill="easy", **SMALL)
    with pytest.raises(InvalidConfigError, match="observations: the part 'predicted_wait'"):
        DispatchVectorEnv(2, compiled=True, observations=("jobs", "predicted_wait"), **SMALL)
    with pytest.raises(InvalidConfigError, match="predictor"):
        DispatchVectorEnv(2, compiled=True, predictor="user-history", **SMALL)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2.0}, "num_envs"),
        ({"autoreset_mode": "Sometimes"}, "autoreset_mode"),
        ({"compiled": "yes"}, "compiled"),
        ({"windw_jobs": 3}, "windw_jobs"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        DispatchVectorEnv(**{"num_envs": 2, **kwargs})


@pytest.mark.filterwarnings("ignore:.*out of date")
def test_make_vec_uses_the_vector_entry_point_of_every_id() -> None:
    for env_id in hpcgym.ENV_IDS:
        envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **SMALL)
        native = envs.unwrapped
        assert isinstance(native, DispatchVectorEnvV0 if env_id.endswith("-v0") else DispatchVectorEnv)
        assert native.compiled == (env_id.split("/")[1].startswith("Dispatch-"))
        assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        obs, _ = envs.reset(seed=0)
        assert envs.observation_space.contains(obs)
        assert obs.keys() == envs.single_observation_space.spaces.keys()
        assert envs.action_space == gym.spaces.MultiDiscrete([envs.single_action_space.n] * 2)
        obs, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(obs)
        assert reward.dtype == np.float64 and reward.shape == (2,)
        assert terminated.dtype == truncated.dtype == np.bool_
        assert native.action_masks().shape == (2, envs.single_action_space.n)
        envs.close()


def test_returned_observations_are_not_reused() -> None:
    envs = DispatchVectorEnv(2, **SMALL)
    obs, _ = envs.reset(seed=1)
    kept = {k: v.copy() for k, v in obs.items()}
    envs.step(envs.action_masks().argmax(axis=1))
    assert same(obs, kept)
    shared = DispatchVectorEnv(2, copy=False, **SMALL)
    first, _ = shared.reset(seed=1)
    second, *_ = shared.step(shared.action_masks().argmax(axis=1))
    assert first["jobs"] is second["jobs"]


def test_disabled_autoreset_needs_a_masked_reset() -> None:
    envs = DispatchVectorEnv(2, autoreset_mode="Disabled", **SMALL)
    envs.reset(seed=0)
    ended = np.zeros(2, dtype=bool)
    while not ended.any():
        _, _, ended, _, _ = envs.step(envs.action_masks().argmax(axis=1))
    with pytest.raises(gym.error.ResetNeeded):
        envs.step(envs.action_masks().argmax(axis=1))
    _, info = envs.reset(options={"reset_mask": ended})
    assert info["_decision"].tolist() == ended.tolist()
    envs.step(envs.action_masks().argmax(axis=1))


def test_bad_actions_and_reset_arguments() -> None:
    envs = DispatchVectorEnv(2, **SMALL)
    with pytest.raises(gym.error.ResetNeeded):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.reset(seed=[4, None])
    with pytest.raises(InvalidConfigError, match="actions"):
        envs.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(InvalidConfigError, match="seed"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(InvalidConfigError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.zeros(2, dtype=bool)})
    _, _, _, _, info = envs.step(np.array([0.5, 0.5]))  # not integers: invalid, as in the single env
    assert info["invalid_action"].all()


def test_render_and_offsets() -> None:
    envs = DispatchVectorEnv(2, render_mode="ansi", **SMALL)
    envs.reset(options={"offset": 100})
    assert [e.episode_offset for e in envs.envs] == [100, 100]
    envs.step(envs.action_masks().argmax(axis=1))
    frames = envs.render()
    assert frames is not None and len(frames) == 2 and all(f.startswith("t=") for f in frames)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"warm_start": True, "split": "test"},
        {"trace": EURORA, "split": "all"},
    ],
)
def test_an_episodes_end_reads_the_schedule_a_sync_gives(kwargs: dict[str, Any]) -> None:
    """The schedule an episode's end reads from the compiled row (no sync) is the synced engine's."""
    vec = DispatchVectorEnv(3, **{**SMALL, **kwargs})
    vec.reset(seed=5)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(400):
        mask = vec.action_masks()
        _, _, terminated, _, _ = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
        for i in np.flatnonzero(terminated).tolist():
            got = vec._core.schedule(i, vec.envs[i])
            want = vec.sync(i).sim.schedule(policy="env")  # the engine's, as the row holds it
            for field in ("start", "end", "killed", "first_prediction", "placement_ptr", "placement_nodes"):
                np.testing.assert_array_equal(getattr(got, field), getattr(want, field), err_msg=field)
            np.testing.assert_array_equal(got.workload.job_id, want.workload.job_id)
            assert got.decisions == want.decisions
            assert (got.policy, got.predictor, got.machine) == (want.policy, want.predictor, want.machine)
            checked += 1
    assert checked >= 3
