"""``hpcgym compare``: one job set for every run, its tables, its input errors and its plot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hpcgym.baselines import SUMMARY_COLUMNS, format_table
from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.experiments.compare import _spans_decades, check_plot_path, compare
from hpcgym.sim import common_measured_jobs, measured_jobs, trimmed_mask
from hpcgym.workloads import load_default, read_swf

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundled():
    return load_default().window(1500, 2000)


# ------------------------------------------------------------- one job set
def test_every_run_is_averaged_over_the_same_trimmed_jobs(bundled):
    rows, schedules = compare(bundled, ["fcfs", "easy", "easy++"], [None])
    mask = trimmed_mask(bundled.submit)
    assert [r["jobs_measured"] for r in rows] == [int(mask.sum())] * 3 == [1470] * 3
    for r, s in zip(rows, schedules, strict=True):
        assert r["measured_set"] == "trimmed"
        assert r["mean_wait_s"] == pytest.approx(float(s.wait[mask].mean()), rel=1e-12)
        assert r["mean_wait_min"] == pytest.approx(r["mean_wait_s"] / 60)
        # the run's own 004 set is kept beside it, and differs from run to run
        assert r["jobs_measured_steady_state"] == int(measured_jobs(s).sum())
    assert len({r["jobs_measured_steady_state"] for r in rows}) > 1
    assert rows[0]["notes"][0].startswith("every run is averaged over the same 1,470 of 1,500 jobs (trimmed")


def test_steady_state_compare_takes_the_jobs_every_run_keeps(bundled):
    rows, schedules = compare(bundled, ["fcfs", "easy"], ["walltime", "real"], measure="steady-state")
    common = np.logical_and.reduce([measured_jobs(s) for s in schedules])
    own = [r["jobs_measured_steady_state"] for r in rows]
    assert common.sum() <= min(own) and common.sum() < max(own)  # some runs lose jobs to others' sets
    for r, s in zip(rows, schedules, strict=True):
        assert r["jobs_measured"] == int(common.sum())
        assert r["mean_bsld"] == pytest.approx(float(np.mean(r_bsld(s)[common])), rel=1e-12)
        assert r["prediction"]["accuracy"] <= 1
    every, _ = compare(bundled, ["fcfs"], [None], include_all=True)
    assert every[0]["jobs_measured"] == 1500 and every[0]["measured_set"] == "all"


def r_bsld(schedule):
    from hpcgym.sim import bounded_slowdown

    return bounded_slowdown(schedule.wait, schedule.end - schedule.start)


def test_lublin_fcfs_and_easy_pp_are_compared_on_one_set(traces_dir):
    """The case of issue 8: 004's rule alone averages FCFS over 5,964 jobs and EASY++ over 9,792."""
    w = read_swf(traces_dir / "lublin_256.swf.gz")
    rows, schedules = compare(w, ["fcfs", "easy++"], [None])
    assert [r["jobs_measured_steady_state"] for r in rows] == [5964, 9792]
    assert [r["jobs_measured"] for r in rows] == [9800, 9800]
    # FCFS's worst waits are the ones its own set left out: on the common set it looks worse
    own_fcfs = float(schedules[0].wait[measured_jobs(schedules[0])].mean())
    assert rows[0]["mean_wait_s"] > 1.5 * own_fcfs


def test_the_table_counts_the_jobs_and_says_which(capsys):
    assert main(["compare", "--jobs", "1500", "--offset", "2000", "--policies", "fcfs,easy"]) == 0
    out = capsys.readouterr().out
    header, _, fcfs, easy, *notes = out.splitlines()
    assert "measured" in header
    assert "1,470" in fcfs and "1,470" in easy
    assert notes[0].startswith("note: every run is averaged over the same 1,470 of 1,500 jobs (trimmed: ")


