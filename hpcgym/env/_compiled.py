"""The compiled path of the dispatch environment: episodes held in rows, stepped by one numba call.

:class:`CompiledEpisodes` holds N episodes' engine state in padded ``(N, ...)`` arrays
(the layout of :mod:`hpcgym.env._vector_kernels`) and steps them with
:func:`~hpcgym.env._vector_kernels.step_all`. The single environment
(:class:`~hpcgym.env.DispatchEnv`, N = 1) and the native vector environment
(:class:`~hpcgym.env.vector.DispatchVectorEnv`) both use it; each still resets an episode
with the single environment's Python code and hands the result over with :meth:`load`,
and :meth:`sync` writes a row back into the single environment's engine, observation
builders and reward (for the episode's metrics, or when user code reads the engine).

Which configurations it runs is :func:`compiled_obstacle`'s answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import hpcgym.env._vector_kernels as vk
from hpcgym.common import native
from hpcgym.env._kernels import ACCRUED_BSLD, ACCRUED_WAIT_HOURS
from hpcgym.env.observations import FreeResources, Histograms, JobRequests, JobWindow, SystemSummary
from hpcgym.env.rewards import BsldDense, BsldSparse, WaitDense
from hpcgym.predict import ChangeLog
from hpcgym.predict._kernels import empty_arrays
from hpcgym.sim import TAU, Schedule
from hpcgym.sim import _kernels as ek
from hpcgym.sim.loop import LoopState, adopt_loop

DispatchEnv = Any
"""A :class:`hpcgym.env.DispatchEnv` (not imported: the environment imports this module)."""

_PARTS = {JobWindow: vk.P_JOBS, Histograms: vk.P_HISTOGRAMS, SystemSummary: vk.P_SYSTEM,
          FreeResources: vk.P_RESOURCES, JobRequests: vk.P_REQUESTS}  # fmt: skip
_REWARDS = {BsldDense: ACCRUED_BSLD, WaitDense: ACCRUED_WAIT_HOURS, BsldSparse: vk.NO_KERNEL}
_OBS = (vk.L_OJOBS, vk.L_OHIST, vk.L_OSYS, vk.L_ORES, vk.L_OREQ)
_JOB_F64 = (vk.L_SUBMIT, vk.L_RUNTIME, vk.L_ESTIMATE, vk.L_PREDICTION, vk.L_START, vk.L_END, vk.L_HEAPT,
            vk.L_RRUN, vk.L_COUNTED, vk.L_ESTNORM, vk.L_PREDNORM)  # fmt: skip
_JOB_I64 = (vk.L_ENDED, vk.L_HEAPS, vk.L_HEAPJ, vk.L_PROCS, vk.L_USER, vk.L_SIZEBIN, vk.L_DURBIN)
_VIEWS: dict[int, tuple[str, str, int]] = {
    vk.L_FPAR: ("fpar", "ff", 1), vk.L_FST: ("fst", "ff", 2), vk.L_TOTAL: ("total", "ff", 1),
    vk.L_HLAST: ("h_last", "ff", 4), vk.L_HRUN: ("h_run", "ff", 2), vk.L_HACC: ("h_acc", "ff", 2),
    vk.L_COST: ("cost", "ff", 1), vk.L_IPAR: ("ipar", "fi", 1), vk.L_CTL: ("ctl", "fi", 2),
    vk.L_HCOUNT: ("h_count", "fi", 2), vk.L_SCRATCH: ("scratch", "fi", 2), vk.L_ACTIONS: ("actions", "fi", 1),
    vk.L_MASK: ("mask", "fb", 2), vk.L_INVALID: ("invalid", "fb", 1), vk.L_FINAL: ("final", "fb", 1),
    vk.L_SKIP: ("skip", "fb", 1), vk.L_PARTS: ("parts", "fb", 1),
    **{lid: (f"_obs{p}", "fo", 3 if p in (vk.P_JOBS, vk.P_HISTOGRAMS, vk.P_REQUESTS) else 2)
       for p, lid in enumerate(_OBS)},
    **dict(zip(_JOB_F64, (("col:" + c, "jf", 2) for c in (
        "submit", "runtime", "estimate", "prediction", "start", "end", "heap_t", "reward_runtime",
        "counted", "est_norm", "pred_norm")), strict=True)),
    **dict(zip(_JOB_I64, (("col:" + c, "ji", 2) for c in (
        "ended", "heap_s", "heap_j", "procs", "user", "size_bin", "duration_bin")), strict=True)),
    vk.L_KILLED: ("col:killed", "jb", 2), vk.L_FITBUF: ("fitbuf", "jb", 1),
    vk.L_TABLE: ("col:table", "jo", 3),
}  # fmt: skip
"""Each layout entry's attribute (``col:`` ones go in ``cols``), arena and number of dimensions."""


