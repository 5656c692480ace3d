"""Decision time of the CP dispatchers at 002's problem sizes, and the quality it buys.

002 Table 2 reports 523-1,014 ms per decision (OR-Tools 6.7, 16 cores) over queues of
51-145 intervals. The target here is a median <= 50 ms and a p95 <= 500 ms on 2 cores
with v3's quality kept. Workloads:

* 2,000 synthetic Eurora jobs (``hpcgym generate eurora --jobs 2000 --load 1.5``, seed 0)
  on the Eurora machine: the queues of 002's Table 2 (about 60 intervals and 1,100-1,400
  requested resources per decision).
* The first 500 jobs of the bundled SDSC-SP2 slice (one node of 128 processors).

Each CP dispatcher runs with one CP-SAT worker and the deterministic limit ``delta``
(``dtime=1``, so the decisions are the same on any machine; the milliseconds are this
machine's), beside PRB as the reference for quality. The figures are each run's ``cp``
extras plus mean wait and mean (plain) slowdown.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpcgym.baselines import make_policy, preset_predictor, resolve_policy_name
from hpcgym.sim import Simulator
from hpcgym.workloads import eurora, fit_workload, load_default

DELTA = 0.02
"""The CP time limit of the bench (deterministic seconds; ``delta_max = 16 delta``)."""

POLICIES = ("prb", f"hcp1:delta={DELTA}", f"hcp3:delta={DELTA}", f"pcp3:delta={DELTA}")


def run(traces_dir: Path) -> list[dict]:
    workloads = {
        "eurora-synthetic 2000 x1.5": fit_workload(eurora(2000, seed=0, load=1.5), "eurora"),
        "SDSC-SP2 first 500": load_default().window(500),
    }
    rows = []
    for label, w in workloads.items():
        runtime = np.asarray(w.runtime, dtype=np.float64)
        positive = runtime > 0
        for policy in POLICIES:
            name = resolve_policy_name(policy.split(":")[0])
            sim = Simulator(w, predictor=preset_predictor(name, "walltime"))
            s = sim.run(make_policy(policy), progress=False)
            wait = s.start - w.submit
            cp: dict = dict(s.extras.get("cp") or {})  # type: ignore[call-overload]
            ms = cp.get("decision_ms") or {}
            rows.append(
                {
                    "what": f"{policy} on {label}",
                    "decisions": cp.get("decisions", s.decisions),
                    "median_ms": ms.get("median", float("nan")),
                    "p95_ms": ms.get("p95", float("nan")),
                    "mean_ms": ms.get("mean", float("nan")),
                    "max_ms": ms.get("max", float("nan")),
                    "intervals": cp.get("intervals", float("nan")),
                    "requested": cp.get("requested", float("nan")),
                    "available": cp.get("available", float("nan")),
                    "fallbacks": cp.get("fallbacks", 0),
                    "status": cp.get("status", {}),
                    "mean_wait_s": float(wait.mean()),
                    "mean_slowdown": float(((wait[positive] + runtime[positive]) / runtime[positive]).mean()),
                    "sim_seconds": s.sim_seconds,
                }
            )
    return rows
