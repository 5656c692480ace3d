"""`make bench`: throughput of the engine, the predictors, the environment and wait prediction.

Every ``benchmarks/bench_*.py`` module defines ``run(traces_dir) -> list[dict]``; each
dict is one figure with at least ``bench``, ``what`` and the measured numbers. This
script runs them all, prints one table and writes ``results/bench.json``.

Usage: ``python benchmarks/run.py [--only NAME] [--traces DIR]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEVELOPMENT_TRACES = HERE.parent.parent / "shared" / "traces"
"""The traces of the development checkout; a clone uses the catalogue's folder instead."""


def default_traces() -> Path:
    """The development traces if present, else the folder ``hpcgym traces fetch`` fills."""
    from hpcgym.workloads import trace_cache_dir

    return DEVELOPMENT_TRACES if DEVELOPMENT_TRACES.is_dir() else trace_cache_dir()


def machine() -> dict[str, str]:
    import os

    import numpy

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", default=None, help="run only bench_<NAME>.py")
    ap.add_argument(
        "--traces",
        type=Path,
        default=None,
        help="folder of the PWA traces (default: the folder `hpcgym traces fetch` fills)",
    )
    ap.add_argument("--out", type=Path, default=Path("results/bench.json"))
    args = ap.parse_args()
    if args.traces is None:
        args.traces = default_traces()
    if not args.traces.is_dir():
        # the benchmarks on the bundled trace run; those on full logs say what they skip
        print(
            f"benchmarks: no traces folder {args.traces}: full-log benchmarks are skipped "
            "(hpcgym traces fetch NAME, or pass --traces)",
            file=sys.stderr,
        )
    rows: list[dict] = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if args.only and name != args.only:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"== {path.name}", flush=True)
        for row in module.run(args.traces):
            row.setdefault("bench", name)
            rows.append(row)
            print(
                "   "
                + "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                flush=True,
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
