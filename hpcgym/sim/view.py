"""The read-only view of the engine a dispatcher decides on: :class:`SystemView`.

The engine (:class:`~hpcgym.sim.Simulator`) builds one view at each reset. Its columns
are read-only numpy views of the engine's live buffers; its queue, running and fit
arrays are rebuilt only when the engine's counters say they changed. The view reads the
engine's private state (no other module does), which is why it lives beside the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from hpcgym.common import native
from hpcgym.sim import _kernels as ek

__all__ = ["SystemView"]


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


_LIVE = (
    "_fitbuf",
    "_fitcache",
    "_fitro",
    "_mem",
    "_qcache",
    "_qseg",
    "_rcache",
    "_rseg",
    "chunks",
    "free",
    "free_total",
    "per_chunk",
    "placement_nodes",
    "placement_ptr",
    "prediction",
    "procs",
    "request",
    "start",
)
"""The view's attributes that :meth:`SystemView._link` binds to the engine's buffers."""


class SystemView:
    """What a dispatcher may look at: read-only, refreshed by the engine.

    Attributes:
        now: current time (s).
        machine: the :class:`~hpcgym.machine.Machine`.
        capacity: ``(nodes, R)`` capacity of each node.
        free: ``(nodes, R)`` free amount of each resource on each node (live).
        free_total: ``(R,)`` free amount of each resource type, over the nodes (live).
        chunks: ``(n,)`` each job's chunk count, aligned to the machine (on an
            exclusive machine a chunk larger than a node is split into whole nodes).
        per_chunk: ``(n, R)`` each job's request per chunk, in the machine's resource order.
        request: ``(n, R)`` each job's total request, ``chunks * per_chunk``.
        procs: ``(n,)`` each job's total of the machine's first resource type: the
            requested processors of an SWF job. Kept for the environment's
            processor-based observations; whether a job fits is :meth:`fits`.
        jobs: the workload with run times hidden (``jobs.submit``, ``jobs.user`` ...).
        submit, estimate: job columns (read-only), indexed by job.
        prediction: each job's current predicted run time (read-only).
        start: each job's start time, NaN while it waits (read-only).
        placement_ptr, placement_nodes: where each started job runs (see :meth:`placement`).

    The arrays of :attr:`queue` and :attr:`running` are read-only views of the engine's
    buffers, valid until the engine next starts or ends a job: copy them to keep them.
    """

    __slots__ = (
        "_fitbuf",
        "_fitcache",
        "_fitfver",
        "_fitqver",
        "_fitro",
        "_mem",
        "_qcache",
        "_qseg",
        "_qver",
        "_rcache",
        "_rseg",
        "_rver",
        "_sim",
        "capacity",
        "chunks",
        "estimate",
        "free",
        "free_total",
        "jobs",
        "machine",
        "per_chunk",
        "placement_nodes",
        "placement_ptr",
        "prediction",
        "procs",
        "request",
        "start",
        "submit",
    )

    def __init__(self, sim: Any) -> None:  # the Simulator (whose private state it reads)
        self._sim = sim
        w = sim.workload
        self.jobs = w.public
        self.submit = w.submit
        self.estimate = w.estimate
        self._link()

    def _link(self) -> None:
        """Bind the live columns; numpy views do not survive pickling or deep copies."""
        sim = self._sim
        a = sim._a
        self.machine = sim.machine
        self.capacity = sim.machine.capacity
        self.chunks = _readonly(a.chunks)
        self.per_chunk = _readonly(a.per_chunk)
        request = a.chunks[:, None] * a.per_chunk
        request.flags.writeable = False
        self.request = request
        self.procs = request[:, 0]
        self.prediction = _readonly(sim.predictor.prediction)
        self.start = _readonly(sim.start_time)
        self.free = _readonly(a.free)
        self.free_total = _readonly(a.free_total)
        self.placement_ptr = _readonly(a.placement_ptr)
        self.placement_nodes = _readonly(a.placement_nodes)
        self._mem = _readonly(sim._mem)
        self._qseg = _readonly(a.queue)
        self._rseg = _readonly(a.running)
        self._qver = self._rver = -1
        self._qcache = self._rcache = np.zeros(0, dtype=np.int64)
        self._fitbuf = np.zeros(len(a.chunks), dtype=bool)
        self._fitro = _readonly(self._fitbuf)
        self._fitcache = self._fitro[:0]
        self._fitqver = self._fitfver = -1

    def _unlink(self) -> None:
        """Let go of the engine's buffers (:meth:`Simulator.close`); the view shows nothing after."""
        for name in _LIVE:
            if hasattr(self, name):
                delattr(self, name)

    def __getstate__(self) -> tuple[None, dict[str, object]]:
        return None, {"_sim": self._sim, "jobs": self.jobs, "submit": self.submit, "estimate": self.estimate}

    def __setstate__(self, state: tuple[None, dict[str, object]]) -> None:
        for name, value in state[1].items():
            setattr(self, name, value)
        if "_a" in vars(self._sim):  # else the engine links us once it is restored
            self._link()

    @property
    def now(self) -> float:
        return self._sim.now

    @property
    def free_procs(self) -> int:
        """Free amount of the machine's first resource type, summed over the nodes.

        The free processors of an SWF machine, kept for the environment's
        processor-based observations. It tells whether a job fits only on a machine of
        one node and one resource type: :meth:`fits` decides in general.
        """
        return int(self.free_total[0])

    @property
    def ended(self) -> Sequence[int]:
        """Jobs that have ended, in termination order (a live list: do not modify)."""
        return self._sim._ended

    def end(self, jobs: np.ndarray) -> np.ndarray:
        """End times of ``jobs``; NaN for a job that has not ended (no look into the future)."""
        sim = self._sim
        return np.where(sim._a.state[jobs] == 3, sim.end_time[jobs], np.nan)

    @property
    def queue(self) -> np.ndarray:
        """Waiting jobs in arrival order (read-only array of job indices)."""
        sim = self._sim
        if self._qver != sim._qver:
            mem = sim._mem
            if mem[ek.H_QTOMBS]:
                native.get(ek.compact)(mem)
            self._qcache = self._qseg[mem[ek.H_QLO] : mem[ek.H_QHI]]
            self._qver = sim._qver
        return self._qcache

    @property
    def running(self) -> np.ndarray:
        """Running jobs in start order (read-only array of job indices)."""
        sim = self._sim
        if self._rver != sim._rver:
            self._rcache = self._rseg[: sim._nr]
            self._rver = sim._rver
        return self._rcache

    def iter_queue(self) -> Iterable[int]:
        """Waiting jobs in arrival order, as Python ints."""
        return iter(self.queue.tolist())

    @property
    def queue_length(self) -> int:
        return self._sim._nq

    def fits(self, job: int) -> bool:
        """Whether ``job`` fits the free resources now (the allocator decides)."""
        return bool(native.get(ek.fits_job)(self._sim._mem, int(job)))

    def fits_each(self, jobs: np.ndarray) -> np.ndarray:
        """Whether each of ``jobs`` fits the free resources now (a new bool array)."""
        js = np.ascontiguousarray(jobs, dtype=np.int64).reshape(-1)
        out = np.zeros(len(js), dtype=bool)
        native.get(ek.fits_jobs)(self._sim._mem, js, out)
        return out

    @property
    def queue_fits(self) -> np.ndarray:
        """Whether each waiting job (in :attr:`queue` order) fits now (read-only)."""
        sim = self._sim
        if self._fitqver != sim._qver or self._fitfver != sim._fver:
            q = self.queue  # compacted: the waiting jobs are mem[H_QLO:H_QHI] of the queue segment
            mem = sim._mem  # its writable alias, of the kernel's one signature
            native.get(ek.fits_jobs)(mem, sim._a.queue[mem[ek.H_QLO] : mem[ek.H_QHI]], self._fitbuf)
            self._fitcache = self._fitro[: len(q)]
            self._fitqver, self._fitfver = sim._qver, sim._fver
        return self._fitcache

    def placement(self, job: int) -> np.ndarray:
        """The node of each chunk of a started job (-1 while it has not started)."""
        p = self.placement_ptr
        return self.placement_nodes[p[job] : p[job + 1]]

    def predicted_end(self, jobs: np.ndarray) -> np.ndarray:
        """Predicted end time of running ``jobs``: start + current prediction."""
        return self.start[jobs] + self.prediction[jobs]

    def bundles(self) -> tuple[tuple, tuple, tuple]:  # type: ignore[type-arg]
        """The machine, job and state bundles of compiled kernels, as plain tuples.

        ``(Nodes, Jobs, State)`` with the fields of :class:`~hpcgym.machine.allocator.Nodes`,
        :class:`Jobs` and :class:`State`, all read-only. Plain tuples cross into numba
        faster than named ones; a kernel rebuilds the names with ``Jobs(*jobs)``. (The
        reference dispatchers pass :meth:`kernel_inputs` instead, fewer arrays still.)
        """
        jobs = (
            self.chunks,
            self.per_chunk,
            self.prediction,
            self.start,
            self.placement_ptr,
            self.placement_nodes,
        )
        return tuple(self._sim.machine.nodes), jobs, (self.now, self.free, self.queue, self.running)

    def kernel_inputs(self, *, live: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """``(mem, prediction, start, now)``: the engine's state for compiled kernels.

        ``mem`` is the engine's buffer (read-only), from which compiled code rebuilds
        the bundles with :func:`hpcgym.sim._kernels.nodes_of`, ``jobs_of`` and
        ``state_of``: one array crosses into numba instead of a dozen.

        Args:
            live: hand the engine's buffer itself, writable, instead of a read-only view.
                For hpcgym's reference kernels, which write only their own output
                buffers: numba compiles a function once per argument type, and a
                read-only array is a type of its own, so with the engine's own type the
                allocator they share with the engine is compiled once, not twice.
        """
        self.queue  # noqa: B018 - compacts the queue buffer, which kernels then read as it is
        return self._sim._mem if live else self._mem, self.prediction, self.start, self._sim.now
