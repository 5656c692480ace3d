"""The Gymnasium environment: API conformance, determinism, copies, actions, rewards, splits."""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import hpcgym
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.env import (
    HISTOGRAMS,
    JOB_FEATURES,
    SYSTEM_FEATURES,
    DispatchConfig,
    DispatchEnv,
    FlattenDispatchObservation,
    argument_names,
    make_config,
    rendering,
)
from hpcgym.sim import bounded_slowdown, compute_metrics

SMALL = {"window_jobs": 40, "window_size": 12}

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    *((env_id, {}) for env_id in hpcgym.ENV_IDS),
    ("hpcgym/Dispatch-v1", {"warm_start": True, "split": "test"}),
    ("hpcgym/DispatchBackfill-v1", {"warm_start": True, "warm_policy": "fcfs"}),
    ("hpcgym/Dispatch-v1", {"predictor": "real", "oracle": True, "reward": "bsld-sparse"}),
    ("hpcgym/DispatchPolicy-v1", {"reward": "wait", "every_event": True}),
]
VARIANT_IDS = [f"{i}-{'-'.join(map(str, kw.values())) or 'default'}" for i, kw in VARIANTS]


def make(env_id: str = "hpcgym/Dispatch-v1", **kwargs: Any) -> gym.Env[Any, Any]:
    return gym.make(env_id, **{**SMALL, **kwargs})


