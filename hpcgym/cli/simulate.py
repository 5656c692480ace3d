"""``hpcgym simulate``: replay a trace under one policy and report its metrics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hpcgym.cli._common import (
    EXTRA_ARGUMENT_HELP,
    add_trace_arguments,
    load_trace,
)
from hpcgym.common.report import to_json

HELP = "replay a trace under one policy and report its metrics"


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--policy", default="easy", help="dispatcher preset (see `hpcgym policies`)")
    p.add_argument(
        "--predictor", default=None, help="runtime predictor (default: the preset's; see `hpcgym predictors`)"
    )
    p.add_argument("--kill-at-estimate", action="store_true", help="end jobs that reach their estimate")
    p.add_argument(
        "--include-all", action="store_true", help="average over every job (no warm-up/cool-down exclusion)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--schedule-out",
        type=Path,
        default=None,
        help=f"write every job's schedule ({', '.join(SCHEDULE_SUFFIXES)}: CSV, JSON records or SWF)",
    )
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="FILE",
        help="draw the schedule into FILE (.png, .svg or .pdf; needs the plot extra), as `hpcgym plot` "
        "draws a schedule file",
    )
    p.add_argument(
        "--plot-view",
        choices=("all", "gantt", "load"),
        default="all",
        help="with --plot: all (the Gantt chart by user above queue length and utilization), gantt or load",
    )
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument(
        "--via-env",
        action="store_true",
        help="run the policy as an agent acting through the Gymnasium environment (same result)",
    )
    p.add_argument(
        "--extra",
        choices=("classic", "all"),
        default=None,
        help=EXTRA_ARGUMENT_HELP + "; an error with a policy that is not EASY-family",
    )


def run(args: argparse.Namespace) -> int:
    from hpcgym.baselines import RunVia, preset_predictor, resolve_policy_name, run_policy
    from hpcgym.common.report import SUMMARY_COLUMNS, format_table, with_minutes

    # arguments first, before a trace is read and simulated
    policy = resolve_policy_name(args.policy)  # UnknownNameError; the canonical name from here on
    preset_predictor(policy, args.predictor)  # UnknownNameError, InvalidConfigError
    if args.schedule_out is not None:
        from hpcgym.sim.schedule_file import check_schedule_path

        check_schedule_path(args.schedule_out, "--schedule-out")
    if args.plot is not None:
        from hpcgym.sim.pictures import check_picture_path

        check_picture_path(args.plot, "--plot")
    w = load_trace(args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    via: RunVia | None = None
    if args.via_env:  # the environment acts for the policy: the layer above hands itself in
        from hpcgym.env import run_via_env

        via = run_via_env
    result = run_policy(
        w,
        policy,
        args.predictor,
        kill_at_estimate=args.kill_at_estimate,
        include_all=args.include_all,
        progress=False if args.no_progress else None,
        via=via,
        extra=args.extra,
    )
    if args.schedule_out is not None:
        from hpcgym.sim.schedule_file import write_schedule

        write_schedule(args.schedule_out, result.schedule)
    if args.plot is not None:
        from hpcgym.sim.pictures import plot_run

        for note in plot_run(result.schedule, args.plot, view=args.plot_view):
            print(f"note: {note}", file=sys.stderr)
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.json:
        print(to_json(result.row))
    else:
        if args.extra is not None:
            print(f"EASY extra processors: {args.extra}", file=sys.stderr)
        print(format_table([with_minutes(result.row)], SUMMARY_COLUMNS))
        if "replay" in result.row:
            print(replay_summary(result.row["replay"]))
    return 0


def replay_summary(r: dict[str, Any]) -> str:
    """The replay's counts (``Schedule.extras["replay"]``) in one line.

    >>> r = {"jobs": 4, "exact_jobs": 3, "exact_share": 0.75, "delayed_jobs": 1, "total_delay_s": 60.0,
    ...      "max_delay_s": 60.0, "unknown_wait_jobs": 0, "log_overcommit_instants": 1,
    ...      "log_overcommit_seconds": 30.0}
    >>> print(replay_summary(r))  # doctest: +ELLIPSIS
    replay: 3 of 4 jobs (75.00 %) started at their logged start; 1 delayed (60 s in all, at most 60 s); ...
    """
    return (
        f"replay: {r['exact_jobs']} of {r['jobs']} jobs ({100 * r['exact_share']:.2f} %) started at their "
        f"logged start; {r['delayed_jobs']} delayed ({r['total_delay_s']:.0f} s in all, at most "
        f"{r['max_delay_s']:.0f} s); {r['unknown_wait_jobs']} with unknown wait; the log exceeds the "
        f"machine at {r['log_overcommit_instants']} instants ({r['log_overcommit_seconds']:.0f} s in all)"
    )


SCHEDULE_SUFFIXES = (".csv", ".json", ".swf", ".swf.gz")
"""File types ``--schedule-out`` writes, by suffix (:data:`hpcgym.sim.schedule_file.SCHEDULE_SUFFIXES`,
not imported here so that ``hpcgym --help`` does not load the engine)."""
