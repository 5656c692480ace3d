"""Learned backfilling (``mode="backfill"``): the preset's schedule, the mask, the API, the fallback."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv, FlattenDispatchObservation
from hpcgym.env.backfill import backfill_orders, expert_action
from hpcgym.env.vector import compiled_obstacle
from hpcgym.sim import Schedule, Simulator
from hpcgym.workloads import Workload, load_default

ENV_ID = "hpcgym/DispatchLearnedBackfill-v1"
SMALL = {"window_jobs": 80, "window_size": 12}
# the presets whose schedules the first-eligible agent reproduces, on the bundled trace
PRESETS = ["easy", "f2-bf", "f1-bf", "saf-bf", "sjf", "easy-sjbf", "easy++", "x2", "wfp3-bf", "random-fit-bf"]
WINDOWS = [(0, 300), (2500, 400), (7000, 500)]


@pytest.fixture(scope="module")
def trace() -> Workload:
    return load_default()


def play(env: Any, agent: Any) -> tuple[Schedule, int]:
    """The schedule of one whole-workload episode under ``agent(env) -> action``, and its steps."""
    env.reset(options={"offset": 0})
    steps, done = 0, False
    while not done:
        _, _, done, _, info = env.step(agent(env))
        assert not info["invalid_action"]
        steps += 1
    return env.unwrapped.schedule(), steps


def whole(w: Workload, order: str, **kwargs: Any) -> DispatchEnv:
    """The environment replaying all of ``w`` as one episode, planning with the preset's predictor."""
    return DispatchEnv(
        trace=w, window_jobs=None, split="all", mode="backfill", order=order, predictor_of=order, **kwargs
    )


def direct(w: Workload, policy: str) -> Schedule:
    return Simulator(w, predictor=preset_predictor(policy)).run(make_policy(policy), progress=False)


def assert_same_schedule(a: Schedule, b: Schedule) -> None:
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.end, b.end)
    np.testing.assert_array_equal(a.placement_nodes, b.placement_nodes)
    assert a.decisions == b.decisions


# ------------------------------------------------------------- the preset's own schedule
@pytest.mark.parametrize("order", PRESETS)
@pytest.mark.parametrize(("offset", "jobs"), WINDOWS)
def test_the_first_eligible_job_every_time_gives_the_presets_schedule(
    trace: Workload, order: str, offset: int, jobs: int
) -> None:
    w = trace.window(jobs, offset)
    schedule, steps = play(whole(w, order, window_size=64), expert_action)
    assert_same_schedule(schedule, direct(w, order))
    assert steps >= 1


@pytest.mark.parametrize("order", ["easy", "sjf", "wfp3-bf"])
def test_the_agent_had_real_choices_and_other_choices_give_other_schedules(
    trace: Workload, order: str
) -> None:
    w = trace.window(400, 2500)
    env = whole(w, order, window_size=64)
    ref, steps = play(env, expert_action)
    assert steps > 20  # many decisions offered a backfill choice
    stop = env.action_space.n - 1

    def last(e: Any) -> int:  # the last eligible job (every step has at least one)
        return int(np.flatnonzero(e.unwrapped.action_masks()[:-1])[-1])

    # the last eligible job instead of the first, or never backfilling: another schedule
    for agent in (last, lambda e: stop):
        schedule, _ = play(env, agent)
        assert not np.array_equal(schedule.start, ref.start)


@pytest.mark.parametrize(("order", "key"), [("easy", "arrival"), ("easy-sjbf", "prediction")])
def test_picking_by_the_presets_backfill_order_among_the_masked_slots_gives_its_schedule(
    trace: Workload, order: str, key: str
) -> None:
    """Independent of the slot order: the test ranks the allowed jobs by the preset's own backfill order."""
    w = trace.window(500, 7000)

    def first_in_backfill_order(env: Any) -> int:
        u = env.unwrapped
        allowed = np.flatnonzero(u.action_masks()[:-1])
        if not len(allowed):
            return u.action_space.n - 1
        jobs = u._bf.slots[allowed]  # arrival order is job index order (a workload is sorted by submit)
        if key == "arrival":
            return int(allowed[np.argmin(jobs)])
        return int(allowed[np.lexsort((jobs, u.view.prediction[jobs]))[0]])

    schedule, steps = play(whole(w, order, window_size=None), first_in_backfill_order)
    assert steps > 20
    assert_same_schedule(schedule, direct(w, order))


