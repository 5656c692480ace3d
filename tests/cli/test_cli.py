"""The ``hpcgym`` command: in-process through ``main`` (fast) and once as ``python -m hpcgym``."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import CP_PRESETS, quick

from hpcgym.baselines import policy_specs, run_policy
from hpcgym.cli import main
from hpcgym.predict import predictor_names
from hpcgym.workloads import load_default, read_swf

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


@pytest.mark.parametrize("policy", [quick(p) for p in sorted(policy_specs())])
def test_every_policy_runs_from_the_command_line(capsys, policy):
    jobs = "40" if policy.split(":")[0] in CP_PRESETS else "150"  # a CP decision is a solver call
    row = simulate_json(capsys, "--jobs", jobs, "--policy", policy)
    assert row["policy"] == policy and row["jobs_simulated"] == int(jobs)


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
        (["--procs", str(10**30)], "procs must be at most 1,000,000,000"),
        (
            ["--predictor", "user-avg:k=abc"],
            "predictor 'user-avg:k=abc': user-avg: k must be a positive integer",
        ),
        (["--predictor", "user-avg:j=1"], "unknown parameter 'j' (user-avg takes k, window, full, order)"),
        (["--predictor", "user-avg:k=-1"], "k must be a positive integer"),
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
    err = capsys.readouterr().err
    assert f"--schedule-out {out}: no such directory: {out.parent}" in err
    assert "job lines" not in err, "checked before the trace is read and simulated"


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
    assert list(records[0]) == ["job_id", "submit", "start", "end", "procs", "estimate", "wait", "nodes"]
    assert {r["nodes"] for r in records} == {"0"}  # one node: every job runs on node 0
    assert len(records) == row["jobs_simulated"] == 300
    expected = run_policy(load_default().window(300), "easy").schedule
    np.testing.assert_array_equal([float(r["start"]) for r in records], expected.start)
    np.testing.assert_array_equal([float(r["wait"]) for r in records], expected.wait)
    np.testing.assert_array_equal([int(r["job_id"]) for r in records], expected.workload.job_id)


def test_schedule_out_csv_is_written_in_blocks_with_the_same_bytes(capsys, tmp_path, monkeypatch):
    import hpcgym.sim.schedule_file as schedule_file

    argv = ("--jobs", "200", "--node-size", "8", "--schedule-out")
    simulate_json(capsys, *argv, str(tmp_path / "whole.csv"))
    simulate_json(capsys, *argv, str(tmp_path / "s.json"))
    monkeypatch.setattr(schedule_file, "_CSV_ROWS", 7)  # blocks end everywhere, mid-file
    simulate_json(capsys, *argv, str(tmp_path / "blocks.csv"))
    text = (tmp_path / "blocks.csv").read_text()
    assert text == (tmp_path / "whole.csv").read_text()
    # no temporary file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocks.csv", "s.json", "whole.csv"]
    nodes = [line.rsplit(",", 1)[1] for line in text.splitlines()[1:]]
    assert nodes == [";".join(map(str, r["nodes"])) for r in strict_json((tmp_path / "s.json").read_text())]
    assert any(";" in at for at in nodes)  # jobs of several nodes


@pytest.mark.parametrize("suffix", [".swf", ".swf.gz"])
def test_schedule_out_swf(capsys, tmp_path, suffix):
    path = tmp_path / f"schedule{suffix}"
    simulate_json(capsys, "--jobs", "300", "--policy", "sjf-list", "--schedule-out", str(path))
    back = read_swf(path)
    expected = run_policy(load_default().window(300), "sjf-list").schedule
    assert len(back) == 300 and back.procs == 128
    np.testing.assert_array_equal(back.log_wait, expected.wait)  # field 3 is the simulated wait
    np.testing.assert_array_equal(back.runtime, expected.workload.runtime)


def test_schedule_out_json_records(capsys, tmp_path):
    path = tmp_path / "schedule.json"
    simulate_json(capsys, "--jobs", "300", "--schedule-out", str(path))
    records = strict_json(path.read_text())
    assert len(records) == 300
    assert list(records[0]) == ["job_id", "submit", "start", "end", "procs", "estimate", "wait", "nodes"]
    assert all(r["nodes"] == [0] for r in records)
    expected = run_policy(load_default().window(300), "easy").schedule
    np.testing.assert_array_equal([r["start"] for r in records], expected.start)
    np.testing.assert_array_equal([r["job_id"] for r in records], expected.workload.job_id)
    assert all(isinstance(r["job_id"], int) and isinstance(r["procs"], int) for r in records)


@pytest.mark.parametrize("name", ["x.png", "x.txt", "x", "x.json.gz", "x.csv.bak"])
def test_schedule_out_with_an_unknown_suffix_is_an_error_before_the_run(capsys, tmp_path, name):
    # .json and .png used to be written silently as CSV
    path = tmp_path / name
    assert main(["simulate", "--jobs", "50", "--no-progress", "--schedule-out", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hpcgym: error: --schedule-out {path}: unknown file type")
    assert "use one of .csv, .json, .swf, .swf.gz" in err
    assert "job lines" not in err and not path.exists()


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE)
    assert version is not None
    assert capsys.readouterr().out.strip() == f"hpcgym {version.group(1)}"


def test_json_keeps_the_load_report(capsys):
    row = simulate_json(capsys, "--jobs", "300", "--offset", "10")
    report = row["load_report"]
    assert report["job_lines"] == 10_000 and report["jobs_kept"] == 300 and report["offset"] == 10
    assert report["dropped"] == {"runtime < 0 (cancelled before start)": 1_057}
    assert report["procs"] == 128 and report["procs_source"] == "MaxProcs"
    assert report["default_estimate"] > 0 and report["default_estimate_source"]
    assert report["notes"] == [] and report["warnings"] == []


def test_the_load_report_is_printed_with_json_too(capsys):
    assert main(["simulate", "--json", "--jobs", "100", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and "10000 job lines" in err


def _trace_without_estimates(tmp_path):
    lines = ["; MaxProcs: 8"]
    for i in range(40):
        part = 1 + i % 2
        lines.append(f"{i + 1} {10 * i} -1 {30 + i} 2 -1 -1 2 -1 -1 1 {1 + i % 3} 1 1 1 {part} -1 -1")
    path = tmp_path / "parts.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_default_estimate_is_settable_and_reported(capsys, tmp_path):
    path = _trace_without_estimates(tmp_path)
    assert main(["simulate", "--trace", str(path), "--no-progress", "--default-estimate", "3600"]) == 0
    err = capsys.readouterr().err
    assert "40 jobs had no estimate and got the default 3,600 s (1.0 h), from argument" in err
    row = simulate_json(capsys, "--trace", str(path), "--default-estimate", "3600")
    assert row["load_report"]["default_estimate"] == 3600
    row = simulate_json(capsys, "--trace", str(path))
    assert row["load_report"]["default_estimate"] == 69  # the longest run time
    assert main(["simulate", "--trace", str(path), "--default-estimate", "-5"]) == 2
    assert "default_estimate must be a positive number of seconds, got -5.0" in capsys.readouterr().err


def test_partition_filter(capsys, tmp_path):
    path = _trace_without_estimates(tmp_path)
    row = simulate_json(capsys, "--trace", str(path), "--partition", "2")
    assert row["jobs_simulated"] == 20
    assert row["load_report"]["partitions"] == [2]
    assert row["dropped_by_reason"] == {"partition not selected (field 16)": 20}
    assert simulate_json(capsys, "--trace", str(path), "--partition", "1,2")["jobs_simulated"] == 40
    assert main(["simulate", "--trace", str(path), "--partition", "3"]) == 2
    err = capsys.readouterr().err
    assert f"hpcgym: error: {path}: no jobs to simulate" in err
    assert "partitions selected: 3; in the trace: 1 (20 jobs), 2 (20 jobs)" in err
    assert main(["simulate", "--trace", str(path), "--partition", "x"]) == 2
    assert "--partition: 'x' is not a partition number" in capsys.readouterr().err


def test_a_guessed_machine_size_is_a_warning_with_the_fix(capsys, tmp_path):
    path = tmp_path / "noheader.swf"
    path.write_text(
        "1 0 -1 30 4 -1 -1 4 60 -1 1 1 1 1 1 1 -1 -1\n2 5 -1 30 2 -1 -1 2 60 -1 1 1 1 1 1 1 -1 -1\n"
    )
    assert main(["simulate", "--trace", str(path), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "machine: 4 processors (from largest job)" in err
    assert "warning: machine size 4 guessed from the largest job" in err and "--procs N" in err
    assert err.count("guessed from the largest job") == 1, "said once, in the report"


def test_compilation_is_announced_only_when_the_cache_is_cold(capsys, monkeypatch):
    from hpcgym.baselines import _compile, _kernels

    monkeypatch.setattr(_compile, "cold_kernels", lambda kernels: ["easy_decide"])
    monkeypatch.setattr(_kernels, "_loaded", set())  # as in a new process
    assert main(["simulate", "--jobs", "50", "--no-progress", "--json"]) == 0
    err = capsys.readouterr().err
    assert err.count("hpcgym: compiling kernels, first run only ... done in ") == 1
    assert "more kernels" not in err  # the event loop and its dispatcher's kernel in one go
    assert main(["simulate", "--jobs", "50", "--no-progress", "--json"]) == 0
    assert "compiling" not in capsys.readouterr().err, "loaded in this process: nothing to compile"
    monkeypatch.setattr(_compile, "cold_kernels", lambda kernels: [])
    monkeypatch.setattr(_kernels, "_loaded", set())
    assert main(["simulate", "--jobs", "50", "--no-progress", "--json"]) == 0
    assert "compiling" not in capsys.readouterr().err
    assert not _compile._announce, "the notice ends with the command"


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


# ------------------------------------------------------------ --allocation
# two nodes, 8 and 4 cores; a 4-core job at 0 (100 s), an 8-core job at 10 (100 s)
TWO_NODES = 'resources = ["cores"]\n[[nodes]]\ncores = 8\n[[nodes]]\ncores = 4\n'
TWO_JOBS = (
    "; MaxProcs: 12\n"
    "1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
    "2 10 -1 100 8 -1 -1 8 100 -1 1 1 1 -1 -1 -1 -1 -1\n"
)


@pytest.fixture
def two_nodes(tmp_path):
    machine, trace = tmp_path / "two.toml", tmp_path / "two.swf"
    machine.write_text(TWO_NODES)
    trace.write_text(TWO_JOBS)
    return ["--trace", str(trace), "--machine", str(machine)]


def _placements(capsys, tmp_path, *args: str) -> list[tuple[float, str]]:
    out = tmp_path / "s.csv"
    simulate_json(capsys, *args, "--schedule-out", str(out))
    with open(out, newline="") as fh:
        return [(float(r["start"]), r["nodes"]) for r in csv.DictReader(fh)]


def test_allocation_overrides_the_machines_policy(capsys, tmp_path, two_nodes):
    # first-fit puts the 4-core job on node 0, so the 8-core job waits for it; best-fit
    # puts it on the 4-core node 1 (nothing left there), so the 8-core job starts at once
    first = [(0.0, "0"), (100.0, "0")]
    best = [(0.0, "1"), (10.0, "0")]
    assert _placements(capsys, tmp_path, *two_nodes) == first  # the file's default
    assert _placements(capsys, tmp_path, *two_nodes, "--allocation", "first-fit") == first
    assert _placements(capsys, tmp_path, *two_nodes, "--allocation", "best-fit") == best
    # through the environment too: the machine travels with the workload
    assert _placements(capsys, tmp_path, *two_nodes, "--allocation", "best-fit", "--via-env") == best
    # and a machine file that says best-fit is overridden back to first-fit
    toml = Path(two_nodes[3])
    toml.write_text('allocation = "best-fit"\n' + TWO_NODES)
    assert _placements(capsys, tmp_path, *two_nodes) == best
    assert _placements(capsys, tmp_path, *two_nodes, "--allocation", "first-fit") == first


def test_allocation_in_compare_and_on_a_job_table(capsys, tmp_path, two_nodes):
    args = ["compare", *two_nodes, "--policies", "fcfs,easy", "--include-all", "--json"]
    waits = {}
    for allocation in ("first-fit", "best-fit"):
        assert main([*args, "--allocation", allocation]) == 0
        waits[allocation] = [r["mean_wait_s"] for r in strict_json(capsys.readouterr().out)]
    assert waits == {"first-fit": [45.0, 45.0], "best-fit": [0.0, 0.0]}
    # a job table on the Eurora preset: the same jobs, placed differently
    sample = Path(__file__).parents[2] / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"
    table = ["--machine", "eurora", "--workload", str(sample)]
    placed = {a: _placements(capsys, tmp_path, *table, "--allocation", a) for a in ("first-fit", "best-fit")}
    assert len(placed["first-fit"]) == len(placed["best-fit"]) > 0
    assert placed["first-fit"] == _placements(capsys, tmp_path, *table)  # the preset's own policy
    assert [n for _, n in placed["first-fit"]] != [n for _, n in placed["best-fit"]]


def test_allocation_choices_are_the_allocators_policies(capsys, two_nodes):
    from hpcgym.cli._common import ALLOCATIONS, with_allocation
    from hpcgym.common.errors import InvalidConfigError
    from hpcgym.machine import POLICIES

    assert set(ALLOCATIONS) == set(POLICIES)
    for cmd in (["simulate"], ["compare"], ["reproduce", "tsafrir2007"]):
        with pytest.raises(SystemExit) as exc:
            main([*cmd, *two_nodes, "--allocation", "worst-fit"])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "argument --allocation: invalid choice: 'worst-fit'" in err and "best-fit" in err
    with pytest.raises(InvalidConfigError, match="--allocation must be one of first-fit, best-fit, got 'x'"):
        with_allocation(load_default(), "x")
    # a trace without a machine gets its one node with the policy (every job on node 0)
    w = with_allocation(load_default().window(10), "best-fit")
    assert w.machine.allocation == "best-fit" and w.machine.n_nodes == 1
