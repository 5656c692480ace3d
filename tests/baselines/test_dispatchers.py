"""Hand-computed schedules of FCFS, SJF/LJF (list scheduling) and EASY backfilling.

Every expected start time below was worked out by hand from the rules in
``hpcgym.baselines``; the comments give the reasoning. Jobs are
``(submit, runtime, procs, estimate)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import EasyBackfilling, make_policy
from hpcgym.predict import make_predictor
from hpcgym.sim import Schedule, Simulator


def simulate(workload, policy="easy", predictor="walltime", **kwargs) -> Schedule:
    dispatcher = make_policy(policy) if isinstance(policy, str) else policy
    sim = Simulator(workload, predictor=make_predictor(predictor), **kwargs)
    return sim.run(dispatcher)


# --------------------------------------------------------------------- FCFS vs EASY
# machine 4: job 0 holds 2 procs until 10; job 1 needs 3 and must wait for it;
# job 2 (1 proc, 2 s) fits at t=1.
SMALL = [(0, 10, 2, 10), (0, 5, 3, 5), (1, 2, 1, 2)]


def test_fcfs_never_lets_a_later_job_overtake(make_workload):
    s = simulate(make_workload(SMALL, 4), "fcfs")
    # job 2 fits at t=1 but FCFS keeps it behind job 1; both start when job 0 ends
    np.testing.assert_array_equal(s.start, [0, 10, 10])
    np.testing.assert_array_equal(s.end, [10, 15, 12])


def test_easy_backfills_the_small_job(make_workload):
    s = simulate(make_workload(SMALL, 4), "easy")
    # job 1's reservation is t=10; job 2 ends at 1 + 2 = 3 <= 10, so it starts at once
    np.testing.assert_array_equal(s.start, [0, 10, 1])


# ------------------------------------------------------- SJF / LJF list scheduling
# machine 4, job 0 fills it until 10; at t=10 four jobs wait:
#   job 1 (est 8, 2 procs), job 2 (est 3, 2), job 3 (est 5, 4), job 4 (est 1, 1)
QUEUE_AT_10 = [(0, 10, 4, 10), (1, 8, 2, 8), (2, 3, 2, 3), (3, 5, 4, 5), (4, 1, 1, 1)]


def test_sjf_list_walks_the_whole_sorted_list(make_workload):
    s = simulate(make_workload(QUEUE_AT_10, 4), "sjf-list")
    # t=10 order 4,2,3,1: start 4 (3 free) and 2 (1 free); 3 and 1 do not fit.
    # t=11 job 4 ends, 2 free: 3 (4 procs) no, 1 (2 procs) yes.
    # t=13 job 2 ends, 2 free: 3 still does not fit. t=19 job 1 ends: 3 starts.
    np.testing.assert_array_equal(s.start, [0, 11, 10, 19, 10])


def test_ljf_list_starts_the_longest_first(make_workload):
    s = simulate(make_workload(QUEUE_AT_10, 4), "ljf-list")
    # t=10 order 1,3,2,4: start 1 (2 free), 3 no, 2 (0 free).
    # t=13 job 2 ends, 2 free: 3 no, 4 yes. t=14 job 4 ends. t=18 job 1 ends, 4 free: 3 starts.
    np.testing.assert_array_equal(s.start, [0, 10, 10, 18, 13])


def test_fcfs_on_the_same_queue(make_workload):
    s = simulate(make_workload(QUEUE_AT_10, 4), "fcfs")
    # t=10: 1 and 2 start; t=13: 3 (4 procs) blocks 4; t=18: 3 starts; t=23: 4 starts
    np.testing.assert_array_equal(s.start, [0, 10, 10, 18, 23])


def test_easy_on_the_same_queue(make_workload):
    s = simulate(make_workload(QUEUE_AT_10, 4), "easy")
    # t=10: 1 and 2 start; 3's reservation is t=18 (job 1's end), extra 0.
    # t=13: job 4 (1 s) ends at 14 <= 18: backfilled. t=18: 3 starts on time.
    np.testing.assert_array_equal(s.start, [0, 10, 10, 18, 13])


def test_list_schedulers_break_ties_by_arrival(make_workload):
    # machine 2, job 0 fills it; jobs 1..3 have the same estimate and need 2 procs each
    jobs = [(0, 5, 2, 5), (1, 4, 2, 4), (2, 4, 2, 4), (3, 4, 2, 4)]
    for policy in ("sjf-list", "ljf-list"):
        s = simulate(make_workload(jobs, 2), policy)
        np.testing.assert_array_equal(s.start, [0, 5, 9, 13], err_msg=policy)


def test_list_schedulers_sort_by_the_prediction_not_the_estimate(make_workload):
    # machine 1; job 0 runs until 10; job 1 estimates 5 but runs 9, job 2 estimates 9, runs 1
    jobs = [(0, 10, 1, 10), (1, 9, 1, 5), (2, 1, 1, 9)]
    w = make_workload(jobs, 1)
    np.testing.assert_array_equal(simulate(w, "sjf-list", "walltime").start, [0, 10, 19])
    np.testing.assert_array_equal(simulate(w, "sjf-list", "real").start, [0, 11, 10])


# ------------------------------------------------------- 004 Fig. 1: backfill window
def fig1_jobs(length: float) -> list[tuple[float, float, int, float]]:
    """Machine 10. Jobs 1 and 2 run; job 3 needs 8 procs, free at t=3 when job 1 ends.

    Job 4 (2 procs) arrives at t=1 into a hole of length 2 before job 3's reservation.
    """
    return [
        (0, 3, 6, 3),  # job 1: 6 procs until 3
        (0, 10, 2, 10),  # job 2: 2 procs until 10
        (1, 5, 8, 5),  # job 3: 8 procs; reservation t=3 (2 free + 6), extra 0
        (1, length, 2, length),  # job 4: fits the 2 free procs now
    ]


@pytest.mark.parametrize("length", [1, 2])
def test_fig1_job4_backfills_when_it_ends_by_the_reservation(make_workload, length):
    s = simulate(make_workload(fig1_jobs(length), 10), "easy")
    assert s.start[3] == 1  # 1 + length <= 3
    assert s.start[2] == 3  # the reservation holds


@pytest.mark.parametrize("length", [2.5, 3])
def test_fig1_job4_waits_when_it_would_delay_job3(make_workload, length):
    s = simulate(make_workload(fig1_jobs(length), 10), "easy")
    assert s.start[2] == 3
    # not backfilled (1 + length > 3, no extra procs); starts when job 3 ends at 8
    assert s.start[3] == 8


# ------------------------------------------------------ the extra-processor case
def test_long_job_backfills_on_extra_processors(make_workload):
    jobs = [
        (0, 5, 6, 5),  # 0: 6 procs until 5
        (0, 20, 2, 20),  # 1: 2 procs until 20
        (1, 5, 7, 5),  # 2: head, needs 7 of 4 free; reservation t=5 with 4 + 6 = 10 free: extra 3
        (1, 100, 2, 100),  # 3: long, 2 procs <= extra 3: backfilled, extra -> 1
        (1, 100, 2, 100),  # 4: long, fits the 2 free procs but 2 > extra 1: waits
        (1, 100, 1, 100),  # 5: long, 1 proc <= extra 1: backfilled
    ]
    s = simulate(make_workload(jobs, 12), "easy")
    # t=5: job 0 ends, 7 free: job 2 starts on its reservation; t=10 job 2 ends: job 4
    np.testing.assert_array_equal(s.start, [0, 0, 5, 1, 10, 1])


TIED_ENDS = [(0, 100, 4, 100), (0, 100, 4, 100), (1, 10, 6, 10), (1, 1000, 2, 1000)]


def test_extra_all_includes_every_job_ending_at_the_reservation(make_workload):
    # machine 10: jobs 0 and 1 (4 procs each) both end at 100. Job 2 needs 6: its
    # reservation is 100, when 2 + 4 + 4 = 10 procs are free, so 4 are extra and
    # job 3 (2 procs, long) may start now.
    s = simulate(make_workload(TIED_ENDS, 10), EasyBackfilling(extra="all"))
    np.testing.assert_array_equal(s.start, [0, 0, 100, 1])


def test_classic_extra_counts_only_the_jobs_the_head_needs(make_workload):
    # the default (Lifka's count): 2 free + job 0's 4 reach the head's 6, so the
    # reservation is 100 with 0 extra; the long job 3 waits until 100.
    s = simulate(make_workload(TIED_ENDS, 10), "easy")
    np.testing.assert_array_equal(s.start, [0, 0, 100, 100])


# ------------------------------------------- EASY with predictions already outlived
def outlived_jobs(estimate0: float) -> list[tuple[float, float, int, float]]:
    return [
        (0, 100, 8, estimate0),  # 0: runs 100 s; with estimate 10 it outlives its estimate at 10
        (20, 10, 9, 10),  # 1: head, needs 9 of 2 free
        (20, 1, 2, 1),  # 2: short, 2 procs
        (20, 50, 1, 50),  # 3: long, 1 proc
    ]


def test_easy_outlived_prediction_reserves_now_and_backfills_only_extra(make_workload):
    s = simulate(make_workload(outlived_jobs(10), 10), "easy")
    # at t=20 job 0 "should" have ended at 10: the reservation for job 1 is now (20),
    # with 2 + 8 = 10 procs, extra 1. Job 2 is short but 20 + 1 > 20 and 2 > extra:
    # it waits. Job 3 takes the extra processor. At 70 (job 3 ends) the same holds.
    # t=100: job 0 ends, job 1 starts; job 2 follows at 110.
    np.testing.assert_array_equal(s.start, [0, 100, 110, 20])


def test_easy_without_outlived_prediction_backfills_both(make_workload):
    s = simulate(make_workload(outlived_jobs(200), 10), "easy")
    # reservation for job 1 is t=200: job 2 (ends 21) backfills at once and fills the
    # machine; job 3 backfills at 21 (ends 71 <= 200)
    np.testing.assert_array_equal(s.start, [0, 100, 20, 21])


TWO_OUTLIVED = [(0, 100, 6, 10), (0, 100, 3, 15), (20, 10, 7, 10), (20, 50, 1, 50)]


def test_extra_all_counts_every_outlived_prediction_as_free_now(make_workload):
    # jobs 0 and 1 outlive estimates 10 and 15; at t=20 both count as free now, so the
    # head (7 procs) is reserved at 20 with 1 + 6 + 3 = 10 free: extra 3.
    s = simulate(make_workload(TWO_OUTLIVED, 10), EasyBackfilling(extra="all"))
    np.testing.assert_array_equal(s.start, [0, 0, 100, 20])


def test_classic_extra_stops_at_the_outlived_jobs_the_head_needs(make_workload):
    # classic: 1 free + job 0's 6 (predicted end 10, outlived) reach the head's 7; the
    # reservation is now (20) with 0 extra, so the long job 3 cannot backfill.
    s = simulate(make_workload(TWO_OUTLIVED, 10), "easy")
    np.testing.assert_array_equal(s.start, [0, 0, 100, 100])


def test_easy_records_the_reservation_made_for_an_outlived_prediction(make_workload):
    easy = EasyBackfilling(record_reservations=True)
    s = simulate(make_workload(outlived_jobs(10), 10), easy)
    first = s.extras["first_reservation"]
    assert first[1] == 20  # 'now', not job 0's predicted end (10) in the past
    assert first[2] == 110  # head from t=100, when job 1 started; job 1 is predicted to end at 110
    assert np.isnan(first[0]) and np.isnan(first[3])  # never waited behind anything


# ------------------------------------------------------- same-instant semantics
class Recorder:
    """Wraps a dispatcher and records what it saw at every decision."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.seen = []

    def __call__(self, view):
        jobs = self.inner(view)
        self.seen.append(
            (view.now, tuple(view.queue.tolist()), view.free_procs, tuple(view.running.tolist()))
        )
        return jobs


