"""Pictures of a schedule: reading schedule files, the processor packing, the figures, the pixels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcgym.common.errors import InvalidConfigError, TraceFormatError
from hpcgym.machine import Machine
from hpcgym.sim import (
    ScheduleTable,
    comparison_figure,
    pack_processors,
    plot_schedule_file,
    queue_length_series,
    read_schedule,
    schedule_figure,
    schedule_machine,
    write_figure,
)
from hpcgym.sim.gantt import busy_series, occupancy, row_edges
from hpcgym.sim.pictures import job_colours, lighter

pytest.importorskip("matplotlib")
import itertools

from matplotlib import colormaps
from matplotlib.collections import PolyCollection, QuadMesh
from matplotlib.image import imread
from matplotlib.patches import StepPatch

ROOT = Path(__file__).resolve().parents[2]
HEADER = "job_id,submit,start,end,procs,estimate,wait,nodes"
SMALL = {"width": 4.0, "dpi": 40.0}


def make_table(rows, users=None, nodes=None, source="t.csv") -> ScheduleTable:
    """A table from ``(job_id, submit, start, end, procs)`` rows (all on node 0 unless ``nodes``)."""
    a = np.array(rows, dtype=np.float64)
    n = len(a)
    placed = nodes if nodes is not None else [[0]] * n
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in placed])]).astype(np.int64)
    return ScheduleTable(
        source=source,
        job_id=a[:, 0].astype(np.int64),
        submit=a[:, 1],
        start=a[:, 2],
        end=a[:, 3],
        procs=a[:, 4].astype(np.int64),
        node_ptr=ptr,
        node=np.array([x for p in placed for x in p], dtype=np.int64),
        user=None if users is None else np.array(users, dtype=object),
    )


# J1 holds rows 0-2 until 60, J3 row 3 until 30; J2 (4 processors) waits from 10 to 60,
# its band visible on row 3 from 30 on, and runs on every row until 100; 100-140 is idle.
KNOWN = make_table(
    [(1, 0, 0, 60, 3), (2, 10, 60, 100, 4), (3, 0, 0, 30, 1)],
    users=["ann", "bob", "cy"],
)


def write_csv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


# ---------------------------------------------------------------- schedule files
def test_a_simulated_schedule_reads_back_from_csv_and_json(tmp_path):
    from hpcgym.baselines import run_policy
    from hpcgym.sim import write_schedule
    from hpcgym.workloads import load_default

    schedule = run_policy(load_default().window(120), "easy", progress=False).schedule
    direct = ScheduleTable.from_schedule(schedule)
    assert direct.user is not None and direct.queue is not None
    for name in ("s.csv", "s.json"):
        write_schedule(tmp_path / name, schedule)
        back = read_schedule(tmp_path / name)
        for column in ("job_id", "submit", "start", "end", "procs", "node_ptr", "node"):
            np.testing.assert_array_equal(getattr(back, column), getattr(direct, column))
        assert back.user is None  # a schedule file has no users: with_labels_from gives them
        joined = back.with_labels_from(schedule.workload, "the trace")
        np.testing.assert_array_equal(joined.user, direct.user)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1,0,0,10,2,10,0,0", "2,0,x,10,2,10,0,0"], ":3: column start: 'x' is not a number"),
        (["1,0,0,10,0,10,0,0"], ":2: column procs: 0 is not a whole number >= 1"),
        (["1,5,0,10,2,10,0,0"], ":2: job 1 starts before it is submitted"),
        (["1,0,20,10,2,10,0,0"], ":2: job 1 ends before it starts"),
        (["1,0,0,10,2,10,0,0,9"], ":2: 9 values, the header has 8"),
        (["1,0,0,10,2,10,0,a;b"], ":2: column nodes: 'a;b' is not a list of node numbers"),
        ([], "no jobs"),
    ],
)
def test_a_bad_schedule_file_names_file_line_and_column(tmp_path, lines, message):
    path = write_csv(tmp_path / "s.csv", lines)
    with pytest.raises(TraceFormatError) as info:
        read_schedule(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_a_schedule_file_without_a_column_or_of_another_type_is_an_error(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("job_id,submit,start,procs\n1,0,0,2\n")
    with pytest.raises(TraceFormatError, match=r"s\.csv:1: no column end"):
        read_schedule(path)
    (tmp_path / "s.json").write_text(json.dumps({"job_id": 1}))
    with pytest.raises(TraceFormatError, match="a list of records"):
        read_schedule(tmp_path / "s.json")
    with pytest.raises(InvalidConfigError, match=r"\.csv or \.json"):
        read_schedule(tmp_path / "s.swf")


def test_labels_from_another_trace_are_an_error():
    from hpcgym.workloads import Workload

    w = Workload.from_columns([0, 0, 0], [60, 40, 30], [3, 4, 2], [100, 100, 100], procs=4)  # ids 1, 2, 3
    with pytest.raises(InvalidConfigError, match=r"job 3 asks for 2 processors there but 1 in t\.csv"):
        KNOWN.with_labels_from(w, "--trace x.swf")
    other = make_table([(9, 0, 0, 1, 1)])
    with pytest.raises(InvalidConfigError, match=r"--trace x\.swf: has no job 9"):
        other.with_labels_from(w, "--trace x.swf")


# ---------------------------------------------------------------- packing and series
def test_packing_gives_each_job_its_processors_and_no_row_twice_at_once():
    rng = np.random.default_rng(3)
    n, procs = 300, 16
    rows, busy_until = [], np.zeros(procs)
    t = 0.0
    for j in range(n):  # a greedy list schedule, so it fits the machine
        t += float(rng.exponential(5.0))
        p = int(rng.integers(1, procs + 1))
        start = max(t, float(np.sort(busy_until)[p - 1]))
        free = np.argsort(busy_until)[:p]
        run = float(rng.exponential(40.0))
        busy_until[free] = np.maximum(busy_until[free], start + run)
        rows.append((j + 1, t, start, start + run, p))
    table = make_table(rows)
    layout = pack_processors(table, Machine.processors(procs))
    width = np.bincount(layout.job, weights=layout.hi - layout.lo, minlength=n)
    np.testing.assert_array_equal(width, table.procs)
    for row in range(procs):  # the intervals of each row never overlap
        on = (layout.lo <= row) & (layout.hi > row)
        jobs = layout.job[on]
        spans = sorted(zip(table.start[jobs], table.end[jobs], strict=True))
        assert all(e0 <= s1 for (_, e0), (s1, _) in itertools.pairwise(spans))
    assert 0.0 < layout.contiguous_share <= 1.0


def test_packing_on_nodes_and_exclusive_nodes():
    two_nodes = Machine("m", ("cores",), np.array([[4], [2]]))
    t = make_table([(1, 0, 0, 10, 3), (2, 0, 0, 10, 2)], nodes=[[0], [1]])
    layout = pack_processors(t, two_nodes)
    assert layout.rows == 6 and layout.node_first.tolist() == [0, 4, 6]
    assert list(zip(layout.lo.tolist(), layout.hi.tolist(), strict=True)) == [(0, 3), (4, 6)]
    whole = pack_processors(
        make_table([(1, 0, 0, 10, 3)], nodes=[[1, 2]]), Machine.processors(12, node_size=4)
    )
    assert list(zip(whole.lo.tolist(), whole.hi.tolist(), strict=True)) == [(4, 8), (8, 12)]


def test_a_schedule_that_does_not_fit_the_machine_is_an_error():
    with pytest.raises(
        InvalidConfigError, match=r"t\.csv: job 2: at its start \(5 s\) node 0 has 1 of 4 processors free"
    ):
        pack_processors(make_table([(1, 0, 0, 10, 3), (2, 0, 5, 10, 2)]), Machine.processors(4))
    with pytest.raises(InvalidConfigError, match="runs on node 3, but machine 'procs4' has 1 node"):
        pack_processors(make_table([(1, 0, 0, 10, 3)], nodes=[[3]]), Machine.processors(4))


def test_series_and_occupancy_are_exact():
    times, length = queue_length_series(KNOWN.submit, KNOWN.start)
    assert times.tolist() == [0.0, 10.0, 60.0] and length.tolist() == [0.0, 1.0, 0.0]
    times, busy = busy_series(KNOWN)
    assert times.tolist() == [0.0, 30.0, 60.0, 100.0] and busy.tolist() == [4.0, 3.0, 4.0, 0.0]
    half = make_table([(1, 0, 0.5, 2.5, 2)])
    layout = pack_processors(half, Machine.processors(4))
    grid = occupancy(layout, half, np.array([0, 4]), np.array([0.0, 1.0, 2.0, 3.0]))
    np.testing.assert_allclose(grid, [[0.25, 0.5, 0.25]])
    layout = pack_processors(KNOWN, Machine.processors(4))
    edges = row_edges(layout, 2)
    grid = occupancy(layout, KNOWN, edges, np.linspace(0.0, 140.0, 15))
    held = (grid * np.diff(edges)[:, None] * 10.0).sum()  # processor-seconds
    assert held == pytest.approx(float(((KNOWN.end - KNOWN.start) * KNOWN.procs).sum()))


# ---------------------------------------------------------------- figures
def pixel(img: np.ndarray, ax, t: float, row: float, window: tuple[float, float]) -> np.ndarray:
    """The RGB of the saved picture at time ``t`` (seconds) and processor row ``row``."""
    x0, x1 = ax.get_xlim()
    x = x0 + (t - window[0]) / (window[1] - window[0]) * (x1 - x0)
    px, py = ax.transData.transform((x, row))
    return img[round(img.shape[0] - py), round(px), :3]


def test_the_gantt_chart_draws_each_job_where_the_schedule_says(tmp_path):
    fig = schedule_figure(
        KNOWN, Machine.processors(4), view="gantt", window=(0.0, 140.0), width=5.0, dpi=60.0
    )
    path = tmp_path / "g.png"
    write_figure(fig, path)
    img = imread(path)
    assert img.shape[:2] == (round(fig.get_figheight() * 60), 300)
    colour, _ = job_colours(KNOWN, "user")
    ax = fig.axes[0]

    def at(t, row):
        return pixel(img, ax, t, row, (0.0, 140.0))

    np.testing.assert_allclose(at(30, 1.5), colour[0, :3], atol=1.5 / 255)  # J1, rows 0-2
    np.testing.assert_allclose(at(15, 3.5), colour[2, :3], atol=1.5 / 255)  # J3, row 3
    np.testing.assert_allclose(at(45, 3.5), lighter(colour[[1]])[0, :3], atol=1.5 / 255)  # J2 waits
    np.testing.assert_allclose(at(80, 0.5), colour[1, :3], atol=1.5 / 255)  # J2 runs on every row
    np.testing.assert_allclose(at(80, 3.5), colour[1, :3], atol=1.5 / 255)
    np.testing.assert_allclose(
        at(130, 2.5), [1.0, 1.0, 1.0], atol=1.5 / 255
    )  # idle: background (off the grid)
    assert len({tuple(np.round(c[:3], 3)) for c in colour}) == 3


def test_too_many_jobs_become_a_heat_map(tmp_path):
    notes: list[str] = []
    fig = schedule_figure(
        KNOWN,
        Machine.processors(4),
        view="gantt",
        window=(0.0, 140.0),
        max_jobs=2,
        notes=notes,
        width=5.0,
        dpi=60.0,
    )
    ax = fig.axes[0]
    assert any(isinstance(c, QuadMesh) for c in ax.collections)
    assert not any(isinstance(c, PolyCollection) for c in ax.collections)
    assert any("heat map" in n for n in notes)
    path = tmp_path / "h.png"
    write_figure(fig, path)
    img = imread(path)
    busy, idle = pixel(img, ax, 80, 2.0, (0.0, 140.0)), pixel(img, ax, 130, 2.5, (0.0, 140.0))
    np.testing.assert_allclose(busy, colormaps["Blues"](1.0)[:3], atol=2 / 255)  # every processor busy
    np.testing.assert_allclose(idle, [1.0, 1.0, 1.0], atol=1.5 / 255)  # none: not drawn, the background
    notes.clear()
    fig = schedule_figure(KNOWN, Machine.processors(4), view="load", max_jobs=2, notes=notes, **SMALL)
    assert all(any(isinstance(p, StepPatch) for p in ax.patches) for ax in fig.axes)  # means per time bin
    assert "means (line) and maxima (shaded) over 400 time bins" in notes[0]


def test_views_svg_and_a_window(tmp_path):
    for view, panels in (("all", 3), ("load", 2)):
        fig = schedule_figure(KNOWN, Machine.processors(4), view=view, **SMALL)
        assert len([a for a in fig.axes if a.get_label() != "<colorbar>"]) == panels
    path = tmp_path / "s.svg"
    notes: list[str] = []
    fig = schedule_figure(
        KNOWN, Machine.processors(4), color_by="job", window=(30.0, 70.0), notes=notes, **SMALL
    )
    write_figure(fig, path)
    assert path.read_text().lstrip().startswith("<?xml") and "<svg" in path.read_text()[:2000]
    assert fig.axes[0].get_xlim() == pytest.approx((0.5, 70 / 60))  # minutes after the first submission
    with pytest.raises(InvalidConfigError, match="the window is empty"):
        schedule_figure(KNOWN, Machine.processors(4), window=(200.0, None), **SMALL)
    with pytest.raises(InvalidConfigError, match=r"--color-by queue: t\.csv has no queues"):
        schedule_figure(KNOWN, Machine.processors(4), color_by="queue", **SMALL)


def test_the_machine_is_given_guessed_or_asked_for():
    m, note = schedule_machine(KNOWN)
    assert m.total.tolist() == [4] and note is not None and "most ever busy at once" in note
    assert schedule_machine(KNOWN, "eurora")[0].n_nodes == 64
    assert schedule_machine(KNOWN, procs=8, node_size=4)[0].exclusive
    with pytest.raises(InvalidConfigError, match="jobs run on 3 nodes; give the machine"):
        schedule_machine(make_table([(1, 0, 0, 1, 1)], nodes=[[2]]))


def test_the_comparison_of_two_schedules(tmp_path):
    later = make_table([(1, 0, 0, 60, 3), (2, 10, 100, 140, 4), (4, 0, 0, 1, 1)])
    notes: list[str] = []
    fig = comparison_figure(KNOWN, later, labels=("easy", "fcfs"), notes=notes, **SMALL)
    wait_ax, bsld_ax, queue_ax = fig.axes
    assert wait_ax.get_xscale() == wait_ax.get_yscale() == bsld_ax.get_yscale() == "log"
    assert wait_ax.get_title() == "fcfs lower for 0 jobs, higher for 1, equal for 1"
    assert [line.get_label() for line in queue_ax.get_lines()] == ["easy", "fcfs"]
    assert notes == ["2 jobs in both schedules; left out: 1 only in easy, 1 only in fcfs"]
    write_figure(fig, tmp_path / "c.png")
    assert imread(tmp_path / "c.png").shape[1] == 160
    twice = make_table([(1, 0, 0, 1, 1), (1, 0, 0, 1, 1)])
    with pytest.raises(InvalidConfigError, match="job id 1 appears 2 times"):
        comparison_figure(KNOWN, twice)
    with pytest.raises(InvalidConfigError, match="no job id in common"):
        comparison_figure(KNOWN, make_table([(9, 0, 0, 1, 1)]))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "p.png"
    path.write_bytes(b"old")
    fig = schedule_figure(KNOWN, Machine.processors(4), view="load", **SMALL)

    def broken(fh, **kwargs):
        fh.write(b"half a picture")
        raise OSError("disk full")

    fig.savefig = broken  # type: ignore[method-assign]
    with pytest.raises(OSError, match="disk full"):
        write_figure(fig, path)
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["p.png"]


def test_plotting_leaves_the_backend_and_pyplot_alone(tmp_path):
    """A user plotting interactively keeps their backend: no matplotlib.use, no pyplot."""
    schedule = write_csv(tmp_path / "s.csv", ["1,0,0,60,3,60,0,0", "2,10,60,100,4,60,50,0"])
    out = tmp_path / "p.png"
    code = f"""
import sys, matplotlib
from hpcgym.sim import plot_schedule_file
plot_schedule_file({str(schedule)!r}, {str(out)!r}, procs=4, width=4.0, dpi=40.0)
print(matplotlib.rcParams._get("backend"), "matplotlib.pyplot" in sys.modules)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "svg"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.split() == ["svg", "False"]
    assert out.stat().st_size > 0 and oct(out.stat().st_mode & 0o777) != oct(0o600)


def test_plot_schedule_file_checks_the_picture_before_reading(tmp_path):
    with pytest.raises(InvalidConfigError, match=r"-o x\.gif: a picture is written as PNG, SVG or PDF"):
        plot_schedule_file(tmp_path / "missing.csv", "x.gif")
    with pytest.raises(InvalidConfigError, match="no such directory"):
        plot_schedule_file(tmp_path / "missing.csv", tmp_path / "no" / "x.png")
