"""``hpcgym study NAME --seeds``: every finding as "holds in k of n seeds" (issue 24, point 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.studies.galleguillos2017 import run_galleguillos2017
from hpcgym.studies.registry import STUDIES
from hpcgym.studies.seeds import render_over_seeds, run_over_seeds, summarize_over_seeds
from hpcgym.workloads import eurora, fit_workload


def _result(findings: list[dict]) -> dict:
    return {"study": "x", "jobs": 10, "trace": "t", "rows": [], "notes": [], "findings": findings}


def test_k_of_n_counts_only_the_seeds_where_a_finding_was_checked() -> None:
    a = {"claim": "A", "holds": True, "mean_difference": -1.0, "ci_low": -2.0, "ci_high": -0.5}
    a_no = {**a, "holds": False, "ci_high": 0.5}
    b_na = {"claim": "B", "holds": None, "why": "a run is missing"}
    c = {"claim": "C", "holds": True, "relative_gain": {"short": 0.5}}
    results = [_result([a, b_na, c]), _result([a_no, b_na]), _result([a, {**b_na, "holds": True}])]
    s = summarize_over_seeds(results, [1, 2, 3])
    got = {f["claim"]: (f["holds_in"], f["checked"]) for f in s["findings"]}
    assert got == {"A": (2, 3), "B": (1, 1), "C": (1, 1)}  # C is not made on seeds 2 and 3
    a_seeds = s["findings"][0]["seeds"]
    assert [e["seed"] for e in a_seeds] == [1, 2, 3] and a_seeds[1]["ci_high"] == 0.5
    assert s["findings"][2]["seeds"][1] == {"seed": 2, "holds": None, "why": "not checked on this seed"}
    text = render_over_seeds(s)
    assert "2 of 3" in text and "no -1 [-2, +0.5]" in text and "seed 3" in text
    with pytest.raises(InvalidConfigError, match="one per seed"):
        summarize_over_seeds(results, [1, 2])


def test_each_seed_is_the_study_on_that_seeds_jobs(tmp_path: Path) -> None:
    study = STUDIES["galleguillos2017"]
    s = run_over_seeds(
        study, [4, 7], jobs=250, load=3.0, dispatchers=["sjf-list", "easy"], processes=1, out=tmp_path
    )
    alone = run_galleguillos2017(
        fit_workload(eurora(250, seed=7, load=3.0), "eurora"),
        dispatchers=["sjf-list", "easy"],
        processes=1,
        seed=7,
    )
    for f in alone["findings"]:
        entry = next(x for x in s["findings"] if x["claim"] == f["claim"])
        assert entry["seeds"][1] == {"seed": 7, **{k: v for k, v in f.items() if k != "claim"}}
    assert json.loads((tmp_path / "seeds.json").read_text())["seeds"] == [4, 7]
    assert (tmp_path / "seed-4" / "results.json").is_file() and (
        tmp_path / "seed-7" / "results.csv"
    ).is_file()
    with pytest.raises(InvalidConfigError, match="distinct"):
        run_over_seeds(study, [1, 1], jobs=10)


def test_cli_seeds_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "galleguillos2017", "--jobs", "250", "--load", "3", "--dispatchers", "sjf-list,prb"]
    argv += ["--processes", "1", "--no-plots", "--seeds", "1,2,3"]
    assert main([*argv, "-o", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "over 3 generator seeds (1, 2, 3)" in out and "holds in" in out and "seed 3" in out
    assert main([*argv, "-o", str(tmp_path / "b"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    f = next(x for x in data["findings"] if x["claim"] == "D lowers SJF's slowdown against W")
    checked = [e for e in f["seeds"] if e["holds"] is not None]
    assert f["checked"] == len(checked) >= 1 and f["holds_in"] == sum(e["holds"] for e in checked)
    assert all({"ci_low", "ci_high", "mean_difference"} <= set(e) for e in checked)


def test_cli_seeds_on_002s_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["study", "galleguillos2019", "--jobs", "60", "--load", "3", "--dispatchers", "hcp1,hcp3"]
    argv += ["--processes", "1", "--no-plots", "--seeds", "5,6", "--json", "-o", str(tmp_path)]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    f = next(x for x in data["findings"] if x["claim"].startswith("v3-D beats v1-W: HCP3-D"))
    assert f["checked"] == 2 and [e["seed"] for e in f["seeds"]] == [5, 6] and "ci_low" in f["seeds"][0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--seed", "1"], "not with --seed"), (["--workload", "x.csv"], "not with --seed, --workload")],
)
def test_cli_seeds_errors(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "galleguillos2017", "--seeds", "1,2", *extra]) == 2
    assert message in capsys.readouterr().err
