"""CP-SAT on one dispatching instance: 002's model (HCP pooled, PCP per node) and its restarts.

The CP dispatchers (:mod:`hpcgym.baselines.cp`) build the instance, the objective weights
and the hint, and call :func:`solve_model`; the module docstring there says which model
choices are hpcgym's. OR-Tools is imported only when a model is solved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.baselines.cp_hints import objective_value
from hpcgym.baselines.cp_problem import Problem

__all__ = ["SolveLog", "SolverSettings", "solve_model"]


@dataclass
class SolveLog:
    """What the solver calls of a run did; the dispatcher's ``cp`` extras report it.

    Attributes:
        status: CP-SAT status counts over every solve (and the dispatcher's own
            ``OPTIMAL_HINT`` and shrunk-horizon ``INFEASIBLE``).
        restarts: solves after the first of a decision.
        improved: solves whose solution is cheaper than the hint they started from.
        timeouts: decisions whose solution came from a solve that hit its time limit
            (status ``FEASIBLE``: a solution, not proven optimal).
        model_s: wall-clock seconds spent building CP-SAT models (variables, constraints,
            hints), summed over the calls of :func:`solve_model`.
        solver_s: wall-clock seconds inside ``CpSolver.solve``, summed over every solve.
        solves: calls of :func:`solve_model` (decisions that reached the solver).
    """

    status: dict[str, int] = field(default_factory=dict)
    restarts: int = 0
    improved: int = 0
    timeouts: int = 0
    model_s: float = 0.0
    solver_s: float = 0.0
    solves: int = 0

    def count(self, status: str) -> None:
        self.status[status] = self.status.get(status, 0) + 1


@dataclass(frozen=True)
class SolverSettings:
    """How :func:`solve_model` searches: the dispatcher's parameters of the same names.

    Attributes:
        search: ``"hint"``, ``"priority"``, ``"strategy"`` or ``"default"``.
        workers, seed, presolve: CP-SAT's parameters.
        dtime: deterministic time units per second of limit; None: wall-clock limits.
        delta, delta_max: first and largest time limit (s).
        k: restarts without improvement after which search stops (0: unbounded).
        reduce: v1's search control: no restart after a proof of infeasibility.
    """

    search: str
    workers: int
    seed: int
    presolve: bool
    dtime: float | None
    delta: float
    delta_max: float
    k: int
    reduce: bool


def _chunks_per_node(room: np.ndarray, need: np.ndarray, chunks: int, allowed: np.ndarray) -> np.ndarray:
    """How many chunks of ``need`` units each node's ``room`` (N, U) holds, at most ``chunks``."""
    per = np.where(need[None, :] > 0, room // np.maximum(need, 1)[None, :], chunks).min(axis=1)
    return np.where(allowed, np.clip(per, 0, chunks), 0)


def solve_model(
    p: Problem,
    rows: np.ndarray,
    w: np.ndarray,
    offset: np.ndarray | None,
    hint: tuple[np.ndarray, np.ndarray] | None,
    settings: SolverSettings,
    log: SolveLog,
) -> tuple[np.ndarray, np.ndarray] | str | None:
    """Model ``p`` and solve it; ``(start, counts)``, ``"infeasible"`` (proven) or None (no solution).

    Args:
        p: the instance (pooled for HCP: one node).
        rows: the modelled jobs' rows, most urgent first (the fixed search's order).
        w: each modelled job's integer objective weight.
        offset: PCP v0-v2's ``max(0, s_i + o_i)`` offsets; None: ``sum w_i s_i``.
        hint: a complete solution to start from, or None.
        settings: the search and its limits.
        log: counts the statuses, restarts and improvements.
    """
    from ortools.sat.python import cp_model

    # the model-building and solving clocks start after the import (a one-off delay)
    t_model = time.perf_counter()
    log.solves += 1
    n_jobs = len(p.jobs)
    n_model = int((p.fixed < 0).sum())
    n_nodes, n_units = p.capacity.shape
    model = cp_model.CpModel()
    H = p.horizon
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
    needed_units = (p.demand[:n_model] > 0).any(axis=0) if settings.reduce else np.ones(n_units, dtype=bool)
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
    if settings.search == "strategy":
        model.add_decision_strategy(
            [starts[i] for i in rows.tolist()], cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE
        )
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_workers = settings.workers
    prm.random_seed = settings.seed
    prm.cp_model_presolve = settings.presolve
    if settings.search == "strategy":
        prm.search_branching = cp_model.FIXED_SEARCH
    log.model_s += time.perf_counter() - t_model
    limit = float(settings.delta)
    stale = 0
    first = True
    while True:
        if settings.dtime is not None:
            prm.max_deterministic_time = settings.dtime * limit
        else:
            prm.max_time_in_seconds = limit
        if not first:
            log.restarts += 1
        first = False
        t_solve = time.perf_counter()
        status = solver.solve(model)
        log.solver_s += time.perf_counter() - t_solve
        sname = solver.status_name(status)
        log.count(sname)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            log.timeouts += status == cp_model.FEASIBLE
            if hint is not None and solver.objective_value < objective_value(p, hint[0], w, offset):
                log.improved += 1
            start = np.array([solver.value(s) for s in starts], dtype=np.int64)
            counts = np.zeros((n_jobs, n_nodes), dtype=np.int64)
            for i, xs in enumerate(count_vars):
                for n, x in xs.items():
                    counts[i, n] = x if isinstance(x, int) else solver.value(x)
            return start, counts
        if status == cp_model.INFEASIBLE and settings.reduce:
            return "infeasible"  # v1: no restart after a proof
        stale += 1  # a restart without a solution does not improve
        if settings.k and stale > settings.k:
            break
        limit *= 2
        if limit > settings.delta_max:
            break
    return "infeasible" if status == cp_model.INFEASIBLE else None
