"""A machine from Slurm's own listings: nodes from ``scontrol`` or ``sinfo``, partitions as queues.

A site describes its machine to hpcgym with what Slurm prints:

* the nodes, one of
    - ``scontrol show nodes --oneliner``: one ``NodeName=cn001 ... CPUTot=32 ...
      RealMemory=191000 ... Gres=gpu:tesla:2(S:0-1) ... Partitions=batch,gpu ...`` line
      per node (the multi-line form without ``--oneliner`` is read too: a record's
      continuation lines are indented);
    - ``sinfo -N -h -o "%N %c %m %G %P"`` (:data:`SINFO_FORMAT`): node name, CPUs,
      memory in MB, GRES and partition, one line per node and partition (a node in two
      partitions is listed twice; the default partition's name ends in ``*``). A header
      line (``NODELIST CPUS ...``, when ``-h`` is left out) is skipped, and a node list
      such as ``cn[001-004]`` (``sinfo`` without ``-N``) is expanded;
* optionally the partitions, ``scontrol show partition --oneliner``: one
  ``PartitionName=batch ... MaxTime=1-00:00:00 ...`` line per partition.

:func:`machine_from_slurm` turns them into a :class:`~hpcgym.machine.Machine`:

* **resources**: ``cores`` (``CPUEfctv`` where Slurm prints it, the CPUs jobs may use,
  i.e. ``CPUTot`` less specialized cores; else ``CPUTot``; ``%c`` for ``sinfo``),
  ``gpus`` and ``mics`` from the GRES ``gpu`` and ``mic`` (every type of a GRES summed:
  ``gpu:a100:2,gpu:v100:2`` is 4 GPUs), ``mem_gb`` and every other GRES under its own
  name. Memory: ``RealMemory`` (``%m``) is in MB of 2^20 bytes, as Slurm counts; the
  machine counts whole GB of 2^30 bytes (as PBS ``mem=...gb`` and the job tables do), so
  a node has ``RealMemory // 1024`` GB, rounded *down*: a node cannot give more than it
  has (job requests are rounded up). If no node has 1 GB (Slurm's ``RealMemory=1``
  when memory is not configured) the machine has no ``mem_gb`` and a note says so.
  GRES counts take Slurm's suffixes ``K, M, G, T`` (powers of 1024); ``(null)`` is none;
  the socket binding in parentheses (``(S:0-1)``) and a ``no_consume`` flag are ignored.
* **node groups**: nodes with the same CPUs, memory (in GB) and GRES form one node type,
  in the order its first node is listed; the machine lists the nodes type by type. Each
  type is a node group named after its nodes (``cn`` for ``cn001 ... cn032``) when that
  name is its own, else after what it holds (``c32-m186g-gpus4``).
* **queues**: every partition some node is in, in the order first listed, with its
  ``MaxTime`` as maximum wall-time. A partition whose ``MaxTime`` is ``UNLIMITED``, or
  whose limit is unknown (no partition file, or not in it), gets ``unlimited_s``: by
  default the longest limit of the other partitions, else :data:`UNLIMITED_S`; a note
  names them. The expected wait (``ewt_s``) is 0: Slurm has no such figure, and PRB
  treats 0 as not given. hpcgym's queues do not restrict jobs to their partition's
  nodes: a queue is a wall-time limit (see ``docs/MACHINES.md``).
* **exclusive** when every partition of the partition file is ``OverSubscribe=EXCLUSIVE``
  (Slurm then allocates whole nodes); otherwise jobs share nodes.

Every problem is an error naming the file, the line and the field
(:class:`~hpcgym.common.errors.TraceFormatError`); nothing is dropped: what was decided
(a node listed twice, a partition without nodes, ``UNLIMITED`` limits, nodes that were
down) is in the notes. :func:`slurm_machine_file` writes the machine as a TOML file
(:mod:`hpcgym.machine.machine_file`) that ``--machine FILE.toml`` reads back.

Slurm's time limits, GRES and node lists are read by :mod:`hpcgym.machine.slurm_values`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpcgym.common.errors import InvalidConfigError, TraceFormatError
from hpcgym.common.files import read_text
from hpcgym.machine.machine_file import write_machine
from hpcgym.machine.model import MAX_NODES, Machine
from hpcgym.machine.slurm_values import compress_hostlist, expand_hostlist, parse_gres, parse_slurm_time

SINFO_FORMAT = "%N %c %m %G %P"
"""The ``sinfo -o`` format read: node name, CPUs, memory (MB), GRES, partition (with ``-N -h``)."""

UNLIMITED_S = 365 * 86400.0
"""Maximum wall-time of a queue whose limit is ``UNLIMITED`` when no partition has a limit: a year."""

GRES_RESOURCES = {"gpu": "gpus", "mic": "mics"}
"""GRES names and the machine resource each becomes (the job tables' ``gpus`` and ``mics``);
any other GRES becomes a resource of its own name."""

_FIELD_SPLIT = re.compile(r"\s+(?=[A-Za-z][A-Za-z0-9_]*=)")
_WHOLE_RE = re.compile(r"\d+")


@dataclass(frozen=True)
class SlurmNode:
    """One node as Slurm lists it.

    Attributes:
        name: the node's name (``NodeName``, ``%N``).
        cpus: the CPUs jobs may use (``CPUEfctv``, else ``CPUTot``; ``%c``).
        memory_mb: ``RealMemory`` (``%m``), MB.
        gres: the GRES by name, types summed, e.g. ``(("gpu", 4),)``, sorted by name.
        partitions: the partitions the node is in, in the order listed.
        state: ``State`` (``scontrol`` only; ``""`` for ``sinfo``).
        line: the line the node is (first) listed on.
    """

    name: str
    cpus: int
    memory_mb: int
    gres: tuple[tuple[str, int], ...]
    partitions: tuple[str, ...]
    state: str
    line: int

    @property
    def hardware(self) -> tuple[int, int, tuple[tuple[str, int], ...]]:
        """What a listing of the same node twice must agree on: CPUs, memory, GRES."""
        return self.cpus, self.memory_mb, self.gres


@dataclass(frozen=True)
class SlurmPartition:
    """One partition of ``scontrol show partition``.

    Attributes:
        name: ``PartitionName``.
        max_time_s: ``MaxTime`` in seconds; None for ``UNLIMITED``.
        exclusive: ``OverSubscribe=EXCLUSIVE`` (whole nodes per job).
        line: its line in the file.
    """

    name: str
    max_time_s: float | None
    exclusive: bool
    line: int


@dataclass(frozen=True)
class SlurmMachine:
    """A machine built from Slurm's listings, and what the build decided.

    Attributes:
        machine: the machine.
        node_names: per node type (node group), in the machine's order, its nodes' names.
        notes: what a user should know: merged listings, partitions without nodes,
            limits given to ``UNLIMITED`` partitions, nodes that were down.
        comments: the lines :func:`slurm_machine_file` writes at the top of the TOML file.
        node_comments: one line per node type, written above its ``[[nodes]]`` table.
        queue_comments: per queue, the comment after its ``max_walltime_s``.
    """

    machine: Machine
    node_names: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...]
    comments: tuple[str, ...]
    node_comments: tuple[str, ...]
    queue_comments: dict[str, str]


# ------------------------------------------------------------------ reading
def _records(path: str, text: str, first_key: str) -> Iterator[tuple[int, dict[str, tuple[str, int]]]]:
    """``Key=value`` records of ``scontrol ... --oneliner`` (or its multi-line form): (line, fields)."""
    record: dict[str, tuple[str, int]] | None = None
    start = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith(f"{first_key}="):
            if record is not None:
                yield start, record
            record, start = {}, lineno
        elif record is None or not line[:1].isspace():
            raise TraceFormatError(
                path,
                lineno,
                f"expected a line starting with {first_key}=..., found {stripped[:60]!r}",
            )
        for piece in _FIELD_SPLIT.split(stripped):
            key, sep, value = piece.partition("=")
            if sep:
                record.setdefault(key, (value.strip(), lineno))
    if record is not None:
        yield start, record


def _field(path: str, record: dict[str, tuple[str, int]], key: str, what: str, line: int) -> tuple[str, int]:
    if key not in record:
        raise TraceFormatError(path, line, f"{what}: no {key} field")
    return record[key]


def _whole(path: str, value: str, line: int, what: str, minimum: int) -> int:
    if not _WHOLE_RE.fullmatch(value) or int(value) < minimum:
        hint = " (sinfo without -N joins nodes; list them one per line with sinfo -N)" if "+" in value else ""
        raise TraceFormatError(path, line, f"{what}: {value!r} is not a whole number >= {minimum}{hint}")
    return int(value)


def _gres(path: str, value: str, line: int, what: str) -> tuple[tuple[str, int], ...]:
    try:
        return tuple(parse_gres(value).items())
    except ValueError as err:
        raise TraceFormatError(path, line, f"{what}: {err}") from None


def _scontrol_nodes(path: str, text: str) -> list[SlurmNode]:
    nodes = []
    for start, rec in _records(path, text, "NodeName"):
        name = rec["NodeName"][0]
        where = f"node {name}"
        cpu_key = "CPUEfctv" if "CPUEfctv" in rec else "CPUTot"
        cpus, cpu_line = _field(path, rec, cpu_key, where, start)
        memory, mem_line = _field(path, rec, "RealMemory", where, start)
        gres, gres_line = rec.get("Gres", ("(null)", start))
        parts, _ = rec.get("Partitions", ("", start))
        nodes.append(
            SlurmNode(
                name=name,
                cpus=_whole(path, cpus, cpu_line, f"{where}, field {cpu_key}", 1),
                memory_mb=_whole(path, memory, mem_line, f"{where}, field RealMemory", 0),
                gres=_gres(path, gres, gres_line, f"{where}, field Gres"),
                partitions=tuple(p for p in parts.split(",") if p and p != "(null)"),
                state=rec.get("State", ("", start))[0],
                line=start,
            )
        )
    return nodes


def _sinfo_nodes(path: str, text: str) -> list[SlurmNode]:
    nodes: list[SlurmNode] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        tokens = line.split()
        if not tokens:
            continue
        if not nodes and tokens[0] == "NODELIST":  # sinfo's header, without -h
            continue
        if len(tokens) != 5:
            raise TraceFormatError(
                path,
                lineno,
                f'expected 5 fields (sinfo -N -h -o "{SINFO_FORMAT}": node, CPUs, memory MB, GRES, '
                f"partition), found {len(tokens)}: {line.strip()[:80]!r}",
            )
        names, cpus, memory, gres, partition = tokens
        try:
            expanded = expand_hostlist(names, MAX_NODES)
        except ValueError as err:
            raise TraceFormatError(path, lineno, f"field 1 (%N, node name): {err}") from None
        if len(nodes) + len(expanded) > MAX_NODES:
            raise TraceFormatError(
                path, lineno, f"field 1 (%N, node name): the listing names more than {MAX_NODES:,} nodes"
            )
        what = f"node {names}"
        partition = partition.rstrip("*")  # the default partition
        for name in expanded:
            nodes.append(
                SlurmNode(
                    name=name,
                    cpus=_whole(path, cpus, lineno, f"{what}, field 2 (%c, CPUs)", 1),
                    memory_mb=_whole(path, memory, lineno, f"{what}, field 3 (%m, memory MB)", 0),
                    gres=_gres(path, gres, lineno, f"{what}, field 4 (%G, GRES)"),
                    partitions=() if partition in ("", "(null)", "n/a") else (partition,),
                    state="",
                    line=lineno,
                )
            )
    return nodes


def read_slurm_nodes(path: str | os.PathLike[str]) -> tuple[list[SlurmNode], list[str]]:
    """The nodes of an ``scontrol show nodes`` or ``sinfo -N`` listing, and notes.

    The form is recognised by its content: ``NodeName=`` lines are ``scontrol``'s. A
    node listed more than once (``sinfo -N`` lists a node once per partition) is one
    node in all the partitions listed; its CPUs, memory and GRES must agree.

    Raises:
        TraceFormatError: a malformed line or field, a node listed twice with different
            hardware, or no nodes at all; the message names the file, line and field.
    """
    spath = os.fspath(path)
    text = read_text(Path(path), spath)
    scontrol = any(line.lstrip().startswith("NodeName=") for line in text.split("\n"))
    listed = _scontrol_nodes(spath, text) if scontrol else _sinfo_nodes(spath, text)
    if not listed:
        raise TraceFormatError(
            spath,
            None,
            f'no nodes: expected scontrol show nodes --oneliner or sinfo -N -h -o "{SINFO_FORMAT}"',
        )
    merged: dict[str, SlurmNode] = {}
    repeats = 0
    for node in listed:
        seen = merged.get(node.name)
        if seen is None:
            merged[node.name] = node
            continue
        if seen.hardware != node.hardware:
            raise TraceFormatError(
                spath,
                node.line,
                f"node {node.name} is listed on line {seen.line} with {_hardware(seen)} and here with "
                f"{_hardware(node)}",
            )
        repeats += 1
        extra = tuple(p for p in node.partitions if p not in seen.partitions)
        merged[node.name] = dataclasses.replace(seen, partitions=seen.partitions + extra)
    notes = []
    if repeats and scontrol:
        notes.append(f"{repeats} listings repeat a node already listed: merged (their partitions joined)")
    return list(merged.values()), notes


def _hardware(node: SlurmNode) -> str:
    gres = ",".join(f"{g}:{n}" for g, n in node.gres) or "(null)"
    return f"{node.cpus} CPUs, {node.memory_mb} MB, GRES {gres}"


def read_slurm_partitions(path: str | os.PathLike[str]) -> dict[str, SlurmPartition]:
    """The partitions of ``scontrol show partition --oneliner`` by name (their ``MaxTime``).

    Raises:
        TraceFormatError: a malformed line, a missing or malformed ``MaxTime``, a
            partition listed twice, or no partitions; the message names file, line and field.
    """
    spath = os.fspath(path)
    text = read_text(Path(path), spath)
    out: dict[str, SlurmPartition] = {}
    for start, rec in _records(spath, text, "PartitionName"):
        name = rec["PartitionName"][0]
        where = f"partition {name}"
        if name in out:
            raise TraceFormatError(spath, start, f"{where} is listed twice (first on line {out[name].line})")
        value, line = _field(spath, rec, "MaxTime", where, start)
        try:
            limit = parse_slurm_time(value)
        except ValueError as err:
            raise TraceFormatError(spath, line, f"{where}, field MaxTime: {err}") from None
        if limit is not None and limit <= 0:
            raise TraceFormatError(spath, line, f"{where}, field MaxTime: {value!r} is not > 0")
        oversubscribe = rec.get("OverSubscribe", rec.get("Shared", ("", start)))[0]
        out[name] = SlurmPartition(name, limit, oversubscribe.upper().startswith("EXCLUSIVE"), start)
    if not out:
        raise TraceFormatError(spath, None, "no partitions: expected scontrol show partition --oneliner")
    return out


# ------------------------------------------------------------------ the machine
def machine_from_slurm(
    nodes: str | os.PathLike[str],
    partitions: str | os.PathLike[str] | None = None,
    *,
    name: str = "slurm",
    unlimited_s: float | None = None,
) -> SlurmMachine:
    """The machine of a Slurm node listing, with the partition file's limits (see the module).

    Args:
        nodes: ``scontrol show nodes --oneliner`` or ``sinfo -N -h -o "%N %c %m %G %P"`` output.
        partitions: ``scontrol show partition --oneliner`` output, for ``MaxTime``.
        name: the machine's name.
        unlimited_s: maximum wall-time, in seconds, of a queue whose ``MaxTime`` is
            ``UNLIMITED`` or unknown (default: the longest limit of the other
            partitions, else :data:`UNLIMITED_S`).

    Raises:
        TraceFormatError: a malformed listing (file, line and field named).
        InvalidConfigError: ``unlimited_s`` is not a positive number.
    """
    if unlimited_s is not None and not (isinstance(unlimited_s, (int, float)) and 0 < unlimited_s < np.inf):
        raise InvalidConfigError(f"unlimited_s must be a positive number of seconds, got {unlimited_s!r}")
    listed, notes = read_slurm_nodes(nodes)
    parts = read_slurm_partitions(partitions) if partitions is not None else None
    nodes_name = Path(nodes).name

    # node types: identical CPUs, memory (whole GB) and GRES, in the order first listed
    def row_of(node: SlurmNode) -> tuple[int, int, tuple[tuple[str, int], ...]]:
        return node.cpus, node.memory_mb // 1024, node.gres

    types: dict[tuple[int, int, tuple[tuple[str, int], ...]], list[SlurmNode]] = {}
    for node in listed:
        types.setdefault(row_of(node), []).append(node)
    gres_names = sorted({g for key in types for g, n in key[2] if n > 0})
    resource_of = {g: _gres_resource(g) for g in gres_names}
    firsts = [r for r in ("gpus", "mics") if r in resource_of.values()]
    others = sorted({r for r in resource_of.values() if r not in firsts})
    with_memory = any(key[1] > 0 for key in types)
    resources = ["cores", *firsts, *(["mem_gb"] if with_memory else []), *others]
    if not with_memory:
        notes.append(
            "no node has 1 GB of RealMemory (Slurm's RealMemory=1: memory not configured): the machine "
            "has no mem_gb, so jobs that ask for memory cannot run on it"
        )
    rows: list[list[int]] = []
    groups: dict[str, list[int]] = {}
    group_names = _group_names(types)
    node_comments = []
    for (key, members), group in zip(types.items(), group_names, strict=True):
        cpus, gb, gres = key
        amounts = {"cores": cpus, "mem_gb": gb}
        for g, n in gres:
            amounts[resource_of[g]] = amounts.get(resource_of[g], 0) + n
        first = len(rows)
        rows.extend([[amounts.get(r, 0) for r in resources]] * len(members))
        groups[group] = list(range(first, len(rows)))
        mb = sorted({m.memory_mb for m in members})
        memory = f"{mb[0]}" if len(mb) == 1 else f"{mb[0]}-{mb[-1]}"
        gres_text = ",".join(f"{g}:{n}" for g, n in gres) or "(null)"
        node_comments.append(
            f"{group}: {compress_hostlist([m.name for m in members])} "
            f"({cpus} CPUs, RealMemory {memory} MB, Gres {gres_text})"
        )

    # queues: the partitions nodes are in, in the order first listed
    queue_names: list[str] = []
    for node in listed:
        queue_names.extend(p for p in node.partitions if p not in queue_names)
    unassigned = sum(1 for node in listed if not node.partitions)
    if unassigned:
        notes.append(f"{_nodes(unassigned)} in no partition; they are in the machine all the same")
    limits: dict[str, float | None] = {}
    unknown: list[str] = []
    for q in queue_names:
        if parts is not None and q in parts:
            limits[q] = parts[q].max_time_s
        else:
            limits[q] = None
            unknown.append(q)
    if parts is not None:
        empty = [p for p in parts if p not in limits]
        if empty:
            notes.append(
                f"partitions without a node in {nodes_name}: {', '.join(empty)}; they are not queues "
                "(jobs of theirs are dropped as 'queue not on the machine')"
            )
        if unknown:
            notes.append(f"partitions not in {Path(partitions).name}: {', '.join(unknown)}")  # type: ignore[arg-type]
    finite = [v for v in limits.values() if v is not None]
    if unlimited_s is not None:
        fallback, why = float(unlimited_s), "given"
    elif finite:
        fallback, why = max(finite), "the longest limit of the other partitions"
    else:
        fallback, why = UNLIMITED_S, "a year: no partition has a limit"
    queues: dict[str, tuple[float, float]] = {}
    queue_comments: dict[str, str] = {}
    open_ended = [q for q, v in limits.items() if v is None]
    for q, v in limits.items():
        queues[q] = (v if v is not None else fallback, 0.0)
        source = "MaxTime" if v is not None else ("UNLIMITED" if q not in unknown else "MaxTime unknown")
        queue_comments[q] = f"{_clock(queues[q][0])} ({source}{'' if v is not None else f'; {why}'})"
    if open_ended:
        notes.append(
            f"queues without a limit (UNLIMITED, or no partition file): {', '.join(open_ended)}: "
            f"max wall-time {queues[open_ended[0]][0]:,.0f} s ({why}; --unlimited SECONDS sets it)"
        )
    exclusive = parts is not None and all(p.exclusive for p in parts.values())
    if exclusive:
        notes.append("every partition is OverSubscribe=EXCLUSIVE: jobs get whole nodes (exclusive = true)")
    down = [n.name for n in listed if re.search(r"DOWN|DRAIN|FAIL|FUTURE|NOT_RESPONDING", n.state)]
    if down:
        notes.append(
            f"{_nodes(len(down))} down, drained or not yet in service when listed "
            f"({compress_hostlist(down)}); the machine has them (it models the configured nodes)"
        )

    summary = "; ".join(
        f"{len(members)} x ({_describe(key)})" for key, members in list(types.items())[:4]
    ) + ("; ..." if len(types) > 4 else "")
    machine = Machine(
        name=name,
        resources=tuple(resources),
        capacity=np.array(rows, dtype=np.int64),
        groups=groups,
        queues=queues,
        exclusive=exclusive,
        description=f"{len(listed)} nodes from Slurm: {summary}",
    )
    source = f"{nodes_name}" + (f" and {Path(partitions).name}" if partitions is not None else "")
    comments = (
        f"Machine {name!r}: written by `hpcgym machines from-slurm` from {source}.",
        "Node types group nodes of the same CPUs, memory (RealMemory MB // 1024 = mem_gb) and GRES;",
        "queues are the partitions, max_walltime_s their MaxTime, ewt_s 0 (Slurm has no expected wait).",
        *[f"note: {n}" for n in notes],
    )
    return SlurmMachine(
        machine=machine,
        node_names=tuple(tuple(m.name for m in members) for members in types.values()),
        notes=tuple(notes),
        comments=comments,
        node_comments=tuple(node_comments),
        queue_comments=queue_comments,
    )


def slurm_machine_file(
    nodes: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    partitions: str | os.PathLike[str] | None = None,
    name: str | None = None,
    unlimited_s: float | None = None,
) -> SlurmMachine:
    """:func:`machine_from_slurm`, written to ``output`` as a TOML machine file (atomically).

    The machine's name is ``name``, by default the output file's name without ``.toml``.
    ``Machine.from_file(output)`` (``--machine output``) reads back an equal machine.
    """
    built = machine_from_slurm(nodes, partitions, name=name or Path(output).stem, unlimited_s=unlimited_s)
    write_machine(
        built.machine,
        output,
        comments=built.comments,
        node_comments=built.node_comments,
        queue_comments=built.queue_comments,
    )
    return built


def _gres_resource(gres: str) -> str:
    resource = GRES_RESOURCES.get(gres, gres)
    return f"gres_{resource}" if resource in ("cores", "mem_gb") else resource


def _describe(key: tuple[int, int, tuple[tuple[str, int], ...]]) -> str:
    cpus, gb, gres = key
    parts = [f"{cpus} cores", *([f"{gb} GB"] if gb else []), *(f"{n} {_gres_resource(g)}" for g, n in gres)]
    return ", ".join(parts)


def _group_names(types: dict[tuple[int, int, tuple[tuple[str, int], ...]], list[SlurmNode]]) -> list[str]:
    """A node group name per node type: its nodes' common prefix if that is its own, else its hardware."""
    prefixes = []
    for members in types.values():
        found = {re.sub(r"[\d_.-]+$", "", m.name) for m in members}
        prefixes.append(found.pop() if len(found) == 1 else "")
    names = []
    for (cpus, gb, gres), prefix in zip(types, prefixes, strict=True):
        if prefix and prefixes.count(prefix) == 1 and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", prefix):
            names.append(prefix)
        else:
            names.append("-".join([f"c{cpus}", f"m{gb}g", *(f"{_gres_resource(g)}{n}" for g, n in gres)]))
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 and names.count(n) == 1 else f"{n}-{seen[n]}")
    return out


def _nodes(n: int) -> str:
    return "1 node was" if n == 1 else f"{n} nodes were"


def _clock(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{days}-{h:02d}:{m:02d}:{s:02d}" if days else f"{h:02d}:{m:02d}:{s:02d}"
