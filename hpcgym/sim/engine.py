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
* a dispatcher sees a read-only :class:`SystemView` and returns the jobs to start now,
  optionally with their placements (a :class:`Decision`); the engine starts them in
  that order, placing a job the dispatcher did not place with the machine's allocation
  policy, and rejects a job that does not fit, an impossible placement, a job that is
  not waiting, or one given twice;
* jobs run for their real run time (``kill_at_estimate`` ends them at their estimate);
* if a decision starts nothing, time moves to the next event; if no event is left and
  jobs still wait, the dispatcher would wait forever and :meth:`Simulator.run` raises.

The machine is a :class:`~hpcgym.machine.Machine` of nodes x resource types; the engine
owns its free matrix and asks the one allocator (:mod:`hpcgym.machine.allocator`) where jobs go
(its kernels through the native core, :mod:`hpcgym.common.native`); no gymnasium, torch or ortools.
"""

from __future__ import annotations

import heapq
import sys
import time
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from hpcgym.common import native
from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError
from hpcgym.machine import UNPLACEABLE_REASONS, Machine, align_requests, unique_rows
from hpcgym.predict import ChangeLog, Predictor, Walltime
from hpcgym.sim import _kernels as ek
from hpcgym.sim.dispatcher import Decision, Dispatcher, DispatcherBase, as_dispatcher
from hpcgym.sim.refusals import refusal
from hpcgym.sim.schedule import Schedule
from hpcgym.sim.view import SystemView
from hpcgym.workloads import Workload, describe_unplaceable

__all__ = ["Simulator"]

_END = 0
_EXPIRE = 1
_WAKE = 2
_INT64 = np.dtype(np.int64)
_PER_RUN = tuple(
    "view _a _mem _submit _runtime _estimate start_time end_time killed first_prediction "
    "_events _alarm _ended".split()
)
"""What :meth:`Simulator.reset` makes anew for a run (it lets the old go first)."""


def _int_vector(a: object) -> bool:
    """Whether ``a`` is a contiguous 1-d int64 array: the kernels' (and the native core's) one type."""
    return type(a) is np.ndarray and a.dtype is _INT64 and a.ndim == 1 and a.flags.c_contiguous


def _floats(values: np.ndarray) -> array:
    """``values`` as a writable float64 :class:`array.array` (items read back as Python floats)."""
    out = array("d")
    out.frombytes(memoryview(np.ascontiguousarray(values, dtype=np.float64)).cast("B"))
    return out


class Simulator:
    """Replays a workload on a machine; a dispatcher decides what starts when.

    Args:
        workload: the jobs.
        machine: the machine; by default ``workload.machine``, else one node of
            ``workload.procs`` processors (:meth:`Machine.processors`).
        predictor: what dispatchers plan with; wall-time (W) by default.
        kill_at_estimate: end jobs at their estimate when they would run longer.

    Raises:
        InvalidConfigError: a job asks for a resource the machine lacks, a chunk no node
            holds, or more than the machine can ever hold at once; the message names the
            job (read the workload with :func:`hpcgym.workloads.fit_workload` to drop and
            count such jobs instead).

    Typical use is :meth:`run`; the Gymnasium environment drives :meth:`advance` and
    :meth:`start` itself, one decision at a time.

    >>> from hpcgym.workloads import load_default
    >>> from hpcgym.baselines import make_policy
    >>> sim = Simulator(load_default().window(500))
    >>> schedule = sim.run(make_policy("fcfs"))
    >>> bool((schedule.start >= schedule.workload.submit).all())
    True
    """

    def __init__(
        self,
        workload: Workload,
        machine: Machine | None = None,
        predictor: Predictor | None = None,
        *,
        kill_at_estimate: bool = False,
    ) -> None:
        self.workload = workload
        if machine is None:
            machine = workload.machine if workload.machine is not None else Machine.processors(workload.procs)
        if not isinstance(machine, Machine):
            raise InvalidConfigError(f"machine must be a Machine, got {type(machine).__name__}")
        self.machine = machine
        self.predictor = predictor if predictor is not None else Walltime()
        self.kill_at_estimate = bool(kill_at_estimate)
        self._requests()
        self.reset()

    def _requests(self) -> None:
        """Align the jobs' requests to the machine; their request shapes for ``any_fits``."""
        w = self.workload
        chunks, per_chunk, reason = align_requests(self.machine, w.resources, w.chunks, w.per_chunk)
        bad = np.flatnonzero(reason)
        if len(bad):
            j = int(bad[0])
            more = f" ({len(bad) - 1} more jobs cannot run either)" if len(bad) > 1 else ""
            raise InvalidConfigError(
                describe_unplaceable(self.machine, w, j, int(reason[j]))
                + f": {UNPLACEABLE_REASONS[int(reason[j])]}{more}; read the workload with "
                "hpcgym.workloads.fit_workload (or the CLI's --machine) so such jobs are dropped and counted"
            )
        # requests as read (amend's ``like``, each reset); the workload's own when alignment
        # changed nothing (an SWF trace on its machine), not a second copy
        if np.array_equal(chunks, w.chunks):
            chunks = w.chunks
        if w.per_chunk.flags.c_contiguous and np.array_equal(per_chunk, w.per_chunk):
            per_chunk = w.per_chunk
        self._chunks = chunks
        self._per_chunk = np.ascontiguousarray(per_chunk)
        # distinct request shapes, smallest first (any_fits stops at the first that fits)
        rows = np.column_stack([chunks, per_chunk]) if len(w) else np.zeros((0, 1 + per_chunk.shape[1]))
        shapes, inverse = unique_rows(rows)
        weight = self.machine.nodes.weight
        size = shapes[:, 0] * (shapes[:, 1:] @ weight) if len(shapes) else np.zeros(0, np.int64)
        order = np.lexsort((*shapes.T[::-1], size))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        self._shape = rank[inverse.reshape(-1)].astype(np.int64, copy=False)
        self._shape_chunks = np.ascontiguousarray(shapes[order, 0])
        self._shape_v = np.ascontiguousarray(shapes[order, 1:])

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Back to time zero: empty machine, nothing submitted."""
        w = self.workload
        n = len(w)
        for name in _PER_RUN:  # the last run's buffers go before the new ones are made
            self.__dict__.pop(name, None)
        self._reset_predictor()
        # per-job values the event loop reads one at a time: Python floats from a packed
        # array (8 bytes a job, a list of floats takes 32), writable for amend()
        self._submit = _floats(w.submit)
        self._runtime = _floats(w.runtime)
        self._estimate = _floats(w.estimate)
        self.start_time = np.full(n, np.nan)
        self.end_time = np.full(n, np.nan)
        self.killed = np.zeros(n, dtype=bool)
        self.first_prediction = np.full(n, np.nan)
        self.now = float(self._submit[0]) if n else 0.0
        self._next_arrival = 0
        self._events: list[tuple[float, int, int, int]] = []
        self._alarm: dict[int, float] = {}  # running job -> time of its live expiry alarm
        self._seq = 0
        self._nq = 0  # waiting jobs
        self._nr = 0  # running jobs
        self._qver = 0
        self._rver = 0
        self._fver = 0
        nodes = self.machine.nodes
        self._mem = ek.build(
            nodes.capacity,
            nodes.weight,
            nodes.exclusive,
            nodes.policy,
            self._chunks,
            self._per_chunk,
            self._shape,
            self._shape_chunks,
            self._shape_v,
        )
        self._a = ek.views(self._mem)
        self._one = np.zeros(1, dtype=np.int64)
        self.n_done = 0
        self._amended = False
        self._ran = False
        self._ended = array("q")  # jobs in termination order
        self.decisions = 0
        self.view = SystemView(self)

    def _reset_predictor(self) -> None:
        self.predictor.reset(self.workload if self.predictor.needs_runtime else self.workload.public)
        # asked at every event: bound once, after reset (a wrapper binds its inner's there)
        self._has_revised = self.predictor.has_revised

    @property
    def free(self) -> np.ndarray:
        """The free matrix ``(nodes, R)`` (read-only view)."""
        return self.view.free

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
        Running jobs are placed by the machine's allocation policy in start order.

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
        state = self._a.state
        while events and events[0][0] < now:
            t, kind, _, j = heapq.heappop(events)
            assert kind == _EXPIRE, "a running job ended before the warm-start time"
            if state[j] == 2 and self._alarm.get(j) == t:
                del self._alarm[j]
                self._correct(j, float(self.start_time[j]))

    def _arrive_until(self, stop: int) -> None:
        """Submit the jobs from the next arrival up to ``stop`` (exclusive) at ``now``."""
        first = self._next_arrival
        native.get(ek.instant)(self._mem, 0, first, stop, False)
        self._nq += stop - first
        self._next_arrival = stop
        self._qver += 1
        self._submitted_queued(first, stop)

    def _submitted_queued(self, first: int, stop: int) -> None:
        """Tell the predictor of the arrivals ``first .. stop - 1`` (already queued)."""
        predictor = self.predictor
        pred = predictor.prediction
        fp = self.first_prediction
        t = self.now
        for j in range(first, stop):
            predictor.on_submit(j, t)
            fp[j] = pred[j]
        if self._has_revised():
            self._rearm()

    def __setstate__(self, state: dict[str, object]) -> None:
        # a pickled or deep-copied engine: its view's live columns must be views of the
        # copy's arrays, not copies of the original's (the environment must pickle)
        self.__dict__.update(state)
        self._a = ek.views(self._mem)
        if hasattr(self.view, "_sim"):  # else the view links itself once it is restored
            self.view._link()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        del state["_a"]  # views of _mem: rebuilt on load
        return state

    @property
    def done(self) -> bool:
        """Every job has ended."""
        return self.n_done == len(self.workload)

    @property
    def queue(self) -> list[int]:
        """Waiting jobs in arrival order."""
        return self.view.queue.tolist()  # type: ignore[no-any-return]

    @property
    def running(self) -> list[int]:
        """Running jobs in start order."""
        return self.view.running.tolist()  # type: ignore[no-any-return]

    def waiting_jobs(self) -> np.ndarray:
        """Waiting jobs in arrival order, as a new int64 array."""
        return self.view.queue.copy()

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
        """Whether at least one waiting job fits the free resources now.

        Checks each distinct request shape among the waiting jobs once, smallest
        first, stopping at the first that fits (one compiled call).
        """
        if not self._nq:
            return False
        return bool(native.get(ek.any_waiting_fits)(self._mem))

    # ----------------------------------------------------------------- events
    def _step_instant(self, check: bool = False) -> int:
        """Handle every event of the next instant.

        Args:
            check: also find out whether a waiting job fits afterwards.

        Returns:
            -1 if no event is left; else 1 if ``check`` found a waiting job that fits,
            0 otherwise.
        """
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
            return -1
        self.now = t
        predictor = self.predictor
        count = 0
        # terminations, then expiry alarms (the heap orders kind 0 before kind 1)
        if events and events[0][0] == t:
            ended = self._ended
            buf = self._a.ended
            while events and events[0][0] == t:
                _, kind, _, j = heapq.heappop(events)
                if kind == _END:
                    buf[count] = j
                    count += 1
                    ended.append(j)
                    predictor.on_end(j, t, t - self.start_time[j])
                elif kind == _EXPIRE and self._alarm.get(j) == t:  # the live alarm (precedes the end)
                    del self._alarm[j]
                    self._correct(j, float(self.start_time[j]))
            if count:
                self.n_done += count
                self._nr -= count
                self._rver += 1
                self._fver += 1
            if self._has_revised():
                self._rearm()
        # arrivals
        stop = na
        if na < n and submit[na] == t:
            stop = na + 1
            while stop < n and submit[stop] == t:
                stop += 1
            self._nq += stop - na
            self._next_arrival = stop
            self._qver += 1
        # one compiled call frees the ended jobs' nodes, queues the arrivals and checks fits
        fit = native.get(ek.instant)(self._mem, count, na, stop, check and self._nq > 0)
        if stop > na:
            self._submitted_queued(na, stop)
        return 1 if fit else 0

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
            predictor.revise(j, self.now, new)  # the predictor notes j as revised
            revised = predictor.take_revised()
            if len(revised) == 1 and revised[0] == j:  # the usual case: only this job
                self._arm(j, start)
            else:
                self._rearm(revised)

    def _rearm(self, revised: list[int] | None = None) -> None:
        """Re-arm the alarms of running jobs whose prediction the predictor revised.

        Args:
            revised: jobs already taken from the predictor; by default this takes them
                (:meth:`Predictor.take_revised`). They are re-armed latest revision
                first, the order this engine has always used.
        """
        predictor = self.predictor
        if revised is None:
            revised = predictor.take_revised()
        corrects = predictor.corrects
        state = self._a.state
        for j in reversed(revised):
            if corrects and state[j] == 2:
                self._arm(j, float(self.start_time[j]))

    def wake_at(self, times: Sequence[float] | np.ndarray) -> None:
        """Hold an instant at each of ``times`` (those before ``now`` are ignored).

        Nothing happens at such an instant but the decision: :meth:`advance` stops there
        as at any event (if a waiting job fits, or with ``every_event``). A dispatcher
        asks for them through :meth:`DispatcherBase.wake_times`.
        """
        ts = np.unique(np.asarray(times, dtype=np.float64).reshape(-1))
        ts = ts[np.isfinite(ts) & (ts >= self.now)]
        if not len(ts):
            return
        events = self._events
        seq = self._seq
        events.extend((t, _WAKE, seq + i, -1) for i, t in enumerate(ts.tolist()))
        self._seq = seq + len(ts)
        heapq.heapify(events)

    def advance(self, every_event: bool = False) -> bool:
        """Move to the next decision point.

        Args:
            every_event: stop at every instant with a non-empty queue, even when no
                waiting job fits.

        Returns:
            True at a decision point, False once every job has ended.
        """
        check = not every_event
        while True:
            fit = self._step_instant(check)
            if fit < 0:
                return False
            if self._nq and (every_event or fit):
                return True

    def advance_until(self, until: float, every_event: bool = False) -> bool:
        """:meth:`advance`, but handling only the instants before ``until``.

        A resource manager in front of the queue (:mod:`hpcgym.baselines.molding`) acts at its own
        instants: it steps the engine up to just before one, decides, and goes on.

        Returns:
            True at a decision point before ``until``; False when the next instant is at
            or after ``until`` (or none is left).
        """
        check = not every_event
        while self.next_event_time() < until:
            fit = self._step_instant(check)
            if fit < 0:
                return False
            if self._nq and (every_event or fit):
                return True
        return False

    def amend(
        self,
        job: int,
        *,
        submit: float | None = None,
        runtime: float | None = None,
        estimate: float | None = None,
        like: int | None = None,
    ) -> None:
        """Change a job that has not been submitted yet, as a resource manager in front of the queue would.

        Args:
            job: the job; it and every later job must not have arrived yet.
            submit: its new submit time, not before ``now`` nor before the previous
                job's (the engine takes arrivals in job order: a later job with an
                earlier submit time must be amended before this one arrives).
            runtime: its new real run time (s, >= 0).
            estimate: its new estimate (s, > 0); the predictor's estimate and its
                prediction before submission are set to it (wall-time's prediction).
            like: take this job's request as read (chunks x per-chunk amounts, even if
                it was amended); both must have the same number of chunks (always so on
                one node of processors).

        :meth:`schedule` then reports the amended jobs (its ``workload`` holds the new
        columns). What the engine runs and places changes (request, run time, submit
        time, the predictor's estimate); the view's ``jobs``, ``submit`` and ``estimate``
        columns and what the dispatcher's hooks saw keep the workload as read (EASY
        reads none of them). :meth:`reset` undoes every amendment.

        Raises:
            InvalidConfigError: the job has arrived, or a value breaks a rule above.
        """
        n = len(self._submit)
        j = int(job)
        if not self._next_arrival <= j < n:
            raise InvalidConfigError(f"amend: job {job} has already arrived (or does not exist)")
        if submit is not None:
            t = float(submit)
            lo = max(self.now, self._submit[j - 1] if j else -np.inf)
            if not (np.isfinite(t) and t >= lo):
                raise InvalidConfigError(
                    f"amend: submit={t:g} for job {j} must be at least {lo:g} (now and the previous "
                    "job's submit time: arrivals stay in job order)"
                )
            self._submit[j] = t
        if runtime is not None:
            if not (np.isfinite(runtime) and runtime >= 0):
                raise InvalidConfigError(f"amend: runtime of job {j} must be >= 0, got {runtime!r}")
            self._runtime[j] = float(runtime)
        if estimate is not None:
            if not (np.isfinite(estimate) and estimate > 0):
                raise InvalidConfigError(f"amend: estimate of job {j} must be > 0, got {estimate!r}")
            self._estimate[j] = float(estimate)
            est = self.predictor.estimate
            if not est.flags.writeable:
                self.predictor.estimate = est = est.copy()
            est[j] = float(estimate)
            self.predictor.prediction[j] = float(estimate)  # a predictor may set it at submission
        if like is not None:
            k = int(like)
            a = self._a
            if self._chunks[k] != a.chunks[j]:
                raise InvalidConfigError(
                    f"amend: job {j} has {a.chunks[j]} chunks and job {k} {self._chunks[k]}; "
                    "a request can only be taken from a job of as many chunks"
                )
            a.per_chunk[j] = self._per_chunk[k]  # k's request as read, even if k was amended
            a.shape[j] = self._shape[k]
        self._amended = True

    def _amended_workload(self) -> Workload:
        """The workload with the columns :meth:`amend` changed."""
        import dataclasses

        w = self.workload
        chunks = np.asarray(self._a.chunks).copy()
        per_chunk = np.asarray(self._a.per_chunk).copy()
        cols: dict[str, Any] = {
            "submit": np.array(self._submit),
            "runtime": np.array(self._runtime),
            "estimate": np.array(self._estimate),
        }
        if w.resources == self.machine.resources:
            cols["per_chunk"] = per_chunk
            cols["chunks"] = chunks
            cols["procs_req"] = chunks * per_chunk[:, 0]
        return dataclasses.replace(w, **cols)

    # -------------------------------------------------------------- decisions
    def start(
        self, jobs: Iterable[int] | np.ndarray, nodes: Sequence[int] | np.ndarray | None = None
    ) -> None:
        """Start ``jobs`` now, in the given order.

        Args:
            jobs: the jobs, or a :class:`Decision` (whose placements are then used).
            nodes: their placements, concatenated in job order (``chunks[j]`` node
                indices for job ``j``, see :class:`Decision`); by default the machine's
                allocation policy places each job in turn.

        Raises:
            InvalidDecisionError: a job is not waiting (never submitted, already
                started or given twice), does not fit, or its given placement is
                impossible (a node that does not exist or would be over-used). The jobs
                before it have started.
        """
        if type(jobs) is Decision:
            if nodes is None:
                nodes = jobs.nodes
            jobs = jobs.jobs
        js = jobs
        if type(js) is tuple and len(js) == 1 and type(js[0]) is int:  # the environment's one job
            js = self._one
            js[0] = jobs[0]  # type: ignore[index]
        elif not _int_vector(js) or js.base is self._mem:
            js = self._job_array(jobs)
        given = nodes is not None
        ns = nodes
        if not given:
            ns = js  # unused by the kernel
        elif not _int_vector(ns):
            ns = np.ascontiguousarray(nodes, dtype=np.int64).reshape(-1)
        now = self.now
        k, code = native.get(ek.commit)(self._mem, self.start_time, now, js, ns, given)
        if k:
            self._qver += 1
            self._rver += 1
            self._fver += 1
            self._nq -= k
            self._nr += k
            predictor = self.predictor
            runtimes = self._runtime
            kill = self.kill_at_estimate
            events = self._events
            has_revised = self._has_revised
            for j in js[:k].tolist():
                runtime = runtimes[j]
                if kill and runtime > self._estimate[j]:
                    runtime = self._estimate[j]
                    self.killed[j] = True
                end = now + runtime
                self.end_time[j] = end
                heapq.heappush(events, (end, _END, self._seq, j))
                self._seq += 1
                predictor.on_start(j, now)
                if has_revised():
                    self._rearm()
                if predictor.corrects:  # the expiry alarm, if the job will outlive its prediction
                    self._arm(j, now)
        if code != ek.OK:
            raise InvalidDecisionError(refusal(self.machine, self._a, self.now, int(js[k]), code, js, ns, k))

    def _job_array(self, jobs: Iterable[int] | np.ndarray) -> np.ndarray:
        """``jobs`` as a new 1-d int64 array (a copy: a slice of ``view.queue`` would change)."""
        if type(jobs) is tuple or type(jobs) is list:
            try:
                return np.array(jobs, dtype=np.int64).reshape(-1)
            except (TypeError, ValueError, OverflowError):
                pass  # not plain integers: the checks below say what is wrong
        js = np.array(jobs if isinstance(jobs, np.ndarray) else list(jobs))
        if len(js) and js.dtype.kind not in "iu":
            raise InvalidDecisionError(f"jobs must be job indices (integers), got {js.dtype} values")
        return js.astype(np.int64).reshape(-1)

    def attach(self, dispatcher: DispatcherBase) -> None:
        """Call a dispatcher's hooks before it decides: reset, see_log, wake_times.

        :meth:`run` calls it after :meth:`reset`; the environment's adapter
        (:class:`hpcgym.env.adapters.DispatcherPolicy`) at an episode's first decision.
        """
        dispatcher.reset(self.view)
        if dispatcher.needs_log:
            dispatcher.see_log(self.workload)
        self.wake_at(dispatcher.wake_times())

    def run(self, dispatcher: Dispatcher, *, progress: bool | None = None, compiled: bool = True) -> Schedule:
        """Replay the whole workload with ``dispatcher`` and return the schedule.

        Args:
            dispatcher: the policy (its hooks are called if it is a
                :class:`DispatcherBase`, see :func:`as_dispatcher`).
            progress: show a progress bar on stderr; by default only when stderr is a
                terminal and the workload has more than 20,000 jobs.
            compiled: let a reference dispatcher replay the whole run in one compiled
                call when the run needs no Python between events (a built-in predictor,
                no amendments; see :mod:`hpcgym.sim.loop`). The schedule is the same either
                way; False forces the Python loop (for comparisons).

        Raises:
            InvalidConfigError: ``dispatcher`` is not usable (see :func:`as_dispatcher`).
            InvalidDecisionError: the dispatcher asked for something impossible, or
                started nothing while no event was left to wake it.
        """
        d = as_dispatcher(dispatcher)
        # untouched since built or reset (no run, instant, wake or amendment): the buffers
        # stay, the predictor and its view are made anew (another simulator may share it)
        if not (self._ran or self._next_arrival or self._events or self._amended or self.decisions):
            self._reset_predictor()
            self.view = SystemView(self)
        else:
            self.reset()
        self._ran = True
        self.attach(d)
        every_event = bool(d.every_event)
        n = len(self.workload)
        bar = None
        if progress or (progress is None and n > 20_000 and sys.stderr.isatty()):
            from tqdm import tqdm  # a dependency, imported only for a bar (import hpcgym stays quick)

            bar = tqdm(total=n, desc=d.name, unit="job", file=sys.stderr, leave=False)
        view = self.view
        t0 = time.perf_counter()
        # the whole loop in one compiled call, if the dispatcher can and nothing needs Python
        looped = compiled and d.run_compiled(self, None if bar is None else bar.update)
        while not looped and self.advance(every_event):
            self.decisions += 1
            decision = d(view)
            if len(decision):
                self.start(decision)
            elif not self._nr and not self.has_future_event():
                raise InvalidDecisionError(
                    f"dispatcher {d.name!r} started nothing at "
                    f"t={self.now:g} with {self._nq} jobs waiting, an idle machine and no "
                    "event left: the simulation would never end"
                )
            if bar is not None and self.n_done - bar.n >= 5000:
                bar.update(self.n_done - bar.n)
        elapsed = time.perf_counter() - t0
        if bar is not None:
            bar.update(self.n_done - bar.n)
            bar.close()
        if not self.done:  # pragma: no cover - guarded by the check above
            raise InvalidDecisionError(f"simulation ended with {n - self.n_done} jobs unfinished")
        # a finished run changes none of these again (reset makes new ones): the schedule
        # takes them as they are
        schedule = self._schedule(d.name, elapsed, copy=False)
        schedule.extras.update(d.extras())
        return schedule

    def schedule(self, *, policy: str = "", sim_seconds: float = 0.0) -> Schedule:
        """The schedule so far (complete once :attr:`done`)."""
        return self._schedule(policy, sim_seconds, copy=True)

    def close(self) -> None:
        """Let go of the engine's buffers once a run is over; :meth:`reset` makes them again.

        A finished run's :class:`Schedule` keeps what it needs; the engine's buffers (tens
        of MB for a full trace) would only take memory while the run is reported and
        after. The view a dispatcher may still hold is emptied too. Until the next
        :meth:`reset`, the engine and its view answer nothing.
        :func:`hpcgym.sim.run_dispatcher` calls it once it has the schedule.
        """
        view = self.__dict__.get("view")
        if view is not None:
            view._unlink()
        for name in _PER_RUN:
            self.__dict__.pop(name, None)

    def _schedule(self, policy: str, sim_seconds: float, *, copy: bool) -> Schedule:
        extras: dict[str, object] = {}
        own = np.copy if copy else np.asarray
        return Schedule(
            workload=self._amended_workload() if self._amended else self.workload,
            start=own(self.start_time),
            end=own(self.end_time),
            killed=own(self.killed),
            first_prediction=own(self.first_prediction),
            prediction_changes=ChangeLog(self.predictor.changes),
            policy=policy,
            predictor=self.predictor.name,
            sim_seconds=sim_seconds,
            decisions=self.decisions,
            extras=extras,
            machine=self.machine,
            placement_ptr=self._a.placement_ptr.copy(),
            placement_nodes=self._a.placement_nodes.copy(),
        )
