"""The prediction-based backfilling family of Tsafrir, Etsion and Feitelson (2007).

Presets and what they combine, hand-checked schedules for SJBF, the SJF reservation,
doubling and prediction correction, the kill-time property, the ``reproduce`` command,
and (``expensive``) Tables 2, 3 and 6 on the full SDSC-SP2 and CTC-SP2 traces.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import build_workload
from hypothesis import given
from hypothesis import strategies as st

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs, preset_predictor
from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import Corrected, Predictor, Walltime
from hpcgym.sim import Schedule, Simulator
from hpcgym.studies.tsafrir2007 import (
    TSAFRIR2007_PAPER,
    TSAFRIR2007_TABLES,
    paper_trace_key,
    render_tsafrir2007,
    run_tsafrir2007,
)
from hpcgym.workloads import Workload, load_default, read_swf

TRACES = Path(__file__).resolve().parents[3] / "shared" / "traces"


def workload(jobs: Sequence[Sequence[float]], procs: int) -> Workload:
    """Jobs ``(submit, runtime, procs, estimate[, user])``."""
    return build_workload(jobs, procs)


class Given(Predictor):
    """Predicts the given seconds for each job."""

    def __init__(self, seconds: Sequence[float]) -> None:
        super().__init__()
        self.seconds = list(seconds)

    def on_submit(self, job: int, now: float) -> None:
        self.prediction[job] = self.seconds[job]


def simulate(w: Workload, policy: str, predictor: Predictor | str | None = None, **kw) -> Schedule:
    pred = predictor if isinstance(predictor, Predictor) else preset_predictor(policy, predictor)
    return Simulator(w, predictor=pred, **kw).run(make_policy(policy))


# --------------------------------------------------------------- presets
# preset: (predictor built by preset_predictor, sjbf, reserve_shortest, correction, doubling)
FAMILY = {
    "easy": ("walltime", False, False, False, 1),
    "easy-pcor": ("walltime+pcor", False, False, True, 1),
    "easy+": ("user-avg+pcor", False, False, True, 1),
    "easy-sjbf": ("walltime", True, False, False, 1),
    "easy++": ("user-avg+pcor", True, False, True, 1),
    "perfect++": ("real", True, False, False, 1),
    "x2": ("walltime+x2", False, False, False, 2),
    "x2+": ("user-avg+x2+pcor", False, False, True, 2),
    "x2++": ("user-avg+x2+pcor", True, False, True, 2),
    "sjf": ("walltime", True, True, False, 1),
    "sjf+": ("user-avg+pcor", True, True, True, 1),
}


@pytest.mark.parametrize("name", FAMILY)
def test_preset_combines_what_the_paper_says(name):
    pred, sjbf, shortest, correction, doubling = FAMILY[name]
    spec = policy_specs()[name]
    d = make_policy(name)
    assert isinstance(d, EasyBackfilling)
    assert (d.sjbf, d.reserve_shortest, d.doubling, d.name) == (sjbf, shortest, 1.0, name)
    assert (spec.correction, spec.doubling) == (correction, doubling)
    p = preset_predictor(name)
    assert p.name == pred
    assert p.corrects == correction
    combines = spec.combines
    assert combines["backfill order"] == ("shortest predicted first" if sjbf else "arrival")
    assert combines["queue order"].startswith("shortest predicted first" if shortest else "arrival")
    assert combines["correction"] == ("pcor" if correction else "none")
    assert combines["doubling"] == f"{doubling:g}"


def test_policies_command_shows_every_preset_and_its_parts(capsys):
    assert main(["policies", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    for name in FAMILY:
        assert {"predictor", "queue order", "backfill order", "correction", "doubling"} <= set(shown[name])


def test_predictor_option_overrides_only_the_predictor():
    assert preset_predictor("easy++", "profile").name == "profile+pcor"
    assert preset_predictor("x2", "real").name == "real+x2"
    assert preset_predictor("easy", "user-avg").name == "user-avg"  # naive: no correction
    assert preset_predictor("easy++", "walltime+pcor").name == "walltime+pcor"  # not twice


def test_simulate_command_runs_a_preset_with_its_own_predictor(capsys):
    assert main(["simulate", "--policy", "easy++", "--jobs", "300", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["policy"], row["predictor"]) == ("easy++", "user-avg+pcor")


def test_extra_rule_is_validated():
    with pytest.raises(InvalidConfigError):
        EasyBackfilling(extra="some")


# ------------------------------------------------------ hand-checked schedules
# machine 4: job 0 (3 procs, 100 s) runs; job 1 (4 procs) waits with reservation 100;
# jobs 2 (1 proc, estimate 90) and 3 (1 proc, estimate 10) arrive together at t=2 and
# only one processor is free. Arrival order backfills job 2; SJBF backfills job 3 (it
# ends at 12; then job 2 would end at 102 > 100 and waits). FCFS reservation is kept:
# job 1 starts at 100 either way.
BACKFILL = [(0, 100, 3, 100), (1, 50, 4, 100), (2, 90, 1, 90), (2, 10, 1, 10)]


def test_sjbf_orders_only_the_backfill_candidates():
    easy = simulate(workload(BACKFILL, 4), "easy")
    sjbf = simulate(workload(BACKFILL, 4), "easy-sjbf")
    assert easy.start.tolist() == [0, 100, 2, 150]
    assert sjbf.start.tolist() == [0, 100, 150, 2]


def test_sjf_gives_the_reservation_to_the_shortest_job():
    # machine 4, job 0 fills it until 100; job 1 (estimate 500) and job 2 (estimate 50)
    # both need the whole machine. EASY starts the older one at 100, SJF the shorter.
    jobs = [(0, 100, 4, 100), (1, 500, 4, 500), (2, 50, 4, 50)]
    assert simulate(workload(jobs, 4), "easy").start.tolist() == [0, 100, 600]
    assert simulate(workload(jobs, 4), "sjf").start.tolist() == [0, 150, 100]


def test_x2_preset_equals_doubling_in_the_scheduler():
    # without correction, doubling the predictions (the preset) or the planning factor
    # (EasyBackfilling(doubling=2)) gives the same schedule
    w = load_default().window(3000)
    preset = simulate(w, "x2")
    kernel = Simulator(w, predictor=Walltime()).run(EasyBackfilling(doubling=2.0))
    np.testing.assert_array_equal(preset.start, kernel.start)
    np.testing.assert_array_equal(preset.first_prediction, 2 * w.estimate)


# Fig. 5 of the paper: job 0 (3 of 4 procs) is predicted 10 s but runs 50 s (estimate
# 100); job 1 needs the whole machine; job 2 (1 proc, predicted 30 s) arrives at t=5.
FIG5 = [(0, 50, 3, 100), (1, 20, 4, 100), (5, 30, 1, 100)]
FIG5_PREDICTIONS = [10, 100, 30]


def test_without_correction_an_outlived_prediction_stops_backfilling():
    # at t=5 the reservation is 10 (job 0's predicted end), 5 + 30 > 10: no backfill; after
    # t=10 the reservation is "now" and nothing can be backfilled until job 0 ends at 50
    s = simulate(workload(FIG5, 4), "easy", Given(FIG5_PREDICTIONS))
    assert s.start.tolist() == [0, 50, 70]


def test_correction_moves_the_reservation_and_is_a_decision_point():
    # at t=10 job 0's prediction becomes its estimate 100; the engine asks the dispatcher
    # at that instant and job 2 (10 + 30 <= 100) is backfilled at once
    s = simulate(workload(FIG5, 4), "easy", Corrected(Given(FIG5_PREDICTIONS)))
    assert s.start.tolist() == [0, 50, 10]
    assert s.prediction_changes == [(10.0, 0, 100.0)]


def test_classic_extra_counts_only_the_processors_the_head_job_needs():
    # machine 6: jobs 0 and 1 (2 procs each, estimate 100) run, 2 procs are free; job 2
    # (4 procs) waits with reservation 100, when job 0 gives it the 2 it lacks. Job 1 also
    # ends at 100 (a tie), so with extra="all" its 2 processors are extra and job 3
    # (2 procs, estimate 500) backfills at t=3; "classic" counts only the processors
    # job 2 needs (none extra) and job 3 waits.
    jobs = [(0, 100, 2, 100), (0, 100, 2, 100), (1, 100, 4, 100), (3, 500, 2, 500)]
    w = workload(jobs, 6)
    all_rule = Simulator(w).run(EasyBackfilling(extra="all"))
    classic = Simulator(w).run(EasyBackfilling(extra="classic"))
    assert all_rule.start[3] == 3
    assert classic.start[3] > 3


# ------------------------------------------------------------- properties
@st.composite
def workloads(draw: st.DrawFn) -> Workload:
    procs = draw(st.integers(1, 8))
    t = 0.0
    jobs = []
    for _ in range(draw(st.integers(1, 14))):
        t += draw(st.integers(0, 6))
        runtime = float(draw(st.integers(0, 60)))
        estimate = float(draw(st.integers(1, 60)))
        jobs.append((t, runtime, draw(st.integers(1, procs)), estimate, draw(st.integers(1, 3))))
    return workload(jobs, procs)


@given(w=workloads(), policy=st.sampled_from(sorted(FAMILY)))
def test_with_predictions_no_job_is_killed_before_its_estimate(w, policy):
    s = simulate(w, policy, kill_at_estimate=True)
    ran = s.end - s.start
    np.testing.assert_array_equal(ran, np.minimum(w.runtime, w.estimate))
    np.testing.assert_array_equal(s.killed, w.runtime > w.estimate)
    assert (s.start >= w.submit).all()


@given(w=workloads(), policy=st.sampled_from(["easy++", "x2+", "sjf+", "easy-pcor"]))
def test_corrected_predictions_only_grow_and_run_to_completion(w, policy):
    s = simulate(w, policy)
    np.testing.assert_array_equal(s.end - s.start, w.runtime)
    last = s.first_prediction.copy()
    for t, j, p in s.prediction_changes:
        assert p > last[j]  # a correction always grows the prediction ...
        assert t == pytest.approx(s.start[j] + last[j])  # ... exactly when it was outlived
        last[j] = p


# ------------------------------------------------------------- reproduce
def test_reproduce_on_the_bundled_slice_has_every_table_and_figure():
    w = load_default().window(2000)
    lines: list[str] = []
    result = run_tsafrir2007(w, progress=lines.append)
    assert len(lines) == 8
    assert result["paper_trace"] == "SDSC"
    for number, columns in TSAFRIR2007_TABLES.items():
        table = result["tables"][number]
        assert table["columns"] == list(columns)
        for metric in ("wait_min", "bsld", "accuracy_pct"):
            row = table["rows"][metric]
            assert row["ours_change_pct"][0] is None
            assert row["paper"] == [
                TSAFRIR2007_PAPER["SDSC"][c][("wait_min", "bsld", "accuracy_pct").index(metric)]
                for c in columns
            ]
    assert result["results"]["perfect++"]["accuracy_pct"] == 100.0
    text = render_tsafrir2007(result)
    assert "Table 2" in text and "Table 3" in text and "Table 6" in text and "EASY_PCOR" in text


def test_reproduce_predictability_runs_tables_4_and_5():
    w = load_default().window(1500)
    result = run_tsafrir2007(w, predictability_runs=True)
    pred = result["predictability"]
    assert list(pred) == ["easy", "easy+", "easy++"]
    assert pred["easy+"]["predictor"] == "user-avg-imm+pcor"
    for row in pred.values():
        assert len(row["ours"]) == len(row["paper"]) == 8
        assert 0 <= row["ours"][0] <= 100 and 0 <= row["ours"][4] <= row["ours"][0]
    assert "Tables 4 and 5" in render_tsafrir2007(result)


def test_reproduce_command_json(tmp_path, capsys):
    from hpcgym.workloads import default_trace_path

    assert (
        main(["reproduce", "tsafrir2007", "--trace", str(default_trace_path()), "--jobs", "500", "--json"])
        == 0
    )
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["procs"] == 128 and result["jobs"] == 500
    assert captured.err.count("[") >= 8  # one progress line per simulation
    assert main(["reproduce", "nosuchpaper", "--trace", str(default_trace_path())]) == 2


def test_paper_trace_names():
    assert paper_trace_key("SDSC-SP2-1998-4.2-cln") == "SDSC"
    assert paper_trace_key("CTC-SP2-1996-3.1-cln") == "CTC"
    assert paper_trace_key("HPC2N-2002-2.2-cln") is None


# --------------------------------------------------- full traces (make bench)
FULL = [("SDSC-SP2-1998-4.2-cln.swf.gz", 128, "SDSC"), ("CTC-SP2-1996-3.1-cln.swf.gz", 512, "CTC")]


@pytest.mark.expensive
@pytest.mark.parametrize(("name", "procs", "key"), FULL, ids=["SDSC-SP2", "CTC-SP2"])
def test_tables_2_3_6_within_ten_percent_and_same_direction(name, procs, key):
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"{name} not found in shared/traces (the reproduction needs the real trace)")
    result = run_tsafrir2007(read_swf(path, procs=procs))
    paper = TSAFRIR2007_PAPER[key]
    for policy, r in result["results"].items():
        wait, bsld, acc = paper[policy]
        assert r["wait_min"] == pytest.approx(wait, rel=0.10), policy
        assert r["bsld"] == pytest.approx(bsld, rel=0.10), policy
        assert r["accuracy_pct"] == pytest.approx(acc, rel=0.10), policy
    easy = result["results"]["easy"]
    for policy in ("easy+", "easy-sjbf", "easy++", "perfect++", "x2"):  # all improve on EASY
        assert result["results"][policy]["bsld"] < easy["bsld"], policy
        assert result["results"][policy]["wait_min"] < easy["wait_min"] or policy == "easy-sjbf", policy