def compiled_obstacle(env: DispatchEnv) -> str | None:
    """Why ``env``'s configuration cannot run compiled, or None if it can.

    The reason starts with the parameter that decides it (``mode``, ``backfill``,
    ``every_event``, ``predictor``, ``observations``, ``reward``).
    """
    cfg = env.config
    if cfg.action.mode == "backfill":
        return "mode: 'backfill' runs the learned-backfilling step in Python (only 'job' is compiled)"
    if cfg.action.mode != "job":
        return f"mode: {cfg.action.mode!r} lets a Python dispatcher decide (only 'job' is compiled)"
    if cfg.action.backfill != "none":
        return (
            f"backfill: {cfg.action.backfill!r} runs EASY's reservation loop in Python "
            "(only 'none' is compiled)"
        )
    if cfg.action.every_event:
        return "every_event: stopping at every event is not compiled (only every_event=False)"
    p = env._predictor
    if not p.fixed:
        return (
            f"predictor: {p.name!r} changes its predictions as jobs arrive and end (only predictors "
            "whose predictions are fixed at reset, such as the default wall-time, are compiled)"
        )
    for name, b in env._builders.items():
        if type(b) not in _PARTS:
            return f"observations: the part {name!r} ({type(b).__name__}) is not one of the compiled builders"
    if type(env._reward) not in _REWARDS:
        return f"reward: {env._reward.name!r} ({type(env._reward).__name__}) is not one of the compiled terms"
    return None


