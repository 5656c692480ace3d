"""The one allocator: where a job's chunks go on a machine of nodes x resource types.

Every "does it fit" in hpcgym is answered here: by the engine when it starts a job, by
every dispatcher kernel, by EASY's reservation (trial allocation on a copy of the free
matrix) and by the environment's action mask. The functions are compiled with numba
(``cache=True``) and pure: they read a free matrix and write only the arrays they are
given.

A request is ``chunks`` copies of one per-chunk vector ``v`` (one amount per resource
type, in the machine's order; PBS ``select=chunks:ncpus=..:ngpus=..``). A *placement* is
one node index per chunk.

Policies (:data:`POLICIES`):

* **first-fit**: nodes in index order; a node takes as many of the job's chunks as it
  has room for before the next node is tried (so one node may hold several chunks of
  one job). This is 001's "all requested computers available" test with a fixed node
  order.
* **best-fit**: the nodes that would have the *fewest free resources left* after taking
  one chunk come first, and each takes as many chunks as it has room for. "Fewest" is
  the normalised sum ``sum_r (free[i, r] - v[r]) * weight[r]`` with
  ``weight[r] = 1 / (largest capacity of type r on any node)``: every resource type
  counts as a fraction of the largest node, so 1 GPU left of 2 weighs as much as 8 cores
  left of 16. The weights are integers scaled by a common multiple of those capacities
  (exact, see :func:`best_fit_weights`); equal scores keep node order. This is the
  allocation of 001/002's PRB. Filling the best node first is the same as choosing one
  node per chunk greedily: a node's score only falls as it takes chunks.

Whether a job fits does not depend on the policy: node ``i`` can hold
``min_r floor(free[i, r] / v[r])`` chunks (types with ``v[r] = 0`` impose nothing), and
the job fits if those counts add up to ``chunks``. On an **exclusive** machine a chunk
takes a whole node: node ``i`` holds one chunk if it is entirely free and its capacity
covers ``v``, none otherwise; taking it empties the node and giving it back restores
the node's capacity.

Compiled code receives the machine as a :class:`Nodes` bundle. Python callers may pass
it as a plain tuple (``tuple(nodes)``): numba unboxes a plain tuple several times faster
than a named one, so the hot paths do that and every kernel rebuilds the named tuple on
entry (``Nodes(*nodes)``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from hpcgym.common import native
from hpcgym.common._views import borrowed

FIRST_FIT = 0
BEST_FIT = 1
POLICIES = {"first-fit": FIRST_FIT, "best-fit": BEST_FIT}
"""Allocation policies by name, and the code compiled kernels see."""

_EXACT_WEIGHT_LIMIT = 2**40


class Nodes(NamedTuple):
    """The machine as compiled code sees it.

    Attributes:
        capacity: ``(nodes, R)`` int64, each node's amount of each resource type.
        weight: ``(R,)`` int64, best-fit weight of each resource type.
        exclusive: a chunk takes a whole node.
        policy: :data:`FIRST_FIT` or :data:`BEST_FIT`.
    """

    capacity: np.ndarray
    weight: np.ndarray
    exclusive: bool
    policy: int


NodesArg = Nodes | tuple[Any, ...]
"""A :class:`Nodes` bundle, or the same fields as a plain tuple (see the module docstring)."""


@njit(cache=True, inline="always")
def _nodes(machine: NodesArg) -> Nodes:
    """The named bundle of ``machine``, its arrays borrowed (:func:`hpcgym.common._views.borrowed`).

    Every compiled function here that takes arrays borrows them on entry: the caller
    holds them for the call, none is returned or kept, and the views made of them then
    cost no reference counting (the compiled event loop's main cost before).
    """
    return Nodes(borrowed(machine[0]), borrowed(machine[1]), machine[2], machine[3])


def best_fit_weights(capacity: np.ndarray) -> np.ndarray:
    """Integer weights proportional to ``1 / largest capacity`` of each resource type.

    With ``M`` the least common multiple of the largest capacities, ``weight[r] =
    M / largest[r]`` exactly; a type no node has gets weight 0. Should ``M`` exceed
    2**40 (capacities with few common factors), the weights are ``round(2**40 /
    largest[r])`` instead, which orders nodes the same way up to rounding.
    """
    largest = np.asarray(capacity, dtype=np.int64).max(axis=0) if len(capacity) else np.zeros(0, np.int64)
    present = [int(c) for c in largest if c > 0]
    m = math.lcm(*present) if present else 1
    if m <= _EXACT_WEIGHT_LIMIT:
        return np.array([m // int(c) if c > 0 else 0 for c in largest], dtype=np.int64)
    return np.array(
        [max(1, round(_EXACT_WEIGHT_LIMIT / int(c))) if c > 0 else 0 for c in largest], dtype=np.int64
    )


@njit(cache=True, inline="always")
def sorts_before(a: Any, b: Any) -> bool:
    """Whether key ``a`` sorts strictly before ``b`` (NaN last, as numpy sorts)."""
    return a < b or (b != b and a == a)


@njit(cache=True)
def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``: the same order, ties (and NaNs) keeping index order.

    A merge sort over runs of 16 sorted by insertion. Numba compiles numpy's stable
    argsort several times more slowly than this, and the order of a stable sort is
    unique, so the two agree element for element.
    """
    n = len(keys)
    return stable_argsort_into(keys, np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))