def random_masked_rollout(
    env: gym.Env[Any, Any], seed: int, steps: int = 10_000, masked: bool = True
) -> list[tuple[Any, ...]]:
    """(obs, reward, terminated, info) of one episode under a seeded random policy."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out: list[tuple[Any, ...]] = [(obs, 0.0, False, info)]
    for _ in range(steps):
        mask = env.unwrapped.action_masks() if masked else np.ones(env.action_space.n, bool)
        valid = np.flatnonzero(mask)
        obs, reward, terminated, truncated, info = env.step(valid[rng.integers(len(valid))])
        assert not truncated
        out.append((obs, reward, terminated, info))
        if terminated:
            break
    return out


def assert_same(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


# ---------------------------------------------------------------- registration and API
def test_import_registers_every_id_idempotently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-registering would warn "Overriding environment"
        hpcgym.register_envs()
        hpcgym.register_envs()
    for env_id in hpcgym.ENV_IDS:
        assert env_id in gym.registry
        version = env_id.rsplit("-", 1)[1]
        assert gym.registry[env_id].entry_point == hpcgym.ENTRY_POINTS[version]
    assert hpcgym.ENTRY_POINTS == {
        "v0": "hpcgym.env.dispatch:DispatchEnvV0",
        "v1": "hpcgym.env.dispatch:DispatchEnv",
    }


@pytest.mark.parametrize(("env_id", "kwargs"), VARIANTS, ids=VARIANT_IDS)
def test_gymnasium_and_sb3_env_checkers_pass(env_id: str, kwargs: dict[str, Any]) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = make(env_id, **kwargs)
    with warnings.catch_warnings():
        # sb3 recommends 1-D observations; the 2-D job window is deliberate (flatten wrapper below)
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        gym_check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(env.unwrapped, warn=True)
        flat = FlattenDispatchObservation(make(env_id, **kwargs))
        gym_check_env(flat, skip_render_check=True)
        sb3_check_env(flat, warn=True)


@pytest.mark.parametrize("env_id", list(hpcgym.ENV_IDS))
def test_spaces_and_default_trace(env_id: str) -> None:
    env = gym.make(env_id)
    u = env.unwrapped
    assert u.trace.name.startswith("SDSC-SP2") and len(u.trace) == 8943 and u.trace.procs == 128
    space = env.observation_space
    assert isinstance(space, gym.spaces.Dict)
    assert space["jobs"].shape == (64, len(JOB_FEATURES))
    assert space["histograms"].shape == (len(HISTOGRAMS), 16)
    assert space["system"].shape == (len(SYSTEM_FEATURES),)
    n = 65 if "Policy" not in env_id else 4
    assert env.action_space == gym.spaces.Discrete(n)
    obs, info = env.reset(seed=3)
    assert space.contains(obs)
    assert info["action_mask"].shape == (n,) and info["action_mask"].any()


def test_every_config_field_is_a_documented_keyword() -> None:
    names = argument_names()
    assert {
        "trace",
        "window_jobs",
        "mode",
        "backfill",
        "reward",
        "window_size",
        "warm_start",
        "oracle",
    } <= set(names)
    doc = DispatchEnv.__doc__ or ""
    for name in names:
        assert f"``{name}``" in doc, f"{name} is not documented in the env docstring"
    for section in (
        "## Description",
        "## Action Space",
        "## Observation Space",
        "## Rewards",
        "## Episode End",
        "## Arguments",
        "## Version History",
    ):
        assert section in doc
    cfg = make_config(**DispatchConfig().to_kwargs())
    assert cfg == DispatchConfig()
    assert pickle.loads(pickle.dumps(cfg)) == cfg


def test_unknown_argument_is_rejected_with_a_suggestion() -> None:
    with pytest.raises(InvalidConfigError, match="did you mean 'window_jobs'"):
        gym.make("hpcgym/Dispatch-v1", windows_jobs=10)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"window_jobs": 0}, "window_jobs"),
        ({"window_jobs": 10**6}, "window_jobs"),
        ({"window_size": 0}, "window_size"),
        ({"split": "dev"}, "split"),
        ({"split_fractions": (0.5, 0.5, 0.5)}, "split_fractions"),
        ({"job_range": (10, 5)}, "job_range"),
        ({"job_range": (0, 10**6)}, "job_range"),
        ({"mode": "jobs"}, "mode"),
        ({"backfill": "conservative"}, "backfill"),
        ({"histogram_bins": 0}, "histogram_bins"),
        ({"reward_scale": -1.0}, "reward_scale"),
        ({"load_factor": 0.0}, "load_factor"),
        ({"predictor": "real"}, "oracle"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_invalid_values_name_the_parameter(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(InvalidConfigError, match=name):
        DispatchEnv(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"reward": "nope"},
        {"observations": ("jobs", "nope")},
        {"predictor": "nope"},
        {"policies": ("x",)},
        {"mode": "policy", "policies": ("nope",)},
    ],
)
def test_unknown_names_raise_unknown_name_error(kwargs: dict[str, Any]) -> None:
    if kwargs.get("policies") == ("x",):
        DispatchEnv(**kwargs)  # job mode does not build the dispatchers
        return
    with pytest.raises(UnknownNameError):
        DispatchEnv(**kwargs)


# ----------------------------------------------------------------------- determinism
@pytest.mark.parametrize(("env_id", "kwargs"), VARIANTS, ids=VARIANT_IDS)
def test_same_seed_gives_an_identical_rollout(env_id: str, kwargs: dict[str, Any]) -> None:
    a = random_masked_rollout(make(env_id, **kwargs), seed=7)
    b = random_masked_rollout(make(env_id, **kwargs), seed=7)
    assert a[-1][2], "the episode did not end"
    assert_same(a, b)


def test_different_seeds_sample_different_windows() -> None:
    env = make()
    offsets = set()
    for seed in range(5):
        env.reset(seed=seed)
        offsets.add(env.unwrapped.episode_offset)
    assert len(offsets) > 1


@pytest.mark.parametrize("env_id", list(hpcgym.ENV_IDS))
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copies_behave_the_same(env_id: str, how: str) -> None:
    env = make(env_id, warm_start=True)
    rng = np.random.default_rng(0)
    env.reset(seed=11)
    for _ in range(15):
        valid = np.flatnonzero(env.unwrapped.action_masks())
        env.step(valid[rng.integers(len(valid))])
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    for _ in range(10_000):
        valid = np.flatnonzero(env.unwrapped.action_masks())
        np.testing.assert_array_equal(valid, np.flatnonzero(twin.unwrapped.action_masks()))
        a = valid[rng.integers(len(valid))]
        ra, rb = env.step(a), twin.step(a)
        assert_same(ra, rb)
        if ra[2]:
            break
    assert ra[2]
    # and the next episodes too (the generator was copied)
    assert_same(env.reset()[0], twin.reset()[0])


# -------------------------------------------------------------------------- actions
def test_masked_random_policy_never_makes_an_invalid_action() -> None:
    for env_id in hpcgym.ENV_IDS:
        for _, _, _, info in random_masked_rollout(make(env_id), seed=1):
            assert not info["invalid_action"]


def test_masked_slots_are_exactly_the_shown_jobs_that_fit() -> None:
    env = make(window_size=8, window_jobs=120)
    rng = np.random.default_rng(2)
    env.reset(seed=2)
    u = env.unwrapped
    for _ in range(300):
        mask = u.action_masks()
        view = u.view
        q = view.queue[:8]
        expect = np.zeros(9, bool)
        expect[: len(q)] = view.procs[q] <= view.free_procs
        expect[8] = u.sim.has_future_event()
        np.testing.assert_array_equal(mask, expect)
        valid = np.flatnonzero(mask)
        if env.step(valid[rng.integers(len(valid))])[2]:
            break


@pytest.mark.parametrize(
    "action", [-1, 10**9, 13, None, "x", 1.5, np.array([1, 2]), np.array([[3]], np.float32)]
)
def test_invalid_actions_never_raise_and_are_flagged(action: Any) -> None:
    env = make(invalid_penalty=0.5)
    env.reset(seed=0)
    u = env.unwrapped
    before = u.decision_count
    assert u.sim.has_future_event()  # so the fallback is to advance to the next decision point
    _, reward, terminated, _, info = env.step(action)
    assert info["invalid_action"] and not terminated
    assert info["reward_terms"]["invalid"] == 1.0
    assert reward == pytest.approx(-info["reward_terms"]["bsld"] / 40 - 0.5)
    assert u.decision_count == before + 1


def test_a_job_that_does_not_fit_is_invalid_without_backfill_and_reserved_with_it() -> None:
    for env_id, invalid in (("hpcgym/Dispatch-v1", True), ("hpcgym/DispatchBackfill-v1", False)):
        env = make(env_id, window_jobs=200, invalid_penalty=0.5, reward="bsld-sparse")
        env.reset(seed=0)
        u = env.unwrapped
        for _ in range(2000):  # find a decision point with a waiting job that does not fit
            view = u.view
            q = view.queue[: u.window_size]
            big = np.flatnonzero(view.procs[q] > view.free_procs)
            if len(big):
                break
            env.step(np.flatnonzero(u.action_masks())[0])
        job = int(q[big[0]])
        _, reward, _, _, info = env.step(big[0])
        assert info["invalid_action"] is invalid
        assert reward == (-0.5 if invalid else 0.0)
        if not invalid:  # it was started as soon as it fitted, maybe after others were backfilled
            assert not np.isnan(u.view.start[job])


def test_policy_mode_out_of_range_falls_back_to_the_first_dispatcher() -> None:
    env = make("hpcgym/DispatchPolicy-v1", policies=("fcfs", "easy"))
    env.reset(seed=0)
    _, _, _, _, info = env.step(5)
    assert info["invalid_action"]


def test_stepping_a_finished_episode_does_not_raise() -> None:
    env = make()
    last = random_masked_rollout(env, seed=0)[-1]
    assert last[2]
    _obs, reward, terminated, _, info = env.step(0)
    assert terminated and info["invalid_action"] and reward == 0.0


# -------------------------------------------------------------------------- rewards
@pytest.mark.parametrize("env_id", list(hpcgym.ENV_IDS))
@pytest.mark.parametrize("warm_start", [False, True])
def test_dense_bsld_costs_sum_to_the_total_bounded_slowdown(env_id: str, warm_start: bool) -> None:
    env = make(env_id, window_jobs=80, warm_start=warm_start)
    steps = random_masked_rollout(env, seed=4)
    u = env.unwrapped
    s = u.schedule()
    total = float(bounded_slowdown(s.wait, s.runtime).sum())
    costs = sum(info["reward_terms"]["bsld"] for *_, info in steps[1:])
    assert costs == pytest.approx(total, rel=1e-9)
    final = steps[-1][3]["metrics"]
    # by default (include_all=True) the episode's metrics average every job of the window
    assert u.config.scoring.include_all
    assert_same(final, compute_metrics(s, include_all=True))
    assert final["jobs_measured"] == 80
    assert final["mean_bsld"] == pytest.approx(total / 80, rel=1e-12)
    assert final["mean_wait_s"] == pytest.approx(float(s.wait.mean()), rel=1e-12)
    assert sum(r for _, r, _, _ in steps) == pytest.approx(-final["mean_bsld"], rel=1e-9)


def test_sparse_and_wait_rewards_agree_with_the_metrics() -> None:
    kwargs = {"window_jobs": 60, "window_size": 64}
    dense = random_masked_rollout(make(**kwargs), seed=5)
    sparse = random_masked_rollout(make(reward="bsld-sparse", **kwargs), seed=5)
    wait = random_masked_rollout(make(reward="wait", reward_scale=1.0, **kwargs), seed=5)
    final = sparse[-1][3]["metrics"]
    assert all(r == 0.0 for _, r, _, _ in sparse[:-1])
    assert sparse[-1][1] == pytest.approx(-final["mean_bsld"])
    assert sum(r for _, r, _, _ in dense) == pytest.approx(sparse[-1][1], rel=1e-9)
    assert sum(r for _, r, _, _ in wait) == pytest.approx(-final["mean_wait_s"] * 60 / 3600, rel=1e-9)


def test_steady_state_metrics_on_request() -> None:
    env = make(window_jobs=300, include_all=False)
    final = random_masked_rollout(env, seed=0)[-1][3]["metrics"]
    assert final == compute_metrics(env.unwrapped.schedule())
    assert final["jobs_measured"] < 300


# --------------------------------------------------------------------- observations
def test_real_run_times_never_reach_the_observation(make_workload: Any) -> None:
    jobs = [(10.0 * i, 100.0 + 37 * (i % 5), 1 + i % 3, 1000.0, i % 2) for i in range(30)]
    other = [(s, r * 3 + 5, p, e, u) for s, r, p, e, u in jobs]
    for oracle in (False, True):
        envs = [
            DispatchEnv(
                trace=make_workload(j, 4), window_jobs=None, split="all", window_size=8, oracle=oracle
            )
            for j in (jobs, other)
        ]
        obs = [e.reset(seed=0)[0] for e in envs]
        same = True
        while all(e.sim.n_done == 0 for e in envs):  # nothing has ended: nothing reveals a run time
            same &= all(np.array_equal(obs[0][k], obs[1][k]) for k in obs[0])
            a = int(np.flatnonzero(envs[0].action_masks())[0])
            obs = [e.step(a)[0] for e in envs]
        assert same is not oracle


def test_observation_values_match_the_view() -> None:
    env = make(window_jobs=150, window_size=16)
    rng = np.random.default_rng(9)
    obs, _ = env.reset(seed=9)
    u = env.unwrapped
    for _ in range(150):
        view = u.view
        q = view.queue
        jobs = obs["jobs"]
        n = min(16, len(q))
        assert jobs[:n, 0].all() and not jobs[n:].any()
        np.testing.assert_allclose(jobs[:n, 2], view.procs[q[:n]] / 128, rtol=1e-6)
        np.testing.assert_array_equal(jobs[:n, 5], view.procs[q[:n]] <= view.free_procs)
        for row, j in zip(jobs[:n], q[:n], strict=True):  # the user's last two jobs to end
            user = u.workload.user[j]
            mine = [e for e in view.ended if u.workload.user[e] == user][-2:]
            if not mine:
                assert row[9] == row[10] == 0.0
                continue
            mine = np.array(mine)
            runtime = view.end(mine) - view.start[mine]
            est = view.estimate[mine]
            acc = np.minimum(runtime, est) / np.maximum(np.maximum(runtime, est), 1e-300)
            acc[runtime == est] = 1.0
            assert row[9] == pytest.approx(np.log1p(runtime.mean()) / np.log1p(7 * 86400), rel=1e-5)
            assert row[10] == pytest.approx(acc.mean(), rel=1e-5)
        hist = obs["histograms"]
        if len(q):
            np.testing.assert_allclose(hist[:3].sum(axis=1), 1.0, rtol=1e-5)
        if len(view.running):
            np.testing.assert_allclose(hist[3:].sum(axis=1), 1.0, rtol=1e-5)
        assert obs["system"][0] == pytest.approx(view.free_procs / 128)
        valid = np.flatnonzero(u.action_masks())
        obs, _, done, _, _ = env.step(valid[rng.integers(len(valid))])
        if done:
            break


def test_flatten_wrapper_keeps_masks_and_values() -> None:
    env = FlattenDispatchObservation(make())
    obs, _ = env.reset(seed=0)
    raw = env.unwrapped._observe()
    np.testing.assert_array_equal(obs, np.concatenate([raw[k].ravel() for k in sorted(raw)]))
    np.testing.assert_array_equal(env.action_masks(), env.unwrapped.action_masks())
    assert env.observation_space.contains(obs)


# ------------------------------------------------------------------------ rendering
def test_render_ansi() -> None:
    env = make(render_mode="ansi")
    env.reset(seed=0)
    u = env.unwrapped
    text = env.render()
    assert isinstance(text, str)
    assert f"queue={u.view.queue_length} " in text and f"free={u.view.free_procs}/128 " in text


def _machine_bar(frame: np.ndarray) -> np.ndarray:
    y0, y1 = rendering._MACHINE
    return frame[(y0 + y1) // 2, rendering._X0 : rendering._X1]


def _queue_rows(frame: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(marker colour, bar pixels) of each queue row."""
    out = []
    for row in range(rendering.QUEUE_ROWS):
        mid = rendering._QUEUE0 + row * (rendering._ROW + rendering._ROW_GAP) + rendering._ROW // 2
        out.append((frame[mid, rendering._MARK0], frame[mid, rendering._X0 : rendering._X1]))
    return out


