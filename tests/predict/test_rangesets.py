"""003's execution-time rangeSets: the steps by hand, the online contract, the CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy
from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import (
    LoadTracker,
    RangeSet,
    RangeSetPredictor,
    TupleHistory,
    evaluate_runtime_predictor,
    fit_load_function,
    job_ranges,
    locate,
    make_predictor,
    merge_ranges,
    predict_rangeset,
    range_probabilities,
    relevant_count,
)
from hpcgym.sim import Simulator
from hpcgym.workloads import load_default


def test_merging_and_probabilities_by_hand():
    # [10, 20] and [12, 24] overlap by 8 of the shorter's 10 (> 50 %): one range [10, 24]
    lo, hi = merge_ranges(np.array([10.0, 0.0, 12.0, 30.0]), np.array([20.0, 4.0, 24.0, 30.0]))
    assert lo.tolist() == [0.0, 10.0, 30.0] and hi.tolist() == [4.0, 24.0, 30.0]
    history = np.array([1.0, 2.0, 3.0, 15.0, 30.0, 100.0])  # 100 falls in no range
    p = range_probabilities(lo, hi, history)
    assert p.tolist() == pytest.approx([3 / 5, 1 / 5, 1 / 5])
    rs = RangeSet(lo, hi, p)
    assert rs.point == pytest.approx(0.6 * 2 + 0.2 * 17 + 0.2 * 30)
    assert rs.length == 4 + 14 and rs.holds(24.0) and not rs.holds(25.0)


def test_partial_overlap_is_cut_and_new_ranges_share_a_tenth():
    # [8, 30] overlaps [0, 10] by 2, 20 % of the shorter: not merged, it starts at 10
    lo, hi = merge_ranges(np.array([0.0, 8.0, 40.0]), np.array([10.0, 30.0, 50.0]))
    assert lo.tolist() == [0.0, 10.0, 40.0] and hi.tolist() == [10.0, 30.0, 50.0]
    # 10 lies on the limit of the first two: it belongs to the upper one
    assert locate(lo, hi, np.array([10.0])).tolist() == [1]
    p = range_probabilities(lo, hi, np.array([1.0, 2.0, 10.0, 25.0]))
    # 1 and 2 in the first range, 10 and 25 in the second; the third is new
    assert p.tolist() == pytest.approx([0.45, 0.45, 0.1])


def _union_length(lo: np.ndarray, hi: np.ndarray) -> float:
    total, end = 0.0, -np.inf
    for a, b in sorted(zip(lo.tolist(), hi.tolist(), strict=True)):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


@given(
    ranges=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), min_size=1, max_size=25),
    overlap=st.sampled_from([0.0, 0.5, 0.9, 1.0]),
)
@settings(max_examples=examples(200))
def test_merged_ranges_are_disjoint_and_cover_the_same_times(ranges, overlap):
    lo = np.array([float(a) for a, _ in ranges])
    hi = lo + np.array([float(w) for _, w in ranges])
    mlo, mhi = merge_ranges(lo, hi, overlap)
    assert (mhi >= mlo).all()
    assert (mlo[1:] >= mhi[:-1]).all()  # sorted and disjoint (a shared limit at most)
    assert (mhi - mlo).sum() == pytest.approx(_union_length(lo, hi))
    for x in np.r_[lo, hi].tolist():  # every input time lies in a merged range
        assert locate(mlo, mhi, np.array([x]))[0] >= 0
    history = np.r_[lo, hi, -1.0]
    p = range_probabilities(mlo, mhi, history)
    assert p.sum() == pytest.approx(1.0) and (p > 0).all()


def test_relevant_history_grows_until_it_spans_ninety_percent():
    # latest first: 5.5, 6, 5 (span 1), then 1 (span 5), then 100 (span 99 = all)
    assert relevant_count(np.array([100.0, 1.0, 5.0, 6.0, 5.5]), recent=2) == 5
    assert relevant_count(np.array([1.0, 100.0, 5.0, 6.0, 5.5]), recent=2) == 4
    assert relevant_count(np.array([3.0, 4.0]), recent=10) == 2


def test_load_function_drops_a_jump_and_fits_the_rest():
    rng = np.random.default_rng(0)
    loads = np.repeat([0.12, 0.32, 0.52, 0.72], 6) + rng.uniform(0, 0.01, 24)
    # 100 -> 110 -> 400 (a jump of 264 %: another application) -> 120
    runtimes = np.repeat([100.0, 110.0, 400.0, 120.0], 6) + rng.uniform(0, 1, 24)
    slope, intercept = fit_load_function(loads, runtimes, x=0.5)
    chain_load = np.array([loads[:6].mean(), loads[6:12].mean(), loads[18:].mean()])
    chain_rt = np.array([runtimes[:6].mean(), runtimes[6:12].mean(), runtimes[18:].mean()])
    expect = np.polyfit(chain_load, chain_rt, 1)
    assert (slope, intercept) == pytest.approx(tuple(expect))
    assert fit_load_function(loads[:6], runtimes[:6]) is None  # one bin: no line


def test_job_ranges_shift_and_compact():
    # one history job (200 s at load 0.2), functions of slope 100 and 1000, target 0.4
    lo, hi = job_ranges(np.array([200.0]), np.array([0.2]), 0.4, np.array([100.0, 1000.0]), np.zeros(2))
    # predictions 220 and 400, median 310: compacted to [279, 341]
    assert lo.tolist() == pytest.approx([0.9 * 310]) and hi.tolist() == pytest.approx([1.1 * 310])
    lo, hi = job_ranges(np.array([200.0]), np.array([0.2]), 0.4, np.zeros(0), np.zeros(0))
    assert lo.tolist() == hi.tolist() == [200.0]
    rs = predict_rangeset(
        np.array([100.0, 100.0, 300.0]),
        np.array([0.1, 0.2, 0.3]),
        0.2,
        np.zeros(0),
        np.zeros(0),
        RangeSetPredictor().config,
    )
    assert rs.lo.tolist() == [100.0, 300.0] and rs.p.tolist() == pytest.approx([2 / 3, 1 / 3])


def test_history_keeps_the_latest_jobs():
    h = TupleHistory(3)
    for key, rt in [(1, 10.0), (2, 20.0), (1, 11.0), (1, 12.0)]:
        h.add(key, rt)
    assert list(h.runtimes_of(1)) == [11.0, 12.0] and list(h.runtimes_of(2)) == [20.0]
    h.add(3, 1.0)
    assert not h.runtimes_of(2) and list(h.keys) == [1, 1, 3]


def test_load_tracker_integrates_usage():
    t = LoadTracker()
    t.start(10.0, 4)
    t.start(20.0, 2)
    t.end(30.0, 4)
    assert t.used(5.0) == 0.0
    assert t.used(20.0) == 40.0
    assert t.used(30.0) == 40.0 + 60.0
    assert t.used(40.0) == 100.0 + 20.0
    assert t.in_use == 2


def _window(n: int = 3000):
    return load_default().window(n)


def test_altering_the_future_changes_no_prediction():
    """Jobs submitted after a prediction is made (their sizes, users, run times, waits) cannot change it."""
    w = _window()
    cut = 2000
    t_cut = w.submit[cut - 1]
    later = w.submit > t_cut
    rng = np.random.default_rng(1)
    idx = np.flatnonzero(later)
    perm = rng.permutation(idx)
    cols = {}
    for name in ("runtime", "procs_req", "user", "group", "queue", "log_wait"):
        col = np.asarray(getattr(w, name)).copy()
        col[idx] = col[perm]
        cols[name] = col
    cols["runtime"][idx] *= 3.0
    altered = dataclasses.replace(w, **cols, chunks=None, per_chunk=None, resources=())
    pred = "rangeset:refit=500"
    a = evaluate_runtime_predictor(w, pred, 500, None)
    b = evaluate_runtime_predictor(altered, pred, 500, None)
    past = a.jobs < np.flatnonzero(~later)[-1] + 1
    assert past.sum() >= cut - 500
    assert np.array_equal(a.point[past], b.point[past], equal_nan=True)
    assert np.array_equal(a.has_history[past], b.has_history[past])
    k = int(a.ptr[past.sum()])
    assert np.array_equal(a.ptr[: past.sum() + 1], b.ptr[: past.sum() + 1])
    assert np.array_equal(a.lo[:k], b.lo[:k]) and np.array_equal(a.p[:k], b.p[:k])
    assert not np.array_equal(a.point, b.point, equal_nan=True)  # the future itself did change


def test_same_input_same_result_and_sane_metrics():
    w = _window()
    a = evaluate_runtime_predictor(w, "rangeset:refit=500", 1000, 2000)
    b = evaluate_runtime_predictor(w, "rangeset:refit=500", 1000, 2000)
    assert np.array_equal(a.lo, b.lo) and np.array_equal(a.point, b.point, equal_nan=True)
    m = a.metrics()
    assert m["test_jobs"] == 2000
    assert m["jobs_evaluated"] + m["jobs_without_history"] == 2000
    assert 0 < m["SR"] <= 100 and 0 < m["baseline_SR"] <= 100
    assert m["C"] > 0 and m["AAE_min"] > 0 and m["load_functions"] > 0
    # every rangeSet is disjoint, sorted, and its probabilities sum to 1
    for i in range(len(a.jobs)):
        s, e = a.ptr[i], a.ptr[i + 1]
        if e > s:
            assert (a.lo[s + 1 : e] >= a.hi[s : e - 1]).all()
            assert a.p[s:e].sum() == pytest.approx(1.0)
            assert e - s <= 25
    assert np.array_equal(np.diff(a.ptr) > 0, a.has_history)


def test_the_predictor_plans_a_simulation():
    w = _window(1500)
    pred = make_predictor("rangeset:refit=300")
    s = Simulator(w, predictor=pred).run(make_policy("easy"))
    assert np.isfinite(s.start).all()
    fp = s.first_prediction
    assert (fp <= w.estimate).all() and (fp < w.estimate).any()
    with pytest.raises(InvalidConfigError, match="k must be a positive integer"):
        make_predictor("rangeset:k=0")
    with pytest.raises(InvalidConfigError, match="shift"):
        make_predictor("rangeset:shift=sideways")


def test_cli_predict_eval(capsys, tmp_path):
    args = ["predict-eval", "--jobs", "2500", "--test-from", "1500", "--test-jobs", "1000", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "SR" in out and "003 (paper)" in out
    ranges = tmp_path / "r.csv"
    assert main([*args, "--json", "--ranges-out", str(ranges)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["test_jobs"] == 1000 and row["paper"]["SR"] == 81
    assert ranges.read_text().startswith("job,runtime,point,lo,hi,p\n")
    assert main([*args[:-1], "--predictor", "user-avg", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["AAE_min"] > 0
    assert main([*args, "--test-from", "5000"]) == 2
    assert "leave no test job" in capsys.readouterr().err
    assert main([*args, "--predictor", "nope"]) == 2
