"""Runtime predictors: hand-checked prediction sequences, correction steps, the 001 rules.

Predictors are driven two ways: directly (``reset`` then ``on_submit`` / ``on_end`` in
time order, as the engine would) and through the engine, whose expiry alarms trigger
prediction correction. Jobs are ``(submit, runtime, procs, estimate, user)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from conftest import build_workload

from hpcgym.baselines import make_policy
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.predict import (
    PREDICTORS,
    Corrected,
    LastKUserAverage,
    Oracle,
    Predictor,
    ProfilePredictor,
    Scaled,
    Walltime,
    make_predictor,
    predictor_names,
    register_predictor,
    with_correction,
)
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload

MIN = 60.0


def workload(jobs: Sequence[Sequence[float]], procs: int = 8, **columns: Sequence[int]) -> Workload:
    """Jobs ``(submit, runtime, procs, estimate[, user])``; extra integer columns by name."""
    return build_workload(jobs, procs, **columns)


def run(w: Workload, predictor: Predictor, policy: str = "easy"):
    return Simulator(w, predictor=predictor).run(make_policy(policy))


class FixedPrediction(Predictor):
    """A user-written predictor: every job is predicted to run ``seconds``."""

    name = "fixed"

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def on_submit(self, job: int, now: float) -> None:
        self.prediction[job] = self.seconds


# ----------------------------------------------------------------- W and R
def test_walltime_and_oracle_predict_estimate_and_runtime():
    w = workload([(0, 5, 1, 10), (1, 30, 1, 20)])
    assert run(w, Walltime()).first_prediction.tolist() == [10, 20]
    assert run(w, Oracle()).first_prediction.tolist() == [5, 30]


def test_predictors_other_than_the_oracle_never_see_run_times():
    seen = {}

    class Spy(Predictor):
        def reset(self, wl):
            super().reset(wl)
            seen["runtime"] = np.asarray(wl.runtime)

    run(workload([(0, 5, 1, 10)]), Spy())
    assert np.isnan(seen["runtime"]).all()


# ------------------------------------------------------ last-k user average
def drive(p: Predictor, w: Workload, events: list[tuple[str, int, float]]) -> list[float]:
    """Feed ``("submit"|"end", job, time)`` events; return each submitted job's prediction."""
    p.reset(w.public)
    out = []
    for kind, job, t in events:
        if kind == "submit":
            p.on_submit(job, t)
            out.append(float(p.prediction[job]))
        else:
            p.on_end(job, t, float(w.runtime[job]))
    return out


# user 1 runs 30, 60, 90 s jobs (estimate 100); then new jobs with various estimates
USER_JOBS = workload(
    [
        (0, 30, 1, 100, 1),  # 0
        (0, 60, 1, 100, 1),  # 1
        (0, 90, 1, 100, 1),  # 2
        (0, 1, 1, 100, 1),  # 3: new job, estimate 100
        (0, 1, 1, 50, 1),  # 4: new job, estimate 50 (below the average)
        (0, 1, 1, 100, 2),  # 5: another user
        (0, 1, 1, 200, 1),  # 6: new job, estimate 200
    ]
)


def test_user_average_sequence_k2():
    p = LastKUserAverage()
    preds = drive(
        p,
        USER_JOBS,
        [
            ("submit", 3, 0),  # no history: the estimate
            ("end", 0, 30),
            ("submit", 3, 30),  # one job: partial window, its run time
            ("end", 1, 60),
            ("submit", 3, 60),  # (30 + 60) / 2
            ("end", 2, 90),
            ("submit", 3, 90),  # the two most recent: (60 + 90) / 2
            ("submit", 4, 90),  # 75 > estimate 50: capped at the estimate
            ("submit", 5, 90),  # user 2 has no history: estimate
        ],
    )
    assert preds == [100, 30, 45, 75, 50, 100]


def test_user_average_k_is_configurable_and_full_window_optional():
    ends = [("end", 0, 30), ("end", 1, 60), ("end", 2, 90)]
    assert drive(LastKUserAverage(k=3), USER_JOBS, [*ends, ("submit", 3, 90)]) == [60]
    assert drive(LastKUserAverage(k=1), USER_JOBS, [*ends, ("submit", 3, 90)]) == [90]
    full = LastKUserAverage(k=3, full=True)
    assert drive(full, USER_JOBS, [("end", 0, 30), ("end", 1, 60), ("submit", 3, 60)]) == [100]
    assert make_predictor("user-avg:k=3").k == 3


