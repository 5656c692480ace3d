"""Reference dispatchers acting through the environment give exactly their direct schedules."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest
from conftest import CP_PRESETS, examples, quick
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy, policy_specs, preset_predictor
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv, DispatcherPolicy, run_via_env
from hpcgym.sim import Schedule, Simulator, compute_metrics
from hpcgym.workloads import Workload, load_default

PRESETS = [quick(p) for p in policy_specs()]
WINDOWS = [(0, 300), (2500, 400), (7000, 500)]


@pytest.fixture(scope="module")
def trace() -> Workload:
    return load_default()


def direct(w: Workload, policy: str, **kwargs: Any) -> Schedule:
    return Simulator(w, predictor=preset_predictor(policy), **kwargs).run(make_policy(policy))


def assert_metrics_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], dict):
            assert_metrics_equal(a[k], b[k])
        elif isinstance(a[k], float) and np.isnan(a[k]):
            assert np.isnan(b[k]), k
        else:
            assert a[k] == b[k], k


def assert_same_schedule(via: Schedule, ref: Schedule) -> None:
    np.testing.assert_array_equal(via.start, ref.start)
    np.testing.assert_array_equal(via.end, ref.end)
    np.testing.assert_array_equal(via.first_prediction, ref.first_prediction)
    assert via.prediction_changes == ref.prediction_changes
    assert via.decisions == ref.decisions
    assert via.predictor == ref.predictor
    for include_all in (False, True):
        assert_metrics_equal(
            compute_metrics(via, include_all=include_all), compute_metrics(ref, include_all=include_all)
        )


# a CP decision is a solver call: the CP presets run on one short window
CASES = [(p, o, j) for p in PRESETS for o, j in WINDOWS if p.split(":")[0] not in CP_PRESETS]
CASES += [(p, 0, 40) for p in PRESETS if p.split(":")[0] in CP_PRESETS]


@pytest.mark.parametrize(("policy", "offset", "jobs"), CASES)
def test_every_preset_through_the_env_equals_its_direct_run(
    trace: Workload, policy: str, offset: int, jobs: int
) -> None:
    w = trace.window(jobs, offset)
    assert_same_schedule(run_via_env(w, policy), direct(w, policy))


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_kill_at_estimate_and_other_predictors_through_the_env(trace: Workload, policy: str) -> None:
    w = trace.window(400, 4000)
    ref = Simulator(w, predictor=preset_predictor(policy, "real"), kill_at_estimate=True).run(
        make_policy(policy)
    )
    assert_same_schedule(run_via_env(w, policy, "real", kill_at_estimate=True), ref)


@settings(max_examples=examples(25))
@given(data=st.data())
def test_random_workloads_through_the_env(data: st.DataObject, workload_strategy: Any) -> None:
    w = data.draw(workload_strategy())
    policy = data.draw(st.sampled_from(PRESETS))
    assert_same_schedule(run_via_env(w, policy), direct(w, policy))


def test_dispatcher_policy_in_a_sampled_episode_matches_the_same_window(trace: Workload) -> None:
    env = DispatchEnv(window_jobs=200, window_size=None, split="test", predictor_of="easy")
    agent = DispatcherPolicy(make_policy("easy"), env)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.predict(obs)[0])
            assert not info["invalid_action"]
        ref = direct(trace.window(200, env.episode_offset), "easy")
        np.testing.assert_array_equal(env.schedule().start, ref.start)
        assert_metrics_equal(info["metrics"], compute_metrics(ref, include_all=True))


def test_backfill_mode_choosing_the_oldest_job_is_easy(trace: Workload) -> None:
    """The agent as EASY's priority function: always the oldest job gives EASY itself."""
    for offset, jobs in WINDOWS:
        env = DispatchEnv(trace=trace.window(jobs, offset), window_jobs=None, split="all", backfill="easy")
        env.reset(options={"offset": 0})
        done = False
        while not done:
            _, _, done, _, info = env.step(0)
            assert not info["invalid_action"]
        np.testing.assert_array_equal(env.schedule().start, direct(trace.window(jobs, offset), "easy").start)


