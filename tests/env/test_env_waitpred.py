"""The ``predicted_wait`` observation: 003's queue-wait predictors run online in the env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import examples
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import hpcgym  # noqa: F401 - registers the environment ids
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv
from hpcgym.predict import OnlineWaitPredictor, nearest_average, parse_wait_predictor, qbets_bound
from hpcgym.workloads import Workload, load_default

PARTS = ("jobs", "histograms", "system", "predicted_wait")


def rollout(env: DispatchEnv, steps: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Observations of a seeded random masked policy (stops at the episode's end)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        valid = np.flatnonzero(env.action_masks())
        obs, _, done, _, _ = env.step(valid[rng.integers(len(valid))])
        out.append(obs)
        if done:
            break
    return out


def test_absent_by_default() -> None:
    env = gym.make("hpcgym/Dispatch-v1")
    assert "predicted_wait" not in env.observation_space.spaces
    assert set(env.observation_space.spaces) == {"jobs", "histograms", "system"}


def test_present_when_asked_with_named_columns_in_bounds() -> None:
    env = DispatchEnv(observations=PARTS, window_size=16, window_jobs=200)
    assert env.observation_space["predicted_wait"].shape == (16, 2)
    assert env.observation_features["predicted_wait"] == ("predicted_wait", "predicted_remaining")
    seen = np.concatenate([o["predicted_wait"] for o in rollout(env, 400)])
    assert seen.min() >= 0.0 and seen.max() <= 1.0
    assert (seen[:, 0] > 0).any()  # jobs predicted once a history exists
    assert (seen[:, 1] <= seen[:, 0] + 1e-6).all()  # remaining never exceeds the prediction
    p = env.observation_builders["predicted_wait"].predictor
    assert p.method == "ibl" and len(p.history()) > 0


@pytest.mark.parametrize("spec", ["ibl", "qbets", "apq:history=200,weight_refresh=5"])
def test_check_env_passes(spec: str) -> None:
    env = DispatchEnv(observations=PARTS, wait_predictor=spec, window_size=8, window_jobs=64)
    check_env(env, skip_render_check=True)
    obs = rollout(env, 150)
    assert all(env.observation_space.contains(o) for o in obs)


def test_same_seed_same_observations() -> None:
    a = rollout(DispatchEnv(observations=PARTS, window_jobs=150), 200, seed=3)
    b = rollout(DispatchEnv(observations=PARTS, window_jobs=150), 200, seed=3)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x["predicted_wait"], y["predicted_wait"])


def _shuffle_after(w: Workload, t: float, seed: int) -> Workload:
    """``w`` with every job submitted after ``t`` given another such job's size, run time, estimate, user."""
    future = np.flatnonzero(w.submit > t)
    perm = np.random.default_rng(seed).permutation(future)
    cols = {c: getattr(w, c).copy() for c in ("runtime", "procs_req", "estimate", "user")}
    for c in cols.values():
        c[future] = c[perm]
    return Workload.from_columns(
        w.submit,
        cols["runtime"],
        cols["procs_req"],
        cols["estimate"],
        user=cols["user"],
        procs=w.procs,
        name=w.name,
    )


@pytest.mark.parametrize("spec", ["ibl", "apq:history=300,weight_refresh=3", "qbets"])
def test_never_reads_the_future(spec: str) -> None:
    w = load_default()
    w = Workload.from_columns(
        w.submit[:400], w.runtime[:400], w.procs_req[:400], w.estimate[:400], user=w.user[:400], procs=w.procs
    )
    cut = float(w.submit[250])
    other = _shuffle_after(w, cut, seed=1)
    assert not np.array_equal(other.runtime, w.runtime)
    runs = []
    for trace in (w, other):
        env = DispatchEnv(
            trace=trace,
            observations=PARTS,
            wait_predictor=spec,
            window_jobs=None,
            split="all",
            every_event=True,
        )
        obs, _ = env.reset(seed=0)
        seen = []
        while env.view.now <= cut:
            seen.append(obs["predicted_wait"])
            fits = np.flatnonzero(env.action_masks()[:-1])
            obs, *_ = env.step(fits[0] if len(fits) else env.action_space.n - 1)  # FCFS-like
        runs.append((seen, env.observation_builders["predicted_wait"].predictor))
    (a, pa), (b, pb) = runs
    assert len(a) == len(b) > 100
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    before = np.flatnonzero((pa.seen >= 0) & (pa.seen <= cut))
    assert len(before) > 200 and (pa.predicted[before] > 0).sum() > 100
    np.testing.assert_array_equal(pa.predicted[before], pb.predicted[before])


