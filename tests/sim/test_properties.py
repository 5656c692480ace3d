"""Properties every dispatcher's schedule has, on random workloads, checked independently.

The tests loop over :func:`hpcgym.baselines.policy_specs`, so a preset registered later
is covered without touching this file. Each preset runs with wall-time (W), real run
times (R) and its own predictor, with and without kill-at-estimate.
"""

from __future__ import annotations

import numpy as np
import pytest
from checks import check_schedule
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import (
    FCFS,
    ConstraintProgramming,
    EasyBackfilling,
    ListScheduler,
    PriorityRuleBased,
    QueueOrder,
    Replay,
    RLSchedulerOrder,
    make_policy,
    policy_specs,
    preset_predictor,
)
from hpcgym.common.extras import is_available
from hpcgym.predict import Oracle
from hpcgym.sim import DispatcherBase, Schedule, Simulator
from hpcgym.workloads import Workload

POLICIES = sorted(policy_specs())
PREDICTORS = ["walltime", "real", None]  # None: the preset's own
CP_PRESETS = [p for p in POLICIES if isinstance(make_policy(p), ConstraintProgramming)]
COMBINATIONS = [(p, q) for p in POLICIES if p not in CP_PRESETS for q in PREDICTORS]
# the CP dispatchers with a small deterministic limit: milliseconds a decision, exactly repeatable
CP_COMBINATIONS = [
    (f"{p}:delta=0.01,delta_max=0.08,dtime=0.5", q) for p in CP_PRESETS for q in ("walltime", "real")
]
needs_ortools = pytest.mark.skipif(
    not is_available("ortools"), reason="the cp extra (ortools) is not installed"
)


class Counting(DispatcherBase):
    """A dispatcher proxy that records every job it tells the engine to start."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.started: list[int] = []

    @property
    def every_event(self):
        return self.inner.every_event

    def reset(self, view):
        self.inner.reset(view)

    @property
    def needs_log(self):
        return self.inner.needs_log

    def see_log(self, workload):
        self.inner.see_log(workload)

    def wake_times(self):
        return self.inner.wake_times()

    def extras(self):
        return self.inner.extras()

    def __call__(self, view):
        jobs = self.inner(view)
        self.started.extend(int(j) for j in jobs)
        return jobs


def run(workload: Workload, policy: str, predictor: str | None, kill: bool) -> tuple[Schedule, Counting]:
    dispatcher = Counting(make_policy(policy))
    sim = Simulator(workload, predictor=preset_predictor(policy, predictor), kill_at_estimate=kill)
    return sim.run(dispatcher), dispatcher


def state_after(w: Workload, s: Schedule, t: float) -> tuple[np.ndarray, int]:
    """Jobs waiting and processors free once everything at instant ``t`` is done."""
    running = (s.start <= t) & (t < s.end)
    waiting = (w.submit <= t) & (t < s.start)
    return np.flatnonzero(waiting), int(w.procs - w.procs_req[running].sum())


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=examples(40))
@given(data=st.data(), kill=st.booleans())
def test_schedule_is_feasible_and_complete(workload_strategy, policy, predictor, data, kill):
    w = data.draw(workload_strategy())
    s, counting = run(w, policy, predictor, kill)
    check_schedule(w, s, kill)
    # every job was started exactly once
    assert sorted(counting.started) == list(range(len(w)))


@needs_ortools
@pytest.mark.parametrize(("policy", "predictor"), CP_COMBINATIONS)
@settings(max_examples=examples(8), deadline=None)
@given(data=st.data(), kill=st.booleans())
def test_cp_schedule_is_feasible_and_complete(workload_strategy, policy, predictor, data, kill):
    """No over-allocation, every job once, and no fallback needed on small machines."""
    w = data.draw(workload_strategy())
    s, counting = run(w, policy, predictor, kill)
    check_schedule(w, s, kill)
    assert sorted(counting.started) == list(range(len(w)))
    cp = s.extras["cp"]
    assert cp["decisions"] > 0 and sum(cp["status"].values()) >= cp["decisions"] - cp["infeasible"]


@needs_ortools
@pytest.mark.parametrize(("policy", "predictor"), CP_COMBINATIONS[::2])
@settings(max_examples=examples(4), deadline=None)
@given(data=st.data())
def test_cp_same_input_gives_the_same_schedule(workload_strategy, policy, predictor, data):
    w = data.draw(workload_strategy())
    first, _ = run(w, policy, predictor, False)
    second, _ = run(w, policy, predictor, False)
    np.testing.assert_array_equal(first.start, second.start)
    assert first.extras["cp"]["status"] == second.extras["cp"]["status"]


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=examples(15))
@given(data=st.data())
def test_same_input_gives_the_same_schedule(workload_strategy, policy, predictor, data):
    w = data.draw(workload_strategy())
    first, _ = run(w, policy, predictor, False)
    second, _ = run(w, policy, predictor, False)  # a fresh simulator, predictor and dispatcher
    np.testing.assert_array_equal(first.start, second.start)
    np.testing.assert_array_equal(first.end, second.end)
    assert first.decisions == second.decisions
    # the same simulator run again starts from scratch
    sim = Simulator(w, predictor=preset_predictor(policy, predictor))
    again = [sim.run(make_policy(policy)) for _ in range(2)]
    np.testing.assert_array_equal(again[0].start, first.start)
    np.testing.assert_array_equal(again[1].start, first.start)


def _instants(w: Workload, s: Schedule) -> np.ndarray:
    return np.unique(np.concatenate([w.submit, s.start, s.end]))


class Recording:
    """A dispatcher proxy that keeps what it saw and decided at every call."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[dict[str, object]] = []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, view):
        seen = {
            "now": view.now,
            "free": view.free_procs,
            "queue": view.queue.copy(),
            "running": view.running.copy(),
            "prediction": view.prediction.copy(),
            "start": view.start.copy(),
        }
        head = getattr(self.inner, "head", None)  # an RLSchedulerOrder's committed job
        jobs = self.inner(view)
        if head is not None:
            seen["head_before"], seen["head_after"] = head, self.inner.head
        order = getattr(self.inner, "last_order", None)  # a QueueOrder's order of this call
        if order is not None:
            seen["order"] = [int(j) for j in order]
        self.calls.append({**seen, "started": [int(j) for j in jobs]})
        return jobs


