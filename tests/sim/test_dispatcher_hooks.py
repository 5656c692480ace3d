"""The typed Dispatcher protocol: explicit hooks on DispatcherBase, plain callables wrapped."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import DispatchEnv, DispatcherPolicy, run_episode
from hpcgym.sim import CallableDispatcher, Dispatcher, DispatcherBase, Simulator, as_dispatcher
from hpcgym.workloads import Workload


def _workload() -> Workload:
    # machine 4: job 0 (4 procs) runs 0..10; job 1 (4 procs) must wait; job 2 arrives at 20
    return Workload.from_columns([0, 1, 20], [10, 5, 5], [4, 4, 2], [10, 5, 5], procs=4)


class Hooked(DispatcherBase):
    """FCFS that records which hooks the engine called."""

    name = "hooked"

    def __init__(self, every_event: bool = False) -> None:
        self._every = every_event
        self.resets = 0
        self.calls: list[float] = []

    @property
    def every_event(self) -> bool:
        return self._every

    def reset(self, view):
        self.resets += 1
        self.calls = []

    def __call__(self, view):
        self.calls.append(view.now)
        return view.queue[:1] if view.queue_fits[:1].any() else []

    def extras(self):
        return {"calls": list(self.calls)}


@pytest.mark.parametrize("every_event, asked", [(False, [0.0, 10.0, 20.0]), (True, [0.0, 1.0, 10.0, 20.0])])
def test_the_engine_calls_every_hook_of_a_dispatcher_base(every_event, asked):
    d = Hooked(every_event)
    s = Simulator(_workload()).run(d)
    assert d.resets == 1
    assert s.policy == "hooked"
    assert s.extras == {"calls": asked}  # at t=1 job 1 waits and nothing fits
    np.testing.assert_array_equal(s.start, [0, 10, 20])


def test_a_plain_function_is_a_dispatcher_named_after_itself():
    def oldest(view):
        return view.queue[:1] if view.queue_fits[:1].any() else []

    assert isinstance(as_dispatcher(oldest), CallableDispatcher)
    s = Simulator(_workload()).run(oldest)
    assert s.policy == "oldest" and s.extras == {}
    np.testing.assert_array_equal(s.start, [0, 10, 20])


def test_a_class_with_hooks_but_no_base_is_refused_not_silently_ignored():
    class Duck:
        name = "duck"

        def reset(self, view):
            pass

        def __call__(self, view):
            return []

    with pytest.raises(InvalidConfigError, match=r"Duck defines reset but does not subclass"):
        Simulator(_workload()).run(Duck())
    with pytest.raises(InvalidConfigError, match="must be callable"):
        as_dispatcher(42)


@pytest.mark.parametrize("name", sorted(policy_specs()))
def test_every_preset_is_a_dispatcher_base_and_satisfies_the_protocol(name):
    d = make_policy(name)
    assert isinstance(d, DispatcherBase) and isinstance(d, Dispatcher)
    assert as_dispatcher(d) is d


def test_the_env_uses_the_hooks_of_a_dispatcher_it_is_given():
    w = _workload()
    env = DispatchEnv(trace=w, window_jobs=None, split="all", window_size=None)
    d = Hooked()
    info = run_episode(env, DispatcherPolicy(d, env), options={"offset": 0})
    assert d.resets == 1 and d.calls == [0.0, 10.0, 20.0]
    assert info["metrics"]["jobs_measured"] == 3
    np.testing.assert_array_equal(env.schedule().start, [0, 10, 20])


def test_recorded_reservations_reach_the_schedule_through_extras():
    w = _workload()
    s = Simulator(w).run(EasyBackfilling(record_reservations=True))
    np.testing.assert_array_equal(s.extras["first_reservation"], [np.nan, 10.0, np.nan])
