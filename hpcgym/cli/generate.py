"""``hpcgym generate``: a synthetic workload as a job table (Eurora: 001 and 002 classes, assumed shares)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import prediction_mae_minutes
from hpcgym.workloads import (
    EURORA_MAX_JOBS,
    TABLE_SUFFIXES,
    eurora,
    eurora_fields_by_source,
    shares,
    write_jobs,
)

HELP = "generate a synthetic job table (eurora: job classes of 001 and 002, other shares assumed)"

GENERATORS = ("eurora",)
"""Generators ``hpcgym generate`` knows."""


def configure(p: argparse.ArgumentParser) -> None:
    by = eurora_fields_by_source()
    p.epilog = (
        "eurora's parameters (hpcgym.workloads.eurora.EuroraParams) by source. From 001 and 002: "
        f"{', '.join(by['001, 002'])}; from 001: {', '.join(by['001'])}; from 002: {', '.join(by['002'])}. "
        f"Assumptions, in neither paper: {', '.join(by['assumption'])}; the queue, request, GPU/MIC, "
        "memory and arrival shares among them follow hpcgym's issue 10, not 001 or 002 (002 says Eurora "
        "had four queues and names none; the preset has five). Each reason: "
        "hpcgym.workloads.eurora_sources.SOURCES and docs/WORKLOADS.md."
    )
    p.add_argument("model", choices=GENERATORS, help="the workload to generate: eurora (001, 002)")
    p.add_argument("--jobs", type=int, default=10_000, help="number of jobs (default 10,000)")
    p.add_argument(
        "--seed", type=int, default=0, help="random seed; the same seed writes the same file (default 0)"
    )
    p.add_argument(
        "--load",
        type=float,
        default=1.0,
        help="offered-load factor: inter-arrival times are divided by F (default 1)",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE",
        help="the job table to write: .csv, .csv.gz, or .parquet (needs pyarrow)",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument(
        "--stats",
        action="store_true",
        help="print the published figures measured on the jobs as JSON (shares of classes, queues "
        "and requests, CPU time, inter-arrivals, and the off-line MAE in minutes of the W and D "
        "predictors, 001 section 5.1)",
    )


def run(args: argparse.Namespace) -> int:
    if isinstance(args.jobs, int) and args.jobs < 1:
        raise InvalidConfigError(f"--jobs must be >= 1, got {args.jobs}")
    if isinstance(args.jobs, int) and args.jobs > EURORA_MAX_JOBS:
        raise InvalidConfigError(f"--jobs must be at most {EURORA_MAX_JOBS:,}, got {args.jobs:,}")
    if args.seed < 0:
        raise InvalidConfigError(f"--seed must be >= 0, got {args.seed}")
    if not (math.isfinite(args.load) and args.load > 0):
        raise InvalidConfigError(f"--load must be a positive number, got {args.load}")
    out: Path = args.output
    if not out.name.lower().endswith(TABLE_SUFFIXES):
        raise InvalidConfigError(f"--output {out}: unknown file type; use one of {', '.join(TABLE_SUFFIXES)}")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidConfigError(f"--output {out}: no such directory: {parent}")
    t0 = time.perf_counter()
    w = eurora(args.jobs, seed=args.seed, load=args.load)
    seconds = time.perf_counter() - t0
    write_jobs(w, os.fspath(out))
    if args.stats:
        stats: dict[str, float] = {"jobs": float(len(w)), **shares(w)}
        stats["mae_min:W"] = prediction_mae_minutes(w, "walltime")
        stats["mae_min:D"] = prediction_mae_minutes(w, "profile")
        print(json.dumps({k: round(v, 6) for k, v in stats.items()}, indent=1))
    if not args.quiet:
        s = shares(w)
        print(
            f"wrote {len(w)} jobs to {out} (generated in {seconds:.2f} s): "
            f"short {s['short']:.2%}, medium {s['medium']:.2%}, long {s['long']:.3%}; "
            f"one node {s['one_node']:.1%}, one core {s['one_core']:.1%}, "
            f"GPU {s['gpu']:.1%}, MIC {s['mic']:.2%}",
            file=sys.stderr,
        )
    return 0
