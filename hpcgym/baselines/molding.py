"""Job molding and delayed submission: 003's resource manager in front of EASY (sections IV, V-C, V-D).

Hariharan et al. (003) put a resource manager between the users and the batch system.
For each job a user submits it predicts, for each request size the user has used
before, the job's queue wait (:mod:`hpcgym.predict.waitpred`'s predictors on the live system
state) and a rangeSet of run times (:mod:`hpcgym.predict.rangesets`), and submits the job with
the size whose rangeSet of response times scores best (**molding**, IV-A); with
**delayed submission** (IV-B) it may also hold the job until a predicted better time.
EASY backfilling (the ``easy`` preset, wall-time estimates) schedules underneath, on
hpcgym's one engine: the manager steps it up to each of its own instants
(:meth:`~hpcgym.sim.Simulator.advance_until`) and changes jobs before they reach the
queue (:meth:`~hpcgym.sim.Simulator.amend`).

What the paper says, and what hpcgym chooses where it leaves a detail open:

* **jobs** (V): the first ``history`` (10,000) jobs of the trace run unmanaged and
  fill the predictors' histories; the next ``jobs`` are managed (20,000 for molding,
  6,000 for delayed submission); later jobs are not simulated. The baseline is plain
  EASY on the same window with the jobs as logged. Means are over the managed jobs.
* **candidate sizes** (IV-A): the distinct request sizes of the user's earlier jobs in
  the trace (as logged), and the job's own. A size is scored only if its tuple (user,
  size, the job's queue and group) has a terminated job in the rangeSet history. Molding
  compares the response rangeSets of the sizes, so the job's own size must be among the
  scored ones: a job whose own size has no rangeSet keeps its request, as does a job
  with no scoreable size (both counted in ``no_candidate``). Without this rule
  (``score_own=False``, the behaviour before) a job moves to the only size with a
  prediction unopposed: on SDSC-Par a burst of 854 jobs of one user (8 processors, 11
  min each as logged, no earlier job of that tuple ended yet) all went to 64 processors,
  where that user's jobs ran 266 min, and the queue grew without bound.
* **score** (IV-A, eq. 5): each size's response rangeSet is its run-time rangeSet
  (at the predicted load) shifted by its predicted wait; all ranges of a job's
  candidates are divided by the largest upper limit among them, and a rangeSet scores
  ``sum_i integral_{l_i}^{u_i} (1 - t) dt / sum_i (u_i - l_i)`` (normalised by its
  coverage, as the paper says), i.e. ``1 -`` the length-weighted mean of the range
  midpoints. A range of zero length counts with a length of 1e-9 (a rangeSet of points
  scores ``1 -`` the mean of its points). The probabilities do not enter (eq. 5 has
  none). The highest score wins; ties keep the job's own size, else the smaller size.
* **molded estimate** (V-C): *maxPrevious* is the largest estimate of the user's
  earlier jobs of the chosen size; *maxLimit* the largest estimate of any job submitted
  so far (the site's limit is not in the SWF header). Shrunk: the smaller of the two
  that exceeds the logged estimate (neither: the logged estimate); expanded: the logged
  estimate.
* **molded run time** (V-C): drawn by roulette wheel, every earlier job of the user at
  the chosen size (as logged) equally likely, with a ``numpy.random.Generator`` seeded
  by ``seed``. This models the job's real run time at its new size, not a prediction,
  so it reads the log's run times of earlier submissions whether or not they ended.
  The job takes the request of the latest such job (:meth:`Simulator.amend`'s ``like``).
  This is the default (``runtime_model="003"``), as 003 states it. It does not keep a
  job's work: the user's earlier jobs at another size are often other applications
  (mostly shorter ones), so the managed run may have far less work to do than the
  baseline, and its lower response is partly work removed.
* **work-conserving run time** (``runtime_model="amdahl"``, not in 003): the job's own
  logged run time times :func:`~hpcgym.baselines.molding_choice.amdahl_factor` from its
  logged size to the new one, with serial fraction ``serial_fraction`` (0: linear
  speedup, the job's processor-seconds unchanged); its estimate is scaled by the same
  factor (the user asks for the same work), in place of V-C's estimate rule, both when
  the manager scores a size (the predicted waits' features) and when it submits the job.
  The rangeSets the manager scores sizes with still come from the user's history at
  each size: the manager's beliefs do not change, only what the molded job then does.
* **CPU-hours and utilization** (003 III-A, Fig. 6): ``cpu_hours`` sums size times run
  time of the managed jobs (managed and baseline); ``period_utilization`` is 003's
  load, CPU-hours used for executions over CPU-hours available, ``T_e / (I P)``, over
  the interval ``I`` from the first managed job's submission to the run's last end
  (every job's execution clipped to it, the history's too). ``utilization`` is the same
  over the whole simulated window (from the first job's submission).
* **queue-wait prediction**: ``apq`` (default), ``ibl`` or ``qbets`` of
  :mod:`hpcgym.predict.waitpred` with their default parameters (no tuning), on the features
  of the live state: the engine's queue and running jobs with their (molded) sizes and
  estimates, elapsed times from their submission to the queue. The history is the last
  ``APQConfig.history`` jobs to start in this simulation, each with its features at its
  own submission and its wait in the queue. A decision at time ``t`` sees the state
  before the engine handles instant ``t`` (a job ending at ``t`` still runs).
* **delayed submission** (IV-B): with the hold queue empty, a job arriving at ``c``
  gets ``predicted_cur``, the point prediction (wait + probability-weighted range
  medians) of its best size now. The future time: the earliest predicted end after
  ``c`` of a running job (start + its rangeSet point prediction, capped by its
  estimate), moved on to the next predicted end while that comes within ``settle``
  (5 %) of the time from ``c``; the state then: those jobs gone, the queue as it is,
  the load *futureLoad* (:meth:`~hpcgym.predict.rangesets.RangeSetPredictor.load_until`, the
  running jobs counted until their predicted ends). ``predicted_future`` is the delay
  plus the best point prediction in that state. The job is held if
  ``predicted_future < (1 - threshold) * predicted_cur`` (30 %). Jobs arriving while
  a job is held join the hold queue; at the future time they are all submitted, in
  arrival order (003's "same temporal relationships": the order is kept, not the gaps,
  which would hold every later job back too), each molded then with the state of that
  instant. Wait and response count from the submission to the manager (the hold
  included).

Counts reported: ``molded`` (``expanded``, ``shrunk``), ``delayed`` (held), and the jobs
the trace reader dropped (the load report), which no simulation sees.

>>> from hpcgym.workloads import load_default
>>> r = run_managed(load_default().window(700), MoldingConfig(history=500, jobs=200, wait_predictor="qbets"))
>>> r.summary()["jobs"], r.molded <= 200
(200, True)
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Any

import numpy as np

from hpcgym.baselines.molding_choice import UserHistory, amdahl_factor, choose_size, settle_time
from hpcgym.baselines.molding_config import MoldingConfig
from hpcgym.baselines.molding_result import MoldingResult
from hpcgym.baselines.molding_waits import LiveWaitPredictor, _Columns
from hpcgym.baselines.presets import make_policy
from hpcgym.baselines.run import run_policy
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import RangeSetPredictor, Walltime
from hpcgym.sim import DispatcherBase, Simulator, as_dispatcher
from hpcgym.workloads import Workload

__all__ = ["run_managed", "step_engine"]


# ------------------------------------------------------------------ the manager
class _Observer(Walltime):
    """The engine's predictor: wall-time for EASY, and the manager's eyes on the engine's events."""

    def __init__(self, manager: _Manager) -> None:
        super().__init__()
        self._m = manager

    def on_submit(self, job: int, now: float) -> None:
        self._m.submitted(job, now)

    def on_start(self, job: int, now: float) -> None:
        self._m.started(job, now)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        self._m.rset.on_end(job, now, runtime)


