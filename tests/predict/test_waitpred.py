"""Queue-wait prediction (003 section II): the log's system state, APQ, IBL and QBETS."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import (
    FEATURES,
    APQConfig,
    IBLConfig,
    LogState,
    Protocol,
    QBETSConfig,
    apq_chain,
    apq_distances,
    dbscan_noise,
    histogram_distinctness,
    normalized_differences,
    predict_waits,
    qbets_bound,
    qbets_rank,
    tune,
)
from hpcgym.predict.waitpred.runs import _Context
from hpcgym.workloads import load_default
from tests.conftest import examples

SMALL = Protocol(1000, 1500, 500, 2001, 2600, min_test_jobs=100)
"""003's protocol scaled to the bundled 10,000-job slice of SDSC-SP2."""


@st.composite
def logs(draw: st.DrawFn, max_jobs: int = 40) -> LogState:
    """Random logs with coinciding events: equal submits, zero waits and run times, users repeating."""
    n = draw(st.integers(2, max_jobs))
    steps = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    submit = np.cumsum(steps).astype(float)
    wait = np.array(draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)), float)
    runtime = np.array(draw(st.lists(st.integers(0, 12), min_size=n, max_size=n)), float)
    size = draw(st.lists(st.integers(1, 16), min_size=n, max_size=n))
    estimate = np.array(draw(st.lists(st.integers(1, 30), min_size=n, max_size=n)), float)
    user = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    return LogState.from_columns(submit, wait, runtime, size, estimate, user, procs=16, name="random")


def brute_features(s: LogState, j: int, bins: int, max_time: float) -> tuple[np.ndarray, np.ndarray]:
    """Table II and Table I straight from the definitions, with :meth:`LogState.at`."""
    q, r = s.at(j)
    t = s.submit[j]
    mine_q, mine_r = q[s.user[q] == s.user[j]], r[s.user[r] == s.user[j]]
    f = [
        s.size[j],
        s.estimate[j],
        s.size[q].sum(),
        s.estimate[q].sum(),
        (t - s.submit[q]).sum(),
        s.size[r].sum(),
        s.estimate[r].sum(),
        (t - s.start[r]).sum(),
        (s.size[mine_q] * s.estimate[mine_q]).sum() / 3600,
        s.size[mine_q].sum(),
        s.estimate[mine_q].sum(),
        len(mine_q),
        (s.size[mine_r] * s.estimate[mine_r]).sum() / 3600,
        s.size[mine_r].sum(),
        s.estimate[mine_r].sum(),
        len(mine_r),
    ]

    def tbin(v: np.ndarray) -> np.ndarray:
        b = (np.log1p(np.maximum(v, 0)) / np.log1p(max_time) * bins).astype(int)
        return np.where(v > 0, np.minimum(b, bins - 1), 0)

    h = np.zeros((6, bins))
    sb = s.size_bins(bins)
    for row, (members, values) in enumerate(
        [
            (q, sb[q]),
            (q, tbin(s.estimate[q])),
            (q, tbin(t - s.submit[q])),
            (r, sb[r]),
            (r, tbin(s.estimate[r])),
            (r, tbin(t - s.start[r])),
        ]
    ):
        if len(members):
            h[row] = np.bincount(values, minlength=bins) / len(members)
    return np.array(f, float), h