def test_user_average_uses_the_most_recently_submitted_terminated_jobs():
    # job 1 was submitted after job 0 but ends first: by submission (the paper's
    # wording, the default) job 1 is the most recent; by termination, job 0
    events = [("end", 1, 60), ("end", 0, 70), ("submit", 3, 70)]
    assert drive(LastKUserAverage(k=1), USER_JOBS, events) == [60]
    assert drive(LastKUserAverage(k=1, order="end"), USER_JOBS, events) == [30]
    # a job ending late but submitted before every job in the window is ignored
    events = [("end", 1, 60), ("end", 2, 90), ("end", 0, 95), ("submit", 3, 95)]
    assert drive(LastKUserAverage(), USER_JOBS, events) == [75]
    assert drive(LastKUserAverage(order="end"), USER_JOBS, events) == [60]  # (90 + 30) / 2


def test_user_average_immediate_window_needs_equal_estimates():
    p = LastKUserAverage(window="immediate")
    ends = [("end", 0, 30), ("end", 1, 60)]  # both had estimate 100
    assert drive(p, USER_JOBS, [*ends, ("submit", 3, 60), ("submit", 6, 60)]) == [45, 200]
    # the window holds the last two; once one of them had another estimate, fall back
    mixed = workload([(0, 30, 1, 100), (0, 60, 1, 200), (0, 1, 1, 100), (0, 1, 1, 200)])
    p = make_predictor("user-avg-imm")
    assert drive(p, mixed, [("end", 0, 30), ("end", 1, 60), ("submit", 2, 60), ("submit", 3, 60)]) == [
        100,
        200,
    ]


@pytest.mark.parametrize("kwargs", [{"k": 0}, {"k": 1.5}, {"window": "extended"}, {"order": "start"}])
def test_user_average_rejects_bad_parameters(kwargs):
    with pytest.raises(InvalidConfigError):
        LastKUserAverage(**kwargs)


# ------------------------------------------------------------ correction
def alarms_and_predictions(runtime: float, estimate: float, first: float):
    """One job through the engine: its prediction changes ``(time, value)``."""
    w = workload([(0, runtime, 1, estimate)])
    s = run(w, Corrected(FixedPrediction(first)))
    assert s.first_prediction[0] == first
    return [(t, p) for t, _, p in s.prediction_changes]


def test_correction_outlived_prediction_gets_the_estimate():
    # predicted 100 s, estimate 300 s, runs 250 s: at t=100 the prediction becomes 300
    assert alarms_and_predictions(250, 300, 100) == [(100, 300)]


def test_correction_beyond_the_estimate_adds_1_then_15_x_2_to_the_i_minus_2_minutes():
    # runs 5000 s with estimate 300: 100 -> 300 (t=100) -> 360 (t=300, +1 min)
    # -> 1260 (t=360, +15 min) -> 3060 (t=1260, +30 min) -> 6660 (t=3060, +1 h); ends at 5000
    assert alarms_and_predictions(5000, 300, 100) == [
        (100, 300),
        (300, 300 + 1 * MIN),
        (360, 360 + 15 * MIN),
        (1260, 1260 + 30 * MIN),
        (3060, 3060 + 60 * MIN),
    ]


def test_correction_of_walltime_starts_beyond_the_estimate():
    # W = estimate 300, runs 400: +1 min at 300, +15 min at 360
    assert alarms_and_predictions(400, 300, 300) == [(300, 360), (360, 1260)]


def test_no_correction_when_the_job_ends_by_its_prediction():
    assert alarms_and_predictions(100, 300, 100) == []  # ends exactly at the prediction
    assert alarms_and_predictions(50, 300, 100) == []


def test_correction_counts_per_job_and_composes():
    p = make_predictor("user-avg+pcor")
    assert isinstance(p, Corrected) and isinstance(p.inner, LastKUserAverage) and p.corrects
    assert with_correction(p) is p
    w = workload([(0, 5000, 1, 300)])
    c = Corrected(FixedPrediction(100))
    run(w, c)
    assert c.corrections.tolist() == [5]


def test_correction_never_kills_and_never_shortens():
    w = workload([(0, 250, 1, 300), (0, 400, 1, 300)])
    s = Simulator(w, predictor=Corrected(FixedPrediction(10))).run(make_policy("easy"))
    assert (s.end - s.start).tolist() == [250, 400]
    assert not s.killed.any()


