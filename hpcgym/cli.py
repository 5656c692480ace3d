"""Command line: ``hpcgym simulate | policies | predictors | machines | demo | convert``.

Subcommands are small functions registered in :data:`COMMANDS`; other modules add
theirs with :func:`command`.

Errors: every failure hpcgym anticipates raises an :class:`~hpcgym.errors.HpcGymError`
naming the file and line or the parameter and what it accepts; :func:`main` prints it as
``hpcgym: error: ...`` (no traceback) and exits with status 2, as argparse does for its
own usage errors. Unreadable files (``OSError``) are reported the same way. Anything else
is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hpcgym import __version__
from hpcgym.errors import HpcGymError, InvalidConfigError, TraceWarning
from hpcgym.report import to_json

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


ALLOCATIONS = ("first-fit", "best-fit")
"""``--allocation``'s choices: the allocator's policies (:data:`hpcgym.allocator.POLICIES`,
not imported here so that ``hpcgym --help`` does not load numba)."""


def add_trace_arguments(p: argparse.ArgumentParser, *, repeatable_trace: bool = False) -> None:
    """``--trace --workload --procs --machine --node-size --allocation --jobs --offset --load
    --default-estimate --partition``, for every trace reader (``--trace`` given once, or as
    often as wanted with ``repeatable_trace``: a list then, None when absent)."""
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        action="append" if repeatable_trace else "store",
        help="SWF file, plain or .gz (default: the bundled slice of SDSC-SP2)",
    )
    p.add_argument(
        "--workload",
        type=Path,
        default=None,
        metavar="FILE",
        help="a job table instead of an SWF trace: .csv, .csv.gz or .parquet, heterogeneous requests "
        "(chunks x cores, GPUs, MICs, memory; see docs/WORKLOADS.md)",
    )
    p.add_argument(
        "--procs",
        type=int,
        default=None,
        help="machine size in processors (default: the papers' size for a known trace, else the "
        "header's MaxProcs or MaxNodes, else the largest job, with a warning)",
    )
    p.add_argument(
        "--machine",
        default=None,
        metavar="NAME|FILE.toml",
        help="the machine: a preset (see `hpcgym machines`) or a TOML file; jobs it can never run are "
        "dropped and counted (default: one node of --procs processors, or a job table's Machine header)",
    )
    p.add_argument(
        "--node-size",
        type=int,
        default=None,
        metavar="K",
        help="an SWF trace's processors as nodes of K used exclusively: a job of p processors takes "
        "ceil(p/K) whole nodes (K must divide the machine size)",
    )
    p.add_argument(
        "--allocation",
        choices=ALLOCATIONS,
        default=None,
        help="where the engine places a job's chunks when the dispatcher does not, overriding the "
        "machine's own policy: first-fit (nodes in index order) or best-fit (the nodes left with the "
        "fewest free resources first); see docs/MACHINES.md. On one node of --procs processors both "
        "place every job on node 0 (default: the machine's, first-fit unless its file says otherwise)",
    )
    p.add_argument("--jobs", type=int, default=None, help="simulate only this many jobs")
    p.add_argument("--offset", type=int, default=0, help="skip this many jobs first")
    p.add_argument(
        "--load", type=float, default=1.0, help="multiply the offered load (inter-arrival times / F)"
    )
    p.add_argument(
        "--default-estimate",
        type=float,
        default=None,
        metavar="SECONDS",
        help="estimate of jobs without one (default: the header's DefaultEstimate, else the "
        "largest estimate in the trace, else the longest run time; the load report says which)",
    )
    p.add_argument(
        "--partition",
        default=None,
        metavar="N[,M...]",
        help="keep only jobs of these partitions (SWF field 16); the others are dropped and counted",
    )


def parse_partitions(text: str | None) -> tuple[int, ...] | None:
    """``--partition``'s value (``"1"``, ``"1,2"``) as partition numbers.

    >>> parse_partitions("2,1")
    (1, 2)
    """
    if text is None:
        return None
    try:
        parts = tuple(sorted({int(item) for item in text.split(",")}))
    except ValueError:
        raise InvalidConfigError(
            f"--partition: {text!r} is not a partition number or a comma-separated list of them "
            "(SWF field 16, e.g. 1 or 1,2)"
        ) from None
    return parts


def load_trace(args: argparse.Namespace) -> Any:
    """The workload the trace arguments describe.

    Problems the reader warns about (:class:`~hpcgym.errors.TraceWarning`: odd values in
    unused fields, a guessed machine size) are in the load report, which every command
    prints on stderr, so they are not printed a second time as Python warnings. If the
    dispatcher kernels are not compiled yet, this says so on stderr and compiles them.
    """
    from hpcgym._compile import announce_compilation
    from hpcgym.workload import default_trace_path, read_swf

    if getattr(args, "workload", None) is not None:
        w = load_job_table(args)
    else:
        path = args.trace if args.trace is not None else default_trace_path()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            w = read_swf(
                path,
                procs=args.procs,
                default_estimate=getattr(args, "default_estimate", None),
                partitions=parse_partitions(getattr(args, "partition", None)),
                reading=getattr(args, "reading", None) or "hpcgym",
            )
        w = _for_machine(w, args)
    allocation = getattr(args, "allocation", None)
    if allocation is not None:
        w = with_allocation(w, allocation)
    if args.offset or args.jobs is not None:
        w = w.window(args.jobs, args.offset)
    if args.load != 1.0:
        w = w.scale_load(args.load)
    announce_compilation()
    return w


def with_allocation(w: Any, allocation: str) -> Any:
    """``w`` on its machine with the allocation policy ``allocation`` (``--allocation``).

    A workload without a machine runs on one node of ``w.procs`` processors
    (:class:`~hpcgym.sim.Simulator`'s default); it gets that machine with ``allocation``,
    which places every job on node 0 under either policy.

    Raises:
        InvalidConfigError: ``allocation`` is not one of :data:`ALLOCATIONS`; the
            message names ``--allocation``.
    """
    import dataclasses

    from hpcgym.machine import Machine

    if allocation not in ALLOCATIONS:
        raise InvalidConfigError(f"--allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    machine = w.machine if w.machine is not None else Machine.processors(w.procs)
    return dataclasses.replace(w, machine=machine.with_allocation(allocation))


def _for_machine(w: Any, args: argparse.Namespace) -> Any:
    """An SWF workload read for ``--machine`` or ``--node-size`` (unplaceable jobs dropped, counted)."""
    from hpcgym.machine import Machine, fit_workload

    machine = getattr(args, "machine", None)
    node_size = getattr(args, "node_size", None)
    if node_size is not None:
        if machine is not None:
            raise InvalidConfigError(
                f"--node-size {node_size} splits an SWF trace's processors into nodes; a --machine "
                "describes its nodes itself: give one of them"
            )
        return fit_workload(w, Machine.processors(w.procs, node_size=node_size))
    if machine is not None:
        return fit_workload(w, machine)
    return w


def load_job_table(args: argparse.Namespace) -> Any:
    """The job table of ``--workload``, read for ``--machine`` if that option is given.

    Raises:
        InvalidConfigError: ``--workload`` together with ``--trace`` or ``--partition``
            (which selects partitions of SWF traces).
    """
    from hpcgym.jobtable import read_jobs

    if getattr(args, "trace", None) is not None:
        raise InvalidConfigError(
            f"--trace {args.trace} and --workload {args.workload}: give one (an SWF trace or a job table)"
        )
    if getattr(args, "partition", None) is not None:
        raise InvalidConfigError(
            "--partition selects partitions of SWF traces (field 16); it does not apply to --workload"
        )
    if getattr(args, "node_size", None) is not None:
        raise InvalidConfigError(
            "--node-size splits an SWF trace's processors into nodes; a job table's machine is its "
            "Machine header or --machine"
        )
    return read_jobs(
        args.workload,
        getattr(args, "machine", None),
        procs=getattr(args, "procs", None),
        default_estimate=getattr(args, "default_estimate", None),
    )


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
        "--schedule-out",
        type=Path,
        default=None,
        help=f"write every job's schedule ({', '.join(SCHEDULE_SUFFIXES)}: CSV, JSON records or SWF)",
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
    from hpcgym.baselines import preset_predictor, resolve_policy_name
    from hpcgym.report import SUMMARY_COLUMNS, format_table, with_minutes
    from hpcgym.runner import run_policy

    # arguments first, before a trace is read and simulated
    policy = resolve_policy_name(args.policy)  # UnknownNameError; the canonical name from here on
    preset_predictor(policy, args.predictor)  # UnknownNameError, InvalidConfigError
    if args.schedule_out is not None:
        check_schedule_path(args.schedule_out)
    w = load_trace(args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    result = run_policy(
        w,
        policy,
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

    from hpcgym.workload import write_swf

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


def _configure_none(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


def _policies(args: argparse.Namespace) -> int:
    from hpcgym.baselines import POLICIES, policy_specs
    from hpcgym.runner import easy_extra

    specs = policy_specs()
    extra = {name: easy_extra(name) for name in specs}
    aliases: dict[str, list[str]] = {}
    for alias, target in POLICIES.aliases().items():
        aliases.setdefault(target, []).append(alias)
    if args.json:
        print(
            json.dumps(
                {
                    n: {
                        "predictor": s.predictor,
                        "description": s.description,
                        "aliases": aliases.get(n, []),
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
        alias = f" (alias: {', '.join(aliases[name])})" if name in aliases else ""
        print(f"{name.ljust(width)}  {spec.description}{alias}")
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


def _machines(args: argparse.Namespace) -> int:
    from hpcgym.machine import MACHINES, make_machine

    if args.json:
        print(json.dumps({n: make_machine(n).to_dict() for n in MACHINES}))
        return 0
    for name in MACHINES:
        print(make_machine(name).describe())
    print("\nor a TOML file of the same form (`hpcgym simulate --machine my-machine.toml`)")
    return 0


def _configure_predictors(p: argparse.ArgumentParser) -> None:
    _configure_none(p)
    p.add_argument(
        "--space",
        action="store_true",
        help="print 004 section 7's 8,640 user-history configurations, one name a line",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="print N distinct configurations of the space, drawn",
    )
    p.add_argument("--seed", type=int, default=0, help="the --sample draw's seed (default 0)")


def _predictors(args: argparse.Namespace) -> int:
    from hpcgym.predictors import predictor_aliases, predictor_names, predictor_space, sample_predictor_space

    if args.space or args.sample is not None:
        configs = (
            list(predictor_space()) if args.sample is None else sample_predictor_space(args.sample, args.seed)
        )
        if args.json:
            print(json.dumps([str(c) for c in configs]))
        else:
            print("\n".join(str(c) for c in configs))
        return 0
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
    from hpcgym.compare import compare
    from hpcgym.report import SUMMARY_COLUMNS, format_table

    w = load_trace(args)
    print(w.report, file=sys.stderr)
    rows, _ = compare(w, ("fcfs", "sjf-list", "easy"), ("walltime", "real"))
    if args.json:
        print(to_json(rows))
        return 0
    print(
        f"\n{w.name}: {len(w)} jobs on {w.procs} processors; every run averaged over the same "
        f"{rows[0]['jobs_measured']} jobs (the first and last 1 % by submission left out); "
        "W = user estimate, R = real run time\n"
    )
    print(format_table(rows, SUMMARY_COLUMNS))
    return 0


SWF_SUFFIXES = (".swf", ".swf.gz")
"""File types read and written as SWF, by suffix (job tables: :data:`hpcgym.jobtable.TABLE_SUFFIXES`)."""


def _configure_convert(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source", type=Path, help="SWF trace (.swf, .swf.gz) or job table (.csv, .csv.gz, .parquet)"
    )
    p.add_argument(
        "target",
        type=Path,
        help="the file to write: a job table (.csv, .csv.gz, .parquet) or SWF (.swf, .swf.gz; one "
        "resource only: processors)",
    )
    p.add_argument(
        "--machine",
        default=None,
        metavar="NAME|FILE.toml",
        help="read a job table for this machine: jobs it can never run are dropped and counted, jobs "
        "without a wall-time get their queue's maximum (default: the file's Machine header, if any)",
    )
    p.add_argument(
        "--procs",
        type=int,
        default=None,
        help="machine size in processors, as for simulate (written as MaxProcs)",
    )
    p.add_argument(
        "--default-estimate",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-time of jobs without one (the load report says the default used otherwise)",
    )
    p.add_argument(
        "--partition",
        default=None,
        metavar="N[,M...]",
        help="SWF source only: keep only jobs of these partitions (field 16)",
    )


def _file_kind(path: Path, what: str) -> str:
    from hpcgym.jobtable import TABLE_SUFFIXES

    name = path.name.lower()
    if name.endswith(SWF_SUFFIXES):
        return "swf"
    if name.endswith(TABLE_SUFFIXES):
        return "table"
    raise InvalidConfigError(
        f"{what} {path}: unknown file type; use one of {', '.join(SWF_SUFFIXES + TABLE_SUFFIXES)}"
    )


def _convert(args: argparse.Namespace) -> int:
    """Read ``source`` (its load report on stderr), write ``target``."""
    from hpcgym.jobtable import read_jobs, to_swf_workload, write_jobs
    from hpcgym.machine import fit_workload
    from hpcgym.workload import read_swf, write_swf

    source, target = _file_kind(args.source, "source"), _file_kind(args.target, "target")
    parent = args.target.parent if str(args.target.parent) else Path(".")
    if not parent.is_dir():
        raise InvalidConfigError(f"target {args.target}: no such directory: {parent}")
    if args.target.resolve() == args.source.resolve():
        raise InvalidConfigError(f"target {args.target} is the source; write to another file")
    if source == "swf":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)  # they are in the report
            w = read_swf(
                args.source,
                procs=args.procs,
                default_estimate=args.default_estimate,
                partitions=parse_partitions(args.partition),
            )
        if args.machine is not None:
            w = fit_workload(w, args.machine)
    else:
        if args.partition is not None:
            raise InvalidConfigError(
                "--partition selects partitions of SWF traces (field 16); not of job tables"
            )
        w = read_jobs(args.source, args.machine, procs=args.procs, default_estimate=args.default_estimate)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    if target == "swf":
        w, notes = to_swf_workload(w)
        for note in notes:
            print(f"  note: {note}", file=sys.stderr)
        write_swf(args.target, w)
    else:
        write_jobs(w, args.target)
    print(f"wrote {len(w)} jobs to {args.target}")
    return 0


command("simulate", "replay a trace under one policy and report its metrics")(_configure_simulate)(_simulate)
command("policies", "list the dispatcher presets and what each combines")(_configure_none)(_policies)
command("predictors", "list the runtime predictors (--space: 004's predictor space)")(_configure_predictors)(
    _predictors
)
command("machines", "list the machine presets: nodes, resources, groups and queues")(_configure_none)(
    _machines
)
command("demo", "FCFS, SJF and EASY with W and R on the bundled trace, one table")(_configure_demo)(_demo)
command("convert", "convert a workload between SWF and job tables (CSV, Parquet)")(_configure_convert)(
    _convert
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    _load_plugins()
    parser = argparse.ArgumentParser(
        prog="hpcgym", description="HPC job-dispatch simulator, baselines and Gymnasium environment"
    )
    parser.add_argument("--version", action="version", version=f"hpcgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (configure, handler, help) in COMMANDS.items():
        p = sub.add_parser(name, help=help, description=help)
        configure(p)
        p.set_defaults(handler=handler)
    return parser


def _load_plugins() -> None:
    """Import the modules that register further subcommands."""
    import importlib

    for module in (
        "hpcgym.compare",
        "hpcgym.reproduce",
        "hpcgym.generate",
        "hpcgym.study",
        "hpcgym.evaluate",
        "hpcgym.train",
        "hpcgym.sweep",
        "hpcgym.waitpred_cli",
        "hpcgym.predict_eval",
        "hpcgym.molding",
    ):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hpcgym`` command: 0 on success, 2 on a usage or input error."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on argparse's own usage errors
    try:
        return int(args.handler(args))
    except HpcGymError as err:  # bad input: the message names the file/line or the parameter
        print(f"hpcgym: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout closed early (``hpcgym ... | head``): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not fail too
        return 1
    except OSError as err:  # missing or unreadable files (FileNotFoundError, IsADirectoryError, ...)
        print(f"hpcgym: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hpcgym: interrupted", file=sys.stderr)
        return 130
