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
from hpcgym.common.errors import InvalidConfigError
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
        check_schedule_path(args.schedule_out)
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
"""File types ``--schedule-out`` writes, by suffix."""
SCHEDULE_COLUMNS = ("job_id", "submit", "start", "end", "procs", "estimate", "wait", "nodes")
"""Columns of a schedule file; ``nodes`` is the node of each chunk, ``;``-separated in CSV."""


def check_schedule_path(path: Path) -> None:
    """Raise unless ``path`` ends in a suffix of :data:`SCHEDULE_SUFFIXES` and its folder exists."""
    if not path.name.lower().endswith(SCHEDULE_SUFFIXES):
        raise InvalidConfigError(
            f"--schedule-out {path}: unknown file type; use one of {', '.join(SCHEDULE_SUFFIXES)}"
        )
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidConfigError(f"--schedule-out {path}: no such directory: {parent}")


def write_schedule(path: Path, schedule: Any) -> None:
    """Per-job results as CSV, JSON records (:data:`SCHEDULE_COLUMNS`) or SWF.

    ``nodes`` lists the node of each of the job's chunks (``0;0;3`` in CSV, a list in
    JSON; SWF has no place for it): on the one-node machine of an SWF trace every job
    runs on node 0.
    """
    import io

    import numpy as np

    from hpcgym.workloads import write_swf

    check_schedule_path(path)
    w = schedule.workload
    name = path.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        write_swf(path, w, start=schedule.start)
        return
    columns = [w.job_id, w.submit, schedule.start, schedule.end, w.procs_req, w.estimate, schedule.wait]
    ptr = np.asarray(schedule.placement_ptr)
    flat = np.asarray(schedule.placement_nodes).tolist()
    if len(ptr) == len(w) + 1:
        bounds = ptr.tolist()
        nodes = [flat[bounds[j] : bounds[j + 1]] for j in range(len(w))]
    else:  # a schedule made without placements
        nodes = [[] for _ in range(len(w))]
    if name.endswith(".json"):
        whole = {"job_id", "procs"}
        records = [
            {
                **{
                    key: int(value) if key in whole else float(value)
                    for key, value in zip(SCHEDULE_COLUMNS, row, strict=False)
                },
                "nodes": placed,
            }
            for row, placed in zip(
                zip(*(np.asarray(c).tolist() for c in columns), strict=True), nodes, strict=True
            )
        ]
        path.write_text(to_json(records) + "\n")
        return
    numbers = io.StringIO()
    np.savetxt(numbers, np.column_stack(columns), fmt="%.17g", delimiter=",")
    lines = numbers.getvalue().splitlines()
    text = [",".join(SCHEDULE_COLUMNS)]
    text += [f"{line},{';'.join(map(str, placed))}" for line, placed in zip(lines, nodes, strict=True)]
    path.write_text("\n".join(text) + "\n")