@pytest.mark.parametrize("order", ["easy", "f2-bf", "sjf"])
def test_the_presets_schedule_on_multi_node_machines_with_their_placements(order: str) -> None:
    from importlib import resources

    from hpcgym.machine import Machine, make_machine
    from hpcgym.workloads import fit_workload, read_jobs

    sample = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))
    eur = make_machine("eurora")
    nodes = [*eur.groups["gpu"][:2], *eur.groups["mic"][:2]]  # four Eurora nodes: jobs must wait
    w = fit_workload(read_jobs(sample), Machine("eurora-4", eur.resources, eur.capacity[nodes]))
    schedule, steps = play(whole(w, order, window_size=16), expert_action)
    assert steps > 100
    assert_same_schedule(schedule, direct(w, order))


@pytest.mark.parametrize("order", ["easy", "f2-bf", "f1-bf", "saf-bf", "sjf"])
def test_the_presets_schedule_on_the_full_sdsc_sp2_log(traces_dir: Any, order: str) -> None:
    from hpcgym.env.episodes import load_trace

    log = load_trace(str(traces_dir / "SDSC-SP2-1998-4.2-cln.swf.gz"))
    for offset in (10_000, 25_000, 40_000):
        w = log.window(600, offset)
        schedule, steps = play(whole(w, order, window_size=64), expert_action)
        assert steps >= 1
        assert_same_schedule(schedule, direct(w, order))


# ------------------------------------------------------------------------------ the mask
@pytest.mark.parametrize("order", ["easy", "f2-bf", "sjf"])
def test_every_allowed_job_fits_and_starting_it_keeps_the_reservation(order: str) -> None:
    env = gym.make(ENV_ID, window_jobs=300, window_size=16, order=order)
    rng = np.random.default_rng(0)
    u = env.unwrapped
    easy = make_policy("easy")  # EASY's reservation for a given head (the presets' rule: no doubling)
    checked = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _ in range(10_000):
            mask = u.action_masks()
            allowed = np.flatnonzero(mask[:-1])
            assert mask[-1] and len(allowed) == u._bf.eligible >= 1  # every step is a real choice
            assert np.array_equal(allowed, np.arange(len(allowed)))  # the eligible jobs come first
            view, bf = u.view, u._bf
            head, shadow = bf.head, bf.shadow
            assert not view.fits(head) and head in view.queue
            assert sorted(bf.slots.tolist()) == sorted(view.queue.tolist())  # every waiting job, once
            for a in allowed:
                j = int(bf.slots[a])
                assert j != head and view.fits(j)
                sim = copy.deepcopy(u.sim)
                sim.start((j,))
                easy.reset(sim.view)
                easy.decide(sim.view, first=head)
                assert easy.reservation[0] == head  # [head, time, predicted time]
                assert easy.reservation[1] == shadow  # starting it did not move the reservation
                checked += 1
            # a job that fits now but may not backfill would end after the reservation (one-node machine)
            for j in bf.slots[len(allowed) :]:
                if j != head and view.fits(int(j)):
                    assert view.now + view.prediction[j] > shadow
            if env.step(int(rng.choice(np.flatnonzero(mask))))[2]:
                break
    assert checked > 5


def test_the_slot_view_shows_the_queue_in_slot_order_and_system_in_arrival_order() -> None:
    env = DispatchEnv(window_jobs=200, window_size=8, mode="backfill", observations=("jobs", "system"))
    ref = DispatchEnv(window_jobs=200, window_size=8, observations=("jobs", "system"))
    obs, _ = env.reset(seed=5)
    bf = env._bf
    ref.reset(options={"offset": env.episode_offset})
    # the system part is the job-mode builder's on the same state (arrival order)
    system = ref._builders["system"].build(env.view)
    np.testing.assert_array_equal(obs["system"], system)
    # job rows are the slots: present, and fitting now for every eligible slot
    shown = min(len(bf.slots), 8)
    assert (obs["jobs"][:shown, 0] == 1).all() and (obs["jobs"][shown:, 0] == 0).all()
    assert (obs["jobs"][: bf.eligible, 5] == 1).all()
    assert obs["jobs"][min(bf.eligible, 7), 5] == (1 if bf.eligible >= 8 else 0)  # the head does not fit