@settings(max_examples=examples(60), deadline=None)
@given(logs())
def test_the_compiled_sweep_matches_the_definitions(s):
    summary, hist = s.features(len(s), 5, 100.0)
    for j in range(len(s)):
        f, h = brute_features(s, j, 5, 100.0)
        np.testing.assert_allclose(summary[j], f, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(hist[j], h, atol=1e-12)


def test_the_log_state_at_an_instant_by_hand():
    # job 0 runs 0..10; job 1 waits 0..5 then runs; job 2 arrives at 5 as job 1 starts;
    # job 3 arrives at 10 as job 0 ends
    s = LogState.from_columns(
        [0, 0, 5, 10], [0, 5, 0, 0], [10, 20, 1, 1], [1, 2, 3, 4], [9, 9, 9, 9], [1, 1, 2, 2], procs=8
    )
    q, r = s.at(2)  # at 5: job 1 starts at 5, after the submission, so it still waits
    assert q.tolist() == [1] and r.tolist() == [0]
    q, r = s.at(3)  # at 10: job 0 ends (ends come first), job 2 ended at 6, job 1 runs
    assert q.tolist() == [] and r.tolist() == [1]


def _perturb_after(s: LogState, j: int, rng: np.random.Generator) -> LogState:
    """``s`` with everything unknown at job ``j``'s submission changed."""
    t = s.submit[j]
    n = len(s)
    later = np.arange(n) > j
    wait, runtime = s.wait.copy(), s.runtime.copy()
    size, est, user = s.size.copy(), s.estimate.copy(), s.user.copy()
    size[later] = rng.integers(1, s.procs + 1, later.sum())
    est[later] = rng.uniform(1, 5000, later.sum())
    user[later] = rng.integers(1, 50, later.sum())
    runtime[later] = rng.uniform(0, 5000, later.sum())
    wait[later] = rng.uniform(0, 5000, later.sum())
    waiting = (np.arange(n) <= j) & (s.start >= t)  # queued at t (and j itself): start later still
    wait[waiting] += rng.uniform(0, 3000, waiting.sum())
    running = (s.start < t) & (s.end > t)  # running at t: end some other time after t
    runtime[running] = t - s.start[running] + rng.uniform(1, 3000, running.sum())
    return LogState.from_columns(s.submit, wait, runtime, size, est, user, procs=s.procs, name=s.name)


@pytest.mark.parametrize("method", ["apq", "apq-adaptive", "ibl", "qbets"])
def test_no_prediction_reads_the_future(method):
    s = LogState.from_workload(load_default().window(3000))
    targets = np.arange(2400, 2460)
    protocol = Protocol(1000, 1500, 500, 2001, 3000)
    cfg = {
        "apq": APQConfig(history=1000, weight_refresh=20),
        "apq-adaptive": APQConfig(  # 47 of the 60 targets compared by summaries, 13 by distributions
            history=1000, weight_refresh=20, state="adaptive", distinctness=0.75, far_model="weighted_average"
        ),
        "ibl": IBLConfig(history=1000),
        "qbets": QBETSConfig(history=1000),
    }[method]
    method = method.partition("-")[0]
    before = predict_waits(s, method, config=cfg, protocol=protocol, jobs=targets, tune_on_validation=False)
    future = _perturb_after(s, int(targets[-1]), np.random.default_rng(0))
    assert not np.array_equal(future.wait, s.wait)
    after = predict_waits(
        future, method, config=cfg, protocol=protocol, jobs=targets, tune_on_validation=False
    )
    np.testing.assert_array_equal(before.predicted, after.predicted)
    np.testing.assert_array_equal(before.case, after.case)
    # the guard above can fail: changing the past changes the predictions
    past = dataclasses.replace(
        s, wait=s.wait * 2, start=s.submit + s.wait * 2, end=s.submit + s.wait * 2 + s.runtime
    )
    changed = predict_waits(
        past, method, config=cfg, protocol=protocol, jobs=targets, tune_on_validation=False
    )
    assert not np.array_equal(before.predicted, changed.predicted)


@settings(max_examples=examples(25), deadline=None)
@given(logs(max_jobs=30), st.integers(0, 2**32 - 1))
def test_features_of_past_jobs_ignore_the_future(s, seed):
    j = len(s) // 2
    summary, hist = s.features(j + 1, 4, 50.0)
    other = _perturb_after(s, j, np.random.default_rng(seed))
    summary2, hist2 = other.features(j + 1, 4, 50.0)
    np.testing.assert_array_equal(summary, summary2)
    np.testing.assert_array_equal(hist, hist2)


def test_qbets_rank_by_hand():
    def exact(n, q, c):
        cdf = 0.0
        for k in range(n + 1):
            cdf += math.comb(n, k) * q**k * (1 - q) ** (n - k)
            if cdf >= c:
                return k + 1
        return n + 1

    # Binomial(10, 0.5): P(X <= 6) = 0.828, P(X <= 7) = 0.945 -> the 8th smallest of 10
    assert qbets_rank(10, 0.5, 0.9) == 8
    assert qbets_rank(100, 0.95, 0.95) == 99 == exact(100, 0.95, 0.95)
    assert qbets_rank(1000, 0.95, 0.95) == exact(1000, 0.95, 0.95)
    # 1 - 0.95**20 = 0.64 < 0.95: no order statistic of 20 values is a 95 % bound
    assert qbets_rank(20, 0.95, 0.95) == 21


def test_qbets_bound_on_a_small_history():
    waits = np.random.default_rng(1).permutation(np.arange(1.0, 101.0))
    assert qbets_bound(waits) == 99.0
    assert qbets_bound(np.arange(10.0)[::-1], 0.5, 0.9) == 7.0  # the 8th smallest of 0..9
    assert qbets_bound(np.arange(20.0)) == 19.0  # no bound that sure: the largest


def test_qbets_predicts_the_bound_of_the_jobs_started_before():
    s = LogState.from_workload(load_default().window(3000))
    p = predict_waits(
        s, "qbets", config=QBETSConfig(history=200), jobs=[2500], protocol=SMALL, tune_on_validation=False
    )
    started = np.flatnonzero((s.start < s.submit[2500]) & (np.arange(len(s)) >= SMALL.history_first - 1))
    last = started[np.lexsort((started, s.start[started]))][-200:]
    k = qbets_rank(200)
    assert p.predicted[0] == np.sort(s.wait[last])[k - 1]


def _separate_jobs(rows):
    """A log of jobs far apart (empty queue and machine at each submission): ``(size, estimate, wait)``."""
    n = len(rows)
    submit = np.arange(n) * 100_000.0
    size, est, wait = (np.array(c, float) for c in zip(*rows, strict=True))
    return LogState.from_columns(submit, wait, np.full(n, 10.0), size.astype(int), est, np.arange(n), procs=8)


def test_ibl_k_nearest_by_hand():
    # history: (size 4, ert 100, wait 50), (8, 1000, 500), (4, 900, 300); target (4, 150)
    s = _separate_jobs([(4, 100, 50), (8, 1000, 500), (4, 900, 300), (4, 150, 0)])
    proto = Protocol(1, 2, 1, 2, 4, min_test_jobs=1)
    one = predict_waits(
        s, "ibl", config=IBLConfig(neighbors=1), protocol=proto, jobs=[3], tune_on_validation=False
    )
    assert one.predicted[0] == pytest.approx(50.0, rel=1e-12)
    # HEOM over 16 features: size 0/1, ert |diff| / (1000 - 100), the rest 0 (empty system)
    d0 = math.sqrt((50 / 900) ** 2 / 16)
    d2 = math.sqrt((750 / 900) ** 2 / 16)
    w0, w2 = math.exp(-(d0**2)), math.exp(-(d2**2))
    two = predict_waits(
        s, "ibl", config=IBLConfig(neighbors=2), protocol=proto, jobs=[3], tune_on_validation=False
    )
    assert two.predicted[0] == pytest.approx((w0 * 50 + w2 * 300) / (w0 + w2), rel=1e-12)


def test_normalized_differences_by_hand():
    hist = np.array([[4.0, 100.0], [8.0, 1000.0]])
    nd = normalized_differences(hist, np.array([4.0, 550.0]))
    np.testing.assert_allclose(nd, [[0.0, 0.5], [1.0, 0.5]])


@pytest.mark.parametrize("seed", range(5))
def test_dbscan_noise_matches_scikit_learn(seed):
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    rng = np.random.default_rng(seed)
    x, y = rng.random(80) * 0.5, rng.random(80)
    for eps, min_pts in [(0.05, 2), (0.1, 3), (0.08, 5)]:
        labels = sklearn_cluster.DBSCAN(eps=eps, min_samples=min_pts).fit(np.column_stack([x, y])).labels_
        assert dbscan_noise(x, y, eps, min_pts) == int((labels == -1).sum())


def test_apq_chain_picks_sdm_regression_and_the_weighted_average():
    rng = np.random.default_rng(3)
    n = 400
    f_hist = rng.random((n, len(FEATURES)))
    cfg = APQConfig(k_percent=5, sdm_threshold=0.45, ridge_max_distance=0.7)
    # a dense close cluster of equal waits: SDM returns their wait
    d = np.concatenate([np.full(30, 0.02), rng.uniform(0.5, 1.0, n - 30)])
    waits = np.concatenate([np.full(30, 600.0), rng.uniform(0, 1e5, n - 30)])
    pred, case = apq_chain(cfg, d, d, waits, f_hist, f_hist[0])
    assert (pred, case) == (pytest.approx(600.0), 0)
    # everything far away (case A): by default the regression, a linear model of the
    # features, which fits these waits exactly
    far = rng.uniform(0.5, 0.6, n)
    linear = 1000 + 500 * f_hist[:, 2]
    regress = cfg
    pred, case = apq_chain(regress, far, far, linear, f_hist, f_hist[7])
    assert case == 1 and pred == pytest.approx(linear[7], rel=1e-2)
    # ... or, with far_model="weighted_average", the weighted average of the nearest by
    # summary distance (here the nearest, weight exp(-0.2**2), and the next at 0.3)
    d_summary = np.full(n, 0.9)
    d_summary[[11, 12]] = 0.2, 0.3
    weighted = dataclasses.replace(cfg, neighbors=2, far_model="weighted_average")
    pred, case = apq_chain(weighted, far, d_summary, linear, f_hist, f_hist[7])
    w = np.exp(-np.array([0.04, 0.09]))
    assert case == 2 and pred == pytest.approx((w @ linear[[11, 12]]) / w.sum())
    # a negative regression output: the weighted average of the nearest by summary distance
    negative = 1000 - 5000 * f_hist[:, 2]
    target = f_hist[int(np.argmin(negative))]
    pred, case = apq_chain(
        dataclasses.replace(regress, neighbors=1), far, far, np.maximum(negative, 0) + 1, f_hist, target
    )
    assert case in (1, 2)
    if case == 2:
        assert pred == (np.maximum(negative, 0) + 1)[int(np.argmin(far))]


def test_histogram_distinctness_by_hand():
    bins = 4
    flat, peaked, empty = np.full(bins, 0.25), np.eye(bins)[0], np.zeros(bins)
    half = np.array([0.5, 0.5, 0.0, 0.0])  # entropy log 2 of log 4: distinctness 1/2
    hist = np.stack(
        [
            np.stack([flat] * 6),  # all uniform: 0
            np.stack([peaked] * 6),  # all in one bin: 1
            np.stack([half, peaked, empty, empty, empty, empty]),  # mean of the two non-empty
            np.stack([empty] * 6),  # nothing queued or running: 0
        ]
    )
    np.testing.assert_allclose(histogram_distinctness(hist), [0.0, 1.0, 0.75, 0.0])


def test_the_adaptive_state_uses_distributions_only_for_distinct_histograms():
    rng = np.random.default_rng(5)
    n, bins = 50, 4
    summary = rng.random((n + 2, len(FEATURES)))
    hist = rng.dirichlet(np.ones(bins), size=(n + 2, 6))
    hist[n] = np.eye(bins)[1]  # target n: every histogram in one bin, distinctness 1
    hist[n + 1] = 1.0 / bins  # target n + 1: all uniform, distinctness 0
    h = np.arange(n)
    w_sum, w_dist = rng.random(len(FEATURES)), rng.random(8)
    for j in (n, n + 1):
        dist = apq_distances("distributions", summary, hist, h, j, w_sum, w_dist)
        summ = apq_distances("summaries", summary, hist, h, j, w_sum, w_dist)
        assert not np.allclose(dist[0], summ[0])
        adaptive = apq_distances("adaptive", summary, hist, h, j, w_sum, w_dist, distinctness=0.5)
        np.testing.assert_array_equal(adaptive[0], (dist if j == n else summ)[0])
        np.testing.assert_array_equal(adaptive[1], summ[1])


def test_tuning_tries_distinctness_only_in_the_adaptive_state():
    s = LogState.from_workload(load_default().window(3000))
    fixed = {k: v for k, v in dataclasses.asdict(APQConfig(history=500)).items() if k != "distinctness"}
    ctx = _Context(s, 2200, 999)
    targets = np.arange(2100, 2200)
    _, rows = tune(ctx, "apq", targets, APQConfig(history=500), fixed=fixed)
    assert [r["parameter"] for r in rows] == ["base", "tuned"]
    _, rows = tune(ctx, "apq", targets, APQConfig(history=500, state="adaptive"), fixed=fixed)
    assert [r["value"] for r in rows if r["parameter"] == "distinctness"] == [0.5, 0.6]


def test_the_sklearn_backend_gives_the_same_predictions():
    pytest.importorskip("sklearn")
    s = LogState.from_workload(load_default().window(3000))
    jobs = np.arange(2500, 2540)
    cfg = APQConfig(history=800, state="summaries")
    fast = predict_waits(s, "apq", config=cfg, protocol=SMALL, jobs=jobs, tune_on_validation=False)
    ref = predict_waits(
        s,
        "apq",
        config=dataclasses.replace(cfg, backend="sklearn"),
        protocol=SMALL,
        jobs=jobs,
        tune_on_validation=False,
    )
    np.testing.assert_array_equal(fast.case, ref.case)
    np.testing.assert_allclose(fast.predicted, ref.predicted, rtol=1e-6, atol=1e-6)


def test_same_input_same_predictions_and_tuning_uses_validation_only():
    s = LogState.from_workload(load_default())
    a = predict_waits(s, "apq", protocol=SMALL, params={"history": 500})
    b = predict_waits(s, "apq", protocol=SMALL, params={"history": 500})
    np.testing.assert_array_equal(a.predicted, b.predicted)
    assert a.config == b.config and a.tuning == b.tuning
    assert a.jobs[0] == 2000 and len(a.jobs) == 600
    assert all(r["parameter"] != "history" for r in a.tuning)  # a parameter set by hand is not tuned
    # the test set's waits do not take part in the tuning
    test_changed = dataclasses.replace(s, wait=s.wait.copy())
    test_changed.wait[2000:] = 0.0
    c = predict_waits(test_changed, "apq", protocol=SMALL, params={"history": 500})
    assert c.config == a.config


def test_a_trace_too_short_for_the_protocol_names_the_job_counts():
    s = LogState.from_workload(load_default())
    with pytest.raises(InvalidConfigError, match=r"8,943 jobs.*at least 21,000 \(test set from job 20,001"):
        predict_waits(s, "qbets")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "sjf"}, "method must be one of apq, ibl, qbets"),
        ({"params": {"k_percent": 0}}, "k_percent"),
        ({"params": {"state": "both"}}, "state must be one of distributions, summaries, adaptive"),
        ({"params": {"far_model": "sdm"}}, "far_model must be one of regression, weighted_average"),
        ({"params": {"distinctness": 1.5}}, "apq distinctness"),
        ({"params": {"no_such": 1}}, "unknown parameter 'no_such'"),
        ({"params": {"history": 2.5}}, "apq history"),
        ({"jobs": [10**6]}, "jobs must be"),
    ],
)
def test_bad_parameters_raise_clear_errors(kwargs, match):
    with pytest.raises(InvalidConfigError, match=match):
        predict_waits(load_default(), **{"method": "apq", "protocol": SMALL, **kwargs})


