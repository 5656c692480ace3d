"""The system state of 003 rebuilt from a log: Table II's features and Table I's histograms.

:class:`LogState` holds a log's jobs with their logged starts and ends; its
:meth:`LogState.features` computes, for each job, the 16 features (:data:`FEATURES`) and the
six histograms of the queue and the running jobs at its submission, in one compiled sweep.
:func:`_state_features` is shared with the online predictor
(:mod:`hpcgym.predict.waitpred.online`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.histograms import histograms as _histograms
from hpcgym.workloads import Workload

FEATURES = (
    "req_size",
    "ert",
    "queue_size",
    "queue_ert",
    "queue_elapsed_wait",
    "running_size",
    "running_ert",
    "running_elapsed",
    "user_queue_hours",
    "user_queue_size",
    "user_queue_ert",
    "user_queue_jobs",
    "user_running_hours",
    "user_running_size",
    "user_running_ert",
    "user_running_jobs",
)
"""The 16 features of 003 Table II, in its order (sums over the queue/running sets)."""


@dataclass(frozen=True, eq=False)
class LogState:
    """The jobs of an SWF log with their logged start and end, for rebuilding the system state.

    Attributes:
        name: the trace's name.
        procs: machine size in processors.
        submit, start, end, size, estimate, user, wait, runtime: one entry per job kept,
            in submit order (ties in log order).
        dropped_no_wait: jobs dropped because the log gives no wait (field 3 < 0).
    """

    name: str
    procs: int
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    size: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    wait: np.ndarray
    runtime: np.ndarray
    dropped_no_wait: int = 0
    _features: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, init=False, repr=False
    )

    @classmethod
    def from_workload(cls, w: Workload) -> LogState:
        """The log state of ``w``; jobs without a logged wait (field 3 < 0) are dropped and counted."""
        keep = w.log_wait >= 0
        return cls.from_columns(
            w.submit[keep],
            w.log_wait[keep],
            w.runtime[keep],
            w.procs_req[keep],
            w.estimate[keep],
            w.user[keep],
            procs=int(w.procs),
            name=w.name,
            dropped_no_wait=int((~keep).sum()),
        )

    @classmethod
    def from_columns(
        cls,
        submit: Any,
        wait: Any,
        runtime: Any,
        size: Any,
        estimate: Any,
        user: Any,
        *,
        procs: int,
        name: str = "log",
        dropped_no_wait: int = 0,
    ) -> LogState:
        """A log state from columns in submit order (waits and run times >= 0, seconds).

        Raises:
            InvalidConfigError: columns of different lengths, submit times out of order,
                or a negative wait or run time.
        """
        cols = [np.asarray(c, np.float64) for c in (submit, wait, runtime, estimate)]
        sub, wt, rt, est = cols
        if len({len(c) for c in (*cols, np.asarray(size), np.asarray(user))}) != 1:
            raise InvalidConfigError("LogState.from_columns: the columns must have one entry per job")
        if np.any(np.diff(sub) < 0):
            raise InvalidConfigError("LogState.from_columns: submit times must be in order")
        if np.any(wt < 0) or np.any(rt < 0):
            raise InvalidConfigError("LogState.from_columns: waits and run times must be >= 0")
        return cls(
            name=name,
            procs=int(procs),
            submit=sub,
            start=sub + wt,
            end=sub + wt + rt,
            size=np.asarray(size, np.int64),
            estimate=est,
            user=np.asarray(user, np.int64),
            wait=wt,
            runtime=rt,
            dropped_no_wait=dropped_no_wait,
        )

    def __len__(self) -> int:
        return len(self.submit)

    def at(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the queued and running jobs when job ``j`` is submitted.

        Queued: logged before ``j`` and start >= ``submit[j]``; running: start <
        ``submit[j]`` < end. Events at one instant: ends, then submissions, then starts.
        """
        t = self.submit[j]
        before = np.arange(len(self)) < j
        queue = np.flatnonzero(before & (self.start >= t))
        running = np.flatnonzero((self.start < t) & (self.end > t))
        return queue, running

    def size_bins(self, bins: int) -> np.ndarray:
        """Each job's request-size bin: ``log2(size) / log2(machine)`` in ``bins`` bins."""
        scale = bins / np.log2(self.procs) if self.procs > 1 else 0.0
        b = (np.log2(np.maximum(self.size, 1)) * scale).astype(np.int64)
        return np.minimum(b, bins - 1)

    def features(self, last: int, bins: int, max_time_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Table II features ``(last, 16)`` and Table I histograms ``(last, 6, bins)`` of the first jobs.

        One sweep over the log's events in time order (compiled); each job's row reads
        only the state at its submission. The result is kept for the next call.
        """
        last = min(int(last), len(self))
        key = (last, int(bins), float(max_time_s))
        if key in self._features:
            return self._features[key]
        n = len(self)
        idx = np.arange(n)
        start_order = np.lexsort((idx, self.start))
        end_order = np.lexsort((idx, self.end))
        summary = np.zeros((last, len(FEATURES)))
        hist = np.zeros((last, 6, bins))
        _sweep(
            self.submit,
            self.start,
            self.end,
            self.size,
            self.estimate,
            self.user,
            start_order,
            end_order,
            self.size_bins(bins),
            1.0 / np.log1p(max_time_s),
            summary,
            hist,
        )
        self._features[key] = (summary, hist)
        return summary, hist


@njit(cache=True)
def _remove(lst: np.ndarray, pos: np.ndarray, count: int, i: int) -> int:
    p = pos[i]
    last = lst[count - 1]
    lst[p] = last
    pos[last] = p
    pos[i] = -1
    return count - 1


@njit(cache=True)
def _sweep(
    submit: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    user: np.ndarray,
    start_order: np.ndarray,
    end_order: np.ndarray,
    size_bin: np.ndarray,
    inv_log_t: float,
    summary: np.ndarray,
    hist: np.ndarray,
) -> None:
    n = len(submit)
    qlist = np.empty(n, np.int64)
    qpos = np.full(n, -1, np.int64)
    rlist = np.empty(n, np.int64)
    rpos = np.full(n, -1, np.int64)
    no_bins = np.empty(0, np.int64)  # durations binned by histograms itself
    nq = 0
    nr = 0
    sp = 0
    ep = 0
    for j in range(summary.shape[0]):
        t = submit[j]
        while sp < n and start[start_order[sp]] < t:
            i = start_order[sp]
            sp += 1
            if qpos[i] >= 0:
                nq = _remove(qlist, qpos, nq, i)
            if end[i] > t:
                rlist[nr] = i
                rpos[i] = nr
                nr += 1
        while ep < n and end[end_order[ep]] <= t:
            i = end_order[ep]
            ep += 1
            if rpos[i] >= 0:
                nr = _remove(rlist, rpos, nr, i)
        _state_features(summary[j], j, t, qlist[:nq], rlist[:nr], size, estimate, submit, start, user)
        _histograms(hist[j], qlist[:nq], rlist[:nr], t, size_bin, estimate, submit, start, inv_log_t, no_bins)
        qlist[nq] = j
        qpos[j] = nq
        nq += 1


@njit(cache=True)
def _state_features(
    f: np.ndarray,
    j: int,
    t: float,
    queue: np.ndarray,
    running: np.ndarray,
    size: np.ndarray,
    estimate: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    user: np.ndarray,
) -> None:
    """Add job ``j``'s Table II features at time ``t`` to ``f`` (zeros), given the queued and running jobs."""
    f[0] = size[j]
    f[1] = estimate[j]
    u = user[j]
    for i in queue:
        f[2] += size[i]
        f[3] += estimate[i]
        f[4] += t - submit[i]
        if user[i] == u:
            f[8] += size[i] * estimate[i] / 3600.0
            f[9] += size[i]
            f[10] += estimate[i]
            f[11] += 1.0
    for i in running:
        f[5] += size[i]
        f[6] += estimate[i]
        f[7] += t - start[i]
        if user[i] == u:
            f[12] += size[i] * estimate[i] / 3600.0
            f[13] += size[i]
            f[14] += estimate[i]
            f[15] += 1.0
