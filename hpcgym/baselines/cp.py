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
  (:func:`greedy_schedule`: the jobs in priority order -- PRB's, or slowdown for v3;
  ties by demand, then arrival -- each started as early as it fits).
  ``search="priority"`` gives CP-SAT that schedule as a complete solution hint, and
  CP-SAT's default search (``AUTOMATIC``) improves it. ``search="hint"`` (default) gives
  it the cheapest, by the model's objective, of that schedule and three Smith-rule list
  schedules (:func:`best_hint`): with one worker and a short limit CP-SAT seldom
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
* **Safety**: every solution is checked by :func:`verify_solution`, independent of the
  model (capacity per node and type over time with the running jobs, the requested
  chunks on nodes that exist, starts at or after ``t``). No solution once the restarts
  end, or a solution the verifier rejects, gives PRB's decision for that instant
  (counted as ``fallbacks``). A proven infeasible model starts nothing (002), unless no
  job runs, in which case PRB decides so that the simulation never stalls.
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
from numba import njit

from hpcgym.baselines.dispatchers import PriorityRuleBased
from hpcgym.common.errors import HpcGymError, InvalidConfigError
from hpcgym.common.extras import require
from hpcgym.machine import BEST_FIT, place, take
from hpcgym.sim import Decision, DispatcherBase, SystemView

MODELS = ("hcp", "pcp")
"""The two CP dispatchers of 002."""

SEARCHES = ("hint", "priority", "strategy", "default")
"""Accepted values of ``search``."""

EWT_SCALE = 1000
"""``1 / ewt_i`` becomes ``round(EWT_SCALE * min(ewt) / ewt_i)`` (at least 1)."""

SLOWDOWN_SCALE = 2**20
"""``1 / d_i`` becomes ``round(SLOWDOWN_SCALE / d_i)`` (at least 1)."""


class VerificationError(HpcGymError):
    """A CP solution breaks a constraint of the dispatching problem (the message says which)."""


@dataclass
class Problem:
    """One dispatching instance in integer seconds after ``now`` (``t = 0``).

    Resources are "units": the machine's types, or on an exclusive machine one unit per
    node. The pooled problem of HCP is the same with one node holding every unit.

    Attributes:
        capacity: ``(N, U)`` each node's units.
        jobs: ``(J,)`` the modelled waiting jobs (job indices of the workload).
        chunks: ``(J,)`` their chunk counts.
        demand: ``(J, U)`` their units per chunk.
        duration: ``(J,)`` their durations (s, >= 1).
        fixed: ``(J,)`` start fixed by the model (HCP v0's postponed jobs), else -1.
        run_usage: ``(K, N, U)`` what each modelled running job holds on each node.
        run_end: ``(K,)`` its remaining duration (s); it holds its units over ``[0, end)``.
        horizon: ``eoh``: every waiting job ends by it.
        allowed: ``(J, N)`` whether node ``n`` may hold chunks of job ``j`` (its
            capacity covers one chunk).
    """

    capacity: np.ndarray
    jobs: np.ndarray
    chunks: np.ndarray
    demand: np.ndarray
    duration: np.ndarray
    fixed: np.ndarray
    run_usage: np.ndarray
    run_end: np.ndarray
    horizon: int
    allowed: np.ndarray


