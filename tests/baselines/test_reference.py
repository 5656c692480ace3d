"""Differential tests: the engine against a deliberately naive reimplementation.

The reference below recomputes everything from scratch at every instant (no heaps, no
skipped decision points, no compiled kernels), straight from the textbook description
of FCFS and EASY backfilling (Lifka's EASY, classic extra-processor count, predictions =
user estimates, a prediction already outlived counting as ending now). On random
workloads the engine must produce exactly its schedule.

The workloads provoke the engine's corner cases: jobs of run time 0, jobs submitted at
the same instant, jobs ending at the same instant, and ends that coincide with arrivals.
A job of run time 0 ends at the instant it starts; its end is an event of that instant,
so the processors it took are offered again at once, in a further decision at the same
time (the engine's semantics: terminations, then arrivals, then one decision, for each
event; a start creates an event).
"""

from __future__ import annotations

import numpy as np
from conftest import LONG, build_workload, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import EasyBackfilling, make_policy
from hpcgym.sim import Simulator


def reference_schedule(jobs: list[tuple[float, float, int, float]], machine: int, policy: str) -> list[float]:
    """Start times under ``policy`` ('fcfs', 'easy' or 'easy-sjbf'), the slow and obvious way."""
    n = len(jobs)
    submit = [j[0] for j in jobs]
    runtime = [j[1] for j in jobs]
    size = [j[2] for j in jobs]
    estimate = [j[3] for j in jobs]
    start: list[float | None] = [None] * n
    started: list[int] = []  # in the order jobs started: ties in predicted ends keep it
    done: set[int] = set()
    t = min(submit)
    while True:
        done.update(j for j in started if start[j] + runtime[j] <= t)  # type: ignore[operator]
        running = [j for j in started if j not in done]
        queue = [j for j in range(n) if start[j] is None and submit[j] <= t]
        free = machine - sum(size[j] for j in running)
        chosen: list[int] = []
        # FCFS part: start jobs in arrival order while the first one fits
        while queue and size[queue[0]] <= free:
            j = queue.pop(0)
            chosen.append(j)
            free -= size[j]
        if queue and policy != "fcfs":
            head = queue[0]
            # reservation: walk the predicted ends (start + estimate, not before now)
            # until enough processors are free for the head job
            ends = sorted(
                (
                    ((start[j] if start[j] is not None else t) + estimate[j], size[j])
                    for j in running + chosen
                ),
                key=lambda e: e[0],
            )
            avail, shadow = free, t
            for end, s in ends:
                if avail >= size[head]:
                    break
                avail += s
                shadow = max(end, t)
            extra = avail - size[head]
            candidates = queue[1:]
            if policy == "easy-sjbf":
                candidates = sorted(candidates, key=lambda j: (estimate[j], j))
            for j in candidates:
                if size[j] > free:
                    continue
                if t + estimate[j] <= shadow:
                    chosen.append(j)
                    free -= size[j]
                elif size[j] <= extra:
                    chosen.append(j)
                    free -= size[j]
                    extra -= size[j]
        for j in chosen:
            start[j] = t
            started.append(j)
        future = [s for s in submit if s > t]
        # every job not yet ended ends at a future event; one of run time 0 just started ends now
        future += [start[j] + runtime[j] for j in started if j not in done]  # type: ignore[operator]
        if not future:
            break
        t = min(future)
    assert all(s is not None for s in start)
    return [float(s) for s in start]  # type: ignore[arg-type]


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[tuple[float, float, int, float]], int]:
    machine = draw(st.integers(2, 64 if LONG else 16))
    n = draw(st.integers(1, 250 if LONG else 40))
    # a coarse clock half of the time: submits and ends coincide
    tick = draw(st.sampled_from([1, 10]))
    gaps = draw(st.lists(st.integers(0, 30 // tick), min_size=n, max_size=n))
    submit = (np.cumsum(gaps) * tick).tolist()
    jobs = []
    for s in submit:
        top = 120 // tick
        runtime = max(draw(st.integers(-top // 4, top)), 0) * tick  # 0 for about one job in five
        # estimates both above and below the run time: outlived predictions happen
        low = max(runtime, 1)
        estimate = draw(st.integers(low, 4 * low) if draw(st.booleans()) else st.integers(1, low))
        jobs.append((float(s), float(runtime), draw(st.integers(1, machine)), float(estimate)))
    return jobs, machine


@settings(max_examples=examples(300))
@given(case=workloads())
def test_engine_matches_the_naive_reference(case: tuple[list[tuple[float, float, int, float]], int]) -> None:
    jobs, machine = case
    w = build_workload(jobs, machine)
    for policy in ("fcfs", "easy", "easy-sjbf"):
        dispatcher = EasyBackfilling(sjbf=True) if policy == "easy-sjbf" else make_policy(policy)
        schedule = Simulator(w).run(dispatcher)
        np.testing.assert_array_equal(
            schedule.start, reference_schedule(jobs, machine, policy), err_msg=f"policy {policy}"
        )


def test_the_reference_covers_zero_run_times_and_same_instant_events() -> None:
    # 2 processors. t=0: jobs 0 (run time 0, 2 procs) and 1 (2 procs, 5 s) arrive together; job 0
    # starts and ends at once, so job 1 starts at t=0 in a second decision of that instant. Job 2
    # arrives at t=5, the instant job 1 ends, and starts then; job 3 (run time 0) waits behind it.
    jobs = [(0.0, 0.0, 2, 1.0), (0.0, 5.0, 2, 5.0), (5.0, 3.0, 2, 3.0), (5.0, 0.0, 1, 1.0)]
    for policy in ("fcfs", "easy", "easy-sjbf"):
        assert reference_schedule(jobs, 2, policy) == [0.0, 0.0, 5.0, 8.0]
    dispatcher = make_policy("easy")
    np.testing.assert_array_equal(Simulator(build_workload(jobs, 2)).run(dispatcher).start, [0, 0, 5, 8])