class CompiledEpisodes:
    """N episodes of one configuration in padded rows, stepped by one compiled call.

    Args:
        n: the number of episodes (rows).
        env: a single environment of the configuration (for which
            :func:`compiled_obstacle` is None).

    Attributes:
        obs: each observation part by key, ``(n, ...)``, written by :meth:`step`.
        mask: ``(n, K + 1)`` action masks.
        cost, invalid, final: the last step's reward costs (``sparse`` rewards: 0),
            invalid-action flags and episode ends, per row.
        ctl, fst: the counters and clock of each row (``hpcgym.env._vector_kernels``).
        reward_kind: the reward's kernel (:data:`~hpcgym.env._vector_kernels.NO_KERNEL`
            for ``bsld-sparse``, charged in Python at the end).
    """

    # views of the arenas (see _VIEWS), made by _link
    fpar: np.ndarray
    fst: np.ndarray
    total: np.ndarray
    h_last: np.ndarray
    h_run: np.ndarray
    h_acc: np.ndarray
    cost: np.ndarray
    ipar: np.ndarray
    ctl: np.ndarray
    h_count: np.ndarray
    scratch: np.ndarray
    actions: np.ndarray
    mask: np.ndarray
    invalid: np.ndarray
    final: np.ndarray
    skip: np.ndarray
    parts: np.ndarray
    fitbuf: np.ndarray

    def __init__(self, n: int, env: DispatchEnv) -> None:
        self.n = n
        self.k = k = env.window_size
        builders = env._builders
        self.part_key: dict[int, str] = {}
        for name, b in builders.items():
            self.part_key[_PARTS[type(b)]] = name
        oc = env.config.observation
        self.reward_kind = _REWARDS[type(env._reward)]
        total = env.machine.total.astype(np.float64)
        users = len(env._users)
        self.n_req = (
            len(builders[self.part_key[vk.P_REQUESTS]].features) if vk.P_REQUESTS in self.part_key else 1
        )
        spaces = env.observation_space.spaces  # type: ignore[attr-defined]
        obs = []
        for p, lid, dummy in zip(range(vk.PARTS), _OBS, ((1, 1), (1, 1), (1,), (1,), (1, 1)), strict=True):
            obs.append((lid, (n, *(spaces[self.part_key[p]].shape if p in self.part_key else dummy))))
        self.lay = np.zeros((vk.LAYOUT, 5), np.int64)
        self.ff = self._arena(np.float64, [
            (vk.L_FPAR, (2,)), (vk.L_FST, (n, vk.FST)), (vk.L_TOTAL, (len(total),)),
            (vk.L_HLAST, (n, users, 2, 2)), (vk.L_HRUN, (n, users)), (vk.L_HACC, (n, users)),
            (vk.L_COST, (n,)),
        ])  # fmt: skip
        self.fi = self._arena(np.int64, [
            (vk.L_IPAR, (6,)), (vk.L_CTL, (n, vk.CTL)), (vk.L_HCOUNT, (n, users)), (vk.L_SCRATCH, (3, users)),
            (vk.L_ACTIONS, (n,)),
        ])  # fmt: skip
        self.fb = self._arena(np.bool_, [
            (vk.L_MASK, (n, k + 1)), (vk.L_INVALID, (n,)), (vk.L_FINAL, (n,)), (vk.L_SKIP, (n,)),
            (vk.L_PARTS, (vk.PARTS,)),
        ])  # fmt: skip
        self.fo = self._arena(np.float32, obs)
        self.jf = self.ji = self.jb = self.jo = np.zeros(0)
        self.jobs_cap = 0
        self.mem = np.zeros((n, 0), np.int64)
        self.mem_len = np.zeros(n, np.int64)
        self.cols: dict[str, np.ndarray] = {}
        self._link()
        self.ipar[:] = (k, env.config.episode.kill_at_estimate, self.reward_kind, env.trace.procs,
                        oc.oracle, oc.histogram_duration != "prediction")  # fmt: skip
        self.fpar[:] = (TAU, 1.0 / float(np.log1p(oc.max_time_s)))
        self.total[:] = total
        for p in self.part_key:
            self.parts[p] = True
        self.reserve(max(env.window_jobs, 1), 0)

    def _arena(self, dtype: Any, specs: list[tuple[int, tuple[int, ...]]]) -> np.ndarray:
        """One zeroed array for the arrays of ``specs`` (layout entry, shape); their places go in ``lay``."""
        off = 0
        for lid, shape in specs:
            self.lay[lid, 0] = off
            self.lay[lid, 1 : 1 + len(shape)] = shape
            off += int(np.prod(shape))
        return np.zeros(off, dtype=dtype)

    def _link(self) -> None:
        """The named views of the arenas (again after a copy: views do not survive pickling)."""
        lay = self.lay
        for lid, (name, arena, ndim) in _VIEWS.items():
            a = getattr(self, arena)
            dims = tuple(int(d) for d in lay[lid, 1 : 1 + ndim])
            o = int(lay[lid, 0])
            view = a[o : o + int(np.prod(dims))].reshape(dims) if len(a) else np.zeros(dims, a.dtype)
            if name.startswith("col:"):
                self.cols[name[4:]] = view
            else:
                setattr(self, name, view)
        self.obs = {self.part_key[p]: getattr(self, f"_obs{p}") for p in self.part_key}
        self.obs0 = [(name, a[0]) for name, a in self.obs.items()]  # the single environment's row
        self.u_scratch = tuple(self.scratch)
        self.kernel = native.get(vk.step_all)  # looked up once, not at every step
        self.args = (
            self.mem,
            self.ff,
            self.fi,
            self.fb,
            self.fo,
            self.jf,
            self.ji,
            self.jb,
            self.jo,
            self.lay,
        )

    def reserve(self, jobs: int, mem_len: int) -> None:
        """Grow the per-job arenas to ``jobs`` and the engine rows to ``mem_len`` (keeping every row)."""
        n = self.n
        if jobs > self.jobs_cap:
            cap = max(jobs, 2 * self.jobs_cap)
            old = dict(self.cols) if self.jobs_cap else {}
            self.jf = self._arena(np.float64, [(lid, (n, cap)) for lid in _JOB_F64])
            self.ji = self._arena(np.int64, [(lid, (n, cap)) for lid in _JOB_I64])
            self.jb = self._arena(np.bool_, [(vk.L_KILLED, (n, cap)), (vk.L_FITBUF, (cap,))])
            self.jo = self._arena(np.float32, [(vk.L_TABLE, (n, cap, self.n_req))])
            self._link()
            for name, a in old.items():
                self.cols[name][:, : a.shape[1]] = a
            self.jobs_cap = cap
        if mem_len > self.mem.shape[1]:
            mem = np.zeros((n, max(mem_len, 2 * self.mem.shape[1])), np.int64)
            mem[:, : self.mem.shape[1]] = self.mem
            self.mem = mem
            self.args = (mem, *self.args[1:])

    def load(self, i: int, env: DispatchEnv) -> None:
        """Copy the episode ``env`` has just reset (in Python) into row ``i``."""
        sim = env._sim
        assert sim is not None
        n = len(sim.workload)
        size = len(sim._mem)
        self.reserve(n, size)
        self.mem[i, :size] = sim._mem
        self.mem_len[i] = size
        cols = self.cols
        c = self.ctl[i]
        c[:] = 0
        c[ek.C_NEXT] = sim._next_arrival
        c[ek.C_SEQ] = sim._seq
        c[ek.C_DONE] = sim.n_done
        c[ek.C_DECISIONS] = sim.decisions
        c[ek.C_WAITING] = sim._nq
        c[ek.C_RUNNING] = sim._nr
        if any(kind != 0 for _, kind, _, _ in sim._events):  # pragma: no cover - fixed predictors arm none
            raise AssertionError("the compiled path needs an engine whose only events are terminations")
        events = sorted((t, s, j) for t, _, s, j in sim._events)  # a sorted array is a binary heap
        c[ek.C_HEAP] = len(events)
        if events:
            t, s, j = zip(*events, strict=True)
            cols["heap_t"][i, : len(events)] = t
            cols["heap_s"][i, : len(events)] = s
            cols["heap_j"][i, : len(events)] = j
        c[vk.X_JOBS] = n
        c[vk.X_DONE] = int(env._done)
        f = self.fst[i]
        f[:] = 0.0
        f[vk.F_NOW] = sim.now
        reward: Any = env._reward
        if self.reward_kind != vk.NO_KERNEL:
            c[vk.X_LO] = reward._lo
            f[vk.F_FROZEN] = reward._frozen
            f[vk.F_PREV] = reward._prev
            f[vk.F_TIME] = reward._time
        cols["submit"][i, :n] = np.frombuffer(sim._submit, dtype=np.float64)
        cols["runtime"][i, :n] = np.frombuffer(sim._runtime, dtype=np.float64)
        cols["estimate"][i, :n] = np.frombuffer(sim._estimate, dtype=np.float64)
        cols["prediction"][i, :n] = sim.predictor.prediction
        cols["start"][i, :n] = sim.start_time
        cols["end"][i, :n] = sim.end_time
        cols["killed"][i, :n] = sim.killed
        cols["ended"][i, : sim.n_done] = np.frombuffer(sim._ended, dtype=np.int64)
        cols["reward_runtime"][i, :n] = env._outcome.runtime
        cols["counted"][i, :n] = env._counted
        cols["procs"][i, :n] = sim.view.procs
        builders: Any = env._builders
        if self.parts[vk.P_JOBS]:
            jb = builders[self.part_key[vk.P_JOBS]]
            cols["user"][i, :n] = jb._user
            h = jb._history
            c[vk.X_SEEN] = h.seen
            self.h_count[i], self.h_last[i] = h.count, h.last
            self.h_run[i], self.h_acc[i] = h.runtime, h.accuracy
        if self.parts[vk.P_HISTOGRAMS]:
            cols["size_bin"][i, :n] = builders[self.part_key[vk.P_HISTOGRAMS]]._size_bin
        if self.parts[vk.P_REQUESTS]:
            cols["table"][i, :n] = builders[self.part_key[vk.P_REQUESTS]]._table
        self.mask[i] = env._mask

    def sync(self, i: int, env: DispatchEnv) -> None:
        """Write row ``i`` back into ``env``: its engine, user history, reward state, counters and mask.

        ``env`` is then exactly the single environment that played the episode in
        Python; it may go on in Python (the row is not changed).
        """
        sim = env._sim
        assert sim is not None
        cols = self.cols
        c = self.ctl[i]
        n = int(c[vk.X_JOBS])
        sim._mem[:] = self.mem[i, : self.mem_len[i]]
        sim.start_time[:] = cols["start"][i, :n]
        sim.end_time[:] = cols["end"][i, :n]
        sim.killed[:] = cols["killed"][i, :n]
        state = LoopState(
            mem=sim._mem, clock=self.fst[i, vk.F_NOW : vk.F_NOW + 1].copy(), ctl=c[: ek.COUNTERS].copy(),
            submit=cols["submit"][i, :n], runtime=cols["runtime"][i, :n], estimate=cols["estimate"][i, :n],
            prediction=cols["prediction"][i, :n], start=sim.start_time, end=sim.end_time, killed=sim.killed,
            ended=cols["ended"][i, :n].copy(), heap_t=cols["heap_t"][i, :n].copy(),
            heap_s=cols["heap_s"][i, :n].copy(), heap_j=cols["heap_j"][i, :n].copy(),
            kill=sim.kill_at_estimate, first_prediction=sim.first_prediction, alarm=np.full(n, np.nan),
            predictor=empty_arrays(n), log=[np.empty(0)],  # fixed predictions: no hooks
        )  # fmt: skip
        adopt_loop(sim, state, "env")
        env.decision_count = int(c[ek.C_DECISIONS])
        env._done = bool(c[vk.X_DONE])
        env._mask[:] = self.mask[i]
        f = self.fst[i]
        reward: Any = env._reward
        if self.reward_kind != vk.NO_KERNEL:
            reward._lo = int(c[vk.X_LO])
            reward._frozen = float(f[vk.F_FROZEN])
            reward._prev = float(f[vk.F_PREV])
            reward._time = float(f[vk.F_TIME])
        if self.parts[vk.P_JOBS]:
            h: Any = env._builders[self.part_key[vk.P_JOBS]]._history  # type: ignore[attr-defined]
            h.seen = int(c[vk.X_SEEN])
            h.count[:], h.last[:] = self.h_count[i], self.h_last[i]
            h.runtime[:], h.accuracy[:] = self.h_run[i], self.h_acc[i]

    def schedule(self, i: int, env: DispatchEnv) -> Schedule:
        """Row ``i``'s engine schedule, read from the row without :meth:`sync`.

        The schedule ``env``'s engine gives after a sync (``Simulator.schedule``), field
        for field: times, kills, first predictions, decisions, placements. For an
        episode's end, where nothing else of the single environment is read before its
        next reset.
        """
        sim = env._sim
        assert sim is not None and not sim._amended
        cols = self.cols
        c = self.ctl[i]
        n = int(c[vk.X_JOBS])
        arrived = int(c[ek.C_NEXT])
        first = sim.first_prediction.copy()
        first[:arrived] = cols["prediction"][i, :arrived]  # adopt_loop's, fixed predictions
        a = ek.views(self.mem[i, : self.mem_len[i]])
        return Schedule(
            workload=sim.workload, start=cols["start"][i, :n].copy(), end=cols["end"][i, :n].copy(),
            killed=cols["killed"][i, :n].copy(), first_prediction=first,
            prediction_changes=ChangeLog(sim.predictor.changes), policy="env", predictor=sim.predictor.name,
            sim_seconds=0.0, decisions=int(c[ek.C_DECISIONS]), extras={}, machine=sim.machine,
            placement_ptr=a.placement_ptr.copy(), placement_nodes=a.placement_nodes.copy(),
        )  # fmt: skip

    def step(self, actions: np.ndarray, skip: np.ndarray) -> None:
        """Step every row ``i`` with ``not skip[i]`` (see :func:`~hpcgym.env._vector_kernels.step_all`)."""
        if actions is not self.actions:
            self.actions[:] = actions
        if skip is not self.skip:
            self.skip[:] = skip
        self.kernel(*self.args)  # the arenas' types: the native core's one signature

    def __getstate__(self) -> dict[str, Any]:
        made = {"cols", "obs", "obs0", "u_scratch", "args", "kernel"}  # by _link
        views = {name for name, _, _ in _VIEWS.values()} | made
        return {k: v for k, v in self.__dict__.items() if k not in views}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.cols = {}
        self._link()
