"""hpcgym.common.report: tables, strict JSON and CSV in one module; agents report without the CLI."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import numpy as np
import pytest

import hpcgym
from hpcgym.cli import main
from hpcgym.common import report
from hpcgym.common.report import (
    CSV_COLUMNS,
    SUMMARY_COLUMNS,
    format_table,
    json_ready,
    to_json,
    with_minutes,
    write_csv,
)
from hpcgym.experiments.compare import compare
from hpcgym.workloads import load_default

PACKAGE = Path(hpcgym.__file__).resolve().parent


# ------------------------------------------------------------------ JSON
def test_to_json_is_strict_json_with_null_for_nan_and_infinities():
    value = {"a": float("nan"), "b": [1.5, float("inf"), -float("inf")], "c": ("x", 2), "d": None}
    text = to_json(value)
    assert json.loads(text) == {"a": None, "b": [1.5, None, None], "c": ["x", 2], "d": None}
    assert "NaN" not in text and "Infinity" not in text


def test_to_json_takes_numpy_scalars_and_arrays():
    # np.float32 is no Python float: its NaN used to reach json.dumps and fail there
    value = {
        "f32": np.float32("nan"),
        "f64": np.float64(2.5),
        "i": np.int64(7),
        "flag": np.bool_(True),
        "arr": np.array([1.0, np.nan]),
        "grid": np.arange(4).reshape(2, 2),
    }
    assert json.loads(to_json(value)) == {
        "f32": None,
        "f64": 2.5,
        "i": 7,
        "flag": True,
        "arr": [1.0, None],
        "grid": [[0, 1], [2, 3]],
    }
    assert json_ready(np.float32(0.5)) == 0.5 and type(json_ready(np.float32(0.5))) is float


# ------------------------------------------------------------------ tables
def test_format_table_shows_missing_values_as_dashes_and_notes_once():
    rows = [
        {"policy": "fcfs", "wait": None, "util": 0.51234, "notes": ["n1"]},
        {"policy": "easy", "wait": 3.0, "util": float("nan"), "notes": ["n1"]},
    ]
    cols = [("policy", "policy", ""), ("wait", "wait", ".1f"), ("util", "util", ".3f"), ("absent", "x", "d")]
    assert format_table(rows, cols, notes=["n1", "n2"]).splitlines() == [
        "policy      wait    util    x",
        "--------  ------  ------  ---",
        "fcfs           -   0.512    -",
        "easy         3.0       -    -",
        "note: n1",
        "note: n2",
    ]


def test_with_minutes_adds_the_wait_in_minutes_without_changing_the_row():
    row = {"mean_wait_s": 90.0}
    assert with_minutes(row) == {"mean_wait_s": 90.0, "mean_wait_min": 1.5}
    assert row == {"mean_wait_s": 90.0}


def test_the_summary_columns_are_keys_of_a_run_row():
    rows, _ = compare(load_default().window(200), ["fcfs"], ["walltime"])
    assert {key for key, _, _ in SUMMARY_COLUMNS} <= rows[0].keys()
    assert set(CSV_COLUMNS) <= rows[0].keys()


# ------------------------------------------------------------------ CSV
def test_write_csv_round_trips_compare_rows(tmp_path):
    rows, _ = compare(load_default().window(300), ["fcfs", "easy"], ["walltime", "real"])
    path = tmp_path / "runs.csv"
    write_csv(path, rows)
    with open(path, newline="") as fh:
        back = list(csv.DictReader(fh))
    assert list(back[0]) == list(CSV_COLUMNS)
    assert [(r["policy"], r["predictor"]) for r in back] == [(r["policy"], r["predictor"]) for r in rows]
    for mine, read in zip(rows, back, strict=True):
        assert int(read["jobs_measured"]) == mine["jobs_measured"]
        assert float(read["mean_bsld"]) == mine["mean_bsld"]  # written with every digit
        assert float(read["utilization"]) == mine["utilization"]


def test_write_csv_takes_any_columns_and_leaves_missing_keys_empty(tmp_path):
    path = tmp_path / "x.csv"
    write_csv(path, [{"a": 1, "b": float("nan"), "ignored": 3}, {"a": 2}], columns=("a", "b"))
    assert path.read_text().splitlines() == ["a,b", "1,nan", "2,"]


def test_compare_csv_and_json_come_from_the_report_module(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    assert main(["compare", "--jobs", "200", "--policies", "fcfs,easy", "--csv", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    with open(path, newline="") as fh:
        back = list(csv.DictReader(fh))
    assert [r["policy"] for r in back] == [r["policy"] for r in rows] == ["fcfs", "easy"]
    assert [float(r["mean_wait_s"]) for r in back] == [r["mean_wait_s"] for r in rows]


FUNCTIONS = [
    n for n in report.__all__ if callable(getattr(report, n)) and not isinstance(getattr(report, n), type)
]


def test_one_implementation_behind_every_public_name():
    # every module that holds one of report's functions holds report's own, not a copy
    # (constants may share a name: evaluate's SUMMARY_COLUMNS is a table of its own)
    assert {"to_json", "write_csv", "format_table"} <= set(FUNCTIONS)
    import importlib
    import pkgutil

    holders = []
    for info in pkgutil.walk_packages(hpcgym.__path__, "hpcgym."):
        if info.name.endswith("__main__") or ".data." in info.name:
            continue  # scripts: importing them runs them
        if info.name.startswith(("hpcgym.agents", "hpcgym.env.rllib")):
            continue  # torch / ray; test_agents_take_tables_and_json_from_report reads their imports
        module = importlib.import_module(info.name)
        for name in FUNCTIONS:
            if hasattr(module, name) and module is not report:
                assert getattr(module, name) is getattr(report, name), f"{info.name}.{name} is a copy"
                holders.append(info.name)
    assert {"hpcgym.cli.compare", "hpcgym.baselines.run", "hpcgym.cli.reproduce"} <= set(holders)
    from hpcgym.baselines import run

    assert run.SUMMARY_COLUMNS is report.SUMMARY_COLUMNS  # the run summary's table


# ------------------------------------------------------------------ layers
def module_file(module: str) -> Path | None:
    """The source file of ``module`` inside the hpcgym package, or None (not ours / not a module)."""
    parts = module.split(".")
    if parts[0] != "hpcgym":
        return None
    path = PACKAGE.joinpath(*parts[1:])
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module ``source`` (the text of ``module``) imports, at the top or inside functions.

    ``from a import b`` counts ``a`` and, when it is a module of ours, ``a.b``; relative
    imports are resolved against ``module``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names if module_file(f"{base}.{a.name}")}
    return found


def reachable(start: str) -> set[str]:
    """Every hpcgym module importing ``start`` can load, following imports (also lazy ones) and parents."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        module = todo.pop()
        path = module_file(module)
        if module in seen or path is None:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += imported_modules(path.read_text(), module, path.name == "__init__.py")
    return seen


