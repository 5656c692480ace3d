"""Add the training trace's provenance to the metadata of the shipped models (issue 24).

The two models were saved before ``hpcgym train`` recorded the trace's content hash, the job
ranges of its splits and a fingerprint of its jobs (:func:`hpcgym.agents.models.trace_provenance`).
This script reads each model's trace as its environment read it (the recorded path, else the
catalogue log of the same name) and rewrites only the ``hpcgym.json`` member of the ``.zip``
(:func:`hpcgym.agents.models.add_trace_provenance`): the weights are copied byte for byte, so
``hpcgym evaluate --model`` gives the same figures before and after.

Run from the repository root::

    python models/add_trace_provenance.py models/sdsc-sp2-policy.zip models/hpc2n-policy.zip
"""

from __future__ import annotations

import sys
from pathlib import Path

from hpcgym.agents.models import add_trace_provenance, read_metadata
from hpcgym.env import episodes
from hpcgym.workloads import Workload, load_catalogue, resolve_trace


def model_trace(path: str) -> Workload:
    """The trace a model was trained on, read with its recorded machine and procs."""
    meta = read_metadata(path)
    if meta is None:
        raise SystemExit(f"{path}: no hpcgym metadata")
    env = meta["env"]
    trace = env["trace"]
    if trace is not None and not Path(trace).exists():
        log = load_catalogue().find(Path(trace).name)
        trace = trace if log is None else str(resolve_trace(log.name))
    kwargs = env["kwargs"]
    load = kwargs.get("load_factor", 1.0)
    return episodes.load_trace(trace, kwargs.get("procs"), load, kwargs.get("machine"))


def main(paths: list[str]) -> int:
    for path in paths:
        meta = add_trace_provenance(path, model_trace(path))
        env = meta["env"]
        ranges = ", ".join(f"{k} {v['jobs']}" for k, v in env["splits"].items())
        digest = env["trace_sha256"][:16]
        print(f"{path}: {env['trace_name']}, {env['trace_jobs']} jobs, sha256 {digest}..., {ranges}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
