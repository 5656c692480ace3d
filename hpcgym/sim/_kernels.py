"""The engine's state in one int64 buffer, and the compiled kernels that change it.

Every call from Python into numba pays for each array argument (about 0.1 us each,
more than most of the work a single event does), so the engine keeps its machine, the
jobs' requests, their placements, the waiting queue and the running jobs in one int64
buffer, ``mem``: a header of sizes, counters and offsets (the ``H_*`` indices), then one
segment per array. Compiled code rebuilds named views of it with :func:`unpack`,
:func:`nodes_of` and :func:`jobs_of` at no cost; Python holds numpy views of the same
segments. One decision or one event instant is then one crossing with one array.

The queue is ``queue[lo:hi]`` (``mem[H_QLO]``, ``mem[H_QHI]``) in arrival order. A job
started from the front moves ``lo``; one started from further back leaves a tombstone
(-1) that :func:`compact` removes before the queue is next read. Running jobs are
``running[:mem[H_NRUN]]`` in start order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from hpcgym.common._views import borrowed, matrix, vector
from hpcgym.machine import Nodes, fits, place, take, take_checked

# header: sizes and flags
H_JOBS = 0
H_NODES = 1
H_RES = 2
H_EXCLUSIVE = 3
H_POLICY = 4
H_SHAPES = 5
H_CHUNKS = 6
# header: counters
H_QLO = 7
H_QHI = 8
H_QTOMBS = 9
H_NRUN = 10
# header: segment offsets
O_CAPACITY = 11
O_WEIGHT = 12
O_FREE = 13
O_CHUNKS = 14
O_PER_CHUNK = 15
O_PTR = 16
O_PLACED = 17
O_STATE = 18
O_QUEUE = 19
O_QPOS = 20
O_RUNNING = 21
O_SHAPE = 22
O_SHAPE_COUNT = 23
O_SHAPE_CHUNKS = 24
O_SHAPE_V = 25
O_ENDED = 26
O_FREE_TOTAL = 27
H_NACTIVE = 28
O_ACTIVE = 29
H_QFIRST = 30  # with H_QTOMBS > 0: no tombstone lies before this position of the queue
HEADER = 31

OK = 0
NOT_WAITING = 1
DOES_NOT_FIT = 2
BAD_PLACEMENT = 3
"""Outcome codes of :func:`commit`."""


class Jobs(NamedTuple):
    """The job columns compiled dispatch kernels read (see ``SystemView.bundles``).

    Attributes:
        chunks: ``(n,)`` chunks per job.
        per_chunk: ``(n, R)`` request per chunk, in the machine's resource order.
        prediction: ``(n,)`` current predicted run times.
        start: ``(n,)`` start times (NaN while waiting).
        placement_ptr, placement_nodes: a running job's nodes are
            ``placement_nodes[placement_ptr[j]:placement_ptr[j + 1]]``.
    """

    chunks: np.ndarray
    per_chunk: np.ndarray
    prediction: np.ndarray
    start: np.ndarray
    placement_ptr: np.ndarray
    placement_nodes: np.ndarray


class State(NamedTuple):
    """The engine's state at a decision point, for compiled dispatch kernels.

    Attributes:
        now: current time (s).
        free: ``(nodes, R)`` free resources.
        queue: waiting jobs in arrival order.
        running: running jobs in start order.
    """

    now: float
    free: np.ndarray
    queue: np.ndarray
    running: np.ndarray


class EngineArrays(NamedTuple):
    """Named views of the engine buffer (see :func:`unpack`).

    Attributes:
        free: ``(nodes, R)`` free amount of each resource on each node.
        chunks, per_chunk: the jobs' requests, aligned to the machine.
        placement_ptr, placement_nodes: job ``j`` holds nodes
            ``placement_nodes[placement_ptr[j]:placement_ptr[j + 1]]`` once started.
        state: 0 not submitted, 1 waiting, 2 running, 3 ended.
        queue, queue_pos: the waiting-queue buffer and each queued job's index in it.
        running: the running-jobs buffer.
        shape, shape_count: each job's request shape, and how many waiting jobs have
            each shape; shape_chunks, shape_v: the shapes, smallest first.
        ended: scratch for the jobs ending at one instant.
        free_total: ``(R,)`` the free amount of each type over all nodes.
        active: the shapes with a waiting job (``shape_count > 0``), in increasing
            order, ``active[:mem[H_NACTIVE]]``: "does a waiting job fit" checks these
            only, not every shape of the workload.
    """

    free: np.ndarray
    chunks: np.ndarray
    per_chunk: np.ndarray
    placement_ptr: np.ndarray
    placement_nodes: np.ndarray
    state: np.ndarray
    queue: np.ndarray
    queue_pos: np.ndarray
    running: np.ndarray
    shape: np.ndarray
    shape_count: np.ndarray
    shape_chunks: np.ndarray
    shape_v: np.ndarray
    ended: np.ndarray
    free_total: np.ndarray
    active: np.ndarray


def build(
    capacity: np.ndarray,
    weight: np.ndarray,
    exclusive: bool,
    policy: int,
    chunks: np.ndarray,
    per_chunk: np.ndarray,
    shape: np.ndarray,
    shape_chunks: np.ndarray,
    shape_v: np.ndarray,
) -> np.ndarray:
    """A fresh engine buffer: empty machine, nothing submitted."""
    n = len(chunks)
    nodes, n_res = capacity.shape
    n_shapes = len(shape_chunks)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(chunks, out=ptr[1:])
    total_chunks = int(ptr[-1])
    sizes = {
        O_CAPACITY: nodes * n_res,
        O_WEIGHT: n_res,
        O_FREE: nodes * n_res,
        O_CHUNKS: n,
        O_PER_CHUNK: n * n_res,
        O_PTR: n + 1,
        O_PLACED: total_chunks,
        O_STATE: n,
        O_QUEUE: n,
        O_QPOS: n,
        O_RUNNING: n,
        O_SHAPE: n,
        O_SHAPE_COUNT: n_shapes,
        O_SHAPE_CHUNKS: n_shapes,
        O_SHAPE_V: n_shapes * n_res,
        O_ENDED: n,
        O_FREE_TOTAL: n_res,
        O_ACTIVE: n_shapes,
    }
    # offsets as Python ints (indexing by numpy scalars is several times slower)
    first: dict[int, int] = {}
    off = HEADER
    for key, size in sizes.items():
        first[key] = off
        off += size
    mem = np.zeros(off, dtype=np.int64)
    mem[list(first)] = list(first.values())
    mem[H_JOBS], mem[H_NODES], mem[H_RES] = n, nodes, n_res
    mem[H_EXCLUSIVE], mem[H_POLICY] = int(bool(exclusive)), int(policy)
    mem[H_SHAPES], mem[H_CHUNKS] = n_shapes, total_chunks

    def seg(key: int) -> np.ndarray:
        return mem[first[key] : first[key] + sizes[key]]

    cap = np.asarray(capacity)
    seg(O_CAPACITY)[:] = cap.reshape(-1)
    seg(O_WEIGHT)[:] = weight
    seg(O_FREE)[:] = cap.reshape(-1)
    seg(O_CHUNKS)[:] = chunks
    seg(O_PER_CHUNK)[:] = np.asarray(per_chunk).reshape(-1)
    seg(O_PTR)[:] = ptr
    seg(O_PLACED)[:] = -1
    seg(O_QUEUE)[:] = -1
    seg(O_QPOS)[:] = -1
    seg(O_RUNNING)[:] = -1
    seg(O_SHAPE)[:] = shape
    seg(O_SHAPE_CHUNKS)[:] = shape_chunks
    seg(O_SHAPE_V)[:] = np.asarray(shape_v).reshape(-1)
    seg(O_FREE_TOTAL)[:] = cap.sum(axis=0)
    return mem


def views(mem: np.ndarray) -> EngineArrays:
    """Numpy views of the segments of ``mem`` (the Python face of :func:`unpack`)."""
    head = mem[:HEADER].tolist()  # Python ints: numpy scalars make every slice below slower
    n, nodes, n_res, n_shapes = (head[k] for k in (H_JOBS, H_NODES, H_RES, H_SHAPES))

    def seg(key: int, size: int) -> np.ndarray:
        first = head[key]
        return mem[first : first + size]

    return EngineArrays(
        free=seg(O_FREE, nodes * n_res).reshape(nodes, n_res),
        chunks=seg(O_CHUNKS, n),
        per_chunk=seg(O_PER_CHUNK, n * n_res).reshape(n, n_res),
        placement_ptr=seg(O_PTR, n + 1),
        placement_nodes=seg(O_PLACED, head[H_CHUNKS]),
        state=seg(O_STATE, n),
        queue=seg(O_QUEUE, n),
        queue_pos=seg(O_QPOS, n),
        running=seg(O_RUNNING, n),
        shape=seg(O_SHAPE, n),
        shape_count=seg(O_SHAPE_COUNT, n_shapes),
        shape_chunks=seg(O_SHAPE_CHUNKS, n_shapes),
        shape_v=seg(O_SHAPE_V, n_shapes * n_res).reshape(n_shapes, n_res),
        ended=seg(O_ENDED, n),
        free_total=seg(O_FREE_TOTAL, n_res),
        active=seg(O_ACTIVE, n_shapes),
    )


@njit(cache=True, inline="always")
def _seg(mem: np.ndarray, key: int, size: int) -> np.ndarray:
    """Segment ``key``'s first ``size`` items as a view (:func:`hpcgym.common._views.vector`)."""
    return vector(mem, mem[key], size)


