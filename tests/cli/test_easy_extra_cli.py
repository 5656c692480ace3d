"""EASY's two rules for extra processors, chosen on the command line (``--extra``).

The workload: a 10-processor machine; A and B (4 processors each) start at 0 and are
predicted to end at 100; H (6 processors) arrives at 1 and gets the reservation at 100;
C (2 processors, 1,000 s) arrives at 2 and fits the 2 free processors now but would
outlast the reservation, so it may start only on extra processors. The classic rule
counts A (the first of the two tied jobs) to reach H's 6 processors: 6 - 6 = 0 extra, C
waits until 100. The "all" rule also counts B: 10 - 6 = 4 extra, C starts at 2.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hpcgym.baselines import easy_extra
from hpcgym.cli import main

# job submit wait runtime procs cpu mem req_procs estimate req_mem status user group exe queue part prev think
SWF = """; MaxProcs: 10
1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1
2 0 -1 100 4 -1 -1 4 100 -1 1 2 1 -1 -1 -1 -1 -1
3 1 -1 100 6 -1 -1 6 100 -1 1 3 1 -1 -1 -1 -1 -1
4 2 -1 1000 2 -1 -1 2 1000 -1 1 4 1 -1 -1 -1 -1 -1
"""
C_START = {"classic": 100.0, "all": 2.0}


@pytest.fixture
def trace(tmp_path: Path, write_swf_text) -> Path:
    return write_swf_text(tmp_path / "tie.swf", SWF)


def start_times(path: Path) -> dict[int, float]:
    with open(path, newline="") as fh:
        return {int(float(r["job_id"])): float(r["start"]) for r in csv.DictReader(fh)}


@pytest.mark.parametrize("policy", ["easy", "easy-sjbf", "x2", "sjf"])
@pytest.mark.parametrize("rule", ["classic", "all"])
def test_simulate_extra_decides_whether_the_long_job_backfills(trace, tmp_path, capsys, policy, rule):
    out = tmp_path / f"{policy}-{rule}.csv"
    args = ["simulate", "--trace", str(trace), "--policy", policy, "--include-all", "--json"]
    assert main([*args, "--extra", rule, "--schedule-out", str(out)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["extra"] == rule
    starts = start_times(out)
    assert starts[4] == C_START[rule]
    assert (starts[1], starts[2], starts[3]) == (0.0, 0.0, 100.0)


def test_simulate_default_is_classic(trace, tmp_path, capsys):
    out = tmp_path / "default.csv"
    assert main(["simulate", "--trace", str(trace), "--json", "--schedule-out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["extra"] == "classic"
    assert start_times(out)[4] == C_START["classic"]


def test_simulate_extra_with_a_policy_without_reservation_is_a_usage_error(trace, capsys):
    assert main(["simulate", "--trace", str(trace), "--policy", "fcfs", "--extra", "all"]) == 2
    err = capsys.readouterr().err
    assert "'fcfs'" in err and "EASY-family" in err and "easy++" in err
    assert "Traceback" not in err


def test_simulate_extra_rejects_an_unknown_rule(trace, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--trace", str(trace), "--extra", "some"])
    assert exc.value.code == 2
    assert "classic" in capsys.readouterr().err


@pytest.mark.parametrize("policy", ["easy", "easy++"])
@pytest.mark.parametrize("rule", ["classic", "all"])
def test_simulate_extra_via_env_is_the_direct_schedule(trace, tmp_path, capsys, policy, rule):
    # the dispatcher is the environment's agent: its rule is applied as in a direct run
    starts = {}
    for via in ([], ["--via-env"]):
        out = tmp_path / f"{policy}-{rule}-{len(via)}.csv"
        args = ["simulate", "--trace", str(trace), "--policy", policy, "--include-all", "--json"]
        assert main([*args, "--extra", rule, *via, "--schedule-out", str(out)]) == 0
        assert json.loads(capsys.readouterr().out)["extra"] == rule
        starts[bool(via)] = start_times(out)
    assert starts[True] == starts[False]
    assert starts[True][4] == C_START[rule]


def test_extra_via_env_with_a_policy_without_reservation_is_a_usage_error(trace, capsys):
    assert main(["simulate", "--trace", str(trace), "--policy", "fcfs", "--extra", "all", "--via-env"]) == 2
    err = capsys.readouterr().err
    assert "'fcfs'" in err and "EASY-family" in err and "Traceback" not in err


def test_run_via_env_takes_the_rule_from_python_too(trace):
    from hpcgym.common.errors import InvalidConfigError
    from hpcgym.env import run_via_env
    from hpcgym.workloads import read_swf

    w = read_swf(trace)
    start = {rule: run_via_env(w, "easy", extra=rule).start[3] for rule in ("classic", "all")}
    assert start == C_START
    with pytest.raises(InvalidConfigError, match="EASY-family"):
        run_via_env(w, "fcfs", extra="all")
    with pytest.raises(InvalidConfigError, match="extra"):
        run_via_env(w, "easy", extra="some")


def test_compare_extra_applies_to_every_easy_preset_only(trace, tmp_path, capsys):
    waits = {}
    for rule in ("classic", "all"):
        args = ["compare", "--trace", str(trace), "--policies", "fcfs,easy,easy++", "--include-all"]
        assert main([*args, "--extra", rule, "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["extra"] for r in rows] == [None, rule, rule]
        waits[rule] = [r["mean_wait_s"] for r in rows]
    assert waits["classic"][0] == waits["all"][0]  # FCFS is untouched
    # C waits 98 s under the classic rule and not at all under "all"; the others the same
    for i in (1, 2):
        assert waits["classic"][i] - waits["all"][i] == pytest.approx(98.0 / 4)


def test_compare_extra_without_an_easy_preset_is_a_usage_error(trace, capsys):
    assert main(["compare", "--trace", str(trace), "--policies", "fcfs,sjf-list", "--extra", "all"]) == 2
    err = capsys.readouterr().err
    assert "EASY-family" in err and "fcfs,sjf-list" in err and "Traceback" not in err


def test_policies_names_each_easy_presets_rule(capsys):
    assert main(["policies", "--json"]) == 0
    specs = json.loads(capsys.readouterr().out)
    assert specs["fcfs"]["extra processors"] is None
    assert specs["easy"]["extra processors"] == "classic"
    assert all(s["extra processors"] == easy_extra(n) for n, s in specs.items())
    assert main(["policies"]) == 0
    text = capsys.readouterr().out
    assert "extra processors=classic" in text
    rules = text.split("extra processors (", 1)[1]
    assert "classic" in rules and "all" in rules