AGENT_MODULES = sorted(
    "hpcgym.agents" + ("" if p.stem == "__init__" else f".{p.stem}")
    for p in (PACKAGE / "agents").glob("*.py")
)
NOT_FOR_AGENTS = {"hpcgym.cli", "hpcgym.experiments.compare", "hpcgym.studies.tsafrir2007"}


@pytest.mark.parametrize("module", AGENT_MODULES)
def test_agents_import_neither_the_cli_nor_compare(module):
    assert "hpcgym.agents.train_maskable_ppo" in AGENT_MODULES
    assert "hpcgym.common.report" in reachable("hpcgym.agents.run")  # the walk follows imports
    loaded = reachable(module)
    assert not loaded & NOT_FOR_AGENTS, f"{module} reaches {sorted(loaded & NOT_FOR_AGENTS)}"


@pytest.mark.parametrize("module", AGENT_MODULES)
def test_agents_take_tables_and_json_from_report(module):
    path = module_file(module)
    assert path is not None
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module != "hpcgym.common.report":
            taken = {a.name for a in node.names} & set(report.__all__)
            assert not taken, f"{module} imports {sorted(taken)} from {node.module}, not hpcgym.common.report"


def test_report_loads_neither_the_engine_nor_the_cli():
    loaded = reachable("hpcgym.common.report")
    assert not loaded & {"hpcgym.sim.engine", "hpcgym.cli", "hpcgym.baselines.run", "hpcgym.env"}, sorted(
        loaded
    )


def test_the_import_walk_sees_direct_lazy_relative_and_transitive_imports():
    # guards the layering tests against a walk that can never find anything
    source = (
        "from hpcgym.common.report import to_json\n"
        "def f():\n"
        "    from hpcgym import cli\n"
        "from . import train_maskable_ppo\n"
        "from ..baselines.run import run_policy\n"
    )
    found = imported_modules(source, "hpcgym.agents.fake")
    assert {
        "hpcgym.common.report",
        "hpcgym.cli",
        "hpcgym.agents.train_maskable_ppo",
        "hpcgym.baselines.run",
    } <= found
    assert "hpcgym.experiments.compare" in reachable("hpcgym.cli.compare")  # the command calls the library
    assert "hpcgym.sim.engine" in reachable("hpcgym.baselines.run")  # through baselines and the engine