@njit(cache=True, inline="always")
def _mat(mem: np.ndarray, key: int, rows: int) -> np.ndarray:
    """Segment ``key`` as a ``(rows, R)`` matrix view (:func:`hpcgym.common._views.matrix`)."""
    return matrix(mem, mem[key], rows, mem[H_RES])


@njit(cache=True, inline="always")
def _free(mem: np.ndarray) -> np.ndarray:
    return _mat(mem, O_FREE, mem[H_NODES])


@njit(cache=True, inline="always")
def _row(mem: np.ndarray, j: int) -> np.ndarray:
    """Job ``j``'s request per chunk (a view)."""
    n_res = mem[H_RES]
    return vector(mem, mem[O_PER_CHUNK] + j * n_res, n_res)


@njit(cache=True, inline="always")
def nodes_of(mem: np.ndarray) -> Nodes:
    """The machine bundle of the allocator, as views of ``mem``."""
    nodes = mem[H_NODES]
    n_res = mem[H_RES]
    return Nodes(
        _mat(mem, O_CAPACITY, nodes),
        _seg(mem, O_WEIGHT, n_res),
        mem[H_EXCLUSIVE] != 0,
        mem[H_POLICY],
    )


@njit(cache=True)
def unpack(mem: np.ndarray) -> EngineArrays:
    """Named views of every segment of ``mem`` (for tests and tools; kernels index ``mem``)."""
    n = mem[H_JOBS]
    nodes = mem[H_NODES]
    n_res = mem[H_RES]
    n_shapes = mem[H_SHAPES]
    return EngineArrays(
        _mat(mem, O_FREE, nodes),
        _seg(mem, O_CHUNKS, n),
        _mat(mem, O_PER_CHUNK, n),
        _seg(mem, O_PTR, n + 1),
        _seg(mem, O_PLACED, mem[H_CHUNKS]),
        _seg(mem, O_STATE, n),
        _seg(mem, O_QUEUE, n),
        _seg(mem, O_QPOS, n),
        _seg(mem, O_RUNNING, n),
        _seg(mem, O_SHAPE, n),
        _seg(mem, O_SHAPE_COUNT, n_shapes),
        _seg(mem, O_SHAPE_CHUNKS, n_shapes),
        _mat(mem, O_SHAPE_V, n_shapes),
        _seg(mem, O_ENDED, n),
        _seg(mem, O_FREE_TOTAL, n_res),
        _seg(mem, O_ACTIVE, n_shapes),
    )


