"""Machines: nodes x resource types, node groups and queues.

A :class:`Machine` is a capacity matrix (one row per node, one column per resource
type, e.g. ``cores, gpus, mics, mem_gb``), named node groups, the site's queues with
their maximum wall-time and expected wait, and whether jobs get whole nodes
(``exclusive``). The machine of a Parallel Workloads Archive trace is the special case
:meth:`Machine.processors`: one node of N processors, or N/k nodes of k processors that
jobs use exclusively. A machine is described by a TOML (or YAML) file
(:meth:`Machine.from_file`); the presets (:mod:`hpcgym.machine.presets`) are such files.
What jobs ask of a machine is in :mod:`hpcgym.machine.requests`; the allocator
(:mod:`hpcgym.machine.allocator`) decides where their chunks go.

>>> Machine.processors(128, node_size=8).n_nodes
16
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.files import read_toml_or_yaml
from hpcgym.machine.allocator import POLICIES, Nodes, best_fit_weights

MAX_NODES = 1_000_000
"""The most nodes a machine may have (the largest machines have about 160,000 nodes); a
machine file asking for more is an error naming the node type's ``count``, not a
``MemoryError`` while its rows are built."""

MAX_AMOUNT = 10**12
"""The most of one resource type a node may hold; with :data:`MAX_NODES` nodes the machine's
total of each type stays well inside int64."""


@dataclass(frozen=True, eq=False)
class Machine:
    """A machine of nodes x resource types.

    Attributes:
        name: short name (reports, ``hpcgym machines``).
        resources: names of the resource types, the columns of ``capacity``.
        capacity: ``(nodes, R)`` int64, each node's amount of each type (read-only).
        groups: named node sets, e.g. ``{"gpu": [0, ..., 31]}`` (sorted int64 arrays).
        queues: the site's queues: name -> ``(max_walltime_s, ewt_s)``, the maximum
            wall-time a job of the queue may ask for and its expected wait (used by
            PRB/CP dispatchers).
        exclusive: jobs get whole nodes: each chunk takes one entire node.
        allocation: the allocation policy, ``"first-fit"`` or ``"best-fit"`` (see
            :mod:`hpcgym.machine.allocator`); the engine places jobs with it when a dispatcher
            gives no placement.
        description: one line for ``hpcgym machines``.

    Raises:
        InvalidConfigError: a field is malformed; the message names it.
    """

    name: str
    resources: tuple[str, ...]
    capacity: np.ndarray
    groups: Mapping[str, np.ndarray | Sequence[int]] = field(default_factory=dict)
    queues: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    exclusive: bool = False
    allocation: str = "first-fit"
    description: str = ""

    def __post_init__(self) -> None:
        where = f"machine {self.name!r}"
        names = tuple(str(r) for r in self.resources)
        if not names:
            raise InvalidConfigError(f"{where}: resources must name at least one resource type")
        dup = sorted({r for r in names if names.count(r) > 1})
        if dup:
            raise InvalidConfigError(f"{where}: resources: duplicate name(s) {', '.join(dup)}")
        try:
            cap = np.array(self.capacity, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise InvalidConfigError(f"{where}: capacity must be a (nodes, resources) matrix: {err}") from err
        if cap.ndim != 2 or cap.shape[1] != len(names) or cap.shape[0] == 0:
            raise InvalidConfigError(
                f"{where}: capacity must be a (nodes, {len(names)}) matrix with at least one node, "
                f"got shape {cap.shape}"
            )
        if not np.isfinite(cap).all() or (cap != np.floor(cap)).any() or (cap < 0).any():
            raise InvalidConfigError(f"{where}: capacity must hold non-negative whole numbers")
        if cap.shape[0] > MAX_NODES:
            raise InvalidConfigError(f"{where}: capacity: {cap.shape[0]:,} nodes, more than {MAX_NODES:,}")
        if (cap > MAX_AMOUNT).any():
            node, col = (int(i) for i in np.argwhere(cap > MAX_AMOUNT)[0])
            raise InvalidConfigError(
                f"{where}: capacity: node {node} has {cap[node, col]:.0f} {names[col]}, "
                f"more than {MAX_AMOUNT:,}"
            )
        if (cap.sum(axis=1) == 0).any():
            node = int(np.argmax(cap.sum(axis=1) == 0))
            raise InvalidConfigError(f"{where}: capacity: node {node} has no resources at all")
        capacity = cap.astype(np.int64)
        capacity.flags.writeable = False
        groups: dict[str, np.ndarray] = {}
        for g, members in dict(self.groups).items():
            idx = np.unique(np.asarray(members, dtype=np.int64).reshape(-1))
            if len(idx) == 0 or idx[0] < 0 or idx[-1] >= len(capacity):
                raise InvalidConfigError(
                    f"{where}: groups.{g}: node indices must lie in [0, {len(capacity)}) and not be empty"
                )
            idx.flags.writeable = False
            groups[str(g)] = idx
        queues: dict[str, tuple[float, float]] = {}
        for q, limits in dict(self.queues).items():
            try:
                wall, ewt = (float(x) for x in limits)
            except (TypeError, ValueError) as err:
                raise InvalidConfigError(
                    f"{where}: queues.{q}: must be (max_walltime_s, ewt_s), got {limits!r}"
                ) from err
            if not (wall > 0 and ewt >= 0) or math.isnan(wall) or math.isnan(ewt):
                raise InvalidConfigError(
                    f"{where}: queues.{q}: max_walltime_s must be > 0 and ewt_s >= 0, got {wall:g}, {ewt:g}"
                )
            queues[str(q)] = (wall, ewt)
        if self.allocation not in POLICIES:
            raise InvalidConfigError(
                f"{where}: allocation must be one of {', '.join(POLICIES)}, got {self.allocation!r}"
            )
        object.__setattr__(self, "resources", names)
        object.__setattr__(self, "capacity", capacity)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "queues", queues)
        object.__setattr__(self, "exclusive", bool(self.exclusive))

    # ------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def n_resources(self) -> int:
        return len(self.resources)

    @property
    def total(self) -> np.ndarray:
        """Total amount of each resource type over all nodes."""
        return self.capacity.sum(axis=0)  # type: ignore[no-any-return]

    def resource_index(self, name: str) -> int:
        """Column of resource ``name``.

        Raises:
            UnknownNameError: the machine has no such resource type.
        """
        try:
            return self.resources.index(name)
        except ValueError:
            raise UnknownNameError(
                f"machine {self.name!r} has no resource {name!r}; it has {', '.join(self.resources)}"
            ) from None

    @functools.cached_property
    def nodes(self) -> Nodes:
        """The machine as the compiled allocator sees it (a :class:`~hpcgym.machine.allocator.Nodes`)."""
        return Nodes(
            np.ascontiguousarray(self.capacity),
            best_fit_weights(self.capacity),
            self.exclusive,
            POLICIES[self.allocation],
        )

    def with_allocation(self, allocation: str) -> Machine:
        """The same machine with another allocation policy."""
        return dataclasses.replace(self, allocation=allocation)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("nodes", None)  # a cached property: rebuilt on demand
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return (
            f"Machine({self.name!r}, {self.n_nodes} nodes x {self.resources}, "
            f"exclusive={self.exclusive}, allocation={self.allocation!r})"
        )

    def describe(self) -> str:
        """A few lines: node types, groups and queues."""
        rows, counts = np.unique(self.capacity, axis=0, return_counts=True)
        lines = [f"{self.name}: {self.description or f'{self.n_nodes} nodes'}"]
        for row, count in zip(rows, counts, strict=True):
            amounts = ", ".join(f"{r}={int(a)}" for r, a in zip(self.resources, row, strict=True) if a)
            lines.append(f"  {int(count)} x ({amounts})")
        for g, members in self.groups.items():
            lines.append(f"  group {g}: {len(members)} nodes")
        for q, (wall, ewt) in self.queues.items():
            lines.append(f"  queue {q}: max wall-time {_hours(wall)}, expected wait {_hours(ewt)}")
        extra = []
        if self.exclusive:
            extra.append("whole nodes per chunk (exclusive)")
        extra.append(f"allocation {self.allocation}")
        lines.append("  " + ", ".join(extra))
        return "\n".join(lines)

    # ------------------------------------------------------ constructors
    @classmethod
    def processors(cls, procs: int, *, node_size: int | None = None, name: str | None = None) -> Machine:
        """The machine of an SWF trace: one resource type, ``procs``.

        Args:
            procs: number of processors, N.
            node_size: None (default): one node of N processors shared by any number of
                jobs, the model of the Parallel Workloads Archive. ``k``: N/k nodes of k
                processors that jobs use exclusively: a job of p processors takes
                ceil(p/k) whole nodes (its request is split into that many chunks when
                it is aligned, see :func:`~hpcgym.machine.align_requests`), so up to
                k - 1 processors per job are lost to fragmentation. N must be a multiple of k.
            name: report name (default ``procs<N>`` or ``procs<N>-node<k>``).

        Raises:
            InvalidConfigError: N or k is not a positive integer, or k does not divide N.

        >>> m = Machine.processors(128)
        >>> m.n_nodes, m.resources, m.exclusive
        (1, ('procs',), False)
        """
        n = _positive_int(procs, "procs")
        if node_size is None:
            return cls(name or f"procs{n}", ("procs",), np.array([[n]]), description=f"{n} processors")
        k = _positive_int(node_size, "node_size")
        if n // k > MAX_NODES:
            raise InvalidConfigError(
                f"node_size: {n:,} processors in nodes of {k} make {n // k:,} nodes, more than "
                f"the {MAX_NODES:,} a machine may have; choose a larger node size"
            )
        if n % k:
            raise InvalidConfigError(
                f"node_size: {k} does not divide the machine's {n} processors; "
                f"choose a divisor of {n} (e.g. {', '.join(str(d) for d in _divisors(n)[:6])})"
            )
        return cls(
            name or f"procs{n}-node{k}",
            ("procs",),
            np.full((n // k, 1), k),
            exclusive=True,
            description=f"{n // k} nodes of {k} processors, whole nodes per job",
        )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "machine") -> Machine:
        """A machine from its declarative description (what a TOML/YAML file holds).

        Keys: ``name``, ``resources`` (list of names), ``nodes`` (a list of node types,
        each ``{count = 32, group = "gpu", cores = 16, gpus = 2, ...}``: resources not
        named are 0, ``group`` is a name or a list of names, ``count`` defaults to 1),
        optional ``groups`` (``{name = [node indices]}``, added to those of the node
        types), ``queues`` (``{name = {max_walltime_s = .., ewt_s = ..}}``),
        ``exclusive``, ``allocation`` and ``description``.

        Raises:
            InvalidConfigError: a missing or misspelt key or a bad value; the message
                names ``source`` and the key.

        >>> Machine.from_dict({"name": "tiny", "resources": ["cores"],
        ...                    "nodes": [{"count": 2, "cores": 4}]}).capacity.tolist()
        [[4], [4]]
        """
        if not isinstance(d, Mapping):
            raise InvalidConfigError(f"{source}: expected a table of machine keys, got {type(d).__name__}")
        known = {"name", "resources", "nodes", "groups", "queues", "exclusive", "allocation", "description"}
        _unknown_keys(d, known, source)
        for key in ("resources", "nodes"):
            if key not in d:
                raise InvalidConfigError(f"{source}: missing key {key!r}")
        res = d["resources"]
        if isinstance(res, str) or not isinstance(res, Sequence) or not all(isinstance(r, str) for r in res):
            raise InvalidConfigError(f"{source}: resources must be a list of names, got {res!r}")
        names = tuple(res)
        if not names:
            raise InvalidConfigError(f"{source}: resources must name at least one resource type")
        node_types = d["nodes"]
        if not isinstance(node_types, Sequence) or isinstance(node_types, str) or not node_types:
            raise InvalidConfigError(f"{source}: nodes must be a non-empty list of node types")
        rows: list[list[int]] = []
        groups: dict[str, list[int]] = {}
        for t, spec in enumerate(node_types):
            here = f"{source}: nodes[{t}]"
            if not isinstance(spec, Mapping):
                raise InvalidConfigError(f"{here}: expected a table, got {spec!r}")
            _unknown_keys(spec, {"count", "group", *names}, here)
            count = _positive_int(spec.get("count", 1), f"{here}.count")
            if len(rows) + count > MAX_NODES:
                raise InvalidConfigError(
                    f"{here}.count: {count:,} nodes make {len(rows) + count:,} in all, more than "
                    f"the {MAX_NODES:,} a machine may have"
                )
            amounts = [_count(spec.get(r, 0), f"{here}.{r}", limit=MAX_AMOUNT) for r in names]
            member = spec.get("group", ())
            member_names = [member] if isinstance(member, str) else list(member)
            first = len(rows)
            rows.extend([amounts] * count)
            for g in member_names:
                groups.setdefault(str(g), []).extend(range(first, first + count))
        extra_groups = d.get("groups", {})
        if not isinstance(extra_groups, Mapping):
            raise InvalidConfigError(f"{source}: groups must be a table of name = [node indices]")
        for g, members in extra_groups.items():
            if isinstance(members, (str, bytes)) or not isinstance(members, Sequence):
                raise InvalidConfigError(f"{source}: groups.{g} must be a list of node indices")
            groups.setdefault(str(g), []).extend(_count(i, f"{source}: groups.{g}") for i in members)
        queues: dict[str, tuple[float, float]] = {}
        raw_queues = d.get("queues", {})
        if not isinstance(raw_queues, Mapping):
            raise InvalidConfigError(f"{source}: queues must be a table of queue tables")
        for q, spec in raw_queues.items():
            here = f"{source}: queues.{q}"
            if not isinstance(spec, Mapping):
                raise InvalidConfigError(f"{here}: expected {{max_walltime_s = .., ewt_s = ..}}")
            _unknown_keys(spec, {"max_walltime_s", "ewt_s"}, here)
            if "max_walltime_s" not in spec:
                raise InvalidConfigError(f"{here}: missing key 'max_walltime_s'")
            queues[str(q)] = (spec["max_walltime_s"], spec.get("ewt_s", 0.0))
        exclusive = d.get("exclusive", False)
        if not isinstance(exclusive, bool):
            raise InvalidConfigError(f"{source}: exclusive must be true or false, got {exclusive!r}")
        return cls(
            name=str(d.get("name", Path(source).stem)),
            resources=names,
            capacity=np.array(rows, dtype=np.int64).reshape(len(rows), len(names)),
            groups=groups,
            queues=queues,
            exclusive=exclusive,
            allocation=str(d.get("allocation", "first-fit")),
            description=str(d.get("description", "")),
        )

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Machine:
        """A machine from a TOML file (or YAML, if PyYAML is installed); see :meth:`from_dict`.

        Raises:
            InvalidConfigError: the file cannot be parsed or describes no valid machine.
            FileNotFoundError: the file does not exist.
        """
        p = Path(path)
        data = read_toml_or_yaml(p, "machine")
        if isinstance(data, Mapping) and "name" not in data:
            data = {**data, "name": p.stem}
        return cls.from_dict(data, source=str(p))

    def to_dict(self) -> dict[str, Any]:
        """The description :meth:`from_dict` reads back (one node type per distinct row)."""
        node_types: list[dict[str, Any]] = []
        member_of = [
            [g for g, m in self.groups.items() if i in set(np.asarray(m).tolist())]
            for i in range(self.n_nodes)
        ]
        for i, row in enumerate(self.capacity.tolist()):
            spec = {r: a for r, a in zip(self.resources, row, strict=True) if a}
            key = (tuple(row), tuple(member_of[i]))
            last = node_types[-1] if node_types else None
            if last is not None and last["_key"] == key:
                last["count"] += 1
                continue
            node_types.append(
                {"_key": key, "count": 1, **({"group": member_of[i]} if member_of[i] else {}), **spec}
            )
        for t in node_types:
            del t["_key"]
        return {
            "name": self.name,
            "description": self.description,
            "resources": list(self.resources),
            "exclusive": self.exclusive,
            "allocation": self.allocation,
            "nodes": node_types,
            "queues": {q: {"max_walltime_s": w, "ewt_s": e} for q, (w, e) in self.queues.items()},
        }


def _hours(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


def _divisors(n: int) -> list[int]:
    return [d for d in range(2, n + 1) if n % d == 0]


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) <= 0:
        raise InvalidConfigError(f"{name}: must be a positive integer, got {value!r}")
    return int(value)


def _count(value: Any, name: str, *, limit: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 0:
        raise InvalidConfigError(f"{name}: must be a non-negative integer, got {value!r}")
    if limit is not None and int(value) > limit:
        raise InvalidConfigError(f"{name}: must be at most {limit:,}, got {int(value):,}")
    return int(value)


def _unknown_keys(d: Mapping[str, Any], known: set[str], where: str) -> None:
    import difflib

    for key in d:
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(sorted(known))}"
            raise InvalidConfigError(f"{where}: unknown key {key!r}{hint}")