def test_rgb_frame_of_a_hand_built_state() -> None:
    # 8 processors (30.25 px each): 1 free; job 0 (3 procs) overdue, job 1 (4 procs) ends in 60 s;
    # waiting: job 2 (4 procs, does not fit), job 3 (1 proc, fits)
    frame = rendering.render_frame(
        now=100.0,
        machine_procs=8,
        free_procs=1,
        running=np.array([1, 0]),
        queue=np.array([2, 3]),
        procs=np.array([3, 4, 4, 1]),
        start=np.array([0.0, 40.0, np.nan, np.nan]),
        prediction=np.array([50.0, 120.0, 3600.0, 10.0]),
        max_time_s=86400.0,
        done_fraction=0.25,
        queue_fraction=0.5,
    )
    assert frame.shape == rendering.FRAME_SHAPE and frame.dtype == np.uint8
    bar = _machine_bar(frame)
    ending, late = rendering.duration_colours(np.array([60.0]), 86400.0)[0], rendering.OVERDUE
    # free first (30 px), then by predicted end: the overdue job (91 px), the other one (121 px);
    # each running job's first column is darkened
    np.testing.assert_array_equal(bar[:30], np.tile(rendering.FREE, (30, 1)))
    np.testing.assert_array_equal(bar[31:121], np.tile(late, (90, 1)))
    np.testing.assert_array_equal(bar[122:], np.tile(ending, (120, 1)))
    assert (bar[30] < late).any() and (bar[121] < ending).any()
    rows = _queue_rows(frame)
    (mark0, bar0), (mark1, bar1) = rows[:2]
    np.testing.assert_array_equal(mark0, rendering.NO_FIT)
    np.testing.assert_array_equal(mark1, rendering.FITS)
    hour, short = rendering.duration_colours(np.array([3600.0, 10.0]), 86400.0)
    assert (bar0 == hour).all(axis=1).sum() == 121  # 4 processors long
    assert (bar1 == short).all(axis=1).sum() == 30
    for mark, row in rows[2:]:  # no more waiting jobs
        np.testing.assert_array_equal(mark, rendering.BACKGROUND)
        assert not (row == hour).all(axis=1).any()
    # the free line sits where the free processors end on the machine bar
    mid = rendering._QUEUE0 + 2 * (rendering._ROW + rendering._ROW_GAP)
    np.testing.assert_array_equal(frame[mid, rendering._X0 + 30], rendering.LINE)
    # the gauges: a quarter and a half of the width
    g_done = frame[rendering._DONE_GAUGE[0], rendering._X0 : rendering._X1]
    g_queue = frame[rendering._QUEUE_GAUGE[0], rendering._X0 : rendering._X1]
    assert (g_done == rendering.DONE_GAUGE).all(axis=1).sum() == 60
    assert (g_queue == rendering.QUEUE_GAUGE).all(axis=1).sum() == 121


