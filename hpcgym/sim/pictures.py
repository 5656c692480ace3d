"""Pictures of a schedule: a Gantt chart, the queue and the utilization over time, two policies side by side.

:func:`schedule_figure` draws one schedule (:class:`~hpcgym.sim.schedule_file.ScheduleTable`) on
its machine, in up to three panels sharing one time axis (time since the first submission):

* **gantt**: processors (rows, grouped by node; :mod:`hpcgym.sim.gantt` says how jobs are
  given rows) x time. Each job is a rectangle from its start to its end over its
  processors, coloured by user, by queue or one colour per job; a light band of the same
  colour on the same rows runs from its submission to its start, its wait (it shows where
  the rows are idle then: a running job drawn later covers it). With more than
  ``max_jobs`` jobs in the window single jobs cannot be told apart: the panel becomes a
  heat map of the busy share of each node (or group of processors) and time bin.
* **load**: the number of waiting jobs and the utilization (processors busy / the machine's
  processors; the dashed line is its mean over the window), as step functions.

:func:`comparison_figure` puts two schedules of the same jobs side by side: each job's wait
and bounded slowdown under one against the other on log-log axes with the diagonal (waits
spread over decades: a log axis keeps both the minutes and the days readable), and the two
queue lengths over time.

Figures are :class:`matplotlib.figure.Figure` objects of their own (no pyplot, no change of
backend); :func:`write_figure` writes one atomically (a temporary file in the same folder,
renamed into place). matplotlib is the ``plot`` extra, imported only when a figure is drawn.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.extras import require
from hpcgym.machine import Machine, make_machine
from hpcgym.sim.gantt import (
    ProcessorLayout,
    busy_series,
    occupancy,
    pack_processors,
    processor_column,
    row_edges,
)
from hpcgym.sim.metrics import bounded_slowdown, queue_length_series
from hpcgym.sim.schedule import Schedule
from hpcgym.sim.schedule_file import ScheduleTable, read_schedule

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PICTURE_SUFFIXES = (".png", ".svg", ".pdf")
"""File types the pictures are written as (by suffix)."""
VIEWS = ("all", "gantt", "load")
"""What :func:`schedule_figure` draws: every panel, the Gantt chart, or queue length and utilization."""
COLOR_BY = ("user", "queue", "job")
"""What a job's colour in the Gantt chart says."""
MAX_GANTT_JOBS = 2000
"""Above this many jobs in the window, the Gantt chart is drawn as a heat map of busy shares."""
CATEGORY_COLOURS = 12
"""Users or queues with a colour of their own (the largest by processor-hours); the rest are grey."""
HEAT_ROWS, HEAT_BINS = 64, 400
"""The heat map's rows (about; whole nodes) and time bins."""

_OTHERS = (0.55, 0.55, 0.55, 1.0)
_UNITS = (("min", 60.0), ("h", 3600.0), ("d", 86400.0))


# ---------------------------------------------------------------- inputs
def check_picture_path(path: str | os.PathLike[str], option: str = "-o") -> Path:
    """Fail fast, before any work, on a file that cannot be written as a picture.

    Raises:
        InvalidConfigError: the suffix is not one of :data:`PICTURE_SUFFIXES`, or no such folder.
        MissingExtraError: matplotlib is not installed (the message names the extra).
    """
    p = Path(path)
    if p.suffix.lower() not in PICTURE_SUFFIXES:
        raise InvalidConfigError(
            f"{option} {p}: a picture is written as PNG, SVG or PDF; the file name must end in "
            f"{', '.join(PICTURE_SUFFIXES)}"
        )
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidConfigError(f"{option} {p}: no such directory: {folder}")
    require("plot", what=f"{option} {p}")
    return p