def reservation_order(call: dict, shortest: bool) -> list[int]:
    """The waiting jobs in the order they claim the reservation: arrival, or shortest predicted
    first (ties in arrival order)."""
    queue = [int(j) for j in call["queue"]]
    if not shortest:
        return queue
    pred = call["prediction"]
    return sorted(queue, key=lambda j: (pred[j], queue.index(j)))


def fit_time(now: float, free: int, jobs: list[int], end: dict[int, float], procs, need: int) -> float:
    """The earliest time >= now at which ``need`` processors are predicted free, when ``jobs``
    hold their processors until ``end`` (an end already passed counts as now)."""
    for t in sorted({now, *(max(end[j], now) for j in jobs)}):
        if free + sum(int(procs[j]) for j in jobs if max(end[j], now) <= t) >= need:
            return t
    raise AssertionError("the job never fits")  # pragma: no cover - it fits the empty machine


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=examples(25))
@given(data=st.data(), kill=st.booleans())
def test_policy_specific_invariants(workload_strategy, policy, predictor, data, kill):
    """FCFS keeps arrival order; list schedulers and PRB leave nothing that fits waiting; FCFS and
    EASY (arrival reservation order) never leave the oldest waiting job able to start; SJF
    (reservation for the shortest) never leaves the shortest predicted waiting job able to
    start."""
    dispatcher = make_policy(policy)
    fcfs = isinstance(dispatcher, FCFS)
    # replay: the random workloads' waits are unknown (-1), so every job is due at its
    # submission and every due job that fits starts
    greedy = isinstance(dispatcher, ListScheduler | PriorityRuleBased | Replay)
    easy = isinstance(dispatcher, EasyBackfilling)
    head_first = fcfs or (easy and not dispatcher.reserve_shortest)
    shortest_first = easy and dispatcher.reserve_shortest
    ordered = isinstance(dispatcher, QueueOrder)
    committed = isinstance(dispatcher, RLSchedulerOrder)
    assert fcfs or greedy or head_first or shortest_first or ordered or committed, (
        f"no invariant checks preset {policy!r}"
    )
    w = data.draw(workload_strategy())
    recording = Recording(dispatcher)
    sim = Simulator(w, predictor=preset_predictor(policy, predictor), kill_at_estimate=kill)
    s = sim.run(recording)
    check_schedule(w, s, kill)
    if fcfs:
        assert (np.diff(s.start) >= 0).all(), "FCFS started a job before an older one"
    for t in _instants(w, s):
        waiting, free = state_after(w, s, t)
        if not len(waiting):
            continue
        if greedy:
            assert (w.procs_req[waiting] > free).all(), f"t={t:g}: a waiting job fits {free} free procs"
        if head_first:
            assert w.procs_req[waiting[0]] > free, f"t={t:g}: the oldest waiting job fits but waits"
    if ordered:  # by the dispatcher's own order of the moment
        assert recording.calls
        every_fit = dispatcher.score == "random" and not dispatcher.backfill
        for call in recording.calls:
            order, started = call["order"], call["started"]
            assert sorted(order) == sorted(int(j) for j in call["queue"])
            left = call["free"]
            prefix: list[int] = []
            for j in order:  # the longest prefix that fits (random-fit: every job that fits)
                if w.procs_req[j] <= left:
                    prefix.append(j)
                    left -= int(w.procs_req[j])
                elif not every_fit:
                    break
            if dispatcher.backfill:
                assert started[: len(prefix)] == prefix, f"t={call['now']:g}: {started} vs {prefix}"
            else:
                assert started == prefix, f"t={call['now']:g}: started {started}, expected {prefix}"
    if committed:  # RLScheduler's rules: a chosen job is never overtaken, only backfilled around
        assert recording.calls
        for call in recording.calls:
            h, started = call["head_before"], call["started"]
            if h >= 0 and h in started:
                assert started[0] == h, f"t={call['now']:g}: {started} started before the chosen job {h}"
            elif h >= 0:
                assert call["head_after"] == h, f"t={call['now']:g}: the chosen job {h} was replaced"
                assert dispatcher.backfill or not started, f"t={call['now']:g}: {started} overtook {h}"
    if shortest_first:  # by the predictions of the moment, which only the dispatcher saw
        assert recording.calls
        for call in recording.calls:
            left = [j for j in reservation_order(call, True) if j not in call["started"]]
            free = call["free"] - sum(int(w.procs_req[j]) for j in call["started"])
            if left:
                t = call["now"]
                assert w.procs_req[left[0]] > free, f"t={t:g}: the shortest waiting job fits but waits"