def test_terminations_then_arrivals_then_one_decision(make_workload):
    # machine 4: job 0 ends at 10 exactly when jobs 1 and 2 (4 procs each) arrive
    w = make_workload([(0, 10, 4, 10), (10, 5, 4, 5), (10, 5, 4, 5)], 4)
    rec = Recorder(make_policy("fcfs"))
    s = Simulator(w).run(rec)
    np.testing.assert_array_equal(s.start, [0, 10, 15])
    # one decision at t=10, seeing both arrivals and job 0's processors already free
    assert rec.seen == [(0, (0,), 4, ()), (10, (1, 2), 4, ()), (15, (2,), 4, ())]
    assert s.decisions == 3


def test_one_decision_sees_every_arrival_of_the_instant(make_workload):
    # machine 4, full until 10; at 10 a long and a short job arrive together. If each
    # arrival got its own decision, the long one (first in the file) would start first.
    w = make_workload([(0, 10, 4, 10), (10, 8, 4, 8), (10, 2, 4, 2)], 4)
    np.testing.assert_array_equal(simulate(w, "sjf-list").start, [0, 12, 10])
    np.testing.assert_array_equal(simulate(w, "ljf-list").start, [0, 10, 18])


def test_zero_runtime_job_frees_its_processors_at_the_same_instant(make_workload):
    # machine 2: job 0 (0 s, 2 procs) and job 1 (2 procs) arrive at 5; job 1 starts at 5 too
    w = make_workload([(5, 0, 2, 1), (5, 3, 2, 3)], 2)
    s = simulate(w, "fcfs")
    np.testing.assert_array_equal(s.start, [5, 5])
    np.testing.assert_array_equal(s.end, [5, 8])


