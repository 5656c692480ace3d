"""``hpcgym compare``: several policies and predictors on one trace, as a table, CSV/JSON and a plot.

>>> from hpcgym.workload import load_default
>>> rows, schedules = compare(load_default().window(300), ["fcfs", "easy"], ["walltime"])
>>> [r["policy"] for r in rows]
['fcfs', 'easy']
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.cli import EXTRA_ARGUMENT_HELP, add_trace_arguments, command, load_trace, to_json
from hpcgym.errors import InvalidConfigError
from hpcgym.runner import SUMMARY_COLUMNS, easy_extra, format_table, run_policy, with_minutes
from hpcgym.sim import Schedule
from hpcgym.workload import Workload

CSV_COLUMNS = (
    "trace",
    "policy",
    "predictor",
    "procs",
    "jobs_simulated",
    "jobs_measured",
    "jobs_dropped",
    "mean_wait_s",
    "mean_slowdown",
    "mean_bsld",
    "max_wait_s",
    "utilization",
    "makespan_s",
    "sim_seconds",
    "jobs_per_second",
)


def compare(
    workload: Workload,
    policies: Sequence[str],
    predictors: Sequence[str | None],
    *,
    include_all: bool = False,
    progress: bool = False,
    extra: str | None = None,
) -> tuple[list[dict[str, Any]], list[Schedule]]:
    """Run every policy with every predictor (``None`` = the preset's own) on ``workload``.

    ``extra`` (``"classic"`` or ``"all"``) sets how every EASY-family preset among
    ``policies`` counts its extra processors; the other presets run as they are.
    """
    rows, schedules = [], []
    for policy in policies:
        for predictor in predictors:
            if progress:
                print(f"  {policy} / {predictor or 'preset'} ...", file=sys.stderr, flush=True)
            rule = extra if easy_extra(policy) is not None else None
            result = run_policy(
                workload, policy, predictor, include_all=include_all, progress=False, extra=rule
            )
            rows.append(with_minutes(result.row))
            schedules.append(result.schedule)
    return rows, schedules


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """One line per run with the :data:`CSV_COLUMNS`."""
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def plot(path: Path, rows: list[dict[str, Any]], schedules: list[Schedule], title: str) -> None:
    """Bars of mean wait and bounded slowdown, and the distribution of waits, in one PNG.

    Raises:
        ImportError: matplotlib is missing (``pip install hpcgym[plot]``).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['policy']}\n{r['predictor']}" for r in rows]
    x = np.arange(len(rows))
    colors = plt.get_cmap("tab10")(np.arange(len(rows)) % 10)
    fig, axes = plt.subplots(1, 3, figsize=(max(12, 1.6 * len(rows) * 2), 4.6))
    for ax, key, label in (
        (axes[0], "mean_wait_min", "mean wait [min]"),
        (axes[1], "mean_bsld", "mean bounded slowdown"),
    ):
        values = [r[key] for r in rows]
        bars = ax.bar(x, values, color=colors)
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    ax = axes[2]
    for r, s, c in zip(rows, schedules, colors, strict=True):
        wait = np.sort(np.maximum(s.wait, 1.0)) / 60.0
        ax.plot(
            wait, np.arange(1, len(wait) + 1) / len(wait), color=c, label=f"{r['policy']} {r['predictor']}"
        )
    ax.set_xscale("log")
    ax.set_xlabel("wait [min] (waits under 1 s drawn at 1 s)")
    ax.set_ylabel("fraction of jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--policies", default="fcfs,sjf-list,easy", help="comma-separated presets")
    p.add_argument(
        "--predictors",
        default="preset",
        help="comma-separated predictors; 'preset' = each preset's own (default)",
    )
    p.add_argument("--include-all", action="store_true", help="average over every job")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    p.add_argument("--csv", type=Path, default=None, help="write the rows as CSV")
    p.add_argument("--plot", type=Path, default=None, help="write a PNG comparing the runs")
    p.add_argument(
        "--extra",
        choices=("classic", "all"),
        default=None,
        help=EXTRA_ARGUMENT_HELP + "; applies to every EASY-family preset of --policies, the others run "
        "as they are (an error if none is EASY-family)",
    )


def _run(args: argparse.Namespace) -> int:
    w = load_trace(args)
    print(w.report, file=sys.stderr)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    predictors: list[str | None] = [
        None if p.strip() == "preset" else p.strip() for p in args.predictors.split(",") if p.strip()
    ]
    if args.extra is not None:
        easy = [p for p in policies if easy_extra(p) is not None]
        if not easy:
            raise InvalidConfigError(
                f"--extra {args.extra} applies only to EASY-family presets; none of --policies "
                f"{','.join(policies)} is one (see `hpcgym policies`)"
            )
        print(f"EASY extra processors: {args.extra} (for {', '.join(easy)})", file=sys.stderr)
    rows, schedules = compare(
        w, policies, predictors, include_all=args.include_all, progress=True, extra=args.extra
    )
    if args.csv is not None:
        write_csv(args.csv, rows)
    if args.plot is not None:
        plot(args.plot, rows, schedules, f"{w.name}: {len(w)} jobs on {w.procs} processors")
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        print(to_json(rows))
    else:
        print(format_table(rows, SUMMARY_COLUMNS))
    return 0


command("compare", "several policies and predictors on one trace: table, CSV/JSON and a plot")(_configure)(
    _run
)