class _Manager:
    """The resource manager of one run: predictors, the user's history and the decisions."""

    def __init__(self, w: Workload, cfg: MoldingConfig) -> None:
        self.w = w
        self.cfg = cfg
        n = len(w)
        self.rng = np.random.default_rng(cfg.seed)
        self.rset = RangeSetPredictor(**dataclasses.asdict(cfg.rangeset))
        self.waits = LiveWaitPredictor(cfg.wait_predictor, cfg.wait, n, int(w.procs))
        size = np.asarray(w.procs_req, np.int64).copy()
        self.cols = _Columns(
            size=size,
            estimate=np.asarray(w.estimate, np.float64).copy(),
            user=np.asarray(w.user, np.int64),
            submit=np.asarray(w.submit, np.float64).copy(),
            start=np.full(n, np.nan),
            size_bin=self.waits.size_bins(size),
        )
        self.sim = Simulator(w, predictor=_Observer(self))
        self.rset.reset(w.public)
        self.rset.estimate = self.rset.estimate.copy()
        self.users = UserHistory(w)
        self.decide_seconds = 0.0
        self.decisions = 0
        self.no_candidate = 0

    # ---- the engine's events
    def submitted(self, job: int, now: float) -> None:
        self.rset.on_submit(job, now)
        sim = self.sim
        q = sim.view.queue
        f, hist = self.waits.state(now, int(self.cols.user[job]), q[q < job], sim.view.running, self.cols)
        f[0], f[1] = self.cols.size[job], self.cols.estimate[job]
        self.waits.record(job, f, hist)

    def started(self, job: int, now: float) -> None:
        self.rset.on_start(job, now)
        self.cols.start[job] = now
        self.waits.started(job, now - self.cols.submit[job])

    # ---- a decision
    def evaluate(
        self, job: int, now: float, queue: np.ndarray, running: np.ndarray, load: float
    ) -> tuple[int, float, float] | None:
        """``(size, estimate, point response)`` of the best size in a state; None: no scoreable
        size, or (``score_own``) none for the job's own size."""
        w, cols = self.w, self.cols
        own = int(w.procs_req[job])
        q, g = int(w.queue[job]), int(w.group[job])
        user = int(w.user[job])
        sizes, ests, sets = [], [], []
        for s in self.users.candidates(job):  # the own size first
            rs = self.rset.rangeset_at(self.rset.tuple_key(user, s, q, g), load)
            if rs is None:
                if s == own and self.cfg.score_own:
                    return None
                continue
            sizes.append(s)
            ests.append(self.estimate(job, s))
            sets.append(rs)
        if not sets:
            return None
        base, hist = self.waits.state(now, user, queue, running, cols)
        targets = np.tile(base, (len(sizes), 1))
        targets[:, 0], targets[:, 1] = sizes, ests
        pw = self.waits.predict(targets, hist)
        order = np.lexsort((np.array(sizes), np.array([s != own for s in sizes])))
        best_i, _ = choose_size([sets[i] for i in order], pw[order])
        i = int(order[best_i])
        return sizes[i], ests[i], float(pw[i] + sets[i].point)

    def estimate(self, job: int, size: int) -> float:
        """``job``'s estimate molded to ``size``: 003 V-C's rule, or (``amdahl``) scaled as its run time."""
        if self.cfg.runtime_model == "003":
            return self.users.estimate(job, size)
        own = int(self.w.procs_req[job])
        return float(self.w.estimate[job]) * amdahl_factor(own, size, self.cfg.serial_fraction)

    def molded_runtime(self, job: int, size: int) -> tuple[float, int]:
        """``(run time, donor)`` of ``job`` molded to ``size``: 003's roulette wheel, or (``amdahl``)
        its own run time scaled; the donor is the earlier job whose request it takes."""
        if self.cfg.runtime_model == "003":
            return self.users.draw(job, size, self.rng)
        own = int(self.w.procs_req[job])
        scaled = float(self.w.runtime[job]) * amdahl_factor(own, size, self.cfg.serial_fraction)
        return scaled, self.users.latest(job, size)

    def mold(self, job: int, now: float) -> int:
        """Choose ``job``'s size now and amend it; returns -1 shrunk, 0 kept, 1 expanded."""
        t0 = time.perf_counter()
        view = self.sim.view
        best = self.evaluate(job, now, view.queue, view.running, self.rset.target_load(now))
        self.decisions += 1
        out = 0
        if best is None:
            self.no_candidate += 1
        elif best[0] != int(self.w.procs_req[job]):
            size, est, _ = best
            runtime, donor = self.molded_runtime(job, size)
            self.sim.amend(job, runtime=runtime, estimate=est, like=donor)
            self.cols.size[job] = size
            self.cols.size_bin[job] = self.waits.size_bins(np.array([size]))[0]
            self.cols.estimate[job] = est
            self.rset.resize(job, size)
            self.rset.estimate[job] = est
            out = 1 if size > int(self.w.procs_req[job]) else -1
        self.decide_seconds += time.perf_counter() - t0
        return out

    def hold_until(self, job: int, now: float) -> float:
        """003 IV-B: the time to hold ``job`` until, or ``now`` to submit it at once."""
        t0 = time.perf_counter()
        view = self.sim.view
        queue, running = view.queue, view.running
        cur = self.evaluate(job, now, queue, running, self.rset.target_load(now))
        out = now
        if cur is not None and len(running):
            pred = np.minimum(np.asarray(self.rset.prediction)[running], self.cols.estimate[running])
            ends = self.cols.start[running] + pred
            t = settle_time(now, ends, self.cfg.settle)
            if np.isfinite(t):
                stay = running[ends > t]
                expected = float(
                    (self.cols.size[running] * np.clip(np.minimum(ends, t) - now, 0.0, None)).sum()
                )
                load = self.rset.load_until(now, t, expected)
                fut = self.evaluate(job, t, queue, stay, load)
                if fut is not None and (t - now) + fut[2] < (1.0 - self.cfg.threshold) * cur[2]:
                    out = t
        self.decide_seconds += time.perf_counter() - t0
        return out


