"""The ``hpcgym`` command: in-process through ``main`` (fast) and once as ``python -m hpcgym``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from hpcgym.baselines import policy_specs
from hpcgym.cli import main
from hpcgym.predictors import predictor_names
from hpcgym.runner import run_policy
from hpcgym.workload import load_default, read_swf

REQUIRED_KEYS = {
    "trace",
    "policy",
    "predictor",
    "procs",
    "jobs_read",
    "jobs_simulated",
    "jobs_dropped",
    "mean_wait_s",
    "mean_slowdown",
    "mean_bsld",
    "utilization",
    "makespan_s",
    "sim_seconds",
    "jobs_per_second",
}


def _reject_constant(name: str) -> None:
    raise AssertionError(f"not strict JSON: {name}")


def strict_json(text: str) -> dict:
    return json.loads(text, parse_constant=_reject_constant)


def simulate_json(capsys, *args: str) -> dict:
    assert main(["simulate", "--json", "--no-progress", *args]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "--json prints exactly one line"
    return strict_json(out)


def test_simulate_json_on_the_bundled_trace(capsys):
    row = simulate_json(capsys)
    assert REQUIRED_KEYS <= row.keys()
    assert (row["policy"], row["predictor"], row["procs"]) == ("easy", "walltime", 128)
    assert (row["jobs_read"], row["jobs_simulated"], row["jobs_dropped"]) == (10_000, 8_943, 1_057)
    assert row["trace"] == "SDSC-SP2-1998-4.2-cln-first10k"
    assert 0 < row["utilization"] <= 1
    assert row["mean_bsld"] >= 1 and row["mean_slowdown"] >= 1 and row["mean_wait_s"] >= 0
    # the CLI reports what the library computes
    expected = run_policy(load_default(), "easy").row
    for key in ("mean_wait_s", "mean_bsld", "utilization", "makespan_s", "jobs_measured"):
        assert row[key] == pytest.approx(expected[key]), key


def test_metrics_over_no_jobs_are_null_not_nan(capsys):
    row = simulate_json(capsys, "--jobs", "5")  # 5 jobs all end after the last arrival
    assert row["jobs_measured"] == 0
    assert row["mean_wait_s"] is None and row["classes"]["long"]["mean_bsld"] is None


def test_compare_json_is_strict_too(capsys):
    # 5 jobs all ending after the last arrival: 004's rule measures none, so the averages
    # are NaN in the library and null here
    argv = ["compare", "--jobs", "5", "--policies", "fcfs,easy", "--measure", "steady-state", "--json"]
    assert main(argv) == 0
    rows = strict_json(capsys.readouterr().out)
    assert [r["policy"] for r in rows] == ["fcfs", "easy"]
    assert all(r["mean_wait_s"] is None for r in rows)


@pytest.mark.parametrize(
    ("given", "name"), [("W", "walltime"), ("w", "walltime"), ("R", "real"), ("oracle", "real")]
)
def test_predictor_aliases(capsys, given, name):
    assert simulate_json(capsys, "--jobs", "300", "--predictor", given)["predictor"] == name


def test_real_runtimes_change_the_schedule(capsys):
    w = simulate_json(capsys, "--jobs", "2000", "--predictor", "W")
    r = simulate_json(capsys, "--jobs", "2000", "--predictor", "R")
    assert w["mean_wait_s"] != r["mean_wait_s"]


def test_jobs_offset_load_procs(capsys):
    row = simulate_json(capsys, "--jobs", "400", "--offset", "100", "--load", "1.5", "--procs", "64")
    assert row["jobs_simulated"] == 400 and row["offset"] == 100
    assert row["load_factor"] == 1.5 and row["procs"] == 64
    report = read_swf(load_default().report.path, procs=64).report
    assert row["jobs_dropped"] == report.jobs_dropped > 1_057  # jobs over 64 procs dropped too
    expected = run_policy(read_swf(report.path, procs=64).window(400, 100).scale_load(1.5), "easy").row
    assert row["mean_wait_s"] == pytest.approx(expected["mean_wait_s"])


@pytest.mark.parametrize("policy", sorted(policy_specs()))
def test_every_policy_runs_from_the_command_line(capsys, policy):
    row = simulate_json(capsys, "--jobs", "150", "--policy", policy)
    assert row["policy"] == policy and row["jobs_simulated"] == 150


def test_table_output_and_load_report(capsys):
    assert main(["simulate", "--jobs", "200", "--policy", "fcfs", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "fcfs" in out and "bsld" in out
    assert "10000 job lines" in err and "dropped 1057" in err


def test_a_malformed_trace_exits_2_naming_file_and_line(capsys, tmp_path):
    path = tmp_path / "bad.swf"
    good = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
    path.write_text(f"; MaxProcs: 8\n{good}\n; comment\n1 5 5 x 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n")
    assert main(["simulate", "--trace", str(path), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("hpcgym: error: ") and f"{path}:4:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace", "no/such/file.swf"], "No such file"),
        (["--policy", "no-such-policy"], "unknown policy"),
        (["--predictor", "no-such-predictor"], "unknown predictor"),
        (["--jobs", "0"], "jobs must be > 0"),
        (["--load", "0"], "load factor"),
        (["--procs", "0"], "procs must be positive"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(capsys, args, message):
    assert main(["simulate", "--no-progress", *args]) == 2
    assert message in capsys.readouterr().err


def test_unreadable_paths_exit_2_with_a_message(capsys, tmp_path):
    assert main(["simulate", "--trace", str(tmp_path)]) == 2  # a directory
    assert "Is a directory" in capsys.readouterr().err
    out = tmp_path / "no" / "such" / "dir" / "s.csv"
    assert main(["simulate", "--jobs", "50", "--no-progress", "--schedule-out", str(out)]) == 2
    assert "No such file" in capsys.readouterr().err


def test_policies_lists_every_preset(capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    for name in policy_specs():
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert main(["policies", "--json"]) == 0
    assert set(strict_json(capsys.readouterr().out)) == set(policy_specs())


def test_predictors_lists_every_predictor_with_aliases(capsys):
    assert main(["predictors"]) == 0
    out = capsys.readouterr().out
    for name in predictor_names():
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert "W" in out and "R" in out
    assert main(["predictors", "--json"]) == 0
    listed = strict_json(capsys.readouterr().out)
    assert set(listed) == set(predictor_names())
    assert "W" in listed["walltime"]["aliases"] and "R" in listed["real"]["aliases"]


def test_schedule_out_csv(capsys, tmp_path):
    path = tmp_path / "schedule.csv"
    row = simulate_json(capsys, "--jobs", "300", "--schedule-out", str(path))
    with open(path, newline="") as fh:
        records = list(csv.DictReader(fh))
    assert list(records[0]) == ["job_id", "submit", "start", "end", "procs", "estimate", "wait"]
    assert len(records) == row["jobs_simulated"] == 300
    expected = run_policy(load_default().window(300), "easy").schedule
    np.testing.assert_array_equal([float(r["start"]) for r in records], expected.start)
    np.testing.assert_array_equal([float(r["wait"]) for r in records], expected.wait)
    np.testing.assert_array_equal([int(r["job_id"]) for r in records], expected.workload.job_id)


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_schedule_out_swf(capsys, tmp_path, suffix):
    path = tmp_path / f"schedule{suffix}"
    simulate_json(capsys, "--jobs", "300", "--policy", "sjf-list", "--schedule-out", str(path))
    back = read_swf(path)
    expected = run_policy(load_default().window(300), "sjf-list").schedule
    assert len(back) == 300 and back.procs == 128
    np.testing.assert_array_equal(back.log_wait, expected.wait)  # field 3 is the simulated wait
    np.testing.assert_array_equal(back.runtime, expected.workload.runtime)


def test_python_dash_m_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "hpcgym", "simulate", "--json", "--jobs", "200", "--predictor", "R"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    row = strict_json(proc.stdout)
    assert REQUIRED_KEYS <= row.keys()
    assert (row["jobs_simulated"], row["predictor"]) == (200, "real")
