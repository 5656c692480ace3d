"""Properties every dispatcher's schedule has, on random workloads, checked independently.

The tests loop over :func:`hpcgym.baselines.policy_specs`, so a preset registered later
is covered without touching this file. Each preset runs with wall-time (W), real run
times (R) and its own predictor, with and without kill-at-estimate.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import FCFS, EasyBackfilling, ListScheduler, make_policy, policy_specs, preset_predictor
from hpcgym.predictors import Oracle
from hpcgym.sim import DispatcherBase, Schedule, Simulator
from hpcgym.workload import Workload

POLICIES = sorted(policy_specs())
PREDICTORS = ["walltime", "real", None]  # None: the preset's own
COMBINATIONS = [(p, q) for p in POLICIES for q in PREDICTORS]


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


def check_schedule(w: Workload, s: Schedule, kill: bool) -> None:
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


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=40)
@given(data=st.data(), kill=st.booleans())
def test_schedule_is_feasible_and_complete(workload_strategy, policy, predictor, data, kill):
    w = data.draw(workload_strategy())
    s, counting = run(w, policy, predictor, kill)
    check_schedule(w, s, kill)
    # every job was started exactly once
    assert sorted(counting.started) == list(range(len(w)))


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=15)
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


@pytest.mark.parametrize(("policy", "predictor"), COMBINATIONS)
@settings(max_examples=25)
@given(data=st.data(), kill=st.booleans())
def test_policy_specific_invariants(workload_strategy, policy, predictor, data, kill):
    """FCFS keeps arrival order; list schedulers leave nothing that fits waiting; FCFS and
    EASY (arrival reservation order) never leave the oldest waiting job able to start."""
    dispatcher = make_policy(policy)
    fcfs = isinstance(dispatcher, FCFS)
    greedy = isinstance(dispatcher, ListScheduler)
    head_first = fcfs or (isinstance(dispatcher, EasyBackfilling) and not dispatcher.reserve_shortest)
    if not (fcfs or greedy or head_first):
        return  # nothing specific to check for this preset
    w = data.draw(workload_strategy())
    s, _ = run(w, policy, predictor, kill)
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


@pytest.mark.parametrize("extra", ["classic", "all"])
@pytest.mark.parametrize("sjbf", [False, True], ids=["easy", "easy-sjbf"])
@settings(max_examples=100)
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
