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

from typing import TYPE_CHECKING, Any

import numpy as np

import hpcgym.env._vector_kernels as vk
from hpcgym.env._kernels import ACCRUED_BSLD, ACCRUED_WAIT_HOURS
from hpcgym.env.observations import FreeResources, Histograms, JobRequests, JobWindow, SystemSummary
from hpcgym.env.rewards import BsldDense, BsldSparse, WaitDense
from hpcgym.sim import TAU
from hpcgym.sim import _kernels as ek
from hpcgym.sim.loop import LoopState, adopt_loop

if TYPE_CHECKING:
    from hpcgym.env.dispatch import DispatchEnv

_PARTS = {JobWindow: vk.P_JOBS, Histograms: vk.P_HISTOGRAMS, SystemSummary: vk.P_SYSTEM,
          FreeResources: vk.P_RESOURCES, JobRequests: vk.P_REQUESTS}  # fmt: skip
_REWARDS = {BsldDense: ACCRUED_BSLD, WaitDense: ACCRUED_WAIT_HOURS, BsldSparse: vk.NO_KERNEL}
_FLOAT_COLS: tuple[str, ...] = ("submit", "runtime", "estimate", "prediction", "start", "end", "heap_t")
_FLOAT_COLS += ("reward_runtime", "counted")
_INT_COLS = ("ended", "heap_s", "heap_j", "procs", "user", "size_bin")


def compiled_obstacle(env: DispatchEnv) -> str | None:
    """Why ``env``'s configuration cannot run compiled, or None if it can.

    The reason starts with the parameter that decides it (``mode``, ``backfill``,
    ``every_event``, ``predictor``, ``observations``, ``reward``).
    """
    cfg = env.config
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

    def __init__(self, n: int, env: DispatchEnv) -> None:
        self.n = n
        self.k = env.window_size
        self.kill = bool(env.config.episode.kill_at_estimate)
        self.oracle = bool(env.config.observation.oracle)
        builders = env._builders
        parts = np.zeros(vk.PARTS, dtype=np.bool_)
        self.part_key: dict[int, str] = {}
        for name, b in builders.items():
            parts[_PARTS[type(b)]] = True
            self.part_key[_PARTS[type(b)]] = name
        self.parts = parts
        oc = env.config.observation
        self.reward_kind = _REWARDS[type(env._reward)]
        self.machine_procs = int(env.trace.procs)
        self.inv_log_t = 1.0 / float(np.log1p(oc.max_time_s))
        self.by_estimate = oc.histogram_duration != "prediction"
        self.total = env.machine.total.astype(np.float64)
        n_users = len(env._users)
        self.u_scratch = tuple(np.zeros(n_users, np.int64) for _ in range(3))
        self.h_count = np.zeros((n, n_users), np.int64)
        self.h_last = np.zeros((n, n_users, 2, 2))
        self.h_run = np.zeros((n, n_users))
        self.h_acc = np.zeros((n, n_users))
        self.ctl = np.zeros((n, vk.CTL), np.int64)
        self.fst = np.zeros((n, vk.FST))
        self.mem = np.zeros((n, 0), np.int64)
        self.mem_len = np.zeros(n, np.int64)
        self.obs = {
            name: np.zeros((n, *space.shape), dtype=space.dtype)
            for name, space in env.observation_space.spaces.items()  # type: ignore[attr-defined]
        }
        self.mask = np.zeros((n, self.k + 1), dtype=np.bool_)
        self.cost = np.zeros(n)
        self.invalid = np.zeros(n, dtype=np.bool_)
        self.final = np.zeros(n, dtype=np.bool_)
        self.actions = np.zeros(n, dtype=np.int64)
        self.no_skip = np.zeros(n, dtype=np.bool_)
        self.jobs_cap = 0
        self.cols: dict[str, np.ndarray] = {}
        self._kargs: tuple[Any, ...] | None = None
        self.n_req = len(builders[self.part_key[vk.P_REQUESTS]].features) if parts[vk.P_REQUESTS] else 1
        self._dummy = (
            np.zeros((n, 1, 1), np.float32),
            np.zeros((n, 1, 1), np.float32),
            np.zeros((n, 1), np.float32),
            np.zeros((n, 1), np.float32),
            np.zeros((n, 1, 1), np.float32),
        )  # the parts a configuration does not show, in P_* order
        self.reserve(max(env.window_jobs, 1), 0)

    def reserve(self, jobs: int, mem_len: int) -> None:
        """Grow the padded per-job columns to ``jobs`` and the engine rows to ``mem_len`` (keeping rows)."""
        n = self.n
        if jobs > self.jobs_cap or mem_len > self.mem.shape[1]:
            self._kargs = None
        if jobs > self.jobs_cap:
            cap = max(jobs, 2 * self.jobs_cap)
            old, self.cols = self.cols, {}
            specs: list[tuple[str, Any, tuple[int, ...]]] = [(c, np.float64, ()) for c in _FLOAT_COLS]
            specs += [(c, np.int64, ()) for c in _INT_COLS]
            specs += [("killed", np.bool_, ()), ("table", np.float32, (self.n_req,))]
            for name, dtype, tail in specs:
                a = np.zeros((n, cap, *tail), dtype=dtype)
                if name in old:
                    a[:, : self.jobs_cap] = old[name]
                self.cols[name] = a
            self.jobs_cap = cap
            self.fitbuf = np.zeros(cap, dtype=np.bool_)
        if mem_len > self.mem.shape[1]:
            mem = np.zeros((n, max(mem_len, 2 * self.mem.shape[1])), np.int64)
            mem[:, : self.mem.shape[1]] = self.mem
            self.mem = mem

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
            kill=sim.kill_at_estimate,
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

    def step(self, actions: np.ndarray, skip: np.ndarray) -> None:
        """Step every row ``i`` with ``not skip[i]`` (see :func:`~hpcgym.env._vector_kernels.step_all`)."""
        if self._kargs is None:
            self._kargs = self._kernel_args()
        vk.step_all(actions, skip, *self._kargs)

    def _kernel_args(self) -> tuple[Any, ...]:
        """``step_all``'s arguments after the actions, kept until :meth:`reserve` grows the arrays."""
        cols = self.cols
        key = self.part_key
        part = [self.obs[key[p]] if p in key else self._dummy[p] for p in range(vk.PARTS)]
        return (
            self.k, self.kill, self.reward_kind, TAU, self.machine_procs, self.oracle, self.inv_log_t,
            self.parts, self.by_estimate, self.total, self.mem, self.ctl, self.fst,
            cols["submit"], cols["runtime"], cols["estimate"], cols["prediction"], cols["start"], cols["end"],
            cols["killed"], cols["ended"], cols["heap_t"], cols["heap_s"], cols["heap_j"],
            cols["reward_runtime"], cols["counted"], cols["procs"], cols["user"], cols["size_bin"],
            cols["table"], self.h_count, self.h_last, self.h_run, self.h_acc, *self.u_scratch,
            self.fitbuf, *part, self.mask, self.cost, self.invalid, self.final,
        )  # fmt: skip

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_kargs"] = None  # rebuilt from the copied arrays
        return state