EASY_COMBINATIONS = [
    (p, q)
    for p, q in COMBINATIONS
    if isinstance(d := make_policy(p), EasyBackfilling) or (isinstance(d, QueueOrder) and d.backfill)
]


@pytest.mark.parametrize(("policy", "predictor"), EASY_COMBINATIONS)
@settings(max_examples=examples(25))
@given(data=st.data(), kill=st.booleans())
def test_backfilling_never_delays_the_reserved_job(workload_strategy, policy, predictor, data, kill):
    """EASY's guarantee, for every reservation order (arrival for EASY, shortest first for
    SJF, the score order of a queue-order heuristic with backfilling): at each decision, the
    jobs started in reservation order are exactly those that fit in turn, and the jobs
    backfilled around the first one left waiting (the reserved job) do not move the earliest
    time it is predicted to fit."""
    dispatcher = make_policy(policy)
    recording = Recording(dispatcher)
    w = data.draw(workload_strategy())
    sim = Simulator(w, predictor=preset_predictor(policy, predictor), kill_at_estimate=kill)
    check_schedule(w, sim.run(recording), kill)
    procs = w.procs_req
    ordered = isinstance(dispatcher, QueueOrder)  # EASY over the dispatcher's own order
    factor = 1.0 if ordered else dispatcher.doubling
    for call in recording.calls:
        now, free, started = call["now"], call["free"], call["started"]
        pred, start = call["prediction"], call["start"]
        order = call["order"] if ordered else reservation_order(call, dispatcher.reserve_shortest)
        prefix: list[int] = []
        for j in order:  # the jobs that fit in reservation order start first
            if procs[j] > free - sum(int(procs[i]) for i in prefix):
                break
            prefix.append(j)
        assert sorted(started[: len(prefix)]) == sorted(prefix), f"t={now:g}: {started} vs {prefix}"
        if len(prefix) == len(order):
            continue
        head = order[len(prefix)]
        assert head not in started
        end = {int(j): start[j] + factor * pred[j] for j in call["running"]}
        end.update({j: now + factor * pred[j] for j in started})
        running = [int(j) for j in call["running"]]
        free_prefix = free - sum(int(procs[j]) for j in prefix)
        free_all = free - sum(int(procs[j]) for j in started)
        before = fit_time(now, free_prefix, running + prefix, end, procs, int(procs[head]))
        after = fit_time(now, free_all, running + started, end, procs, int(procs[head]))
        assert after == before, f"t={now:g}: backfilling {started[len(prefix) :]} delayed job {head}"