def test_five_jobs_say_why_instead_of_nan(capsys):
    assert main(["compare", "--jobs", "5", "--policies", "fcfs,easy"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert "note: only 5 jobs are measured: averages over so few jobs are noisy" in out
    assert main(["compare", "--jobs", "5", "--policies", "fcfs,easy", "--measure", "steady-state"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert "note: no job measured: all 5 jobs fall in the steady-state exclusion" in out
    assert "--include-all" in out


def test_simulate_says_why_it_has_no_average(capsys):
    assert main(["simulate", "--jobs", "5", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    assert "note: no job measured: all 5 jobs fall in the steady-state exclusion" in out


# ------------------------------------------------------------------ tables
def test_format_table_aligns_formats_and_notes():
    rows = [
        {"policy": "fcfs", "jobs": 12345, "bsld": 2.345, "notes": ["a note"]},
        {"policy": "easy++", "jobs": 7, "bsld": float("nan"), "notes": ["a note", "another"]},
    ]
    cols = [("policy", "policy", ""), ("jobs", "jobs", ",d"), ("bsld", "bsld", ".2f")]
    text = format_table(rows, cols, notes=["last"])
    assert text.splitlines() == [
        "policy      jobs    bsld",
        "--------  ------  ------",
        "fcfs      12,345    2.35",
        "easy++         7       -",
        "note: a note",
        "note: another",
        "note: last",
    ]
    header = format_table([], SUMMARY_COLUMNS).splitlines()[0]
    assert header.split()[:3] == ["policy", "predictor", "measured"]


# -------------------------------------------------------------- input errors
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policies", ""], "--policies: no policy given; give a comma-separated list of fcfs, "),
        (["--policies", " , "], "--policies: no policy given"),
        (["--predictors", ""], "--predictors: no predictor given"),
        (["--policies", "fcfs,nosuch"], "unknown policy 'nosuch'; known policies: fcfs, "),
        (["--predictors", "walltime,nosuch"], "unknown predictor 'nosuch'; known predictors: "),
        (["--plot", "out.txt"], "--plot out.txt: the plot is written as PNG, PDF or SVG; "),
    ],
)
def test_bad_input_exits_2_before_anything_runs(capsys, tmp_path, argv, message):
    argv = [a.replace("out.txt", str(tmp_path / "out.txt")) for a in argv]
    message = message.replace("out.txt", str(tmp_path / "out.txt"))
    assert main(["compare", "--jobs", "50", *argv]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("hpcgym: error: ") and message in err
    assert out == "" and "preset ..." not in err and "job lines" not in err  # nothing was read or run
    assert not (tmp_path / "out.txt").exists()


def test_the_plot_suffixes_are_named():
    with pytest.raises(InvalidConfigError, match=r"must end in \.png, \.pdf, \.svg"):
        check_plot_path(Path("out.txt"))
    for name in ("a.png", "a.PDF", "a.svg"):
        check_plot_path(Path(name))
    with pytest.raises(UnknownNameError):
        compare(load_default().window(20), ["nosuch"], [None])


def test_missing_matplotlib_is_reported_before_the_run(capsys, monkeypatch, tmp_path):
    import hpcgym.common.extras

    real = hpcgym.common.extras.is_available
    monkeypatch.setattr(
        hpcgym.common.extras, "is_available", lambda name: name != "matplotlib" and real(name)
    )
    assert main(["compare", "--jobs", "50", "--plot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "needs matplotlib, which is not installed: pip install 'hpcgym[plot]'" in err
    assert "Traceback" not in err
    assert "preset ..." not in err


def test_the_command_prints_no_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "hpcgym", "compare", "--plot", str(tmp_path / "out.txt")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "must end in .png, .pdf, .svg" in proc.stderr


# -------------------------------------------------------------------- plots
def test_log_scale_only_when_values_span_decades():
    assert _spans_decades([40_000.0, 13_000.0, 830.0])
    assert not _spans_decades([590.0, 65.0, 126.0])
    assert not _spans_decades([0.0, 10.0, 5000.0])  # a zero has no place on a log axis
    assert not _spans_decades([float("nan"), 3.0])


def test_comparison_figure_groups_policies_and_draws_ecdfs(bundled):
    pytest.importorskip("matplotlib")
    from hpcgym.experiments.compare import comparison_figure

    rows, schedules = compare(bundled, ["fcfs", "sjf-list", "easy"], ["walltime", "real"])
    mask = common_measured_jobs(schedules)
    fig = comparison_figure(rows, schedules, "t", measured=mask)
    ax_wait, ax_bsld, ax_wait_cdf, ax_bsld_cdf = fig.axes
    assert [t.get_text() for t in ax_wait.get_xticklabels()] == ["fcfs", "sjf-list", "easy"]
    centres = sorted(p.get_x() + p.get_width() / 2 for p in ax_wait.patches)
    assert len(centres) == 6
    # two bars per policy, side by side around the policy's tick
    pairs = zip(centres[::2], centres[1::2], strict=True)
    np.testing.assert_allclose([(a + b) / 2 for a, b in pairs], [0, 1, 2])
    assert [t.get_text() for t in ax_wait.get_legend().get_texts()] == ["walltime", "real"]
    assert ax_bsld.get_yscale() == ("log" if _spans_decades([r["mean_bsld"] for r in rows]) else "linear")
    # one ECDF per run over the measured jobs, ending at 1
    assert len(ax_wait_cdf.lines) == len(ax_bsld_cdf.lines) == 6
    x, y = ax_bsld_cdf.lines[0].get_data()
    assert y[-1] == pytest.approx(1.0) and len(x) == int(mask.sum()) + 1
    assert ax_bsld_cdf.get_xscale() == "log" and ax_wait_cdf.get_xscale() == "symlog"
    w, h = fig.get_size_inches()
    assert w * 100 <= 1200 and h * 100 <= 900  # readable at 100 % zoom, not a banner


def test_log_axis_for_heavy_tailed_bsld(bundled):
    pytest.importorskip("matplotlib")
    from hpcgym.experiments.compare import comparison_figure

    rows, schedules = compare(bundled, ["fcfs", "easy"], [None])
    rows = [{**rows[0], "mean_bsld": 40_000.0}, {**rows[1], "mean_bsld": 800.0}]
    fig = comparison_figure(rows, schedules, "t")
    assert fig.axes[1].get_yscale() == "log" and fig.axes[0].get_yscale() == "linear"


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_compare_writes_every_plot_format(tmp_path, capsys, suffix):
    pytest.importorskip("matplotlib")
    out = tmp_path / f"c{suffix}"
    assert main(["compare", "--jobs", "400", "--policies", "fcfs,easy", "--plot", str(out)]) == 0
    magic = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}[suffix]
    assert out.read_bytes().startswith(magic)


def test_plotting_leaves_the_backend_and_pyplot_alone(tmp_path):
    """A user plotting interactively keeps their backend: no matplotlib.use, no pyplot."""
    pytest.importorskip("matplotlib")
    code = f"""
import sys, matplotlib
from hpcgym.experiments.compare import compare, plot
from hpcgym.studies.tsafrir2007 import plot_tsafrir2007, run_tsafrir2007
from hpcgym.workloads import load_default
w = load_default().window(300)
rows, schedules = compare(w, ["fcfs", "easy"], [None])
plot({str(tmp_path / "c.png")!r}, rows, schedules, "t")
plot_tsafrir2007(run_tsafrir2007(w), {str(tmp_path / "r.png")!r})
print(matplotlib.rcParams._get("backend"), "matplotlib.pyplot" in sys.modules)
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "svg"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert proc.stdout.split() == ["svg", "False"]
    assert (tmp_path / "c.png").exists() and (tmp_path / "r.png").exists()
