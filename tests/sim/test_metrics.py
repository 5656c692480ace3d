"""Metrics against hand-computed values: wait, slowdown, bsld, utilization, queue length, classes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.stats import paired_difference_ci
from hpcgym.sim import (
    MEASURED_SETS,
    TAU,
    Schedule,
    Simulator,
    bounded_slowdown,
    common_measured_jobs,
    compute_metrics,
    job_metrics,
    measured_jobs,
    measurement_notes,
    queue_length_distribution,
    slowdown,
    steady_state_mask,
    trimmed_mask,
)


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


@given(
    ends=st.lists(st.integers(0, 6).map(float) | st.just(float("nan")), min_size=1, max_size=300),
    fraction=st.sampled_from([0.01, 0.05, 0.3]),
)
@settings(max_examples=200, deadline=None)
def test_the_warm_up_is_the_first_jobs_of_a_stable_sort_of_the_ends(ends, fraction):
    """The partition that finds the warm-up leaves out exactly the jobs a stable sort puts first."""
    end = np.array(ends)
    submit = np.zeros(len(end))
    expected = np.ones(len(end), dtype=bool)
    expected[np.argsort(end, kind="stable")[: int(fraction * len(end))]] = False
    expected &= end <= submit.max()
    np.testing.assert_array_equal(steady_state_mask(submit, end, warmup_fraction=fraction), expected)


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


# ------------------------------------------------------------ measured sets
def test_trimmed_set_leaves_out_the_first_and_last_arrivals_whatever_the_schedule(make_workload):
    """200 jobs submitted out of job order: the 2 earliest and the 2 latest by submit time go."""
    submit = np.arange(200.0) * 10
    submit[[5, 150]] = submit[[150, 5]]  # job 150 is the 6th to arrive, job 5 the 151st
    submit[[0, 199]] = submit[[199, 0]]  # job 199 arrives first, job 0 last
    kept = trimmed_mask(submit)
    assert sorted(np.flatnonzero(~kept)) == [0, 1, 198, 199]
    assert kept[5] and kept[150]
    # decided by the workload alone: two schedules of it have the same set
    w = make_workload([(t, 100, 1, 100) for t in np.sort(submit)], 8)
    fast = schedule_of(w, w.submit, w.submit + 100)
    slow = schedule_of(w, w.submit + 5000, w.submit + 5100)  # everything ends after the last arrival
    by_workload = measured_jobs(fast, measure="trimmed")
    np.testing.assert_array_equal(by_workload, measured_jobs(slow, measure="trimmed"))
    assert measured_jobs(slow).sum() == 0  # 004's rule keeps none of the slow run's jobs
    assert compute_metrics(slow, measure="trimmed")["jobs_measured"] == 196


def test_trimmed_set_ties_keep_job_order_and_small_workloads_keep_every_job():
    kept = trimmed_mask(np.zeros(300))  # 1 % of 300 = 3 jobs at each end
    assert sorted(np.flatnonzero(~kept)) == [0, 1, 2, 297, 298, 299]
    assert trimmed_mask(np.arange(99.0)).all()  # 1 % of 99 jobs is 0 jobs
    assert trimmed_mask(np.zeros(0)).shape == (0,)


def test_measured_set_names_and_errors(three_jobs):
    assert set(MEASURED_SETS) == {"steady-state", "trimmed", "all"}
    assert compute_metrics(three_jobs)["measured_set"] == "steady-state"
    assert compute_metrics(three_jobs, include_all=True)["measured_set"] == "all"
    assert compute_metrics(three_jobs, measure="all")["jobs_measured"] == 3
    with pytest.raises(InvalidConfigError, match=r"unknown measured set 'some'.*steady-state, trimmed, all"):
        compute_metrics(three_jobs, measure="some")
    with pytest.raises(InvalidConfigError, match="boolean mask of the 3 jobs"):
        compute_metrics(three_jobs, jobs=np.array([1, 0, 1]))


def test_an_explicit_measured_set_is_averaged_exactly(three_jobs):
    jobs = np.array([False, True, True])
    m = compute_metrics(three_jobs, jobs=jobs, measure="mine")
    assert (m["measured_set"], m["jobs_measured"]) == ("mine", 2)
    assert m["mean_wait_s"] == pytest.approx((40 + 80) / 2)  # waits of jobs 1 and 2
    assert m["max_wait_s"] == 80
    assert m["mean_bsld"] == pytest.approx((4.5 + 3680 / 3600) / 2)


def test_common_steady_state_set_is_the_intersection_of_the_runs(make_workload):
    """Job i arrives at 10 i and runs 5 s, so job 9 always ends after the last arrival (90);
    run A also ends job 7 after it, run B job 8."""
    n = 10
    w = make_workload([(10.0 * i, 5, 1, 5) for i in range(n)], 4)
    end_a = w.submit + 5
    end_a[7] = 1000
    end_b = w.submit + 5
    end_b[8] = 1000
    a = schedule_of(w, end_a - 5, end_a)
    b = schedule_of(w, end_b - 5, end_b)
    assert sorted(np.flatnonzero(~measured_jobs(a))) == [7, 9]  # 10 jobs: no warm-up
    assert sorted(np.flatnonzero(~measured_jobs(b))) == [8, 9]
    common = common_measured_jobs([a, b], "steady-state")
    assert sorted(np.flatnonzero(~common)) == [7, 8, 9]
    np.testing.assert_array_equal(common_measured_jobs([a, b], "trimmed"), trimmed_mask(w.submit))
    assert common_measured_jobs([a, b], "all").all()
    other = make_workload([(10.0 * i, 5, 1, 5) for i in range(n + 1)], 4)
    with pytest.raises(InvalidConfigError, match="runs of one workload"):
        common_measured_jobs([a, schedule_of(other, other.submit, other.submit + 5)])
    with pytest.raises(InvalidConfigError, match="at least one run"):
        common_measured_jobs([])


def test_notes_say_why_an_average_is_missing_or_thin():
    (none,) = measurement_notes(0, 5, "steady-state")
    assert none.startswith("no job measured: all 5 jobs fall in the steady-state exclusion")
    assert "after the last arrival" in none and "--include-all" in none
    (thin,) = measurement_notes(4_000, 10_000, "steady-state")  # 40 % < 50 %
    assert thin.startswith("only 4,000 of 10,000 jobs (40 %) are measured")
    (few,) = measurement_notes(60, 70, "trimmed")  # 86 %, but under 100 jobs
    assert "only 60 of 70 jobs" in few
    assert measurement_notes(5, 5, "all") == ["only 5 jobs are measured: averages over so few jobs are noisy"]
    assert measurement_notes(5_100, 10_000, "steady-state") == []
    assert measurement_notes(0, 0, "all") == ["no job to measure: the workload is empty"]


def test_a_five_job_run_says_why_it_has_no_average(make_workload):
    w = make_workload([(i, 100, 1, 100) for i in range(5)], 8)  # all five end after the last arrival
    m = compute_metrics(Simulator(w).run(make_policy("fcfs")))
    assert m["jobs_measured"] == 0 and math.isnan(m["mean_wait_s"])
    assert m["notes"] and m["notes"][0].startswith("no job measured: all 5 jobs")


# ------------------------------------------- the env and simulate: one definition
@pytest.mark.parametrize("include_all", [True, False])
def test_env_episode_metrics_are_simulates_for_the_same_window(include_all):
    """The env's final metrics and ``simulate --offset --jobs`` on one window (no warm start).

    They once seemed to disagree (bsld 19.42 against 13.73): the env averages every job of
    its window by default (``include_all=True``, the jobs its rewards add up), ``simulate``
    004's steady state. Each result names its set; with the same set they are equal.
    """
    from hpcgym.baselines import run_policy
    from hpcgym.env import DispatchEnv, DispatcherPolicy, run_episode

    env = DispatchEnv(window_jobs=300, window_size=None, include_all=include_all)
    final = run_episode(env, DispatcherPolicy(make_policy("easy"), env), options={"offset": 7_800})["metrics"]
    row = run_policy(env.trace.window(300, 7_800), "easy", include_all=include_all).row
    assert final["measured_set"] == row["measured_set"] == ("all" if include_all else "steady-state")
    for key in ("jobs_measured", "mean_wait_s", "mean_bsld", "mean_slowdown", "utilization"):
        assert final[key] == pytest.approx(row[key], rel=1e-12), key
    if include_all:
        steady = run_policy(env.trace.window(300, 7_800), "easy").row
        assert steady["jobs_measured"] < final["jobs_measured"] == 300
        assert steady["mean_bsld"] != pytest.approx(final["mean_bsld"], rel=0.05)  # the gap named above


# ------------------------------------------------- confidence intervals (scipy)
def test_paired_difference_ci_brackets_a_clear_shift():
    pytest.importorskip("scipy")
    rng = np.random.default_rng(3)
    base = rng.uniform(5, 50, size=30)
    better = base - 2.0 + rng.normal(0, 0.5, size=30)
    mean, low, high = paired_difference_ci(better, base)
    assert mean == pytest.approx(float(np.mean(better - base)))
    assert low < mean < high < 0  # the interval excludes 0: a real improvement
    noise = base + rng.normal(0, 1.0, size=30)
    _, low, high = paired_difference_ci(noise - noise.mean() + base.mean(), base)
    assert low < 0 < high  # no shift: the interval contains 0
    assert paired_difference_ci(better, base) == paired_difference_ci(better, base)  # seeded


def test_paired_difference_ci_edge_cases(monkeypatch):
    assert paired_difference_ci([3.0, 4.0], [1.0, 2.0]) == (2.0, 2.0, 2.0)  # every difference the same
    mean, low, high = paired_difference_ci([3.0], [1.0])
    assert mean == 2.0 and math.isnan(low) and math.isnan(high)
    with pytest.raises(InvalidConfigError, match="one length"):
        paired_difference_ci([1.0, 2.0], [1.0])
    with pytest.raises(InvalidConfigError, match="confidence"):
        paired_difference_ci([1.0, 2.0], [0.0, 0.5], confidence=95)
    import sys

    monkeypatch.setitem(sys.modules, "scipy.stats", None)  # as if scipy were not installed
    with pytest.raises(ImportError, match=r"pip install 'hpcgym\[stats\]'"):
        paired_difference_ci([1.0, 2.0, 4.0], [0.0, 0.5, 1.0])


# ------------------------------------------- edges that mutation testing found unchecked
def test_note_thresholds_are_exactly_100_jobs_and_a_half_share():
    assert measurement_notes(100, 200, "steady-state") == []  # 100 jobs, 50 %: enough
    assert len(measurement_notes(99, 198, "steady-state")) == 1  # 99 jobs
    assert len(measurement_notes(100, 201, "steady-state")) == 1  # 100 jobs, under 50 %
    assert measurement_notes(100, 100, "all") == []
    (few,) = measurement_notes(99, 99, "all")
    assert few == "only 99 jobs are measured: averages over so few jobs are noisy"


def test_a_queue_window_of_zero_length_has_an_empty_queue():
    # one job arrives and starts at 5: the window [5, 5] has no length
    q = queue_length_distribution(np.array([5.0]), np.array([5.0]))
    assert q == {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}
    q = queue_length_distribution(np.array([5.0, 5.0]), np.array([5.0, 5.0]), until=5.0)
    assert q == {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}


def test_a_schedule_of_zero_makespan_has_zero_utilization(make_workload):
    w = make_workload([(7, 0, 2, 10), (7, 0, 1, 10)], 4)  # both end as they arrive
    m = compute_metrics(Simulator(w).run(make_policy("fcfs")), include_all=True)
    assert m["makespan_s"] == 0.0
    assert m["utilization"] == 0.0  # not NaN, not a division by zero
    assert m["queue_length"] == {"mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0.0}
    assert m["utilization_by_resource"] == {"procs": 0.0}


def _gpu_run(first_submit: float):
    """Two jobs on a machine of 2 cores + 1 GPU and 2 cores: a type of total capacity 1."""
    from hpcgym.machine import Machine
    from hpcgym.sim.metrics import resource_utilization
    from hpcgym.workloads import Workload

    groups = [{"count": 1, "cores": 2, "gpus": 1}, {"count": 1, "cores": 2}]
    m = Machine.from_dict({"resources": ["cores", "gpus"], "nodes": groups})
    w = Workload.from_columns(
        [first_submit, first_submit],
        [100, 100],
        None,
        [100, 100],
        chunks=[1, 1],
        per_chunk=[[1, 1], [2, 0]],
        resources=["cores", "gpus"],
        machine=m,
    )
    return Simulator(w, machine=m).run(make_policy("fcfs")), resource_utilization


def test_a_resource_type_of_total_capacity_one_is_measured():
    schedule, resource_utilization = _gpu_run(0.0)
    by_resource = resource_utilization(schedule)["by_resource"]
    # both jobs run 0-100: 3 of 4 cores and the one GPU, over a makespan of 100
    assert by_resource == {"cores": pytest.approx(0.75), "gpus": pytest.approx(1.0)}


def test_the_default_makespan_starts_at_the_first_submit():
    schedule, resource_utilization = _gpu_run(1000.0)
    assert schedule.start.tolist() == [1000.0, 1000.0]
    # makespan 1100 - 1000 = 100 (not 1100 + 1000)
    by_resource = resource_utilization(schedule)["by_resource"]
    assert by_resource == {"cores": pytest.approx(0.75), "gpus": pytest.approx(1.0)}
    assert resource_utilization(schedule, 200.0)["by_resource"]["gpus"] == pytest.approx(0.5)


def test_a_single_job_ending_after_the_only_arrival_is_not_steady_state():
    assert steady_state_mask(np.array([0.0]), np.array([10.0])).tolist() == [False]
    assert steady_state_mask(np.array([0.0]), np.array([0.0])).tolist() == [True]


def test_a_queue_window_ending_before_the_last_start_runs_to_it():
    submit, start = np.array([0.0, 0.0]), np.array([0.0, 10.0])
    # one job waits [0, 10): the window runs to the last start whatever ``until`` says
    assert queue_length_distribution(submit, start, until=5.0) == queue_length_distribution(submit, start)
    assert queue_length_distribution(submit, start)["mean"] == 1.0


def test_an_empty_set_of_jobs_averages_to_nan_without_numpy_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = job_metrics(np.array([]), np.array([]))
    assert m["jobs"] == 0 and all(math.isnan(m[k]) for k in ("mean_wait_s", "mean_slowdown", "mean_bsld"))


def test_a_makespan_under_a_second_still_measures_utilization():
    schedule, resource_utilization = _gpu_run(0.0)
    by_resource = resource_utilization(schedule, 0.5)["by_resource"]
    assert by_resource == {"cores": pytest.approx(150.0), "gpus": pytest.approx(200.0)}


def test_queue_length_series_is_one_step_per_instant():
    from hpcgym.sim.metrics import queue_length_series

    submit = np.array([0.0, 0.0, 5.0, 7.0])
    start = np.array([0.0, 10.0, 10.0, np.nan])  # the last job never starts: left out
    times, lengths = queue_length_series(submit, start)
    assert times.tolist() == [0.0, 5.0, 10.0] and lengths.tolist() == [1.0, 2.0, 0.0]


@pytest.mark.parametrize("seed", range(5))
def test_job_metrics_are_numpys_mean_and_nanmean_bit_for_bit(seed):
    from hpcgym.sim.metrics import bounded_slowdown, job_metrics, slowdown

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    wait = rng.exponential(3000.0, n).round()
    runtime = np.where(rng.random(n) < 0.1, 0.0, rng.exponential(5000.0, n).round())  # some run 0 s
    got = job_metrics(wait, runtime)
    sld = slowdown(wait, runtime)
    assert got["mean_wait_s"] == float(np.mean(wait))
    assert got["mean_slowdown"] == float(np.nanmean(sld))
    assert got["mean_bsld"] == float(np.mean(bounded_slowdown(wait, runtime)))
    assert math.isnan(job_metrics(wait[:1], np.zeros(1))["mean_slowdown"])  # no finite slowdown


@given(
    keys=st.lists(st.integers(-(2**40), 2**40), max_size=200),
    span=st.sampled_from([3, 2**15, 2**16 - 1, 2**16, 2**40]),
)
@settings(max_examples=200, deadline=None)
def test_stable_int_order_is_numpys_stable_argsort(keys, span):
    """The radix path (keys spanning under 2**16) and the other give numpy's stable order."""
    from hpcgym.sim.metrics import stable_int_order

    a = np.array(keys, dtype=np.int64) % span - span // 2
    np.testing.assert_array_equal(stable_int_order(a), np.argsort(a, kind="stable"))