@pytest.mark.parametrize("extra", ["classic", "all"])
@pytest.mark.parametrize("sjbf", [False, True], ids=["easy", "easy-sjbf"])
@settings(max_examples=examples(100))
@given(data=st.data(), kill=st.booleans())
def test_easy_with_real_runtimes_keeps_every_reservation(workload_strategy, sjbf, extra, data, kill):
    w = data.draw(workload_strategy())
    easy = EasyBackfilling(sjbf=sjbf, extra=extra, record_reservations=True)
    s = Simulator(w, predictor=Oracle(), kill_at_estimate=kill).run(easy)
    check_schedule(w, s, kill)
    reserved = s.extras["first_reservation"]
    has = ~np.isnan(reserved)
    late = has & (s.start > reserved)
    assert not late.any(), f"jobs {np.flatnonzero(late)} started after their reservation"
    # a job gets a reservation only while it waits: never before it arrives
    assert (reserved[has] >= w.submit[has]).all()


def test_reservation_property_is_not_vacuous(make_workload):
    # jobs 1 and 2 wait behind job 0; both get reservations and keep them exactly
    w = make_workload([(0, 10, 3, 10), (1, 5, 3, 5), (1, 5, 3, 5), (2, 1, 1, 1)], 4)
    easy = EasyBackfilling(record_reservations=True)
    s = Simulator(w, predictor=Oracle()).run(easy)
    np.testing.assert_array_equal(s.extras["first_reservation"][:3], [np.nan, 10, 15])
    np.testing.assert_array_equal(s.start, [0, 10, 15, 2])


def test_sjf_invariants_are_not_vacuous(make_workload):
    # 4 processors; job 0 (3 procs, 10 s) runs. At t=1 wait: job 1 (4 procs, estimate 50), job 2
    # (2 procs, estimate 20) and job 3 (1 proc, estimate 30). SJF reserves for job 2, the
    # shortest, at t=10 (when job 0 ends), with 2 extra processors. Job 3 fits the free processor
    # but ends after t=10: it may start only on an extra processor, and does, which leaves job 2's
    # reservation where it was. Job 1 starts when jobs 2 and 3 have ended.
    w = make_workload([(0, 10, 3, 10), (1, 50, 4, 50), (1, 20, 2, 20), (1, 30, 1, 30)], 4)
    recording = Recording(make_policy("sjf"))
    s = Simulator(w, predictor=preset_predictor("sjf")).run(recording)
    np.testing.assert_array_equal(s.start, [0, 31, 10, 1])
    call = next(c for c in recording.calls if c["now"] == 1)
    assert reservation_order(call, True) == [2, 3, 1]  # shortest predicted first
    assert reservation_order(call, False) == [1, 2, 3]
    assert call["started"] == [3]
    procs = w.procs_req
    end = {0: 10.0, 3: 31.0}
    assert fit_time(1.0, 0, [0, 3], end, procs, 2) == fit_time(1.0, 1, [0], end, procs, 2) == 10.0
    # had the reserved job needed all 4 processors (no extra ones), starting job 3 would have
    # delayed it from t=10 to t=31: the check can fail
    assert fit_time(1.0, 0, [0, 3], end, procs, 4) == 31.0
    assert fit_time(1.0, 1, [0], end, procs, 4) == 10.0
