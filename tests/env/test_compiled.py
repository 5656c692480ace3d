"""The single environment's compiled steps give exactly what its Python steps give."""

from __future__ import annotations

import copy
import pickle
from importlib import resources
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv

SMALL = {"window_jobs": 20, "window_size": 8}
EURORA = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))
CONFIGS: list[dict[str, Any]] = [
    {},
    {"warm_start": True, "split": "test"},
    {"predictor": "real", "oracle": True, "reward": "bsld-sparse"},
    {"reward": "wait", "kill_at_estimate": True, "histogram_duration": "estimate", "invalid_penalty": 0.5},
    {"trace": EURORA, "split": "all", "window_jobs": 30},
]


def same(x: Any, y: Any) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, np.ndarray):
        return (
            isinstance(y, np.ndarray)
            and x.dtype == y.dtype
            and bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
        )
    if isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y):
        return True
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    return type(x) is type(y) and bool(x == y)


def play(env: DispatchEnv, seed: int, actions: list[int], peek_at: int = -1) -> list[Any]:
    """Every output of an episode under ``actions`` (repeated); read ``env.sim`` at step ``peek_at``."""
    out: list[Any] = [env.reset(seed=seed)]
    for t, a in enumerate(actions):
        if t == peek_at:
            assert env.sim is not None and len(env.view.queue) >= 0
        step = env.step(a)
        out.append(step)
        if step[2]:
            out.append(env.step(a))  # a finished episode: flagged invalid, nothing changes
            break
    out.append(env.schedule().start)
    return out


@pytest.mark.parametrize("kwargs", CONFIGS, ids=lambda kw: "-".join(map(str, kw)) or "default")
@pytest.mark.parametrize("peek_at", [-1, 7])
def test_compiled_steps_match_python_steps(kwargs: dict[str, Any], peek_at: int) -> None:
    cfg = {**SMALL, **kwargs}
    fast, slow = DispatchEnv(**cfg), DispatchEnv(**cfg, compiled=False)
    assert fast.compiled and not slow.compiled
    rng = np.random.default_rng(1)
    actions = [int(a) for a in rng.integers(-1, cfg["window_size"] + 2, size=5000)]
    for seed in (0, 1):
        got = play(fast, seed, actions, peek_at)
        want = play(slow, seed, actions)
        assert len(got) == len(want) and all(same(a, b) for a, b in zip(got, want, strict=True))
        assert fast._fast == (peek_at < 0)


def test_pickled_and_copied_mid_episode_go_on_alike() -> None:
    env = DispatchEnv(**SMALL)
    env.reset(seed=3)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    for _ in range(30):
        a = int(np.flatnonzero(env.action_masks())[-1])
        want = env.step(a)
        for c in clones:
            assert same(c.step(a), want)


def test_compiled_true_names_the_parameter() -> None:
    with pytest.raises(InvalidConfigError, match="mode"):
        DispatchEnv(mode="policy", compiled=True, **SMALL)
    with pytest.raises(InvalidConfigError, match="compiled"):
        DispatchEnv(compiled="fast", **SMALL)  # type: ignore[arg-type]
    assert not DispatchEnv(backfill="easy", **SMALL).compiled


@given(seed=st.integers(0, 10**6), nq=st.integers(0, 30), nr=st.integers(0, 30), oracle=st.booleans())
@settings(max_examples=60, deadline=None)
def test_memoised_kernels_give_the_builders_values(seed: int, nq: int, nr: int, oracle: bool) -> None:
    """The compiled step's kernels with per-episode memos (scaled estimates and predictions,
    duration bins) write exactly what the builders' kernels write."""
    from hpcgym.env._kernels import job_window, time_norms
    from hpcgym.predict.histograms import NO_BINS, duration_bins, histograms

    rng = np.random.default_rng(seed)
    n, users, bins, inv = 80, 5, 7, 1.0 / np.log1p(86400.0 * 7)
    jobs = rng.permutation(n)
    queue, running = jobs[:nq].astype(np.int64), jobs[nq : nq + nr].astype(np.int64)
    now = 1e5
    submit, start = now - rng.exponential(5e3, n), now - rng.exponential(5e3, n)
    estimate = rng.choice([0.0, 1.0, 60.0, 3600.0, 1e7, np.nan], n) * rng.random(n)
    prediction, runtime = estimate * rng.random(n), rng.exponential(3e3, n)
    size_bin = rng.integers(0, bins, n)
    want, got = np.zeros((6, bins), np.float32), np.zeros((6, bins), np.float32)
    histograms(want, queue, running, now, size_bin, prediction, submit, start, inv, NO_BINS)
    binned = np.zeros(n, np.int64)
    duration_bins(binned, prediction, inv, bins)
    histograms(got, queue, running, now, size_bin, prediction * np.nan, submit, start, inv, binned)
    np.testing.assert_array_equal(got, want)
    fits, procs, user = rng.random(nq) < 0.5, rng.integers(1, 9, n), rng.integers(0, users, n)
    recent, accuracy = rng.exponential(3e3, users), rng.random(users)
    rows = [np.zeros((8, 12), np.float32) for _ in range(2)]
    scratch = [np.zeros(users, np.int64) for _ in range(3)]
    common = (queue, fits, running, now, 64, procs, estimate, prediction, submit, user, runtime, oracle, inv)
    job_window(rows[0], *common, *scratch, recent, accuracy, np.zeros(0), np.zeros(0))
    norms = np.zeros(n), np.zeros(n)
    time_norms(norms[0], estimate, inv)
    time_norms(norms[1], prediction, inv)
    job_window(rows[1], *common, *scratch, recent, accuracy, *norms)
    np.testing.assert_array_equal(rows[1], rows[0])
