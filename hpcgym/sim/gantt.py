"""Where a Gantt chart draws each job: rows of processors, packed best-fit over time.

A schedule records the node of each chunk of a job but not which of the node's
processors it held: the engine counts free processors per node and does not number them.
A chart by processor therefore assigns them, as Batsim's evalys draws the processors a
job was given: every node is a band of rows, one row per processor (the machine's
``cores`` or ``procs``), and jobs are taken in order of start (ties: in the schedule's
order). A job's chunks on a node get a *contiguous* run of that node's rows that is free
at its start (a row is free again at the end of the job that held it): the shortest run
that is long enough, the lowest of equals (best fit, which keeps long runs for wide jobs
and leaves fewer scattered rows than first fit: on the first 2,000 jobs of the bundled
trace under EASY, 76 % of the jobs get one run against 73 %). When no run is long
enough, because earlier jobs left the free rows scattered, the job takes the longest
free runs, drawn as several bands. On an exclusive machine a chunk takes all of its
node's rows. So the rows are a packing of the recorded schedule, not
processor numbers the simulator chose; on the one-node machine of an SWF trace they are
the only placement there is.

:func:`occupancy` bins the packed bands into a (rows x time) grid of busy shares, what
the chart draws instead of single jobs when they are too many to tell apart.

>>> from hpcgym.machine import Machine
>>> from hpcgym.sim.schedule_file import ScheduleTable
>>> t = ScheduleTable("s", np.array([1, 2, 3]), np.zeros(3), np.array([0.0, 0.0, 10.0]),
...                   np.array([10.0, 20.0, 30.0]), np.array([2, 1, 2]), np.zeros(4, np.int64),
...                   np.zeros(0, np.int64))
>>> lay = pack_processors(t, Machine.processors(4))
>>> [(int(j), int(lo), int(hi)) for j, lo, hi in zip(lay.job, lay.lo, lay.hi)]
[(0, 0, 2), (1, 2, 3), (2, 0, 2)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import RESOURCE_ALIASES, Machine
from hpcgym.sim.schedule_file import ScheduleTable


@dataclass(frozen=True, eq=False)
class ProcessorLayout:
    """The rows of a Gantt chart and the bands the jobs take on them.

    Attributes:
        machine: the machine drawn.
        resource: the resource a row is one unit of (``procs`` or ``cores``).
        node_first: ``(nodes + 1,)`` the first row of each node (the last entry is the row count).
        job, lo, hi: one entry per band: job ``job[i]`` holds rows ``lo[i]`` to ``hi[i] - 1``
            from its start to its end.
        contiguous_share: share of the jobs that ran whose every chunk is one band.
    """

    machine: Machine
    resource: str
    node_first: np.ndarray
    job: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    contiguous_share: float

    @property
    def rows(self) -> int:
        return int(self.node_first[-1])


def processor_column(machine: Machine) -> int:
    """The machine's column of processors: ``procs`` or ``cores`` if it has one, else its first resource."""
    for name in ("procs", RESOURCE_ALIASES["procs"]):
        if name in machine.resources:
            return machine.resources.index(name)
    return 0


