"""Full-trace reproduction of Tsafrir et al. (2007), to the figures README.md and
docs/REPRODUCTION.md state.

SDSC-SP2 EASY (about a second) runs in ``make test``; CTC-SP2 EASY and the whole of
Tables 2, 3 and 6 on both traces are ``expensive`` (``make bench``). Machine sizes are
passed explicitly (004 Table 1: SDSC-SP2 128, CTC-SP2 512 CPUs), so the tests do not
depend on how a trace's size is inferred.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hpcgym.baselines import run_policy
from hpcgym.studies.tsafrir2007 import TSAFRIR2007_PAPER, run_tsafrir2007
from hpcgym.workloads import read_swf

SDSC = ("SDSC-SP2-1998-4.2-cln.swf.gz", 128)
CTC = ("CTC-SP2-1996-3.1-cln.swf.gz", 512)

# EASY with user estimates, Table 3: the paper's (wait [min], bsld), ours as the README states
# them, and the differences docs/REPRODUCTION.md states between the two, in %
EASY_TABLE3 = [
    pytest.param(*SDSC, (363.0, 99.0), (364.3, 98.8), (0.4, -0.2), id="SDSC-SP2"),
    pytest.param(*CTC, (21.0, 4.6), (21.3, 4.56), (1.4, -0.9), id="CTC-SP2", marks=pytest.mark.expensive),
]

# Every figure of Tables 2, 3 and 6, (wait [min], bsld, accuracy [%]) per preset, as
# docs/REPRODUCTION.md prints it (one decimal; two for a bounded slowdown under 10).
DOCUMENTED = {
    "SDSC": {
        "easy": (364.3, 98.8, 32.1),
        "easy-pcor": (358.1, 92.9, 32.1),
        "easy+": (332.1, 87.5, 60.2),
        "easy-sjbf": (363.4, 91.6, 32.1),
        "easy++": (325.9, 68.4, 60.9),
        "perfect++": (280.1, 57.8, 100.0),
        "x2": (333.5, 91.2, 16.3),
        "sjf": (537.4, 70.0, 32.1),
    },
    "CTC": {
        "easy": (21.3, 4.56, 38.8),
        "easy-pcor": (21.4, 4.48, 38.8),
        "easy+": (15.7, 3.38, 62.6),
        "easy-sjbf": (19.2, 3.97, 38.8),
        "easy++": (14.1, 2.83, 62.6),
        "perfect++": (19.2, 2.81, 100.0),
        "x2": (19.5, 4.11, 19.7),
        "sjf": (13.0, 2.75, 38.8),
    },
}
METRICS = ("wait_min", "bsld", "accuracy_pct")

# README: all 48 figures within 5.2 % of the paper's (the largest gap, SDSC EASY_SJBF bounded
# slowdown, is 91.56 against 87: +5.24 %, so "5.2 %" as rounded), 47 of them within 2.7 %.
ALL_WITHIN_PCT = 5.25
MOST_WITHIN_PCT = 2.7
OUTLIERS = {("SDSC", "easy-sjbf", "bsld")}


def printed(value: float, metric: str) -> float:
    """``value`` as the docs print it."""
    return round(value, 2 if metric == "bsld" and value < 10 else 1)


def load(traces_dir: Path, name: str, procs: int) -> Any:
    path = traces_dir / name
    if not path.exists():
        pytest.skip(f"{name} not found in shared/traces (the reproduction needs the real trace)")
    w = read_swf(path, procs=procs)
    assert w.procs == procs
    return w


@pytest.mark.parametrize(("name", "procs", "paper", "ours", "diff_pct"), EASY_TABLE3)
def test_easy_walltime_reproduces_table3_as_the_readme_states(
    traces_dir: Path,
    name: str,
    procs: int,
    paper: tuple[float, float],
    ours: tuple[float, float],
    diff_pct: tuple[float, float],
) -> None:
    row = run_policy(load(traces_dir, name, procs), "easy", "walltime").row
    wait_min, bsld = row["mean_wait_s"] / 60.0, row["mean_bsld"]
    shown = (round(wait_min, 1), printed(bsld, "bsld"))
    assert shown == ours
    for value, theirs, claim in zip(shown, paper, diff_pct, strict=True):  # from the printed figures
        assert round(100.0 * (value / theirs - 1.0), 1) == claim


@pytest.mark.expensive
@pytest.mark.parametrize(
    ("name", "procs", "key"), [(*SDSC, "SDSC"), (*CTC, "CTC")], ids=["SDSC-SP2", "CTC-SP2"]
)
def test_tsafrir2007_tables_match_the_documented_figures(
    traces_dir: Path, name: str, procs: int, key: str
) -> None:
    result = run_tsafrir2007(load(traces_dir, name, procs))
    assert result["paper_trace"] == key and result["procs"] == procs
    assert set(result["results"]) == set(DOCUMENTED[key])
    gaps = {}
    for policy, documented in DOCUMENTED[key].items():
        ours = result["results"][policy]
        for metric, doc, paper in zip(METRICS, documented, TSAFRIR2007_PAPER[key][policy], strict=True):
            value = float(ours[metric])
            assert printed(value, metric) == pytest.approx(doc, abs=1e-9), f"{policy} {metric}: {value}"
            gaps[(key, policy, metric.split("_")[0])] = abs(100.0 * (value / paper - 1.0))
    assert len(gaps) == 24
    assert max(gaps.values()) < ALL_WITHIN_PCT, max(gaps.items(), key=lambda kv: kv[1])
    far = {k for k, gap in gaps.items() if gap > MOST_WITHIN_PCT}
    assert far == {k for k in OUTLIERS if k[0] == key}, far