def test_duration_colours_grow_darker_with_duration() -> None:
    colours = rendering.duration_colours(
        np.array([0.0, 10.0, 600.0, 3600.0, 86400.0, 7 * 86400.0]), 7 * 86400
    )
    brightness = colours.astype(int).sum(axis=1)
    assert (np.diff(brightness) < 0).all()


@pytest.mark.parametrize("env_id", list(hpcgym.ENV_IDS))
def test_rgb_frames_show_the_state_of_each_step(env_id: str) -> None:
    env = make(env_id, render_mode="rgb_array", window_jobs=120, warm_start=True)
    rng = np.random.default_rng(1)
    env.reset(seed=1)
    u = env.unwrapped
    scale = (rendering._X1 - rendering._X0) / u.trace.procs
    frames = 0
    for _ in range(200):
        frame = env.render()
        assert frame.shape == rendering.FRAME_SHAPE and frame.dtype == np.uint8
        view = u.view
        free_px = (_machine_bar(frame) == rendering.FREE).all(axis=1).sum()
        assert free_px == round(view.free_procs * scale)
        rows = _queue_rows(frame)
        shown = view.queue[: rendering.QUEUE_ROWS]
        for i, (mark, _bar) in enumerate(rows):
            if i >= len(shown):
                np.testing.assert_array_equal(mark, rendering.BACKGROUND)
            else:
                fits = view.procs[shown[i]] <= view.free_procs
                np.testing.assert_array_equal(mark, rendering.FITS if fits else rendering.NO_FIT)
        frames += 1
        valid = np.flatnonzero(u.action_masks())
        if env.step(valid[rng.integers(len(valid))])[2]:
            break
    assert frames > (5 if u.mode == "backfill" else 20)  # learned backfilling: only backfill choices