@njit(cache=True, inline="always")
def jobs_of(mem: np.ndarray, prediction: np.ndarray, start: np.ndarray) -> Jobs:
    """The :class:`Jobs` bundle: request and placement columns as views of ``mem``."""
    n = mem[H_JOBS]
    return Jobs(
        _seg(mem, O_CHUNKS, n),
        _mat(mem, O_PER_CHUNK, n),
        prediction,
        start,
        _seg(mem, O_PTR, n + 1),
        _seg(mem, O_PLACED, mem[H_CHUNKS]),
    )


@njit(cache=True, inline="always")
def state_of(mem: np.ndarray, now: float, order: np.ndarray) -> State:
    """The :class:`State` bundle; the queue is ``order`` if it is not empty.

    The queue must have been compacted (``SystemView.kernel_inputs`` does it).
    """
    q = order if len(order) else vector(mem, mem[O_QUEUE] + mem[H_QLO], mem[H_QHI] - mem[H_QLO])
    return State(now, _free(mem), q, _seg(mem, O_RUNNING, mem[H_NRUN]))


@njit(cache=True)
def compact(mem: np.ndarray) -> None:
    """Remove the tombstones of jobs started from the middle of the queue."""
    mem = borrowed(mem)
    if not mem[H_QTOMBS]:  # H_QFIRST is stale then
        return
    oq = mem[O_QUEUE]
    op = mem[O_QPOS]
    w = max(mem[H_QLO], mem[H_QFIRST])  # the queue before the first tombstone stays as it is
    for i in range(w, mem[H_QHI]):
        j = mem[oq + i]
        if j >= 0:
            mem[oq + w] = j
            mem[op + j] = w
            w += 1
    mem[H_QHI] = w
    mem[H_QTOMBS] = 0


