"""The engine of an episode, its job requests aligned once per trace instead of once per episode.

Every episode builds a :class:`~hpcgym.sim.Simulator` on a window of one trace. The
engine's constructor aligns the window's requests to the machine
(:func:`hpcgym.machine.align_requests`, one allocator check per distinct request) and
ranks the distinct request shapes, smallest first: about a third of a reset. Both are
row by row, or an order that a subset keeps, so :class:`TraceRequests` does them once for
the whole trace and :class:`EpisodeEngine` reads the window's rows:

* the aligned requests of the window are the trace's aligned rows at the window's jobs;
* the window's shapes, ordered as the engine orders them (by size, then by the chunk
  count and each amount), are the trace's shapes present in the window, in the trace's
  order: a total order restricted to a subset is the subset's order.

The engine is then the one ``Simulator(window, machine, ...)`` builds, array for array
(``tests/env/test_episode_engine.py``). A window holding a job the machine cannot run takes the
engine's own path, which raises its error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcgym.machine import Machine, align_requests, unique_ints, unique_rows
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload


class TraceRequests:
    """A trace's requests aligned to a machine, and its request shapes in the engine's order.

    Args:
        trace: the trace.
        machine: the machine its episodes run on.
    """

    def __init__(self, trace: Workload, machine: Machine) -> None:
        chunks, per_chunk, reason = align_requests(machine, trace.resources, trace.chunks, trace.per_chunk)
        self.chunks = chunks
        self.per_chunk = np.ascontiguousarray(per_chunk)
        self.bad = reason != 0
        self.any_bad = bool(self.bad.any())
        # whether alignment changed nothing (an SWF trace on its machine): a window's rows are
        # then its workload's own, and the engine takes those without comparing them
        self.same_chunks = bool(np.array_equal(chunks, trace.chunks))
        self.same_per_chunk = bool(np.array_equal(self.per_chunk, trace.per_chunk))
        rows = np.column_stack([chunks, per_chunk]) if len(chunks) else np.zeros((0, 1 + per_chunk.shape[1]))
        shapes, inverse = unique_rows(rows)
        weight = machine.nodes.weight
        size = shapes[:, 0] * (shapes[:, 1:] @ weight) if len(shapes) else np.zeros(0, np.int64)
        order = np.lexsort((*shapes.T[::-1], size))
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        self.rank = rank[inverse.reshape(-1)].astype(np.int64)
        self.shape_chunks = np.ascontiguousarray(shapes[order, 0])
        self.shape_v = np.ascontiguousarray(shapes[order, 1:])


class EpisodeEngine(Simulator):
    """A :class:`~hpcgym.sim.Simulator` on trace jobs ``idx``, its requests read from ``requests``.

    Args:
        workload: the window (the trace's jobs ``idx``).
        idx: the window's trace indices.
        requests: the trace's :class:`TraceRequests` on ``machine``.
        machine, predictor, kill_at_estimate: as for :class:`~hpcgym.sim.Simulator`.
    """

    def __init__(
        self,
        workload: Workload,
        idx: np.ndarray,
        requests: TraceRequests,
        machine: Machine,
        predictor: Any,
        *,
        kill_at_estimate: bool = False,
    ) -> None:
        self._from = (requests, idx)
        super().__init__(workload, machine, predictor, kill_at_estimate=kill_at_estimate)

    def _requests(self) -> None:
        requests, idx = self.__dict__.pop("_from")
        if requests.any_bad and requests.bad[idx].any():  # the engine's own path says which job and why
            super()._requests()
            return
        w = self.workload
        # as the engine does: the workload's own arrays where alignment changed nothing
        chunks = w.chunks if requests.same_chunks else requests.chunks[idx]
        if chunks is not w.chunks and np.array_equal(chunks, w.chunks):
            chunks = w.chunks
        own = w.per_chunk.flags.c_contiguous
        per_chunk = w.per_chunk if own and requests.same_per_chunk else requests.per_chunk[idx]
        if own and per_chunk is not w.per_chunk and np.array_equal(per_chunk, w.per_chunk):
            per_chunk = w.per_chunk
        self._chunks = chunks
        self._per_chunk = np.ascontiguousarray(per_chunk)
        # the shapes present, ascending, and each job's place among them
        present, self._shape = unique_ints(requests.rank[idx], len(requests.shape_chunks))
        self._shape_chunks = np.ascontiguousarray(requests.shape_chunks[present])
        self._shape_v = np.ascontiguousarray(requests.shape_v[present])


_CACHE: dict[tuple[Any, ...], tuple[Workload, TraceRequests]] = {}
_CACHE_SIZE = 8


def trace_requests(trace: Workload, machine: Machine) -> TraceRequests:
    """The :class:`TraceRequests` of ``trace`` on ``machine``, shared by the environments of a process.

    Traces are shared already (:func:`hpcgym.env.episodes.load_trace` caches them); so are
    their aligned requests, for up to eight traces and machines.
    """
    nodes = machine.nodes
    key = (
        id(trace),
        tuple(machine.resources),
        np.asarray(nodes.capacity).tobytes(),
        np.asarray(nodes.weight).tobytes(),
        bool(nodes.exclusive),
        int(nodes.policy),
        np.asarray(nodes.capacity).shape,
    )
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is trace:
        return hit[1]
    requests = TraceRequests(trace, machine)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (trace, requests)
    return requests
