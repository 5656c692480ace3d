"""Memory: the peak resident memory of a whole ``hpcgym simulate --schedule-out`` run.

Each figure is one fresh process running ``hpcgym simulate --trace T --policy P
--schedule-out FILE.csv --no-progress`` (interpreter, imports, the compiled kernels,
reading the trace, the simulation, the report and the schedule file); the process reports
its own peak resident set size (``getrusage``'s ``ru_maxrss``, what ``/usr/bin/time -f %M``
prints) and its wall time. Issue 23's target: full SDSC-BLUE (232,000 jobs) under EASY at
most 300 MB.

SDSC-BLUE is not among the development traces (it is held out), so besides it, when a
``--traces`` folder has it, the figures use a trace of its size built here from SDSC-SP2:
the log repeated end to end (each copy starting an hour after the last submission of the
one before, job ids renumbered) until 232,000 jobs are kept, every size times 9, on a
machine of 1,152 processors (BLUE's size in 004). Main before this work took 448 MB
(EASY) and 503 MB (EASY++) on it, against the 449 and 510 MB the issue measured on BLUE.

Run directly, it measures one run::

    python benchmarks/bench_memory.py --trace path/to/trace.swf.gz --policy easy++
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TARGET_MB = 300.0
"""Issue 23: full SDSC-BLUE under EASY with ``--schedule-out``, at most this peak."""
BLUE = "SDSC-BLUE-2000-4.2-cln.swf.gz"
BLUE_JOBS = 232_000
BLUE_PROCS = 1152
SOURCE = "SDSC-SP2-1998-4.2-cln.swf.gz"
OTHERS = ("HPC2N-2002-2.2-cln.swf.gz",)
POLICIES = ("easy", "easy++")

_CHILD = """
import resource, sys, time
t0 = time.perf_counter()
from hpcgym.cli import main
code = main(sys.argv[1:])
print("BENCH-MEMORY", code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t0)
"""


def peak_rss(trace: Path, policy: str) -> dict:
    """Peak RSS (MB) and wall seconds of one ``hpcgym simulate --schedule-out`` process."""
    with tempfile.TemporaryDirectory(prefix="hpcgym-bench-memory-") as tmp:
        argv = ["simulate", "--trace", str(trace.resolve()), "--policy", policy, "--no-progress"]
        argv += ["--schedule-out", str(Path(tmp) / "schedule.csv")]
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=True, cwd=HERE.parent
        ).stdout
    line = next(x for x in out.splitlines() if x.startswith("BENCH-MEMORY"))
    _, code, kb, seconds = line.split()
    if int(code):
        raise RuntimeError(f"hpcgym simulate exited with {code} on {trace}")
    return {"peak_rss_mb": int(kb) / 1024, "wall_seconds": float(seconds)}


def blue_sized(source: Path, out: Path, jobs: int = BLUE_JOBS, procs: int = BLUE_PROCS) -> Path:
    """Write a trace of SDSC-BLUE's size made from ``source`` (see the module docstring)."""
    with gzip.open(source, "rt") as fh:
        job_lines = (line for line in fh if line.strip() and not line.lstrip().startswith(";"))
        rows = np.loadtxt(job_lines, ndmin=2)
    scale = procs / 128  # SDSC-SP2's 128 processors
    copies = []
    kept = 0
    span = rows[:, 1].max() + 3600
    while kept < jobs:
        k = len(copies)
        r = rows.copy()
        r[:, 0] += k * len(rows)
        r[:, 1] += k * span
        for field in (4, 7):  # allocated and requested processors
            r[:, field] = np.where(r[:, field] > 0, r[:, field] * scale, r[:, field])
        copies.append(r)
        kept += int((r[:, 3] >= 0).sum())  # the rest are dropped (run time -1)
    data = np.concatenate(copies)
    cut = int(np.searchsorted(np.cumsum(data[:, 3] >= 0), jobs)) + 1
    with gzip.open(out, "wt", compresslevel=6) as fh:
        fh.write(f"; {source.name} repeated, sizes x{scale:g}: SDSC-BLUE's size\n; MaxProcs: {procs}\n")
        np.savetxt(fh, data[:cut], fmt="%.17g")
    return out


def run(traces: Path) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="hpcgym-bench-blue-") as tmp:
        named = []
        if (traces / BLUE).exists():
            named.append(("SDSC-BLUE", traces / BLUE))
        else:
            print(f"   {BLUE} not in {traces}: only the trace of its size")
        if (traces / SOURCE).exists():
            sized = blue_sized(traces / SOURCE, Path(tmp) / "blue-sized.swf.gz")
            named.append(("BLUE-sized (SDSC-SP2 x4.3)", sized))
        named += [(name.split("-")[0], traces / name) for name in OTHERS if (traces / name).exists()]
        for label, path in named:
            for policy in POLICIES:
                row = {"what": f"simulate --schedule-out, {policy}", "trace": label, "policy": policy}
                row.update(peak_rss(path, policy))
                if policy == "easy" and label != "HPC2N":
                    row["target_mb"] = TARGET_MB
                    row["within_target"] = row["peak_rss_mb"] <= TARGET_MB
                rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", type=Path, required=True, help="SWF trace")
    ap.add_argument("--policy", default="easy", help="dispatcher preset (default: easy)")
    args = ap.parse_args(argv)
    print(json.dumps({"trace": str(args.trace), "policy": args.policy, **peak_rss(args.trace, args.policy)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
