"""``hpcgym plot`` and ``hpcgym simulate --plot``, in-process through ``main``."""

from __future__ import annotations

import re

import pytest

from hpcgym.cli import main
from hpcgym.cli import plot as plot_cli
from hpcgym.sim import pictures
from hpcgym.workloads import default_trace_path

pytest.importorskip("matplotlib")
from matplotlib.image import imread


def test_the_cli_choices_are_the_library_s():
    assert plot_cli.VIEWS == pictures.VIEWS and plot_cli.COLOR_BY == pictures.COLOR_BY
    assert plot_cli.MAX_GANTT_JOBS == pictures.MAX_GANTT_JOBS


@pytest.fixture(scope="module")
def schedules(tmp_path_factory):
    """Schedule files of the first 150 jobs of the bundled trace under EASY and FCFS."""
    folder = tmp_path_factory.mktemp("schedules")
    for policy in ("easy", "fcfs"):
        argv = ["simulate", "--jobs", "150", "--policy", policy, "--no-progress", "--json"]
        assert main([*argv, "--schedule-out", str(folder / f"{policy}.csv")]) == 0
    return folder


def test_plot_a_schedule_with_the_users_of_its_trace(schedules, tmp_path, capsys):
    out = tmp_path / "g.png"
    argv = ["plot", str(schedules / "easy.csv"), "--trace", str(default_trace_path()), "--dpi", "30"]
    assert main([*argv, "--view", "gantt", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"wrote {out}" in err and "has no users" not in err
    assert imread(out).shape[1] == 300  # 10 inches at 30 dpi
    capsys.readouterr()
    svg = tmp_path / "l.svg"
    assert main(["plot", str(schedules / "easy.csv"), "--view", "load", "--to", "1d", "-o", str(svg)]) == 0
    err = capsys.readouterr().err
    assert "one colour per job" in err and "machine size not given" in err
    assert "<svg" in svg.read_text()[:2000]


def test_plot_compare_two_policies(schedules, tmp_path, capsys):
    out = tmp_path / "c.png"
    argv = ["plot", "--compare", str(schedules / "fcfs.csv"), str(schedules / "easy.csv"), "--dpi", "30"]
    assert main([*argv, "--labels", "FCFS,EASY", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err and out.stat().st_size > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plot", "-o", "x.png"], "give one schedule file, or --compare A B"),
        (["plot", "a.csv", "--compare", "a.csv", "b.csv", "-o", "x.png"], "give one schedule file"),
        (["plot", "a.csv", "-o", "x.gif"], "-o x.gif: a picture is written as PNG, SVG or PDF"),
        (
            ["plot", "--compare", "a.csv", "b.csv", "--machine", "eurora", "-o", "x.png"],
            "--machine: for a single",
        ),
        (
            ["plot", "a.csv", "--labels", "a,b", "-o", "x.png"],
            "--labels names the two schedules of --compare",
        ),
        (["plot", "a.csv", "--from", "soon", "-o", "x.png"], "--from: 'soon' is not a time"),
        (["simulate", "--jobs", "20", "--plot", "x.jpg"], "--plot x.jpg: a picture is written as PNG"),
    ],
)
def test_plot_usage_errors_come_before_any_work(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("job_id,submit,start,end,procs\n1,0,0,10,1\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and message in err and "Traceback" not in err
    assert "job lines" not in err  # simulate read no trace


def test_plot_errors_of_the_schedule(schedules, tmp_path, capsys):
    out = str(tmp_path / "x.png")
    assert main(["plot", str(schedules / "easy.csv"), "--color-by", "queue", "-o", out]) == 2
    assert "--color-by queue:" in capsys.readouterr().err
    assert main(["plot", str(schedules / "easy.csv"), "--procs", "16", "-o", out]) == 2
    assert re.search(
        r"easy\.csv:\d+ \(job \d+\): \d+ processors on node 0, which has 16", capsys.readouterr().err
    )
    assert main(["plot", str(tmp_path / "none.csv"), "-o", out]) == 2
    assert "none.csv" in capsys.readouterr().err


def test_simulate_plot_draws_the_run_and_keeps_its_output(tmp_path, capsys):
    argv = ["simulate", "--jobs", "100", "--no-progress", "--json"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    out = tmp_path / "s.png"
    assert main([*argv, "--plot", str(out), "--plot-view", "load"]) == 0
    captured = capsys.readouterr()
    assert f"wrote {out}" in captured.err and out.stat().st_size > 0

    def without_timing(text: str) -> str:
        return "".join(line for line in text.splitlines() if "second" not in line)

    assert without_timing(captured.out) == without_timing(plain)
