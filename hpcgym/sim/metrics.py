"""Metrics: one module for every report and every reward.

Definitions (design card):

* wait = start - submit; response = wait + runtime;
* slowdown = (wait + runtime) / runtime, over jobs with runtime > 0;
* bounded slowdown = max(1, (wait + runtime) / max(tau, runtime)), tau = 10 s;
* averages are over a *measured set* of jobs, named in every result
  (``measured_set``, see :data:`MEASURED_SETS`): by default 004's steady state (Tsafrir
  et al. 2007), which leaves out the first 1 % of terminated jobs and the jobs that
  terminate after the last arrival; ``include_all=True`` keeps every job. 004's set
  depends on the schedule, so two policies run on one workload are in general
  averaged over different jobs: side-by-side tables (``hpcgym compare``) average every
  policy over one common set instead (:func:`common_measured_jobs`);
* utilization = busy processor-seconds / (processors x makespan), makespan = last end -
  first submit (processors as requested; the workload's machine size);
* utilization per resource type and per node group (:func:`resource_utilization`) =
  the resource-seconds jobs' placements held / (capacity x makespan), over the whole
  machine or a group's nodes (on an exclusive machine a job holds its nodes whole);
* queue length: number of waiting jobs over time, time-weighted over the makespan;
* job classes (Galleguillos et al.): short < 1 h, medium 1-12 h, long > 12 h.

Here ``runtime`` is the time a job actually ran (``end - start``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcgym.common.errors import EmptyWorkloadError, InvalidConfigError
from hpcgym.machine import align_requests
from hpcgym.sim.schedule import Schedule

MEASURED_SETS = {
    "steady-state": "004's rule: the first 1 % of jobs to end and every job ending after the last "
    "arrival are left out",
    "trimmed": "the first and the last 1 % of jobs by submission are left out",
    "all": "every job",
}
"""The job sets averages can be taken over, by name, with what each leaves out.

