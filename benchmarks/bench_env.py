"""Environment throughput: steps per second of a random masked policy (bundled trace).

``job`` mode with K = 64 and EASY backfill off and on (target: >= 20,000 steps/s on one
core), and ``policy`` mode; and the cost of the ``predicted_wait`` part (003's IBL, the
default, and QBETS run online) as a ratio to the default observation. The environment is
made with ``gymnasium.make`` (so the default wrappers are included) and the policy's time
is included: each step asks for the action mask and draws a valid action uniformly with a
seeded generator.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import hpcgym  # noqa: F401 - registers the environment ids

STEPS = 50_000
REPEATS = 3
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
    for spec in ("ibl", "qbets"):
        rows.append(predicted_wait_cost(spec))
    return rows


def predicted_wait_cost(spec: str) -> dict:
    """Steps/s with the ``predicted_wait`` part over steps/s without, ``job`` mode.

    The two run back to back in each repeat (same seed, same actions: the part changes no
    dynamics), so a change in the load of a shared machine touches both; the ratio is the
    median over the repeats.
    """
    with_part = {"backfill": "none", "observations": PREDICTED_WAIT, "wait_predictor": spec}
    steps_per_second("hpcgym/Dispatch-v1", with_part, steps=2000)  # compile first
    ratios, speeds = [], []
    for i in range(REPEATS):
        base = steps_per_second("hpcgym/Dispatch-v1", {"backfill": "none"}, seed=i)[0]
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