INSERTION_RUN = 16
"""Runs :func:`stable_argsort_into` sorts by insertion before merging them: up to this many
items, sorting by :func:`insertion_sort_by` gives its order without the call."""


@njit(cache=True, inline="always")
def insertion_sort_by(idx: np.ndarray, lo: int, hi: int, keys: np.ndarray) -> None:
    """Sort ``idx[lo:hi]`` in place by ``keys[idx[i]]``, stably (NaN last, as numpy sorts)."""
    for i in range(lo + 1, hi):
        x = idx[i]
        kx = keys[x]
        j = i - 1
        while j >= lo and sorts_before(kx, keys[idx[j]]):
            idx[j + 1] = idx[j]
            j -= 1
        idx[j + 1] = x


@njit(cache=True)
def stable_argsort_into(keys: np.ndarray, idx: np.ndarray, spare: np.ndarray) -> np.ndarray:
    """:func:`stable_argsort` in the caller's buffers (each at least ``len(keys)`` long).

    Returns the order: a view of ``idx`` or of ``spare`` (whichever the merges ended in).
    """
    n = len(keys)
    idx = idx[:n]
    for i in range(n):
        idx[i] = i
    run = INSERTION_RUN
    for lo in range(0, n, run):
        insertion_sort_by(idx, lo, min(lo + run, n), keys)
    if n <= run:
        return idx
    src = idx
    dst = spare[:n]
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if sorts_before(keys[src[j]], keys[src[i]]):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        width *= 2
    return src


@njit(cache=True, inline="always")
def slots(nodes: Nodes, free: np.ndarray, i: int, v: np.ndarray) -> int:
    """How many chunks of ``v`` node ``i`` can take now (at most 1 on an exclusive machine)."""
    cap = nodes.capacity
    n_res = free.shape[1]
    if nodes.exclusive:
        for r in range(n_res):
            if free[i, r] != cap[i, r] or cap[i, r] < v[r]:
                return 0
        return 1
    best = -1
    for r in range(n_res):
        if v[r] > 0:
            k = free[i, r] // v[r]
            if best < 0 or k < best:
                best = k
                if best == 0:
                    return 0
    if best < 0:  # asks for nothing of this machine: never the case after alignment
        return 1 << 40
    return best


@njit(cache=True)
def fits(machine: NodesArg, free: np.ndarray, chunks: int, v: np.ndarray) -> bool:
    """Whether ``chunks`` chunks of ``v`` fit the free matrix (whatever the policy)."""
    nodes = _nodes(machine)
    free, v = borrowed(free), borrowed(v)
    if chunks == 1 and not nodes.exclusive:  # one node with room is enough: no division
        n_res = free.shape[1]
        for i in range(free.shape[0]):
            ok = True
            for r in range(n_res):
                if free[i, r] < v[r]:
                    ok = False
                    break
            if ok:
                return True
        return False
    need = chunks
    for i in range(free.shape[0]):
        need -= slots(nodes, free, i, v)
        if need <= 0:
            return True
    return False


def _fits_example() -> tuple[Any, ...]:
    """Arguments of the types :func:`hpcgym.machine.requests.align_requests` passes to :func:`fits`."""
    capacity = np.ones((1, 1), dtype=np.int64)
    return Nodes(capacity, np.ones(1, dtype=np.int64), False, 0), capacity, 1, np.ones(1, dtype=np.int64)


native.register(fits, _fits_example)


@njit(cache=True)
def place(machine: NodesArg, free: np.ndarray, chunks: int, v: np.ndarray, out: np.ndarray, pos: int) -> bool:
    """Choose a node for each chunk by the machine's policy; ``free`` is not changed.

    Writes the placement to ``out[pos : pos + chunks]`` (in node order of the policy)
    and returns True, or returns False (``out`` then holds garbage there) when the
    request does not fit.
    """
    nodes = _nodes(machine)
    free, v, out = borrowed(free), borrowed(v), borrowed(out)
    n_nodes = free.shape[0]
    if nodes.policy == BEST_FIT and n_nodes > 1:
        # integer scores held as float64, exactly: each term is at most about 2**41
        # (see best_fit_weights), so a sum over fewer than 4,096 resource types stays
        # below 2**53; the float keys share the sort's one compiled specialisation
        score = np.empty(n_nodes, dtype=np.float64)
        cand = np.empty(n_nodes, dtype=np.int64)
        room = np.empty(n_nodes, dtype=np.int64)
        nc = 0
        total = 0
        w = nodes.weight
        for i in range(n_nodes):
            k = slots(nodes, free, i, v)
            if k > 0:
                s = 0
                for r in range(free.shape[1]):
                    s += (free[i, r] - v[r]) * w[r]
                score[nc] = s
                cand[nc] = i
                room[nc] = k
                nc += 1
                total += k
        if total < chunks:
            return False
        order = stable_argsort(score[:nc])  # ties keep node order
        left = chunks
        for o in order:
            k = room[o]
            if k > left:
                k = left
            for _ in range(k):
                out[pos] = cand[o]
                pos += 1
            left -= k
            if left == 0:
                break
        return True
    left = chunks
    for i in range(n_nodes):
        k = slots(nodes, free, i, v)
        if k > left:
            k = left
        for _ in range(k):
            out[pos] = i
            pos += 1
        left -= k
        if left == 0:
            return True
    return False


