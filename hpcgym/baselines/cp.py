"""Constraint-programming dispatchers on OR-Tools CP-SAT: HCP, PCP (002) and CPH (001).

Galleguillos et al. (2019, "002") describe two CP dispatchers and three improved
versions of each (002 Table 1); Galleguillos et al. (2017, "001") use the hybrid one as
CPH. At each dispatching time ``t`` a CP model schedules the waiting jobs after the
running ones; only the jobs the solution starts at ``t`` are dispatched, the others wait
with their original submit time.

* **HCP** (hybrid, 002 section 2.2): one ``cumulative`` per resource type over the
  whole machine (every node's amount of the type pooled); running jobs are fixed
  intervals up to their predicted end; objective ``sum_i max(ewt) / ewt_i * (s_i - q_i)``.
  The jobs the schedule starts at ``t`` are then allocated with PRB's best-fit, in PRB
  priority order; a job that cannot be placed (pooling hides fragmentation) waits for
  the next decision.
* **PCP** (pure): scheduling and allocation in one model. Each job has one optional
  interval per node that could hold a chunk of it, with a chunk count ``x[j, n]``
  (present iff ``x[j, n] > 0``, ``sum_n x[j, n] = chunks_j``: 002's *alternative*); one
  ``cumulative`` per node and resource type; objective
  ``sum_i max(0, (s_i - q_i - ewt_i) / ewt_i)``. The jobs started at ``t`` go where the
  solution puts their chunks.

Versions (002 Table 1; ``hcp0..hcp3``, ``pcp0..pcp3``; ``cph`` is HCP v0, 001's CPH):

* **v0**: HCP models the first ``m = 100`` waiting jobs (arrival order) and fixes the
  others at the end of the horizon, ``s = eoh - d`` (002 section 2.2); PCP models every
  waiting job. On no solution within ``delta`` the search restarts with twice the limit
  while the limit stays within ``delta_max``, whatever the solver proved.
* **Restarts** happen only when a limit passes with no solution (002 section 2.2: "if
  no solution is found within the limit, the search is restarted"); the best solution
  found within a limit is the decision. A restart that finds no solution is one
  "without improvement", so v1's ``k = 2`` allows the limits ``delta, 2 delta, 4 delta``
  (with ``delta_max`` also capping them) and v0's the whole doubling up to ``delta_max``.
* **v1** (reduced model, search control, 002 section 3): jobs that need more than is
  free now leave the model (HCP: more of some type than the pooled free amount; PCP: the
  allocator cannot place them now); then the first ``m`` remaining waiting jobs (arrival
  order) are modelled and the rest wait; ``cumulative`` constraints no modelled job
  needs are dropped. Restarts stop after a proof of infeasibility and after ``k = 2``
  restarts without improvement.
* **v2** = v1 plus the underestimation fix (002 section 4): a running job past its
  predicted end gets a remaining duration of 1 s.
* **v3** = v2 plus slowdown in the objective (``sum_i (s_i - q_i + d_i) / d_i``) and in
  the priorities (``(t - q_i + d_i) / d_i``).

What the papers leave open, and what hpcgym does:

* **Time** is integer seconds relative to ``t``: a waiting job's duration is
  ``d = max(1, ceil(prediction))``, a running job's remaining duration
  ``ceil(start + prediction - t)``. The **horizon** is 002's worst-case makespan
  ``eoh = sum of d(tau)`` over the modelled running and waiting jobs; a waiting job's
  start lies in ``[0, eoh - d]``. It always admits a schedule when every remaining
  duration is positive (all running jobs end, then the waiting jobs one after another).
* **Underestimated running jobs without the fix** (v0, v1): their remaining duration
  ``d <= 0`` counts negatively in ``eoh`` as in 002 section 4, and they hold nothing in
  the model (a zero-length interval), so the model may be infeasible or may start a job
  on resources still busy: such a job is then not placeable now and waits.
* **Objective weights** are integers. ``1 / ewt_i`` becomes
  ``max(1, round(1000 * min(ewt) / ewt_i))`` (``min(ewt)`` over the modelled jobs): the
  same order of weights as ``max(ewt) / ewt_i``, exact for the Eurora table's ratios to
  within 0.5 %. The slowdown weight ``1 / d_i`` becomes ``max(1, round(2**20 / d_i))``
  (exact within 1 % for ``d <= 14 h``). PCP's ``max(0, .)`` is an integer variable
  ``z_i >= s_i + floor(t - q_i - ewt_i)``, ``z_i >= 0``. Constant terms are left out.
* **Search** (002's schedule-or-postpone guided by PRB priorities) maps to CP-SAT
  through solution hints. The leftmost branch of schedule-or-postpone is a list schedule
  (:func:`~hpcgym.baselines.cp_hints.greedy_schedule`: the jobs in priority order --
  PRB's, or slowdown for v3; ties by demand, then arrival -- each started as early as it
  fits).
  ``search="priority"`` gives CP-SAT that schedule as a complete solution hint, and
  CP-SAT's default search (``AUTOMATIC``) improves it. ``search="hint"`` (default) gives
  it the cheapest, by the model's objective, of that schedule and three Smith-rule list
  schedules (:func:`~hpcgym.baselines.cp_hints.best_hint`): with one worker and a short limit CP-SAT seldom
  improves much on its first solution, so a better start is a better decision.
  ``search="strategy"`` adds to the priority hint a decision strategy: the start
  variables in priority order, each taking its smallest value, with ``search_branching
  = FIXED_SEARCH`` (closest to 002's custom search, but CP-SAT's propagation does not
  always give the exact earliest start, so the fixed search may step through many
  values). ``search="default"`` uses no hint.
* **Presolve**: off for PCP by default (``presolve=true`` turns it on). On PCP's model
  (an optional interval and a chunk count per job and node: about 3,000 of each on
  Eurora's 64 nodes) CP-SAT's presolve alone outlasts a short limit, so the solver
  returned no solution, restarted and fell back to PRB in about 3 % of the decisions;
  without presolve the hint is the first solution at once. HCP's pooled model is small
  and keeps it (the same decisions either way). Measured in ``docs/CP.md``.
* **Proven by the hint**: every objective term is at least 0, so a hint of objective 0
  (every modelled job starts now, or for PCP's ``max(0, .)`` none is late) is optimal;
  it is the decision without a solver call, counted as status ``OPTIMAL_HINT``. About
  half of the decisions on a loaded machine are of this kind.
* **Determinism**: one worker, ``seed = 0`` and deterministic limits by default: a
  limit of ``delta`` seconds is ``max_deterministic_time = dtime * delta`` CP-SAT
  deterministic time units (``dtime = 1``; the unit is calibrated to about a second of
  one core, but it counts work, not time), so the same decisions are taken on any
  machine and under any load. ``dtime=none`` uses wall-clock limits
  (``max_time_in_seconds``) instead, as 002 did; a decision may then differ from run to
  run when a limit is reached.
* **Safety**: every solution is checked by
  :func:`~hpcgym.baselines.cp_problem.verify_solution`, independent of the model
  (capacity per node and type over time with the running jobs, the requested chunks on
  nodes that exist, starts at or after ``t``). No solution once the restarts end, or a
  solution the verifier rejects, gives PRB's decision for that instant (counted as
  ``fallbacks``). A proven infeasible model starts nothing (002), unless no job runs,
  in which case PRB decides so that the simulation never stalls.
* **Exclusive machines** (a chunk takes a whole node): the resource per node is "the
  node" (capacity 1, one per chunk) on the nodes whose capacity covers the chunk; HCP
  pools it as the number of nodes.

The run's figures go into ``Schedule.extras`` under ``cp`` (see :meth:`extras`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.baselines.cp_hints import best_hint, greedy_schedule, objective_value
from hpcgym.baselines.cp_problem import Problem, VerificationError, verify_solution
from hpcgym.baselines.cp_solve import SolveLog, SolverSettings, solve_model
from hpcgym.baselines.dispatchers import PriorityRuleBased
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.extras import require
from hpcgym.machine import BEST_FIT, place, take
from hpcgym.sim import Decision, DispatcherBase, SystemView

__all__ = ["EWT_SCALE", "MODELS", "SEARCHES", "SLOWDOWN_SCALE", "ConstraintProgramming"]


MODELS = ("hcp", "pcp")
"""The two CP dispatchers of 002."""

SEARCHES = ("hint", "priority", "strategy", "default")
"""Accepted values of ``search``."""

EWT_SCALE = 1000
"""``1 / ewt_i`` becomes ``round(EWT_SCALE * min(ewt) / ewt_i)`` (at least 1)."""

SLOWDOWN_SCALE = 2**20
"""``1 / d_i`` becomes ``round(SLOWDOWN_SCALE / d_i)`` (at least 1)."""


def _ceil_int(x: np.ndarray) -> np.ndarray:
    return np.ceil(np.asarray(x, dtype=np.float64) - 1e-9).astype(np.int64)


_VERSION_DEFAULTS = {
    # version: (reduced model and search control, underestimation fix, slowdown)
    0: (False, False, False),
    1: (True, False, False),
    2: (True, True, False),
    3: (True, True, True),
}


@dataclass
class ConstraintProgramming(DispatcherBase):
    """HCP or PCP of Galleguillos et al. (2019), in one of the versions of its Table 1.

    See the module docstring for the models, the versions and every choice made where
    the papers are silent.

    Args:
        model: ``"hcp"`` or ``"pcp"``.
        version: 0, 1, 2 or 3 (002 Table 1); sets the defaults of ``reduce``, ``fix``
            and ``slowdown``.
        m: jobs modelled at most (002: 100). None: 100, except PCP v0 (every job).
        delta: first time limit (s; 002: 1).
        delta_max: largest time limit (s; 002: 16); restarts double the limit up to it.
        k: consecutive restarts without improvement after which search stops (002: 2);
            None: 2 from v1, unbounded for v0.
        reduce: the reduced model and search control of v1 (None: from ``version``).
        fix: the underestimation fix of v2 (None: from ``version``).
        slowdown: slowdown objective and priorities of v3 (None: from ``version``).
        search: ``"hint"`` (the cheapest list schedule as a solution hint, CP-SAT's
            search), ``"priority"`` (the priority-order list schedule as the hint),
            ``"strategy"`` (that hint and a fixed decision strategy in priority order) or
            ``"default"`` (no hint).
        workers: CP-SAT workers (1: deterministic).
        seed: CP-SAT random seed.
        dtime: deterministic time units per second of limit (default 1: the limits are
            CP-SAT deterministic time, so a run repeats on any machine); None
            (``dtime=none``): wall-clock limits.
        presolve: CP-SAT's presolve (None: on for HCP, off for PCP; see the module
            docstring).
        ewt, unknown: expected waits per queue, as for PRB (``prb:ewt=...``).
        name: report name.

    Raises:
        InvalidConfigError: a parameter out of range.
        MissingExtraError: OR-Tools (the ``cp`` extra) is not installed, at the first
            run.
    """

    model: str = "hcp"
    version: int = 3
    m: int | None = None
    delta: float = 1.0
    delta_max: float = 16.0
    k: int | None = None
    reduce: bool | None = None
    fix: bool | None = None
    slowdown: bool | None = None
    search: str = "hint"
    workers: int = 1
    seed: int = 0
    dtime: float | None = 1.0
    presolve: bool | None = None
    ewt: Any = "machine"
    unknown: float | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise InvalidConfigError(f"model must be one of {', '.join(MODELS)}; got {self.model!r}")
        if self.version not in _VERSION_DEFAULTS:
            raise InvalidConfigError(f"version must be 0, 1, 2 or 3; got {self.version!r}")
        reduce, fix, slowdown = _VERSION_DEFAULTS[self.version]
        self.reduce = reduce if self.reduce is None else bool(self.reduce)
        self.fix = fix if self.fix is None else bool(self.fix)
        self.slowdown = slowdown if self.slowdown is None else bool(self.slowdown)
        if self.m is None:
            self.m = 0 if (self.model == "pcp" and not self.reduce) else 100
        if not isinstance(self.m, int) or self.m < 0:
            raise InvalidConfigError(f"m must be a whole number of jobs >= 1 (0: all); got {self.m!r}")
        for what in ("delta", "delta_max"):
            value = getattr(self, what)
            if not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise InvalidConfigError(f"{what} must be a positive number of seconds; got {value!r}")
        if self.delta_max < self.delta:
            raise InvalidConfigError(f"delta_max ({self.delta_max}) must be at least delta ({self.delta})")
        if self.k is None:
            self.k = 2 if self.reduce else 0
        if not isinstance(self.k, int) or self.k < 0:
            raise InvalidConfigError(
                f"k must be a whole number of restarts >= 1 (0: unbounded); got {self.k!r}"
            )
        if self.search not in SEARCHES:
            raise InvalidConfigError(f"search must be one of {', '.join(SEARCHES)}; got {self.search!r}")
        if not isinstance(self.workers, int) or self.workers < 1:
            raise InvalidConfigError(f"workers must be a whole number >= 1; got {self.workers!r}")
        if not isinstance(self.seed, int):
            raise InvalidConfigError(f"seed must be a whole number; got {self.seed!r}")
        if self.dtime is not None and (
            not isinstance(self.dtime, int | float) or not math.isfinite(self.dtime) or self.dtime <= 0
        ):
            raise InvalidConfigError(f"dtime must be a positive number; got {self.dtime!r}")
        if self.presolve is None:
            self.presolve = self.model == "hcp"
        self.presolve = bool(self.presolve)
        if not self.name:
            self.name = f"{self.model}{self.version}"
        self._prb = PriorityRuleBased(ewt=self.ewt, unknown=self.unknown)
        self._nodes: tuple[Any, ...] | None = None
        self._clear()

    # --- run bookkeeping -------------------------------------------------------------

    def _clear(self) -> None:
        self._times: list[float] = []
        self._model_times: list[float] = []
        self._solver_times: list[float] = []
        self._intervals: list[int] = []
        self._requested: list[int] = []
        self._available: list[int] = []
        self._fallbacks = 0
        self._fallback_reasons: dict[str, int] = {}
        self._infeasible = 0
        self._unplaced = 0
        self._log = SolveLog()

    def reset(self, view: SystemView) -> None:
        require("cp", what=f"the {self.name} dispatcher")
        self._prb.reset(view)
        self._clear()
        machine = view.machine
        nodes = machine.nodes
        self._nodes = (nodes[0], nodes[1], nodes[2], BEST_FIT)

    def extras(self) -> dict[str, object]:
        """The run's figures, as 002 Table 2 reports them, under the key ``cp``.

        ``decisions``; ``decision_ms`` (mean, median, p95, max of the wall-clock time of
        each decision: the instance, the hints, the CP-SAT model, solving, verifying and
        allocating, and any one-off delay on the way such as a first import or a garbage
        collection); apart, over the ``solved`` decisions that called CP-SAT, ``model_ms``
        (building the CP-SAT model) and ``solver_ms`` (wall-clock time inside
        ``CpSolver.solve``, restarts summed); ``timeouts`` (decisions whose solution hit
        the time limit: status ``FEASIBLE``, not proven optimal); ``intervals``,
        ``requested``, ``available`` (means per decision: modelled running and waiting
        jobs; the modelled waiting jobs' total request summed over resource types; the
        free amount summed over types); ``fallbacks`` (PRB decided) and their reasons;
        ``infeasible`` (proven infeasible: nothing started); ``unplaced`` (HCP jobs
        scheduled now that best-fit could not place, or jobs scheduled on resources an
        underestimated job still holds); ``restarts``; ``improved_on_hint`` (solver
        calls whose solution is cheaper than the hint they started from); ``status``
        (CP-SAT status counts over every solve; ``OPTIMAL_HINT``: a hint of objective 0,
        optimal without a solver call).
        """

        def ms(seconds: list[float]) -> dict[str, float]:
            times = np.array(seconds) * 1000.0
            if not len(times):
                return {}
            return {
                "mean": float(times.mean()),
                "median": float(np.median(times)),
                "p95": float(np.percentile(times, 95)),
                "max": float(times.max()),
            }

        def mean(xs: list[int]) -> float:
            return float(np.mean(xs)) if xs else 0.0

        out: dict[str, object] = {
            "cp": {
                "dispatcher": self.name,
                "decisions": len(self._times),
                "decision_ms": ms(self._times),
                "solved": len(self._solver_times),
                "model_ms": ms(self._model_times),
                "solver_ms": ms(self._solver_times),
                "timeouts": self._log.timeouts,
                "intervals": mean(self._intervals),
                "requested": mean(self._requested),
                "available": mean(self._available),
                "fallbacks": self._fallbacks,
                "fallback_reasons": dict(self._fallback_reasons),
                "infeasible": self._infeasible,
                "unplaced": self._unplaced,
                "restarts": self._log.restarts,
                "improved_on_hint": self._log.improved,
                "status": dict(sorted(self._log.status.items())),
            }
        }
        out.update(self._prb.extras())
        return out

    def __getstate__(self) -> dict[str, object]:
        return dict(self.__dict__)

    # --- one decision ----------------------------------------------------------------

    def __call__(self, view: SystemView) -> Decision:
        if self._nodes is None:
            self.reset(view)
        log = self._log
        solves, model_s, solver_s = log.solves, log.model_s, log.solver_s
        t0 = time.perf_counter()
        try:
            decision = self._decide(view)
        finally:
            self._times.append(time.perf_counter() - t0)
            if log.solves != solves:
                self._model_times.append(log.model_s - model_s)
                self._solver_times.append(log.solver_s - solver_s)
        return decision

    def _fallback(self, view: SystemView, reason: str) -> Decision:
        self._fallbacks += 1
        self._fallback_reasons[reason] = self._fallback_reasons.get(reason, 0) + 1
        return self._prb(view)

    def priority_order(self, view: SystemView, jobs: np.ndarray) -> np.ndarray:
        """``jobs`` most urgent first: PRB's priority (v3: slowdown), ties by demand, then arrival."""
        jobs = np.asarray(jobs, dtype=np.int64)
        if self.slowdown:
            d = np.maximum(1.0, _ceil_int(view.prediction[jobs]).astype(np.float64))
            prio = (view.now - view.submit[jobs] + d) / d
        else:
            prio = self._prb.priority(view, jobs)
        demand = self._prb.demand(view, jobs)
        return jobs[np.lexsort((jobs, demand, -prio))]

    @staticmethod
    def _units(view: SystemView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(capacity (N, U), units per chunk (n, U), free units now (U,))``."""
        machine = view.machine
        if machine.exclusive:
            whole = (np.asarray(view.free) == machine.capacity).all(axis=1)
            return (
                np.ones((len(machine.capacity), 1), dtype=np.int64),
                np.ones((len(view.chunks), 1), dtype=np.int64),
                np.array([int(whole.sum())], dtype=np.int64),
            )
        return (
            np.asarray(machine.capacity, dtype=np.int64),
            np.asarray(view.per_chunk, dtype=np.int64),
            np.asarray(view.free_total, dtype=np.int64),
        )

    def build(self, view: SystemView) -> Problem:
        """The instance at ``view.now`` (the per-node one; HCP pools it, see :meth:`pooled`)."""
        now = view.now
        capacity, units, free_units = self._units(view)
        queue = np.array(view.queue, dtype=np.int64)
        if self.reduce:
            if self.model == "pcp":
                keep = view.fits_each(queue)
            else:
                keep = (view.chunks[queue, None] * units[queue] <= free_units[None, :]).all(axis=1)
            queue = queue[keep]
        modelled = queue if self.m == 0 else queue[: self.m]
        rest = np.zeros(0, dtype=np.int64) if self.reduce or self.m == 0 else queue[self.m :]
        jobs = np.concatenate([modelled, rest])
        duration = np.maximum(1, _ceil_int(view.prediction[jobs]))
        running = np.array(view.running, dtype=np.int64)
        run_end = _ceil_int(view.start[running] + view.prediction[running] - now)
        if self.fix:
            run_end = np.maximum(run_end, 1)
        horizon = int(duration.sum() + run_end.sum())
        usage = np.zeros((len(running), len(capacity), capacity.shape[1]), dtype=np.int64)
        for i, r in enumerate(running.tolist()):
            np.add.at(usage[i], view.placement(r), units[r])
        fixed = np.full(len(jobs), -1, dtype=np.int64)
        fixed[len(modelled) :] = horizon - duration[len(modelled) :]
        per_chunk = np.asarray(view.per_chunk[jobs], dtype=np.int64)
        if view.machine.exclusive:  # a node whose capacity covers the chunk holds one
            allowed = (view.machine.capacity[None, :, :] >= per_chunk[:, None, :]).all(axis=2)
        else:
            allowed = (capacity[None, :, :] >= per_chunk[:, None, :]).all(axis=2)
        return Problem(
            capacity=capacity,
            jobs=jobs,
            chunks=np.asarray(view.chunks[jobs], dtype=np.int64),
            demand=units[jobs],
            duration=duration,
            fixed=fixed,
            run_usage=usage,
            run_end=run_end,
            horizon=horizon,
            allowed=np.asarray(allowed, dtype=bool),
        )

    @staticmethod
    def pooled(problem: Problem) -> Problem:
        """HCP's relaxation: every node's units in one node."""
        p = problem
        return Problem(
            capacity=p.capacity.sum(axis=0, keepdims=True),
            jobs=p.jobs,
            chunks=p.chunks,
            demand=p.demand,
            duration=p.duration,
            fixed=p.fixed,
            run_usage=p.run_usage.sum(axis=1, keepdims=True),
            run_end=p.run_end,
            horizon=p.horizon,
            allowed=np.ones((len(p.jobs), 1), dtype=bool),
        )

    def _decide(self, view: SystemView) -> Decision:
        problem = self.build(view)
        if self.model == "hcp":
            problem = self.pooled(problem)
        n_model = int((problem.fixed < 0).sum())
        self._intervals.append(len(problem.jobs) + int((problem.run_end > 0).sum()))
        self._requested.append(int(view.request[problem.jobs[:n_model]].sum()))
        self._available.append(int(view.free_total.sum()))
        if n_model == 0:
            return (
                self._prb(view)
                if not len(view.running)
                else Decision(np.zeros(0, np.int64), np.zeros(0, np.int64))
            )
        order = self.priority_order(view, problem.jobs[:n_model])
        solution = self.solve(view, problem, order)
        if solution is None:
            return self._fallback(view, "no solution")
        if isinstance(solution, str):  # proven infeasible
            self._infeasible += 1
            if len(view.running) == 0:
                return self._fallback(view, "infeasible, nothing running")
            return Decision(np.zeros(0, np.int64), np.zeros(0, np.int64))
        start, counts = solution
        try:
            verify_solution(problem, start, counts)
        except VerificationError:
            return self._fallback(view, "verifier")
        return self._dispatch(view, problem, start, counts, order)

    def _dispatch(
        self, view: SystemView, problem: Problem, start: np.ndarray, counts: np.ndarray, order: np.ndarray
    ) -> Decision:
        """The jobs the solution starts now, placed on the real free matrix in priority order."""
        now_jobs = set(problem.jobs[start == 0].tolist())
        row = {int(j): i for i, j in enumerate(problem.jobs.tolist())}
        free = np.array(view.free, dtype=np.int64)
        nodes = self._nodes
        assert nodes is not None  # set by reset
        jobs_out: list[int] = []
        nodes_out: list[int] = []
        buf = np.zeros(int(view.chunks.max()) if len(view.chunks) else 0, dtype=np.int64)
        for j in order.tolist():
            if j not in now_jobs:
                continue
            c = int(view.chunks[j])
            v = np.ascontiguousarray(view.per_chunk[j], dtype=np.int64)
            if self.model == "hcp":
                ok = place(nodes, free, c, v, buf, 0)
                placement = buf[:c].copy()
            else:
                placement = np.repeat(np.arange(counts.shape[1]), counts[row[j]])
                ok = self._fits_placement(view, free, placement, v)
            if not ok:
                self._unplaced += 1
                continue
            take(nodes, free, v, placement)
            jobs_out.append(j)
            nodes_out.extend(placement.tolist())
        return Decision(np.array(jobs_out, dtype=np.int64), np.array(nodes_out, dtype=np.int64))

    @staticmethod
    def _fits_placement(view: SystemView, free: np.ndarray, placement: np.ndarray, v: np.ndarray) -> bool:
        if view.machine.exclusive:
            cap = view.machine.capacity[placement]
            return bool(len(np.unique(placement)) == len(placement) and (free[placement] == cap).all())
        need = np.zeros_like(free)
        np.add.at(need, placement, v)
        return bool((need <= free).all())

    # --- the CP-SAT model ------------------------------------------------------------

    def weights(self, view: SystemView, problem: Problem, n_model: int) -> np.ndarray:
        """Integer objective weight of each modelled job's start (see the module docstring)."""
        jobs = problem.jobs[:n_model]
        if self.slowdown:
            return np.maximum(1, np.rint(SLOWDOWN_SCALE / problem.duration[:n_model])).astype(np.int64)
        ewt = self._prb.expected_wait(view, jobs)
        return np.maximum(1, np.rint(EWT_SCALE * ewt.min() / ewt)).astype(np.int64)

    def solve(
        self, view: SystemView, problem: Problem, order: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | str | None:
        """Model and solve; ``(start, counts)``, ``"infeasible"`` (proven) or None (no solution)."""
        p = problem
        n_model = int((p.fixed < 0).sum())
        if (p.duration[:n_model] > p.horizon).any():  # 002 section 4: a shrunk makespan
            self._log.count("INFEASIBLE")
            return "infeasible"
        row = {int(j): i for i, j in enumerate(p.jobs[:n_model].tolist())}
        rows = np.array([row[int(j)] for j in order.tolist()], dtype=np.int64)
        w = self.weights(view, p, n_model)
        offset = None
        if self.model == "pcp" and not self.slowdown:
            ewt = self._prb.expected_wait(view, p.jobs[:n_model])
            offset = np.floor(view.now - view.submit[p.jobs[:n_model]] - ewt).astype(np.int64)
        hint: tuple[np.ndarray, np.ndarray] | None = None
        if self.search == "hint":
            hint = best_hint(p, rows, w, offset)
        elif self.search in ("priority", "strategy"):
            hint = greedy_schedule(p, rows)
        if hint is not None and objective_value(p, hint[0], w, offset) == 0:
            # every term is >= 0: the hint is optimal, no solver call needed
            self._log.count("OPTIMAL_HINT")
            return hint
        settings = SolverSettings(
            search=self.search,
            workers=self.workers,
            seed=self.seed,
            presolve=bool(self.presolve),
            dtime=self.dtime,
            delta=self.delta,
            delta_max=self.delta_max,
            k=int(self.k or 0),
            reduce=bool(self.reduce),
        )
        return solve_model(p, rows, w, offset, hint, settings, self._log)