def verify_solution(problem: Problem, start: np.ndarray, counts: np.ndarray) -> None:
    """Check a schedule and allocation of ``problem`` without the CP model.

    Args:
        problem: the instance.
        start: ``(J,)`` each modelled job's start (s after now).
        counts: ``(J, N)`` the chunks each job has on each node.

    Raises:
        VerificationError: a start before now or after ``horizon - duration``, a start
            that differs from a fixed one, a job whose chunks do not add up to its
            request, or a node and unit over capacity at some instant (the instant
            checked is every start, where the load can rise).
    """
    start = np.asarray(start, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    p = problem
    n_jobs = len(p.jobs)
    if start.shape != (n_jobs,) or counts.shape != (n_jobs, len(p.capacity)):
        raise VerificationError(f"solution shape {start.shape}, {counts.shape} does not match the problem")
    for i in range(n_jobs):
        j = int(p.jobs[i])
        if start[i] < 0:
            raise VerificationError(f"job {j} starts {-start[i]} s before now")
        if start[i] + p.duration[i] > p.horizon:
            raise VerificationError(f"job {j} ends after the horizon {p.horizon}")
        if p.fixed[i] >= 0 and start[i] != p.fixed[i]:
            raise VerificationError(f"job {j} was fixed at {p.fixed[i]}, starts at {start[i]}")
        if (counts[i, ~p.allowed[i]] != 0).any():
            raise VerificationError(f"job {j} has chunks on a node that cannot hold one")
        if (counts[i] < 0).any() or counts[i].sum() != p.chunks[i]:
            raise VerificationError(
                f"job {j} has {int(counts[i].sum())} chunks placed, requested {p.chunks[i]}"
            )
    times = np.unique(np.concatenate([start, np.zeros(1, dtype=np.int64)]))
    for t0 in times.tolist():
        load = p.run_usage[p.run_end > t0].sum(axis=0) if len(p.run_end) else np.zeros_like(p.capacity)
        active = (start <= t0) & (t0 < start + p.duration)
        if active.any():
            load = load + np.einsum("jn,ju->nu", counts[active], p.demand[active])
        over = load > p.capacity
        if over.any():
            n, u = np.argwhere(over)[0]
            raise VerificationError(
                f"node {n} unit {u} holds {load[n, u]} > capacity {p.capacity[n, u]} at {t0} s after now"
            )


def _chunks_per_node(room: np.ndarray, need: np.ndarray, chunks: int, allowed: np.ndarray) -> np.ndarray:
    """How many chunks of ``need`` units each node's ``room`` (N, U) holds, at most ``chunks``."""
    per = np.where(need[None, :] > 0, room // np.maximum(need, 1)[None, :], chunks).min(axis=1)
    return np.where(allowed, np.clip(per, 0, chunks), 0)


@njit(cache=True)
def _greedy_kernel(
    capacity: np.ndarray,
    chunks: np.ndarray,
    demand: np.ndarray,
    duration: np.ndarray,
    fixed: np.ndarray,
    allowed: np.ndarray,
    run_usage: np.ndarray,
    run_end: np.ndarray,
    horizon: int,
    rows: np.ndarray,
    start: np.ndarray,
    counts: np.ndarray,
) -> bool:
    """:func:`greedy_schedule` into ``start`` and ``counts``; False: no room by the horizon."""
    n_nodes, n_units = capacity.shape
    n_jobs = len(chunks)
    most = 2 + 2 * (len(run_end) + n_jobs)
    cuts = np.empty(most, dtype=np.int64)
    load = np.zeros((most, n_nodes, n_units), dtype=np.int64)
    cuts[0] = 0
    cuts[1] = horizon + 1
    n_cuts = 2
    usage = np.zeros((n_nodes, n_units), dtype=np.int64)
    room = np.zeros((n_nodes, n_units), dtype=np.int64)
    per = np.zeros(n_nodes, dtype=np.int64)
    # fixed and running intervals first, then the rows in order (index -1: running job k)
    for step in range(len(run_end) + n_jobs + len(rows)):
        if step < len(run_end):
            s, e = 0, run_end[step]
            usage[:, :] = run_usage[step]
        elif step < len(run_end) + n_jobs:
            i = step - len(run_end)
            if fixed[i] < 0:
                continue
            s, e = fixed[i], fixed[i] + duration[i]
            start[i] = fixed[i]
            counts[i, 0] = chunks[i]
            usage[:, :] = 0
            usage[0, :] = chunks[i] * demand[i]
        else:
            i = rows[step - len(run_end) - n_jobs]
            d, c = duration[i], chunks[i]
            found = False
            for b0 in range(n_cuts - 1):
                s = cuts[b0]
                if s + d > horizon:
                    return False
                room[:, :] = capacity
                b = b0
                while b < n_cuts - 1 and cuts[b] < s + d:
                    for n in range(n_nodes):
                        for u in range(n_units):
                            r = capacity[n, u] - load[b, n, u]
                            if r < room[n, u]:
                                room[n, u] = r
                    b += 1
                total = 0
                for n in range(n_nodes):
                    k = c
                    if allowed[i, n]:
                        for u in range(n_units):
                            if demand[i, u] > 0:
                                q = room[n, u] // demand[i, u] if room[n, u] > 0 else 0
                                if q < k:
                                    k = q
                    else:
                        k = 0
                    per[n] = k
                    total += k
                if total >= c:
                    left = c
                    usage[:, :] = 0
                    for n in range(n_nodes):
                        t = per[n] if per[n] < left else left
                        counts[i, n] = t
                        left -= t
                        for u in range(n_units):
                            usage[n, u] = t * demand[i, u]
                    start[i] = s
                    e = s + d
                    found = True
                    break
            if not found:
                return False
        if e <= s:
            continue
        if e > horizon + 1:
            e = horizon + 1
        # split at s and e, then add the usage on [s, e)
        for x in (s, e):
            b = n_cuts - 1
            while cuts[b] > x:
                b -= 1
            if cuts[b] != x:
                for q in range(n_cuts, b + 1, -1):
                    cuts[q] = cuts[q - 1]
                    load[q] = load[q - 1]
                cuts[b + 1] = x
                load[b + 1] = load[b]
                n_cuts += 1
        b = 0
        while cuts[b] < s:
            b += 1
        while cuts[b] < e:
            load[b] += usage
            b += 1
    return True


def greedy_schedule(problem: Problem, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A schedule of ``problem`` built job by job in the order ``rows`` (a list schedule).

    002's schedule-or-postpone picks, at each node of the search, the most urgent job
    and starts it as early as it fits. This is the leftmost branch of that search: each
    job in ``rows`` (modelled rows, most urgent first) starts at the earliest instant
    (0 or the end of an interval already placed) at which, throughout its duration,
    enough nodes have room for its chunks, and takes them node by node in index order.
    Fixed jobs and running jobs are placed first. Returns ``(start, counts)`` or None
    when some job finds no start by the horizon (a shrunk horizon, 002 section 4).
    Compiled (numba): a list schedule of 100 jobs on 64 nodes takes about a millisecond.
    """
    p = problem
    n_jobs = len(p.jobs)
    start = np.full(n_jobs, -1, dtype=np.int64)
    counts = np.zeros((n_jobs, len(p.capacity)), dtype=np.int64)
    ok = _greedy_kernel(
        np.ascontiguousarray(p.capacity, dtype=np.int64),
        np.ascontiguousarray(p.chunks, dtype=np.int64),
        np.ascontiguousarray(p.demand, dtype=np.int64),
        np.ascontiguousarray(p.duration, dtype=np.int64),
        np.ascontiguousarray(p.fixed, dtype=np.int64),
        np.ascontiguousarray(p.allowed, dtype=np.bool_),
        np.ascontiguousarray(p.run_usage, dtype=np.int64).reshape(len(p.run_end), *p.capacity.shape),
        np.ascontiguousarray(p.run_end, dtype=np.int64),
        int(p.horizon),
        np.ascontiguousarray(rows, dtype=np.int64),
        start,
        counts,
    )
    return (start, counts) if ok else None


def objective_value(
    problem: Problem, start: np.ndarray, weights: np.ndarray, offset: np.ndarray | None
) -> int:
    """The model's objective of ``start``: ``sum w_i s_i``, or ``sum w_i max(0, s_i + o_i)`` (PCP v0-v2)."""
    n = len(weights)
    s = np.asarray(start[:n], dtype=np.int64)
    if offset is not None:
        s = np.maximum(0, s + offset)
    return int((np.asarray(weights, dtype=np.int64) * s).sum())


def hint_orders(problem: Problem, rows: np.ndarray, weights: np.ndarray) -> list[np.ndarray]:
    """The list-schedule orders :func:`best_hint` tries: the priority order ``rows`` first.

    Then three Smith-rule orders (weighted shortest processing time, optimal for
    ``sum w_i C_i`` on one machine and a classic list-scheduling rule for the
    cumulative case): by ``d_i / w_i``; by ``d_i a_i / w_i`` with ``a_i`` the job's share
    of the machine summed over resource types; and by ``d_i u_i / w_i`` with ``u_i`` its
    units summed over types. Ties keep arrival order.
    """
    n = len(weights)
    idx = np.arange(n)
    d = problem.duration[:n].astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    total = np.asarray(problem.chunks[:n, None] * problem.demand[:n], dtype=np.float64)
    share = (total / np.maximum(problem.capacity.sum(axis=0), 1)[None, :]).sum(axis=1)
    keys = (d / w, d * share / w, d * total.sum(axis=1) / w)
    return [np.asarray(rows, dtype=np.int64)] + [np.lexsort((idx, k)) for k in keys]


def best_hint(
    problem: Problem, rows: np.ndarray, weights: np.ndarray, offset: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """The best list schedule (lowest objective) over :func:`hint_orders`, or None if none fits.

    002 searches from the priority order; a hint only tells CP-SAT where to start, and
    the objective decides. Trying the Smith-rule orders as well costs well under a
    millisecond each (:func:`greedy_schedule` is compiled), and with one worker and a
    short limit CP-SAT seldom improves much on where it starts: ``docs/CP.md`` compares
    the decisions of this hint (``search=hint``) and of the priority one alone
    (``search=priority``).
    Ties go to the earlier order, so the priority schedule wins when it is as good.
    """
    best: tuple[np.ndarray, np.ndarray] | None = None
    best_value = 0
    for order in hint_orders(problem, rows, weights):
        sched = greedy_schedule(problem, order)
        if sched is None:
            continue
        value = objective_value(problem, sched[0], weights, offset)
        if best is None or value < best_value:
            best, best_value = sched, value
    return best


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
        self._intervals: list[int] = []
        self._requested: list[int] = []
        self._available: list[int] = []
        self._status: dict[str, int] = {}
        self._fallbacks = 0
        self._fallback_reasons: dict[str, int] = {}
        self._infeasible = 0
        self._unplaced = 0
        self._restarts = 0
        self._improved = 0

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
        each decision: modelling, solving, verifying and allocating); ``intervals``,
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
        times = np.array(self._times) * 1000.0
        stats = (
            {
                "mean": float(times.mean()),
                "median": float(np.median(times)),
                "p95": float(np.percentile(times, 95)),
                "max": float(times.max()),
            }
            if len(times)
            else {}
        )

        def mean(xs: list[int]) -> float:
            return float(np.mean(xs)) if xs else 0.0

        out: dict[str, object] = {
            "cp": {
                "dispatcher": self.name,
                "decisions": len(self._times),
                "decision_ms": stats,
                "intervals": mean(self._intervals),
                "requested": mean(self._requested),
                "available": mean(self._available),
                "fallbacks": self._fallbacks,
                "fallback_reasons": dict(self._fallback_reasons),
                "infeasible": self._infeasible,
                "unplaced": self._unplaced,
                "restarts": self._restarts,
                "improved_on_hint": self._improved,
                "status": dict(sorted(self._status.items())),
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
        t0 = time.perf_counter()
        try:
            decision = self._decide(view)
        finally:
            self._times.append(time.perf_counter() - t0)
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
        from ortools.sat.python import cp_model

        p = problem
        n_jobs = len(p.jobs)
        n_model = int((p.fixed < 0).sum())
        n_nodes, n_units = p.capacity.shape
        model = cp_model.CpModel()
        H = p.horizon
        if (p.duration[:n_model] > H).any():  # 002 section 4: a shrunk makespan
            self._status["INFEASIBLE"] = self._status.get("INFEASIBLE", 0) + 1
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
            self._status["OPTIMAL_HINT"] = self._status.get("OPTIMAL_HINT", 0) + 1
            return hint
        starts = []
        for i in range(n_jobs):
            if p.fixed[i] >= 0:
                starts.append(model.new_constant(int(p.fixed[i])))
            else:
                starts.append(model.new_int_var(0, H - int(p.duration[i]), f"s{p.jobs[i]}"))
        # per node: the intervals, their demand per unit
        per_node: list[list[tuple[Any, np.ndarray | list[Any]]]] = [[] for _ in range(n_nodes)]
        for k in range(len(p.run_end)):
            e = int(p.run_end[k])
            if e <= 0:
                continue
            iv = model.new_fixed_size_interval_var(0, e, f"run{k}")
            for n in np.flatnonzero(p.run_usage[k].any(axis=1)).tolist():
                per_node[n].append((iv, p.run_usage[k, n]))
        count_vars: list[dict[int, Any]] = []
        pooled = n_nodes == 1
        for i in range(n_jobs):
            d = int(p.duration[i])
            c = int(p.chunks[i])
            if pooled:
                iv = model.new_fixed_size_interval_var(starts[i], d, f"j{p.jobs[i]}")
                per_node[0].append((iv, c * p.demand[i]))
                count_vars.append({0: c})
                continue
            need = p.demand[i]
            room = _chunks_per_node(p.capacity, need, c, p.allowed[i])
            cand = np.flatnonzero(room > 0)
            xs: dict[int, Any] = {}
            for n in cand.tolist():
                x = model.new_int_var(0, int(room[n]), f"x{p.jobs[i]}_{n}")
                present = model.new_bool_var(f"p{p.jobs[i]}_{n}")
                model.add(x >= 1).only_enforce_if(present)
                model.add(x == 0).only_enforce_if(~present)
                iv = model.new_optional_fixed_size_interval_var(starts[i], d, present, f"j{p.jobs[i]}_{n}")
                per_node[n].append((iv, [x * int(a) for a in need.tolist()]))
                xs[n] = x
                if hint is not None:
                    model.add_hint(x, int(hint[1][i, n]))
                    model.add_hint(present, bool(hint[1][i, n] > 0))
            model.add(sum(xs.values()) == c)  # no node at all: infeasible, as it should be
            count_vars.append(xs)
        needed_units = (p.demand[:n_model] > 0).any(axis=0) if self.reduce else np.ones(n_units, dtype=bool)
        for n in range(n_nodes):
            if not per_node[n]:
                continue
            for u in np.flatnonzero(needed_units).tolist():
                ivs = [iv for iv, dem in per_node[n]]
                dems = [dem[u] if isinstance(dem, list) else int(dem[u]) for iv, dem in per_node[n]]
                model.add_cumulative(ivs, dems, int(p.capacity[n, u]))
        # objective
        if offset is not None:
            terms = []
            for i in range(n_model):
                z = model.new_int_var(0, max(H + int(offset[i]), 0), f"z{p.jobs[i]}")
                model.add(z >= starts[i] + int(offset[i]))
                terms.append(int(w[i]) * z)
                if hint is not None:
                    model.add_hint(z, max(0, int(hint[0][i] + offset[i])))
            model.minimize(sum(terms))
        else:
            model.minimize(sum(int(w[i]) * starts[i] for i in range(n_model)))
        if hint is not None:
            for i in range(n_model):
                model.add_hint(starts[i], int(hint[0][i]))
        if self.search == "strategy":
            model.add_decision_strategy(
                [starts[i] for i in rows.tolist()], cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE
            )
        solver = cp_model.CpSolver()
        prm = solver.parameters
        prm.num_workers = self.workers
        prm.random_seed = self.seed
        prm.cp_model_presolve = bool(self.presolve)
        if self.search == "strategy":
            prm.search_branching = cp_model.FIXED_SEARCH
        limit = float(self.delta)
        stale = 0
        first = True
        while True:
            if self.dtime is not None:
                prm.max_deterministic_time = self.dtime * limit
            else:
                prm.max_time_in_seconds = limit
            if not first:
                self._restarts += 1
            first = False
            status = solver.solve(model)
            sname = solver.status_name(status)
            self._status[sname] = self._status.get(sname, 0) + 1
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                if hint is not None and solver.objective_value < objective_value(p, hint[0], w, offset):
                    self._improved += 1
                start = np.array([solver.value(s) for s in starts], dtype=np.int64)
                counts = np.zeros((n_jobs, n_nodes), dtype=np.int64)
                for i, xs in enumerate(count_vars):
                    for n, x in xs.items():
                        counts[i, n] = x if isinstance(x, int) else solver.value(x)
                return start, counts
            if status == cp_model.INFEASIBLE and self.reduce:
                return "infeasible"  # v1: no restart after a proof
            stale += 1  # a restart without a solution does not improve
            if self.k and stale > self.k:
                break
            limit *= 2
            if limit > self.delta_max:
                break
        return "infeasible" if status == cp_model.INFEASIBLE else None
