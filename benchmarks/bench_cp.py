"""Decision time of the CP dispatchers (``hcp1``, ``hcp3``, ``pcp3``) and their problem sizes.

002 Table 2 reports 523-1,014 ms per decision (OR-Tools 6.7, 16 cores); the target here
is a median <= 50 ms and a p95 <= 500 ms on 2 cores, with one CP-SAT worker and the
paper's wall-clock time limit ``delta = 1 s`` (``delta_max = 16 s``; ``dtime=none``).
Workloads: the first 500 jobs of the bundled SDSC-SP2 slice (one node of 128
processors, a loaded machine) and the bundled Eurora sample with its load multiplied
by 30 (64 nodes of cores, GPUs, MICs and memory, the model of 002). The figures are
the ``cp`` extras of each run.
"""

from __future__ import annotations

from pathlib import Path

from hpcgym.jobtable import read_jobs
from hpcgym.runner import run_policy
from hpcgym.workload import load_default

EURORA_SAMPLE = Path(__file__).resolve().parent.parent / "hpcgym" / "data" / "examples" / "eurora-sample.csv"


def run(traces_dir: Path) -> list[dict]:
    workloads = {
        "SDSC-SP2 first 500": load_default().window(500),
        "eurora-sample x30 load": read_jobs(EURORA_SAMPLE).scale_load(30.0),
    }
    rows = []
    for label, w in workloads.items():
        for policy in ("hcp1", "hcp3", "pcp3"):
            row = run_policy(w, f"{policy}:dtime=none", progress=False).row
            cp = row["cp"]
            ms = cp["decision_ms"]
            rows.append(
                {
                    "what": f"{policy} on {label} (delta 1 s wall-clock, 1 worker)",
                    "decisions": cp["decisions"],
                    "median_ms": ms.get("median", 0.0),
                    "p95_ms": ms.get("p95", 0.0),
                    "mean_ms": ms.get("mean", 0.0),
                    "max_ms": ms.get("max", 0.0),
                    "intervals": cp["intervals"],
                    "requested": cp["requested"],
                    "available": cp["available"],
                    "fallbacks": cp["fallbacks"],
                    "mean_wait_s": row["mean_wait_s"],
                    "mean_bsld": row["mean_bsld"],
                }
            )
    return rows