# -------------------------------------------------------------- W vs R predictor
def test_easy_with_real_runtimes_plans_with_them(make_workload):
    jobs = [
        (0, 5, 8, 100),  # 0: estimate 100, really ends at 5
        (1, 10, 10, 10),  # 1: head, needs the whole machine
        (1, 10, 2, 10),  # 2: 2 procs for 10 s
    ]
    w = make_workload(jobs, 10)
    # W: job 1 reserved at 100, so job 2 (ends 11) backfills at 1; job 1 starts at 11
    np.testing.assert_array_equal(simulate(w, "easy", "walltime").start, [0, 11, 1])
    # R: job 1 reserved at 5; job 2 would end at 11 > 5 and there are no extra procs
    np.testing.assert_array_equal(simulate(w, "easy", "real").start, [0, 5, 15])
    np.testing.assert_array_equal(simulate(w, "easy", "W").start, simulate(w, "easy", "walltime").start)
    np.testing.assert_array_equal(simulate(w, "easy", "R").start, simulate(w, "easy", "real").start)


def test_dispatchers_see_no_real_runtime_under_walltime(make_workload):
    w = make_workload(SMALL, 4)
    seen = []

    def spy(view):
        seen.append((view.jobs.runtime.copy(), view.prediction.copy()))
        return make_policy("fcfs")(view)

    spy.name = "spy"
    Simulator(w, predictor=make_predictor("walltime")).run(spy)
    runtime, prediction = seen[0]
    assert np.isnan(runtime).all()
    np.testing.assert_array_equal(prediction, w.estimate)
    Simulator(w, predictor=make_predictor("real")).run(spy)
    np.testing.assert_array_equal(seen[-1][1], w.runtime)