def pack_processors(table: ScheduleTable, machine: Machine) -> ProcessorLayout:
    """Assign each job rows of the machine's processors, best fit over time (module docstring).

    A job's processors are spread evenly over its chunks (the first ``procs % chunks``
    chunks get one more); chunks on one node are drawn together. A job with no recorded
    node runs on node 0, which must then be the machine's only node.

    Raises:
        InvalidConfigError: a job on a node the machine lacks, a chunk larger than its
            node, a job without a node on a machine of several nodes, or a node holding
            more processors at some instant than it has: the schedule was not made on this
            machine. The message names the file, the line and the job.
    """
    col = processor_column(machine)
    per_node = np.maximum(machine.capacity[:, col], 1)
    first = np.concatenate([[0], np.cumsum(per_node)]).astype(np.int64)
    free_at = np.full(int(first[-1]), -np.inf)
    bands_job: list[int] = []
    bands_lo: list[int] = []
    bands_hi: list[int] = []
    ran = table.ran
    order = np.lexsort((np.arange(len(table)), table.start))
    scattered = 0
    for j in order[ran[order]]:
        j = int(j)
        nodes = table.nodes_of(j)
        if len(nodes) == 0:
            if machine.n_nodes > 1:
                raise InvalidConfigError(
                    f"{table.where(j)}: no node recorded, and machine {machine.name!r} has "
                    f"{machine.n_nodes} nodes: the chart cannot tell where the job ran"
                )
            nodes = np.zeros(1, dtype=np.int64)
        if int(nodes.max()) >= machine.n_nodes:
            raise InvalidConfigError(
                f"{table.where(j)}: runs on node {int(nodes.max())}, but machine {machine.name!r} has "
                f"{machine.n_nodes} node(s): give the machine the schedule was simulated on"
            )
        k, procs = len(nodes), int(table.procs[j])
        widths = np.full(k, procs // k, dtype=np.int64)
        widths[: procs % k] += 1
        uniq, inverse = np.unique(nodes, return_inverse=True)
        need = np.bincount(inverse, weights=widths).astype(np.int64)
        start, end = float(table.start[j]), float(table.end[j])
        whole = True
        for node, width in zip(uniq.tolist(), need.tolist(), strict=True):
            lo, hi = int(first[node]), int(first[node + 1])
            if machine.exclusive:
                width = hi - lo
            if width > hi - lo:
                raise InvalidConfigError(
                    f"{table.where(j)}: {width} processors on node {node}, which has {hi - lo}: "
                    f"give the machine the schedule was simulated on"
                )
            rows = _best_fit(free_at[lo:hi] <= start, width)
            if rows is None:
                busy = int((free_at[lo:hi] > start).sum())
                raise InvalidConfigError(
                    f"{table.where(j)}: at its start ({start:g} s) node {node} has {hi - lo - busy} of "
                    f"{hi - lo} processors free and the job needs {width}: the schedule does not fit "
                    f"machine {machine.name!r}; give the machine it was simulated on (--machine, --procs)"
                )
            free_at[lo + rows] = end
            cut = np.flatnonzero(np.diff(rows) != 1) + 1
            whole = whole and len(cut) == 0
            for run in np.split(rows, cut) if len(rows) else []:
                bands_job.append(j)
                bands_lo.append(lo + int(run[0]))
                bands_hi.append(lo + int(run[-1]) + 1)
        scattered += not whole
    count = int(ran.sum())
    return ProcessorLayout(
        machine=machine,
        resource=machine.resources[col],
        node_first=first,
        job=np.asarray(bands_job, dtype=np.int64),
        lo=np.asarray(bands_lo, dtype=np.int64),
        hi=np.asarray(bands_hi, dtype=np.int64),
        contiguous_share=1.0 - scattered / count if count else 1.0,
    )


def _best_fit(free: np.ndarray, width: int) -> np.ndarray | None:
    """``width`` free rows: the shortest long-enough run, else the longest runs; None if too few are free."""
    if width == 0:
        return np.zeros(0, dtype=np.int64)
    edges = np.diff(np.concatenate([[0], free.view(np.int8), [0]]))
    run_lo, run_hi = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    length = run_hi - run_lo
    if length.sum() < width:
        return None
    fits = np.flatnonzero(length >= width)
    if len(fits):
        a = int(run_lo[fits[np.argmin(length[fits])]])
        return np.arange(a, a + width, dtype=np.int64)
    longest = np.argsort(-length, kind="stable")
    rows = np.concatenate([np.arange(run_lo[k], run_hi[k]) for k in longest])
    return np.sort(rows[:width])


def busy_series(table: ScheduleTable) -> tuple[np.ndarray, np.ndarray]:
    """Processors in use over time as a step function: ``(times, busy)``.

    ``busy[i]`` holds from ``times[i]`` until ``times[i + 1]``; at one instant, jobs end
    before others start (as in the engine). Jobs that never ran are left out.
    """
    ran = table.ran
    amount = table.procs[ran].astype(np.float64)
    times = np.concatenate([table.end[ran], table.start[ran]])
    delta = np.concatenate([-amount, amount])
    order = np.lexsort((delta, times))
    times, busy = times[order], np.cumsum(delta[order])
    last = np.append(times[1:] != times[:-1], True)
    return times[last], busy[last]


def row_edges(layout: ProcessorLayout, max_rows: int) -> np.ndarray:
    """Edges of the heat map's rows: whole nodes on a machine of several nodes, else groups of processors.

    At most about ``max_rows`` rows: nodes (or processors) are grouped in equal numbers.
    """
    first = layout.node_first
    if len(first) > 2:
        step = -(-(len(first) - 1) // max_rows)
        return np.unique(np.concatenate([first[::step], first[-1:]]))  # type: ignore[no-any-return]
    step = -(-layout.rows // max_rows)
    return np.unique(np.append(np.arange(0, layout.rows, step), layout.rows))  # type: ignore[no-any-return]


def occupancy(
    layout: ProcessorLayout, table: ScheduleTable, rows: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """The busy share of each (row group, time bin): processor-seconds held / (processors x seconds).

    Args:
        layout: the packed bands (:func:`pack_processors`).
        table: the schedule they were packed from.
        rows: edges of the row groups (:func:`row_edges`), increasing processor rows.
        times: edges of the time bins, increasing seconds.

    Returns:
        ``(len(rows) - 1, len(times) - 1)`` shares in [0, 1], exact for every bin (a job
        holding a processor for part of a bin counts for that part).
    """
    n_rows, n_bins = len(rows) - 1, len(times) - 1
    grid = np.zeros((n_rows, n_bins + 2))
    if len(layout.job) == 0 or n_bins <= 0:
        return grid[:, :n_bins]
    # each band, cut at the row-group edges: (group, slots in it)
    g0 = np.searchsorted(rows, layout.lo, side="right") - 1
    g1 = np.searchsorted(rows, layout.hi, side="left")
    span = g1 - g0
    band = np.repeat(np.arange(len(layout.job)), span)
    group = np.repeat(g0, span) + (np.arange(int(span.sum())) - np.repeat(np.cumsum(span) - span, span))
    slots = np.minimum(layout.hi[band], rows[group + 1]) - np.maximum(layout.lo[band], rows[group])
    job = layout.job[band]
    # bin coordinates of each start and end; a bin's value is the integral of the held slots,
    # as second differences of ramp functions: exact at fractional positions
    u = _bin_position(times, table.start[job])
    v = _bin_position(times, table.end[job])
    for pos, sign in ((u, 1.0), (v, -1.0)):
        whole = np.floor(pos).astype(np.int64)
        frac = pos - whole
        np.add.at(grid, (group, whole), sign * slots * (1.0 - frac))
        np.add.at(grid, (group, whole + 1), sign * slots * frac)
    held = np.cumsum(grid, axis=1)[:, :n_bins]  # processor-bins per cell: a bin is the unit of time
    size = np.diff(rows).astype(np.float64)[:, None]
    return np.clip(held / size, 0.0, 1.0)  # type: ignore[no-any-return]


def _bin_position(edges: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``t`` in units of bins from ``edges[0]``, clipped to ``[0, bins]`` (piecewise linear in between)."""
    bins = len(edges) - 1
    k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    pos = k + (t - edges[k]) / (edges[k + 1] - edges[k])
    return np.clip(pos, 0.0, float(bins))  # type: ignore[no-any-return]
