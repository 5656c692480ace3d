"""The ``replay`` dispatcher: the logged schedule, reproduced where the machine allows."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import Replay, make_policy
from hpcgym.cli import main
from hpcgym.sim import Simulator
from hpcgym.workloads import load_default, log_overcommit, logged_start, read_swf

# id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue part prec think
HAND = """; MaxProcs: 8
1 0 0 100 4 -1 -1 4 200 -1 1 1 1 1 1 1 -1 -1
2 10 0 50 4 -1 -1 4 100 -1 1 2 1 1 1 1 -1 -1
3 20 80 30 8 -1 -1 8 100 -1 1 1 1 1 1 1 -1 -1
4 25 5 10 2 -1 -1 2 100 -1 1 3 1 1 1 1 -1 -1
5 30 -1 10 2 -1 -1 2 100 -1 1 3 1 1 1 1 -1 -1
"""
# job 3 (8 procs) is logged at 100, when job 1 ends and job 2 has ended at 60: it fits.
# Job 4 is logged at 30 with 2 procs: jobs 1 and 2 use 8 -> the log overcommits.
# Job 5's wait is unknown: due at its submission (30), it waits for processors too.


def test_hand_made_log(tmp_path, write_swf_text):
    w = read_swf(write_swf_text(tmp_path / "hand.swf", HAND))
    s = Simulator(w).run(make_policy("replay"))
    r = s.extras["replay"]
    # jobs 1, 2 and 3 as logged; 4 and 5 wait for job 2 to end at 60
    assert s.start.tolist() == [0.0, 10.0, 100.0, 60.0, 60.0]
    assert r["jobs"] == 5
    assert r["exact_jobs"] == 3
    assert r["delayed_jobs"] == 2
    assert r["total_delay_s"] == (60 - 30) + (60 - 30)
    assert r["max_delay_s"] == 30
    assert r["unknown_wait_jobs"] == 1
    # the log: at 30 job 4 joins jobs 1 and 2 (10 of 8 procs) until 40
    assert r["log_overcommit_instants"] == 1
    assert r["log_overcommit_seconds"] == 10


def test_log_overcommit_counts_instants_that_start_jobs():
    start = np.array([0.0, 5.0, 5.0, 20.0])
    runtime = np.array([10.0, 10.0, 10.0, 1.0])
    size = np.array([2.0, 2.0, 1.0, 4.0])
    # after 5: 5 of 4 until 10, then 3; at 20 a job of exactly 4: not over
    assert log_overcommit(start, runtime, size, 4.0) == (1, 5.0)
    assert log_overcommit(start[:0], runtime[:0], size[:0], 4.0) == (0, 0.0)


def test_unknown_wait_is_due_at_submission():
    w = load_default().window(50)
    wait = w.log_wait.copy()
    wait[::3] = -1
    w = dataclasses.replace(w, log_wait=wait)
    due, unknown = logged_start(w)
    assert unknown.sum() == len(wait[::3])
    assert np.array_equal(due[unknown], w.submit[unknown])
    s = Simulator(w).run(Replay())
    assert s.extras["replay"]["unknown_wait_jobs"] == int(unknown.sum())
    assert (s.start >= due).all()


@given(data=st.data())
@settings(max_examples=examples(40))
def test_a_feasible_log_is_replayed_exactly(data, workload_strategy):
    """The schedule of any policy, written as the log's waits, is reproduced job for job."""
    w = data.draw(workload_strategy())
    policy = data.draw(st.sampled_from(["fcfs", "easy", "sjf-list", "ljf-list"]))
    logged = Simulator(w).run(make_policy(policy))
    w = dataclasses.replace(w, log_wait=logged.start - w.submit)
    s = Simulator(w).run(make_policy("replay"))
    assert np.array_equal(s.start, logged.start)
    r = s.extras["replay"]
    assert r["exact_jobs"] == len(w) and r["delayed_jobs"] == 0
    assert r["log_overcommit_instants"] == 0 and r["log_overcommit_seconds"] == 0


@given(data=st.data())
@settings(max_examples=examples(40))
def test_never_before_the_log_and_counts_add_up(data, workload_strategy):
    """Any log, feasible or not: no job starts before its logged start; every job is counted once."""
    w = data.draw(workload_strategy())
    waits = data.draw(st.lists(st.integers(-1, 40), min_size=len(w), max_size=len(w)))
    w = dataclasses.replace(w, log_wait=np.array(waits, dtype=np.float64))
    due, unknown = logged_start(w)
    s = Simulator(w).run(Replay())  # the engine refuses any over-allocation
    r = s.extras["replay"]
    assert (s.start >= due).all()
    assert r["exact_jobs"] + r["delayed_jobs"] == len(w)
    assert r["exact_jobs"] == int((s.start == due).sum())
    assert r["total_delay_s"] == pytest.approx(float((s.start - due).sum()))
    assert r["unknown_wait_jobs"] == int(unknown.sum())


def test_bundled_sdsc_slice_share_reproduced():
    """The bundled SDSC-SP2 slice: 96.53 % of its 8,943 jobs start at their logged start.

    The rest start later because the log itself runs more than the 128 processors the
    trace states, at 273 instants (field 8 equals field 5 on every job of this trace).
    """
    w = load_default()
    s = Simulator(w).run(make_policy("replay"))
    r = s.extras["replay"]
    assert r["jobs"] == 8943
    assert r["exact_jobs"] == 8633
    assert r["delayed_jobs"] == 310
    assert r["log_overcommit_instants"] == 273
    assert r["unknown_wait_jobs"] == 0


def test_cli_simulate_replay(capsys):
    assert main(["simulate", "--policy", "replay", "--jobs", "300", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "replay: " in out and "started at their logged start" in out
    assert main(["simulate", "--policy", "log", "--jobs", "300", "--no-progress", "--json"]) == 0
    assert '"replay": {"jobs": 300' in capsys.readouterr().out
