"""Command line: ``hpcgym simulate | policies | predictors | demo``.

Subcommands are small functions registered in :data:`COMMANDS`; other modules add
theirs with :func:`command`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hpcgym.errors import HpcGymError

Handler = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Handler, str]] = {}


def command(
    name: str, help: str
) -> Callable[[Callable[[argparse.ArgumentParser], None]], Callable[[Handler], Handler]]:
    """Register a subcommand: ``@command(name, help)(configure)(handler)``."""

    def with_configure(configure: Callable[[argparse.ArgumentParser], None]) -> Callable[[Handler], Handler]:
        def with_handler(handler: Handler) -> Handler:
            COMMANDS[name] = (configure, handler, help)
            return handler

        return with_handler

    return with_configure


def add_trace_arguments(p: argparse.ArgumentParser) -> None:
    """``--trace --procs --jobs --offset --load``, shared by every command that reads a trace."""
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        help="SWF file, plain or .gz (default: the bundled slice of SDSC-SP2)",
    )
    p.add_argument("--procs", type=int, default=None, help="machine size (default: the header's MaxProcs)")
    p.add_argument("--jobs", type=int, default=None, help="simulate only this many jobs")
    p.add_argument("--offset", type=int, default=0, help="skip this many jobs first")
    p.add_argument(
        "--load", type=float, default=1.0, help="multiply the offered load (inter-arrival times / F)"
    )


def load_trace(args: argparse.Namespace) -> Any:
    """The workload the trace arguments describe."""
    from hpcgym.workload import default_trace_path, read_swf

    path = args.trace if args.trace is not None else default_trace_path()
    w = read_swf(path, procs=args.procs)
    if args.offset or args.jobs is not None:
        w = w.window(args.jobs, args.offset)
    if args.load != 1.0:
        w = w.scale_load(args.load)
    return w


def json_ready(value: Any) -> Any:
    """``value`` with NaN and infinities as ``null``: strict JSON has no spelling for them.

    (A metric over no jobs is NaN, e.g. the mean wait of an empty job class.)
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Strict JSON of a result: NaN and infinities become ``null``, numpy numbers plain ones."""
    return json.dumps(json_ready(value), default=float, allow_nan=False)


EXTRA_RULE_HELP = {
    "classic": "the free processors plus those of running jobs taken in predicted-end order until the "
    "first waiting job fits, minus its need (Lifka's EASY; reproduces Tsafrir et al. 2007). Of running "
    "jobs with the same predicted end only those needed are counted, so the result depends on their order",
    "all": "every processor predicted to be free at the reservation, minus the first waiting job's need",
}
"""EASY's rules for counting extra processors (``EasyBackfilling(extra=...)``), for help texts."""

EXTRA_ARGUMENT_HELP = (
    "how EASY-family presets count the extra processors a long job may backfill onto: "
    "'classic' (every preset's default; reproduces Tsafrir et al. 2007) or 'all' (every processor "
    "predicted free at the reservation); see `hpcgym policies`"
)


def _configure_simulate(p: argparse.ArgumentParser) -> None:
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
        "--schedule-out", type=Path, default=None, help="write every job's schedule (.csv, or .swf/.swf.gz)"
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


def _simulate(args: argparse.Namespace) -> int:
    from hpcgym.runner import SUMMARY_COLUMNS, format_table, run_policy, with_minutes

    w = load_trace(args)
    if not args.json and w.report is not None:
        print(w.report, file=sys.stderr)
    result = run_policy(
        w,
        args.policy,
        args.predictor,
        kill_at_estimate=args.kill_at_estimate,
        include_all=args.include_all,
        progress=False if args.no_progress else None,
        via_env=args.via_env,
        extra=args.extra,
    )
    if args.schedule_out is not None:
        write_schedule(args.schedule_out, result.schedule)
    if args.json:
        print(to_json(result.row))
    else:
        if args.extra is not None:
            print(f"EASY extra processors: {args.extra}", file=sys.stderr)
        print(format_table([with_minutes(result.row)], SUMMARY_COLUMNS))
    return 0