# --------------------------------------------------------------------------- the API
@pytest.mark.parametrize("order", ["easy", "f2-bf"])
def test_gymnasium_and_sb3_env_checkers_pass(order: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(ENV_ID, order=order, **SMALL)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*unconventional shape.*")
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        gym_check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(env.unwrapped, warn=True)
        flat = FlattenDispatchObservation(gym.make(ENV_ID, order=order, **SMALL))
        gym_check_env(flat, skip_render_check=True)
        sb3_check_env(flat, warn=True)


def test_the_id_and_the_space() -> None:
    env = gym.make(ENV_ID)
    u = env.unwrapped
    assert u.mode == "backfill" and u.config.action.order == "easy"
    assert env.action_space == gym.spaces.Discrete(65)
    assert not u.compiled and compiled_obstacle(u).startswith("mode: 'backfill'")
    with pytest.raises(InvalidConfigError, match="compiled=True, but mode: 'backfill'"):
        DispatchEnv(mode="backfill", compiled=True)


@pytest.mark.parametrize("order", ["fcfs", "sjf-list", "prb", "f2", "rls-f1-bf"])
def test_a_preset_without_an_easy_reservation_is_refused_naming_order(order: str) -> None:
    with pytest.raises(InvalidConfigError, match=r"order: .* makes no EASY reservation.*f2-bf"):
        gym.make(ENV_ID, order=order)


def test_orders_are_canonical_names_and_unknown_ones_are_refused() -> None:
    assert gym.make(ENV_ID, order="sjf-bf", **SMALL).unwrapped.config.action.order == "sjf"
    assert {"easy", "f1-bf", "f2-bf", "saf-bf", "sjf", "easy-sjbf"} <= set(backfill_orders())
    with pytest.raises(InvalidConfigError, match="order: "):
        gym.make(ENV_ID, order="no-such-preset")
    with pytest.raises(InvalidConfigError, match="order: must be a dispatcher preset name"):
        gym.make(ENV_ID, order=3)


def test_invalid_actions_are_flagged_and_stop_never_raising() -> None:
    env = gym.make(ENV_ID, invalid_penalty=0.5, window_jobs=400, window_size=12)
    env.reset(seed=1)
    u = env.unwrapped
    k = u.window_size
    seen = 0
    for action in (-1, k + 1, "0", 1.5, np.array([0, 1]), None, k - 1):
        if u._done:
            break
        mask = u.action_masks()
        before = (u.view.now, u.decision_count)
        _, reward, _, _, info = env.step(action)
        invalid = not (isinstance(action, int) and 0 <= action <= k and mask[action])
        assert info["invalid_action"] == invalid
        if invalid:  # the fallback: stop, i.e. the next decision point
            seen += 1
            assert info["reward_terms"]["invalid"] == 1.0 and reward <= -0.5
            assert u._done or (u.view.now, u.decision_count) > before
    assert seen >= 6


def test_the_same_seed_gives_the_same_episode() -> None:
    def rollout(env: Any, seed: int) -> list[Any]:
        rng = np.random.default_rng(seed)
        obs, _ = env.reset(seed=seed)
        out = [obs]
        for _ in range(10_000):
            obs, reward, done, _, info = env.step(
                int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
            )
            out.append((obs, reward, info["time"], info["action_mask"]))
            if done:
                return out
        raise AssertionError("the episode did not end")

    a = rollout(gym.make(ENV_ID, window_jobs=200, window_size=12), 7)
    b = rollout(gym.make(ENV_ID, window_jobs=200, window_size=12), 7)
    assert len(a) == len(b) > 10
    for x, y in zip(a[1:], b[1:], strict=True):
        for k in x[0]:
            np.testing.assert_array_equal(x[0][k], y[0][k])
        assert x[1:3] == y[1:3] and np.array_equal(x[3], y[3])


def test_an_episode_without_a_choice_ends_on_its_first_step() -> None:
    env = gym.make(ENV_ID, window_jobs=4, window_size=4, load_factor=0.001)
    _, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [False] * 4 + [True]
    _, _, terminated, _, info = env.step(4)
    assert terminated and not info["invalid_action"] and info["metrics"]["jobs_measured"] == 4
    _, _, terminated, _, info = env.unwrapped.step(4)  # a finished episode: anything is invalid
    assert terminated and info["invalid_action"]


def test_expert_action_needs_backfill_mode() -> None:
    env = gym.make("hpcgym/Dispatch-v1", **SMALL)
    env.reset(seed=0)
    with pytest.raises(InvalidConfigError, match="expert_action"):
        expert_action(env)