def parse_time(text: str, option: str) -> float:
    """A time after the first submission in seconds: a number with unit s, m, h or d (default h).

    >>> parse_time("36", "--from"), parse_time("2d", "--to"), parse_time("90m", "--to")
    (129600.0, 172800.0, 5400.0)
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([smhd]?)\s*", text)
    if m is None:
        raise InvalidConfigError(
            f"{option}: {text!r} is not a time; give hours (36), or a number with s, m, h or d (90m, 2d)"
        )
    return float(m.group(1)) * {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "": 3600.0}[m.group(2)]


def schedule_machine(
    table: ScheduleTable,
    machine: str | os.PathLike[str] | Machine | None = None,
    *,
    procs: int | None = None,
    node_size: int | None = None,
    workload: Any = None,
) -> tuple[Machine, str | None]:
    """The machine to draw ``table`` on, and a note when it had to be guessed.

    In order: ``machine`` (a preset name, a TOML file or a machine); ``procs`` processors
    (``node_size``: in exclusive nodes, as ``simulate --procs --node-size``); the machine of
    ``workload`` (the trace the schedule was simulated from); else, when every job ran on
    node 0, one node of as many processors as were ever busy at once (a guess: the
    utilization is then relative to that peak, and the note says so).

    Raises:
        InvalidConfigError: ``machine`` together with ``procs`` or ``node_size``, or a schedule
            on several nodes with no machine given.
    """
    if machine is not None:
        if procs is not None or node_size is not None:
            raise InvalidConfigError("--machine and --procs/--node-size: give one of them")
        return make_machine(machine), None
    if procs is not None or node_size is not None:
        if procs is None:
            if workload is None:
                raise InvalidConfigError("--node-size needs the machine size: give --procs (or --trace)")
            procs = int(workload.procs)
        return Machine.processors(procs, node_size=node_size), None
    if workload is not None:
        return (workload.machine or Machine.processors(int(workload.procs))), None
    if len(table.node) and int(table.node.max()) > 0:
        raise InvalidConfigError(
            f"{table.source}: jobs run on {int(table.node.max()) + 1} nodes; give the machine "
            "(--machine NAME|FILE.toml, --procs N --node-size K, or the trace it was simulated from)"
        )
    _, busy = busy_series(table)
    peak = int(busy.max()) if len(busy) else int(table.procs.max())
    note = (
        f"machine size not given: drawn as one node of {peak:,} processors, the most ever busy at once "
        "(utilization is relative to that peak; give --machine, --procs or --trace for the real size)"
    )
    return Machine.processors(max(peak, 1)), note


# ---------------------------------------------------------------- one schedule
def schedule_figure(
    table: ScheduleTable,
    machine: Machine,
    *,
    view: str = "all",
    color_by: str | None = None,
    window: tuple[float | None, float | None] = (None, None),
    max_jobs: int = MAX_GANTT_JOBS,
    title: str | None = None,
    width: float = 10.0,
    dpi: float = 100.0,
    notes: list[str] | None = None,
) -> Figure:
    """The panels of ``view`` (:data:`VIEWS`) for ``table`` on ``machine`` (module docstring).

    Args:
        table: the schedule.
        machine: its machine (:func:`schedule_machine`).
        view: ``all``, ``gantt`` or ``load``.
        color_by: ``user``, ``queue`` or ``job``; by default ``user`` if the table knows
            users, else ``job`` (a note says so).
        window: ``(from, to)`` seconds after the first submission; jobs that wait or run in
            it are drawn, the others not. ``None``: from the first submission to the last end.
        max_jobs: above this many jobs in the window the Gantt chart is a heat map.
        title: the figure's title (default: the source, the jobs and the machine).
        width, dpi: the figure's width in inches and its resolution.
        notes: if given, what was chosen or left out is appended here (for the CLI to print).

    Raises:
        InvalidConfigError: an unknown view or colouring, colouring by labels the table lacks,
            an empty window, or a schedule that does not fit the machine.
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    if view not in VIEWS:
        raise InvalidConfigError(f"--view: unknown view {view!r}; known: {', '.join(VIEWS)}")
    notes = [] if notes is None else notes
    color_by = _colouring(table, color_by, notes)
    t0 = float(table.submit.min())
    last = float(np.nanmax(np.concatenate([table.end, table.submit])))
    lo = t0 if window[0] is None else t0 + float(window[0])
    hi = last if window[1] is None else t0 + float(window[1])
    if not hi > lo:
        raise InvalidConfigError(
            f"--from/--to: the window is empty ({(lo - t0) / 3600:g} h to {(hi - t0) / 3600:g} h after "
            f"the first submission; the schedule spans {(last - t0) / 3600:g} h)"
        )
    unit, scale = _unit(hi - lo)
    end_or_submit = np.where(table.ran, table.end, table.submit)
    shown = (table.submit < hi) & (end_or_submit > lo) | (table.submit >= lo) & (table.submit < hi)
    never = int((~table.ran).sum())
    if never:
        notes.append(f"{never:,} of {len(table):,} jobs never ran (no start): they are not drawn")
    panels = {"all": ("gantt", "queue", "util"), "gantt": ("gantt",), "load": ("queue", "util")}[view]
    heights = {"gantt": 4.6, "queue": 1.6, "util": 1.6}
    fig = Figure(figsize=(width, sum(heights[p] for p in panels) + 0.8), dpi=dpi, layout="constrained")
    axes = fig.subplots(
        len(panels), 1, sharex=True, height_ratios=[heights[p] for p in panels], squeeze=False
    )
    axes = axes[:, 0]
    x = _axis_time(t0, scale)
    drawn = int(shown.sum())
    dense = drawn > max_jobs
    bins = np.linspace(lo, hi, HEAT_BINS + 1) if dense else None
    if dense:
        notes.append(
            f"{drawn:,} jobs in the window, more than {max_jobs:,}: "
            + ("the Gantt chart is a heat map of busy shares, and " if "gantt" in panels else "")
            + f"the queue and utilization are means (line) and maxima (shaded) over {HEAT_BINS} time bins; "
            "--from/--to draw a shorter window job by job"
        )
    for ax, panel in zip(axes, panels, strict=True):
        if panel == "gantt":
            layout = pack_processors(table, machine)
            if dense:
                _draw_heat(fig, ax, layout, table, lo, hi, x)
            else:
                if layout.contiguous_share < 1.0:
                    notes.append(
                        f"{1 - layout.contiguous_share:.1%} of the jobs could not get one run of adjacent "
                        "rows (the free rows were scattered): they are drawn as several bands"
                    )
                _draw_gantt(ax, layout, table, shown, color_by, x, (lo, hi))
        elif panel == "queue":
            times, length = _in_window(*queue_length_series(table.submit, table.start), lo, hi)
            top = _series(ax, x, times, length, "C0", bins)
            ax.set_ylabel("waiting jobs", fontsize=9)
            ax.set_ylim(0, max(1.0, top) * 1.05)
        else:
            col = processor_column(machine)
            capacity = float(machine.capacity[:, col].sum())
            times, busy = busy_series(table)
            times, util = _in_window(times, busy / capacity, lo, hi)
            _series(ax, x, times, util, "C2", bins)
            mean = _window_mean(times, util, lo, hi)
            ax.axhline(mean, color="0.25", linestyle="--", linewidth=0.8, label=f"mean {mean:.2f}")
            ax.legend(loc="upper right", fontsize=8, framealpha=0.85, edgecolor="none")
            ax.set_ylabel("utilization", fontsize=9)
            ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3, linewidth=0.5)
        ax.set_axisbelow(True)  # under the jobs: the colour of a job's rectangle is the job's alone
        ax.tick_params(labelsize=8)
    axes[-1].set_xlim(x(lo), x(hi))
    axes[-1].set_xlabel(f"time since the first submission [{unit}]", fontsize=9)
    if title is None:
        title = f"{Path(table.source).name}: {drawn:,} of {len(table):,} jobs on {_machine_words(machine)}"
    fig.suptitle(title, fontsize=10)
    return fig


