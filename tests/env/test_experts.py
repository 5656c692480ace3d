"""Experts (hpcgym.env.experts): a dispatcher's actions through the environment are its schedule."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import make_policy
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.env import DispatchEnv
from hpcgym.env.experts import Expert
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, load_default


@pytest.fixture(scope="module")
def window() -> Workload:
    return load_default().window(400, 2500)


def play(env: DispatchEnv, expert: Expert) -> DispatchEnv:
    env.reset(options={"offset": 0})
    done = False
    while not done:
        a = expert()
        assert env.action_masks()[a], "the expert picked a masked action"
        _, _, done, _, info = env.step(a)
        assert not info["invalid_action"]
    return env


@pytest.mark.parametrize("policy", ["easy", "f2-bf", "saf-bf", "sjf", "fcfs"])
@pytest.mark.parametrize("backfill", ["none", "easy"])
def test_in_job_mode_the_expert_schedules_as_the_dispatcher(
    window: Workload, policy: str, backfill: str
) -> None:
    env = DispatchEnv(trace=window, window_jobs=None, split="all", window_size=None, backfill=backfill)
    play(env, Expert(env, policy))
    ref = Simulator(window).run(make_policy(policy))  # walltime: the environment's predictor
    np.testing.assert_array_equal(env.schedule().start, ref.start)


def test_with_few_jobs_shown_the_expert_counts_the_decisions_beyond_them(window: Workload) -> None:
    env = DispatchEnv(trace=window, window_jobs=None, split="all", window_size=2)
    expert = Expert(env, "saf-bf")
    play(env, expert)
    assert expert.off_window > 0  # the smallest job is often not among the two oldest
    full = DispatchEnv(trace=window, window_jobs=None, split="all", window_size=None)
    play(full, Expert(full, "saf-bf"))
    assert not np.array_equal(env.schedule().start, full.schedule().start)


def test_in_policy_mode_the_expert_picks_its_own_index(window: Workload) -> None:
    env = DispatchEnv(trace=window, window_jobs=None, split="all", mode="policy", policies=("easy", "f2-bf"))
    expert = Expert(env, "F2-BF")
    assert expert() == 1
    play(env, expert)
    ref = Simulator(window).run(make_policy("f2-bf"))
    np.testing.assert_array_equal(env.schedule().start, ref.start)


def test_an_expert_outside_the_policies_or_unknown_is_an_error(window: Workload) -> None:
    env = DispatchEnv(trace=window, window_jobs=None, split="all", mode="policy", policies=("easy",))
    with pytest.raises(InvalidConfigError, match="not one of the environment's policies"):
        Expert(env, "f2-bf")
    with pytest.raises(UnknownNameError):
        Expert(DispatchEnv(trace=window, window_jobs=None, split="all"), "no-such-dispatcher")


@pytest.mark.parametrize("order", ["easy", "f2-bf"])
def test_in_learned_backfilling_the_expert_is_the_order_and_schedules_as_it(
    window: Workload, order: str
) -> None:
    env = DispatchEnv(trace=window, window_jobs=None, split="all", mode="backfill", order=order)
    with pytest.raises(InvalidConfigError, match="the environment's order"):
        Expert(env, "saf-bf")
    play(env, Expert(env, order))
    np.testing.assert_array_equal(env.schedule().start, Simulator(window).run(make_policy(order)).start)