def write_schedule(path: Path, schedule: Any) -> None:
    """Per-job results as CSV (``job_id,submit,start,end,procs,estimate,wait``) or SWF."""
    import numpy as np

    from hpcgym.workload import write_swf

    w = schedule.workload
    if path.name.endswith((".swf", ".swf.gz")):
        write_swf(path, w, start=schedule.start)
        return
    table = np.column_stack(
        [w.job_id, w.submit, schedule.start, schedule.end, w.procs_req, w.estimate, schedule.wait]
    )
    np.savetxt(
        path,
        table,
        fmt="%.17g",
        delimiter=",",
        header="job_id,submit,start,end,procs,estimate,wait",
        comments="",
    )


def _configure_none(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


def _policies(args: argparse.Namespace) -> int:
    from hpcgym.baselines import policy_specs
    from hpcgym.runner import easy_extra

    specs = policy_specs()
    extra = {name: easy_extra(name) for name in specs}
    if args.json:
        print(
            json.dumps(
                {
                    n: {
                        "predictor": s.predictor,
                        "description": s.description,
                        **s.combines,
                        "extra processors": extra[n],
                    }
                    for n, s in specs.items()
                }
            )
        )
        return 0
    width = max(map(len, specs))
    for name, spec in specs.items():
        print(f"{name.ljust(width)}  {spec.description}")
        parts = [f"predictor={spec.predictor}"] + [
            f"{k}={v}" for k, v in spec.combines.items() if k != "predictor"
        ]
        if extra[name] is not None:
            parts.append(f"extra processors={extra[name]}")
        print(f"{''.ljust(width)}    {', '.join(parts)}")
    print("\nextra processors (EASY-family presets; `simulate` and `compare` take --extra classic|all):")
    for rule, text in EXTRA_RULE_HELP.items():
        print(textwrap.fill(text, 100, initial_indent=f"  {rule:<9}", subsequent_indent=" " * 11))
    return 0


def _predictors(args: argparse.Namespace) -> int:
    from hpcgym.predictors import predictor_aliases, predictor_names

    names = predictor_names()
    aliases: dict[str, list[str]] = {}
    for alias, target in predictor_aliases().items():
        aliases.setdefault(target, []).append(alias.upper() if len(alias) == 1 else alias)
    if args.json:
        print(json.dumps({n: {"description": d, "aliases": aliases.get(n, [])} for n, d in names.items()}))
        return 0
    width = max(map(len, names))
    for name, desc in names.items():
        alias = f" (alias: {', '.join(aliases[name])})" if name in aliases else ""
        print(f"{name.ljust(width)}  {desc}{alias}")
    return 0


def _configure_demo(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def _demo(args: argparse.Namespace) -> int:
    from hpcgym.runner import SUMMARY_COLUMNS, format_table, run_policy, with_minutes

    w = load_trace(args)
    print(w.report, file=sys.stderr)
    rows = [
        with_minutes(run_policy(w, policy, predictor).row)
        for policy in ("fcfs", "sjf-list", "easy")
        for predictor in ("walltime", "real")
    ]
    if args.json:
        print(to_json(rows))
        return 0
    print(
        f"\n{w.name}: {len(w)} jobs on {w.procs} processors "
        "(averages leave out warm-up and cool-down; W = user estimate, R = real run time)\n"
    )
    print(format_table(rows, SUMMARY_COLUMNS))
    return 0


command("simulate", "replay a trace under one policy and report its metrics")(_configure_simulate)(_simulate)
command("policies", "list the dispatcher presets and what each combines")(_configure_none)(_policies)
command("predictors", "list the runtime predictors")(_configure_none)(_predictors)
command("demo", "FCFS, SJF and EASY with W and R on the bundled trace, one table")(_configure_demo)(_demo)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    _load_plugins()
    parser = argparse.ArgumentParser(
        prog="hpcgym", description="HPC job-dispatch simulator, baselines and Gymnasium environment"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (configure, handler, help) in COMMANDS.items():
        p = sub.add_parser(name, help=help, description=help)
        configure(p)
        p.set_defaults(handler=handler)
    return parser


def _load_plugins() -> None:
    """Import the modules that register further subcommands."""
    import importlib

    for module in ("hpcgym.compare", "hpcgym.reproduce"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hpcgym`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (HpcGymError, OSError) as err:  # bad input, missing or unreadable files
        print(f"hpcgym: error: {err}", file=sys.stderr)
        return 2
