"""``hpcgym convert``: a workload between SWF and job tables, or from a Slurm accounting log."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from hpcgym.cli._common import parse_partitions
from hpcgym.common.errors import InvalidConfigError, TraceWarning

HELP = "convert a workload between SWF and job tables (CSV, Parquet), or from a Slurm accounting log"


SWF_SUFFIXES = (".swf", ".swf.gz")
"""File types read and written as SWF, by suffix.

Job tables: :data:`hpcgym.workloads.TABLE_SUFFIXES`."""


FORMATS = ("swf", "table", "sacct")
"""``--from``'s choices: SWF, a job table, a Slurm accounting log (sacct --parsable2)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source",
        type=Path,
        help="SWF trace (.swf, .swf.gz), job table (.csv, .csv.gz, .parquet) or Slurm accounting log "
        "(.sacct, or any name with --from sacct)",
    )
    p.add_argument(
        "target",
        type=Path,
        nargs="?",
        default=None,
        help="the file to write: a job table (.csv, .csv.gz, .parquet) or SWF (.swf, .swf.gz; one "
        "resource only: processors); or give it with -o",
    )
    p.add_argument("-o", "--output", type=Path, default=None, metavar="FILE", help="the file to write")
    p.add_argument(
        "--from",
        dest="source_format",
        choices=FORMATS,
        default=None,
        help="what the source is (default: by its suffix); sacct: the output of sacct --parsable2 "
        "--allocations (see docs/WORKLOADS.md)",
    )
    p.add_argument(
        "--timezone",
        default=None,
        metavar="ZONE",
        help="Slurm logs only: the time zone of their local times, e.g. Europe/Berlin (default: the "
        "file's '# TimeZone:' line, else UTC)",
    )
    p.add_argument(
        "--machine",
        default=None,
        metavar="NAME|FILE.toml",
        help="read a job table or Slurm log for this machine: jobs it can never run are dropped and counted, "
        "jobs without a wall-time get their queue's maximum (default: the file's Machine header, if any)",
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
    from hpcgym.workloads import SACCT_SUFFIXES, TABLE_SUFFIXES

    name = path.name.lower()
    if name.endswith(SWF_SUFFIXES):
        return "swf"
    if name.endswith(TABLE_SUFFIXES):
        return "table"
    if what == "source" and name.endswith(SACCT_SUFFIXES):
        return "sacct"
    suffixes = SWF_SUFFIXES + TABLE_SUFFIXES + (SACCT_SUFFIXES if what == "source" else ())
    raise InvalidConfigError(f"{what} {path}: unknown file type; use one of {', '.join(suffixes)}")


def run(args: argparse.Namespace) -> int:
    """Read ``source`` (its load report on stderr), write ``target``."""
    from hpcgym.workloads import (
        fit_workload,
        read_jobs,
        read_sacct,
        read_swf,
        to_swf_workload,
        write_jobs,
        write_swf,
    )

    if (args.target is None) == (args.output is None):
        raise InvalidConfigError("give the file to write once: as the second argument or with -o FILE")
    args.target = args.target if args.target is not None else args.output
    source = args.source_format or _file_kind(args.source, "source")
    target = _file_kind(args.target, "target")
    if args.timezone is not None and source != "sacct":
        raise InvalidConfigError("--timezone sets the time zone of a Slurm log's local times (--from sacct)")
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
    elif source == "sacct":
        if args.partition is not None:
            raise InvalidConfigError(
                "--partition selects partitions of SWF traces (field 16); not of Slurm logs"
            )
        w = read_sacct(
            args.source,
            args.machine,
            procs=args.procs,
            default_estimate=args.default_estimate,
            tz=args.timezone,
        )
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
