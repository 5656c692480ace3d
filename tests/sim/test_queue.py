"""The engine's waiting queue: arrival order kept through starts from its front, middle and end.

A job started from the middle of the queue leaves a tombstone; ``compact`` removes them
before the queue is read, starting at the first one (``H_QFIRST``), which ``_dequeue``
keeps. Random starts and arrivals against a plain list of the waiting jobs.
"""

from __future__ import annotations

import numpy as np
from conftest import build_workload, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.sim import Simulator
from hpcgym.sim import _kernels as ek


def _check(sim: Simulator, waiting: list[int]) -> None:
    queue = sim.view.queue  # compacts when a job left from the middle
    assert queue.tolist() == waiting
    mem = sim._mem
    assert mem[ek.H_QTOMBS] == 0
    a = sim._a
    lo = int(mem[ek.H_QLO])
    for i, j in enumerate(waiting):
        assert a.queue_pos[j] == lo + i, "each waiting job knows its place in the queue"


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), n=st.integers(1, 40))
def test_the_queue_keeps_arrival_order_through_any_starts(data: st.DataObject, n: int) -> None:
    # every job fits the machine at once, all arrive at 0, in bursts
    w = build_workload([(0, 10, 1, 10)] * n, n)
    sim = Simulator(w)
    arrived = 0
    waiting: list[int] = []
    while arrived < n or waiting:
        if arrived < n and (not waiting or data.draw(st.booleans())):
            stop = data.draw(st.integers(arrived + 1, n))
            sim._arrive_until(stop)
            waiting += list(range(arrived, stop))
            arrived = stop
            _check(sim, waiting)
            continue
        # start a few waiting jobs, from anywhere in the queue, one decision or several
        chosen = data.draw(st.lists(st.sampled_from(waiting), min_size=1, max_size=len(waiting), unique=True))
        for batch in np.array_split(np.array(chosen), data.draw(st.integers(1, len(chosen)))):
            if len(batch):
                sim.start(batch.tolist())
                for j in batch.tolist():
                    waiting.remove(j)
                if data.draw(st.booleans()):  # read (and compact) between decisions, or not
                    _check(sim, waiting)
        _check(sim, waiting)