def _colouring(table: ScheduleTable, color_by: str | None, notes: list[str]) -> str:
    if color_by is None:
        if table.user is not None:
            return "user"
        notes.append(
            f"{table.source} has no users: one colour per job (the trace it was simulated from, "
            "--trace or --workload, gives users and queues)"
        )
        return "job"
    if color_by not in COLOR_BY:
        raise InvalidConfigError(f"--color-by: unknown {color_by!r}; known: {', '.join(COLOR_BY)}")
    if color_by != "job" and getattr(table, color_by) is None:
        raise InvalidConfigError(
            f"--color-by {color_by}: {table.source} has no {color_by}s; give the trace it was simulated "
            "from (--trace FILE or --workload FILE), or --color-by job"
        )
    return color_by


def _unit(span: float) -> tuple[str, float]:
    """The time unit of an axis spanning ``span`` seconds: minutes, hours or days."""
    if span <= 3 * 3600:
        return _UNITS[0]
    return _UNITS[1] if span <= 5 * 86400 else _UNITS[2]


def _axis_time(t0: float, scale: float) -> Any:
    def x(t: Any) -> Any:
        return (np.asarray(t, dtype=np.float64) - t0) / scale

    return x


def _machine_words(m: Machine) -> str:
    col = processor_column(m)
    total = int(m.capacity[:, col].sum())
    if m.n_nodes == 1:
        return f"{total:,} {m.resources[col]}"
    return f"{m.n_nodes} nodes, {total:,} {m.resources[col]} ({m.name})"


