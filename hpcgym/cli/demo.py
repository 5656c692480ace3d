"""``hpcgym demo``: FCFS, SJF and EASY with W and R on the bundled trace."""

from __future__ import annotations

import argparse
import sys

from hpcgym.cli._common import (
    add_trace_arguments,
    load_trace,
)
from hpcgym.common.report import to_json

HELP = "FCFS, SJF and EASY with W and R on the bundled trace, one table"


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    from hpcgym.common.report import SUMMARY_COLUMNS, format_table
    from hpcgym.experiments.compare import compare

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
