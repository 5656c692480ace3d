"""Engine throughput: FCFS and EASY-W over full PWA traces (in-process simulation time)."""

from __future__ import annotations

import statistics
from pathlib import Path

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.sim import Simulator
from hpcgym.workload import read_swf

TRACES = (
    ("SDSC-SP2-1998-4.2-cln.swf.gz", None),
    ("CTC-SP2-1996-3.1-cln.swf.gz", 512),
    ("HPC2N-2002-2.2-cln.swf.gz", None),
)
REPEATS = 3


def time_policy(workload, policy: str, predictor: str | None = None, repeats: int = REPEATS) -> dict:
    """Median in-process seconds of ``repeats`` runs (after one warm-up that compiles kernels)."""
    secs = []
    for i in range(repeats + 1):
        sim = Simulator(workload, predictor=preset_predictor(policy, predictor))
        s = sim.run(make_policy(policy), progress=False)
        if i:
            secs.append(s.sim_seconds)
    med = statistics.median(secs)
    return {
        "what": f"{policy} {s.predictor}",
        "trace": workload.name,
        "jobs": len(workload),
        "sim_seconds": med,
        "jobs_per_second": len(workload) / med,
        "decisions": s.decisions,
        "decision_us": 1e6 * med / max(s.decisions, 1),
    }


def run(traces: Path) -> list[dict]:
    rows = []
    for name, procs in TRACES:
        path = traces / name
        if not path.exists():
            print(f"   skipped {name}: not in {traces}")
            continue
        w = read_swf(path, procs=procs)
        for policy in ("fcfs", "easy"):
            rows.append(time_policy(w, policy))
    return rows