def _utilization(schedule: Any, since: float | None = None) -> float:
    """Processor-seconds used over those available, from ``since`` (default: the first
    submission) to the last end; executions are clipped to that interval (003 III-A's load)."""
    w = schedule.workload
    t0 = float(w.submit.min()) if since is None else float(since)
    t1 = float(schedule.end.max())
    used = np.clip(schedule.end, t0, t1) - np.clip(schedule.start, t0, t1)
    busy = float((np.asarray(w.procs_req) * used).sum())
    return busy / (w.procs * (t1 - t0)) if t1 > t0 else float("nan")


def _cpu_hours(size: np.ndarray, runtime: np.ndarray) -> float:
    return float((np.asarray(size, np.float64) * runtime).sum() / 3600.0)


# ------------------------------------------------------------------ running
def step_engine(sim: Simulator, dispatcher: DispatcherBase, until: float = np.inf) -> None:
    """Run ``sim`` with ``dispatcher`` over every instant before ``until`` (all: to the end)."""
    view = sim.view
    every = bool(dispatcher.every_event)
    while sim.advance_until(until, every) if until < np.inf else sim.advance(every):
        sim.decisions += 1
        decision = dispatcher(view)
        if len(decision):
            sim.start(decision)


def run_managed(
    workload: Workload, config: MoldingConfig | None = None, *, progress: bool = False
) -> MoldingResult:
    """Run the resource manager over ``workload`` and plain EASY beside it (003 V-C, V-D).

    Args:
        workload: the trace (its first ``history + jobs`` jobs are simulated).
        config: what the manager does (:class:`MoldingConfig`).
        progress: a progress bar over the managed jobs on stderr, when stderr is a terminal.

    Raises:
        InvalidConfigError: the trace has no managed job (``history`` is too large).
    """
    from tqdm import tqdm

    cfg = config if config is not None else MoldingConfig()
    n = min(len(workload), cfg.history + cfg.managed)
    if n <= cfg.history:
        raise InvalidConfigError(
            f"history={cfg.history}: the trace {workload.name!r} has {len(workload):,} jobs, "
            "none left to manage; use a longer trace or a smaller history"
        )
    w = workload.window(n)
    t0 = time.perf_counter()
    base = run_policy(w, "easy").schedule
    base_seconds = time.perf_counter() - t0
    m = _Manager(w, cfg)
    sim = m.sim
    d = as_dispatcher(make_policy("easy"))
    sim.attach(d)
    orig_submit = np.asarray(w.submit, np.float64)
    hold = np.zeros(n)
    nexts = cfg.history  # next job to reach the manager
    held: list[int] = []  # the hold queue, arrival order
    release = np.inf
    molded = [0, 0]  # shrunk, expanded
    delayed = 0
    t0 = time.perf_counter()

    with tqdm(
        total=n - cfg.history,
        desc=f"{cfg.mode} {w.name}",
        unit="job",
        file=sys.stderr,
        leave=False,
        disable=None if progress else True,  # None: drawn only when stderr is a terminal
    ) as bar:
        while nexts < n or held:
            t = min(orig_submit[nexts] if nexts < n else np.inf, release)
            step_engine(sim, d, t)
            if release <= t:  # release first: a job arriving at the release time is not held
                for j in held:
                    sim.amend(j, submit=release)
                    m.cols.submit[j] = release
                    hold[j] = release - orig_submit[j]
                    r = m.mold(j, release)
                    if r:
                        molded[r > 0] += 1
                held, release = [], np.inf
                continue
            j = nexts
            nexts += 1
            bar.update(1)
            m.users.see_until(j)
            if held:
                sim.amend(j, submit=release)
                held.append(j)
                continue
            if cfg.mode == "delay":
                until = m.hold_until(j, t)
                if until > t:
                    sim.amend(j, submit=until)
                    held, release = [j], until
                    delayed += 1
                    continue
            r = m.mold(j, t)
            if r:
                molded[r > 0] += 1
        step_engine(sim, d)
    managed_seconds = time.perf_counter() - t0
    sched = sim.schedule(policy="easy", sim_seconds=managed_seconds)
    jobs = np.arange(cfg.history, n)
    report = workload.report
    size = np.asarray(sched.workload.procs_req)[jobs]
    first = float(orig_submit[cfg.history])
    return MoldingResult(
        trace=workload.name,
        mode=cfg.mode,
        config=cfg,
        jobs=jobs,
        baseline_wait=base.wait[jobs],
        baseline_runtime=base.runtime[jobs],
        wait=sched.start[jobs] - orig_submit[jobs],
        runtime=sched.runtime[jobs],
        original_size=np.asarray(w.procs_req)[jobs],
        size=size,
        hold=hold[jobs],
        molded=molded[0] + molded[1],
        expanded=molded[1],
        shrunk=molded[0],
        delayed=delayed,
        no_candidate=m.no_candidate,
        jobs_dropped=report.jobs_dropped if report is not None else 0,
        simulated=n,
        decisions=m.decisions,
        decide_seconds=m.decide_seconds,
        sim_seconds={"managed": managed_seconds, "baseline": base_seconds},
        utilization={"managed": _utilization(sched), "baseline": _utilization(base)},
        cpu_hours={
            "managed": _cpu_hours(size, sched.runtime[jobs]),
            "baseline": _cpu_hours(np.asarray(w.procs_req)[jobs], base.runtime[jobs]),
        },
        period_utilization={"managed": _utilization(sched, first), "baseline": _utilization(base, first)},
        schedule=sched,
    )