@njit(cache=True)
def fits_job(mem: np.ndarray, j: int) -> bool:
    """Whether job ``j`` fits the free resources now."""
    mem = borrowed(mem)
    return fits(nodes_of(mem), _free(mem), mem[mem[O_CHUNKS] + j], _row(mem, j))


@njit(cache=True)
def fits_jobs(mem: np.ndarray, jobs: np.ndarray, out: np.ndarray) -> int:
    """``out[i]`` = whether ``jobs[i]`` fits the free resources now; returns how many fit."""
    mem, jobs, out = borrowed(mem), borrowed(jobs), borrowed(out)
    m = nodes_of(mem)
    free = _free(mem)
    n_res = mem[H_RES]
    o_total = mem[O_FREE_TOTAL]
    o_chunks = mem[O_CHUNKS]
    o_per = mem[O_PER_CHUNK]
    count = 0
    for i in range(len(jobs)):
        j = jobs[i]
        c = mem[o_chunks + j]
        ok = True  # within the free totals first: cheap, and exact on one node
        for r in range(n_res):
            if c * mem[o_per + j * n_res + r] > mem[o_total + r]:
                ok = False
                break
        if ok and (free.shape[0] > 1 or m.exclusive):  # else the totals are the answer
            ok = fits(m, free, c, _row(mem, j))
        out[i] = ok
        count += ok
    return count


@njit(cache=True, inline="always")
def _any_fits(mem: np.ndarray) -> bool:
    """Whether a shape with a waiting job fits: the active shapes, smallest first, early exit.

    :func:`~hpcgym.machine.allocator.any_fits` with the per-type free totals first: a shape
    beyond them cannot fit, and on one shared node one within them does, so the allocator
    is asked only on other machines (an instant's check was mostly the call's arguments).
    """
    n_res = mem[H_RES]
    one_node = mem[H_NODES] == 1 and mem[H_EXCLUSIVE] == 0
    o_total = mem[O_FREE_TOTAL]
    o_chunks = mem[O_SHAPE_CHUNKS]
    o_v = mem[O_SHAPE_V]
    o_act = mem[O_ACTIVE]
    for i in range(mem[H_NACTIVE]):
        sh = mem[o_act + i]
        c = mem[o_chunks + sh]
        v = o_v + sh * n_res
        within = True
        for r in range(n_res):
            if c * mem[v + r] > mem[o_total + r]:
                within = False
                break
        if within and (one_node or fits(nodes_of(mem), _free(mem), c, vector(mem, v, n_res))):
            return True
    return False


