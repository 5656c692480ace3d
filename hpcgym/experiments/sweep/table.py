"""A sweep's results table: its columns, a CSV file appended to one run at a time, read back, Parquet.

A row is appended and flushed the moment its run finishes, so Ctrl-C or a crash loses no
finished run; a file that ends in a partial line is cut back to its last whole line.
A training sweep uses the same table with its own columns and cell types.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path, write_text_atomic

PARAMETER_COLUMNS = ("key", "trace", "jobs", "offset", "dispatcher", "predictor", "load", "seed")
"""A run's parameters, as the table holds them (``jobs`` empty: the whole trace)."""

RESULT_COLUMNS = (
    "policy",
    "predictor_used",
    "procs",
    "offered_load",
    "jobs_simulated",
    "jobs_dropped",
    "jobs_measured",
    "mean_wait_s",
    "mean_slowdown",
    "mean_bsld",
    "max_wait_s",
    "utilization",
    "makespan_s",
    "accuracy",
    "mae_s",
    "decisions",
)
"""What a run measured (``jobs_dropped``: dropped while reading the trace, by its load report)."""

TIMING_COLUMNS = ("sim_seconds", "run_seconds", "cpu_seconds")
"""Timing columns, the only ones that differ between two runs of one configuration: the
engine's simulation seconds, the run's wall-clock seconds (scaling the load, simulating,
the metrics) and the CPU seconds of its process over the same span (on a machine shared
with other work, the run's own cost)."""

COLUMNS = PARAMETER_COLUMNS + RESULT_COLUMNS + TIMING_COLUMNS
"""The columns of a sweep's results table, in order."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(value) else repr(float(value))
    return str(value)


class ResultsTable:
    """A CSV table of finished runs, appended to and flushed one row at a time.

    A file that ends in a partial line (a run killed while writing) is cut back to its
    last whole line before appending.

    Args:
        path: the CSV file (created with a header of ``columns`` if absent or empty).
        columns: the table's columns (default :data:`COLUMNS`; a training sweep has its own).
        parse: ``(column, text) -> value`` of a cell when reading the table back.

    Raises:
        InvalidConfigError: the file exists with other columns than ``columns``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        columns: Sequence[str] = COLUMNS,
        parse: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.columns = tuple(columns)
        self.done: set[str] = set()
        if self.path.exists() and self.path.stat().st_size > 0:
            data = self.path.read_bytes()
            if not data.endswith(b"\n"):
                with open(self.path, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
            self.rows = read_results(self.path, self.columns, parse)
            self.done = {r["key"] for r in self.rows}
        else:
            self.rows = []
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = io.StringIO(newline="")
            csv.writer(header).writerow(self.columns)
            write_text_atomic(self.path, header.getvalue())

    def append(self, *rows: Mapping[str, Any]) -> None:
        """Write ``rows`` (of one run) in one write and flush it to the operating system."""
        import io

        text = io.StringIO()
        writer = csv.writer(text)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in self.columns])
        with open(self.path, "a", newline="") as fh:
            fh.write(text.getvalue())
            fh.flush()
        self.done.update(str(row["key"]) for row in rows)


_INTS = {"jobs", "offset", "seed", "procs", "jobs_simulated", "jobs_dropped", "jobs_measured", "decisions"}
_TEXT = {"key", "trace", "dispatcher", "predictor", "policy", "predictor_used"}


def _parse_cell(column: str, text: str) -> Any:
    if column in _TEXT:
        return text
    if text == "":
        return None
    return int(text) if column in _INTS else float(text)


def read_results(
    path: str | os.PathLike[str],
    columns: Sequence[str] = COLUMNS,
    parse: Callable[[str, str], Any] | None = None,
) -> list[dict[str, Any]]:
    """The rows of a sweep's CSV table, typed (empty cells are None), in file order.

    Args:
        path: the table.
        columns: the columns it must have (default :data:`COLUMNS`).
        parse: ``(column, text) -> value`` of a cell (default: a simulation sweep's types).

    Raises:
        InvalidConfigError: the header is not ``columns``, or a line is malformed;
            the message names the file and the line.
    """
    p = Path(path)
    columns = tuple(columns)
    parse = parse or _parse_cell
    with open(p, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        if tuple(header) != columns:
            raise InvalidConfigError(
                f"{p}:1: not a results table of this sweep or hpcgym version (columns {header[:4]}...); "
                "write to another folder (--out)"
            )
        rows = []
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(columns):
                raise InvalidConfigError(f"{p}:{line}: {len(cells)} cells, expected {len(columns)}")
            try:
                rows.append({c: parse(c, v) for c, v in zip(columns, cells, strict=True)})
            except ValueError as err:
                raise InvalidConfigError(f"{p}:{line}: {err}") from err
    return rows


def write_parquet(
    rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], columns: Sequence[str] = COLUMNS
) -> None:
    """The rows of a results table as Parquet (``columns``, default :data:`COLUMNS`; empty cells null).

    Raises:
        MissingExtraError: pyarrow is missing (``pip install 'hpcgym[parquet]'``).
    """
    import pyarrow as pa

    from hpcgym.common.extras import _pyarrow_parquet

    pq = _pyarrow_parquet("--parquet")
    table = pa.table({c: [r.get(c) for r in rows] for c in columns})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