def _series(
    ax: Axes, x: Any, times: np.ndarray, values: np.ndarray, colour: str, bins: np.ndarray | None
) -> float:
    """Draw a step function (from :func:`_in_window`), or per time bin its mean (line) and maximum (shaded).

    Returns the largest value drawn.
    """
    if bins is None:
        ax.step(x(times), values, where="post", color=colour, linewidth=0.8)
        ax.fill_between(x(times), values, step="post", color=colour, alpha=0.2, linewidth=0)
        return float(values.max())
    mean, peak = binned(times, values, bins)
    ax.stairs(peak, x(bins), fill=True, color=colour, alpha=0.25, linewidth=0)
    ax.stairs(mean, x(bins), color=colour, linewidth=0.9)
    return float(peak.max())


def binned(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The time-weighted mean and the maximum of a step function in each bin of ``edges``.

    ``values[i]`` holds from ``times[i]`` to ``times[i + 1]`` (the last value is not used);
    ``times`` covers the edges, as :func:`_in_window` returns it.

    >>> binned(np.array([0.0, 1.0, 3.0, 4.0]), np.array([2.0, 0.0, 4.0, 4.0]), np.array([0.0, 2.0, 4.0]))
    (array([1., 2.]), array([2., 4.]))
    """
    integral = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])
    mean = np.diff(np.interp(edges, times, integral)) / np.diff(edges)
    first = np.searchsorted(times, edges[:-1], side="right") - 1  # the step under each bin's start
    stop = np.searchsorted(times, edges[1:], side="left")  # the steps that start before its end
    stop = np.maximum(stop, first + 1)
    peak = np.array([values[a:b].max() for a, b in zip(first.tolist(), stop.tolist(), strict=True)])
    return mean, peak


def _in_window(times: np.ndarray, values: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """A step function (``values[i]`` from ``times[i]`` on; 0 before the first) cut to ``[lo, hi]``."""
    k = int(np.searchsorted(times, lo, side="right"))
    at_lo = float(values[k - 1]) if k > 0 else 0.0
    inside = slice(k, int(np.searchsorted(times, hi, side="right")))
    t = np.concatenate([[lo], times[inside], [hi]])
    v = np.concatenate([[at_lo], values[inside]])
    return t, np.append(v, v[-1])


def _window_mean(times: np.ndarray, values: np.ndarray, lo: float, hi: float) -> float:
    """The time-weighted mean of a step function over ``[lo, hi]``."""
    dt = np.diff(np.clip(times, lo, hi))
    return float((values[:-1] * dt).sum() / dt.sum()) if dt.sum() > 0 else 0.0


def job_colours(
    table: ScheduleTable, color_by: str, window: tuple[float, float] | None = None
) -> tuple[np.ndarray, list[tuple[str, Any]]]:
    """Each job's RGBA colour and the legend: ``(label, colour)`` of the coloured users or queues.

    ``user`` or ``queue``: of those with jobs waiting or running in ``window`` (seconds;
    default: all), the :data:`CATEGORY_COLOURS` with the most processor-hours in it get a
    colour of their own, the others one grey (the legend's last entry). ``job``: colours
    in turn by job order, so that neighbours differ. The palette has no pale colours, so
    that a wait band (:func:`lighter`) is never mistaken for a running job.
    """
    from matplotlib import colormaps

    palette = np.concatenate(
        [
            np.delete(colormaps["tab10"](np.arange(10)), 7, axis=0),  # without its grey
            colormaps["Dark2"]([0, 2, 5]),  # teal, slate blue, mustard
        ]
    )
    n = len(table)
    if color_by == "job":
        return palette[np.arange(n) % len(palette)], []
    lo, hi = window if window is not None else (-np.inf, np.inf)
    ran = table.ran
    held = np.clip(np.where(ran, table.end, 0.0), lo, hi) - np.clip(np.where(ran, table.start, 0.0), lo, hi)
    last = np.where(ran, table.end, table.submit)
    present = (table.submit <= hi) & (last >= lo)
    names, inverse = np.unique(getattr(table, color_by).astype(str), return_inverse=True)
    weight = np.bincount(inverse, weights=held * table.procs, minlength=len(names))
    seen = np.bincount(inverse, weights=present, minlength=len(names)) > 0
    rank = [int(i) for i in np.argsort(-weight, kind="stable") if seen[i]]
    colour_of = np.tile(np.array(_OTHERS), (len(names), 1))
    assert len(palette) == CATEGORY_COLOURS
    top = rank[:CATEGORY_COLOURS]
    colour_of[top] = palette[: len(top)]
    legend: list[tuple[str, Any]] = [(str(names[i]), tuple(colour_of[i])) for i in top]
    if len(rank) > len(top):
        legend.append((f"{len(rank) - len(top):,} other {color_by}s", _OTHERS))
    return colour_of[inverse], legend


def lighter(colours: np.ndarray, share: float = 0.3) -> np.ndarray:
    """``colours`` mixed with white, keeping ``share`` of the colour (the wait bands)."""
    out = colours.copy()
    out[:, :3] = out[:, :3] * share + (1.0 - share)
    return out


def _draw_gantt(
    ax: Axes,
    layout: ProcessorLayout,
    table: ScheduleTable,
    shown: np.ndarray,
    color_by: str,
    x: Any,
    window: tuple[float, float],
) -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    colours, entries = job_colours(table, color_by, window)
    keep = shown[layout.job]
    job, lo, hi = layout.job[keep], layout.lo[keep], layout.hi[keep]
    few = len(np.unique(job)) <= 300
    waits = table.start[job] > table.submit[job]
    for z, (t_from, t_to, face, which) in enumerate(
        (
            (table.submit[job], table.start[job], lighter(colours[job]), waits),
            (table.start[job], table.end[job], colours[job], np.ones(len(job), dtype=bool)),
        )
    ):
        a, b = x(t_from[which]), x(t_to[which])
        y0, y1 = lo[which].astype(np.float64), hi[which].astype(np.float64)
        verts = np.stack([np.column_stack(c) for c in ((a, y0), (b, y0), (b, y1), (a, y1))], axis=1)
        ax.add_collection(
            PolyCollection(
                list(verts),
                facecolors=face[which],
                edgecolors="0.15" if few and z == 1 else "none",
                linewidths=0.3 if few and z == 1 else 0.0,
                zorder=1 + z,
            )
        )
    _node_axis(ax, layout)
    if entries:
        handles = [Patch(facecolor=c, label=name) for name, c in entries]
        ax.legend(
            handles=handles,
            title=f"{color_by} (by processor-hours)\npale: waiting to start",
            loc="center left",
            bbox_to_anchor=(1.005, 0.5),
            fontsize=7,
            title_fontsize=7,
            frameon=False,
        )


def _node_axis(ax: Axes, layout: ProcessorLayout) -> None:
    """Rows from 0 (bottom) to the machine's processors; node boundaries on a machine of several nodes."""
    first = layout.node_first
    ax.set_ylim(0, layout.rows)
    nodes = len(first) - 1
    if nodes == 1:
        from matplotlib.ticker import MaxNLocator

        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(f"{layout.resource} (rows packed best-fit)", fontsize=9)
        return
    step = max(1, -(-nodes // 16))
    ax.set_yticks((first[:-1:step] + first[1::step]) / 2 if step == 1 else first[:-1:step], minor=False)
    ax.set_yticklabels([str(i) for i in range(0, nodes, step)])
    if nodes <= 128:
        for y in first[1:-1]:
            ax.axhline(y, color="0.8", linewidth=0.4, zorder=0.5)
    ax.set_ylabel(f"node ({layout.resource} packed within)", fontsize=9)


def _draw_heat(
    fig: Figure, ax: Axes, layout: ProcessorLayout, table: ScheduleTable, lo: float, hi: float, x: Any
) -> None:
    edges = row_edges(layout, HEAT_ROWS)
    times = np.linspace(lo, hi, HEAT_BINS + 1)
    grid = occupancy(layout, table, edges, times)
    idle = np.ma.masked_equal(grid, 0.0)  # not drawn: the background, as in the chart of single jobs
    mesh = ax.pcolormesh(x(times), edges, idle, cmap="Blues", vmin=0.0, vmax=1.0, rasterized=True)
    cbar = fig.colorbar(mesh, ax=ax, pad=0.01, fraction=0.04)
    cbar.set_label("busy share", fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    _node_axis(ax, layout)


# ---------------------------------------------------------------- two schedules
def comparison_figure(
    a: ScheduleTable,
    b: ScheduleTable,
    *,
    labels: Sequence[str] = ("A", "B"),
    title: str | None = None,
    width: float = 10.0,
    dpi: float = 100.0,
    notes: list[str] | None = None,
) -> Figure:
    """Two schedules of the same jobs: per-job wait and bounded slowdown, B against A, and both queues.

    Jobs are matched by id; jobs in one schedule only, or that did not run in both, are
    left out and counted in ``notes``. Waits under 1 s are drawn at 1 s (a log axis has
    no 0); the counts above each scatter say how many jobs did better under each.

    Raises:
        InvalidConfigError: a job id twice in one schedule, or no job in both.
        ImportError: matplotlib is missing.
    """
    from matplotlib.figure import Figure

    notes = [] if notes is None else notes
    la, lb = labels
    ia, ib = _match(a, b, la, lb, notes)
    wait_a, wait_b = a.wait[ia], b.wait[ib]
    bsld_a = bounded_slowdown(wait_a, (a.end - a.start)[ia])
    bsld_b = bounded_slowdown(wait_b, (b.end - b.start)[ib])
    fig = Figure(figsize=(width, width * 0.78), dpi=dpi, layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[1.5, 1.0])
    ax_wait, ax_bsld = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    ax_queue = fig.add_subplot(grid[1, :])
    floor = 1.0 / 60.0
    for ax, va, vb, what in (
        (ax_wait, np.maximum(wait_a / 60.0, floor), np.maximum(wait_b / 60.0, floor), "wait [min]"),
        (ax_bsld, bsld_a, bsld_b, "bounded slowdown"),
    ):
        ax.scatter(va, vb, s=4, alpha=0.35, color="C0", linewidths=0, rasterized=True)
        top = float(max(va.max(), vb.max())) * 1.5
        bottom = float(min(va.min(), vb.min())) / 1.5
        ax.plot([bottom, top], [bottom, top], color="0.3", linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(bottom, top)
        ax.set_ylim(bottom, top)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{what} under {la}", fontsize=9)
        ax.set_ylabel(f"{what} under {lb}", fontsize=9)
        better, worse = int((vb < va).sum()), int((vb > va).sum())
        ax.set_title(
            f"{lb} lower for {better:,} jobs, higher for {worse:,}, equal for {len(va) - better - worse:,}",
            fontsize=9,
        )
        ax.grid(alpha=0.3, which="major", linewidth=0.5)
        ax.tick_params(labelsize=8)
    ax_wait.text(
        0.02,
        0.98,
        "waits under 1 s drawn at 1 s",
        transform=ax_wait.transAxes,
        fontsize=7,
        va="top",
        color="0.3",
    )
    t0 = float(min(a.submit.min(), b.submit.min()))
    span = float(np.nanmax(np.concatenate([a.end, b.end, a.submit, b.submit]))) - t0
    unit, scale = _unit(span)
    for table, label, colour in ((a, la, "C0"), (b, lb, "C1")):
        times, length = queue_length_series(table.submit, table.start)
        ax_queue.step(
            (np.concatenate([[t0], times]) - t0) / scale,
            np.concatenate([[0.0], length]),
            where="post",
            color=colour,
            linewidth=0.8,
            label=label,
        )
    ax_queue.set_xlim(0, span / scale)
    ax_queue.set_ylim(bottom=0)
    ax_queue.set_xlabel(f"time since the first submission [{unit}]", fontsize=9)
    ax_queue.set_ylabel("waiting jobs", fontsize=9)
    ax_queue.legend(fontsize=8, frameon=False, loc="upper right")
    ax_queue.grid(alpha=0.3, linewidth=0.5)
    ax_queue.tick_params(labelsize=8)
    fig.suptitle(title or f"{lb} against {la}: {len(ia):,} jobs", fontsize=10)
    return fig


def _match(
    a: ScheduleTable, b: ScheduleTable, la: str, lb: str, notes: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``a`` and ``b`` of the jobs both ran, in ``a``'s order."""
    for t, label in ((a, la), (b, lb)):
        ids, counts = np.unique(t.job_id, return_counts=True)
        if (counts > 1).any():
            raise InvalidConfigError(
                f"{label} ({t.source}): job id {int(ids[np.argmax(counts > 1)])} appears "
                f"{int(counts.max())} times: jobs are matched by id, which must be unique"
            )
    common, ia, ib = np.intersect1d(a.job_id, b.job_id, assume_unique=True, return_indices=True)
    if len(common) == 0:
        raise InvalidConfigError(
            f"{la} ({a.source}) and {lb} ({b.source}) have no job id in common: compare two schedules "
            "of the same jobs"
        )
    only_a, only_b = len(a) - len(common), len(b) - len(common)
    if only_a or only_b:
        notes.append(
            f"{len(common):,} jobs in both schedules; left out: {only_a:,} only in {la}, "
            f"{only_b:,} only in {lb}"
        )
    both = a.ran[ia] & b.ran[ib]
    if not both.all():
        notes.append(f"left out: {int((~both).sum()):,} jobs that did not run in both schedules")
    if not both.any():
        raise InvalidConfigError(f"{la} and {lb}: no job ran in both schedules")
    order = np.argsort(ia[both], kind="stable")
    return ia[both][order], ib[both][order]


# ---------------------------------------------------------------- files
def write_figure(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` atomically: a temporary file in the same folder, renamed into place.

    A reader never sees a half-written picture, and a failure leaves any earlier file as it was.
    """
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=p.suffix, dir=p.parent if str(p.parent) else ".")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's file is private; a picture is not
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format=p.suffix.lower().lstrip("."), dpi=fig.dpi)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def plot_schedule_file(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    machine: str | os.PathLike[str] | None = None,
    procs: int | None = None,
    node_size: int | None = None,
    trace: str | os.PathLike[str] | None = None,
    workload: str | os.PathLike[str] | None = None,
    **figure: Any,
) -> list[str]:
    """Read a schedule file, draw it (:func:`schedule_figure`) and write the picture to ``out``.

    Args:
        path: a schedule file (:func:`~hpcgym.sim.schedule_file.read_schedule`).
        out: the picture (``.png``, ``.svg`` or ``.pdf``).
        machine, procs, node_size: the machine (:func:`schedule_machine`).
        trace, workload: the SWF trace (a path or a catalogue name, which
            :func:`~hpcgym.workloads.read_swf` resolves) or job table the schedule was simulated
            from: its users and queues colour the jobs, and its machine is drawn unless one is given.
        figure: :func:`schedule_figure`'s keywords (``view``, ``color_by``, ``window``, ...).

    Returns:
        Notes on what was guessed or left out, for the caller to print.
    """
    from hpcgym.workloads import read_jobs, read_swf

    check_picture_path(out)
    if trace is not None and workload is not None:
        raise InvalidConfigError(f"--trace {trace} and --workload {workload}: give one")
    table = read_schedule(path)
    notes: list[str] = []
    source = None
    if trace is not None or workload is not None:
        w = read_swf(trace) if trace is not None else read_jobs(workload, machine)  # type: ignore[arg-type]
        source = w
        table = table.with_labels_from(
            w, f"--trace {trace}" if trace is not None else f"--workload {workload}"
        )
    m, note = schedule_machine(table, machine, procs=procs, node_size=node_size, workload=source)
    if note:
        notes.append(note)
    write_figure(schedule_figure(table, m, notes=notes, **figure), out)
    return notes


def plot_run(schedule: Schedule, out: str | os.PathLike[str], **figure: Any) -> list[str]:
    """Draw a simulated schedule with its users on its machine (:func:`schedule_figure`) into ``out``.

    Returns the notes. ``figure``: :func:`schedule_figure`'s keywords.
    """
    check_picture_path(out, "--plot")
    table = ScheduleTable.from_schedule(schedule)
    machine = schedule.machine or Machine.processors(int(schedule.workload.procs))
    notes: list[str] = []
    write_figure(schedule_figure(table, machine, notes=notes, **figure), out)
    return notes


def plot_comparison_files(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    **figure: Any,
) -> list[str]:
    """Read two schedule files of the same jobs, draw :func:`comparison_figure` and write it to ``out``.

    ``labels`` default to the file names without their suffix. Returns the notes.
    """
    check_picture_path(out)
    ta, tb = read_schedule(a), read_schedule(b)
    if labels is None:
        labels = (Path(a).stem, Path(b).stem)
        if labels[0] == labels[1]:
            labels = (str(a), str(b))
    notes: list[str] = []
    write_figure(comparison_figure(ta, tb, labels=labels, notes=notes, **figure), out)
    return notes
