"""Job molding and delayed submission (003 IV): the resource manager's decisions per second.

On the bundled SDSC-SP2 slice: 5,000 history jobs, then 2,000 managed jobs, each a
decision (for every size the user has used: a rangeSet and an APQ wait prediction on
the live state; with delay also the future state). The figure is decisions per second
of the manager's own time, the simulation excluded; the mean responses come with it,
so a speed-up that changes the decisions shows.
"""

from __future__ import annotations

from pathlib import Path

from hpcgym.baselines import MoldingConfig, run_managed
from hpcgym.workloads import load_default


def run(traces: Path) -> list[dict]:
    w = load_default()
    rows: list[dict] = []
    for mode in ("molding", "delay"):
        r = run_managed(w, MoldingConfig(mode=mode, history=5000, jobs=2000))
        s = r.summary()
        rows.append(
            {
                "what": f"{mode} decisions",
                "trace": w.name,
                "decisions": r.decisions,
                "seconds": r.decide_seconds,
                "decisions_per_second": s["decisions_per_second"],
                "baseline_response_min": s["baseline_response_min"],
                "response_min": s["response_min"],
            }
        )
    return rows