# -------------------------------------------------------------- kill at estimate
def test_kill_at_estimate_ends_jobs_at_their_estimate(make_workload):
    jobs = [(0, 100, 4, 10), (0, 5, 4, 5)]  # job 0 would run 100 s but asked for 10
    w = make_workload(jobs, 4)
    kept = simulate(w, "fcfs")
    np.testing.assert_array_equal(kept.start, [0, 100])
    assert not kept.killed.any()
    killed = simulate(w, "fcfs", kill_at_estimate=True)
    np.testing.assert_array_equal(killed.start, [0, 10])
    np.testing.assert_array_equal(killed.end, [10, 15])
    np.testing.assert_array_equal(killed.killed, [True, False])
    np.testing.assert_array_equal(killed.runtime, [10, 5])


def test_kill_at_estimate_keeps_jobs_that_end_exactly_at_it(make_workload):
    s = simulate(make_workload([(0, 10, 1, 10)], 1), "easy", kill_at_estimate=True)
    assert not s.killed[0]
    assert s.end[0] == 10


def test_easy_decide_order_replays_a_decision_in_any_order_on_an_earlier_state():
    from hpcgym.workloads import load_default

    sim = Simulator(load_default().window(300, 2500))
    easy = make_policy("easy")
    easy.reset(sim.view)
    replays = 0
    while sim.advance():
        view = sim.view
        queue = np.array(view.queue)
        decision = easy(view)
        jobs, reservation = np.array(decision.jobs), easy.reservation.copy()
        # the queue in arrival order: EASY's own decision
        mem, prediction, start, now = view.kernel_inputs(live=True)
        frozen = [prediction.copy(), start.copy()]
        for a in frozen:
            a.flags.writeable = False
        state = (mem.copy(), *frozen, now)
        again = easy.decide_order(view, queue)
        np.testing.assert_array_equal(again.jobs, jobs)
        np.testing.assert_array_equal(easy.reservation, reservation)
        sim.start(np.array(again.jobs), np.array(again.nodes))
        if reservation[0] >= 0:
            # on the state copied before the starts, in the order (started jobs, head, the rest reversed)
            head = int(reservation[0])
            before = queue[: int(np.flatnonzero(queue == head)[0])]
            rest = queue[~np.isin(queue, [*before, head])][::-1]
            replay = easy.decide_order(view, np.concatenate([before, [head], rest]), state)
            assert list(replay.jobs[: len(before)]) == list(before)
            assert easy.reservation[0] == head and easy.reservation[1] == reservation[1]
            assert set(replay.jobs) <= set(queue) - {head}
            replays += 1
    assert replays > 10
