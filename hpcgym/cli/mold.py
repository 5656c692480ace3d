"""``hpcgym mold``: 003's job molding and delayed submission in front of EASY (Tables VIII, IX).

The run is :func:`hpcgym.baselines.run_managed`; this module parses the arguments and
prints the table, the notes and the files.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.baselines import MODES, RUNTIME_MODELS, WAIT_PREDICTORS, MoldingConfig, over_seeds, run_managed
from hpcgym.cli._common import add_trace_arguments, load_trace
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import write_text_atomic
from hpcgym.common.report import format_table, to_json, write_csv
from hpcgym.common.stats import interval_text

HELP = "job molding and delayed submission in front of EASY (003 Tables VIII, IX)"

TABLE = [
    ("trace", "trace", ""),
    ("mode", "mode", ""),
    ("jobs", "jobs", ",d"),
    ("baseline_wait_min", "EASY wait", ".0f"),
    ("baseline_exec_min", "exec", ".0f"),
    ("baseline_response_min", "response", ".0f"),
    ("wait_min", "managed wait", ".0f"),
    ("exec_min", "exec", ".0f"),
    ("response_min", "response", ".0f"),
    ("reduction_pct", "reduction %", ".1f"),
    ("runtime_model", "run time", ""),
    ("baseline_cpu_hours", "EASY CPU-h", ",.0f"),
    ("baseline_period_utilization", "util", ".2f"),
    ("cpu_hours", "managed CPU-h", ",.0f"),
    ("period_utilization", "util", ".2f"),
    ("paper_baseline_response_min", "003 EASY", ".0f"),
    ("paper_response_min", "003 managed", ".0f"),
]
"""The table ``hpcgym mold`` prints (minutes)."""


def _seeds(text: str) -> tuple[int, ...]:
    """``--seed``'s value: whole numbers >= 0, comma-separated, no repeats."""
    parts = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() for t in parts) or len(set(parts)) != len(parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give whole numbers >= 0, comma-separated, each once")
    return tuple(int(t) for t in parts)


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p._option_string_actions[
        "--jobs"
    ].help = "managed jobs after the history (default: 20,000 for molding, 6,000 for delay; 003 V)"
    p._option_string_actions["--offset"].help = "skip this many jobs of the trace first"
    p.add_argument("--mode", choices=MODES, default="molding", help="molding (003 IV-A) or delay (IV-B)")
    p.add_argument(
        "--history", type=int, default=10_000, help="unmanaged jobs first, the predictors' history (10,000)"
    )
    p.add_argument(
        "--seed",
        type=_seeds,
        default=(0,),
        metavar="N[,N...]",
        help="seed of the roulette wheel (molded run times); several (0,1,2): one run each, and their "
        "blocks' mean response averaged over the seeds against EASY",
    )
    p.add_argument(
        "--wait-predictor", choices=WAIT_PREDICTORS, default="apq", help="queue-wait predictor (default apq)"
    )
    p.add_argument(
        "--no-score-own",
        action="store_true",
        help="mold a job even when its own size has no rangeSet to compare with (off by default)",
    )
    p.add_argument(
        "--runtime-model",
        choices=RUNTIME_MODELS,
        default="003",
        help="a molded job's run time: 003 (default, 003 V-C: drawn from the user's earlier jobs at the "
        "new size) or amdahl (its own run time and estimate scaled by Amdahl's law: work conserved "
        "with --serial-fraction 0)",
    )
    p.add_argument(
        "--serial-fraction",
        type=float,
        default=None,
        metavar="F",
        help="Amdahl's serial fraction in [0, 1] for --runtime-model amdahl (default 0: linear speedup)",
    )
    p.add_argument("--json", type=Path, default=None, help="write the summary, config and CI here")
    p.add_argument("--out", type=Path, default=None, help="directory for summary.json and jobs.csv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    if args.serial_fraction is not None and args.runtime_model != "amdahl":
        raise InvalidConfigError("--serial-fraction is Amdahl's serial fraction: give --runtime-model amdahl")
    configs = [
        MoldingConfig(
            mode=args.mode,
            history=args.history,
            jobs=args.jobs,
            seed=seed,
            wait_predictor=args.wait_predictor,
            score_own=not args.no_score_own,
            runtime_model=args.runtime_model,
            serial_fraction=args.serial_fraction or 0.0,
        )
        for seed in args.seed
    ]
    cfg = configs[0]
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise InvalidConfigError(f"--out {args.out}: exists and is not a directory")
    trace_args = argparse.Namespace(**vars(args))
    trace_args.jobs = cfg.history + cfg.managed
    w = load_trace(trace_args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    results = [run_managed(w, c, progress=not args.no_progress) for c in configs]
    fulls = [r.to_dict() for r in results]  # the summary, the config and the comparison
    notes = []
    for row in fulls:
        seed = f"seed {row['config']['seed']}: " if len(results) > 1 else ""
        notes.append(
            f"{seed}{row['molded']:,} of {row['jobs']:,} managed jobs molded ({row['expanded']:,} expanded, "
            f"{row['shrunk']:,} shrunk), {row['no_candidate']:,} kept without a rangeSet to compare"
        )
        notes.append(
            f"{seed}work of the managed jobs: {row['cpu_hours']:,.0f} CPU-hours against EASY's "
            f"{row['baseline_cpu_hours']:,.0f} (run times: {row['runtime_model']}); utilization from the "
            f"first managed submission (003's definition) {row['period_utilization']:.2f} against "
            f"{row['baseline_period_utilization']:.2f}"
        )
        if cfg.mode == "delay":
            notes.append(
                f"{seed}{row['delayed']:,} jobs held by the manager, mean hold {row['mean_hold_min']:.1f} min"
            )
        c = row["comparison"]
        if c is not None:
            notes.append(
                f"{seed}managed - EASY mean response: {c['response_difference_min']:+.1f} min, 95 % CI "
                f"{interval_text(c['ci_low'], c['ci_high'], '+.1f', why='one block')} over "
                f"{_blocks(c['blocks'])} of consecutive jobs"
            )
    if fulls[0]["jobs_dropped"]:
        notes.append(f"{fulls[0]['jobs_dropped']:,} jobs dropped by the trace reader (see the load report)")
    out: dict[str, Any] = fulls[0]
    if len(results) > 1:
        both = None
        with contextlib.suppress(ImportError):
            both = over_seeds(results)
        out = {"runs": fulls, "over_seeds": both}
        if both is not None:
            notes.append(
                f"over seeds {', '.join(map(str, both['seeds']))}: managed - EASY mean response "
                f"{both['response_difference_min']:+.1f} min, 95 % CI "
                f"{interval_text(both['ci_low'], both['ci_high'], '+.1f', why='one block')} over "
                f"{_blocks(both['blocks'])} (each block's managed mean averaged over the seeds)"
            )
    columns = TABLE if len(results) == 1 else [*TABLE[:2], ("seed", "seed", "d"), *TABLE[2:]]
    shown = [{**row, "seed": row["config"]["seed"]} for row in fulls]
    print(format_table(shown, columns, notes))
    if args.json is not None:
        write_text_atomic(args.json, to_json(out))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out / "summary.json", to_json(out))
        keys = ["seed", *results[0].table()] if len(results) > 1 else list(results[0].table())
        table_rows = []
        for r in results:
            table = r.table()
            if len(results) > 1:
                table = {"seed": np.full(len(r.jobs), r.config.seed), **table}
            table_rows += [
                dict(zip(keys, vals, strict=True))
                for vals in zip(*(table[k].tolist() for k in keys), strict=True)
            ]
        write_csv(args.out / "jobs.csv", table_rows, keys)
    return 0


def _blocks(n: int) -> str:
    """``"1 block"``, ``"3 blocks"``."""
    return f"{n} block" if n == 1 else f"{n} blocks"
