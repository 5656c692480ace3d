"""What a compiled event loop needs from the engine, and how the engine takes the result back.

:meth:`Simulator.run` offers a whole run to its dispatcher's
:meth:`~hpcgym.sim.DispatcherBase.run_compiled`, which takes it when nothing in it needs
Python between events (:func:`compilable`): the predictor is one whose hooks the loop runs
as kernels (:func:`hpcgym.predict.loop.runs_compiled`: fixed predictions, a user history,
correction), no job was amended and no wake-up instant is held; a dispatcher asked at
every event declines on its own. The loop itself lives with the dispatchers' kernels
(:mod:`hpcgym.baselines._loop`); this module gives it the engine's arrays and the
predictor's (:func:`loop_state`, views, not copies) and writes its counters back into the
engine and the predictor (:func:`adopt_loop`), so that the schedule, the decision count,
the prediction log and the engine's state after the run are those of the Python loop.
"""

from __future__ import annotations

import heapq
from array import array
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from hpcgym.common import native
from hpcgym.common.errors import InvalidDecisionError
from hpcgym.predict._kernels import CFG_CORRECTION, CFG_KIND, FIXED, NO_CORRECTION, PredictorArrays
from hpcgym.predict.loop import adopt_predictor, loop_predictor, runs_compiled
from hpcgym.sim import _kernels as ek
from hpcgym.sim._alarms import EXPIRE_KEY

if TYPE_CHECKING:
    from hpcgym.sim.engine import Simulator
    from hpcgym.workloads import Workload

_END = 0  # the engine's event kinds: a termination, an expiry alarm
_EXPIRE = 1


class LoopState(NamedTuple):
    """The engine's arrays and the loop's own, for the loops of :mod:`hpcgym.baselines._loop`.

    Attributes:
        mem: the engine buffer.
        clock: ``[now]``.
        ctl: the loop's counters (``hpcgym.sim._kernels.C_*``).
        submit, runtime, estimate: the jobs' columns (views of the engine's).
        prediction: the predictor's predictions (its own array: the loop's hooks change it).
        start, end, killed, first_prediction: the engine's result columns, written in place.
        ended: the jobs in termination order.
        heap_t, heap_s, heap_j: the events (time, key, job), a binary heap; the key is
            the sequence number, plus :data:`~hpcgym.sim._alarms.EXPIRE_KEY` for an
            expiry alarm.
        kill: ``kill_at_estimate``.
        alarm: every running job's live expiry alarm (NaN if none).
        predictor: the predictor's state (:mod:`hpcgym.predict._kernels`).
        log: its revisions, ``(time, job, value)`` triples; one item, replaced when the
            loop hands back a larger log.
    """

    mem: np.ndarray
    clock: np.ndarray
    ctl: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    prediction: np.ndarray
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    ended: np.ndarray
    heap_t: np.ndarray
    heap_s: np.ndarray
    heap_j: np.ndarray
    kill: bool
    first_prediction: np.ndarray
    alarm: np.ndarray
    predictor: PredictorArrays
    log: list[np.ndarray]


def compilable(sim: Simulator) -> bool:
    """Whether the run from here (after ``reset`` and ``attach``) can be replayed by a compiled loop.

    What the engine decides (see the module doc); a dispatcher asked at every event
    (:attr:`~hpcgym.sim.DispatcherBase.every_event`) declines on its own.
    """
    return (
        runs_compiled(sim.predictor)
        and not sim._amended
        and not sim._events
        and not sim.n_done
        and not sim._next_arrival
        and len(sim.workload) > 0
    )


def predicting(state: LoopState) -> bool:
    """Whether the loop must run the predictor's hooks or expiry alarms (not a fixed predictor alone)."""
    cfg = state.predictor.cfg
    return bool(cfg[CFG_KIND] != FIXED or cfg[CFG_CORRECTION] != NO_CORRECTION)


def loop_state(sim: Simulator) -> LoopState:
    """The arrays of a compiled loop that starts where ``sim`` is (fresh, after ``attach``)."""
    n = len(sim.workload)
    ps = loop_predictor(sim.predictor, n)
    assert ps is not None, "loop_state of a run that is not compilable"
    ctl = np.zeros(ek.COUNTERS, dtype=np.int64)
    ctl[ek.C_NEXT] = sim._next_arrival
    ctl[ek.C_SEQ] = sim._seq
    ctl[ek.C_WAITING] = sim._nq
    ctl[ek.C_RUNNING] = sim._nr
    ctl[ek.C_DECISIONS] = sim.decisions
    return LoopState(
        mem=sim._mem,
        clock=np.array([sim.now]),
        ctl=ctl,
        submit=np.frombuffer(sim._submit, dtype=np.float64),
        runtime=np.frombuffer(sim._runtime, dtype=np.float64),
        estimate=np.frombuffer(sim._estimate, dtype=np.float64),
        prediction=np.ascontiguousarray(sim.predictor.prediction, dtype=np.float64),
        start=sim.start_time,
        end=sim.end_time,
        killed=sim.killed,
        ended=np.empty(n, dtype=np.int64),
        # a termination and a live alarm per running job (stale alarms are never left:
        # a job's alarm is re-armed only when it rings)
        heap_t=np.empty(2 * n),
        heap_s=np.empty(2 * n, dtype=np.int64),
        heap_j=np.empty(2 * n, dtype=np.int64),
        kill=sim.kill_at_estimate,
        first_prediction=sim.first_prediction,
        alarm=np.full(n, np.nan),
        predictor=ps,
        log=[np.empty(3 * 1024)],
    )


