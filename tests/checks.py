"""Checks several test folders share: schedule invariants, random node machines, the CLI in-process.

Kept out of the test modules so that a test in one package folder never imports another
folder's test module (pytest puts only ``tests/`` and each test's own folder on the path).
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from hpcgym.machine import Machine, align_requests
from hpcgym.sim import Schedule
from hpcgym.workloads import Workload, fit_workload


def check_schedule(w: Workload, s: Schedule, kill: bool) -> None:
    """Every job started and ended once, never before submit, ran its time, and no over-use."""
    n = len(w)
    assert np.isfinite(s.start).all() and np.isfinite(s.end).all(), "a job never started or ended"
    assert (s.start >= w.submit).all(), "a job started before it was submitted"
    if kill:
        np.testing.assert_array_equal(s.killed, w.runtime > w.estimate)
    else:
        assert not s.killed.any()
    ran = np.where(s.killed, w.estimate, w.runtime)
    np.testing.assert_array_equal(s.end, s.start + ran)
    # capacity: sweep starts (+procs) and ends (-procs); at one instant ends come first.
    # A job of run time 0 holds nothing over any interval of time, so it is left out.
    busy = s.end > s.start
    times = np.concatenate([s.start[busy], s.end[busy]])
    delta = np.concatenate([w.procs_req[busy], -w.procs_req[busy]])
    order = np.lexsort((delta, times))
    in_use = np.cumsum(delta[order])
    if len(in_use):
        assert in_use.max() <= w.procs, f"{in_use.max()} processors in use on a machine of {w.procs}"
        assert in_use.min() >= 0 and in_use[-1] == 0
    assert len(s.start) == n


def jobs_on(machine: Machine, rows, resources=None) -> Workload:
    """``rows``: (submit, runtime, estimate, chunks, per-chunk vector)."""
    resources = resources or machine.resources
    return Workload.from_columns(
        [r[0] for r in rows],
        [r[1] for r in rows],
        None,
        [r[2] for r in rows],
        chunks=[r[3] for r in rows],
        per_chunk=[r[4] for r in rows],
        resources=resources,
        machine=machine,
    )


@st.composite
def machines_and_workloads(draw, max_jobs: int = 10):
    n_nodes = draw(st.integers(1, 4))
    n_res = draw(st.integers(1, 3))
    cap = np.array([[draw(st.integers(0, 6)) for _ in range(n_res)] for _ in range(n_nodes)])
    cap[:, 0] = np.maximum(cap[:, 0], 1)
    machine = Machine(
        "random",
        ("cores", "gpus", "mem_gb")[:n_res],
        cap,
        exclusive=draw(st.booleans()),
        allocation=draw(st.sampled_from(["first-fit", "best-fit"])),
    )
    n = draw(st.integers(1, max_jobs))
    t = 0.0
    rows = []
    for _ in range(n):
        t += draw(st.integers(0, 4))
        runtime = float(draw(st.integers(1, 20)))
        estimate = runtime + float(draw(st.integers(0, 10)))  # runtime <= estimate
        node = cap[draw(st.integers(0, n_nodes - 1))]
        v = [draw(st.integers(0, int(c))) for c in node]
        v[0] = max(v[0], 1)
        rows.append((t, runtime, estimate, draw(st.integers(1, 3)), v))
    w = fit_workload(jobs_on(machine, rows), machine)
    assume(len(w) > 0)
    return machine, w


def replay_capacity(machine: Machine, w: Workload, s) -> None:
    """Replay the placements in time (ends before starts at one instant): no node over-used."""
    chunks, per_chunk, _ = align_requests(machine, w.resources, w.chunks, w.per_chunk)
    for j in range(len(w)):
        nodes = s.placement(j)
        assert len(nodes) == chunks[j], f"job {j}: {len(nodes)} nodes for {chunks[j]} chunks"
        assert ((nodes >= 0) & (nodes < machine.n_nodes)).all()
        if machine.exclusive:
            assert len(set(nodes.tolist())) == len(nodes), f"job {j} has two chunks on one exclusive node"
    events = sorted([(s.end[j], 0, j) for j in range(len(w))] + [(s.start[j], 1, j) for j in range(len(w))])
    free = machine.capacity.astype(np.int64).copy()
    for t, kind, j in events:
        for i in s.placement(j).tolist():
            if machine.exclusive:
                if kind:
                    assert (free[i] == machine.capacity[i]).all(), f"t={t:g}: job {j} on busy node {i}"
                    free[i] = 0
                else:
                    free[i] = machine.capacity[i]
            else:
                free[i] += -per_chunk[j] if kind else per_chunk[j]
        assert (free >= 0).all(), f"t={t:g}: job {j} over-uses a node: free {free.tolist()}"
    np.testing.assert_array_equal(free, machine.capacity)


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Run ``hpcgym argv`` in this process: (exit code, stdout, stderr)."""
    from hpcgym.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
