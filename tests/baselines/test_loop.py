"""The compiled event loop (hpcgym.baselines._loop) gives exactly the Python loop's run.

Every reference dispatcher with a built-in predictor (a fixed one, a user history of
004's space, prediction correction) takes the compiled loop in ``Simulator.run``;
``run(..., compiled=False)`` forces the Python loop. The two must agree on every column
of the schedule, the placements, the decision count, the prediction log, the correction
counts, the predictor's and the engine's state after the run, on random workloads and
machines (nodes, resource types, exclusive nodes, both allocation policies, kills at the
estimate, zero run times and predictions, events at one instant).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from checks import machines_and_workloads
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import FCFS, EasyBackfilling, ListScheduler, make_policy
from hpcgym.common.errors import InvalidDecisionError
from hpcgym.predict import (
    Corrected,
    LastKUserAverage,
    Oracle,
    Predictor,
    UserHistory,
    UserHistoryConfig,
    Walltime,
    make_predictor,
)
from hpcgym.sim import DispatcherBase, Simulator
from hpcgym.workloads import Workload, load_default

DISPATCHERS = {
    "fcfs": FCFS,
    "sjf-list": ListScheduler,
    "ljf-list": lambda: ListScheduler(longest_first=True),
    "easy": EasyBackfilling,
    "easy-sjbf": lambda: EasyBackfilling(sjbf=True),
    "easy-reserve-shortest": lambda: EasyBackfilling(reserve_shortest=True, sjbf=True),
    "easy-x2-all": lambda: EasyBackfilling(doubling=2.0, extra="all"),
}


class Spy(DispatcherBase):
    """Counts the dispatcher's run_compiled calls and what they answered."""

    def __init__(self, inner: DispatcherBase) -> None:
        self.inner = inner
        self.name = inner.name
        self.answers: list[bool] = []

    @property
    def every_event(self) -> bool:
        return self.inner.every_event

    def reset(self, view):  # type: ignore[no-untyped-def]
        self.inner.reset(view)

    def run_compiled(self, sim, progress):  # type: ignore[no-untyped-def]
        self.answers.append(self.inner.run_compiled(sim, progress))
        return self.answers[-1]

    def __call__(self, view):  # type: ignore[no-untyped-def]
        return self.inner(view)


def both(w: Workload, name: str, predictor: Callable[[], Predictor] = Walltime, kill: bool = False):  # type: ignore[no-untyped-def]
    """The Python loop's and the compiled loop's engine after a run, and their schedules."""
    out = []
    for compiled in (False, True):
        sim = Simulator(w, predictor=predictor(), kill_at_estimate=kill)
        spy = Spy(DISPATCHERS[name]())
        schedule = sim.run(spy, compiled=compiled)
        assert spy.answers == ([True] if compiled else []), "the compiled loop was not taken"
        out.append((sim, schedule))
    return out


def _history_state(p: Predictor) -> object:
    """What a user history keeps between events (None for another predictor)."""
    h = getattr(p, "inner", p)
    if not isinstance(h, UserHistory):
        return None
    windows = {key: tuple(map(list, lists)) for key, lists in h._windows.items()}
    return windows, h._ratio, h._ends, h._waiting if h.config.propagation else None


def assert_same(
    w: Workload, name: str, predictor: Callable[[], Predictor] = Walltime, kill: bool = False
) -> None:
    (ps, p), (cs, c) = both(w, name, predictor, kill)
    for column in ("start", "end", "killed", "first_prediction", "placement_ptr", "placement_nodes"):
        np.testing.assert_array_equal(getattr(c, column), getattr(p, column), err_msg=f"{name}: {column}")
    assert c.decisions == p.decisions, name
    assert (c.policy, c.predictor, c.prediction_changes) == (p.policy, p.predictor, p.prediction_changes)
    assert (cs.now, cs.n_done, cs._nq, cs._nr, cs._next_arrival) == (
        ps.now,
        ps.n_done,
        ps._nq,
        ps._nr,
        ps._next_arrival,
    )
    assert list(cs._ended) == list(ps._ended), "termination order"
    assert cs.done and not cs.has_future_event()
    assert (cs._seq, cs._alarm, cs._events) == (ps._seq, ps._alarm, ps._events)
    pp, cp = ps.predictor, cs.predictor
    np.testing.assert_array_equal(cp.prediction, pp.prediction)
    if hasattr(pp, "corrections"):
        np.testing.assert_array_equal(cp.corrections, pp.corrections)
    assert _history_state(cp) == _history_state(pp)


