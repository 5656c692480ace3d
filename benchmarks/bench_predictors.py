"""Predictors: EASY++ against plain EASY over full traces, and predictions per second.

1. In-process simulation time of EASY++ (user-average predictions, prediction
   correction, SJBF) against plain EASY with wall-time estimates, over the full
   SDSC-SP2 and HPC2N traces (target: EASY++ within 1.5x of EASY).
2. Predictions per second of every registered predictor: each predictor alone is fed
   the trace's own submissions, starts and terminations (as logged) in time order, and
   the time per submitted job is measured.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.predictors import make_predictor, predictor_names
from hpcgym.rangesets import logged_events as logged_schedule_events
from hpcgym.sim import Simulator
from hpcgym.workload import Workload, read_swf

TRACES = ("SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz")
REPEATS = 3


def time_policies(workload: Workload, policies: tuple[str, ...], repeats: int = REPEATS) -> dict[str, dict]:
    """Median in-process seconds of each policy over ``repeats`` runs after one warm-up.

    The policies' runs are interleaved, so a busy machine slows them alike.
    """
    secs: dict[str, list[float]] = {p: [] for p in policies}
    last = {}
    for i in range(repeats + 1):
        for policy in policies:
            sim = Simulator(workload, predictor=preset_predictor(policy))
            s = sim.run(make_policy(policy), progress=False)
            last[policy] = s
            if i:
                secs[policy].append(s.sim_seconds)
    return {
        p: {
            "seconds": statistics.median(secs[p]),
            "decisions": last[p].decisions,
            "predictor": last[p].predictor,
        }
        for p in policies
    }


def logged_events(workload: Workload) -> list[tuple[int, int, float, float]]:
    """``(kind, job, time, runtime)`` in time order: ends (0) before submissions (1) before starts (2)."""
    kinds, jobs, times = logged_schedule_events(workload)
    rt = workload.runtime.tolist()
    return [(k, j, t, rt[j]) for k, j, t in zip(kinds.tolist(), jobs.tolist(), times.tolist(), strict=True)]


def predictions_per_second(workload: Workload, name: str, events: list, repeats: int = REPEATS) -> float:
    """Submitted jobs per second of predictor ``name`` fed ``events`` (median of ``repeats``)."""
    secs = []
    for _ in range(repeats):
        p = make_predictor(name)
        p.reset(workload if p.needs_runtime else workload.public)
        submit, start, end = p.on_submit, p.on_start, p.on_end
        t0 = time.perf_counter()
        for kind, job, t, runtime in events:
            if kind == 1:
                submit(job, t)
            elif kind == 2:
                start(job, t)
            else:
                end(job, t, runtime)
        secs.append(time.perf_counter() - t0)
    return len(workload) / statistics.median(secs)


def run(traces: Path) -> list[dict]:
    rows: list[dict] = []
    for name in TRACES:
        path = traces / name
        if not path.exists():
            print(f"   skipped {name}: not in {traces}")
            continue
        w = read_swf(path)
        t = time_policies(w, ("easy", "easy++"))
        easy, pp = t["easy"], t["easy++"]
        rows.append(
            {
                "what": f"easy++ ({pp['predictor']}) vs easy (walltime)",
                "trace": w.name,
                "jobs": len(w),
                "easy_seconds": easy["seconds"],
                "easypp_seconds": pp["seconds"],
                "ratio": pp["seconds"] / easy["seconds"],
                "easy_decisions": easy["decisions"],
                "easypp_decisions": pp["decisions"],
            }
        )
        events = logged_events(w)
        # rangeset: measured over 003's 40,000 test jobs by bench_rangesets.py
        for pred in (*(p for p in predictor_names() if p != "rangeset"), "user-avg+pcor"):
            rows.append(
                {
                    "what": f"predictor {pred}",
                    "trace": w.name,
                    "jobs": len(w),
                    "predictions_per_second": predictions_per_second(w, pred, events),
                }
            )
    return rows