@njit(cache=True, inline="always")
def _activate(mem: np.ndarray, sh: int) -> None:
    """Shape ``sh`` got its first waiting job: insert it in the sorted active shapes."""
    o_act = mem[O_ACTIVE]
    i = mem[H_NACTIVE]
    while i > 0 and mem[o_act + i - 1] > sh:
        mem[o_act + i] = mem[o_act + i - 1]
        i -= 1
    mem[o_act + i] = sh
    mem[H_NACTIVE] += 1


@njit(cache=True, inline="always")
def _deactivate(mem: np.ndarray, sh: int) -> None:
    """Shape ``sh`` has no waiting job left: remove it from the active shapes."""
    o_act = mem[O_ACTIVE]
    na = mem[H_NACTIVE]
    i = 0
    while mem[o_act + i] != sh:
        i += 1
    for k in range(i, na - 1):
        mem[o_act + k] = mem[o_act + k + 1]
    mem[H_NACTIVE] = na - 1


@njit(cache=True)
def any_waiting_fits(mem: np.ndarray) -> bool:
    """Whether a waiting job fits now: one check per request shape, smallest first."""
    mem = borrowed(mem)
    return _any_fits(mem)


@njit(cache=True)
def instant(mem: np.ndarray, n_ended: int, first: int, stop: int, check: bool) -> bool:
    """One event instant: ``ended[:n_ended]`` end, then jobs ``first .. stop - 1`` arrive.

    Returns:
        With ``check``, whether a waiting job fits afterwards (else False).
    """
    mem = borrowed(mem)  # held by the caller: its views need no reference counts (hpcgym.common._views)
    n_res = mem[H_RES]
    o_state = mem[O_STATE]
    if n_ended:
        o_free = mem[O_FREE]
        o_cap = mem[O_CAPACITY]
        o_ptr = mem[O_PTR]
        o_placed = mem[O_PLACED]
        o_per = mem[O_PER_CHUNK]
        o_ended = mem[O_ENDED]
        o_total = mem[O_FREE_TOTAL]
        exclusive = mem[H_EXCLUSIVE] != 0
        for k in range(n_ended):
            j = mem[o_ended + k]
            v = o_per + j * n_res
            for c in range(mem[o_ptr + j], mem[o_ptr + j + 1]):
                node = o_free + mem[o_placed + c] * n_res
                if exclusive:
                    cap = o_cap + mem[o_placed + c] * n_res
                    for r in range(n_res):
                        mem[o_total + r] += mem[cap + r] - mem[node + r]
                        mem[node + r] = mem[cap + r]
                else:
                    for r in range(n_res):
                        mem[node + r] += mem[v + r]
                        mem[o_total + r] += mem[v + r]
            mem[o_state + j] = 3
        o_run = mem[O_RUNNING]
        w = 0  # drop them from the running jobs, keeping start order
        for i in range(mem[H_NRUN]):
            j = mem[o_run + i]
            if mem[o_state + j] == 2:
                mem[o_run + w] = j
                w += 1
        mem[H_NRUN] = w
    if stop > first:
        o_queue = mem[O_QUEUE]
        o_qpos = mem[O_QPOS]
        o_shape = mem[O_SHAPE]
        o_count = mem[O_SHAPE_COUNT]
        hi = mem[H_QHI]
        for j in range(first, stop):
            mem[o_queue + hi] = j
            mem[o_qpos + j] = hi
            hi += 1
            mem[o_state + j] = 1
            sh = mem[o_shape + j]
            mem[o_count + sh] += 1
            if mem[o_count + sh] == 1:
                _activate(mem, sh)
        mem[H_QHI] = hi
    if check:
        return _any_fits(mem)
    return False