def test_render_without_a_mode_warns_like_gymnasium_envs() -> None:
    env = make()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode='rgb_array'"):
        assert env.unwrapped.render() is None


@pytest.mark.parametrize("mode", ["depth_array", "rgb", "ANSI"])
def test_unsupported_render_modes_name_the_accepted_ones(mode: str) -> None:
    with pytest.raises(InvalidConfigError, match=r"render_mode: .*'ansi', 'rgb_array'") as err:
        DispatchEnv(render_mode=mode, **SMALL)
    assert repr(mode) in str(err.value)


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_gymnasium_list_render_modes_collect_frames(mode: str) -> None:
    env = make(render_mode=f"{mode}_list")
    assert env.render_mode == f"{mode}_list" and env.unwrapped.render_mode == mode
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.flatnonzero(env.unwrapped.action_masks())[0])
    frames = env.render()
    assert len(frames) == 4
    kind = str if mode == "ansi" else np.ndarray
    assert all(isinstance(f, kind) for f in frames)


REGISTERED = sorted(i for i in gym.registry if i.startswith("hpcgym/") and i not in hpcgym.USER_ENV_IDS)
"""The dispatch ids (the user-side ones are tested in tests/env/test_usersubmit.py)."""


def test_registered_ids_are_the_documented_ones() -> None:
    assert REGISTERED == sorted(hpcgym.ENV_IDS)
    every = sorted(i for i in gym.registry if i.startswith("hpcgym/"))
    assert every == sorted([*hpcgym.ENV_IDS, *hpcgym.USER_ENV_IDS])