``steady-state`` (the default of a single run) is Tsafrir et al. (2007)'s: it depends on
the run's end times, so it differs between policies. ``trimmed`` is decided from the
workload alone, so it is the same set for every policy run on one workload.
"""

SMALL_SET_JOBS = 100
"""A measured set of fewer jobs than this gets a note: its averages are noisy."""

SMALL_SET_SHARE = 0.5
"""A measured set of less than this share of the jobs gets a note: it may not represent them."""

TAU = 10.0
"""Bounded-slowdown threshold in seconds."""

CLASS_EDGES = (3600.0, 43200.0)
"""Short/medium and medium/long boundaries in seconds (1 h, 12 h)."""


def slowdown(wait: np.ndarray, runtime: np.ndarray) -> np.ndarray:
    """(wait + runtime) / runtime; NaN where runtime is 0."""
    wait = np.asarray(wait, dtype=np.float64)
    runtime = np.asarray(runtime, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(runtime > 0, (wait + runtime) / np.where(runtime > 0, runtime, 1.0), np.nan)


def bounded_slowdown(wait: np.ndarray | float, runtime: np.ndarray | float, tau: float = TAU) -> np.ndarray:
    """max(1, (wait + runtime) / max(tau, runtime))."""
    wait = np.asarray(wait, dtype=np.float64)
    runtime = np.asarray(runtime, dtype=np.float64)
    return np.maximum(1.0, (wait + runtime) / np.maximum(tau, runtime))


def steady_state_mask(submit: np.ndarray, end: np.ndarray, warmup_fraction: float = 0.01) -> np.ndarray:
    """Jobs counted in averages: not among the first 1 % to terminate, not ending after the last arrival."""
    n = len(end)
    keep = np.ones(n, dtype=bool)
    if n == 0:
        return keep
    k = int(warmup_fraction * n)
    if k:
        # the first k of a stable sort of the ends: every end below the k-th smallest, then as
        # many of the jobs ending at it as are missing, in job order (a partition, not a sort)
        kth = np.partition(end, k - 1)[k - 1]
        if kth == kth:
            below = end < kth
            keep[below] = False
            keep[np.flatnonzero(end == kth)[: k - int(np.count_nonzero(below))]] = False
        else:  # NaN ends among the first k (an incomplete schedule): the sort puts them last
            keep[np.argsort(end, kind="stable")[:k]] = False
    keep &= end <= submit.max()
    return keep


def trimmed_mask(submit: np.ndarray, fraction: float = 0.01) -> np.ndarray:
    """Jobs counted by the ``trimmed`` set: all but the first and the last 1 % by submission.

    A stand-in for 004's warm-up and cool-down decided from the workload alone, so that
    every policy run on one workload is averaged over the same jobs. Warm-up: the first
    ``int(fraction * n)`` jobs to arrive (004 leaves out as many, but the first to *end*,
    which depends on the schedule). Cool-down: as many of the last jobs to arrive; 004
    leaves out the jobs *ending* after the last arrival, which a policy that lets its
    queue grow (FCFS on an overloaded trace) turns into a large share of the jobs, and
    exactly the ones it made wait longest. Every arrival up to those is measured,
    however late the policy runs it. Ties in submit time keep job order.

    >>> trimmed_mask(np.arange(200.0)).sum(), trimmed_mask(np.arange(200.0))[[0, 1, 2, 197, 198, 199]]
    (np.int64(196), array([False, False,  True,  True, False, False]))
    """
    n = len(submit)
    keep = np.ones(n, dtype=bool)
    k = int(fraction * n)
    if k:
        order = np.argsort(submit, kind="stable")
        keep[order[:k]] = False
        keep[order[n - k :]] = False
    return keep


def _check_complete(schedule: Schedule) -> None:
    if np.isnan(schedule.start).any() or np.isnan(schedule.end).any():
        raise ValueError("schedule is incomplete: some jobs never started or ended")


def _measure_name(include_all: bool, measure: str | None) -> str:
    name = "all" if include_all else (measure or "steady-state")
    if name not in MEASURED_SETS:
        raise InvalidConfigError(f"measure: unknown measured set {name!r}; known: {', '.join(MEASURED_SETS)}")
    return name


def measured_jobs(
    schedule: Schedule,
    include_all: bool = False,
    *,
    measure: str | None = None,
    jobs: np.ndarray | None = None,
) -> np.ndarray:
    """Which jobs of a complete schedule the averages count.

    Args:
        schedule: a complete schedule.
        include_all: every job (the same as ``measure="all"``).
        measure: a name of :data:`MEASURED_SETS`; by default ``steady-state``
            (:func:`steady_state_mask`).
        jobs: the set itself (a boolean mask over the jobs), e.g. one that
            :func:`common_measured_jobs` chose for several runs; overrides the rest.

    Raises:
        ValueError: some jobs never started or ended.
        InvalidConfigError: ``measure`` is not known, or ``jobs`` is not a mask of the jobs.
    """
    _check_complete(schedule)
    n = len(schedule.workload)
    if jobs is not None:
        mask = np.asarray(jobs)
        if mask.dtype != np.bool_ or mask.shape != (n,):
            raise InvalidConfigError(
                f"jobs: the measured set must be a boolean mask of the {n} jobs, "
                f"got dtype {mask.dtype} and shape {mask.shape}"
            )
        return mask
    name = _measure_name(include_all, measure)
    if name == "all":
        return np.ones(n, dtype=bool)
    if name == "trimmed":
        return trimmed_mask(schedule.workload.submit)
    return steady_state_mask(schedule.workload.submit, schedule.end)


def common_measured_jobs(schedules: Sequence[Schedule], measure: str = "trimmed") -> np.ndarray:
    """One measured set for several runs of one workload, so their averages compare like with like.

    ``trimmed`` and ``all`` are decided by the workload alone. ``steady-state`` is the
    intersection of every run's own 004 set: the jobs that none of the runs leaves out.

    Raises:
        InvalidConfigError: no schedules, runs of different workloads, or an unknown ``measure``.
    """
    if not schedules:
        raise InvalidConfigError("schedules: a common measured set needs at least one run")
    n = len(schedules[0].workload)
    first = schedules[0].workload
    for s in schedules[1:]:
        if len(s.workload) != n or not np.array_equal(s.workload.submit, first.submit):
            raise InvalidConfigError(
                "schedules: a common measured set needs runs of one workload "
                f"(got {len(s.workload)} jobs beside {n}, or other submit times)"
            )
    name = _measure_name(False, measure)
    mask = np.ones(n, dtype=bool)
    for s in schedules if name == "steady-state" else schedules[:1]:
        mask &= measured_jobs(s, measure=name)
    return mask


def measurement_notes(jobs_measured: int, jobs_total: int, measure: str) -> list[str]:
    """Sentences a report prints under its averages when the measured set explains them.

    Empty when the set is large enough (at least :data:`SMALL_SET_JOBS` jobs and
    :data:`SMALL_SET_SHARE` of them). ``measure`` names the set (:data:`MEASURED_SETS`).

    >>> measurement_notes(0, 5, "steady-state")[0][:60]
    'no job measured: all 5 jobs fall in the steady-state exclusi'
    >>> measurement_notes(9_000, 10_000, "trimmed")
    []
    """
    rule = MEASURED_SETS.get(measure, measure)
    if jobs_total == 0:
        return ["no job to measure: the workload is empty"]
    if jobs_measured == 0:
        return [
            f"no job measured: all {jobs_total:,} jobs fall in the {measure} exclusion ({rule}); "
            "use --include-all (include_all=True) to average over every job"
        ]
    share = jobs_measured / jobs_total
    if jobs_measured == jobs_total:
        if jobs_measured < SMALL_SET_JOBS:
            return [f"only {jobs_measured:,} jobs are measured: averages over so few jobs are noisy"]
        return []
    if jobs_measured < SMALL_SET_JOBS or share < SMALL_SET_SHARE:
        return [
            f"only {jobs_measured:,} of {jobs_total:,} jobs ({100 * share:.0f} %) are measured "
            f"({measure}: {rule}): averages over so few of the jobs are noisy or unrepresentative; "
            "--include-all (include_all=True) averages over every job"
        ]
    return []


def queue_length_distribution(
    submit: np.ndarray, start: np.ndarray, until: float | None = None
) -> dict[str, float]:
    """Time-weighted statistics of the number of waiting jobs (mean, median, p95, max).

    The window runs from the first submit to ``until`` (``compute_metrics`` passes the
    last end, so it matches the makespan that utilization uses; by default the last
    start, after which the queue is empty).
    """
    if len(submit) == 0:
        return {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}
    times, length = _queue_steps(submit, start)
    last = times[-1] if until is None else max(float(until), float(times[-1]))
    dt = np.empty_like(times)  # np.diff(times, append=last), without its concatenation
    np.subtract(times[1:], times[:-1], out=dt[:-1])
    dt[-1] = last - times[-1]
    del times
    total = dt.sum()
    if total <= 0:
        return {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": float(length.max())}
    mean = float((length * dt).sum() / total)
    o = stable_int_order(length)
    cw = dt[o]
    del dt
    np.cumsum(cw, out=cw)
    cw /= total
    ordered = length[o]
    del o
    median = float(ordered[np.searchsorted(cw, 0.5)])
    p95 = float(ordered[min(int(np.searchsorted(cw, 0.95)), len(ordered) - 1)])
    return {"mean": mean, "median": median, "p95": p95, "max": float(length.max())}


def stable_int_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` of integer ``keys``, by a radix sort when they span 16 bits.

    A stable sort has one result whatever its algorithm; numpy sorts 16-bit integers by
    radix (five times faster than its merge sort of int64 for a trace's queue lengths).
    """
    if len(keys):
        lo = int(keys.min())
        if int(keys.max()) - lo < 2**16:
            return np.argsort((keys - lo).astype(np.uint16), kind="stable")
    return np.argsort(keys, kind="stable")


