"""``hpcgym waitpred``: the command of :mod:`hpcgym.predict.waitpred` (003 Table V).

It lives apart from :mod:`hpcgym.predict.waitpred` so that the predictors, which the
environment's ``predicted_wait`` observation runs, do not import the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpcgym.cli._common import load_trace
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import write_text_atomic
from hpcgym.common.report import format_table, json_ready, to_json, write_csv
from hpcgym.common.stats import interval_text
from hpcgym.predict import (
    METHODS,
    LogState,
    Protocol,
    WaitPrediction,
    apq_comparisons,
    method_config,
    predict_waits,
)

# ---------------------------------------------------------------- CLI

TABLE = [
    ("trace", "trace", ""),
    ("method", "method", ""),
    ("jobs", "jobs", ",d"),
    ("aae_hours", "AAE [h]", ".2f"),
    ("paper_aae_hours", "003 Table V [h]", ".2f"),
    ("scaled_aae", "scaled AAE", ".2f"),
    ("mean_wait_hours", "mean wait [h]", ".2f"),
]
CSV = (
    "trace",
    "method",
    "jobs",
    "first_job",
    "last_job",
    "aae_hours",
    "paper_aae_hours",
    "scaled_aae",
    "mean_wait_hours",
)


HELP = "queue-wait prediction on the log's system state: APQ, IBL, QBETS (003 Table V)"


def _parse_params(items: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    from hpcgym.common.registry import parse_value

    out: dict[str, dict[str, Any]] = {}
    for item in items or ():
        method, colon, rest = item.partition(":")
        key, eq, value = rest.partition("=")
        if not colon or not eq or not key.strip():
            raise InvalidConfigError(f"--param {item!r}: expected METHOD:key=value (e.g. apq:history=4000)")
        if method not in METHODS:
            raise InvalidConfigError(f"--param {item!r}: method must be one of {', '.join(METHODS)}")
        out.setdefault(method, {})[key.strip()] = parse_value(value.strip())
    return out


def configure(p: argparse.ArgumentParser) -> None:
    from hpcgym.cli._common import add_trace_arguments

    add_trace_arguments(p)
    p.add_argument("--method", default="apq,ibl,qbets", help="comma-separated: apq, ibl, qbets")
    p.add_argument(
        "--param",
        action="append",
        metavar="METHOD:KEY=VALUE",
        help="set a parameter instead of tuning it (e.g. apq:history=4000); repeatable",
    )
    p.add_argument("--no-tune", action="store_true", help="use the defaults, no tuning on the validation set")
    p.add_argument("--history-first", type=int, default=10_000, help="first job of the history (10,000)")
    p.add_argument("--validation-first", type=int, default=16_000, help="first validation job (16,000)")
    p.add_argument("--validation-jobs", type=int, default=4_000, help="validation jobs (4,000)")
    p.add_argument("--test-first", type=int, default=20_001, help="first test job (20,001)")
    p.add_argument("--test-last", type=int, default=60_000, help="last test job (60,000)")
    p.add_argument("--json", type=Path, default=None, help="write the rows (with configs and tuning) here")
    p.add_argument("--csv", type=Path, default=None, help="write the table here")
    p.add_argument("--predictions", type=Path, default=None, help="write every job's predictions as CSV here")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    methods = [m.strip().lower() for m in args.method.split(",") if m.strip()]
    for m in methods:
        if m not in METHODS:
            raise InvalidConfigError(f"--method: {m!r} is not one of {', '.join(METHODS)}")
    params = _parse_params(args.param)
    for m in params:
        method_config(m, None, params[m])  # fail before any work
    protocol = Protocol(
        args.history_first, args.validation_first, args.validation_jobs, args.test_first, args.test_last
    )
    w = load_trace(args)
    if w.report is not None:
        print(w.report, file=sys.stderr)
    state = LogState.from_workload(w)
    protocol.ranges(len(state), state.name)
    results = [
        predict_waits(
            state,
            m,
            params=params.get(m),
            protocol=protocol,
            tune_on_validation=not args.no_tune,
            progress=not args.no_progress,
        )
        for m in methods
    ]
    rows = [r.summary() for r in results]
    notes = []
    if state.dropped_no_wait:
        n = state.dropped_no_wait
        notes.append(f"{n} job{'s' if n != 1 else ''} without a logged wait (field 3 < 0) dropped")
    print(format_table(rows, TABLE, notes))
    comparisons = apq_comparisons(results)
    for c in comparisons:
        print(
            f"{c['a']} - {c['b']}: AAE {c['aae_difference_hours']:+.2f} h, 95 % CI "
            f"{interval_text(c['ci_low'], c['ci_high'], why='one block')} over {c['blocks']} blocks of "
            "consecutive test jobs"
        )
        if c.get("by_case"):
            parts = (
                f"{p['case']} {p['jobs']:,} jobs {p['a_aae_hours']:.2f} / {p['b_aae_hours']:.2f}"
                for p in c["by_case"]
            )
            print(f"  AAE [h] {c['a']} / {c['b']} on the jobs of each APQ model: " + "; ".join(parts))
    if args.json is not None:
        full = [{**row, "tuning": r.tuning} for row, r in zip(rows, results, strict=True)]
        write_text_atomic(
            args.json,
            to_json(
                {
                    "trace": state.name,
                    "protocol": dataclasses.asdict(protocol),
                    "rows": full,
                    "comparisons": comparisons,
                }
            ),
        )
    if args.csv is not None:
        write_csv(args.csv, rows, CSV)
    if args.predictions is not None:
        _write_predictions(args.predictions, results)
    return 0


def _write_predictions(path: Path, results: Sequence[WaitPrediction]) -> None:
    lines = []
    for r in results:
        for j, p, a, c in zip(r.jobs, r.predicted, r.actual, r.case, strict=True):
            lines.append(
                {"method": r.method, "job": int(j) + 1, "predicted_s": p, "actual_s": a, "case": int(c)}
            )
    write_csv(path, json_ready(lines), ("method", "job", "predicted_s", "actual_s", "case"))