@njit(cache=True)
def take(machine: NodesArg, free: np.ndarray, v: np.ndarray, placement: np.ndarray) -> int:
    """Subtract a placement from ``free`` in place; returns the resource units taken.

    The placement is not checked (see :func:`take_checked`).
    """
    nodes = _nodes(machine)
    free, v, placement = borrowed(free), borrowed(v), borrowed(placement)
    taken = 0
    n_res = free.shape[1]
    for i in placement:
        if nodes.exclusive:
            for r in range(n_res):
                taken += free[i, r]
                free[i, r] = 0
        else:
            for r in range(n_res):
                free[i, r] -= v[r]
                taken += v[r]
    return taken


@njit(cache=True)
def give(machine: NodesArg, free: np.ndarray, v: np.ndarray, placement: np.ndarray) -> None:
    """Add a placement back to ``free`` in place (the inverse of :func:`take`)."""
    nodes = _nodes(machine)
    free, v, placement = borrowed(free), borrowed(v), borrowed(placement)
    cap = nodes.capacity
    n_res = free.shape[1]
    for i in placement:
        if nodes.exclusive:
            for r in range(n_res):
                free[i, r] = cap[i, r]
        else:
            for r in range(n_res):
                free[i, r] += v[r]


@njit(cache=True)
def take_checked(machine: NodesArg, free: np.ndarray, v: np.ndarray, placement: np.ndarray) -> int:
    """:func:`take` for a placement someone else chose, refusing an impossible one.

    Impossible: a node index out of range, a chunk that does not fit its node when its
    turn comes (so two chunks on one node must fit together), or on an exclusive
    machine a node that is not entirely free or too small.

    Returns:
        0 once taken; ``-1 - c`` if chunk ``c`` is the first impossible one, in which
        case ``free`` is left as it was.
    """
    nodes = _nodes(machine)
    free, v, placement = borrowed(free), borrowed(v), borrowed(placement)
    cap = nodes.capacity
    n_res = free.shape[1]
    n_nodes = free.shape[0]
    for c in range(len(placement)):
        i = placement[c]
        ok = 0 <= i < n_nodes and slots(nodes, free, i, v) > 0
        if not ok:
            for d in range(c):  # undo the chunks already taken
                k = placement[d]
                for r in range(n_res):
                    free[k, r] = cap[k, r] if nodes.exclusive else free[k, r] + v[r]
            return -1 - c
        for r in range(n_res):
            free[i, r] = 0 if nodes.exclusive else free[i, r] - v[r]
    return 0


@njit(cache=True)
def any_fits(
    machine: NodesArg, free: np.ndarray, shape_chunks: np.ndarray, shape_v: np.ndarray, shapes: np.ndarray
) -> bool:
    """Whether one of the request shapes ``shapes`` (indices into the shape arrays) fits ``free``.

    Shapes are the distinct requests of a workload (see ``Simulator``): checking each
    shape with a waiting job once, in the order given (the engine: smallest first), with
    an early exit, answers "does any waiting job fit" without looking at the waiting jobs
    one by one.
    """
    nodes = _nodes(machine)
    free, shape_chunks, shape_v, shapes = (
        borrowed(free),
        borrowed(shape_chunks),
        borrowed(shape_v),
        borrowed(shapes),
    )
    for s in shapes:
        if fits(nodes, free, shape_chunks[s], shape_v[s]):
            return True
    return False


def allocate(nodes: NodesArg, free: np.ndarray, chunks: int, per_chunk: np.ndarray) -> np.ndarray | None:
    """A placement (node index per chunk) of ``chunks x per_chunk`` on ``free``, or None.

    The Python face of :func:`place`; ``free`` is not changed.

    >>> from hpcgym.machine import Machine
    >>> m = Machine.from_dict({"resources": ["cores", "gpus"],
    ...                        "nodes": [{"count": 2, "cores": 4}, {"count": 1, "cores": 4, "gpus": 2}]})
    >>> allocate(m.nodes, m.capacity.copy(), 2, np.array([2, 1]))  # only node 2 has GPUs
    array([2, 2])
    >>> allocate(m.nodes, m.capacity.copy(), 3, np.array([2, 1])) is None
    True
    """
    out = np.empty(int(chunks), dtype=np.int64)
    v = np.ascontiguousarray(per_chunk, dtype=np.int64)
    if place(tuple(nodes), np.ascontiguousarray(free, dtype=np.int64), int(chunks), v, out, 0):
        return out
    return None
