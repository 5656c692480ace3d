"""``hpcgym convert``: a workload between SWF and job tables."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from hpcgym.cli._common import parse_partitions
from hpcgym.common.errors import InvalidConfigError, TraceWarning

HELP = "convert a workload between SWF and job tables (CSV, Parquet)"


SWF_SUFFIXES = (".swf", ".swf.gz")
"""File types read and written as SWF, by suffix.

Job tables: :data:`hpcgym.workloads.TABLE_SUFFIXES`."""


def configure(p: argparse.ArgumentParser) -> None:
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
    from hpcgym.workloads import TABLE_SUFFIXES

    name = path.name.lower()
    if name.endswith(SWF_SUFFIXES):
        return "swf"
    if name.endswith(TABLE_SUFFIXES):
        return "table"
    raise InvalidConfigError(
        f"{what} {path}: unknown file type; use one of {', '.join(SWF_SUFFIXES + TABLE_SUFFIXES)}"
    )


def run(args: argparse.Namespace) -> int:
    """Read ``source`` (its load report on stderr), write ``target``."""
    from hpcgym.workloads import fit_workload, read_jobs, read_swf, to_swf_workload, write_jobs, write_swf

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
        kept = write_swf(args.target, w)
    else:
        kept = write_jobs(w, args.target)
    print(f"convert: {kept}", file=sys.stderr)  # what the target does not keep, what it fills in
    print(f"wrote {len(w)} jobs to {args.target}")
    return 0