@pytest.mark.parametrize("render_mode", [None, "ansi", "rgb_array"])
@pytest.mark.parametrize("env_id", REGISTERED)
def test_env_checkers_pass_in_every_render_mode(env_id: str, render_mode: str | None) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = make(env_id, render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a wrong render return type is only a warning in both checkers
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        gym_check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(env.unwrapped, warn=True, skip_render_check=False)
    if render_mode is not None:
        env.reset(seed=0)
        frame = env.render()
        assert isinstance(frame, str if render_mode == "ansi" else np.ndarray)


# ------------------------------------------------------------------- episodes
def test_splits_are_chronological_and_windows_stay_inside_them() -> None:
    ranges = {}
    for split in ("train", "validation", "test"):
        env = make(split=split)
        u = env.unwrapped
        lo, hi = u.job_range
        ranges[split] = (lo, hi)
        for seed in range(20):
            env.reset(seed=seed)
            assert lo <= u.episode_offset and u.episode_offset + u.window_jobs <= hi
        assert u.window_offsets(3)[0] == lo and u.window_offsets(3)[-1] == hi - u.window_jobs
    assert ranges["train"][0] == 0 and ranges["train"][1] == ranges["validation"][0]
    assert ranges["validation"][1] == ranges["test"][0] and ranges["test"][1] == 8943
    assert make(job_range=(100, 200), window_jobs=100).unwrapped.window_offsets(5) == [100]


def test_explicit_window_and_whole_range_episode() -> None:
    env = make(window_jobs=None, job_range=(500, 560), window_size=None)
    env.reset(options={"offset": 500})
    u = env.unwrapped
    assert len(u.workload) == 60 and u.window_size == 60
    np.testing.assert_array_equal(u.workload.job_id, u.trace.job_id[500:560])
    with pytest.raises(InvalidConfigError, match="offset"):
        env.reset(options={"offset": 10**6})
    with pytest.raises(InvalidConfigError, match="'ofset'"):
        env.reset(options={"ofset": 500})


def test_warm_start_begins_with_the_replay_state() -> None:
    from hpcgym.baselines import make_policy, preset_predictor
    from hpcgym.sim import Simulator

    env = make(window_jobs=100, warm_start=True, warm_policy="easy", split="all")
    trace = env.unwrapped.trace
    full = Simulator(trace, predictor=preset_predictor("easy")).run(make_policy("easy"))
    for offset in (0, 3000, 7000):
        env.reset(options={"offset": offset})
        u = env.unwrapped
        t0 = trace.submit[offset]
        n_ctx = len(u.workload) - 100
        ctx_ids = u.workload.job_id[:n_ctx]
        before = np.arange(offset)
        expect_running = before[(full.start[:offset] < t0) & (full.end[:offset] >= t0)]
        expect_waiting = before[full.start[:offset] >= t0]
        np.testing.assert_array_equal(
            np.sort(ctx_ids), np.sort(trace.job_id[np.r_[expect_running, expect_waiting]])
        )
        started = u.sim.start_time[:n_ctx]
        ran = ~np.isnan(started) & (started < t0)
        np.testing.assert_array_equal(
            np.sort(u.workload.job_id[:n_ctx][ran]), np.sort(trace.job_id[expect_running])
        )
        assert len(u.schedule().start) == 100


# ------------------------------------------------------------------- vector envs
def test_make_vec_sync_and_async() -> None:
    for mode in ("sync", "async"):
        venv = gym.make_vec("hpcgym/Dispatch-v1", num_envs=2, vectorization_mode=mode, **SMALL)
        obs, info = venv.reset(seed=[1, 2])
        assert obs["jobs"].shape == (2, 12, len(JOB_FEATURES))
        for _ in range(30):
            actions = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
            obs, reward, _terminated, _truncated, info = venv.step(actions)
            assert reward.shape == (2,)
        venv.close()


@pytest.mark.parametrize("vec_env", ["DummyVecEnv", "SubprocVecEnv"])
@pytest.mark.parametrize("env_id", REGISTERED)
def test_sb3_make_vec_env_builds_and_steps_every_registered_id(env_id: str, vec_env: str) -> None:
    from stable_baselines3.common import vec_env as sb3_vec
    from stable_baselines3.common.env_util import make_vec_env

    cls = getattr(sb3_vec, vec_env)
    # SubprocVecEnv starts fresh interpreters (forkserver): the "module:" prefix, Gymnasium's way,
    # makes each import hpcgym (which registers the ids) before looking the id up
    name = env_id if vec_env == "DummyVecEnv" else f"hpcgym:{env_id}"
    # as a user writes it: no render_mode, so make_vec_env asks for "rgb_array"
    venv = make_vec_env(name, n_envs=2, seed=5, vec_env_cls=cls, env_kwargs=SMALL)
    try:
        assert venv.render_mode == "rgb_array"
        assert venv.get_attr("render_mode") == ["rgb_array", "rgb_array"]
        obs = venv.reset()
        assert obs["jobs"].shape == (2, 12, len(JOB_FEATURES))
        rng = np.random.default_rng(5)
        invalid = 0
        for _ in range(12):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, reward, _done, infos = venv.step(actions)
            assert reward.shape == (2,) and np.isfinite(reward).all()
            invalid += sum(info["invalid_action"] for info in infos)
        assert invalid == 0
        frames = venv.get_images()
        assert len(frames) == 2 and all(f.shape == rendering.FRAME_SHAPE for f in frames)
        tiled = venv.render()
        assert tiled.dtype == np.uint8 and tiled.size == 2 * frames[0].size
    finally:
        venv.close()


SUBPROC_SCRIPT = """
import numpy as np
import hpcgym  # children re-import this script's imports, which registers the ids there too
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

if __name__ == "__main__":
    venv = make_vec_env("hpcgym/Dispatch-v1", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv,
                        env_kwargs={"window_jobs": 40, "window_size": 12})
    venv.reset()
    for _ in range(5):
        masks = venv.env_method("action_masks")
        venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    print(venv.render().shape, venv.get_attr("render_mode"))
    venv.close()
"""


def test_sb3_subproc_vec_env_with_the_plain_id_from_a_script(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "train.py"
    script.write_text(SUBPROC_SCRIPT)
    root = str(Path(hpcgym.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(352, 256, 3) ['rgb_array', 'rgb_array']"


def test_sync_and_async_vector_envs_of_wrapped_envs_agree() -> None:
    fns = [lambda: FlattenDispatchObservation(make()) for _ in range(2)]
    outs = []
    for cls in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        venv = cls(fns)
        obs, info = venv.reset(seed=3)
        trace = [obs]
        for _ in range(25):
            obs, reward, *_, info = venv.step(np.array([np.flatnonzero(m)[-1] for m in info["action_mask"]]))
            trace += [obs, reward]
        venv.close()
        outs.append(trace)
    assert_same(outs[0], outs[1])


def test_the_env_reference_documents_every_argument_and_its_examples_run() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "ENV.md").read_text()
    for name in argument_names():
        assert f"| `{name}` |" in text, f"{name} is missing from the arguments table of docs/ENV.md"
    from hpcgym.env import rllib_available

    blocks = text.split("```python\n")[2:]  # the first needs sb3-contrib: tests/agents/test_agents.py
    assert blocks
    for block in blocks:
        if "ray.rllib" in block and not rllib_available():
            continue  # the RLlib example: `make rllib-test` has RLlib (tests/env/test_rllib.py)
        exec(compile(block.split("```", 1)[0], "docs/ENV.md", "exec"), {})
