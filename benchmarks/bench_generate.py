"""Synthetic Eurora: generating 100,000 jobs, and EASY over them.

1. Seconds to generate 100,000 jobs with ``hpcgym.workloads.eurora.eurora`` (median of three
   runs after one warm-up; seeds 1, 2, 3), without writing the file.
2. EASY with wall-time estimates (W) and first-fit allocation over the 100,000 jobs of
   seed 1 on the Eurora machine (nodes x cores, GPUs, MICs, memory): in-process
   simulation seconds and jobs per second, as ``bench_engine`` measures the SWF traces.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench_engine import time_policy  # the same timing as the SWF figures

from hpcgym.workloads import eurora

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


def run(traces: Path) -> list[dict]:
    """The rows; ``traces`` is unused (the jobs are generated)."""
    w = eurora(JOBS, seed=1)
    rows = [time_policy(w, p, repeats=REPEATS) for p in ("easy", "prb")]
    for row in rows:
        row["trace"] = f"{w.name} (seed 1)"
    return [time_generation(), *rows]
