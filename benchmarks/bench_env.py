"""Environment throughput: steps per second of a random masked policy (bundled trace).

``job`` mode with K = 64 and EASY backfill off and on (target: >= 20,000 steps/s on one
core), and ``policy`` mode; and the cost of the ``predicted_wait`` part (003's IBL, the
default, and QBETS run online) as a ratio to the default observation. The environment is
made with ``gymnasium.make`` (so the default wrappers are included) and the policy's time
is included: each step asks for the action mask and draws a valid action uniformly with a
seeded generator.

Issue 23's ratios, each measured in one run: ``Dispatch-v1`` (backfill off, compiled
steps) against CartPole-v1's random steps/s measured just before each repeat
(:func:`bench_engine.cartpole_rate`, target >= 0.5), and the native vector environment
against ``SyncVectorEnv`` at N = 16 (both from ``gymnasium.make_vec``, environment steps
per second, the same random masked policy over ``info["action_mask"]``, run back to back
in each repeat; target >= 4).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from bench_engine import cartpole_rate  # the machine yardstick of issue 23

import hpcgym  # noqa: F401 - registers the environment ids

STEPS = 50_000
REPEATS = 3
VEC_ENVS = 16
VEC_STEPS = 2_000
"""Vector steps per run (each N environment steps)."""
PREDICTED_WAIT = ("jobs", "histograms", "system", "predicted_wait")
CASES = (
    ("hpcgym/Dispatch-v1", {"backfill": "none"}),
    ("hpcgym/Dispatch-v1", {"backfill": "easy"}),
    ("hpcgym/DispatchPolicy-v1", {}),
)


def steps_per_second(env_id: str, kwargs: dict, steps: int = STEPS, seed: int = 0) -> tuple[float, int]:
    """Steps per second of a random masked policy over ``steps`` steps, and the episodes run."""
    env = gym.make(env_id, window_size=64, **kwargs)
    masks = env.unwrapped.action_masks
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    episodes = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        valid = np.flatnonzero(masks())
        _, _, terminated, _, _ = env.step(valid[rng.integers(len(valid))])
        if terminated:
            env.reset()
            episodes += 1
    return steps / (time.perf_counter() - t0), episodes


def run(traces: Path) -> list[dict]:
    rows = []
    for env_id, kwargs in CASES:
        steps_per_second(env_id, kwargs, steps=2000)  # compile the kernels first
        runs = [steps_per_second(env_id, kwargs, seed=i) for i in range(REPEATS)]
        sps = statistics.median(r[0] for r in runs)
        rows.append(
            {
                "what": f"{env_id.split('/')[1]} K=64 " + " ".join(f"{k}={v}" for k, v in kwargs.items()),
                "steps_per_second": sps,
                "step_us": 1e6 / sps,
                "episodes": sum(r[1] for r in runs),
                "steps": STEPS * REPEATS,
            }
        )
    rows.append(cartpole_ratio())
    rows.append(vector_ratio())
    for spec in ("ibl", "qbets"):
        rows.append(predicted_wait_cost(spec))
    return rows


def cartpole_ratio() -> dict:
    """``Dispatch-v1`` steps/s over CartPole-v1's, measured just before it in each repeat (median)."""
    case = {"backfill": "none"}
    steps_per_second("hpcgym/Dispatch-v1", case, steps=2000)  # compile first
    ratios, speeds, yardsticks = [], [], []
    for i in range(REPEATS):
        cp = cartpole_rate()
        sps = steps_per_second("hpcgym/Dispatch-v1", case, seed=i)[0]
        ratios.append(sps / cp)
        speeds.append(sps)
        yardsticks.append(cp)
    return {
        "what": "Dispatch-v1 K=64 backfill=none single env / CartPole-v1 (target >= 0.5)",
        "steps_per_second": statistics.median(speeds),
        "cartpole_steps_per_second": statistics.median(yardsticks),
        "ratio_to_cartpole": statistics.median(ratios),
        "steps": STEPS * REPEATS,
    }


def vector_steps_per_second(mode: str, n: int = VEC_ENVS, steps: int = VEC_STEPS, seed: int = 0) -> float:
    """Environment steps per second of ``gym.make_vec`` in ``mode`` under a random masked policy."""
    envs = gym.make_vec("hpcgym/Dispatch-v1", num_envs=n, vectorization_mode=mode, window_size=64)
    rng = np.random.default_rng(seed)
    _, info = envs.reset(seed=seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        draw = rng.random(info["action_mask"].shape)
        draw[~info["action_mask"]] = -1.0
        _, _, _, _, info = envs.step(draw.argmax(axis=1))
    rate = n * steps / (time.perf_counter() - t0)
    envs.close()
    return rate


def vector_ratio() -> dict:
    """The native vector env's steps/s over ``SyncVectorEnv``'s at N = 16, back to back (median)."""
    for mode in ("vector_entry_point", "sync"):
        vector_steps_per_second(mode, steps=100)  # compile first
    ratios, native, sync = [], [], []
    for i in range(REPEATS):
        s = vector_steps_per_second("sync", seed=i)
        v = vector_steps_per_second("vector_entry_point", seed=i)
        ratios.append(v / s)
        native.append(v)
        sync.append(s)
    return {
        "what": f"Dispatch-v1 K=64 native vector env / SyncVectorEnv, N={VEC_ENVS} (target >= 4)",
        "steps_per_second": statistics.median(native),
        "sync_steps_per_second": statistics.median(sync),
        "ratio_to_sync": statistics.median(ratios),
        "steps": VEC_ENVS * VEC_STEPS * REPEATS,
    }


def predicted_wait_cost(spec: str) -> dict:
    """Steps/s with the ``predicted_wait`` part over steps/s without, ``job`` mode.

    The two run back to back in each repeat (same seed, same actions: the part changes no
    dynamics), so a change in the load of a shared machine touches both; the ratio is the
    median over the repeats. The part is not compiled, so the environment with it steps in
    Python; the one without is held to Python steps too (``compiled=False``): the ratio is
    the part's own cost.
    """
    with_part = {"backfill": "none", "observations": PREDICTED_WAIT, "wait_predictor": spec}
    steps_per_second("hpcgym/Dispatch-v1", with_part, steps=2000)  # compile first
    ratios, speeds = [], []
    for i in range(REPEATS):
        base = steps_per_second("hpcgym/Dispatch-v1", {"backfill": "none", "compiled": False}, seed=i)[0]
        sps = steps_per_second("hpcgym/Dispatch-v1", with_part, seed=i)[0]
        ratios.append(sps / base)
        speeds.append(sps)
    sps = statistics.median(speeds)
    return {
        "what": f"Dispatch-v1 K=64 backfill=none +predicted_wait wait_predictor={spec}",
        "steps_per_second": sps,
        "step_us": 1e6 / sps,
        "ratio_to_default_observation": statistics.median(ratios),
        "steps": STEPS * REPEATS,
    }
