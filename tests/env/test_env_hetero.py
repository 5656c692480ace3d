"""The environment on machines of nodes x resource types: Eurora, job tables, per-type observations."""

from __future__ import annotations

import csv
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import hpcgym
from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError, UnknownNameError
from hpcgym.env import (
    DEFAULT_OBSERVATIONS,
    RESOURCE_OBSERVATIONS,
    DispatchEnv,
    DispatchEnvV0,
    FlattenDispatchObservation,
)
from hpcgym.machine import Machine, make_machine
from hpcgym.workloads import Workload, read_jobs

SAMPLE = Path(str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv")))
EURORA = {"trace": str(SAMPLE), "machine": "eurora", "split": "all", "window_jobs": 80, "window_size": 16}


def eurora(env_id: str = "hpcgym/Dispatch-v1", **kwargs: Any) -> gym.Env[Any, Any]:
    return gym.make(env_id, **{**EURORA, **kwargs})


def random_episode(env: gym.Env[Any, Any], seed: int, masked: bool) -> list[tuple[dict[str, Any], Any]]:
    """(observation, view snapshot) of every step of a seeded random-action episode."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    u = env.unwrapped
    out = []
    for _ in range(10_000):
        v = u.view
        out.append((obs, (v.free.copy(), v.queue.copy())))
        if masked:
            valid = np.flatnonzero(u.action_masks())
            action = valid[rng.integers(len(valid))]
        else:
            action = rng.integers(env.action_space.n)
        obs, _, terminated, _, _ = env.step(action)
        if terminated:
            return out
    raise AssertionError("the episode did not end")


def test_the_sample_runs_on_the_eurora_preset() -> None:
    u = eurora().unwrapped
    assert u.machine.name == "eurora" and u.machine.resources == ("cores", "gpus", "mics", "mem_gb")
    assert u.trace.machine is u.machine and len(u.trace) == 400
    assert u.observation_space["resources"].shape == (4,)
    assert u.observation_space["requests"].shape == (16, 5)
    assert u.observation_features["resources"] == ("cores", "gpus", "mics", "mem_gb")
    assert u.observation_features["requests"] == ("chunks", "cores", "gpus", "mics", "mem_gb")
    assert sorted(u.observation_space) == sorted(DEFAULT_OBSERVATIONS + RESOURCE_OBSERVATIONS)


@pytest.mark.parametrize("env_id", [i for i in hpcgym.ENV_IDS if i.endswith("-v1")])
def test_gymnasium_and_sb3_env_checkers_pass_on_eurora(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = eurora(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym_check_env(env.unwrapped, skip_render_check=False)
        sb3_check_env(env.unwrapped, warn=True)
        flat = FlattenDispatchObservation(eurora(env_id))
        gym_check_env(flat, skip_render_check=True)
        sb3_check_env(flat, warn=True)


@pytest.mark.parametrize("masked", [True, False], ids=["masked", "unmasked"])
def test_free_features_are_the_free_matrix_over_the_capacity_at_every_step(masked: bool) -> None:
    env = eurora()
    total = make_machine("eurora").total
    steps = random_episode(env, seed=3, masked=masked)
    assert len(steps) > 20
    seen_gpus_busy = False
    for obs, (free, _) in steps:
        expected = (free.sum(axis=0) / total).astype(np.float32)
        np.testing.assert_array_equal(obs["resources"], expected)
        assert env.observation_space.contains(obs)
        seen_gpus_busy |= bool(obs["resources"][1] < 1.0)
    assert seen_gpus_busy, "no GPU job ran: the sample no longer exercises the GPU column"


def _table_rows() -> dict[int, dict[str, str]]:
    with SAMPLE.open(newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return {int(r["job_id"]): r for r in csv.DictReader(lines)}


def test_request_features_are_the_job_tables_requests() -> None:
    env = eurora()
    rows = _table_rows()
    m = make_machine("eurora")
    largest = m.capacity.max(axis=0)  # 16 cores, 2 gpus, 2 mics, 16 GB on one node
    chunk_scale = np.log1p(m.capacity.sum())  # each chunk takes at least one unit of something
    checked = 0
    for obs, (_, queue) in random_episode(env, seed=5, masked=True):
        req = obs["requests"]
        shown = queue[:16]
        assert not req[len(shown) :].any()
        for row, j in zip(req, shown, strict=False):
            table = rows[int(env.unwrapped.workload.job_id[j])]
            want = [np.log1p(int(table["chunks"])) / chunk_scale]
            want += [float(table[r]) / largest[i] for i, r in enumerate(m.resources)]
            np.testing.assert_allclose(row, want, rtol=1e-6)
            checked += 1
    assert checked > 100


def _gpu_machine() -> tuple[Machine, Workload]:
    """Two nodes of 8 cores and 1 GPU; two long GPU jobs take both GPUs, then a GPU and a CPU job wait."""
    m = Machine("tiny-gpu", ("cores", "gpus"), [[8, 1], [8, 1]])
    w = Workload.from_columns(
        [0, 0, 10, 10],
        [1000, 1000, 50, 50],
        None,
        [2000, 2000, 100, 100],
        chunks=[1, 1, 1, 1],
        per_chunk=[[1, 1], [1, 1], [1, 1], [1, 0]],
        resources=("cores", "gpus"),
        machine=m,
    )
    return m, w


def test_a_job_needing_a_gpu_is_masked_while_no_gpu_is_free() -> None:
    _, w = _gpu_machine()
    env = DispatchEnv(trace=w, split="all", window_jobs=4, window_size=4)
    obs, info = env.reset(seed=0)
    assert env.view.now == 0 and info["action_mask"].tolist() == [True, True, False, False, True]
    obs, *_ = env.step(0)
    obs, _, _, _, info = env.step(0)  # the second GPU job: now both GPUs are taken
    assert env.view.now == 10 and env.view.queue.tolist() == [2, 3]
    np.testing.assert_array_equal(obs["resources"], np.float32([14 / 16, 0.0]))
    assert info["action_mask"].tolist() == [False, True, False, False, True]
    np.testing.assert_array_equal(
        obs["requests"][:2],
        # one chunk on a machine of 18 units in all; 1 of 8 cores per node; 1 of 1 GPU, or none
        np.float32([[np.log1p(1) / np.log1p(18), 1 / 8, 1], [np.log1p(1) / np.log1p(18), 1 / 8, 0]]),
    )
    _, _, _, _, info = env.step(0)  # the GPU job: invalid, the fallback advances
    assert info["invalid_action"] and env.view.queue.tolist() == [2, 3]
    assert env.view.now == 1000  # the CPU job was not chosen, so the next event is the GPU jobs' end


def test_same_seed_gives_the_same_observations_on_eurora() -> None:
    a = random_episode(eurora(), seed=11, masked=True)
    b = random_episode(eurora(), seed=11, masked=True)
    assert len(a) == len(b)
    for (oa, _), (ob, _) in zip(a, b, strict=True):
        assert oa.keys() == ob.keys()
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k])


def test_swf_observation_is_unchanged_unless_asked_for() -> None:
    kwargs = {"window_jobs": 40, "window_size": 12}
    v1, v0 = gym.make("hpcgym/Dispatch-v1", **kwargs), gym.make("hpcgym/Dispatch-v0", **kwargs)
    assert sorted(v1.observation_space) == sorted(DEFAULT_OBSERVATIONS)
    a, b = random_episode(v1, 4, True), random_episode(v0, 4, True)
    assert len(a) == len(b)
    for (oa, _), (ob, _) in zip(a, b, strict=True):
        assert oa.keys() == ob.keys()
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k])
    asked = gym.make(
        "hpcgym/Dispatch-v1", observations=(*DEFAULT_OBSERVATIONS, "resources", "requests"), **kwargs
    )
    assert asked.unwrapped.observation_features["resources"] == ("procs",)
    for obs, _ in random_episode(asked, 4, True):
        assert obs["resources"][0] == obs["system"][0]  # free processors / machine
        np.testing.assert_allclose(obs["requests"][:, 1], obs["jobs"][:, 2], rtol=1e-6)


def test_v0_shows_the_v0_parts_on_eurora_too() -> None:
    env = eurora("hpcgym/Dispatch-v0")
    assert isinstance(env.unwrapped, DispatchEnvV0)
    assert sorted(env.observation_space) == sorted(DEFAULT_OBSERVATIONS)
    assert tuple(eurora("hpcgym/Dispatch-v0", observations=("resources",)).observation_space) == (
        "resources",
    )


def test_observation_keys_use_the_builders_spelling() -> None:
    env = DispatchEnv(window_jobs=20, observations=("Jobs", "SYSTEM", "Resources"))
    assert sorted(env.observation_space) == ["jobs", "resources", "system"]
    obs, _ = env.reset(seed=0)
    assert list(obs) == ["jobs", "system", "resources"]
    with pytest.raises(InvalidConfigError, match="observations"):
        DispatchEnv(observations=("jobs", "Jobs"))


def test_features_use_the_machines_spelling_of_a_resource() -> None:
    # an SWF trace asks for "procs"; on a machine of "cores" they are its cores
    m = Machine("cores-16x8", ("cores",), [[8]] * 16)
    env = DispatchEnv(machine=m, window_jobs=30, observations=("resources", "requests"))
    assert env.observation_features == {"resources": ("cores",), "requests": ("chunks", "cores")}
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)


def test_machine_argument_with_an_swf_trace_drops_and_counts_what_cannot_run() -> None:
    env = DispatchEnv(machine=Machine.processors(128, node_size=8), window_jobs=50)
    assert env.machine.n_nodes == 16 and env.machine.exclusive
    assert env.trace.machine is env.machine
    small = DispatchEnv(machine=Machine.processors(64), window_jobs=50)
    assert len(small.trace) < 8943 and small.trace.report.dropped["size > machine"] > 0


def test_machine_argument_errors_name_the_parameter(tmp_path: Path) -> None:
    with pytest.raises(InvalidConfigError, match="procs"):
        DispatchEnv(machine="eurora", procs=128)
    with pytest.raises(UnknownNameError, match="eurora"):
        DispatchEnv(machine="eurara")
    with pytest.raises(InvalidConfigError, match="machine"):
        DispatchEnv(machine=str(tmp_path / "missing.toml"))
    with pytest.raises(InvalidConfigError, match="machine"):
        DispatchEnv(machine=64)


def test_job_table_header_names_the_machine_and_a_loaded_table_works() -> None:
    by_header = DispatchEnv(trace=str(SAMPLE), split="all", window_jobs=50)
    assert by_header.machine.name == "eurora" and "resources" in by_header.observation_space.spaces
    loaded = DispatchEnv(trace=read_jobs(SAMPLE), split="all", window_jobs=50)
    a, b = random_episode(by_header, 2, True), random_episode(loaded, 2, True)
    assert len(a) == len(b)
    for (oa, _), (ob, _) in zip(a, b, strict=True):
        for k in oa:
            np.testing.assert_array_equal(oa[k], ob[k])


def test_ansi_render_shows_each_resource_type() -> None:
    env = eurora(render_mode="ansi")
    env.reset(seed=0)
    line = env.render()
    assert "cores:" in line and "gpus:" in line and "/64" in line


@pytest.mark.parametrize("policy", ["fcfs", "sjf-list", "easy"])
def test_reference_dispatchers_through_the_env_on_eurora_equal_their_direct_runs(policy: str) -> None:
    from hpcgym.baselines import make_policy, preset_predictor
    from hpcgym.env import run_via_env
    from hpcgym.sim import Simulator
    from hpcgym.workloads import fit_workload

    eur = make_machine("eurora")
    nodes = [*eur.groups["gpu"][:2], *eur.groups["mic"][:2]]  # four Eurora nodes: jobs must wait
    w = fit_workload(read_jobs(SAMPLE), Machine("eurora-4", eur.resources, eur.capacity[nodes]))
    direct = Simulator(w, predictor=preset_predictor(policy)).run(make_policy(policy), progress=False)
    via = run_via_env(w, policy)
    np.testing.assert_array_equal(via.start, direct.start)
    np.testing.assert_array_equal(via.end, direct.end)
    np.testing.assert_array_equal(via.placement_nodes, direct.placement_nodes)
    assert (direct.start > w.submit).sum() > 10  # jobs really waited for one another


def test_place_starts_the_chosen_job_on_the_given_nodes_for_one_instant() -> None:
    _, w = _gpu_machine()
    env = DispatchEnv(trace=w, split="all", window_jobs=4, window_size=4)
    env.reset(seed=0)
    with pytest.raises(InvalidDecisionError, match="1 chunks but 2 nodes"):
        env.place(0, [0, 1])
    env.place(0, [1])  # the allocator (first-fit) would take node 0
    env.step(0)
    assert env.view.placement(0).tolist() == [1]
    env.step(0)
    assert env.view.placement(1).tolist() == [0]
    # forgotten once time moves on: job 3 (CPU only) then goes where first-fit puts it
    env.place(3, [1])
    env.step(4)  # advance: both GPUs are taken, so the next instant is t=1000
    assert env.view.now == 1000
    env.step(1)
    assert env.view.placement(3).tolist() == [0]
