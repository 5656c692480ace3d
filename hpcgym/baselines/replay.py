"""Replay of the recorded schedule: every job starts when the log says it started.

Hariharan et al. (003) evaluate their wait predictions on the system as it ran, and
Galleguillos et al. (2019, 002) compare their dispatchers with the logged PBS schedule.
:class:`Replay` is that schedule as a dispatcher: job ``j`` is *due* at its logged start,
``submit[j] + log_wait[j]`` (SWF field 3), and starts then.

The engine never over-allocates, and PWA logs sometimes run more processors at an
instant than the machine size they state (or the engine's request, SWF field 8, is
larger than what the log allocated, field 5). What hpcgym does then:

* a due job starts at its logged start if it fits; otherwise at the earliest later
  instant at which it fits. At every decision the due jobs are taken in order of their
  logged start and **every one that fits starts** (list scheduling, no reservation): a
  late job does not hold back the later ones, so one overcommitted instant does not
  delay the rest of the log. The log does not say in which order the jobs of one
  instant started; ties go jobs of zero logged run time first, then arrival order, so
  that those end at that same instant and free their processors for the others (in
  that order any log that fits a one-node machine is reproduced exactly,
  ``tests/baselines/test_replay.py``);
* each such delay is counted: ``delayed_jobs``, ``total_delay_s``, ``max_delay_s``;
  ``exact_jobs`` is how many started exactly at their logged start (``exact_share`` of
  all jobs). The log itself is also checked, independently of the run: the
  ``log_overcommit_instants`` are the instants that start a job at which the
  logged schedule asks, in the machine's first resource type (the processors of an SWF
  trace), for more than the machine holds (:func:`~hpcgym.workloads.logged.log_overcommit`), and
  ``log_overcommit_seconds`` how long that lasted in all;
* a job with an unknown wait (field 3 = -1, or a negative wait) is due at its
  submission: it starts as soon as it fits among the due jobs, and is counted in
  ``unknown_wait_jobs`` (it counts as exact if it starts at its submission).

Everything is in ``Schedule.extras["replay"]``, which ``hpcgym simulate --policy replay``
prints. The predictor the run plans with changes nothing: replay reads no prediction.
Replay is a run of the engine (:meth:`hpcgym.sim.Simulator.run`); the Gymnasium
environment does not drive it (the agent decides there, not the log).

>>> import dataclasses
>>> from hpcgym.workloads import Workload
>>> from hpcgym.sim import Simulator
>>> w = Workload.from_columns([0, 0, 13], [5, 5, 5], [4, 4, 2], [5, 5, 5], procs=4)
>>> w = dataclasses.replace(w, log_wait=np.array([3.0, 3.0, 0.0]))  # the log ran jobs 0 and 1 together
>>> s = Simulator(w).run(Replay())
>>> s.start.tolist(), s.extras["replay"]["delayed_jobs"], s.extras["replay"]["log_overcommit_instants"]
([3.0, 8.0, 13.0], 1, 1)
"""

from __future__ import annotations

import numpy as np

from hpcgym.baselines._kernels import ARRIVAL, load_kernels, order_decide
from hpcgym.baselines.dispatchers import _Buffers
from hpcgym.sim import Decision, DispatcherBase, SystemView
from hpcgym.workloads import Workload, log_overcommit, logged_start


class Replay(DispatcherBase):
    """Start every job at its logged start (submit + SWF wait), or as soon after as it fits.

    See the module docstring for what happens when the log does not fit the machine. It
    reads the logged run times only to check the log's own usage against the machine
    (``log_overcommit_*``) and to order the jobs logged at one instant.
    """

    name = "replay"
    needs_log = True

    def __init__(self) -> None:
        self._out = _Buffers()
        self._due = np.zeros(0)
        self._unknown = np.zeros(0, dtype=bool)
        self._started = np.zeros(0)
        self._overcommit = (0, 0.0)
        self._view: SystemView | None = None

    def reset(self, view: SystemView) -> None:
        self._view = view
        load_kernels("order")
        self._out.ready(view)
        n = len(view.submit)
        # until the engine shows the log (see_log): every wait unknown, due at submission
        self._due = np.asarray(view.submit, dtype=np.float64).copy()
        self._unknown = np.ones(n, dtype=bool)
        self._started = np.full(n, np.nan)
        self._overcommit = (0, 0.0)
        self._rank = np.arange(n)
        self._size = np.asarray(view.request[:, 0], dtype=np.float64)
        self._capacity = float(view.machine.total[0])

    def see_log(self, workload: Workload) -> None:
        self._due, self._unknown = logged_start(workload)
        runtime = np.asarray(workload.runtime, dtype=np.float64)
        # the order of due jobs: logged start, then zero-length jobs, then arrival
        self._rank = np.lexsort((np.arange(len(runtime)), runtime > 0, self._due)).argsort()
        self._overcommit = log_overcommit(self._due, runtime, self._size, self._capacity)

    def wake_times(self) -> np.ndarray:
        return self._due

    def __call__(self, view: SystemView) -> Decision | tuple[()]:
        if view is not self._view:  # called without reset (a plain callable's wrapper): no log
            self.reset(view)
        queue = view.queue
        ready = queue[self._due[queue] <= view.now]
        if not len(ready):
            return ()
        ready = ready[np.argsort(self._rank[ready])]
        out = self._out.ready(view)
        # order_kernel walks the order it is given only: here the due jobs, not the whole queue
        d = out.decision(*order_decide(*view.kernel_inputs(live=True), ready, True, ARRIVAL, out.out))
        self._started[d.jobs] = view.now
        return d

    def extras(self) -> dict[str, object]:
        """The replay's counts (see the module docstring), under ``"replay"``."""
        delay = self._started - self._due
        n = len(delay)
        late = delay > 0
        exact = int((delay == 0).sum())
        return {
            "replay": {
                "jobs": n,
                "exact_jobs": exact,
                "exact_share": exact / n if n else 1.0,
                "delayed_jobs": int(late.sum()),
                "total_delay_s": float(delay[late].sum()),
                "max_delay_s": float(np.nanmax(delay)) if n else 0.0,
                "unknown_wait_jobs": int(self._unknown.sum()),
                "log_overcommit_instants": self._overcommit[0],
                "log_overcommit_seconds": self._overcommit[1],
            }
        }
