"""004 section 7's ranking by average degradation, Fig. 9's shares and Table 12's statistics."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.paramstudy import (
    degradation_ranking,
    rank_distribution,
    size_degradation,
    subspace_statistics,
)


def _rows():
    # Two traces, two metrics: four testcases. Hand-computed degradations (percent):
    #   A: X wait 100/100 -> 0,   X bsld 4/2 -> 100, Y wait 50/50 -> 0,   Y bsld 3/3 -> 0   avg 25
    #   B: X wait 150/100 -> 50,  X bsld 2/2 -> 0,   Y wait 75/50 -> 50,  Y bsld 3/3 -> 0   avg 25
    #   C: X wait 300/100 -> 200, X bsld 3/2 -> 50,  Y wait 100/50 -> 100, Y bsld 6/3 -> 100 avg 112.5
    data = {
        "A": (1, "all", {"X": (100, 4), "Y": (50, 3)}),
        "B": (2, "all", {"X": (150, 2), "Y": (75, 3)}),
        "C": (2, "ext", {"X": (300, 3), "Y": (100, 6)}),
    }
    return [
        {"config": c, "k": k, "type": t, "trace": tr, "wait": w, "bsld": b}
        for c, (k, t, by) in data.items()
        for tr, (w, b) in by.items()
    ]


def test_degradations_averages_and_ranks_are_the_papers_definition():
    r = degradation_ranking(_rows(), parameters=("k", "type"))
    assert r.testcases == [("X", "wait"), ("X", "bsld"), ("Y", "wait"), ("Y", "bsld")]
    assert r.configs == ["A", "B", "C"]  # A and B tie; the stable order keeps A first
    np.testing.assert_allclose(r.average, [25.0, 25.0, 112.5])
    np.testing.assert_allclose(r.degradation[2], [200.0, 50.0, 100.0, 100.0])
    assert r.rank.tolist() == [1, 1, 3]  # ties share the better rank, as Table 11's "7/8"
    assert r.rows(1) == [{"rank": 1, "config": "A", "average_degradation_pct": 25.0, "k": 1, "type": "all"}]


def test_rank_distribution_shares_sum_to_one_per_bin():
    r = degradation_ranking(_rows(), parameters=("k", "type"))
    values, shares = rank_distribution(r, "type", bins=3)
    assert values == ["all", "ext"]
    # ranks 1, 1, 3 of 3 -> bins 0, 0, 2; bin 1 is empty
    np.testing.assert_allclose(shares, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    values, shares = rank_distribution(r, "k", bins=1, bin_of=lambda k: "1-5")
    assert values == ["1-5"] and shares.tolist() == [[1.0]]


def test_size_degradation_and_subspace_statistics():
    r = degradation_ranking(_rows(), parameters=("k", "type"))
    assert size_degradation(r) == [
        {"size": 1, "configs": 1, "mean": 25.0, "std": 0.0},
        {"size": 2, "configs": 2, "mean": 68.75, "std": 43.75},
    ]
    s = subspace_statistics(r, type="all")
    assert s == {"configs": 2, "min": 25.0, "max": 25.0, "mean": 25.0, "std": 0.0, "best_rank": 1}
    assert subspace_statistics(r, k=lambda k: k >= 2, type={"all", "ext"})["configs"] == 2
    with pytest.raises(InvalidConfigError, match="unknown parameter 'size'"):
        subspace_statistics(r, size=1)
    with pytest.raises(InvalidConfigError, match="no configuration"):
        subspace_statistics(r, type="imm")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rows: rows[:-1], "configuration 'C' has no result for trace 'Y'"),
        (lambda rows: [*rows, rows[0]], "given twice"),
        (lambda rows: [{**rows[0], "wait": 0}, *rows[1:]], "wait of 'A' on 'X' is 0.0"),
        (lambda rows: [{k: v for k, v in rows[0].items() if k != "bsld"}], "row 0 has no column 'bsld'"),
        (lambda rows: [], "no rows"),
    ],
)
def test_bad_tables_are_named(change, message):
    with pytest.raises(InvalidConfigError, match=message):
        degradation_ranking(change(_rows()), parameters=("k", "type"))


def test_window_bins_and_figures():
    from hpcgym.experiments.paramstudy import figure9, figure10, window_bin

    assert [window_bin(s) for s in (1, 5, 6, 30)] == ["1-5", "1-5", "6-10", "26-30"]
    pytest.importorskip("matplotlib")
    r = degradation_ranking(_rows(), parameters=("k", "type"))
    fig = figure9(r, ("type", "k"), bins=3)
    assert len(fig.axes) == 2
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == [100.0, 0.0, 0.0, 0.0, 0.0, 100.0]  # 'all' fills bin 0, 'ext' bin 2
    assert len(figure10(r).axes) == 1


def _sweep_rows():
    base = {"dispatcher": "easy++", "load": 1.0}
    out = []
    for corr, k, wait in (
        ("estimate", 1, 10.0),
        ("gradual", 2, 30.0),
        ("gradual", 3, 35.0),
        ("exponential", 9, 26.0),
    ):
        for trace, scale in (("X", 1.0), ("Y", 2.0)):
            out.append(
                {
                    **base,
                    "predictor": f"user-history:k={k},metric=min,correction={corr}",
                    "trace": trace,
                    "mean_wait_s": wait * scale,
                    "mean_bsld": 2.0 * scale,
                }
            )
    return out


def test_study_rows_read_configurations_and_leave_out_partial_ones():
    from hpcgym.experiments.paramstudy import study_rows

    rows, notes = study_rows(_sweep_rows())
    assert len(rows) == 8 and notes == []
    assert rows[0]["correction"] == "estimate" and rows[0]["k"] == 1 and rows[0]["propagation"] == "no"
    rows, notes = study_rows(_sweep_rows()[:-1])  # the last configuration lacks trace Y
    assert len(rows) == 6 and notes == ["1 configurations measured on only some of the 2 traces are left out"]
    with pytest.raises(InvalidConfigError, match="several dispatchers"):
        study_rows([*_sweep_rows(), {**_sweep_rows()[0], "dispatcher": "easy"}])
    with pytest.raises(InvalidConfigError, match="not a user-history configuration"):
        study_rows([{**_sweep_rows()[0], "predictor": "walltime"}])


def test_findings_read_the_ranking():
    from hpcgym.experiments.paramstudy import PARAMETERS, findings, study_rows

    rows, _ = study_rows(_sweep_rows())
    r = degradation_ranking(rows, PARAMETERS)
    # degradations: wait 10/30/35/26 against 10 on both traces (bsld equal): 0, 200, 250, 160
    # percent on the two wait testcases, 0 on the bsld ones -> averages 0, 100, 125, 80
    np.testing.assert_allclose(r.average, [0.0, 80.0, 100.0, 125.0])
    f = findings(r)
    assert [x["holds"] for x in f[:2]] == [True, True]  # estimate ranks first; both gradual last
    assert f[2]["holds"] is True
    assert f[2]["numbers"] == {
        "mean degradation of min, window < 7 [%]": 75.0,
        "mean degradation of min, window >= 7 [%]": 80.0,
    }
    assert f[3]["holds"] is None  # no configuration of the suggested subspace (metric is min here)


def test_window_sizes_and_their_bins_are_in_numeric_order():
    rows = [
        {"config": f"c{k}", "k": k, "trace": "X", "wait": float(100 - k), "bsld": 1.0} for k in (12, 3, 7, 25)
    ]
    r = degradation_ranking(rows, parameters=("k",))
    assert rank_distribution(r, "k", bins=2)[0] == [3, 7, 12, 25]
    from hpcgym.experiments.paramstudy import window_bin

    assert rank_distribution(r, "k", bins=2, bin_of=window_bin)[0] == ["1-5", "6-10", "11-15", "21-25"]
