"""``hpcgym sweep``: spec validation, run keys, resuming, and the same table from every backend."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from conftest import examples, random_workloads
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.experiments.sweep import (
    COLUMNS,
    TIMING_COLUMNS,
    ResultsTable,
    SweepSpec,
    expand,
    load_figure,
    load_traces,
    offered_load,
    preset_path,
    read_results,
    run_sweep,
)

SPEC = """\
name = "twelve"
dispatchers = ["easy", "easy++"]
predictors = ["preset", "walltime"]
traces = ["bundled"]
loads = [0.9, 1.0, 1.1]
jobs = 500
"""
"""12 runs (2 dispatchers x 2 predictors x 3 loads) on the first 500 jobs of the bundled slice."""


@pytest.fixture(scope="module")
def spec() -> SweepSpec:
    return SweepSpec.from_mapping(
        {
            "name": "twelve",
            "dispatchers": ["easy", "easy++"],
            "predictors": ["preset", "walltime"],
            "traces": ["bundled"],
            "loads": [0.9, 1.0, 1.1],
            "jobs": 500,
        }
    )


@pytest.fixture(scope="module")
def reference(spec: SweepSpec, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The 12 runs, one after the other in this process."""
    result = run_sweep(spec, tmp_path_factory.mktemp("ref") / "results.csv", processes=1, progress=False)
    assert (result.total, result.skipped, result.ran) == (12, 0, 12)
    return result.rows


def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


