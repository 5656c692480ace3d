"""The discrete-event engine every dispatcher, baseline or learned, runs on.

One clock ``now`` and one heap of ``(time, kind, seq, job)`` events (terminations and
prediction-expiry alarms); arrivals come from the workload's submit column, which is
sorted. Semantics (design card):

* at one instant, terminations are handled first, then prediction-expiry alarms, then
  arrivals, then **one** decision; an expiry alarm is an event instant like the others
  (a corrected prediction moves reservations, so the dispatcher is asked again if a
  waiting job fits);
* a predictor may revise any job's prediction at any event (``Predictor.revise``); the
  engine then re-arms that job's expiry alarm;
* a decision point is an instant after which the queue is non-empty and at least one
  queued job fits the free resources (a dispatcher with ``every_event = True`` is
  also asked when nothing fits, e.g. to record reservations);
* a dispatcher sees a read-only :class:`SystemView` and returns the jobs to start now;
  the engine starts them in that order and rejects a job that does not fit, is not
  waiting, or is given twice;
* jobs run for their real run time (``kill_at_estimate`` ends them at their estimate);
* if a decision starts nothing, time moves to the next event; if no event is left and
  jobs still wait, the dispatcher would wait forever and :meth:`Simulator.run` raises.

The engine imports numpy only: no gymnasium, torch or ortools.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from hpcgym.cluster import Cluster, ProcessorCluster
from hpcgym.errors import InvalidConfigError, InvalidDecisionError
from hpcgym.predictors import Predictor, Walltime
from hpcgym.workload import Workload

_END = 0
_EXPIRE = 1
_STATE_NAMES = ("not submitted yet", "waiting", "already running", "already ended")


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class SystemView:
    """What a dispatcher may look at: read-only, refreshed by the engine.

    Attributes:
        now: current time (s).
        free_procs: free processors (processor clusters).
        capacity: total of each resource type.
        jobs: the workload with run times hidden (``jobs.submit``, ``jobs.user`` ...).
        submit, procs, estimate: job columns (read-only), indexed by job.
        prediction: each job's current predicted run time (read-only).
        start: each job's start time, NaN while it waits (read-only).
    """

    __slots__ = (
        "_qcache",
        "_qver",
        "_rcache",
        "_rver",
        "_sim",
        "capacity",
        "estimate",
        "jobs",
        "prediction",
        "procs",
        "start",
        "submit",
    )

    def __init__(self, sim: Simulator) -> None:
        self._sim = sim
        self._qcache = np.zeros(0, dtype=np.int64)
        self._qver = -1
        self._rcache = np.zeros(0, dtype=np.int64)
        self._rver = -1
        w = sim.workload
        self.jobs = w.public
        self.submit = w.submit
        self.procs = w.procs_req
        self.estimate = w.estimate
        self.capacity = sim.cluster.capacity
        self._link()

    def _link(self) -> None:
        """Bind the live columns; numpy views do not survive pickling or deep copies."""
        sim = self._sim
        self.prediction = _readonly(sim.predictor.prediction)
        self.start = _readonly(sim.start_time)

    def __setstate__(self, state: tuple[None, dict[str, object]]) -> None:
        for name, value in state[1].items():
            setattr(self, name, value)
        if "start_time" in vars(self._sim):  # else the engine links us once it is restored
            self._link()

    @property
    def now(self) -> float:
        return self._sim.now

    @property
    def free_procs(self) -> int:
        return self._sim.cluster.free_procs  # type: ignore[attr-defined, no-any-return]

    @property
    def ended(self) -> Sequence[int]:
        """Jobs that have ended, in termination order (a live list: do not modify)."""
        return self._sim._ended

    def end(self, jobs: np.ndarray) -> np.ndarray:
        """End times of ``jobs``; NaN for a job that has not ended (no look into the future)."""
        sim = self._sim
        return np.where(sim._state[jobs] == 3, sim.end_time[jobs], np.nan)

    @property
    def cluster(self) -> Cluster:
        """The cluster (use ``fits`` and ``free``; do not allocate)."""
        return self._sim.cluster

    @property
    def queue(self) -> np.ndarray:
        """Waiting jobs in arrival order (read-only array of job indices)."""
        sim = self._sim
        if self._qver != sim._qver:
            q = sim.waiting_jobs()
            q.flags.writeable = False
            self._qcache, self._qver = q, sim._qver
        return self._qcache

    @property
    def running(self) -> np.ndarray:
        """Running jobs in start order (read-only array of job indices)."""
        sim = self._sim
        if self._rver != sim._rver:
            r = np.fromiter(sim._running, dtype=np.int64, count=len(sim._running))
            r.flags.writeable = False
            self._rcache, self._rver = r, sim._rver
        return self._rcache

    def iter_queue(self) -> Iterable[int]:
        """Waiting jobs in arrival order, lazily (cheaper than :attr:`queue` for a prefix)."""
        return iter(self._sim._queue)

    @property
    def queue_length(self) -> int:
        return len(self._sim._queue)

    def fits(self, job: int) -> bool:
        """Whether ``job`` fits the free resources now."""
        return self._sim.cluster.fits(job)

    def predicted_end(self, jobs: np.ndarray) -> np.ndarray:
        """Predicted end time of running ``jobs``: start + current prediction."""
        return self.start[jobs] + self.prediction[jobs]


@runtime_checkable
class Dispatcher(Protocol):
    """Anything that, given a view, returns the jobs to start now.

    Attributes:
        name: short name used in reports.
    """

    name: str

    def __call__(self, view: SystemView) -> Sequence[int] | np.ndarray: ...


@dataclass
class Schedule:
    """What a simulation did: every job's start and end, and how predictions evolved.

    Attributes:
        workload: the simulated jobs.
        start, end: start and end time of every job.
        killed: jobs ended at their estimate (only with ``kill_at_estimate``).
        first_prediction: each job's prediction right after it was submitted.
        prediction_changes: ``(time, job, prediction)`` revisions in time order.
        policy, predictor: names.
        sim_seconds: wall-clock seconds spent in the simulation loop.
        decisions: number of dispatcher calls.
        extras: anything a dispatcher recorded (e.g. reservations), by name.
    """

    workload: Workload
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    first_prediction: np.ndarray
    prediction_changes: list[tuple[float, int, float]]
    policy: str = ""
    predictor: str = ""
    sim_seconds: float = 0.0
    decisions: int = 0
    extras: dict[str, object] = field(default_factory=dict)

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.workload.submit

    @property
    def runtime(self) -> np.ndarray:
        """Time each job actually ran (its real run time, or less if killed)."""
        return self.end - self.start


class Simulator:
    """Replays a workload on a cluster; a dispatcher decides what starts when.

    Args:
        workload: the jobs.
        cluster: the machine; a :class:`ProcessorCluster` of ``workload.procs`` by default.
        predictor: what dispatchers plan with; wall-time (W) by default.
        kill_at_estimate: end jobs at their estimate when they would run longer.

    Typical use is :meth:`run`; the Gymnasium environment drives :meth:`advance` and
    :meth:`start` itself, one decision at a time.

    >>> from hpcgym.workload import load_default
    >>> from hpcgym.baselines import make_policy
    >>> sim = Simulator(load_default().window(500))
    >>> schedule = sim.run(make_policy("fcfs"))
    >>> bool((schedule.start >= schedule.workload.submit).all())
    True
    """

    def __init__(
        self,
        workload: Workload,
        cluster: Cluster | None = None,
        predictor: Predictor | None = None,
        *,
        kill_at_estimate: bool = False,
    ) -> None:
        self.workload = workload
        self.cluster = cluster if cluster is not None else ProcessorCluster(workload.procs)
        self.predictor = predictor if predictor is not None else Walltime()
        self.kill_at_estimate = bool(kill_at_estimate)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Back to time zero: empty machine, nothing submitted."""
        w = self.workload
        n = len(w)
        self.cluster.reset(w)
        self.predictor.reset(w if self.predictor.needs_runtime else w.public)
        self._submit: list[float] = w.submit.tolist()
        self._runtime: list[float] = w.runtime.tolist()
        self._estimate: list[float] = w.estimate.tolist()
        self._req: list[int] = w.procs_req.tolist()
        self.start_time = np.full(n, np.nan)
        self.end_time = np.full(n, np.nan)
        self.killed = np.zeros(n, dtype=bool)
        self.first_prediction = np.full(n, np.nan)
        self.now = float(self._submit[0]) if n else 0.0
        self._next_arrival = 0
        self._events: list[tuple[float, int, int, int]] = []
        self._alarm: dict[int, float] = {}  # running job -> time of its live expiry alarm
        self._seq = 0
        self._queue: dict[int, None] = {}
        self._running: dict[int, None] = {}
        self._qver = 0
        self._queue_lo = 0  # no job below this index waits any more
        self._rver = 0
        self._req_count: dict[int, int] = {}  # multiset of waiting jobs' sizes ...
        self._req_heap: list[int] = []  # ... and a lazy min-heap over it
        self._state = np.zeros(n, dtype=np.int8)  # 0 future, 1 waiting, 2 running, 3 done
        self.n_done = 0
        self._ended: list[int] = []  # jobs in termination order
        self.decisions = 0
        self._fast_fit = isinstance(self.cluster, ProcessorCluster)
        self.view = SystemView(self)

    def warm_start(
        self, now: float, running: Sequence[int] | np.ndarray, start: Sequence[float] | np.ndarray
    ) -> None:
        """Begin at ``now`` with the machine already in use instead of empty.

        Call right after :meth:`reset` (or construction), before the first :meth:`advance`.
        Every job submitted before ``now`` counts as submitted: the jobs in ``running``
        started at the matching ``start`` time and end at start + run time as usual; the
        others wait in the queue. Jobs submitted at ``now`` or later arrive as usual. The
        predictor is told of those submissions and starts in time order; a prediction a
        running job has already outlived is corrected at ``now``. The Gymnasium
        environment uses this to begin an episode from the state a full replay had at
        the start of its window. :meth:`run` always starts from an empty machine.

        Args:
            now: the time to begin at.
            running: jobs (submitted before ``now``) running at ``now``.
            start: their start times, each before ``now`` and not before its submission.

        Raises:
            InvalidConfigError: the engine is not fresh, or a running job was not
                submitted before ``now``, starts at or after ``now``, or has ended by then.
            InvalidDecisionError: the running jobs do not fit the machine together.
        """
        running = np.asarray(running, dtype=np.int64)
        start = np.asarray(start, dtype=np.float64)
        submit = self._submit
        if self._next_arrival or self._events or self.n_done:
            raise InvalidConfigError("warm_start: call it on a fresh engine, right after reset()")
        if running.shape != start.shape:
            raise InvalidConfigError("warm_start: running and start must have the same length")
        n_before = int(np.searchsorted(self.workload.submit, now, side="left"))
        if len(running):
            end = start + self.workload.runtime[running]
            if self.kill_at_estimate:
                end = np.minimum(end, start + self.workload.estimate[running])
            bad = (
                (running < 0)
                | (running >= n_before)
                | (start >= now)
                | (start < self.workload.submit[np.clip(running, 0, len(submit) - 1)])
                | (end < now)
            )
            if bad.any():
                j = int(running[np.argmax(bad)])
                raise InvalidConfigError(
                    f"warm_start: job {j} cannot be running at t={now:g} "
                    "(it must be submitted and started before that time and not yet ended)"
                )
        # submissions (kind 0) and starts (kind 1) of the past, in time order
        past = sorted(
            [(submit[j], 0, j) for j in range(n_before)]
            + [(float(t), 1, int(j)) for j, t in zip(running, start, strict=True)]
        )
        for t, kind, j in past:
            self.now = t
            if kind == 0:
                self._next_arrival = j
                self._arrive_until(j + 1)
            else:
                self.start((j,))
        self.now = float(now)
        self._next_arrival = n_before
        # expiry alarms that fell before now: correct those predictions at now
        events = self._events
        while events and events[0][0] < now:
            t, kind, _, j = heapq.heappop(events)
            assert kind == _EXPIRE, "a running job ended before the warm-start time"
            if self._state[j] == 2 and self._alarm.get(j) == t:
                del self._alarm[j]
                self._correct(j, float(self.start_time[j]))

    def _arrive_until(self, stop: int) -> None:
        """Submit the jobs from the next arrival up to ``stop`` (exclusive) at ``now``."""
        queue = self._queue
        req = self._req
        state = self._state
        predictor = self.predictor
        pred = predictor.prediction
        count = self._req_count
        t = self.now
        for j in range(self._next_arrival, stop):
            queue[j] = None
            state[j] = 1
            predictor.on_submit(j, t)
            self.first_prediction[j] = pred[j]
            r = req[j]
            c = count.get(r, 0)
            if not c:
                heapq.heappush(self._req_heap, r)
            count[r] = c + 1
        self._next_arrival = stop
        self._qver += 1
        if predictor.revised:
            self._rearm()

    def __setstate__(self, state: dict[str, object]) -> None:
        # a pickled or deep-copied engine: its view's live columns must be views of the
        # copy's arrays, not copies of the original's (the environment must pickle)
        self.__dict__.update(state)
        if hasattr(self.view, "_sim"):  # else the view links itself once it is restored
            self.view._link()

    @property
    def done(self) -> bool:
        """Every job has ended."""
        return self.n_done == len(self.workload)

    @property
    def queue(self) -> Iterable[int]:
        return self._queue.keys()

    @property
    def running(self) -> Iterable[int]:
        return self._running.keys()

    def waiting_jobs(self) -> np.ndarray:
        """Waiting jobs in arrival order, as a new int64 array.

        Jobs are indexed in submission order and arrive in that order, so the waiting
        jobs in arrival order are the indices whose state is "waiting": numpy finds them
        at C speed, where iterating the queue in Python would cost microseconds per job
        on traces whose queue grows to tens of thousands.
        """
        queue = self._queue
        if len(queue) < 512:  # short queues: iterating them beats five numpy calls
            return np.fromiter(queue, dtype=np.int64, count=len(queue))
        state = self._state
        lo = self._queue_lo
        na = self._next_arrival
        while state[lo] != 1:  # jobs below it never wait again: amortised O(1)
            lo += 1
        self._queue_lo = lo
        q = np.flatnonzero(state[lo:na] == 1)
        q += lo
        return q.astype(np.int64, copy=False)

    def has_future_event(self) -> bool:
        """Whether anything is left to happen without a new decision."""
        return bool(self._events) or self._next_arrival < len(self._submit)

    def next_event_time(self) -> float:
        """Time of the next event (inf if none)."""
        t = self._events[0][0] if self._events else np.inf
        if self._next_arrival < len(self._submit):
            t = min(t, self._submit[self._next_arrival])
        return float(t)

    def any_fits(self) -> bool:
        """Whether at least one waiting job fits the free resources now."""
        if not self._queue:
            return False
        if self._fast_fit:
            heap, count = self._req_heap, self._req_count
            while not count[heap[0]]:
                heapq.heappop(heap)
            return heap[0] <= self.cluster.free_procs  # type: ignore[attr-defined, no-any-return]
        fits = self.cluster.fits
        return any(fits(j) for j in self._queue)

    # ----------------------------------------------------------------- events
    def _step_instant(self) -> bool:
        """Handle every event of the next instant; False if there is none."""
        events = self._events
        submit = self._submit
        na = self._next_arrival
        n = len(submit)
        if events:
            t = events[0][0]
            if na < n and submit[na] < t:
                t = submit[na]
        elif na < n:
            t = submit[na]
        else:
            return False
        self.now = t
        predictor = self.predictor
        cluster = self.cluster
        state = self._state
        running = self._running
        # terminations, then expiry alarms (the heap orders kind 0 before kind 1)
        if events and events[0][0] == t:
            ended = False
            while events and events[0][0] == t:
                _, kind, _, j = heapq.heappop(events)
                if kind == _END:
                    del running[j]
                    cluster.release(j)
                    state[j] = 3
                    self._ended.append(j)
                    self.n_done += 1
                    ended = True
                    predictor.on_end(j, t, t - self.start_time[j])
                elif self._alarm.get(j) == t:  # the live alarm (it precedes the job's end)
                    del self._alarm[j]
                    self._correct(j, float(self.start_time[j]))
            if ended:
                self._rver += 1
            if predictor.revised:
                self._rearm()
        # arrivals
        if na < n and submit[na] == t:
            stop = na + 1
            while stop < n and submit[stop] == t:
                stop += 1
            self._arrive_until(stop)
        return True

    def _arm(self, j: int, start: float) -> None:
        """Set the expiry alarm of running job ``j`` if it will outlive its prediction.

        Only the latest alarm of a job is live (``_alarm``); older ones in the heap are
        skipped when they come up.
        """
        self._alarm.pop(j, None)
        alarm = start + float(self.predictor.prediction[j])
        if alarm >= self.end_time[j]:
            return  # it ends first; the alarm would find nothing to correct
        if alarm > self.now:
            self._alarm[j] = alarm
            heapq.heappush(self._events, (alarm, _EXPIRE, self._seq, j))
            self._seq += 1
        else:  # already outlived (e.g. a prediction of 0 s): correct at once
            self._correct(j, start)

    def _correct(self, j: int, start: float) -> None:
        predictor = self.predictor
        old = float(predictor.prediction[j])
        new = float(predictor.on_expire(j, self.now, self.now - start))
        if new > old:  # a correction that does not grow would loop forever
            predictor.revise(j, self.now, new)  # queues j in predictor.revised
            revised = predictor.revised
            if len(revised) == 1 and j in revised:  # the usual case: only this job
                revised.clear()
                self._arm(j, start)
            else:
                self._rearm()

    def _rearm(self) -> None:
        """Re-arm the alarms of running jobs whose prediction the predictor revised."""
        revised = self.predictor.revised
        corrects = self.predictor.corrects
        state = self._state
        while revised:
            j, _ = revised.popitem()
            if corrects and state[j] == 2:
                self._arm(j, float(self.start_time[j]))

    def advance(self, every_event: bool = False) -> bool:
        """Move to the next decision point.

        Args:
            every_event: stop at every instant with a non-empty queue, even when no
                waiting job fits.

        Returns:
            True at a decision point, False once every job has ended.
        """
        while self._step_instant():
            if self._queue and (every_event or self.any_fits()):
                return True
        return False

    # -------------------------------------------------------------- decisions
    def start(self, jobs: Iterable[int]) -> None:
        """Start ``jobs`` now, in the given order.

        Raises:
            InvalidDecisionError: a job is not waiting (never submitted, already
                started or given twice) or does not fit.
        """
        state = self._state
        queue = self._queue
        running = self._running
        cluster = self.cluster
        now = self.now
        predictor = self.predictor
        started = False
        for job in jobs:
            j = int(job)
            if not 0 <= j < len(state) or state[j] != 1:
                what = "no such job" if not 0 <= j < len(state) else _STATE_NAMES[state[j]]
                raise InvalidDecisionError(f"cannot start job {j} at t={now:g}: {what}")
            cluster.allocate(j)
            del queue[j]
            running[j] = None
            state[j] = 2
            started = True
            runtime = self._runtime[j]
            if self.kill_at_estimate and runtime > self._estimate[j]:
                runtime = self._estimate[j]
                self.killed[j] = True
            self.start_time[j] = now
            end = now + runtime
            self.end_time[j] = end
            heapq.heappush(self._events, (end, _END, self._seq, j))
            self._seq += 1
            self._req_count[self._req[j]] -= 1
            predictor.on_start(j, now)
            if predictor.revised:
                self._rearm()
            if predictor.corrects:  # the expiry alarm, if the job will outlive its prediction
                self._arm(j, now)
        if started:
            self._qver += 1
            self._rver += 1

    def run(self, dispatcher: Dispatcher, *, progress: bool | None = None) -> Schedule:
        """Replay the whole workload with ``dispatcher`` and return the schedule.

        Args:
            dispatcher: the policy.
            progress: show a progress bar on stderr; by default only when stderr is a
                terminal and the workload has more than 20,000 jobs.

        Raises:
            InvalidDecisionError: the dispatcher asked for something impossible, or
                started nothing while no event was left to wake it.
        """
        self.reset()
        reset = getattr(dispatcher, "reset", None)
        if callable(reset):
            reset(self.view)
        every_event = bool(getattr(dispatcher, "every_event", False))
        n = len(self.workload)
        if progress is None:
            progress = n > 20_000 and sys.stderr.isatty()
        bar = _progress_bar(n, getattr(dispatcher, "name", "sim")) if progress else None
        last = 0
        view = self.view
        t0 = time.perf_counter()
        while self.advance(every_event):
            self.decisions += 1
            jobs = dispatcher(view)
            if len(jobs):
                self.start(jobs)
            elif not self._running and not self.has_future_event():
                raise InvalidDecisionError(
                    f"dispatcher {getattr(dispatcher, 'name', dispatcher)!r} started nothing at "
                    f"t={self.now:g} with {len(self._queue)} jobs waiting, an idle machine and no "
                    "event left: the simulation would never end"
                )
            if bar is not None and self.n_done - last >= 5000:
                bar.update(self.n_done - last)
                last = self.n_done
        elapsed = time.perf_counter() - t0
        if bar is not None:
            bar.update(self.n_done - last)
            bar.close()
        if not self.done:  # pragma: no cover - guarded by the check above
            raise InvalidDecisionError(f"simulation ended with {n - self.n_done} jobs unfinished")
        schedule = self.schedule(
            policy=getattr(dispatcher, "name", type(dispatcher).__name__), sim_seconds=elapsed
        )
        extras = getattr(dispatcher, "extras", None)
        if callable(extras):
            schedule.extras.update(extras())
        return schedule

    def schedule(self, *, policy: str = "", sim_seconds: float = 0.0) -> Schedule:
        """The schedule so far (complete once :attr:`done`)."""
        extras: dict[str, object] = {}
        return Schedule(
            workload=self.workload,
            start=self.start_time.copy(),
            end=self.end_time.copy(),
            killed=self.killed.copy(),
            first_prediction=self.first_prediction.copy(),
            prediction_changes=list(self.predictor.changes),
            policy=policy,
            predictor=self.predictor.name,
            sim_seconds=sim_seconds,
            decisions=self.decisions,
            extras=extras,
        )


def _progress_bar(total: int, desc: str):  # type: ignore[no-untyped-def]
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, desc=desc, unit="job", file=sys.stderr, leave=False)