def test_a_predictor_may_revise_a_running_job_and_the_engine_rearms_its_alarm():
    expired = []

    class Revising(Predictor):
        corrects = True

        def on_submit(self, job, now):
            self.prediction[job] = 1000.0

        def on_end(self, job, now, runtime):
            if job == 1:  # job 0 is running: predict it ends at 50 instead of 1000
                self.revise(0, now, 50.0)

        def on_expire(self, job, now, elapsed):
            expired.append((job, now, elapsed))
            return float(self.estimate[job])

    w = workload([(0, 200, 1, 500), (0, 10, 1, 500)])
    s = run(w, Revising())
    assert expired == [(0, 50.0, 50.0)]
    assert [(t, j, p) for t, j, p in s.prediction_changes] == [(10, 0, 50), (50, 0, 500)]


class Revising(Predictor):
    """Predicts 1000 s; when job 1 ends, revises running job 0 to 50 s."""

    def __init__(self, corrects: bool = True) -> None:
        super().__init__()
        self.corrects = corrects
        self.expired: list[tuple[int, float, float]] = []

    def on_submit(self, job, now):
        self.prediction[job] = 1000.0

    def on_end(self, job, now, runtime):
        if job == 1:
            self.revise(0, now, 50.0)

    def on_expire(self, job, now, elapsed):
        self.expired.append((job, now, elapsed))
        return float(self.estimate[job])


def test_take_revised_hands_over_each_revised_job_once_and_forgets_them():
    p = Predictor()
    p.reset(workload([(0, 10, 1, 100)] * 4))
    assert not p.has_revised() and p.take_revised() == []
    p.revise(3, 1.0, 20.0)
    p.revise(1, 2.0, 30.0)
    p.revise(3, 3.0, 40.0)
    assert p.has_revised()
    assert p.take_revised() == [3, 1]  # first-revision order, each job once
    assert not p.has_revised() and p.take_revised() == []
    assert p.changes == [(1.0, 3, 20.0), (2.0, 1, 30.0), (3.0, 3, 40.0)]  # every revision logged
    p.revise(2, 4.0, 50.0)
    p.reset(p.workload)
    assert not p.has_revised()  # reset forgets pending revisions


def test_the_engine_asks_through_the_methods_only():
    # a predictor keeping its revisions in its own structure (no base-class set at all)
    class OwnStore(Revising):
        def reset(self, workload):
            super().reset(workload)
            self.pending: list[int] = []

        def revise(self, job, now, value):
            self.prediction[job] = value
            self.changes.append((now, job, float(value)))
            self.pending.append(job)

        def has_revised(self):
            return bool(self.pending)

        def take_revised(self):
            out, self.pending = self.pending, []
            return out

    w = workload([(0, 200, 1, 500), (0, 10, 1, 500)])
    p = OwnStore()
    s = run(w, p)
    assert p.expired == [(0, 50.0, 50.0)]  # the revision at t=10 re-armed job 0's alarm
    assert [(t, j, q) for t, j, q in s.prediction_changes] == [(10, 0, 50), (50, 0, 500)]
    assert p.pending == []  # the engine took every revision
    # wrapped: Corrected's revision after on_expire goes into the inner's own store too
    inner = OwnStore(corrects=False)
    s = run(w, Corrected(inner))
    assert [(t, j, q) for t, j, q in s.prediction_changes] == [(10, 0, 50), (50, 0, 500)]
    assert inner.pending == [] and not inner._revised


def test_wrappers_pass_an_inner_revision_on_to_the_engine():
    w = workload([(0, 200, 1, 500), (0, 10, 1, 500)])
    # Corrected: the inner's revision (50 s) is re-armed and then corrected to the estimate
    inner = Revising(corrects=False)
    s = run(w, Corrected(inner))
    assert [(t, j, q) for t, j, q in s.prediction_changes] == [(10, 0, 50), (50, 0, 500)]
    assert not inner.has_revised()
    # Scaled: the inner's 50 s becomes 100 s, outlived at t=100 with 50 inner seconds
    inner = Revising()
    p = Scaled(inner, 2)
    s = run(w, p)
    assert inner.expired == [(0, 100.0, 50.0)]
    assert [(t, j, q) for t, j, q in s.prediction_changes] == [(10, 0, 100), (100, 0, 1000)]
    assert not inner.has_revised() and not p.has_revised()