@njit(cache=True, inline="always")
def _dequeue(mem: np.ndarray, j: int) -> None:
    oq = mem[O_QUEUE]
    lo = mem[H_QLO]
    pos = mem[mem[O_QPOS] + j]
    mem[oq + pos] = -1
    if pos == lo:
        hi = mem[H_QHI]
        lo += 1
        while lo < hi and mem[oq + lo] < 0:
            lo += 1
            mem[H_QTOMBS] -= 1
        mem[H_QLO] = lo
    else:
        if mem[H_QTOMBS] == 0 or pos < mem[H_QFIRST]:
            mem[H_QFIRST] = pos
        mem[H_QTOMBS] += 1


@njit(cache=True)
def commit(
    mem: np.ndarray, start: np.ndarray, now: float, jobs: np.ndarray, nodes: np.ndarray, given: bool
) -> tuple[int, int]:
    """Start ``jobs`` in order: place (or check the ``given`` placement), take, record.

    With ``given``, ``nodes`` holds the placements of all ``jobs`` concatenated (job
    ``jobs[i]`` contributes its ``chunks`` entries); else the allocator places each job
    by the machine's policy. Stops at the first job that is not waiting, does not fit,
    or whose given placement is impossible.

    Returns:
        ``(started, code)``: how many jobs started, and :data:`OK` or why the next one
        could not (:data:`BAD_PLACEMENT` also when ``nodes`` has the wrong length).
    """
    mem, start, jobs, nodes = borrowed(mem), borrowed(start), borrowed(jobs), borrowed(nodes)
    n = mem[H_JOBS]
    o_state = mem[O_STATE]
    o_chunks = mem[O_CHUNKS]
    o_ptr = mem[O_PTR]
    if given:  # the placements must cover exactly the chunks of the jobs
        need = 0
        for j in jobs:
            if 0 <= j < n:
                need += mem[o_chunks + j]
        if need != len(nodes):
            return 0, BAD_PLACEMENT
    m = nodes_of(mem)
    free = _free(mem)
    placed = _seg(mem, O_PLACED, mem[H_CHUNKS])
    o_run = mem[O_RUNNING]
    o_count = mem[O_SHAPE_COUNT]
    o_shape = mem[O_SHAPE]
    o_total = mem[O_FREE_TOTAL]
    cap = m.capacity
    n_res = free.shape[1]
    one_node = mem[H_NODES] == 1 and mem[H_EXCLUSIVE] == 0
    pos = 0
    nr = mem[H_NRUN]
    for k in range(len(jobs)):
        j = jobs[k]
        if j < 0 or j >= n or mem[o_state + j] != 1:
            mem[H_NRUN] = nr
            return k, NOT_WAITING
        c = mem[o_chunks + j]
        lo = mem[o_ptr + j]
        v = _row(mem, j)
        seg = placed[lo : lo + c]
        if given:
            # a loop: ``seg[:] = nodes[...]`` compiles an error path that formats a message
            on_zero = one_node  # one shared node: every chunk on node 0 and within its free amounts
            for x in range(c):
                seg[x] = nodes[pos + x]
                on_zero = on_zero and seg[x] == 0
            pos += c
            if on_zero:
                for r in range(n_res):
                    on_zero = on_zero and c * v[r] <= free[0, r]
            if on_zero:  # what take_checked does there, without its call
                for r in range(n_res):
                    free[0, r] -= c * v[r]
            elif take_checked(m, free, v, seg) != 0:
                seg[:] = -1
                mem[H_NRUN] = nr
                return k, BAD_PLACEMENT
        else:
            if not place(m, free, c, v, placed, lo):
                seg[:] = -1
                mem[H_NRUN] = nr
                return k, DOES_NOT_FIT
            take(m, free, v, seg)
        for i in seg:  # the placement was possible: an exclusive node was entirely free
            for r in range(n_res):
                mem[o_total + r] -= cap[i, r] if m.exclusive else v[r]
        mem[o_state + j] = 2
        start[j] = now
        _dequeue(mem, j)
        mem[o_run + nr] = j
        nr += 1
        sh = mem[o_shape + j]
        mem[o_count + sh] -= 1
        if mem[o_count + sh] == 0:
            _deactivate(mem, sh)
    mem[H_NRUN] = nr
    return len(jobs), OK


