"""hpcgym/UserSubmit-v0: the user-side env (003's molding and delayed submission as actions)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from checks import check_schedule
from gymnasium.utils.env_checker import check_env as gym_check_env

import hpcgym
from hpcgym.common.errors import InvalidConfigError

SMALL = {"history": 300, "jobs": 40}


def play(env: gym.Env, seed: int, action: object = None) -> tuple[float, list[dict]]:
    obs, info = env.reset(seed=seed)
    total, infos, done = 0.0, [], False
    while not done:
        a = env.action_space.sample() if action is None else action
        obs, reward, done, truncated, info = env.step(a)
        assert env.observation_space.contains(obs) and not truncated
        total += reward
        infos.append(info)
    return total, infos


@pytest.mark.parametrize("env_id", list(hpcgym.USER_ENV_IDS))
def test_checkers_pass(env_id):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, **SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped, skip_render_check=True)
        sb3_check_env(env.unwrapped, warn=True)


def test_ansi_render_shows_the_step_and_the_counts():
    env = gym.make("hpcgym/UserSubmit-v0", render_mode="ansi", **SMALL)
    assert env.unwrapped.render() is None  # before reset
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, str) and f"step=0/{SMALL['jobs']}" in first and "held=0" in first
    env.step(np.array([0, 1]))  # keep the size, hold 15 min
    second = env.render()
    assert f"step=1/{SMALL['jobs']}" in second and "held=1" in second
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check_env(env.unwrapped)  # the render check included
    with (
        pytest.warns(UserWarning, match="render_modes"),
        pytest.raises(InvalidConfigError, match="render_mode"),
    ):
        gym.make("hpcgym/UserSubmit-v0", render_mode="video", **SMALL)  # "human": Gymnasium draws rgb_array


def test_rgb_array_render_and_sb3_make_vec_env():
    # issue 27: make_vec_env asks for render_mode="rgb_array", which this id refused
    from stable_baselines3.common.env_util import make_vec_env

    from hpcgym.env.rendering import FRAME_SHAPE

    env = gym.make("hpcgym/UserSubmit-v0", render_mode="rgb_array", **SMALL)
    env.reset(seed=0)
    env.step(np.array([0, 0]))
    frame = env.render()
    assert frame.shape == FRAME_SHAPE and frame.dtype == np.uint8 and len(np.unique(frame)) > 3
    venv = make_vec_env("hpcgym/UserSubmit-v0", n_envs=2, seed=0, env_kwargs=SMALL)
    try:
        venv.reset()
        obs, _, _, _ = venv.step(np.zeros((2, 2), dtype=np.int64))
        assert obs.shape[0] == 2
    finally:
        venv.close()


def test_keep_everything_is_plain_easy_and_the_return_is_minus_the_responses():
    env = gym.make("hpcgym/UserSubmit-v0", **SMALL).unwrapped
    total, infos = play(env, seed=5, action=np.array([0, 0]))
    assert len(infos) == SMALL["jobs"] and env.molded == 0 and env.held == 0
    sched = env.sim.schedule()
    from hpcgym.baselines import make_policy
    from hpcgym.sim import Simulator

    ref = Simulator(env.w).run(make_policy("easy"))
    np.testing.assert_array_equal(sched.start, ref.start)
    managed = env.managed
    response = (ref.end[managed] - env.w.submit[managed]).sum() / 3600.0
    assert total == pytest.approx(-response)
    assert sorted(e for i in infos for e in i["ended"]) == managed.tolist()


def test_random_play_keeps_the_engine_invariants_and_the_hold_order():
    env = gym.make("hpcgym/UserSubmit-v0", **SMALL).unwrapped
    _, infos = play(env, seed=1)
    s = env.sim.schedule()
    check_schedule(s.workload, s, kill=False)
    assert env.molded > 0 and env.held > 0
    assert (np.diff(s.workload.submit) >= 0).all()
    j = np.array([i["job"] for i in infos])
    assert (s.workload.submit[j] >= env.w.submit[j]).all()
    assert (s.start >= env.w.submit).all()


def test_same_seed_same_episode():
    a = gym.make("hpcgym/UserSubmit-v0", **SMALL)
    b = gym.make("hpcgym/UserSubmit-v0", **SMALL)
    a.action_space.seed(3)
    b.action_space.seed(3)
    ra, ia = play(a, seed=7)
    rb, ib = play(b, seed=7)
    assert ra == rb and [i["size"] for i in ia] == [i["size"] for i in ib]


def test_one_user_only():
    w = hpcgym.load_default()
    user = int(np.bincount(w.user[300:340]).argmax())
    env = gym.make("hpcgym/UserSubmit-v0", user=user, **SMALL).unwrapped
    _, infos = play(env, seed=0)
    assert all(int(env.w.user[i["job"]]) == user for i in infos)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"jobs": 0}, "jobs"),
        ({"delays": (-1.0,)}, "delays"),
        ({"history": 10**6}, "history"),
        ({"foo": 1}, "foo"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(InvalidConfigError, match=match):
        gym.make("hpcgym/UserSubmit-v0", **kwargs)


def test_action_masks_mark_the_candidates_and_maskable_ppo_uses_them():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = gym.make("hpcgym/UserSubmit-v0", **SMALL).unwrapped
    env.reset(seed=3)
    seen = set()
    for _ in range(SMALL["jobs"]):
        mask = env.action_masks()
        n = len(env.candidates)
        assert mask.tolist() == [True] * n + [False] * (8 - n) + [True] * 4
        seen.add(n)
        _, _, done, _, info = env.step(np.array([n - 1, 0]))  # the last candidate: valid
        assert not info["invalid_size"]
        if done:
            break
    assert len(seen) > 1  # jobs with different numbers of candidates were met
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(64)
    obs, _ = env.reset(seed=4)
    for _ in range(10):
        action, _ = model.predict(obs, action_masks=env.action_masks())
        obs, _, done, _, info = env.step(action)
        assert not info["invalid_size"]
        if done:
            break