def test_scaled_passes_on_what_the_inner_revises_while_correcting():
    # at job 0's expiry the inner also shortens job 1 to 60 s (120 s scaled): the engine
    # must re-arm job 1 at t=120, not at its old scaled prediction 2000
    class Inner(Predictor):
        corrects = True

        def __init__(self) -> None:
            super().__init__()
            self.expired: list[tuple[int, float, float]] = []

        def on_submit(self, job, now):
            self.prediction[job] = 50.0 if job == 0 else 1000.0

        def on_expire(self, job, now, elapsed):
            self.expired.append((job, now, elapsed))
            if job == 0:
                self.revise(1, now, 60.0)
            return float(self.estimate[job])

    inner = Inner()
    s = run(workload([(0, 150, 1, 1000), (0, 400, 1, 1000)]), Scaled(inner, 2))
    assert inner.expired == [(0, 100.0, 50.0), (1, 120.0, 60.0)]
    assert [(t, j, q) for t, j, q in s.prediction_changes] == [(100, 1, 120), (100, 0, 2000), (120, 1, 2000)]


# ------------------------------------------------------------- doubling
def test_scaled_doubles_predictions_and_its_estimate():
    w = workload([(0, 50, 1, 100)])
    s = run(w, make_predictor("walltime+x2"))
    assert s.first_prediction.tolist() == [200]


def test_x2_plus_corrects_the_doubled_prediction_to_the_doubled_estimate():
    # inner predicts 100, doubled 200; runs 250 with estimate 300: at t=200 -> 600
    w = workload([(0, 250, 1, 300)])
    s = run(w, Corrected(Scaled(FixedPrediction(100), 2)))
    assert s.first_prediction.tolist() == [200]
    assert [(t, p) for t, _, p in s.prediction_changes] == [(200, 600)]


def test_scaling_a_correcting_predictor_slows_its_clock():
    # Scaled(Corrected(fixed 100), 2): the doubled prediction 200 is outlived at t=200;
    # the inner sees 100 s elapsed, corrects to its estimate 300, doubled to 600
    w = workload([(0, 250, 1, 300)])
    p = Scaled(Corrected(FixedPrediction(100)), 2)
    assert p.corrects
    s = run(w, p)
    assert [(t, q) for t, _, q in s.prediction_changes] == [(200, 600)]


# ------------------------------------------------------------- registry
def test_names_aliases_parameters_and_modifiers():
    assert isinstance(make_predictor("W"), Walltime)
    assert isinstance(make_predictor("oracle"), Oracle)
    assert isinstance(make_predictor("D"), ProfilePredictor)
    assert make_predictor("tsafrir").name == "user-avg"
    p = make_predictor("user-avg:k=3,window=immediate+pcor")
    assert (p.inner.k, p.inner.window, p.name) == (3, "immediate", "user-avg:k=3,window=immediate+pcor")
    assert make_predictor("walltime+pcor+x2").name == "walltime+x2+pcor"
    assert {"walltime", "real", "user-avg", "user-avg-imm", "profile"} <= set(predictor_names())


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("nope", UnknownNameError),
        ("user-avg+bogus", InvalidConfigError),
        ("user-avg+xtwo", InvalidConfigError),
        ("user-avg:k", InvalidConfigError),
        ("user-avg:colour=red", InvalidConfigError),
        ("user-avg:k=0", InvalidConfigError),
        ("walltime+x0", InvalidConfigError),
    ],
)
def test_bad_predictor_names_raise_clear_errors(name, error):
    with pytest.raises(error):
        make_predictor(name)


def test_user_predictors_register_by_name():
    register_predictor("test-fixed", lambda seconds=7.0: FixedPrediction(seconds), "test only")
    try:
        p = make_predictor("test-fixed:seconds=42+pcor")
        s = run(workload([(0, 50, 1, 100)]), p)
        assert s.first_prediction.tolist() == [42]
        assert [(t, q) for t, _, q in s.prediction_changes] == [(42, 100)]
    finally:
        PREDICTORS.pop("test-fixed")
    with pytest.raises(InvalidConfigError):
        register_predictor("bad+name", Walltime, "")


