"""Compiled feature kernels of the environment's observation builders.

Each kernel reads job columns and the queue/running index arrays of the engine's
read-only view and writes one preallocated output; no per-job Python objects. Whether a
queued job fits now is the engine allocator's answer (``view.queue_fits``), passed in.
The six system-state histograms (:func:`~hpcgym.predict.histograms.histograms`) are
003's features and live with the wait predictors; the environment imports them.
Processor amounts are those of the machine's first resource type (``view.procs``).
Times are scaled as ``log1p(t) * inv_log_t`` (``inv_log_t = 1 / log1p(max_time)``) and
clipped to [0, 1].
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _tnorm(t: float, inv_log_t: float) -> float:
    if t <= 0.0:
        return 0.0
    v = np.log1p(t) * inv_log_t
    return v if v < 1.0 else 1.0


@njit(cache=True)
def job_window(
    out: np.ndarray,
    queue: np.ndarray,
    fits: np.ndarray,
    running: np.ndarray,
    now: float,
    machine: int,
    procs: np.ndarray,
    estimate: np.ndarray,
    prediction: np.ndarray,
    submit: np.ndarray,
    user: np.ndarray,
    runtime: np.ndarray,
    oracle: bool,
    inv_log_t: float,
    u_wait: np.ndarray,
    u_wait_procs: np.ndarray,
    u_run_procs: np.ndarray,
    u_recent_runtime: np.ndarray,
    u_recent_accuracy: np.ndarray,
    est_norm: np.ndarray,
    pred_norm: np.ndarray,
) -> None:
    """Features of the first ``len(out)`` queued jobs (rows past the queue stay 0).

    Columns: present, wait, procs, estimate, prediction, fits now, the user's share of
    the waiting jobs, of the waiting processors, the user's running processors, the
    user's recent run time and estimate accuracy, and (``oracle``) the real run time.
    ``u_wait*`` and ``u_run_procs`` are zeroed scratch arrays, one entry per user;
    ``u_recent_*`` are the user's history, one entry per user. ``est_norm`` and
    ``pred_norm``: each job's scaled estimate and prediction (:func:`time_norms`) when they
    do not change in the run (the compiled step's memos: two logarithms less a row), or
    empty arrays: scaled here.
    """
    memo = len(est_norm) > 0
    k = out.shape[0]
    nq = len(queue)
    total_wait_procs = 0
    for j in queue:
        u = user[j]
        u_wait[u] += 1
        u_wait_procs[u] += procs[j]
        total_wait_procs += procs[j]
    for j in running:
        u_run_procs[user[j]] += procs[j]
    n = nq if nq < k else k
    inv_m = 1.0 / machine
    for i in range(n):
        j = queue[i]
        u = user[j]
        row = out[i]
        row[0] = 1.0
        row[1] = _tnorm(now - submit[j], inv_log_t)
        row[2] = procs[j] * inv_m
        row[3] = est_norm[j] if memo else _tnorm(estimate[j], inv_log_t)
        row[4] = pred_norm[j] if memo else _tnorm(prediction[j], inv_log_t)
        row[5] = 1.0 if fits[i] else 0.0
        row[6] = u_wait[u] / nq
        row[7] = u_wait_procs[u] / total_wait_procs
        row[8] = u_run_procs[u] * inv_m
        row[9] = _tnorm(u_recent_runtime[u], inv_log_t)
        row[10] = u_recent_accuracy[u]
        if oracle:
            row[11] = _tnorm(runtime[j], inv_log_t)
    for j in queue:
        u = user[j]
        u_wait[u] = 0
        u_wait_procs[u] = 0
    for j in running:
        u_run_procs[user[j]] = 0


@njit(cache=True)
def time_norms(out: np.ndarray, t: np.ndarray, inv_log_t: float) -> None:
    """``out[j]``: ``t[j]`` scaled as :func:`job_window` scales times (the memos of :func:`job_window`)."""
    for j in range(len(out)):
        out[j] = _tnorm(t[j], inv_log_t)


@njit(cache=True)
def user_history(
    jobs: np.ndarray,
    end: np.ndarray,
    start: np.ndarray,
    estimate: np.ndarray,
    user: np.ndarray,
    count: np.ndarray,
    last: np.ndarray,
    mean_runtime: np.ndarray,
    mean_accuracy: np.ndarray,
) -> None:
    """Record ended ``jobs`` (in termination order) in each user's last-two history.

    ``last[u, 0]`` is the newest ``(run time, accuracy)`` of user ``u``, ``last[u, 1]``
    the one before; accuracy as in Tsafrir et al.: run time / estimate, or estimate /
    run time when the job ran longer, 1 when they are equal.
    """
    for i in range(len(jobs)):
        j = jobs[i]
        u = user[j]
        r = end[i] - start[j]
        e = estimate[j]
        if r == e:
            a = 1.0
        elif r < e:
            a = r / e
        else:
            a = e / r
        last[u, 1, 0] = last[u, 0, 0]
        last[u, 1, 1] = last[u, 0, 1]
        last[u, 0, 0] = r
        last[u, 0, 1] = a
        count[u] += 1
        if count[u] == 1:
            mean_runtime[u] = r
            mean_accuracy[u] = a
        else:
            mean_runtime[u] = 0.5 * (last[u, 0, 0] + last[u, 1, 0])
            mean_accuracy[u] = 0.5 * (last[u, 0, 1] + last[u, 1, 1])


@njit(cache=True)
def system(
    out: np.ndarray,
    queue: np.ndarray,
    fits: np.ndarray,
    running: np.ndarray,
    now: float,
    free: int,
    machine: int,
    k: int,
    procs: np.ndarray,
    prediction: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    inv_log_t: float,
) -> None:
    """Free resources, queue summary and running-job summary (see ``SYSTEM_FEATURES``)."""
    nq = len(queue)
    nr = len(running)
    out[0] = free / machine
    out[1] = nr / machine
    out[2] = nq / (nq + k)
    demand = 0
    fit = 0
    for i in range(nq):
        demand += procs[queue[i]]
        if fits[i]:
            fit += 1
    out[3] = demand / (demand + machine)
    if nq:
        out[4] = (nq - k) / nq if nq > k else 0.0
        out[5] = fit / nq
        out[6] = _tnorm(now - submit[queue[0]], inv_log_t)
    if nr:
        first = np.inf
        weighted = 0.0
        busy = 0
        over = 0
        for j in running:
            left = start[j] + prediction[j] - now
            if left < first:
                first = left
            if left <= 0.0:
                over += 1
            else:
                weighted += left * procs[j]
            busy += procs[j]
        out[7] = _tnorm(first, inv_log_t)
        out[8] = _tnorm(weighted / busy, inv_log_t)
        out[9] = over / nr


@njit(cache=True)
def job_mask(mask: np.ndarray, fits: np.ndarray, any_job: bool, can_advance: bool) -> None:
    """Action mask of ``job`` mode: shown jobs that fit (any shown job if ``any_job``), then advance.

    ``fits[i]`` says whether the i-th waiting job fits now (``view.queue_fits``).
    """
    k = len(mask) - 1
    nq = len(fits)
    n = nq if nq < k else k
    for i in range(n):
        mask[i] = any_job or fits[i]
    for i in range(n, k):
        mask[i] = False
    mask[k] = can_advance


ACCRUED_BSLD = 1
ACCRUED_WAIT_HOURS = 2


@njit(cache=True)
def accrued_sum(
    start: np.ndarray,
    submit: np.ndarray,
    runtime: np.ndarray,
    counted: np.ndarray,
    lo: int,
    hi: int,
    now: float,
    kind: int,
    tau: float,
) -> float:
    """Sum over jobs ``lo .. hi - 1`` of ``counted[j]`` times their accrued value now.

    A job's wait is ``start - submit`` once started, ``now - submit`` before. The value
    is its bounded slowdown ``max(1, (wait + runtime) / max(tau, runtime))``
    (``kind`` = :data:`ACCRUED_BSLD`) or its wait in hours (:data:`ACCRUED_WAIT_HOURS`),
    the definitions of :func:`hpcgym.sim.metrics.bounded_slowdown` and the ``wait`` reward.
    """
    total = 0.0
    for j in range(lo, hi):
        c = counted[j]
        if c == 0.0:
            continue
        s = start[j]
        wait = (now if np.isnan(s) else s) - submit[j]
        if kind == ACCRUED_BSLD:
            r = runtime[j]
            v = (wait + r) / (tau if tau > r else r)
            total += c * (v if v > 1.0 else 1.0)
        else:
            total += c * (wait / 3600.0)
    return total


@njit(cache=True)
def predicted_wait(
    out: np.ndarray,
    queue: np.ndarray,
    predicted: np.ndarray,
    seen: np.ndarray,
    now: float,
    inv_log_t: float,
) -> None:
    """Rows of the ``predicted_wait`` part: each shown job's prediction and what is left of it."""
    for r in range(min(out.shape[0], len(queue))):
        j = queue[r]
        out[r, 0] = _tnorm(predicted[j], inv_log_t)
        out[r, 1] = _tnorm(predicted[j] - (now - seen[j]), inv_log_t)