def adopt_loop(sim: Simulator, state: LoopState, name: str) -> None:
    """Write the loop's counters back into ``sim``; raise as the Python loop would on a bad decision.

    Raises:
        InvalidDecisionError: the dispatcher's kernel gave a placement the engine
            refused, or started nothing with an idle machine, jobs waiting and no event
            left.
    """
    ctl = state.ctl
    done = int(ctl[ek.C_DONE])
    sim.now = float(state.clock[0])
    sim._next_arrival = int(ctl[ek.C_NEXT])
    sim._seq = int(ctl[ek.C_SEQ])
    sim._nq = int(ctl[ek.C_WAITING])
    sim._nr = int(ctl[ek.C_RUNNING])
    sim.n_done = done
    sim.decisions = int(ctl[ek.C_DECISIONS])
    sim._ended = array("q", state.ended[:done].tobytes())
    size = int(ctl[ek.C_HEAP])
    events = [
        (t, _END, s, j) if s < EXPIRE_KEY else (t, _EXPIRE, s - EXPIRE_KEY, j)
        for t, s, j in zip(
            state.heap_t[:size].tolist(),
            state.heap_s[:size].tolist(),
            state.heap_j[:size].tolist(),
            strict=True,
        )
    ]
    heapq.heapify(events)
    sim._events = events
    live = np.flatnonzero(~np.isnan(state.alarm))
    sim._alarm = dict(zip(live.tolist(), state.alarm[live].tolist(), strict=True))
    if not predicting(state):  # what a fixed predictor showed at each submission (the loop without hooks)
        arrived = sim._next_arrival
        sim.first_prediction[:arrived] = state.prediction[:arrived]
    if state.prediction is not sim.predictor.prediction and not sim.predictor.fixed:
        sim.predictor.prediction[:] = state.prediction  # the loop changed a converted copy
    adopt_predictor(sim.predictor, state.predictor, state.log[0], sim._next_arrival)
    sim._qver += 1
    sim._rver += 1
    sim._fver += 1
    status = int(ctl[ek.C_STATUS])
    if status == ek.STALLED:
        raise InvalidDecisionError(
            f"dispatcher {name!r} started nothing at t={sim.now:g} with {sim._nq} jobs waiting, an idle "
            "machine and no event left: the simulation would never end"
        )
    if status == ek.REFUSED:  # pragma: no cover - the reference kernels place what fits
        raise InvalidDecisionError(
            f"dispatcher {name!r}: the engine refused job {int(ctl[ek.C_REFUSED_AT])} of its decision at "
            f"t={sim.now:g} (code {int(ctl[ek.C_REFUSED_CODE])}); "
            "the compiled kernel placed a job that does not fit"
        )


def example_workload() -> Workload:
    """Three jobs on two processors: what the kernels' warm-ups and the native core's examples run."""
    from hpcgym.workloads import Workload

    return Workload.from_columns([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1, 1, 2], [1.0, 1.0, 1.0], procs=2)


def example_engine() -> Simulator:
    """An engine on :func:`example_workload`: its buffers have the types of every engine's."""
    from hpcgym.sim.engine import Simulator

    return Simulator(example_workload())


def _example_jobs() -> np.ndarray:
    return np.zeros(1, dtype=np.int64)


# The engine's kernels its Python methods call (hpcgym.sim.engine, hpcgym.sim.view), with the
# argument types they pass: the buffer, Python ints and bools, contiguous int64 job arrays.
native.register(ek.instant, lambda: (example_engine()._mem, 0, 0, 0, False))
native.register(ek.any_waiting_fits, lambda: (example_engine()._mem,))
native.register(ek.compact, lambda: (example_engine()._mem,))
native.register(ek.fits_job, lambda: (example_engine()._mem, 0))
native.register(ek.fits_jobs, lambda: (example_engine()._mem, _example_jobs(), np.zeros(1, dtype=bool)))
native.register(
    ek.commit,
    lambda: ((s := example_engine())._mem, s.start_time, 0.0, _example_jobs(), _example_jobs(), False),
)