# ----------------------------------------------- 001 profile heuristic
# user 1; jobs are (submit, runtime, procs, estimate); names and queues as columns.
# The history jobs 0-5 each match a new job by exactly one rule; prefix = name // 100.
PROFILE = workload(
    [
        (0, 11, 4, 100),  # 0: name 101, queue 1, wall 100, 4 procs
        (0, 12, 4, 100),  # 1: name 102 (same prefix 1), queue 1, wall 100, 4 procs
        (0, 13, 8, 200),  # 2: name 201, queue 1, wall 200, 8 procs
        (0, 14, 8, 300),  # 3: name 302, queue 1, wall 300, 8 procs
        (0, 15, 1, 900),  # 4: name 401, queue 2, wall 900, 1 proc
        (0, 16, 1, 900),  # 5: name 502, queue 2, wall 900, 1 proc
        (0, 1, 4, 100),  # 6: name 101 queue 1 wall 100 4 procs  -> rule 1 (job 0): 11
        (0, 1, 4, 100),  # 7: name 103 queue 1 wall 100 4 procs  -> rule 2 (prefix 1; job 1 last): 12
        (0, 1, 2, 200),  # 8: name 201 queue 1 wall 200 2 procs  -> rule 3 (job 2): 13
        (0, 1, 2, 300),  # 9: name 303 queue 1 wall 300 2 procs  -> rule 4 (prefix 3, job 3): 14
        (0, 1, 1, 100),  # 10: name 401 queue 9 wall 100 1 proc  -> rule 5 (job 4): 15
        (0, 1, 1, 10),  # 11: name 503 queue 9 wall 10 1 proc    -> rule 6 (prefix 5, job 5): 16 capped at 10
        (0, 1, 1, 50),  # 12: name 999, nothing matches          -> rule 7: the wall-time 50
    ],
    executable=[101, 102, 201, 302, 401, 502, 101, 103, 201, 303, 401, 503, 999],
    queue=[1, 1, 1, 1, 2, 2, 1, 1, 1, 1, 9, 9, 1],
)


def profile_predictions(p: ProfilePredictor) -> tuple[list[float], list[int]]:
    preds = drive(
        p, PROFILE, [*(("end", j, 10.0 + j) for j in range(6)), *(("submit", j, 20.0) for j in range(6, 13))]
    )
    return preds, p.rule[6:].tolist()


def test_profile_rules_one_by_one_in_order():
    preds, rules = profile_predictions(ProfilePredictor(name_prefix=lambda name: name // 100))
    assert rules == [1, 2, 3, 4, 5, 6, 7]
    assert preds == [11, 12, 13, 14, 15, 10, 50]


def test_profile_rule_order_prefers_the_fuller_match():
    # job 6 (name 101) also matches job 1 by prefix (rule 2) and job 0 by name (rule 5);
    # rule 1 (job 0, full profile) wins even though job 1 ended later
    p = ProfilePredictor(name_prefix=lambda name: name // 100)
    assert drive(p, PROFILE, [("end", 0, 11), ("end", 1, 12), ("submit", 6, 12)]) == [11]
    assert p.rule[6] == 1


def test_profile_on_swf_ids_has_no_prefix_rules():
    # without a prefix function (SWF: numeric executable ids) rules 2, 4, 6 collapse
    preds, rules = profile_predictions(ProfilePredictor())
    assert rules == [1, 7, 3, 7, 5, 7, 7]
    assert preds == [11, 100, 13, 300, 15, 10, 50]


def test_profile_takes_the_last_terminated_match_and_caps_by_the_wall_time():
    w = workload([(0, 500, 1, 900), (0, 40, 1, 900), (0, 1, 1, 300)], executable=[7, 7, 7], queue=[1, 1, 1])
    p = ProfilePredictor()
    # both history jobs share job 2's name and queue but not its wall-time: rule 5; the
    # last to end (job 0, 500 s) counts, capped at job 2's wall-time 300
    assert drive(p, w, [("end", 1, 40), ("end", 0, 500), ("submit", 2, 500)]) == [300]
    assert p.rule[2] == 5


def test_profile_missing_executable_is_one_name_per_user():
    # HPC2N-like: executable -1 everywhere, so rule 5 is "the user's last job"
    w = workload([(0, 70, 1, 900, 1), (0, 80, 1, 900, 2), (0, 1, 3, 500, 1)])
    p = make_predictor("profile")
    assert drive(p, w, [("end", 0, 70), ("end", 1, 80), ("submit", 2, 80)]) == [70]
    assert p.rule[2] == 5


def test_the_guides_own_predictor_example_runs():
    import re
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "PREDICTORS.md"
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(), flags=re.S)
    assert blocks, "docs/PREDICTORS.md has a python example"
    try:
        for code in blocks:
            exec(compile(code, str(guide), "exec"), {"__name__": "guide"})
    finally:
        PREDICTORS.pop("last-same-size", None)
