"""Prediction metrics: accuracy (time-weighted), MAE, under/over rates, predictability."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from conftest import build_workload

from hpcgym.baselines import EasyBackfilling, make_policy, preset_predictor
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import Corrected, Predictor
from hpcgym.sim import (
    Schedule,
    Simulator,
    accuracy,
    corrections_per_job,
    job_accuracy,
    predictability,
    prediction_metrics,
)
from hpcgym.workloads import Workload, load_default


def workload(jobs: Sequence[Sequence[float]], procs: int) -> Workload:
    """Jobs ``(submit, runtime, procs, estimate)``, one user."""
    return build_workload(jobs, procs)


class Given(Predictor):
    """Predicts the given seconds for each job."""

    name = "given"

    def __init__(self, seconds: Sequence[float]) -> None:
        super().__init__()
        self.seconds = list(seconds)

    def on_submit(self, job: int, now: float) -> None:
        self.prediction[job] = self.seconds[job]


def run(w: Workload, predictor: Predictor, dispatcher=None) -> Schedule:
    return Simulator(w, predictor=predictor).run(dispatcher or make_policy("easy"))


def test_accuracy_definition():
    assert accuracy(100.0, 100.0) == 1.0
    assert accuracy(200.0, 50.0) == 0.25  # over-prediction: T / P
    assert accuracy(50.0, 200.0) == 0.25  # under-prediction: P / T
    assert accuracy(0.0, 0.0) == 1.0
    assert accuracy(10.0, 0.0) == 0.0
    assert accuracy(0.0, 10.0) == 0.0


def test_accuracy_is_time_weighted_over_the_jobs_life():
    # one processor: job 0 runs [0, 50]; job 1 arrives at 0, waits, runs [50, 300] (250 s)
    # with prediction 100 and estimate 300: corrected at 50 + 100 = 150 to 300.
    # life [0, 300]: P=100 for 150 s (accuracy 100/250 = 0.4), P=300 for 150 s (250/300)
    w = workload([(0, 50, 1, 50), (0, 250, 1, 300)], procs=1)
    s = run(w, Corrected(Given([50, 100])))
    assert s.prediction_changes == [(150.0, 1, 300.0)]
    acc = job_accuracy(s)
    assert acc[0] == 1.0
    assert acc[1] == pytest.approx((0.4 * 150 + (250 / 300) * 150) / 300)
    m = prediction_metrics(s, include_all=True)
    assert m["accuracy"] == pytest.approx((1.0 + acc[1]) / 2)
    assert m["accuracy_at_submit"] == pytest.approx((1.0 + 0.4) / 2)
    assert corrections_per_job(s).tolist() == [0, 1]
    assert (m["corrections_mean"], m["corrections_std"]) == (0.5, 0.5)


def test_several_corrections_weight_each_prediction_by_its_time():
    # runs 400 s, estimate 300, predicted 100: 100 on [0,100], 300 on [100,300],
    # 360 on [300,360], 1260 on [360,400]
    w = workload([(0, 400, 1, 300)], procs=1)
    s = run(w, Corrected(Given([100])))
    expected = (100 * 100 / 400 + 200 * 300 / 400 + 60 * 360 / 400 + 40 * 400 / 1260) / 400
    assert job_accuracy(s)[0] == pytest.approx(expected)


def test_a_log_out_of_time_order_gives_the_same_accuracy_bit_for_bit():
    """The engine's log is in time order (a stable sort by job orders the segments); any other
    order of the same revisions takes the full sort and must give the same figures."""
    import dataclasses

    w = load_default().window(400)
    s = Simulator(w, predictor=preset_predictor("easy++")).run(make_policy("easy++"))
    rows = np.array(list(s.prediction_changes))
    assert len(rows) > 50
    # shuffled, but the revisions of one job at one instant keep their order (the last one holds)
    _, group = np.unique(rows[:, :2], axis=0, return_inverse=True)
    key = np.random.default_rng(0).permutation(group.max() + 1)[group.reshape(-1)]
    shuffled = [tuple(r) for r in rows[np.lexsort((np.arange(len(rows)), key))].tolist()]
    assert shuffled != list(s.prediction_changes)
    other = dataclasses.replace(s, prediction_changes=[(t, int(j), p) for t, j, p in shuffled])
    np.testing.assert_array_equal(job_accuracy(other), job_accuracy(s))
    assert prediction_metrics(other) == prediction_metrics(s)


def test_mae_and_under_over_rates_use_the_prediction_at_submission():
    w = workload([(0, 50, 1, 500), (0, 100, 1, 500), (0, 250, 1, 500)], procs=3)
    m = prediction_metrics(run(w, Given([100, 100, 100])), include_all=True)
    assert m["mae_s"] == pytest.approx((50 + 0 + 150) / 3)
    assert m["under_rate"] == pytest.approx(1 / 3)
    assert m["over_rate"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("policy", ["perfect++", "easy"])
def test_oracle_accuracy_is_exactly_one(policy):
    w = load_default().window(2000)
    s = Simulator(w, predictor=preset_predictor(policy, "real")).run(make_policy(policy))
    assert (job_accuracy(s) == 1.0).all()
    for include_all in (False, True):
        m = prediction_metrics(s, include_all=include_all)
        assert m["accuracy"] == 1.0
        assert (m["mae_s"], m["under_rate"], m["over_rate"], m["corrections_mean"]) == (0, 0, 0, 0)


def test_walltime_accuracy_is_runtime_over_estimate_when_under_the_estimate():
    w = workload([(0, 30, 1, 120), (0, 60, 1, 120)], procs=2)
    m = prediction_metrics(run(w, Given([120, 120])), include_all=True)
    assert m["accuracy"] == pytest.approx((0.25 + 0.5) / 2)


# ---------------------------------------------------------------- predictability
def reserved_schedule(first_runtime: float) -> Schedule:
    # 2 processors: job 0 (2 procs, estimate 100) runs from 0; job 1 (2 procs) arrives
    # at 10, waits and gets the reservation 100 (job 0's estimated end); job 0 never does
    w = workload([(0, first_runtime, 2, 100), (10, 10, 2, 50)], procs=2)
    dispatcher = EasyBackfilling(record_reservations=True)
    return run(w, Given([100, 50]), dispatcher)


def test_predictability_early_start():
    s = reserved_schedule(60)  # job 0 ends at 60: job 1 starts 40 s before its reservation
    assert np.isnan(s.extras["first_reservation"][0])
    assert s.extras["first_reservation"][1] == 100
    p = predictability(s, include_all=True)
    assert p["reserved_rate"] == 0.5
    assert (p["abs_diff_mean_s"], p["abs_diff_median_s"], p["abs_diff_std_s"]) == (40, 40, 0)
    assert p["delayed_rate"] == 0
    assert np.isnan(p["delay_mean_s"])


def test_predictability_delay_beyond_the_reservation():
    s = reserved_schedule(150)  # job 0 outlives its estimate: job 1 starts 50 s late
    p = predictability(s, include_all=True)
    assert (p["reserved_rate"], p["delayed_rate"]) == (0.5, 0.5)
    assert (p["abs_diff_mean_s"], p["delay_mean_s"], p["delay_median_s"]) == (50, 50, 50)


def test_predictability_needs_recorded_reservations():
    s = run(workload([(0, 1, 1, 1)], procs=1), Given([1]))
    with pytest.raises(InvalidConfigError, match="record_reservations"):
        predictability(s)


def test_past_reservations_are_recorded_as_the_predicted_ends_give_them():
    # 2 processors: job 0 (estimate 10) runs 100 s; job 1 arrives at 20 when job 0's
    # predicted end (10) is past. EASY reserves "now" (20); the paper's bookkeeping keeps
    # 10. Same schedule either way; the delay is 80 s or 90 s.
    w = workload([(0, 100, 2, 10), (20, 5, 2, 5)], procs=2)
    now = run(w, Given([10, 5]), EasyBackfilling(record_reservations=True))
    past = run(w, Given([10, 5]), EasyBackfilling(record_reservations=True, record_past_reservations=True))
    np.testing.assert_array_equal(now.start, past.start)
    assert now.extras["first_reservation"][1] == 20
    assert past.extras["first_reservation"][1] == 10
    assert predictability(now, include_all=True)["delay_mean_s"] == 80
    assert predictability(past, include_all=True)["delay_mean_s"] == 90
