"""003's resource manager (hpcgym.baselines.molding): gain score, size choice, roulette, hold queue."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from checks import check_schedule
from conftest import build_workload, examples, random_workloads
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import (
    MoldingConfig,
    UserHistory,
    choose_size,
    gain_score,
    molded_estimate,
    over_seeds,
    roulette,
    run_managed,
    settle_time,
)
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import RangeSet
from hpcgym.sim import Simulator
from hpcgym.workloads import load_default

SMALL = {"history": 1500, "jobs": 600, "wait_predictor": "qbets"}
"""A fast configuration on the bundled SDSC-SP2 slice."""
DELAY = {"mode": "delay", "history": 1500, "jobs": 600}
"""Delayed submission with APQ (QBETS predicts the same wait later, so it never holds a job)."""


@pytest.fixture(scope="module")
def slice_2100():
    return load_default().window(2100)


# ------------------------------------------------------------------ gain score and size choice
def test_gain_score_is_the_mean_gain_over_the_ranges():
    # [0, 0.2] and [0.6, 1.0]: integrals 0.18 and 0.08 over a length of 0.6
    assert gain_score(np.array([0.0, 6.0]), np.array([2.0, 10.0]), 10.0) == pytest.approx(0.26 / 0.6)
    # normalising by coverage: many ranges high up do not beat one range low down
    low = gain_score(np.array([1.0]), np.array([2.0]), 10.0)
    high = gain_score(np.array([6.0, 7.5, 9.0]), np.array([7.0, 8.5, 10.0]), 10.0)
    assert low == pytest.approx(0.85) and high == pytest.approx(0.2)


def test_size_choice_by_hand():
    # size 8 runs 100-120 s and waits 600 s; size 16 runs 40-60 s and waits 30 s; size 4: 1000 s, no wait
    sets = [
        RangeSet(np.array([100.0]), np.array([120.0]), np.array([1.0])),
        RangeSet(np.array([40.0]), np.array([60.0]), np.array([1.0])),
        RangeSet(np.array([1000.0]), np.array([1000.0]), np.array([1.0])),
    ]
    best, scores = choose_size(sets, np.array([600.0, 30.0, 0.0]))
    # responses [700, 720], [70, 90], [1000, 1000], scaled by 1000: midpoints .71, .08, 1
    np.testing.assert_allclose(scores, [0.29, 0.92, 0.0], atol=1e-9)
    assert best == 1
    # a tie goes to the first (the job's own size)
    assert choose_size([sets[0], sets[0]], np.array([5.0, 5.0]))[0] == 0


def test_molded_estimate_rules():
    assert molded_estimate(100.0, 8, 4, 300.0, 500.0) == 300.0  # shrunk: the smaller longer one
    assert molded_estimate(100.0, 8, 4, 600.0, 500.0) == 500.0
    assert molded_estimate(100.0, 8, 4, 50.0, 80.0) == 100.0  # neither longer: kept
    assert molded_estimate(100.0, 8, 16, 600.0, 500.0) == 100.0  # expanded: kept


def test_candidates_are_the_users_earlier_sizes_own_first():
    jobs = [(0, 10, 4, 20, 1), (1, 10, 2, 20, 1), (2, 10, 8, 20, 2), (3, 10, 16, 20, 1), (4, 10, 2, 20, 1)]
    w = build_workload(jobs, 16)
    users = UserHistory(w)
    users.see_until(4)
    assert users.candidates(4) == [2, 4, 16]  # user 1's sizes before job 4; user 2's 8 is not one
    assert users.by_user[1][2] == [1] and users.max_estimate == 20.0
    assert users.estimate(4, 16) == 20.0 and users.estimate(3, 2) == 20.0  # none longer than 20 s


def test_the_chosen_size_is_the_one_scored_best_on_a_tiny_history():
    """Two users' jobs; the manager's choice for the last job checked by hand from its predictions."""
    jobs = []
    t = 0.0
    for _ in range(12):  # user 1 alternates size 1 (10 s) and size 4 (1000 s)
        jobs += [(t, 10.0, 1, 20.0, 1), (t + 1, 1000.0, 4, 2000.0, 1)]
        t += 2000.0
    jobs.append((t, 1000.0, 4, 2000.0, 1))
    w = build_workload(jobs, 4)
    r = run_managed(w, MoldingConfig(history=len(jobs) - 1, jobs=1, wait_predictor="qbets"))
    # the machine is idle, waits predicted alike for both sizes: size 1's 10 s wins
    assert r.size.tolist() == [1] and r.original_size.tolist() == [4]
    assert r.runtime.tolist() == [10.0]  # every earlier size-1 job ran 10 s
    assert r.shrunk == 1 and r.molded == 1
    # shrunk: maxPrevious (20 s) is not longer than 2000 s, maxLimit (2000 s) neither: kept
    assert r.schedule is not None and r.schedule.workload.estimate[-1] == 2000.0


def test_a_job_whose_own_size_has_no_rangeset_keeps_its_request():
    """Size 4 has ended jobs of the user, size 1 none yet: nothing to compare, so no molding.

    The user's size-1 jobs all run past the managed job's submission (none has ended), so
    the tuple (user, 1) has no rangeSet; size 4 has one. With ``score_own=False`` (the
    behaviour before) the job moves to size 4 unopposed, taking a size-4 run time.
    """
    jobs = []
    t = 0.0
    for _ in range(6):  # user 1's size-4 jobs: 100 s each, all ended by the end
        jobs.append((t, 100.0, 4, 200.0, 1))
        t += 1000.0
    jobs.append((t, 50_000.0, 1, 60_000.0, 1))  # one size-1 job, still running
    jobs.append((t + 10.0, 20.0, 1, 40.0, 1))  # the managed job: size 1
    w = build_workload(jobs, 8)
    kept = run_managed(w, MoldingConfig(history=len(jobs) - 1, jobs=1, wait_predictor="qbets"))
    assert kept.size.tolist() == [1] and kept.runtime.tolist() == [20.0]
    assert kept.molded == 0 and kept.no_candidate == 1
    moved = run_managed(
        w, MoldingConfig(history=len(jobs) - 1, jobs=1, wait_predictor="qbets", score_own=False)
    )
    assert moved.size.tolist() == [4] and moved.runtime.tolist() == [100.0]
    assert moved.expanded == 1 and moved.no_candidate == 0


# ------------------------------------------------------------------ the roulette wheel
def test_roulette_is_seeded():
    rt = np.arange(10.0)
    a = [roulette(rt, np.random.default_rng(3)) for _ in range(5)]
    b = [roulette(rt, np.random.default_rng(3)) for _ in range(5)]
    assert a == b


def test_same_seed_same_molding_decisions(slice_2100):
    a = run_managed(slice_2100, MoldingConfig(seed=1, **SMALL))
    b = run_managed(slice_2100, MoldingConfig(seed=1, **SMALL))
    assert a.molded > 0
    np.testing.assert_array_equal(a.size, b.size)
    np.testing.assert_array_equal(a.runtime, b.runtime)
    np.testing.assert_array_equal(a.wait, b.wait)
    others = [run_managed(slice_2100, MoldingConfig(seed=s, **SMALL)) for s in (2, 3)]
    assert any(not np.array_equal(a.runtime, o.runtime) for o in others), "the seed changes nothing"


def test_over_seeds_averages_each_blocks_managed_mean_over_the_runs(slice_2100):
    runs = [run_managed(slice_2100, MoldingConfig(seed=s, block=100, **SMALL)) for s in (1, 2)]
    one = over_seeds(runs[:1])
    assert one == runs[0].comparison() and one["seeds"] == [1]
    both = over_seeds(runs)
    (m1, base), (m2, base2) = runs[0].block_means(), runs[1].block_means()
    np.testing.assert_array_equal(base, base2)  # the same EASY baseline in every run
    assert both["seeds"] == [1, 2] and both["blocks"] == len(base)
    assert both["response_difference_min"] == pytest.approx(((m1 + m2) / 2 - base).mean())
    assert both["ci_low"] <= both["response_difference_min"] <= both["ci_high"]
    other = run_managed(slice_2100, MoldingConfig(seed=3, block=100, **{**SMALL, "wait_predictor": "ibl"}))
    with pytest.raises(InvalidConfigError, match="differ only in the seed"):
        over_seeds([runs[0], other])


# ------------------------------------------------------------------ the hold queue
@pytest.fixture(scope="module")
def delayed(slice_2100):
    return run_managed(slice_2100, MoldingConfig(**DELAY))


def test_hold_queue_never_starts_a_job_early(delayed, slice_2100):
    r = delayed
    assert r.delayed > 0, "no job was held: the test would check nothing"
    submit = slice_2100.submit[r.jobs]
    s = r.schedule
    assert s is not None
    assert (r.hold >= 0).all() and (r.wait >= r.hold).all()
    assert (s.workload.submit[r.jobs] == submit + r.hold).all()
    assert (s.start[r.jobs] >= submit).all()
    held = r.hold > 0
    assert held.sum() >= r.delayed  # the held jobs and those that joined them
    # held jobs leave the hold queue in arrival order
    assert (np.diff(s.workload.submit) >= 0).all()


def test_hold_decisions_never_use_the_future(delayed, slice_2100):
    """Shuffle the jobs after a cut: every decision taken before it is the same."""
    r = delayed
    cut_job = int(r.jobs[0]) + 300
    cut = float(slice_2100.submit[cut_job])
    rng = np.random.default_rng(0)
    perm = np.arange(len(slice_2100))
    perm[cut_job:] = cut_job + rng.permutation(len(slice_2100) - cut_job)
    w = slice_2100
    cols = {name: np.asarray(getattr(w, name))[perm] for name in ("runtime", "procs_req", "estimate", "user")}
    shuffled = build_workload(
        list(zip(w.submit, cols["runtime"], cols["procs_req"], cols["estimate"], cols["user"], strict=True)),
        w.procs,
        name=w.name,
        group=np.asarray(w.group)[perm],
        queue=np.asarray(w.queue)[perm],
    )
    s = run_managed(shuffled, MoldingConfig(**DELAY))
    before = slice_2100.submit[r.jobs] < cut
    np.testing.assert_array_equal(r.hold[before], s.hold[before])
    decided = slice_2100.submit[r.jobs] + r.hold < cut
    assert decided.sum() > 100
    np.testing.assert_array_equal(r.size[decided], s.size[decided])
    np.testing.assert_array_equal(r.runtime[decided], s.runtime[decided])


def test_settle_time_follows_close_ends():
    assert settle_time(100.0, np.array([50.0, 200.0, 204.0, 300.0])) == 204.0  # 5 % of 100 s
    assert settle_time(100.0, np.array([200.0, 300.0]), settle=0.0) == 200.0


# ------------------------------------------------------------------ the engine's invariants
def test_molded_schedule_passes_the_engine_invariants(delayed):
    s = delayed.schedule
    assert s is not None
    check_schedule(s.workload, s, kill=False)
    # the requests the engine ran are the ones reported
    np.testing.assert_array_equal(s.workload.procs_req[delayed.jobs], delayed.size)


@settings(max_examples=examples(15), deadline=None)
@given(data=st.data(), mode=st.sampled_from(["molding", "delay"]))
def test_invariants_on_random_workloads(data, mode):
    w = data.draw(random_workloads(max_jobs=40, fractional=False))
    history = data.draw(st.integers(0, max(0, len(w) - 1)))
    r = run_managed(w, MoldingConfig(mode=mode, history=history, jobs=len(w), wait_predictor="apq"))
    assert r.schedule is not None
    check_schedule(r.schedule.workload, r.schedule, kill=False)
    assert (r.wait >= r.hold).all() and len(r.jobs) == len(w) - history
    assert r.molded == int((r.size != r.original_size).sum()) == r.expanded + r.shrunk


def test_stepping_to_the_manager_instants_changes_nothing(slice_2100):
    from hpcgym.baselines import make_policy, step_engine
    from hpcgym.sim import as_dispatcher

    w = slice_2100.window(800)
    ref = Simulator(w).run(make_policy("easy"))
    sim = Simulator(w)
    d = as_dispatcher(make_policy("easy"))
    sim.attach(d)
    for t in np.unique(w.submit[::7]).tolist():
        step_engine(sim, d, t)
    step_engine(sim, d)
    np.testing.assert_array_equal(sim.schedule().start, ref.start)


def test_engine_amend_refuses_jobs_that_arrived():
    w = build_workload([(0, 5, 1, 10), (1, 5, 1, 10), (2, 5, 1, 10)], 2)
    sim = Simulator(w)
    assert sim.advance_until(0.5) and sim.now == 0.0  # job 0 arrived and fits: a decision point
    sim.amend(1, submit=1.5)
    with pytest.raises(InvalidConfigError, match="already arrived"):
        sim.amend(0, runtime=3)
    with pytest.raises(InvalidConfigError, match="at least"):
        sim.amend(2, submit=1.0)
    with pytest.raises(InvalidConfigError, match="runtime"):
        sim.amend(2, runtime=-1)


# ------------------------------------------------------------------ config, CLI
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mode": "later"}, "mode must be one of"),
        ({"history": -1}, "history"),
        ({"jobs": 0}, "jobs"),
        ({"wait_predictor": "oracle"}, "wait_predictor"),
        ({"threshold": 1.0}, "threshold"),
        ({"score_own": "yes"}, "score_own"),
    ],
)
def test_bad_config_raises_clear_errors(kwargs, match):
    with pytest.raises(InvalidConfigError, match=match):
        MoldingConfig(**kwargs)


def _mold_cli(tmp_path, capsys, *extra: str) -> tuple[str, dict]:
    """``hpcgym mold`` on the bundled slice (1,500 history jobs, 400 managed, QBETS): stdout and the JSON."""
    from hpcgym.cli import main

    argv = ["mold", "--no-progress", "--history", "1500", "--jobs", "400", "--wait-predictor", "qbets"]
    argv += [*extra, "--json", str(tmp_path / "m.json"), "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    return capsys.readouterr().out, json.loads((tmp_path / "m.json").read_text())


def test_cli_runs_and_writes_its_outputs(tmp_path, capsys):
    out, data = _mold_cli(tmp_path, capsys, "--mode", "delay")
    assert "reduction %" in out and "jobs held by the manager" in out and "95 % CI" in out
    # 400 jobs are one block of 1,000: no interval, said in words, not "[+nan, +nan]" (issue 24.7)
    assert "nan" not in out and "95 % CI no interval (one block) over 1 block of" in out
    assert data["jobs"] == 400 and data["mode"] == "delay" and data["config"]["history"] == 1500
    assert (tmp_path / "o" / "jobs.csv").read_text().startswith("job,original_size,size,hold_s")


def test_cli_several_seeds_prints_each_and_their_mean(tmp_path, capsys):
    from hpcgym.cli import main

    out, data = _mold_cli(tmp_path, capsys, "--seed", "1,2")
    assert "seed 1: managed - EASY" in out and "seed 2: managed - EASY" in out and "over seeds 1, 2" in out
    assert "nan" not in out and out.count("no interval (one block)") == 3
    assert [r["config"]["seed"] for r in data["runs"]] == [1, 2] and data["over_seeds"]["seeds"] == [1, 2]
    lines = (tmp_path / "o" / "jobs.csv").read_text().splitlines()
    assert lines[0].startswith("seed,job,") and len(lines) == 1 + 2 * 400
    with pytest.raises(SystemExit):  # a repeated seed: argparse's usage error
        main(["mold", "--no-progress", "--jobs", "400", "--seed", "1,1"])
    assert "each once" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "match"),
    [(["--history", "20000"], "history=20000"), (["--jobs", "0"], "jobs must be"), (["--mode", "x"], "mode")],
)
def test_cli_errors_are_one_line(argv, match, capsys):
    from hpcgym.cli import main

    with pytest.raises(SystemExit) if argv[0] == "--mode" else _nothing():
        assert main(["mold", "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(match, err)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False
