"""What jobs ask of a machine: PBS ``select`` statements, and requests aligned to a machine.

A job asks for ``chunks`` x a per-chunk vector (PBS ``select``, see :func:`parse_select`);
:func:`align_requests` puts the vector in the machine's resource order and says which
jobs the machine can never run (:data:`UNPLACEABLE_REASONS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from hpcgym.common import native
from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine.allocator import Nodes, fits
from hpcgym.machine.model import Machine

PBS_NAMES = {"ncpus": "cores", "ngpus": "gpus", "nmics": "mics", "mem": "mem_gb"}
"""PBS resource names of a ``select`` statement and the machine resource each maps to."""

RESOURCE_ALIASES = {"procs": "cores", "cores": "procs"}
"""A request for a resource the machine lacks goes to this one instead, if it has it:
SWF jobs ask for ``procs``, which a machine of ``cores`` provides (and back)."""

_MEMORY_UNITS = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}

UNPLACEABLE_REASONS = (
    "",
    "asks for a resource the machine lacks",
    "a chunk larger than any node",
    "more chunks than the machine can hold",
)
"""Why :func:`align_requests` finds a job impossible, by the code it returns (0: fine)."""


def parse_select(text: str) -> tuple[int, dict[str, int]]:
    """A PBS ``select`` statement as ``(chunks, {resource: amount per chunk})``.

    ``"2:ncpus=8:ngpus=2:mem=8gb"`` asks for 2 chunks of 8 cores, 2 GPUs and 8 GB each.
    The chunk count is optional (default 1) and a leading ``select=`` is allowed. PBS
    names map to machine resources by :data:`PBS_NAMES` (``ncpus`` -> ``cores``,
    ``ngpus`` -> ``gpus``, ``nmics`` -> ``mics``, ``mem`` -> ``mem_gb``); other names
    are kept as written. Memory takes the PBS units ``b, kb, mb, gb, tb`` (powers of
    1024; no unit means bytes) and is rounded *up* to whole GB (a job asking for 1 MB
    holds 1 GB), since the machine counts memory in GB.

    Raises:
        InvalidConfigError: not of that form, naming the part that is wrong.

    >>> parse_select("2:ncpus=8:ngpus=2:mem=8gb")
    (2, {'cores': 8, 'gpus': 2, 'mem_gb': 8})
    >>> parse_select("select=ncpus=1:mem=1500mb")
    (1, {'cores': 1, 'mem_gb': 2})
    """
    s = str(text).strip()
    if s.lower().startswith("select="):
        s = s[len("select=") :]
    if "+" in s:
        raise InvalidConfigError(
            f"select {text!r}: chunks of different shapes ('+') are not supported; one shape per job"
        )
    parts = [p.strip() for p in s.split(":")]
    if not s or not all(parts):
        raise InvalidConfigError(f"select {text!r}: expected [chunks:]name=value[:name=value...]")
    chunks = 1
    if "=" not in parts[0]:
        if not parts[0].isdigit() or int(parts[0]) <= 0:
            raise InvalidConfigError(
                f"select {text!r}: the chunk count {parts[0]!r} is not a positive integer"
            )
        chunks = int(parts[0])
        parts = parts[1:]
    if not parts:
        raise InvalidConfigError(f"select {text!r}: no resources requested")
    amounts: dict[str, int] = {}
    for part in parts:
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        value = value.strip().lower()
        if not sep or not name or not value:
            raise InvalidConfigError(f"select {text!r}: {part!r} is not name=value")
        resource = PBS_NAMES.get(name, name)
        if name == "mem":
            amount = _memory_gb(value, text)
        elif value.isdigit():
            amount = int(value)
        else:
            raise InvalidConfigError(f"select {text!r}: {name}={value!r} is not a non-negative integer")
        if resource in amounts:
            raise InvalidConfigError(f"select {text!r}: {name} is given twice")
        amounts[resource] = amount
    return chunks, amounts


def _memory_gb(value: str, text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([kmgt]?b)?", value)
    if not m:
        raise InvalidConfigError(
            f"select {text!r}: mem={value!r} is not a size (a whole number with unit b, kb, mb, gb or tb)"
        )
    size = int(m.group(1)) * _MEMORY_UNITS[m.group(2) or "b"]
    return -(-size // 1024**3)


def align_requests(
    machine: Machine,
    resources: Sequence[str],
    chunks: np.ndarray,
    per_chunk: np.ndarray,
    *,
    check: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Requests in the machine's resource order, and which of them the machine can never run.

    Workload resources are matched to the machine's by name (:data:`RESOURCE_ALIASES`
    for ``procs``/``cores``); an amount of 0 of a resource the machine lacks is ignored.
    On an exclusive machine a chunk larger than every node is split into whole-node
    chunks: ``s = max_r ceil(v[r] / largest[r])`` chunks of ``ceil(v / s)`` each, so an
    SWF job of p processors on nodes of k takes ceil(p/k) nodes.

    Args:
        machine: the machine.
        resources: names of the columns of ``per_chunk``.
        chunks: ``(n,)`` chunks per job.
        per_chunk: ``(n, len(resources))`` amount per chunk.
        check: whether to find out which requests the empty machine cannot hold (one
            allocator call per distinct request); without it, ``reason`` flags only the
            requests of resources the machine lacks.

    Returns:
        ``(chunks, per_chunk, reason)``: the aligned ``(n,)`` and ``(n, R)`` int64
        requests, and per job 0 if the empty machine can hold it, else the index of the
        reason in :data:`UNPLACEABLE_REASONS`.
    """
    chunks = np.asarray(chunks, dtype=np.int64).reshape(-1)
    per_chunk = np.asarray(per_chunk, dtype=np.int64).reshape(len(chunks), len(resources))
    n = len(chunks)
    out = np.zeros((n, machine.n_resources), dtype=np.int64)
    reason = np.zeros(n, dtype=np.int64)
    for c, name in enumerate(resources):
        target = name if name in machine.resources else RESOURCE_ALIASES.get(name)
        if target is None or target not in machine.resources:
            reason[(per_chunk[:, c] > 0) & (reason == 0)] = 1
            continue
        out[:, machine.resources.index(target)] += per_chunk[:, c]
    chunks = chunks.copy()
    if machine.exclusive and n:
        largest = machine.capacity.max(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where(out > 0, -(-out // np.maximum(largest, 1)), 0)
        need[:, largest == 0] = np.where(out[:, largest == 0] > 0, 1, 0)
        pieces = np.maximum(need.max(axis=1), 1)
        split = pieces > 1
        if split.any():
            out[split] = -(-out[split] // pieces[split, None])
            chunks[split] *= pieces[split]
    # a check per distinct request shape on the empty machine (exact: see allocator.fits)
    ok = reason == 0
    if check and ok.any():
        every = bool(ok.all())
        ok_chunks, ok_out = (chunks, out) if every else (chunks[ok], out[ok])
        # writable copies in a Nodes bundle: the argument types of the dispatch kernels'
        # own calls, so numba compiles fits once for both
        m = machine.nodes
        cap = np.array(m.capacity, dtype=np.int64)
        nodes = Nodes(cap, np.array(m.weight, dtype=np.int64), bool(m.exclusive), int(m.policy))
        # whether a request fits the empty machine is monotone (fewer chunks, or less of
        # any resource, fit where more did): when the largest of every column fits, all do,
        # and the distinct requests need not be found (column by column: see unique_rows)
        top = [int(ok_chunks.max())] + [int(ok_out[:, c].max()) for c in range(ok_out.shape[1])]
        fits_ = native.get(fits)  # the types of its registered example (allocator.py)
        if not fits_(nodes, cap, top[0], np.array(top[1:], dtype=np.int64)):
            shapes, inverse = unique_rows(np.column_stack([ok_chunks, ok_out]))
            code = np.zeros(len(shapes), dtype=np.int64)
            for s, row in enumerate(shapes):
                v = np.ascontiguousarray(row[1:])
                if not fits_(nodes, cap, 1, v):
                    code[s] = 2
                elif not fits_(nodes, cap, int(row[0]), v):
                    code[s] = 3
            reason[ok] = code[inverse]
    return chunks, out, reason


def unique_ints(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(keys, return_inverse=True)`` of integers from 0 to ``bound - 1``.

    When ``bound`` is small (at most four per key, plus 65,536), the values present are
    marked in a table instead of sorted. Returns the distinct values, ascending, and each
    key's index among them (both int64, 1-d).

    >>> values, inverse = unique_ints(np.array([7, 2, 7, 0]), 8)
    >>> values.tolist(), inverse.tolist()
    ([0, 2, 7], [2, 1, 2, 0])
    """
    if bound <= 4 * len(keys) + 65_536:  # few possible values: mark them, no sort
        seen = np.zeros(bound, dtype=bool)
        seen[keys] = True
        return np.flatnonzero(seen), (np.cumsum(seen, dtype=np.int64) - 1)[keys]
    values, inverse = np.unique(keys, return_inverse=True)
    return values.astype(np.int64, copy=False), inverse.reshape(-1).astype(np.int64, copy=False)


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(rows, axis=0, return_inverse=True)`` for whole-number rows, in a fraction of the time.

    Rows of non-negative values whose column ranges multiply to less than 2^62 (every
    request table hpcgym meets) get one mixed-radix number each, ordered as the rows are
    (lexicographically), and the numbers are made unique in one dimension: a 232,000-job
    trace takes 20 ms instead of 600 ms, with fewer temporaries. When the numbers can take
    few values (at most four per row, plus 65,536), the ones present are marked in a table
    instead of sorted: a processor trace's requests in a fraction of a millisecond. Other
    rows go to ``numpy.unique(axis=0)``.

    Returns:
        The distinct rows in lexicographic order (int64), and for each row the index of
        its distinct row (1-d).

    >>> shapes, inverse = unique_rows(np.array([[1, 8], [2, 1], [1, 8], [1, 2]]))
    >>> shapes.tolist(), inverse.tolist()
    ([[1, 2], [1, 8], [2, 1]], [1, 2, 1, 0])
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim == 2 and rows.size and rows.min() >= 0:
        # column by column: numpy reduces a narrow matrix over axis 0 twenty times slower
        span = [int(rows[:, c].max()) + 1 for c in range(rows.shape[1])]
        total = math.prod(span)
        if total < 2**62:
            key = np.zeros(len(rows), dtype=np.int64)
            for c, base in enumerate(span):
                key *= base
                key += rows[:, c]
            keys, inverse = unique_ints(key, total)
            del key
            shapes = np.empty((len(keys), len(span)), dtype=np.int64)
            for c in range(len(span) - 1, -1, -1):
                keys, shapes[:, c] = np.divmod(keys, span[c])
            return shapes, inverse.reshape(-1)
    shapes, inverse = np.unique(rows, axis=0, return_inverse=True)
    return shapes, inverse.reshape(-1)
