"""An episode's engine built from the trace's aligned requests is the engine Simulator builds."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.common.errors import InvalidConfigError
from hpcgym.env._engine import EpisodeEngine, TraceRequests, trace_requests
from hpcgym.env.episodes import WarmStart, episode_workload, load_trace
from hpcgym.machine import Machine
from hpcgym.sim import Simulator

EURORA = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))
ARRAYS = ("_chunks", "_per_chunk", "_shape", "_shape_chunks", "_shape_v", "_mem")


def both(trace, machine: Machine, idx: np.ndarray) -> tuple[Simulator, Simulator]:
    w = episode_workload(trace, idx)
    return Simulator(w, machine), EpisodeEngine(w, idx, trace_requests(trace, machine), machine, None)


def assert_same(a: Simulator, b: Simulator) -> None:
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert "_from" not in vars(b)


@settings(max_examples=25)
@given(data=st.data())
@pytest.mark.parametrize(("trace", "machine"), [(None, None), (EURORA, "eurora"), (None, "exclusive")])
def test_windows_get_the_engine_simulator_builds(trace, machine, data) -> None:
    w = load_trace(trace, machine=None if machine in (None, "exclusive") else machine)
    m = w.machine if w.machine is not None else Machine.processors(w.procs)
    if machine == "exclusive":  # nodes of 8 processors, whole nodes each: requests are split
        m = Machine.processors(w.procs, node_size=8)
    n = data.draw(st.integers(1, 300))
    offset = data.draw(st.integers(0, len(w) - n))
    assert_same(*both(w, m, np.arange(offset, offset + n)))


def test_warm_start_windows_and_the_same_cache() -> None:
    w = load_trace(None)
    m = Machine.processors(w.procs)
    idx, _, _ = WarmStart(w, "easy", False).jobs(3000, 100)
    assert idx[-1] - idx[0] + 1 > len(idx) or len(idx) > 100  # context jobs, then the window
    assert_same(*both(w, m, idx))
    assert trace_requests(w, m) is trace_requests(w, Machine.processors(w.procs))
    assert isinstance(trace_requests(w, m), TraceRequests)


def test_a_window_the_machine_cannot_run_raises_the_engines_error() -> None:
    w = load_trace(None)
    small = Machine.processors(16)
    idx = np.arange(len(w))[:400]
    with pytest.raises(InvalidConfigError) as want:
        Simulator(episode_workload(w, idx), small)
    with pytest.raises(InvalidConfigError) as got:
        EpisodeEngine(episode_workload(w, idx), idx, trace_requests(w, small), small, None)
    assert str(got.value) == str(want.value)
