"""Synthetic Eurora: generating 100,000 jobs, and EASY over them.

1. Seconds to generate 100,000 jobs with ``hpcgym.generate.eurora`` (median of three
   runs after one warm-up; seeds 1, 2, 3), without writing the file.
2. EASY with wall-time estimates (W) and first-fit allocation over the 100,000 jobs of
   seed 1 on the Eurora machine (nodes x cores, GPUs, MICs, memory): in-process
   simulation seconds and jobs per second, as ``bench_engine`` measures the SWF traces.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.generate import eurora
from hpcgym.sim import Simulator

JOBS = 100_000
REPEATS = 3


def time_generation(jobs: int = JOBS, repeats: int = REPEATS) -> dict:
    """Median wall seconds of ``eurora(jobs, seed)`` for seeds 1..repeats, after a warm-up."""
    eurora(1000, seed=0)
    secs = []
    for seed in range(1, repeats + 1):
        t0 = time.perf_counter()
        eurora(jobs, seed=seed)
        secs.append(time.perf_counter() - t0)
    med = statistics.median(secs)
    return {
        "what": "generate eurora",
        "trace": "eurora-synthetic",
        "jobs": jobs,
        "seconds": med,
        "jobs_per_second": jobs / med,
    }


def time_policy(workload, policy: str, repeats: int = REPEATS) -> dict:
    """Median in-process seconds of ``repeats`` runs after one warm-up (as ``bench_engine``)."""
    secs = []
    for i in range(repeats + 1):
        sim = Simulator(workload, predictor=preset_predictor(policy))
        s = sim.run(make_policy(policy), progress=False)
        if i:
            secs.append(s.sim_seconds)
    med = statistics.median(secs)
    return {
        "what": f"{policy} {s.predictor}",
        "trace": f"{workload.name} (seed 1)",
        "jobs": len(workload),
        "sim_seconds": med,
        "jobs_per_second": len(workload) / med,
        "decisions": s.decisions,
        "decision_us": 1e6 * med / max(s.decisions, 1),
    }


def run(traces: Path) -> list[dict]:
    """The rows; ``traces`` is unused (the jobs are generated)."""
    w = eurora(JOBS, seed=1)
    return [time_generation(), time_policy(w, "easy"), time_policy(w, "prb")]
