"""Writing job tables, and a workload in the form SWF can hold.

:func:`write_jobs` writes a workload as a job table (CSV, gzipped CSV or Parquet) that
:func:`~hpcgym.workloads.read_jobs` reads back to the same jobs; :func:`to_swf_workload`
turns a workload of chunks and named identifiers into one chunk of processors per job
with numeric identifiers, for :func:`~hpcgym.workloads.write_swf`.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import json
import math
import os
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.extras import _pyarrow_parquet
from hpcgym.common.files import atomic_path, write_atomic
from hpcgym.machine import PBS_NAMES, machine_specs, make_machine
from hpcgym.workloads.conversion import ConversionReport, table_report
from hpcgym.workloads.jobtable_format import (
    LOG_COLUMNS,
    NAME_COLUMNS,
    REQUEST_COLUMNS,
    _check_suffix,
    _first,
)
from hpcgym.workloads.workload import _EXACT, Workload

_PBS_OF = {resource: pbs for pbs, resource in PBS_NAMES.items()}


def _number(v: float) -> str:
    """Shortest text that reads back as the same float; whole numbers without a point."""
    if v == math.floor(v) and abs(v) < _EXACT:
        return str(int(v))
    return repr(float(v))


def _table_columns(workload: Workload) -> dict[str, list[Any]]:
    """The columns :func:`write_jobs` writes, as Python values (None: blank)."""
    w = workload
    n = len(w)
    out: dict[str, list[Any]] = {
        "job_id": w.job_id.tolist(),
        "submit": w.submit.tolist(),
        "runtime": w.runtime.tolist(),
        "walltime": w.estimate.tolist(),
    }
    for c, attr in NAME_COLUMNS.items():
        codes = getattr(w, attr).tolist()
        table = w.names.get(c)
        if table is None:
            out[c] = [None if v == -1 else int(v) for v in codes]
        else:
            out[c] = [None if v < 0 else table[v] for v in codes]
    targets = ["cores" if r in ("procs", "cores") else r for r in w.resources]
    if len(set(targets)) != len(targets):
        raise InvalidConfigError(
            f"workload {w.name!r}: resources {', '.join(w.resources)} ask for both procs and cores"
        )
    per = np.asarray(w.per_chunk)
    if set(targets) <= set(REQUEST_COLUMNS):
        out["chunks"] = w.chunks.tolist()
        for c in REQUEST_COLUMNS:
            out[c] = per[:, targets.index(c)].tolist() if c in targets else [0] * n
    else:  # a resource without a column of its own: PBS select statements
        selects = []
        for j in range(n):
            parts = [str(int(w.chunks[j]))]
            for r, a in zip(targets, per[j].tolist(), strict=True):
                if a:
                    parts.append(f"mem={a}gb" if r == "mem_gb" else f"{_PBS_OF.get(r, r)}={a}")
            selects.append(":".join(parts))
        out["select"] = selects
    out["status"] = [None if v == -1 else int(v) for v in w.status.tolist()]
    raw = np.asarray(w.raw, dtype=np.float64)
    for c, k in LOG_COLUMNS.items():
        values = np.asarray(w.log_wait, dtype=np.float64) if c == "wait" else raw[:, k]
        known = np.isfinite(values) & (values != -1)  # SWF's -1: unknown, a blank cell
        if known.any():
            out[c] = [float(v) if ok else None for v, ok in zip(values.tolist(), known.tolist(), strict=True)]
    return out


def _machine_header(workload: Workload) -> dict[str, str]:
    header = {k: v for k, v in workload.header.items() if k not in ("Machine", "MaxProcs")}
    m = workload.machine
    if m is not None and m.name.lower() in machine_specs():
        preset = make_machine(m.name)
        same = (
            preset.resources == m.resources
            and np.array_equal(preset.capacity, m.capacity)
            and dict(preset.queues) == dict(m.queues)
            and preset.exclusive == m.exclusive
        )
        if same:
            header["Machine"] = m.name
    header["MaxProcs"] = str(workload.procs)
    return header


def write_jobs(workload: Workload, path: str | os.PathLike[str]) -> ConversionReport:
    """Write a workload as a job table: CSV (gzipped for ``.csv.gz``) or Parquet.

    Every job gets its wall-time (``estimate``) written out; names go back through the
    workload's name tables; the request goes into the per-chunk columns (an SWF job's
    ``procs`` into ``cores``), or into ``select`` statements if the workload asks for a
    resource without a column of its own. The logged wait (``log_wait``, SWF field 3) and
    used memory (SWF field 7) go into ``wait`` and ``used_mem_kb`` if any job has one. The
    header keeps the workload's ``; Key: value`` lines, ``MaxProcs`` and, for a workload
    read for a preset machine, its ``Machine``. :func:`~hpcgym.workloads.read_jobs` reads the
    file back to the same jobs.

    Returns:
        What the table does not keep of the workload (SWF fields without a column) and
        the estimates it writes for jobs that had none
        (:class:`~hpcgym.workloads.conversion.ConversionReport`).

    Raises:
        InvalidConfigError: an unknown file type.
        MissingExtraError: ``.parquet`` without pyarrow installed.
    """
    _check_suffix(path, "job table")
    spath = os.fspath(path)
    cols = _table_columns(workload)
    header = _machine_header(workload)
    if spath.lower().endswith(".parquet"):
        _pyarrow_parquet(f"writing {spath}")
        import pyarrow as pa

        types = {c: pa.float64() for c in ("submit", "runtime", "walltime", *LOG_COLUMNS)}
        for c in NAME_COLUMNS:
            types[c] = pa.string() if c in workload.names else pa.int64()
        arrays = {
            c: pa.array(v, type=types.get(c, pa.string() if c == "select" else pa.int64()))
            for c, v in cols.items()
        }
        table = pa.table(arrays).replace_schema_metadata({"hpcgym.header": json.dumps(header)})
        import pyarrow.parquet as pq

        with atomic_path(spath) as tmp:
            pq.write_table(table, tmp)
        return table_report(workload)
    out = io.StringIO()
    for key, value in header.items():
        out.write(f"# {key}: {value}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(cols))
    floats = {"submit", "runtime", "walltime", *LOG_COLUMNS}
    texts = [["" if v is None else _number(v) if c in floats else v for v in col] for c, col in cols.items()]
    writer.writerows(zip(*texts, strict=True))
    data = out.getvalue().encode()
    write_atomic(spath, gzip.compress(data, mtime=0) if spath.lower().endswith(".gz") else data)
    return table_report(workload)


# ------------------------------------------------------------------ SWF
def to_swf_workload(workload: Workload) -> tuple[Workload, list[str]]:
    """``workload`` as SWF holds it: one chunk of processors per job, numeric ids.

    A job's processors are its chunks times its ``cores`` (or ``procs``); the returned
    notes count the jobs of several chunks. Identifier columns with names are written as
    numbers 1, 2, ... in the order of the name table (SWF holds no names); the notes say
    which.

    Raises:
        InvalidConfigError: a job asks for another resource (GPUs, MICs, memory, ...),
            which SWF cannot hold; the message names the first such job and resource.
    """
    w = workload
    proc_cols = [k for k, r in enumerate(w.resources) if r in ("procs", "cores")]
    per = np.asarray(w.per_chunk)
    for k, r in enumerate(w.resources):
        if k in proc_cols or not per[:, k].any():
            continue
        j = _first(per[:, k] != 0)
        raise InvalidConfigError(
            f"{w.name}: job {int(w.job_id[j])} asks for {r}={int(per[j, k])} per chunk: SWF holds one "
            "resource (processors), so this workload cannot be written as SWF; keep it as CSV or Parquet"
        )
    procs_req = w.chunks * (per[:, proc_cols].sum(axis=1) if proc_cols else 0)
    if (procs_req < 1).any():
        j = _first(procs_req < 1)
        raise InvalidConfigError(
            f"{w.name}: job {int(w.job_id[j])} asks for no processors; SWF cannot hold it"
        )
    raw = np.array(w.raw, dtype=np.float64, copy=True)
    raw[:, 4] = procs_req
    raw[:, 7] = procs_req
    notes = []
    several = int((w.chunks > 1).sum())
    if several:
        jobs = "1 job" if several == 1 else f"{several:,} jobs"
        notes.append(
            f"{jobs} of several chunks written as one request of chunks x cores processors "
            "(SWF holds no chunks)"
        )
    changes: dict[str, Any] = {}
    for c, attr in NAME_COLUMNS.items():
        if c in w.names:
            codes = getattr(w, attr)
            ids = np.where(codes >= 0, codes + 1, -1)
            changes[attr] = ids
            raw[:, 11 + ("user", "group", "executable", "queue", "partition").index(attr)] = ids
            notes.append(f"{c} names written as numbers 1-{len(w.names[c])} (SWF holds no names)")
    out = dataclasses.replace(
        w,
        raw=raw,
        procs_req=procs_req.astype(np.int64),
        chunks=np.ones(len(w), dtype=np.int64),
        per_chunk=procs_req.astype(np.int64).reshape(-1, 1),
        resources=("procs",),
        names={},
        **changes,
    )
    return out, notes
