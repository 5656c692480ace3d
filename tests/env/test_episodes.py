"""Episodes shared by the env and the evaluators: splits, sampling, evaluation windows, warm start."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import episodes, evaluation_windows, sample_offset, split_range
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload

FRACTIONS = (0.7, 0.15, 0.15)


@pytest.mark.parametrize("n", [10, 999, 8943, 73_496])
def test_splits_tile_the_trace_in_order(n):
    parts = [split_range(n, s, FRACTIONS) for s in ("train", "validation", "test")]
    assert parts[0][0] == 0 and parts[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    assert split_range(n, "all", FRACTIONS) == (0, n)
    assert split_range(n, "test", FRACTIONS, job_range=(3, 7)) == (3, 7)


def test_split_errors_name_the_parameter():
    with pytest.raises(InvalidConfigError, match="split: must be one of"):
        split_range(100, "tset", FRACTIONS)
    with pytest.raises(InvalidConfigError, match="split_fractions: the 'validation' split"):
        split_range(100, "validation", (1.0, 0.0, 0.0))
    with pytest.raises(InvalidConfigError, match="job_range: stop 200"):
        split_range(100, "all", FRACTIONS, job_range=(0, 200))


@pytest.mark.parametrize("n", [1000, 8943, 10_007])
@pytest.mark.parametrize("window", [1, 7, 64, 256])
@pytest.mark.parametrize("count", [1, 2, 3, 8, 50, 10_000])
def test_test_windows_never_overlap_and_never_leave_their_split(n, window, count):
    lo, hi = split_range(n, "test", FRACTIONS)
    if window > hi - lo:
        with pytest.raises(InvalidConfigError, match="do not fit the job range"):
            evaluation_windows((lo, hi), window, count)
        return
    offsets = evaluation_windows((lo, hi), window, count)
    assert 1 <= len(offsets) <= count
    assert len(offsets) == min(count, (hi - lo) // window)
    assert offsets[0] == lo
    assert all(lo <= o and o + window <= hi for o in offsets)
    assert all(b - a >= window for a, b in itertools.pairwise(offsets)), offsets
    if len(offsets) > 1:
        assert offsets[-1] + window == hi  # spread over the whole split


def test_evaluation_windows_by_hand():
    assert evaluation_windows((0, 100), 30, 5) == [0, 35, 70]
    assert evaluation_windows((100, 200), 100, 5) == [100]
    assert evaluation_windows((10, 20), 1, 3) == [10, 14, 19]
    with pytest.raises(InvalidConfigError, match="count"):
        evaluation_windows((0, 100), 10, 0)
    with pytest.raises(InvalidConfigError, match="window_jobs: 101 jobs do not fit"):
        evaluation_windows((0, 100), 101, 1)


def test_sampled_windows_stay_inside_the_range_and_reach_both_ends():
    rng = np.random.default_rng(0)
    offsets = [sample_offset(rng, (50, 60), 5) for _ in range(500)]
    assert min(offsets) == 50 and max(offsets) == 55


def _workload() -> Workload:
    # four 10-processor jobs on a 10-processor machine: each waits for the previous one
    return Workload.from_columns([0, 1, 2, 3], [10] * 4, [10] * 4, [10] * 4, procs=10)


def test_warm_start_context_is_what_the_replay_had_when_the_window_arrived():
    w = _workload()
    warm = episodes.WarmStart(w, "fcfs")
    start, end = warm.replay()
    np.testing.assert_array_equal(start, [0, 10, 20, 30])
    np.testing.assert_array_equal(end, [10, 20, 30, 40])
    idx, running, starts = warm.jobs(2, 2)
    # at t=2 job 0 runs (0..10) and job 1 waits; both precede the window [2, 4)
    np.testing.assert_array_equal(idx, [0, 1, 2, 3])
    np.testing.assert_array_equal(running, [0])
    np.testing.assert_array_equal(starts, [0.0])
    idx, running, _ = warm.jobs(0, 2)
    np.testing.assert_array_equal(idx, [0, 1])
    assert len(running) == 0


def test_episode_workload_and_fcfs_fallback():
    w = _workload()
    assert episodes.episode_workload(w, np.arange(4)) is w
    part = episodes.episode_workload(w, np.array([1, 2]))
    np.testing.assert_array_equal(part.submit, [1, 2])
    sim = Simulator(part)
    assert sim.advance()
    assert episodes.fallback_job(sim.view) == 0
    sim.start((0,))
    assert episodes.fallback_job(sim.view) is None  # the machine is full
