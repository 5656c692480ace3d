"""``hpcgym reproduce``: see HELP.

Reads the trace or traces the arguments name, runs the paper of
:data:`hpcgym.studies.registry.REPRODUCTIONS` on them and prints its tables or JSON;
tsafrir2007 on one trace (``--plot`` writes a PNG), hariharan on several (``-o DIR``
writes its files).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.cli._common import add_trace_arguments, load_trace
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.report import to_json
from hpcgym.studies.hariharan import PAPER_TRACES, Settings, find_paper_traces, select_tables
from hpcgym.studies.registry import REPRODUCTIONS, Reproduction
from hpcgym.studies.tsafrir2007 import TRACE_PREFIXES
from hpcgym.workloads import KNOWN_MACHINES, Workload

HELP = "recompute a paper's tables (tsafrir2007: Tables 2, 3 and 6 on one trace; hariharan: 003 Tables V-VII)"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("paper", help=f"which paper: {', '.join(REPRODUCTIONS)}")
    add_trace_arguments(p, repeatable_trace=True)
    machines = ", ".join(f"{k} {size}" for k, (size, _) in KNOWN_MACHINES.items())
    _reword(
        p,
        "trace",
        "SWF file, plain or .gz (tsafrir2007: one, required; the paper's figures stand beside "
        "ours when the file name starts like one of its traces: "
        f"{', '.join(prefix for prefix, _ in TRACE_PREFIXES)}. hariharan: repeatable, default the "
        f"paper's {', '.join(PAPER_TRACES)} found in --traces-dir)",
    )
    _reword(
        p,
        "procs",
        f"machine size (default: the paper's Table 1 size when the file name names one of its traces "
        f"-- {machines} CPUs -- else the header's MaxProcs)",
    )
    p.add_argument(
        "--extra",
        choices=("classic", "all"),
        default=None,
        help="tsafrir2007: how EASY counts extra processors (default: classic, as in the paper's simulator)",
    )
    p.add_argument(
        "--predictability",
        action="store_true",
        help="also reproduce Tables 4 and 5: predictability of start times (004 section 4; slower)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        help="tsafrir2007: also write a PNG, ours beside the paper's figures",
    )
    h = p.add_argument_group("hariharan (003 Tables V-VII)")
    h.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write hariharan.json and per table tableN.csv and tableN.png here",
    )
    h.add_argument(
        "--traces-dir",
        type=Path,
        default=Path("../shared/traces"),
        metavar="DIR",
        help="where the paper's traces are looked up without --trace (default: ../shared/traces)",
    )
    h.add_argument(
        "--quick",
        action="store_true",
        help="a small protocol for trying it (test jobs 2,001-3,000, no tuning; fits the bundled slice)",
    )
    h.add_argument(
        "--test-jobs", type=int, default=None, metavar="N", help="at most N test jobs per evaluation"
    )
    h.add_argument("--no-tune", action="store_true", help="wait predictors with their defaults, no tuning")
    h.add_argument(
        "--tables",
        default=None,
        metavar="V,VI,...",
        help="only these of 003's tables (default: all, V-IX; VIII and IX run the molding manager)",
    )
    h.add_argument("--no-progress", action="store_true", help="no progress bars")


def _reword(p: argparse.ArgumentParser, dest: str, text: str) -> None:
    """Replace the help of a shared argument whose default means something else here."""
    for action in p._actions:  # argparse has no public way to reword an added argument
        if action.dest == dest:
            action.help = text


def run(args: argparse.Namespace) -> int:
    from hpcgym.baselines._compile import announce_compilation

    announce_compilation()  # the first run on a fresh install compiles kernels: say so
    paper = REPRODUCTIONS.get(args.paper.lower())
    if paper is None:
        raise UnknownNameError(f"unknown paper {args.paper!r}; known: {', '.join(REPRODUCTIONS)}")
    if paper.several_traces:
        return _several_traces(paper, args)
    hariharan_only = ("out", "quick", "test_jobs", "no_tune", "tables")
    given = [f"--{a.replace('_', '-')}" for a in hariharan_only if getattr(args, a)]
    if given:
        raise InvalidConfigError(f"reproduce {paper.name}: {', '.join(given)} belong to hariharan")
    if args.trace is None:
        raise InvalidConfigError("reproduce needs --trace (one of the paper's traces, e.g. SDSC-SP2)")
    if len(args.trace) != 1:
        raise InvalidConfigError(f"reproduce {paper.name} takes one --trace, got {len(args.trace)}")
    # the paper's machine size (Table 1) comes from read_swf's table of known machines,
    # which notes it in the load report with its source
    result = paper.run(
        _read(args, args.trace[0]),
        extra=args.extra or "classic",
        predictability_runs=args.predictability,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    if args.plot is not None:
        paper.plot(result, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    print(to_json(result) if args.json else paper.render(result))
    return 0


def _several_traces(paper: Reproduction, args: argparse.Namespace) -> int:
    """``hpcgym reproduce hariharan`` (003's tables over several traces): read the traces, run
    the tables, print and write them."""
    if args.predictability or args.plot is not None or args.extra is not None:
        raise InvalidConfigError(
            "reproduce hariharan: --predictability, --plot and --extra belong to tsafrir2007; "
            "hariharan writes its figures with -o DIR"
        )
    settings = Settings.make(
        quick=args.quick, test_jobs=args.test_jobs, tune=not args.no_tune, progress=not args.no_progress
    )
    paths = list(args.trace or [])
    skipped: list[str] = []
    if not paths:
        paths, skipped = find_paper_traces(args.traces_dir)
        for note in skipped:
            print(f"hpcgym: {note}", file=sys.stderr)
        if not paths:
            raise InvalidConfigError(
                f"reproduce hariharan: none of the paper's traces ({', '.join(PAPER_TRACES)}) is in "
                f"{args.traces_dir}; give --trace FILE (repeatable) or --traces-dir DIR"
            )
    workloads = [_read(args, path) for path in paths]
    result = paper.run(workloads, settings, tables=select_tables(args.tables), skipped=skipped)
    if args.out is not None:
        for path in paper.plot(result, args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(to_json(result) if args.json else paper.render(result))
    return 0


def _read(args: argparse.Namespace, trace: Path) -> Workload:
    """The workload of one ``trace`` read with the other trace arguments; its load report on stderr."""
    workload = load_trace(argparse.Namespace(**{**vars(args), "trace": trace}))
    if workload.report is not None:
        print(workload.report, file=sys.stderr)
    return workload
