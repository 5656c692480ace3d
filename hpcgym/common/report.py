"""Reports of runs: text tables, strict JSON and CSV, the same for the CLI, scripts and agents.

Everything that prints or writes result rows goes through here, so ``hpcgym simulate``,
``hpcgym compare``, ``hpcgym reproduce`` and the training scripts in
:mod:`hpcgym.agents` format numbers, missing values and notes one way. This module
imports neither the engine nor the CLI: an agent reports without loading either.

>>> print(to_json({"mean_wait_s": float("nan"), "jobs": 3}))
{"mean_wait_s": null, "jobs": 3}
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.files import write_text_atomic

__all__ = [
    "CSV_COLUMNS",
    "SUMMARY_COLUMNS",
    "Column",
    "format_table",
    "json_ready",
    "to_json",
    "with_minutes",
    "write_csv",
]

Column = tuple[str, str, str]
"""``(row key, header, format spec)``; a column with a format spec is numeric."""

SUMMARY_COLUMNS: list[Column] = [
    ("policy", "policy", ""),
    ("predictor", "predictor", ""),
    ("jobs_measured", "measured", ",d"),
    ("mean_wait_min", "wait [min]", ".1f"),
    ("mean_slowdown", "slowdown", ".2f"),
    ("mean_bsld", "bsld", ".2f"),
    ("utilization", "util", ".3f"),
    ("sim_seconds", "sim [s]", ".3f"),
    ("jobs_per_second", "jobs/s", ",.0f"),
]
"""The columns of a run's one-line summary (``hpcgym simulate``, ``compare``, ``demo``)."""

CSV_COLUMNS = (
    "trace",
    "policy",
    "predictor",
    "procs",
    "jobs_simulated",
    "measured_set",
    "jobs_measured",
    "jobs_dropped",
    "mean_wait_s",
    "mean_slowdown",
    "mean_bsld",
    "max_wait_s",
    "utilization",
    "makespan_s",
    "sim_seconds",
    "jobs_per_second",
)
"""The columns :func:`write_csv` writes by default (``hpcgym compare --csv``)."""


def with_minutes(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` plus ``mean_wait_min`` for tables."""
    return {**row, "mean_wait_min": row["mean_wait_s"] / 60.0}


def _cell(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"  # a mean over no job; the notes under the table say why
    if spec and isinstance(value, (int, float, np.integer, np.floating)):
        return format(value, spec)
    return str(value)


def format_table(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    notes: Sequence[str] = (),
) -> str:
    """A plain-text table (tabulate's ``simple`` style), then its notes.

    Args:
        rows: one dict per line.
        columns: ``(key, header, format spec)`` triples; a column with a format spec is
            numeric (right-aligned), a missing value or NaN is shown as ``-``.
        notes: sentences printed under the table as ``note: ...``, after the rows' own
            ``notes`` (the measured-set notes of :func:`hpcgym.sim.metrics.compute_metrics`);
            each distinct note once.

    >>> columns = [("policy", "policy", ""), ("bsld", "bsld", ".2f")]
    >>> print(format_table([{"policy": "easy", "bsld": 2.345}], columns))
    policy      bsld
    --------  ------
    easy        2.35
    """
    from tabulate import tabulate

    body = [[_cell(r.get(key), spec) for key, _, spec in columns] for r in rows]
    text = tabulate(
        body,
        headers=[header for _, header, _ in columns],
        tablefmt="simple",
        disable_numparse=True,
        colalign=["right" if spec else "left" for _, _, spec in columns],
    )
    every = [n for r in rows for n in r.get("notes", ())] + list(notes)
    lines = [f"note: {n}" for n in dict.fromkeys(every)]
    return "\n".join([text, *lines])


def json_ready(value: Any) -> Any:
    """``value`` with NaN and infinities as ``null``: strict JSON has no spelling for them.

    (A metric over no jobs is NaN, e.g. the mean wait of an empty job class.) Numpy
    scalars and arrays become plain numbers and lists.

    >>> json_ready({"a": [1.0, float("inf")], "b": np.float64("nan"), "c": np.arange(2)})
    {'a': [1.0, None], 'b': None, 'c': [0, 1]}
    """
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
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


def write_csv(path: str | Path, rows: Iterable[dict[str, Any]], columns: Sequence[str] = CSV_COLUMNS) -> None:
    """One line per row with ``columns``: keys a row lacks are left empty, other keys ignored.

    Written atomically (:func:`~hpcgym.common.files.write_atomic`): a reader sees the old
    file or the whole new one.
    """
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, text.getvalue())
