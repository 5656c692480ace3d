"""Metrics against hand-computed values: wait, slowdown, bsld, utilization, queue length, classes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.baselines import make_policy
from hpcgym.metrics import (
    TAU,
    bounded_slowdown,
    compute_metrics,
    job_metrics,
    queue_length_distribution,
    slowdown,
    steady_state_mask,
)
from hpcgym.sim import Schedule, Simulator


def schedule_of(workload, start, end, killed=None) -> Schedule:
    n = len(workload)
    return Schedule(
        workload=workload,
        start=np.asarray(start, dtype=float),
        end=np.asarray(end, dtype=float),
        killed=np.zeros(n, dtype=bool) if killed is None else np.asarray(killed),
        first_prediction=workload.estimate.copy(),
        prediction_changes=[],
    )


@pytest.fixture
def three_jobs(make_workload):
    """Machine 4. Job 0: submit 0, 2 procs, runs 0-100. Job 1: submit 10, 2 procs, runs 50-55.
    Job 2: submit 20, 4 procs, runs 100-3700 (exactly 1 h)."""
    w = make_workload([(0, 100, 2, 100), (10, 5, 2, 5), (20, 3600, 4, 3600)], 4)
    return schedule_of(w, [0, 50, 100], [100, 55, 3700])


def test_per_job_definitions():
    assert bounded_slowdown(0, 0) == 1  # max(1, 0 / 10)
    assert bounded_slowdown(20, 5) == 2.5  # 25 / max(10, 5)
    assert bounded_slowdown(20, 50) == pytest.approx(1.4)  # 70 / 50
    assert bounded_slowdown(3, 4) == 1  # 7 / 10 < 1
    assert bounded_slowdown(20, 5, tau=5) == 5  # 25 / 5
    assert TAU == 10
    np.testing.assert_allclose(slowdown([0, 40, 80], [100, 5, 3600]), [1, 9, 3680 / 3600])
    assert np.isnan(slowdown([5], [0])[0])


def test_averages_over_every_job(three_jobs):
    m = compute_metrics(three_jobs, include_all=True)
    assert m["jobs_measured"] == 3
    assert m["mean_wait_s"] == pytest.approx((0 + 40 + 80) / 3)
    assert m["max_wait_s"] == 80
    assert m["mean_slowdown"] == pytest.approx((1 + 9 + 3680 / 3600) / 3)
    assert m["mean_bsld"] == pytest.approx((1 + 4.5 + 3680 / 3600) / 3)


def test_utilization_and_makespan(three_jobs):
    m = compute_metrics(three_jobs, include_all=True)
    assert m["makespan_s"] == 3700  # last end - first submit
    busy = 100 * 2 + 5 * 2 + 3600 * 4
    assert m["utilization"] == pytest.approx(busy / (4 * 3700))


def test_queue_length_is_time_weighted(three_jobs):
    # waiting: [0,10) 0 jobs, [10,20) 1, [20,50) 2, [50,100) 1, then 0 until the last
    # end at 3700: the window is the makespan, as for utilization
    q = compute_metrics(three_jobs, include_all=True)["queue_length"]
    assert q["mean"] == pytest.approx((0 * 10 + 1 * 10 + 2 * 30 + 1 * 50) / 3700)
    assert q["median"] == 0 and q["p95"] == 0  # empty 3610 s of 3700
    assert q["max"] == 2
    # up to the last start only: 0 for 10 %, 1 for 60 %, 2 for 30 % of the time
    w, s = three_jobs.workload, three_jobs
    q = queue_length_distribution(w.submit, s.start)
    assert q["mean"] == pytest.approx((0 * 10 + 1 * 10 + 2 * 30 + 1 * 50) / 100)
    assert q["median"] == 1
    assert q["p95"] == 2


def test_queue_length_ignores_instantaneous_states():
    # three jobs arrive at 0 and start at 0: the queue is never non-empty for any time
    q = queue_length_distribution(np.array([0.0, 0.0, 0.0, 5.0]), np.array([0.0, 0.0, 0.0, 10.0]))
    assert q["mean"] == pytest.approx(0.5)  # 1 job waits during [5, 10)
    assert q["max"] == 1
    assert queue_length_distribution(np.array([]), np.array([])) == {
        "mean": 0.0,
        "median": 0.0,
        "p95": 0.0,
        "max": 0.0,
    }


def test_job_classes_short_medium_long(make_workload):
    hour = 3600.0
    runtimes = [10, hour - 1, hour, 12 * hour, 12 * hour + 1]
    w = make_workload([(0, r, 1, r) for r in runtimes], 8)
    waits = [5, 6, 7, 8, 9]
    s = schedule_of(w, waits, np.add(waits, runtimes))
    classes = compute_metrics(s, include_all=True)["classes"]
    assert classes["short"]["jobs"] == 2 and classes["short"]["mean_wait_s"] == 5.5
    assert classes["medium"]["jobs"] == 2 and classes["medium"]["mean_wait_s"] == 7.5  # 1 h and 12 h
    assert classes["long"]["jobs"] == 1 and classes["long"]["mean_wait_s"] == 9
    assert classes["short"]["mean_bsld"] == pytest.approx((1.5 + (6 + hour - 1) / (hour - 1)) / 2)
    edges = compute_metrics(s, include_all=True, class_edges=(60.0, 7200.0))["classes"]
    assert [edges[c]["jobs"] for c in ("short", "medium", "long")] == [1, 2, 2]


def test_an_empty_class_has_no_average(three_jobs):
    long = compute_metrics(three_jobs, include_all=True)["classes"]["long"]
    assert long["jobs"] == 0 and math.isnan(long["mean_wait_s"])
    assert job_metrics(np.array([]), np.array([]))["jobs"] == 0


# -------------------------------------------------------- warm-up and cool-down
def test_warmup_and_cooldown_are_left_out(make_workload):
    """004: the first 1 % of terminated jobs and jobs ending after the last arrival.

    200 jobs, job i submitted at 10 i, waits i % 7 and runs 100 s, except job 3, which
    runs 1 s. The two first to end (1 % of 200) are job 3 (at 34) and job 0 (at 100).
    The last arrival is at 1990: jobs 190-199 end after it (job 189 ends exactly at 1990).
    """
    n = 200
    submit = np.arange(n) * 10.0
    wait = np.arange(n) % 7.0
    runtime = np.full(n, 100.0)
    runtime[3] = 1.0
    w = make_workload([(s, r, 1, r) for s, r in zip(submit, runtime, strict=True)], 8)
    s = schedule_of(w, submit + wait, submit + wait + runtime)
    excluded = {0, 3, *range(190, 200)}
    kept = np.array([i not in excluded for i in range(n)])
    np.testing.assert_array_equal(steady_state_mask(submit, s.end), kept)

    m = compute_metrics(s)
    assert m["jobs_measured"] == 188
    assert m["mean_wait_s"] == pytest.approx(wait[kept].mean())
    assert m["max_wait_s"] == 6
    every = compute_metrics(s, include_all=True)
    assert every["jobs_measured"] == 200
    assert every["mean_wait_s"] == pytest.approx(wait.mean())
    assert every["mean_wait_s"] != m["mean_wait_s"]
    # utilization, makespan and the queue are about the whole run either way
    assert every["utilization"] == m["utilization"] and every["makespan_s"] == m["makespan_s"]


def test_warmup_rounds_down_and_ties_keep_job_order():
    submit = np.zeros(150)
    end = np.full(150, 0.0)  # every job ends at the last arrival: none is cool-down
    mask = steady_state_mask(submit, end)
    assert (~mask).sum() == 1 and not mask[0]  # int(1.5) = 1 job; the tie goes to job 0
    assert steady_state_mask(submit[:99], end[:99]).all()  # 1 % of 99 jobs is 0 jobs
    assert (~steady_state_mask(np.zeros(1000), np.zeros(1000), warmup_fraction=0.05)).sum() == 50


def test_killed_jobs_are_measured_by_the_time_they_ran(make_workload):
    w = make_workload([(0, 100, 1, 10), (0, 5, 1, 5)], 1)
    s = Simulator(w, kill_at_estimate=True).run(make_policy("fcfs"))
    m = compute_metrics(s, include_all=True)
    assert m["killed"] == 1
    assert m["makespan_s"] == 15
    assert m["utilization"] == pytest.approx(15 / 15)
    assert m["mean_wait_s"] == 5  # (0 + 10) / 2


def test_an_incomplete_schedule_is_refused(three_jobs):
    three_jobs.start[1] = np.nan
    with pytest.raises(ValueError, match="incomplete"):
        compute_metrics(three_jobs)