def write_spec(tmp_path: Path, text: str = SPEC, name: str = "twelve.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------- the table
def test_reference_rows_are_distinct_runs(reference: list[dict[str, Any]]) -> None:
    assert len({r["key"] for r in reference}) == 12
    assert {r["load"] for r in reference} == {0.9, 1.0, 1.1}
    assert {r["predictor_used"] for r in reference} == {"walltime", "user-avg+pcor", "walltime+pcor"}
    # more load, longer waits: EASY with W on the same jobs
    easy = sorted((r["load"], r["mean_wait_s"]) for r in reference if r["dispatcher"] == "easy")
    assert easy[0][1] < easy[-1][1]
    for r in reference:
        assert r["jobs_simulated"] == 500
        assert r["seed"] is None  # neither EASY nor its predictors take a seed
        assert math.isclose(
            r["offered_load"] / r["load"], reference[0]["offered_load"] / reference[0]["load"]
        )


def test_process_pool_gives_the_same_table(
    spec: SweepSpec, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    result = run_sweep(spec, tmp_path / "results.csv", processes=2, progress=False)
    assert without_timing(result.rows) == without_timing(reference)


def test_interrupted_sweep_resumes_with_only_the_rest(
    spec: SweepSpec, reference: list[dict[str, Any]], tmp_path: Path
) -> None:
    table = tmp_path / "results.csv"
    first = run_sweep(spec, table, processes=2, max_runs=5, progress=False)
    assert (first.skipped, first.ran, len(first.rows)) == (0, 5, 5)
    assert len(read_results(table)) == 5
    second = run_sweep(spec, table, processes=2, progress=False)
    assert (second.skipped, second.ran) == (5, 7)
    assert len(read_results(table)) == 12  # nothing run twice
    assert without_timing(second.rows) == without_timing(reference)
    third = run_sweep(spec, table, processes=1, progress=False)
    assert (third.skipped, third.ran) == (12, 0)


@pytest.mark.expensive  # a local Ray start: seconds; Ray Tune's test keeps Ray in `make test`
def test_ray_gives_the_same_table(spec: SweepSpec, reference: list[dict[str, Any]], tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'hpcgym[ray]')")
    table = tmp_path / "results.csv"
    first = run_sweep(spec, table, backend="ray", processes=2, max_runs=4, progress=False)
    assert not ray.is_initialized()  # the sweep started Ray, so it shut it down
    assert first.ran == 4
    rest = run_sweep(spec, table, processes=2, progress=False)  # resumed by the process pool
    assert (rest.skipped, rest.ran) == (4, 8)
    assert without_timing(rest.rows) == without_timing(reference)


def test_partial_last_line_is_cut_before_appending(spec: SweepSpec, tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    run_sweep(spec, table, processes=1, max_runs=2, progress=False)
    whole = table.read_text()
    table.write_text(whole + "0123456789abcdef,bundled,500,0,ea")  # killed while writing
    assert ResultsTable(table).done == {r["key"] for r in read_results(table)}
    assert table.read_text() == whole


def test_a_table_with_other_columns_is_refused(spec: SweepSpec, tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    table.write_text("trace,policy\nx,y\n")
    with pytest.raises(InvalidConfigError, match=r"results\.csv:1"):
        run_sweep(spec, table, processes=1, progress=False)


# ---------------------------------------------------------------------------- the spec
@pytest.mark.parametrize(
    ("change", "match"),
    [
        ("typo = 1\n", r"twelve\.toml: unknown key 'typo'"),
        ("loads = [1.0, -2]\n", r"twelve\.toml: loads: .*positive.*-2"),
        ('dispatchers = ["easy", "nosuch"]\n', r"twelve\.toml: dispatchers: unknown policy 'nosuch'"),
        ('predictors = ["user-avg:k=0x"]\n', r"twelve\.toml: predictors: "),
        ("jobs = 0\n", r"twelve\.toml: jobs: must be a whole number >= 1"),
        ("seeds = [1.5]\n", r"twelve\.toml: seeds: "),
        ('extra = "most"\n', r"twelve\.toml: extra: must be one of"),
        ('plot = "bars"\n', r"twelve\.toml: plot: must be one of"),
    ],
)
def test_spec_errors_name_the_file_and_key(tmp_path: Path, change: str, match: str) -> None:
    lines = [line for line in SPEC.splitlines(keepends=True) if line.split(" =")[0] != change.split(" =")[0]]
    path = write_spec(tmp_path, "".join(lines) + change)
    with pytest.raises((InvalidConfigError, UnknownNameError), match=match):
        SweepSpec.from_file(path)


def test_missing_axis_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(InvalidConfigError, match=r"traces: missing"):
        SweepSpec.from_file(write_spec(tmp_path, 'dispatchers = ["easy"]\n'))
    with pytest.raises(InvalidConfigError, match=r"not valid TOML"):
        SweepSpec.from_file(write_spec(tmp_path, "dispatchers = [\n"))


def test_cli_error_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_spec(tmp_path, SPEC + "typo = 1\n")
    assert main(["sweep", str(path), "-o", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'typo'" in err and "Traceback" not in err
    assert main(["sweep", str(path), "--preset", "tsafrir-load"]) == 2
    assert main(["sweep", "--preset", "nosuch"]) == 2
    assert main(["sweep", "--dispatchers", "easy", "--trace", "bundled", "--address", "auto"]) == 2
    assert "needs --backend ray" in capsys.readouterr().err


def test_dry_run_counts_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["sweep", str(write_spec(tmp_path)), "-o", str(out), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "twelve: 12 runs, 0 already in" in text and "12 to run" in text and "core-minutes" in text
    assert not out.exists()
    # flags replace the spec's keys
    assert main(["sweep", str(write_spec(tmp_path)), "-o", str(out), "--dry-run", "--loads", "1"]) == 0
    assert "4 runs" in capsys.readouterr().out


def test_cli_run_writes_table_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["sweep", "--dispatchers", "fcfs,easy", "--trace", "bundled", "--jobs", "300"]
    args += ["--loads", "1,1.2", "-o", str(tmp_path / "out"), "--no-progress", "--processes", "1"]
    assert main([*args, "--max-runs", "3"]) == 0
    assert "1 left (run again to resume)" in capsys.readouterr().out
    pytest.importorskip("matplotlib")
    assert main([*args, "--plot", str(tmp_path / "load.png")]) == 0
    assert "3 already done, 1 run now" in capsys.readouterr().out
    assert (tmp_path / "load.png").stat().st_size > 0
    pq = pytest.importorskip("pyarrow.parquet")
    assert main([*args, "--parquet"]) == 0
    table = pq.read_table(tmp_path / "out" / "results.parquet").to_pylist()
    assert table == read_results(tmp_path / "out" / "results.csv")
    rows = read_results(tmp_path / "out" / "results.csv")
    assert [r["policy"] for r in rows].count("fcfs") == 2 and len(rows) == 4
    assert list(rows[0]) == list(COLUMNS)


# ---------------------------------------------------------------------------- expansion
def test_seeds_reach_only_what_takes_a_seed() -> None:
    spec = SweepSpec.from_mapping(
        {"dispatchers": ["easy", "random-fit"], "traces": ["bundled"], "seeds": [0, 1, 2]}
    )
    runs = expand(spec)
    assert [(r.dispatcher, r.seed) for r in runs] == [
        ("easy", None),
        ("random-fit:seed=0", 0),
        ("random-fit:seed=1", 1),
        ("random-fit:seed=2", 2),
    ]
    assert len({r.key() for r in runs}) == 4


def test_random_sample_is_seeded_and_from_the_grid() -> None:
    base = {"dispatchers": ["easy", "easy++", "fcfs"], "traces": ["bundled"], "loads": [0.8, 0.9, 1.0, 1.1]}
    grid = expand(SweepSpec.from_mapping(base))
    a = expand(SweepSpec.from_mapping({**base, "sample": 5, "sample_seed": 3}))
    b = expand(SweepSpec.from_mapping({**base, "sample": 5, "sample_seed": 3}))
    c = expand(SweepSpec.from_mapping({**base, "sample": 5, "sample_seed": 4}))
    assert len(grid) == 12 and a == b and len(a) == 5 and a != c
    assert set(a) <= set(grid)
    assert expand(SweepSpec.from_mapping({**base, "sample": 50})) == grid


def test_run_key_is_stable_and_changes_with_every_parameter() -> None:
    base: dict[str, Any] = {"dispatchers": ["easy"], "traces": ["x/SDSC.swf.gz"], "loads": [1.0]}
    (run,) = expand(SweepSpec.from_mapping(base))
    moved = SweepSpec.from_mapping({"dispatchers": ["easy"], "traces": ["y/SDSC.swf.gz"], "loads": [1.0]})
    assert expand(moved)[0].key() == run.key()  # the folder is not part of the key
    assert run.key() == "7e3ff5ccd0088eb0"  # stable across versions: tables stay resumable
    others = [
        {"dispatchers": ["easy++"]},
        {"loads": [1.1]},
        {"predictors": ["real"]},
        {"jobs": 10},
        {"offset": 1},
        {"procs": 64},
        {"traces": ["x/CTC.swf.gz"]},
    ]
    keys = {expand(SweepSpec.from_mapping({**base, **o}))[0].key() for o in others}
    assert run.key() not in keys and len(keys) == len(others)
    assert run.key({"extra": "all"}) != run.key({"extra": None})


def test_offered_loads_become_a_factor_per_trace(tmp_path: Path) -> None:
    spec = SweepSpec.from_mapping(
        {"dispatchers": ["fcfs"], "traces": ["bundled"], "jobs": 400, "offered_loads": [0.5, 0.9]}
    )
    traces = load_traces(spec)
    result = run_sweep(spec, tmp_path / "r.csv", processes=1, progress=False, traces=traces)
    assert [round(r["offered_load"], 9) for r in result.rows] == [0.5, 0.9]
    base = offered_load(traces["bundled"])
    assert [r["load"] for r in result.rows] == pytest.approx([0.5 / base, 0.9 / base])


@settings(max_examples=examples(25))
@given(w=random_workloads(), factor=st.floats(0.25, 4.0))
def test_scaling_the_load_scales_the_offered_load(w: Any, factor: float) -> None:
    base = offered_load(w)
    scaled = offered_load(w.scale_load(factor))
    if math.isnan(base):
        assert math.isnan(scaled)
    else:
        assert scaled == pytest.approx(base * factor, rel=1e-9)


# ---------------------------------------------------------------------------- the preset
def test_load_study_preset_and_figure(tmp_path: Path) -> None:
    spec = SweepSpec.from_file(preset_path("tsafrir-load"), jobs=300, offered_loads=[0.6, 0.9])
    assert spec.dispatchers == ("easy", "easy++", "perfect++") and spec.plot == "load"
    result = run_sweep(spec, tmp_path / "r.csv", processes=1, progress=False)
    assert result.ran == 6
    pytest.importorskip("matplotlib")
    fig = load_figure(result.rows)
    axes = fig.get_axes()
    assert len(axes) == 2 and all(ax.get_yscale() == "log" for ax in axes)
    assert len(axes[0].get_lines()) == 3  # one line per dispatcher


def test_predictor_grid_adds_the_product_of_its_parameters(tmp_path: Path) -> None:
    text = 'dispatchers = ["easy++"]\ntraces = ["bundled"]\n'
    text += '[[predictor_grid]]\nname = "user-avg"\nk = [1, 2]\nfull = [true, false]\n'
    spec = SweepSpec.from_file(write_spec(tmp_path, text))
    assert spec.predictors == (
        "user-avg:k=1,full=true",
        "user-avg:k=1,full=false",
        "user-avg:k=2,full=true",
        "user-avg:k=2,full=false",
    )
    assert len(expand(spec)) == 4
    with pytest.raises(InvalidConfigError, match=r"predictors: .*nosuch"):
        SweepSpec.from_file(write_spec(tmp_path, text + "nosuch = [1]\n"))
    with pytest.raises(InvalidConfigError, match=r"predictor_grid\[0\]: k: give at least one"):
        SweepSpec.from_file(write_spec(tmp_path, text.replace("k = [1, 2]", "k = []")))


def test_without_ray_the_ray_backend_names_the_extra(
    spec: SweepSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from hpcgym.common.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"hpcgym\[ray\]"):
        run_sweep(spec, tmp_path / "r.csv", backend="ray", progress=False)
    assert not (tmp_path / "r.csv").exists()  # refused before any table or run


def test_yaml_spec_reads_like_toml(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    text = "dispatchers: [easy, easy++]\npredictors: [preset, walltime]\ntraces: [bundled]\n"
    text += "loads: [0.9, 1.0, 1.1]\njobs: 500\n"
    from_yaml = SweepSpec.from_file(write_spec(tmp_path, text, "twelve.yaml"))
    from_toml = SweepSpec.from_file(write_spec(tmp_path))
    assert expand(from_yaml) == expand(from_toml)
    with pytest.raises(InvalidConfigError, match=r"twelve\.yaml: unknown key 'typo'"):
        SweepSpec.from_file(write_spec(tmp_path, text + "typo: 1\n", "twelve.yaml"))


def test_predictor_sample_draws_configurations_each_on_every_trace() -> None:
    grid = {"name": "user-history", "k": [1, 2, 3, 4], "metric": ["avg", "min"]}
    base = {"dispatchers": ["easy++"], "traces": ["bundled"], "loads": [0.9, 1.0], "predictor_grid": [grid]}
    explicit = "user-history:k=1,metric=avg"
    a = SweepSpec.from_mapping({**base, "predictors": [explicit], "predictor_sample": 3, "sample_seed": 2})
    b = SweepSpec.from_mapping({**base, "predictors": [explicit], "predictor_sample": 3, "sample_seed": 2})
    whole = SweepSpec.from_mapping(base).predictors
    assert a.predictors == b.predictors and a.predictors[0] == explicit
    sampled = a.predictors[1:]
    assert 2 <= len(sampled) <= 3 and set(sampled) <= set(whole)  # the explicit one may be drawn too
    assert list(sampled) == [p for p in whole if p in sampled]  # grid order kept
    runs = expand(a)
    assert {(r.predictor, r.load) for r in runs} == {(p, x) for p in a.predictors for x in (0.9, 1.0)}
    assert SweepSpec.from_mapping({**base, "predictor_sample": 99}).predictors == whole
    with pytest.raises(InvalidConfigError, match="predictor_sample: must be a whole number >= 1"):
        SweepSpec.from_mapping({**base, "predictor_sample": 0})


def test_parameter_study_preset_ranks_its_configurations(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import json

    spec = SweepSpec.from_file(preset_path("tsafrir-params"), predictor_sample=6, jobs=300)
    assert spec.plot == "params" and len(spec.predictors) >= 16 + 6 - 1
    result = run_sweep(spec, tmp_path / "results.csv", processes=1, progress=False)
    from hpcgym.experiments.sweep import write_figures

    written = write_figures(spec, result.rows, tmp_path)
    assert {p.name for p in written} == {
        "ranking.csv",
        "paramstudy.json",
        "fig9_ranks.png",
        "fig10_window_size.png",
    }
    summary = json.loads((tmp_path / "paramstudy.json").read_text())
    assert summary["configurations"] == len(spec.predictors)
    assert summary["table11"][0]["rank"] == 1 and summary["table11"][0]["average_degradation_pct"] >= 0
    assert [f["statement"][:10] for f in summary["findings"]] == [
        "correction",
        "gradual co",
        "minimum wi",
        "small wind",
    ]


def test_one_configuration_has_one_spelling_and_one_run_key(tmp_path: Path) -> None:
    base: dict[str, Any] = {"dispatchers": ["easy++"], "traces": ["bundled"], "jobs": 200}
    words = {"name": "user-history", "k": [1], "propagation": ["no", "yes"], "type": ["ALL"]}
    flags = {"name": "user-history", "k": [1], "propagation": [False, True], "type": ["all"]}
    a = SweepSpec.from_mapping({**base, "predictor_grid": [words]})
    b = SweepSpec.from_mapping({**base, "predictor_grid": [flags]})
    assert (
        a.predictors
        == b.predictors
        == (
            "user-history:k=1,propagation=false,type=all",
            "user-history:k=1,propagation=true,type=all",
        )
    )
    assert [r.key() for r in expand(a)] == [r.key() for r in expand(b)]
    # mixed in one spec: one run per configuration
    mixed = SweepSpec.from_mapping(
        {**base, "predictors": ["user-history:k=1,propagation=NO,type=all"], "predictor_grid": [flags]}
    )
    assert len(mixed.predictors) == 2 and len(expand(mixed)) == 2
    # a table written with one spelling is resumed by the other: nothing is run twice
    table = tmp_path / "results.csv"
    assert run_sweep(a, table, processes=1, progress=False).ran == 2
    again = run_sweep(b, table, processes=1, progress=False)
    assert (again.skipped, again.ran, len(read_results(table))) == (2, 0, 2)
    # the shipped preset's spelling is the canonical one: its tables keep their keys
    preset = SweepSpec.from_file(preset_path("tsafrir-params"), predictor_sample=1)
    text = preset_path("tsafrir-params").read_text()
    assert all(f'"{p}"' in text for p in preset.predictors[:16])
