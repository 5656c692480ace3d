"""Training throughput: environment steps per second of MaskablePPO and PPO, 1 and 2 envs.

Each run trains on the bundled SDSC-SP2 slice with the scripts' defaults (windows of 256
jobs, K = 64, an MLP of 128 x 128, 4 epochs of minibatches of 256 per rollout, torch on
one thread) for ``STEPS`` steps. A rollout holds 1,024 steps whatever the number of
environments (``n_steps = 1024 / n_envs``), so both settings do the same gradient work
per step; the figure is steps / (learning wall time - validation time), so it includes
the policy's forward passes, the environments (in this process with 1 env, in worker
processes with 2: ``SubprocVecEnv``) and the PPO updates. One warm-up run compiles the
kernels first.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hpcgym.agents.train import train

STEPS = 8192
ROLLOUT = 1024


def steps_per_second(algorithm: str, n_envs: int, steps: int = STEPS) -> dict:
    """One training run's throughput figures."""
    with tempfile.TemporaryDirectory() as out:
        result = train(
            algorithm,
            total_timesteps=steps,
            n_envs=n_envs,
            n_steps=ROLLOUT // n_envs,
            eval_freq=0,
            eval_windows=1,
            progress_bar=False,
            out=out,
        )
    s = result.summary()
    return {
        "what": f"{algorithm} n_envs={n_envs} ({s['vec_env']})",
        "steps_per_second": s["steps_per_second"],
        "steps": s["timesteps"],
        "train_s": s["train_seconds"],
        "validation_s": s["validation_seconds"],
        "invalid_rate": s["invalid_rate"],
    }


def run(traces: Path) -> list[dict]:
    steps_per_second("maskable-ppo", 1, steps=ROLLOUT)  # compile the kernels first
    return [steps_per_second(a, n) for a in ("maskable-ppo", "ppo") for n in (1, 2)]