@settings(max_examples=60, deadline=None)
@given(
    case=machines_and_workloads(max_jobs=25), name=st.sampled_from(sorted(DISPATCHERS)), kill=st.booleans()
)
def test_the_compiled_loop_is_the_python_loop_on_node_machines(case, name: str, kill: bool) -> None:  # type: ignore[no-untyped-def]
    _, w = case
    assert_same(w, name, kill=kill)


@settings(max_examples=40, deadline=None)
@given(case=machines_and_workloads(max_jobs=25))
def test_the_active_shapes_are_those_with_a_waiting_job_in_order(case) -> None:  # type: ignore[no-untyped-def]
    from hpcgym.sim import _kernels as ek

    _, w = case
    seen = []

    class Check(DispatcherBase):
        name = "check"

        def __init__(self) -> None:
            self.inner = EasyBackfilling()

        def reset(self, view):  # type: ignore[no-untyped-def]
            self.inner.reset(view)

        def __call__(self, view):  # type: ignore[no-untyped-def]
            mem = view._sim._mem
            a = ek.views(mem)
            active = a.active[: mem[ek.H_NACTIVE]]
            np.testing.assert_array_equal(active, np.flatnonzero(a.shape_count > 0))
            np.testing.assert_array_equal(np.sort(np.unique(a.shape[view.queue])), active)
            seen.append(len(active))
            return self.inner(view)

    Simulator(w).run(Check())
    assert seen and min(seen) >= 1


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 60),
    procs=st.integers(1, 16),
    tick=st.sampled_from([1, 10]),
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(sorted(DISPATCHERS)),
    oracle=st.booleans(),
)
def test_the_compiled_loop_is_the_python_loop_on_processor_machines(
    n: int, procs: int, tick: int, seed: int, name: str, oracle: bool
) -> None:
    # coarse clocks, zero run times and estimates below run times: ties at one instant
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.integers(0, 30 // tick, n)) * tick
    runtime = np.maximum(rng.integers(-3, 12, n), 0) * tick
    estimate = np.maximum(runtime + rng.integers(-5, 20, n) * tick, 1)
    w = Workload.from_columns(submit, runtime, rng.integers(1, procs + 1, n), estimate, procs=procs)
    assert_same(w, name, Oracle if oracle else Walltime)


@pytest.mark.parametrize("name", sorted(DISPATCHERS))
def test_the_compiled_loop_is_the_python_loop_on_the_bundled_trace(name: str) -> None:
    assert_same(load_default().window(3000), name)


def test_a_predictor_that_changes_predictions_takes_the_python_loop() -> None:
    class Halving(Predictor):
        def on_submit(self, job: int, now: float) -> None:
            self.prediction[job] = self.estimate[job] / 2

    assert Walltime().fixed and Oracle().fixed and not Halving().fixed
    spy = Spy(EasyBackfilling())
    w = load_default().window(300)
    s = Simulator(w, predictor=Halving()).run(spy)
    assert spy.answers == [False]  # declined
    np.testing.assert_array_equal(s.first_prediction, w.estimate / 2)


def test_reservations_are_recorded_on_the_python_loop() -> None:
    spy = Spy(EasyBackfilling(record_reservations=True))
    Simulator(load_default().window(300)).run(spy)
    assert spy.answers == [False]  # asked at every event: declined


def test_a_subclass_that_decides_otherwise_takes_the_python_loop() -> None:
    class Backwards(FCFS):
        def __call__(self, view):  # type: ignore[no-untyped-def]
            return view.queue[-1:] if view.queue_fits[-1] else ()

    class Tweaked(EasyBackfilling):
        def decide(self, view, first=None):  # type: ignore[no-untyped-def]
            return super().decide(view, first)

    w = load_default().window(300)
    for d in (Backwards(), Tweaked()):
        spy = Spy(d)
        Simulator(w).run(spy)
        assert spy.answers == [False], type(d).__name__

    class Renamed(EasyBackfilling):  # same decisions: still compiled
        pass

    spy = Spy(Renamed(name="mine"))
    Simulator(w).run(spy)
    assert spy.answers == [True]


@pytest.mark.parametrize("name", ["fcfs", "easy", "easy-sjbf"])
def test_the_progress_bar_sees_every_job(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    import hpcgym.baselines._loop as loop

    w = load_default().window(1000)
    whole = Simulator(w).run(make_policy(name))
    monkeypatch.setattr(loop, "PROGRESS_CHUNK", 100)
    seen: list[int] = []
    sim = Simulator(w)
    d = make_policy(name)
    sim.reset()
    sim.attach(d)
    assert d.run_compiled(sim, seen.append)
    assert sum(seen) == 1000 and len(seen) >= 10
    assert sim.done
    # every call of the loop starts from the engine's state (EASY: its running jobs by predicted end)
    assert np.array_equal(sim.start_time, whole.start)
    assert sim.decisions == whole.decisions


def test_a_stalled_loop_raises_as_the_python_loop_does() -> None:
    # the reference kernels always start the first job on an idle machine, so a stall is
    # the loop's status STALLED set by hand; the engine's adopt_loop turns it into the error
    from hpcgym.sim import _kernels as ek
    from hpcgym.sim.loop import adopt_loop, loop_state

    sim = Simulator(Workload.from_columns([0.0, 0.0], [1.0, 1.0], [1, 1], [1.0, 1.0], procs=1))
    st = loop_state(sim)
    st.ctl[ek.C_STATUS] = ek.STALLED
    with pytest.raises(InvalidDecisionError, match="'mine' started nothing at t=0 with 0 jobs waiting"):
        adopt_loop(sim, st, "mine")


CORRECTIONS = ("none", "estimate", "gradual", "exponential")
history_configs = st.builds(
    UserHistoryConfig,
    k=st.integers(1, 5),
    type=st.sampled_from(["all", "immediate", "extended"]),
    fullness=st.sampled_from(["partial", "full"]),
    metric=st.sampled_from(["avg", "median", "min", "max"]),
    fallback=st.sampled_from(["estimate", "relative"]),
    propagation=st.booleans(),
    correction=st.sampled_from(CORRECTIONS),
    order=st.sampled_from(["submit", "end"]),
)


@st.composite
def built_in_predictors(draw):  # type: ignore[no-untyped-def]
    """A factory of a predictor the compiled loop runs: a user history or a fixed one, maybe corrected."""
    inner = draw(st.sampled_from(["history", "walltime", "real"]))
    config = draw(history_configs)
    on_top = draw(st.sampled_from(CORRECTIONS))
    if inner == "walltime" and on_top == "none":
        on_top = "estimate"  # W alone is tested above

    def make() -> Predictor:
        p: Predictor = {"history": lambda: UserHistory(config), "walltime": Walltime, "real": Oracle}[inner]()
        return p if on_top == "none" else Corrected(p, on_top)

    make.__name__ = f"{inner}:{config}+{on_top}"
    return make


def users_workload(n: int, procs: int, tick: int, users: int, rng: np.random.Generator) -> Workload:
    """Random jobs of a few users: coarse clocks, zero run times, estimates below run times."""
    submit = np.cumsum(rng.integers(0, 30 // tick, n)) * tick
    runtime = np.maximum(rng.integers(-3, 12, n), 0) * tick
    estimate = np.maximum(runtime + rng.integers(-8, 20, n) * tick, 1)
    if rng.random() < 0.5:  # few distinct estimates: immediate and extended windows fill
        estimate = rng.choice(np.array([tick, 5 * tick, 10 * tick]), n)
    # some jobs outlive their estimate by up to 50 min: corrections 1 min, 15 min, 30 min beyond it
    runtime = np.where(rng.random(n) < 0.2, estimate + rng.integers(0, 3000 // tick, n) * tick, runtime)
    user = rng.integers(0, users, n)
    return Workload.from_columns(
        submit, runtime, rng.integers(1, procs + 1, n), estimate, procs=procs, user=user
    )


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 60),
    procs=st.integers(1, 16),
    tick=st.sampled_from([1, 10]),
    users=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(sorted(DISPATCHERS)),
    predictor=built_in_predictors(),
    kill=st.booleans(),
)
def test_the_compiled_loop_runs_the_built_in_predictors_as_the_python_loop(
    n: int, procs: int, tick: int, users: int, seed: int, name: str, predictor, kill: bool
) -> None:  # type: ignore[no-untyped-def]
    w = users_workload(n, procs, tick, users, np.random.default_rng(seed))
    assert_same(w, name, predictor, kill)


@settings(max_examples=40, deadline=None)
@given(
    case=machines_and_workloads(max_jobs=25),
    name=st.sampled_from(sorted(DISPATCHERS)),
    config=history_configs,
    kill=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_compiled_loop_runs_a_user_history_as_the_python_loop_on_node_machines(
    case, name: str, config: UserHistoryConfig, kill: bool, seed: int
) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    _, w = case
    w = dataclasses.replace(w, user=np.random.default_rng(seed).integers(0, 3, len(w)))
    assert_same(w, name, lambda: Corrected(UserHistory(config)), kill)


@pytest.mark.parametrize(
    "predictor",
    [
        "user-avg+pcor",
        "user-avg-imm+pcor",
        "walltime+pcor",
        "user-history:k=3,type=ext,metric=med,fallback=rel,propagation=yes,correction=gradual",
        "user-history:k=5,type=imm,fullness=full,metric=max,propagation=yes,correction=exp,order=end",
        "user-history:k=1,fallback=rel,propagation=yes,correction=est",
    ],
)
def test_the_compiled_loop_runs_easy_plus_plus_as_the_python_loop_on_the_bundled_slice(
    predictor: str,
) -> None:
    # thousands of revisions: the log grows in the loop
    w = load_default().window(3000)
    assert_same(w, "easy-sjbf", lambda: make_predictor(predictor))


def test_a_predictor_subclass_with_its_own_hooks_takes_the_python_loop() -> None:
    class Shorter(LastKUserAverage):
        def on_submit(self, job: int, now: float) -> None:
            super().on_submit(job, now)
            self.prediction[job] /= 2

    class Stubborn(Corrected):
        def on_expire(self, job: int, now: float, elapsed: float) -> float:
            return float(self.prediction[job]) + 1.0

    class Named(UserHistory):  # same hooks: still compiled
        name = "mine"

    patched = UserHistory()
    patched.predict = lambda job: 1.0  # type: ignore[method-assign]
    w = load_default().window(300)
    for p, compiled in (
        (Shorter(), False),
        (Corrected(Shorter()), False),
        (Stubborn(UserHistory()), False),
        (patched, False),
        (Named(), True),
        (Corrected(Named()), True),
        (Corrected(Walltime()), True),
    ):
        spy = Spy(EasyBackfilling(sjbf=True))
        Simulator(w, predictor=p).run(spy)
        assert spy.answers == [compiled], repr(p)


def test_the_progress_bar_sees_every_job_of_easy_plus_plus(monkeypatch: pytest.MonkeyPatch) -> None:
    import hpcgym.baselines._loop as loop
    from hpcgym.baselines import preset_predictor

    monkeypatch.setattr(loop, "PROGRESS_CHUNK", 100)
    w = load_default().window(1000)
    schedules = []
    for compiled in (False, True):
        sim = Simulator(w, predictor=preset_predictor("easy++"))
        d = make_policy("easy++")
        sim.reset()
        sim.attach(d)
        seen: list[int] = []
        if compiled:
            assert d.run_compiled(sim, seen.append)
            assert sum(seen) == 1000 and len(seen) >= 10
        else:
            while sim.advance():
                sim.decisions += 1
                sim.start(d(sim.view))
        schedules.append(sim.schedule())
    p, c = schedules
    np.testing.assert_array_equal(c.start, p.start)
    assert c.prediction_changes == p.prediction_changes and c.decisions == p.decisions
