"""The engine refuses impossible decisions and never hangs on a dispatcher that does nothing."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import make_policy
from hpcgym.common.errors import HpcGymError, InvalidConfigError, InvalidDecisionError
from hpcgym.machine import Machine
from hpcgym.sim import Dispatcher, Simulator

# machine 4: job 0 (2 procs) at 0, job 1 (2 procs) at 0, job 2 (3 procs) at 5
JOBS = [(0, 10, 2, 10), (0, 10, 2, 10), (5, 1, 3, 1)]


class Scripted:
    """Returns a fixed answer at each successive decision (then nothing)."""

    name = "scripted"

    def __init__(self, *answers):
        self.answers = list(answers)

    def __call__(self, view):
        return self.answers.pop(0) if self.answers else []


def test_starting_a_job_twice_in_one_decision_is_rejected(make_workload):
    sim = Simulator(make_workload(JOBS, 4))
    with pytest.raises(InvalidDecisionError, match=r"job 0 .*already running"):
        sim.run(Scripted([0, 0]))


def test_starting_a_running_job_again_later_is_rejected(make_workload):
    sim = Simulator(make_workload([(0, 10, 1, 10), (1, 10, 1, 10)], 4))
    with pytest.raises(InvalidDecisionError, match=r"job 0 .*already running"):
        sim.run(Scripted([0], [0]))


def test_starting_an_ended_job_is_rejected(make_workload):
    sim = Simulator(make_workload([(0, 1, 1, 1), (5, 1, 1, 1)], 4))
    with pytest.raises(InvalidDecisionError, match=r"job 0 .*already ended"):
        sim.run(Scripted([0], [0]))


def test_starting_an_unsubmitted_job_is_rejected(make_workload):
    sim = Simulator(make_workload(JOBS, 4))
    with pytest.raises(InvalidDecisionError, match=r"job 2 .*not submitted yet"):
        sim.run(Scripted([2]))


@pytest.mark.parametrize("job", [-1, 3, 10**9])
def test_starting_a_job_that_does_not_exist_is_rejected(make_workload, job):
    sim = Simulator(make_workload(JOBS, 4))
    with pytest.raises(InvalidDecisionError, match="no such job"):
        sim.run(Scripted([job]))


def test_starting_a_job_that_does_not_fit_is_rejected(make_workload):
    # at t=5 jobs 0 and 1 hold all 4 processors; job 2 needs 3. No waiting job fits, so
    # run() would not even ask a plain dispatcher: drive the engine by hand.
    sim = Simulator(make_workload(JOBS, 4))
    assert sim.advance()
    sim.start([0, 1])
    assert sim.advance(every_event=True) and sim.now == 5
    with pytest.raises(
        InvalidDecisionError, match=r"job 2 needs 1 x \(procs=3\) but it does not fit .* procs=0 of 4"
    ):
        sim.start([2])


def test_over_capacity_within_one_decision_is_rejected(make_workload):
    sim = Simulator(make_workload([(0, 5, 3, 5), (0, 5, 3, 5)], 4))
    with pytest.raises(InvalidDecisionError, match=r"job 1 needs 1 x \(procs=3\)"):
        sim.run(Scripted([0, 1]))


def test_a_dispatcher_that_never_starts_anything_raises_instead_of_hanging(make_workload):
    sim = Simulator(make_workload(JOBS, 4))
    with pytest.raises(InvalidDecisionError, match=r"started nothing .* idle machine"):
        sim.run(Scripted())


def test_a_dispatcher_that_stops_midway_raises_once_nothing_is_left_to_happen(make_workload):
    # starts job 0 and then never again: time runs on to job 0's end (10), then it raises
    sim = Simulator(make_workload(JOBS, 4))
    with pytest.raises(InvalidDecisionError, match="t=10"):
        sim.run(Scripted([0]))


def test_errors_share_one_hierarchy():
    assert issubclass(InvalidDecisionError, HpcGymError)
    assert issubclass(InvalidConfigError, HpcGymError)


def test_a_job_larger_than_the_machine_is_a_configuration_error(make_workload):
    w = make_workload([(0, 1, 8, 1)], 8)
    with pytest.raises(
        InvalidConfigError, match=r"job 0 \(id 1\) asks for 1 x \(procs=8\).*largest per type: procs=4"
    ):
        Simulator(w, machine=Machine.processors(4))


@pytest.mark.parametrize("procs", [0, -3])
def test_a_machine_needs_processors(procs):
    with pytest.raises(InvalidConfigError, match="procs"):
        Machine.processors(procs)


def test_the_view_is_read_only(make_workload):
    w = make_workload(JOBS, 4)
    sim = Simulator(w)
    assert sim.advance()
    view = sim.view
    for column in (view.queue, view.submit, view.procs, view.estimate, view.prediction, view.start):
        with pytest.raises(ValueError, match="read-only"):
            column[0] = 99
    assert np.isnan(view.jobs.runtime).all()


def test_driving_the_engine_by_hand_matches_run(make_workload):
    w = make_workload(JOBS, 4)
    fcfs = make_policy("fcfs")
    expected = Simulator(w).run(fcfs)
    sim = Simulator(w)
    decisions = 0
    while sim.advance():
        decisions += 1
        sim.start(fcfs(sim.view))
    assert sim.done
    schedule = sim.schedule()
    np.testing.assert_array_equal(schedule.start, expected.start)
    np.testing.assert_array_equal(schedule.end, expected.end)
    assert decisions == expected.decisions
    assert not sim.advance()  # nothing left


def test_an_empty_workload_runs_to_an_empty_schedule(make_workload):
    w = make_workload([], 4)
    s = Simulator(w).run(make_policy("easy"))
    assert len(s.start) == 0 and s.decisions == 0


def test_builtin_dispatchers_satisfy_the_protocol():
    for name in ("fcfs", "sjf-list", "ljf-list", "easy"):
        assert isinstance(make_policy(name), Dispatcher)


def test_long_queues_are_listed_in_arrival_order(make_workload):
    # 1,500 jobs on a 4-processor machine: the queue grows past the length at which the
    # view switches from iterating the queue to scanning job states
    jobs = [(float(i // 3), float(1 + (7 * i) % 13), 1 + (i % 4), 20.0) for i in range(1500)]
    sim = Simulator(make_workload(jobs, 4))
    dispatcher = make_policy("easy")
    seen_long = False
    while sim.advance():
        q = sim.view.queue
        assert q.tolist() == list(sim.queue)
        assert q.dtype == np.int64 and not q.flags.writeable
        seen_long |= len(q) >= 512
        sim.start(dispatcher(sim.view))
    assert seen_long
    assert sim.done


@pytest.mark.parametrize("compiled", [True, False])
def test_a_run_right_after_building_is_one_after_reset_with_shared_or_swapped_predictors(compiled):
    """``run`` keeps the buffers :meth:`Simulator.__init__` built, but the predictor and its view are new.

    Job 2 outlives its estimate, so EASY+ corrects its prediction: a view left on the
    predictor's first arrays would not see the correction (job 5 started at 2.5, not 1).
    """
    from hpcgym.baselines import preset_predictor
    from hpcgym.workloads import Workload

    w = Workload.from_columns(
        [0.0] * 6, [0, 0, 2.5, 0, 0, 0], [1, 2, 1, 1, 1, 1], [1, 1, 1, 1, 1, 2], procs=2
    )
    other = Workload.from_columns([0.0] * 3, [5, 5, 5], [1, 1, 1], [9, 9, 9], procs=1)

    def fresh():
        sim = Simulator(w, predictor=preset_predictor("easy+", "walltime"))
        sim.reset()
        return sim.run(make_policy("easy+"), compiled=compiled).start

    expected = fresh()
    np.testing.assert_array_equal(expected, [0, 2.5, 0, 0, 0, 1])
    built = Simulator(w, predictor=preset_predictor("easy+", "walltime"))
    np.testing.assert_array_equal(built.run(make_policy("easy+"), compiled=compiled).start, expected)
    # a predictor another simulator reset since, and one put in after building
    shared = preset_predictor("easy+", "walltime")
    sim = Simulator(w, predictor=shared)
    Simulator(other, predictor=shared)
    np.testing.assert_array_equal(sim.run(make_policy("easy+"), compiled=compiled).start, expected)
    sim = Simulator(w, predictor=preset_predictor("easy", "walltime"))
    sim.predictor = preset_predictor("easy+", "walltime")
    np.testing.assert_array_equal(sim.run(make_policy("easy+"), compiled=compiled).start, expected)
