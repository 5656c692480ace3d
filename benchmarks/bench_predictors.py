"""Predictors: EASY++ against plain EASY over full traces, and predictions per second.

1. In-process simulation time of EASY++ (user-average predictions, prediction
   correction, SJBF) against plain EASY with wall-time estimates, over the full
   SDSC-SP2 and HPC2N traces (target: EASY++ within 1.5x of EASY).
2. Predictions per second of every registered predictor: each predictor alone is fed
   the trace's own submissions, starts and terminations (as logged) in time order, and
   the time per submitted job is measured.
3. Points of 004 section 7's predictor space (:data:`SPACE_CONFIGS`): predictions per
   second as in 2, and the full SDSC-SP2 EASY++ simulation planning with each, against
   the preset (``user-avg+pcor``), interleaved as in 1.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bench_engine import present_traces  # the same trace lookup as the engine figures

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.predict import logged_events as logged_schedule_events
from hpcgym.predict import make_predictor, predictor_names
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload

TRACES = ("SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz")
REPEATS = 3
SPACE_CONFIGS = (
    "user-history:correction=estimate",  # EASY++'s own predictor, as a point of the space
    "user-history:k=11,type=all,fullness=partial,metric=avg,fallback=estimate,propagation=yes,correction=estimate",
    "user-history:k=26,type=all,fullness=full,metric=min,fallback=estimate,propagation=no,correction=gradual",
    "user-history:k=30,type=extended,fullness=partial,metric=median,fallback=relative,propagation=yes,"
    "correction=exponential",
    "user-history:k=3,type=immediate,fullness=full,metric=max,fallback=relative,propagation=yes,correction=gradual",
)
"""004 Table 11's best (rank 1) and worst (rank 8,640) configurations and the costliest
corners: the largest window with a median over the whole history and propagation."""
SPACE_TRACE = "SDSC-SP2-1998-4.2-cln.swf.gz"
"""The trace of the space configurations' full simulations (all traces for predictions/s)."""


def time_runs(
    workload: Workload, runs: tuple[tuple[str, str | None], ...], repeats: int = REPEATS
) -> list[dict]:
    """Median in-process seconds of each ``(policy, predictor)`` over ``repeats`` runs after a warm-up.

    ``predictor`` None is the preset's. The runs are interleaved, so a busy machine slows
    them alike.
    """
    secs: list[list[float]] = [[] for _ in runs]
    last = {}
    for i in range(repeats + 1):
        for r, (policy, predictor) in enumerate(runs):
            sim = Simulator(workload, predictor=preset_predictor(policy, predictor))
            s = sim.run(make_policy(policy), progress=False)
            last[r] = s
            if i:
                secs[r].append(s.sim_seconds)
    return [
        {
            "seconds": statistics.median(secs[r]),
            "decisions": last[r].decisions,
            "predictor": last[r].predictor,
        }
        for r in range(len(runs))
    ]


def time_policies(workload: Workload, policies: tuple[str, ...], repeats: int = REPEATS) -> dict[str, dict]:
    """:func:`time_runs` of each policy with its preset predictor, by policy."""
    timed = time_runs(workload, tuple((p, None) for p in policies), repeats)
    return dict(zip(policies, timed, strict=True))


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
    for w in present_traces(traces, TRACES):
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
        for pred in (*(p for p in predictor_names() if p != "rangeset"), "user-avg+pcor", *SPACE_CONFIGS):
            rows.append(
                {
                    "what": f"predictor {pred}",
                    "trace": w.name,
                    "jobs": len(w),
                    "predictions_per_second": predictions_per_second(w, pred, events),
                }
            )
        if SPACE_TRACE.startswith(w.name):
            rows += space_simulations(w)
    return rows


def space_simulations(w: Workload) -> list[dict]:
    """EASY++ over ``w`` with each of :data:`SPACE_CONFIGS` against its preset predictor."""
    timed = time_runs(w, (("easy++", None), *(("easy++", c) for c in SPACE_CONFIGS)))
    preset = timed[0]
    return [
        {
            "what": f"easy++ with {t['predictor']} vs its preset ({preset['predictor']})",
            "trace": w.name,
            "jobs": len(w),
            "preset_seconds": preset["seconds"],
            "seconds": t["seconds"],
            "ratio": t["seconds"] / preset["seconds"],
            "decisions": t["decisions"],
        }
        for t in timed[1:]
    ]