def test_online_predictions_by_hand() -> None:
    # 4 processors: job 0 runs at once, job 1 waits 10 s behind it, job 2 (another user) is predicted at 12 s
    start = np.array([0.0, 10.0, np.nan])
    size = np.array([4, 4, 1])
    estimate = np.array([10.0, 10.0, 5.0])
    submit = np.array([0.0, 0.0, 12.0])
    nan = np.full(3, np.nan)
    for spec in ("qbets", "ibl:neighbors=2", "apq:min_pts=1,ridge_min_jobs=2"):
        p = OnlineWaitPredictor.from_spec(spec, procs=4)
        p.reset(3, np.array([0, 0, 1]))
        predicted = p.update(0.0, np.array([0, 1]), np.array([], np.int64), size, estimate, submit, nan)
        np.testing.assert_array_equal(predicted, [0, 1])
        assert p.predicted[0] == p.predicted[1] == 0.0  # no history yet
        p.update(12.0, np.array([2]), np.array([1]), size, estimate, submit, start)
        np.testing.assert_array_equal(p.history(), [0, 1])  # in start order, waits 0 and 10 s
        if spec == "qbets":
            assert p.predicted[2] == 10.0  # the bound on 2 waits is the largest
            continue
        # Table II at 12 s: size 1, estimate 5, empty queue, job 1 running (4 procs, 10 s, 2 s elapsed)
        np.testing.assert_array_equal(p._summary[2], [1, 5, 0, 0, 0, 4, 10, 2, 0, 0, 0, 0, 0, 0, 0, 0])
        if spec.startswith("ibl"):
            assert 0.0 < p.predicted[2] < 10.0  # a weighted average of the two waits
        else:  # SDM on a window of one job, the regression or the weighted average
            assert 0.0 <= p.predicted[2] <= 10.0 and p.case[2] in (0, 1, 2)
    assert qbets_bound(np.array([0.0, 10.0])) == 10.0
    assert nearest_average(np.array([0.1, 0.2]), np.array([0.0, 10.0]), 1) == 0.0


@pytest.mark.parametrize(
    ("spec", "word"),
    [("nope", "method"), ("ibl:neighbours=3", "neighbours"), ("qbets:history=0", "history"), (3, "text")],
)
def test_bad_wait_predictor_names_the_parameter(spec: object, word: str) -> None:
    with pytest.raises(InvalidConfigError, match="wait_predictor") as err:
        DispatchEnv(observations=PARTS, wait_predictor=spec)
    assert word in str(err.value)
    with pytest.raises(InvalidConfigError):
        parse_wait_predictor(spec)  # type: ignore[arg-type]


def test_compiled_ibl_equals_the_batch_functions() -> None:
    from hpcgym.predict import ibl_distances
    from hpcgym.predict.waitpred import _ibl_predict

    rng = np.random.default_rng(5)
    for m in (1, 2, 7, 50):
        summary = rng.integers(0, 4, (m + 1, 16)).astype(float) * rng.choice([0.0, 1.0, 3600.0], 16)
        waits = rng.exponential(3600.0, m + 1)
        h = np.arange(m)
        for k in (1, 3, 10):
            expected = nearest_average(ibl_distances(summary[h], summary[m]), waits[h], k)
            assert _ibl_predict(summary, h, m, waits, k) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=examples(15), deadline=None)
@given(data=st.data(), spec=st.sampled_from(["ibl", "qbets", "apq:history=50,min_pts=1"]))
def test_invariants_on_random_workloads(data: st.DataObject, spec: str) -> None:
    from conftest import random_workloads

    w = data.draw(random_workloads())
    env = DispatchEnv(
        trace=w, observations=PARTS, wait_predictor=spec, window_jobs=None, split="all", every_event=True
    )
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        assert env.observation_space.contains(obs)
        fits = np.flatnonzero(env.action_masks()[:-1])
        obs, _, done, _, _ = env.step(fits[0] if len(fits) else env.action_space.n - 1)
    p = env.observation_builders["predicted_wait"].predictor
    start = env.view.start
    # every job predicted, at or after its submission and at or before its start
    assert (p.seen >= 0).all() and (p.seen >= w.submit).all() and (p.seen <= start).all()
    h = p.history()
    assert np.all(np.diff(start[h]) >= 0)  # the history in start order
    assert (p.predicted >= 0).all()  # APQ keeps a regression only when >= 0
    if not spec.startswith(
        "apq"
    ):  # averages and order statistics of learnt waits (a regression may exceed them)
        assert (p.predicted <= (start - p.seen).max() + 1e-9).all()