def test_policy_mode_always_choosing_one_dispatcher_is_that_dispatcher(trace: Workload) -> None:
    w = trace.window(400, 1000)
    for index, name in enumerate(("fcfs", "sjf-list", "easy")):
        env = DispatchEnv(
            trace=w, window_jobs=None, split="all", mode="policy", policies=("fcfs", "sjf-list", "easy")
        )
        env.reset(options={"offset": 0})
        done = False
        while not done:
            _, _, done, _, info = env.step(index)
            assert not info["invalid_action"]
        ref = Simulator(w).run(make_policy(name))
        np.testing.assert_array_equal(env.schedule().start, ref.start)
        assert env.schedule().decisions == ref.decisions


@pytest.mark.parametrize("offset", [1500, 4000, 8000])
def test_warm_start_continues_the_full_replay_exactly(trace: Workload, offset: int) -> None:
    """FCFS never lets a later job delay an earlier one, so the window of a warm-started
    episode replays exactly as in the full replay."""
    full = direct(trace, "fcfs")
    env = DispatchEnv(warm_start=True, warm_policy="fcfs", window_jobs=300, window_size=None, split="all")
    agent = DispatcherPolicy(make_policy("fcfs"), env)
    obs, _ = env.reset(options={"offset": offset})
    assert len(env.workload) > 300  # context jobs were running or waiting
    done = False
    while not done:
        obs, _, done, _, _info = env.step(agent.predict(obs)[0])
    np.testing.assert_array_equal(env.schedule().start, full.start[offset : offset + 300])


def test_adapter_needs_the_chosen_job_to_be_shown(make_workload: Any) -> None:
    # a machine-wide job runs while short jobs queue; SJF then picks the last one to arrive
    jobs = [(0.0, 100.0, 2, 100.0)] + [(float(i), 10.0, 1, 100.0 - i) for i in range(1, 6)]
    env = DispatchEnv(trace=make_workload(jobs, 2), window_jobs=None, split="all", window_size=2)
    agent = DispatcherPolicy(make_policy("sjf-list"), env)
    obs, _ = env.reset(options={"offset": 0})
    with pytest.raises(InvalidConfigError, match="window_size=None"):
        for _ in range(50):
            obs, *_ = env.step(agent.predict(obs)[0])


@pytest.mark.parametrize("policy", ["fcfs", "easy", "sjf-list"])
def test_cli_simulate_via_env_prints_the_same_json(policy: str) -> None:
    rows = []
    for extra in ([], ["--via-env"]):
        out = io.StringIO()
        with redirect_stdout(out):
            assert (
                cli_main(
                    ["simulate", "--policy", policy, "--jobs", "1500", "--offset", "200", "--json", *extra]
                )
                == 0
            )
        rows.append(json.loads(out.getvalue()))
    timing = {"sim_seconds", "jobs_per_second"}
    assert {k for k in rows[0] if rows[0][k] != rows[1][k]} <= timing
    assert rows[0].keys() == rows[1].keys()


def test_dispatchers_that_want_every_event_through_the_env(trace: Workload) -> None:
    from hpcgym.baselines import EasyBackfilling

    w = trace.window(600, 3000)
    direct_easy = EasyBackfilling(record_reservations=True)
    ref = Simulator(w).run(direct_easy)
    via_easy = EasyBackfilling(record_reservations=True)
    env = DispatchEnv(trace=w, window_jobs=None, split="all", window_size=None, every_event=True)
    agent = DispatcherPolicy(via_easy, env)
    obs, _ = env.reset(options={"offset": 0})
    done = False
    while not done:
        obs, _, done, _, info = env.step(agent.predict(obs)[0])
        assert not info["invalid_action"]
    assert_same_schedule(env.schedule(), ref)
    np.testing.assert_array_equal(via_easy.first_reservation, direct_easy.first_reservation)


@pytest.mark.expensive
@pytest.mark.parametrize("policy", PRESETS)
def test_every_preset_through_the_env_on_the_whole_bundled_trace(trace: Workload, policy: str) -> None:
    assert_same_schedule(run_via_env(trace, policy), direct(trace, policy))


@pytest.mark.expensive
@pytest.mark.parametrize("policy", ["fcfs", "easy", "easy++"])
def test_full_sdsc_sp2_through_the_env(traces_dir: Any, policy: str) -> None:
    from hpcgym.workloads import read_swf

    w = read_swf(traces_dir / "SDSC-SP2-1998-4.2-cln.swf.gz")
    assert_same_schedule(run_via_env(w, policy), direct(w, policy))
