"""Engine throughput: FCFS and EASY-W over full PWA traces (in-process simulation time).

``make bench`` calls :func:`run`. Run directly, it times one preset with one predictor on
one trace, e.g. EASY++ (whose predictor revises running jobs' predictions)::

    python benchmarks/bench_engine.py --policy easy++ --trace path/to/SDSC-SP2-1998-4.2-cln.swf.gz
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterable, Iterator
from pathlib import Path

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, read_swf

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


def present_traces(traces: Path, names: Iterable[str | tuple[str, int | None]]) -> Iterator[Workload]:
    """Each named trace (or ``(name, procs)``) found in ``traces``, read; a line for each absent one."""
    for entry in names:
        name, procs = entry if isinstance(entry, tuple) else (entry, None)
        path = traces / name
        if not path.exists():
            print(f"   skipped {name}: not in {traces}")
            continue
        yield read_swf(path, procs=procs)


def run(traces: Path) -> list[dict]:
    rows = []
    for w in present_traces(traces, TRACES):
        for policy in ("fcfs", "easy"):
            rows.append(time_policy(w, policy))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", type=Path, default=None, help="SWF trace (default: the bundled slice)")
    ap.add_argument("--procs", type=int, default=None, help="machine size (default: read_swf's)")
    ap.add_argument("--policy", default="easy", help="dispatcher preset (default: easy)")
    ap.add_argument("--predictor", default=None, help="predictor name (default: the preset's own)")
    ap.add_argument("--repeats", type=int, default=REPEATS, help=f"timed runs (default {REPEATS})")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be positive")
    from hpcgym.workloads import default_trace_path

    w = read_swf(args.trace if args.trace is not None else default_trace_path(), procs=args.procs)
    print(json.dumps(time_policy(w, args.policy, args.predictor, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