def _queue_steps(submit: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every arrival and start in time order, and the queue's length after each."""
    # two events a job; each temporary is let go once used, as full traces make them large
    times = np.concatenate([submit, start])
    delta = np.ones(len(times), dtype=np.int8)
    delta[len(submit) :] = -1
    order = np.lexsort((delta, times))  # at one instant, starts (-1) before arrivals
    times = times[order]
    delta = delta[order]
    del order
    return times, np.cumsum(delta, dtype=np.int64)  # whole numbers: the values of a float sum of +-1


def queue_length_series(submit: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The number of waiting jobs as a step function: ``(times, lengths)``.

    ``lengths[i]`` is the queue's length from ``times[i]`` until ``times[i + 1]`` (one
    entry per distinct instant; a job waits from its submission to its start). Jobs
    without a start (NaN) are left out. The series :func:`queue_length_distribution`
    weighs by time.

    >>> queue_length_series(np.array([0.0, 0.0, 5.0]), np.array([0.0, 10.0, 10.0]))
    (array([ 0.,  5., 10.]), array([1., 2., 0.]))
    """
    ran = np.isfinite(start)
    times, length = _queue_steps(np.asarray(submit, np.float64)[ran], np.asarray(start, np.float64)[ran])
    last = np.append(times[1:] != times[:-1], True)  # the length once an instant's events are done
    return times[last], length[last].astype(np.float64)


def job_metrics(wait: np.ndarray, runtime: np.ndarray, tau: float = TAU) -> dict[str, float]:
    """Mean wait (s), slowdown and bounded slowdown of a set of jobs."""
    if len(wait) == 0:
        return {
            "jobs": 0,
            "mean_wait_s": float("nan"),
            "mean_slowdown": float("nan"),
            "mean_bsld": float("nan"),
        }
    return _job_means(
        np.asarray(wait, dtype=np.float64), slowdown(wait, runtime), bounded_slowdown(wait, runtime, tau)
    )


def _job_means(wait: np.ndarray, sld: np.ndarray, bsld: np.ndarray) -> dict[str, float]:
    """:func:`job_metrics` from the jobs' slowdowns, computed once for several sets.

    The sums are numpy's ``mean`` and ``nanmean`` spelt out (the same pairwise sums over
    the same values, so the same bits) without their per-call overhead: an episode's
    end computes twelve of them.
    """
    n = len(wait)
    if n == 0:
        return job_metrics(wait, wait)
    if np.isfinite(sld).any():
        nan = np.isnan(sld)
        mean_sld = float(np.where(nan, 0.0, sld).sum() / (n - int(np.count_nonzero(nan))))
    else:
        mean_sld = float("nan")
    return {
        "jobs": n,
        "mean_wait_s": float(wait.sum() / n),
        "mean_slowdown": mean_sld,
        "mean_bsld": float(bsld.sum() / n),
    }


_CHUNK_BLOCK = 65_536
"""Chunks :func:`resource_utilization` adds up at a time."""


def resource_utilization(schedule: Schedule, makespan: float | None = None) -> dict[str, Any]:
    """Utilization per resource type and per node group, from the schedule's placements.

    Each chunk of a job holds its per-chunk request on its node (on an exclusive
    machine, the whole node) from the job's start to its end; utilization is the
    resource-seconds held over capacity x makespan (last end - first submit), for the
    whole machine and for each node group. Types a group has none of are left out.

    Returns:
        ``{"by_resource": {type: share}, "by_group": {group: {type: share}}}``; empty
        dicts for a schedule without a machine or placements.

    >>> from hpcgym.baselines import make_policy
    >>> from hpcgym.sim import Simulator
    >>> from hpcgym.workloads import Workload
    >>> w = Workload.from_columns([0, 0], [10, 10], [2, 2], [10, 10], procs=4)
    >>> resource_utilization(Simulator(w).run(make_policy("fcfs")))
    {'by_resource': {'procs': 1.0}, 'by_group': {}}
    """
    m = schedule.machine
    w = schedule.workload
    ptr = np.asarray(schedule.placement_ptr)
    empty: dict[str, Any] = {"by_resource": {}, "by_group": {}}
    if m is None or len(ptr) != len(w) + 1 or len(w) == 0:
        return empty
    if makespan is None:
        makespan = float(schedule.end.max() - w.submit.min())
    placed = np.asarray(schedule.placement_nodes)
    chunk_job = np.repeat(np.arange(len(w)), np.diff(ptr))
    runtime = schedule.end - schedule.start
    per_chunk = None if m.exclusive else align_requests(m, w.resources, w.chunks, w.per_chunk, check=False)[1]
    busy = np.zeros(m.capacity.shape, dtype=np.float64)
    # a block of chunks at a time, in order: the same sums, without (chunks x R) temporaries
    for first in range(0, len(placed), _CHUNK_BLOCK):
        job = chunk_job[first : first + _CHUNK_BLOCK]
        nodes = placed[first : first + _CHUNK_BLOCK]
        held = runtime[job]
        ran = (nodes >= 0) & np.isfinite(held)
        if not ran.all():
            job, nodes, held = job[ran], nodes[ran], held[ran]
        amount = m.capacity[nodes] if per_chunk is None else per_chunk[job]
        np.add.at(busy, nodes, amount * held[:, None])

    def shares(rows: Any) -> dict[str, float]:
        cap = m.capacity[rows].sum(axis=0).astype(np.float64)
        use = busy[rows].sum(axis=0)
        return {
            r: float(use[i] / (cap[i] * makespan)) if makespan > 0 else 0.0
            for i, r in enumerate(m.resources)
            if cap[i] > 0
        }

    return {"by_resource": shares(slice(None)), "by_group": {g: shares(n) for g, n in m.groups.items()}}


def compute_metrics(
    schedule: Schedule,
    *,
    include_all: bool = False,
    measure: str | None = None,
    jobs: np.ndarray | None = None,
    tau: float = TAU,
    class_edges: Sequence[float] = CLASS_EDGES,
) -> dict[str, Any]:
    """Every report metric of a finished schedule.

    Args:
        schedule: a complete schedule.
        include_all: average over every job instead of leaving out warm-up/cool-down.
        measure: the measured set by name (:data:`MEASURED_SETS`; default
            ``steady-state``), or the name of ``jobs``.
        jobs: the measured set itself, a boolean mask over the jobs (as
            :func:`common_measured_jobs` gives for several runs of one workload).
        tau: bounded-slowdown threshold (s).
        class_edges: short/medium and medium/long boundaries (s).

    Returns:
        A dict with ``measured_set`` (the set's name), ``jobs_measured``, ``mean_wait_s``,
        ``mean_slowdown``, ``mean_bsld``, ``max_wait_s``, ``utilization``,
        ``utilization_by_resource``, ``utilization_by_group`` (see
        :func:`resource_utilization`), ``makespan_s``, ``queue_length`` (time-weighted mean/median/p95/max),
        ``classes`` (short/medium/long: jobs, mean wait, mean bsld), ``killed`` and
        ``notes`` (:func:`measurement_notes`: why the averages are NaN or rest on few jobs).
        Utilization, makespan and the queue are about the whole run, whatever the set.
    """
    w = schedule.workload
    if len(w) == 0:
        raise EmptyWorkloadError("compute_metrics: the schedule has no jobs, so there is nothing to average")
    submit = w.submit
    start, end = schedule.start, schedule.end
    mask = measured_jobs(schedule, include_all, measure=measure, jobs=jobs)
    name = (measure or "given") if jobs is not None else _measure_name(include_all, measure)
    wait = start - submit
    runtime = end - start
    out: dict[str, Any] = {"measured_set": name}
    sld = slowdown(wait, runtime)
    bsld = bounded_slowdown(wait, runtime, tau)
    base = _job_means(wait[mask], sld[mask], bsld[mask])
    out["jobs_measured"] = base.pop("jobs")
    out.update(base)
    out["max_wait_s"] = float(wait[mask].max()) if mask.any() else float("nan")
    makespan = float(end.max() - submit.min()) if len(w) else 0.0
    busy = float((runtime * w.procs_req).sum())
    out["utilization"] = busy / (w.procs * makespan) if makespan > 0 else 0.0
    held = resource_utilization(schedule, makespan)
    out["utilization_by_resource"] = held["by_resource"]
    out["utilization_by_group"] = held["by_group"]
    out["makespan_s"] = makespan
    out["queue_length"] = queue_length_distribution(submit, start, until=float(end.max()) if len(w) else None)
    lo, hi = class_edges
    classes = {
        "short": runtime < lo,
        "medium": (runtime >= lo) & (runtime <= hi),
        "long": runtime > hi,
    }
    out["classes"] = {
        name: _job_means(wait[pick], sld[pick], bsld[pick])
        for name, sel in classes.items()
        for pick in (mask & sel,)
    }
    out["killed"] = int(schedule.killed.sum())
    out["notes"] = measurement_notes(out["jobs_measured"], len(w), name)
    return out