# The counters of a compiled event loop (hpcgym.baselines._loop), kept in one
# int64 array between its calls; the engine reads them back (Simulator.adopt_loop).
C_NEXT = 0  # next job to arrive
C_SEQ = 1  # sequence number of the next event
C_HEAP = 2  # events in the heap
C_DONE = 3  # jobs ended
C_DECISIONS = 4
C_WAITING = 5
C_RUNNING = 6
C_STATUS = 7  # RUNNING_ON, FINISHED, REFUSED, STALLED
C_REFUSED_AT = 8  # with REFUSED: how many of the decision's jobs started; the code
C_REFUSED_CODE = 9
COUNTERS = 10

GIVEN = np.bool_(True)
NOT_GIVEN = np.bool_(False)
"""``commit``'s ``given`` as typed values: a literal ``True``/``False`` from compiled code would
compile ``commit`` once more for ``Literal[bool]`` (2.5 s of a first run)."""

RUNNING_ON = 0
FINISHED = 1
REFUSED = 2
STALLED = 3


@njit(cache=True, inline="always")
def _heap_set(
    heap_t: np.ndarray, heap_s: np.ndarray, heap_j: np.ndarray, i: int, t: float, s: int, j: int
) -> None:
    heap_t[i] = t
    heap_s[i] = s
    heap_j[i] = j


@njit(cache=True, inline="always")
def heap_push(
    heap_t: np.ndarray, heap_s: np.ndarray, heap_j: np.ndarray, size: int, t: float, s: int, j: int
) -> None:
    """Add event ``(t, s)`` of job ``j`` to the heap of ``size`` events (a three-array binary heap)."""
    i = size
    while i > 0:
        p = (i - 1) >> 1
        if heap_t[p] < t or (heap_t[p] == t and heap_s[p] < s):
            break
        _heap_set(heap_t, heap_s, heap_j, i, heap_t[p], heap_s[p], heap_j[p])
        i = p
    _heap_set(heap_t, heap_s, heap_j, i, t, s, j)


@njit(cache=True, inline="always")
def schedule_end(
    runtime: np.ndarray,
    estimate: np.ndarray,
    end: np.ndarray,
    killed: np.ndarray,
    kill: bool,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    size: int,
    seq: int,
    now: float,
    j: int,
) -> None:
    """Job ``j`` started at ``now``: its end (at its run time, or its estimate if ``kill`` and
    shorter) goes into ``end`` and, as event ``seq``, into the heap of ``size`` events."""
    run = runtime[j]
    if kill and run > estimate[j]:
        run = estimate[j]
        killed[j] = True
    e = now + run
    end[j] = e
    heap_push(heap_t, heap_s, heap_j, size, e, seq, j)


@njit(cache=True, inline="always")
def heap_pop(heap_t: np.ndarray, heap_s: np.ndarray, heap_j: np.ndarray, size: int) -> int:
    """Remove the smallest event (the heap had ``size``); returns its job."""
    top = heap_j[0]
    size -= 1
    t = heap_t[size]
    s = heap_s[size]
    j = heap_j[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and (
            heap_t[c + 1] < heap_t[c] or (heap_t[c + 1] == heap_t[c] and heap_s[c + 1] < heap_s[c])
        ):
            c += 1
        if t < heap_t[c] or (t == heap_t[c] and s < heap_s[c]):
            break
        _heap_set(heap_t, heap_s, heap_j, i, heap_t[c], heap_s[c], heap_j[c])
        i = c
    _heap_set(heap_t, heap_s, heap_j, i, t, s, j)
    return top
