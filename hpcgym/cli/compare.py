"""``hpcgym compare``: see HELP; the runs, table and plot are :mod:`hpcgym.experiments.compare`'s."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.baselines import easy_extra
from hpcgym.cli._common import EXTRA_ARGUMENT_HELP, add_trace_arguments, load_trace
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.report import SUMMARY_COLUMNS, format_table, to_json, write_csv
from hpcgym.experiments.compare import PLOT_SUFFIXES, check_names, check_plot_path, compare, plot
from hpcgym.sim import MEASURED_SETS, common_measured_jobs

HELP = "several policies and predictors on one trace: table, CSV/JSON and a plot"


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--policies", default="fcfs,sjf-list,easy", help="comma-separated presets")
    p.add_argument(
        "--predictors",
        default="preset",
        help="comma-separated predictors; 'preset' = each preset's own (default)",
    )
    p.add_argument(
        "--measure",
        choices=list(MEASURED_SETS),
        default="trimmed",
        help="the jobs every run is averaged over: trimmed (default: all but the first and last 1 %% "
        "by submission), steady-state (the jobs 004's warm-up/cool-down rule keeps in every run) or all",
    )
    p.add_argument("--include-all", action="store_true", help="average over every job (--measure all)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    p.add_argument("--csv", type=Path, default=None, help="write the rows as CSV")
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        help=f"write a plot comparing the runs ({', '.join(PLOT_SUFFIXES)}; needs the plot extra)",
    )
    p.add_argument(
        "--extra",
        choices=("classic", "all"),
        default=None,
        help=EXTRA_ARGUMENT_HELP + "; applies to every EASY-family preset of --policies, the others run "
        "as they are (an error if none is EASY-family)",
    )


def run(args: argparse.Namespace) -> int:
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    predictors: list[str | None] = [
        None if p.strip() == "preset" else p.strip() for p in args.predictors.split(",") if p.strip()
    ]
    check_names(policies, predictors)
    if args.extra is not None:
        easy = [p for p in policies if easy_extra(p) is not None]
        if not easy:
            raise InvalidConfigError(
                f"--extra {args.extra} applies only to EASY-family presets; none of --policies "
                f"{','.join(policies)} is one (see `hpcgym policies`)"
            )
        print(f"EASY extra processors: {args.extra} (for {', '.join(easy)})", file=sys.stderr)
    if args.plot is not None:
        check_plot_path(args.plot)
    w = load_trace(args)
    print(w.report, file=sys.stderr)
    measure = "all" if args.include_all else args.measure
    rows, schedules = compare(w, policies, predictors, measure=measure, progress=True, extra=args.extra)
    if args.csv is not None:
        write_csv(args.csv, rows)
    if args.plot is not None:
        mask = common_measured_jobs(schedules, measure)
        plot(
            args.plot,
            rows,
            schedules,
            f"{w.name}: {len(w):,} jobs on {w.procs:,} processors; "
            f"averages over the same {int(mask.sum()):,} jobs ({measure})",
            measured=mask,
        )
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        print(to_json(rows))
    else:
        print(format_table(rows, SUMMARY_COLUMNS))
    return 0