def test_bad_protocols_raise_clear_errors():
    with pytest.raises(InvalidConfigError, match="history_first"):
        Protocol(history_first=20_000)
    with pytest.raises(InvalidConfigError, match="test_first"):
        Protocol(test_first=70_000)


def test_cli_prints_table_v_and_writes_json_and_csv(tmp_path, capsys):
    from hpcgym.cli import main

    argv = ["waitpred", "--method", "ibl,qbets", "--history-first", "1000", "--validation-first", "1500"]
    argv += ["--validation-jobs", "500", "--test-first", "2001", "--test-last", "2600", "--no-progress"]
    argv += [
        "--json",
        str(tmp_path / "w.json"),
        "--csv",
        str(tmp_path / "w.csv"),
        "--param",
        "qbets:history=800",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "003 Table V" in out and "44.37" in out and "9.42" in out
    data = json.loads((tmp_path / "w.json").read_text())
    assert [r["method"] for r in data["rows"]] == ["ibl", "qbets"]
    assert data["rows"][1]["config"]["history"] == 800
    assert (tmp_path / "w.csv").read_text().startswith("trace,method,jobs")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--method", "apq,foo"], "'foo' is not one of"),
        (["--param", "apq:history"], "METHOD:key=value"),
        (["--param", "apq:k_percent=0"], "k_percent"),
        ([], "21,000"),
    ],
)
def test_cli_errors_are_one_line(argv, match, capsys):
    from hpcgym.cli import main

    assert main(["waitpred", "--no-progress", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(match, err)


def test_compare_aae_pairs_blocks_of_consecutive_jobs():
    pytest.importorskip("scipy")
    from hpcgym.predict import WaitPrediction, compare_aae

    rng = np.random.default_rng(0)
    n = 5000
    actual = rng.uniform(0, 36_000, n)

    def made(method, err_h):
        return WaitPrediction(
            method, "t", np.arange(n), actual + err_h * 3600, actual, np.ones(n), np.zeros(n, np.int8), None
        )

    a = made("apq", rng.uniform(0.5, 1.5, n))  # AAE about 1 h
    b = made("ibl", rng.uniform(1.5, 2.5, n))  # about 2 h
    c = compare_aae(a, b, block=500)
    assert c["blocks"] == 10
    assert c["ci_low"] <= c["aae_difference_hours"] <= c["ci_high"] < 0
    assert c["aae_difference_hours"] == pytest.approx(a.aae_hours - b.aae_hours)
    whole = {"case": "sdm", "jobs": n, "a_aae_hours": a.aae_hours, "b_aae_hours": b.aae_hours}
    assert c["by_case"] == [whole]
    # APQ's jobs split by the model that answered them: each part's AAE of both methods
    case = np.where(np.arange(n) < 1000, 2, 0).astype(np.int8)
    split = compare_aae(dataclasses.replace(a, case=case), b, block=500)["by_case"]
    assert [(p["case"], p["jobs"]) for p in split] == [("sdm", 4000), ("weighted_average", 1000)]
    err_a, err_b = np.abs(a.predicted - actual) / 3600, np.abs(b.predicted - actual) / 3600
    assert split[1]["a_aae_hours"] == pytest.approx(err_a[:1000].mean())
    assert split[1]["b_aae_hours"] == pytest.approx(err_b[:1000].mean())
    assert "by_case" not in compare_aae(b, a, block=500)
    with pytest.raises(InvalidConfigError, match="different jobs"):
        compare_aae(a, dataclasses.replace(b, jobs=np.arange(1, n + 1)))


def test_cli_compares_apq_with_a_confidence_interval(tmp_path, capsys):
    pytest.importorskip("scipy")
    from hpcgym.cli import main

    argv = ["waitpred", "--method", "apq,qbets", "--no-tune", "--param", "apq:history=800"]
    argv += ["--history-first", "1000", "--validation-first", "1500", "--validation-jobs", "500"]
    argv += [
        "--test-first",
        "2001",
        "--test-last",
        "5000",
        "--no-progress",
        "--json",
        str(tmp_path / "w.json"),
    ]
    argv += ["--predictions", str(tmp_path / "p.csv")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # three blocks of 1,000 test jobs: a real interval (one block would say "no interval")
    interval = r"95 % CI \[[-+]\d+\.\d\d, [-+]\d+\.\d\d\] over 3 "
    assert re.search(r"apq - qbets: AAE [-+]\d+\.\d\d h, " + interval, out)
    assert re.search(
        r"AAE \[h\] apq / qbets on the jobs of each APQ model: "
        r"sdm [\d,]+ jobs \d+\.\d\d / ",
        out,
    )
    data = json.loads((tmp_path / "w.json").read_text())
    assert data["comparisons"][0]["blocks"] == 3 and data["rows"][0]["cases"]
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "method,job,predicted_s,actual_s,case" and len(lines) == 1 + 2 * 3000
