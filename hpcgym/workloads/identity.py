"""Which jobs a workload holds: a content hash of the whole, and per-job keys to find its jobs in another.

A saved model records the trace it was trained on (:mod:`hpcgym.agents.models`); an
evaluation then tells whether its windows hold the model's training jobs, also when the
trace was read again from another path, cut with ``--jobs``/``--offset`` or load-scaled:

* :func:`content_sha256` hashes what the engine uses of every job, in order: the SWF job
  number, submit time, run time, requested processors (or chunks x per-chunk request),
  estimate and user. Equal hashes: the same jobs. It does not depend on the file's path,
  name or compression.
* :func:`job_keys` gives each job a 32-bit key from the fields a cut or a load scaling
  leaves alone (run time, request, estimate, user; not the submit time). A job number of
  one trace whose key matches the other's is very probably the same job: SWF job numbers
  start at 1 in every log, the keys tell the logs apart.
"""

from __future__ import annotations

import hashlib
import zlib

import numpy as np

from hpcgym.workloads.workload import Workload

__all__ = ["content_sha256", "job_keys"]


def _request(w: Workload) -> np.ndarray:
    """Each job's request as one int64 row: ``chunks`` then the per-chunk amounts."""
    return np.column_stack([np.asarray(w.chunks, dtype="<i8"), np.asarray(w.per_chunk, dtype="<i8")])


def content_sha256(w: Workload) -> str:
    """SHA-256 (hex) of the jobs as the engine sees them, in order.

    >>> from hpcgym.workloads import load_default
    >>> w = load_default()
    >>> content_sha256(w) == content_sha256(w.window(None, 0)) != content_sha256(w.window(100))
    True
    """
    h = hashlib.sha256()
    h.update(len(w).to_bytes(8, "little"))
    for column in (w.job_id, w.user):
        h.update(np.ascontiguousarray(column, dtype="<i8").tobytes())
    for column in (w.submit, w.runtime, w.estimate):
        h.update(np.ascontiguousarray(column, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(_request(w)).tobytes())
    return h.hexdigest()


def job_keys(w: Workload) -> np.ndarray:
    """A CRC-32 per job of its run time, request, estimate and user (uint32, one per job).

    Equal for a job however the trace was cut or load-scaled (the submit time is left out).
    """
    fields = np.column_stack(
        [
            np.asarray(w.runtime, dtype="<f8").view("<i8"),
            np.asarray(w.estimate, dtype="<f8").view("<i8"),
            np.asarray(w.user, dtype="<i8"),
            _request(w),
        ]
    )
    rows = np.ascontiguousarray(fields, dtype="<i8")
    return np.fromiter((zlib.crc32(r.tobytes()) for r in rows), dtype=np.uint32, count=len(rows))
