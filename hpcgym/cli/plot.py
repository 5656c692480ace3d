"""``hpcgym plot``: see HELP; the pictures are :mod:`hpcgym.sim.pictures`'."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.common.errors import InvalidConfigError

HELP = "pictures of a schedule file: Gantt chart, queue and utilization, or two policies compared"

VIEWS = ("all", "gantt", "load")
"""``--view``'s choices (:data:`hpcgym.sim.pictures.VIEWS`, not imported here so that
``hpcgym --help`` does not load the engine)."""
COLOR_BY = ("user", "queue", "job")
"""``--color-by``'s choices (:data:`hpcgym.sim.pictures.COLOR_BY`)."""
MAX_GANTT_JOBS = 2000
"""``--max-jobs``'s default (:data:`hpcgym.sim.pictures.MAX_GANTT_JOBS`)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "schedule",
        nargs="?",
        type=Path,
        default=None,
        metavar="SCHEDULE",
        help="a schedule file, as `hpcgym simulate --schedule-out FILE.csv` (or .json) writes it",
    )
    p.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        default=None,
        metavar=("A", "B"),
        help="two schedule files of the same jobs (two policies): per-job wait and bounded slowdown "
        "of B against A on log-log axes, and both queue lengths over time",
    )
    p.add_argument(
        "-o", "--output", type=Path, required=True, metavar="FILE", help="the picture: .png, .svg or .pdf"
    )
    p.add_argument(
        "--view",
        choices=VIEWS,
        default="all",
        help="all (default): the Gantt chart above the queue length and utilization; gantt; load",
    )
    p.add_argument(
        "--color-by",
        choices=COLOR_BY,
        default=None,
        help="what a job's colour says (default: user if the users are known, else one colour per job); "
        "a schedule file has no users or queues: --trace or --workload gives them",
    )
    p.add_argument(
        "--machine",
        default=None,
        metavar="NAME|FILE.toml",
        help="the machine the schedule was simulated on: a preset (see `hpcgym machines`) or a TOML file "
        "(default: the trace's, else one node of as many processors as were ever busy at once)",
    )
    p.add_argument("--procs", type=int, default=None, help="the machine's size in processors instead")
    p.add_argument(
        "--node-size",
        type=int,
        default=None,
        metavar="K",
        help="with --procs: nodes of K processors used whole",
    )
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        help="the SWF trace the schedule was simulated from (a path, or a catalogue name: see `hpcgym "
        "traces`): users and queues by job id, and its machine",
    )
    p.add_argument(
        "--workload",
        type=Path,
        default=None,
        metavar="FILE",
        help="the job table it was simulated from instead",
    )
    p.add_argument(
        "--from",
        dest="start",
        default=None,
        metavar="TIME",
        help="draw from this time after the first submission: hours, or a number with s, m, h or d (2d)",
    )
    p.add_argument("--to", dest="stop", default=None, metavar="TIME", help="draw until this time (as --from)")
    p.add_argument(
        "--max-jobs",
        type=int,
        default=MAX_GANTT_JOBS,
        metavar="N",
        help="above N jobs in the window the Gantt chart is a heat map of busy shares "
        f"(default {MAX_GANTT_JOBS})",
    )
    p.add_argument("--labels", default=None, metavar="A,B", help="with --compare: names of the two schedules")
    p.add_argument("--dpi", type=float, default=100.0, help="resolution of a PNG (default 100)")


def run(args: argparse.Namespace) -> int:
    from hpcgym.sim.pictures import parse_time, plot_comparison_files, plot_schedule_file

    if (args.schedule is None) == (args.compare is None):
        raise InvalidConfigError("give one schedule file, or --compare A B (two files), not both")
    if args.dpi <= 0 or args.max_jobs < 0:
        raise InvalidConfigError("--dpi must be > 0 and --max-jobs >= 0")
    if args.compare is not None:
        single = ("machine", "procs", "node_size", "trace", "workload", "start", "stop", "color_by")
        given = [f"--{k.replace('_', '-')}" for k in single if getattr(args, k) is not None]
        if given or args.view != "all":
            raise InvalidConfigError(
                f"{', '.join(given) or '--view'}: for a single schedule; --compare draws waits, "
                "slowdowns and queues"
            )
        labels = None
        if args.labels is not None:
            labels = [x.strip() for x in args.labels.split(",")]
            if len(labels) != 2 or not all(labels):
                raise InvalidConfigError(f"--labels: {args.labels!r} is not two names separated by a comma")
        a, b = args.compare
        notes = plot_comparison_files(a, b, args.output, labels=labels, dpi=args.dpi)
    else:
        if args.labels is not None:
            raise InvalidConfigError("--labels names the two schedules of --compare")
        window = (
            None if args.start is None else parse_time(args.start, "--from"),
            None if args.stop is None else parse_time(args.stop, "--to"),
        )
        notes = plot_schedule_file(
            args.schedule,
            args.output,
            machine=args.machine,
            procs=args.procs,
            node_size=args.node_size,
            trace=args.trace,
            workload=args.workload,
            view=args.view,
            color_by=args.color_by,
            window=window,
            max_jobs=args.max_jobs,
            dpi=args.dpi,
        )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0
