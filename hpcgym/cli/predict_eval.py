"""``hpcgym predict-eval``: score a runtime predictor on a trace's logged schedule.

The command of :func:`hpcgym.predict.runtime_eval.evaluate_runtime_predictor` (003 section
III's SR, C and AAE, beside the paper's Tables VI and VII).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.cli._common import add_trace_arguments, load_trace
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path
from hpcgym.predict import RuntimeEvaluation, evaluate_runtime_predictor, make_predictor, paper_row

HELP = "score a runtime predictor on a trace's logged schedule (rangeSets: SR, C, AAE)"

COLUMNS = (
    ("trace", "trace", ""),
    ("predictor", "predictor", ""),
    ("jobs_evaluated", "jobs", ","),
    ("jobs_without_history", "no history", ","),
    ("baseline_SR", "baseline SR %", ".1f"),
    ("SR", "SR %", ".1f"),
    ("C", "C %", ".1f"),
    ("C_of_totals", "C totals %", ".1f"),
    ("C_median", "C median %", ".1f"),
    ("AAE_min", "AAE [min]", ".1f"),
)
"""The table this command prints: ``(key, header, format)``."""


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument("--predictor", default="rangeset", help="runtime predictor (see `hpcgym predictors`)")
    p.add_argument("--test-from", type=int, default=20_000, help="first test job (0-based; 003: 20,000)")
    p.add_argument("--test-jobs", type=int, default=40_000, help="number of test jobs (003: 40,000)")
    p.add_argument(
        "--history",
        type=int,
        default=15_000,
        help="the baseline range reads the latest N terminated jobs (003: 15,000; 0: all); a rangeset "
        "predictor uses its own history parameter (rangeset:history=N)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument(
        "--ranges-out", type=Path, default=None, help="write every test job's ranges (.csv or .parquet)"
    )
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def run(args: argparse.Namespace) -> int:
    from hpcgym.common.report import format_table, to_json

    make_predictor(args.predictor)  # a bad name fails before the trace is read
    if args.ranges_out is not None and not str(args.ranges_out).endswith((".csv", ".parquet")):
        raise InvalidConfigError(f"--ranges-out {args.ranges_out}: give a .csv or .parquet file")
    w = load_trace(args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    ev = evaluate_runtime_predictor(
        w,
        args.predictor,
        args.test_from,
        args.test_jobs,
        progress=not args.no_progress and sys.stderr.isatty(),
    )
    row = ev.metrics()
    if args.ranges_out is not None:
        _write_ranges(args.ranges_out, ev)
    if args.json:
        print(to_json({**row, "paper": paper_row(w.name)}))
        return 0
    rows = [row]
    paper = paper_row(w.name)
    if paper is not None:
        rows.append(paper)
    print(format_table(rows, COLUMNS))
    return 0


def _write_ranges(path: Path, ev: RuntimeEvaluation) -> None:
    table = ev.table()
    if str(path).endswith(".parquet"):
        from hpcgym.common.extras import _pyarrow_parquet

        pq = _pyarrow_parquet("--ranges-out .parquet")
        import pyarrow as pa

        with atomic_path(path) as tmp:
            pq.write_table(pa.table(table), tmp)
        return
    from hpcgym.common.report import write_csv

    cols = list(table)
    rows = (
        {c: v for c, v in zip(cols, values, strict=True)}
        for values in zip(*(table[c].tolist() for c in cols), strict=True)
    )
    write_csv(path, rows, cols)
