"""Layers point one way: the engine and the reference dispatchers load no RL or solver stack."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("gymnasium", "torch", "stable_baselines3", "sb3_contrib", "ortools")

PROBE = """
import json, sys
import {modules}
loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({heavy!r}))
print(json.dumps(loaded))
"""


def loaded_by(*modules: str) -> list[str]:
    code = PROBE.format(modules=", ".join(modules), heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_engine_layers_import_no_rl_or_solver_package():
    engine = ("hpcgym.sim.engine", "hpcgym.workloads.swf", "hpcgym.baselines", "hpcgym.sim.metrics")
    assert loaded_by(*engine) == []


@pytest.mark.parametrize(
    "module",
    [
        "hpcgym",
        "hpcgym.machine.model",
        "hpcgym.machine.allocator",
        "hpcgym.predict.runtime",
        "hpcgym.baselines.run",
    ],
)
def test_lower_modules_import_no_rl_or_solver_package(module):
    assert loaded_by(module) == []


def test_the_probe_sees_a_heavy_import():
    # guards the test above against a probe that can never fail
    pytest.importorskip("gymnasium")
    assert loaded_by("hpcgym.sim.engine", "gymnasium") == ["gymnasium"]


def _imported_names(path: Path) -> set[str]:
    """Every module a file imports, and every ``module.name`` a ``from`` import takes."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _imports_baseline_kernels(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.startswith("hpcgym.baselines") and "_kernels" in n.split("."))


ENV_MODULES = sorted((Path(__file__).resolve().parents[1] / "hpcgym" / "env").glob("*.py"))


@pytest.mark.parametrize("path", ENV_MODULES, ids=lambda p: p.name)
def test_env_imports_no_kernel_privates_of_the_baselines(path):
    # the env's EASY backfill goes through EasyBackfilling.decide, never the compiled kernel
    assert _imports_baseline_kernels(_imported_names(path)) == []


def test_the_kernel_import_scan_sees_a_private_import(tmp_path):
    # guards the test above against a scan that can never fail
    f = tmp_path / "m.py"
    f.write_text("from hpcgym.baselines import _kernels\nfrom hpcgym.baselines._kernels import x\n")
    assert _imports_baseline_kernels(_imported_names(f)) == [
        "hpcgym.baselines._kernels",
        "hpcgym.baselines._kernels.x",
    ]
    assert ENV_MODULES, "the env package was not found"


@pytest.mark.parametrize("module", ["hpcgym.sim.engine", "hpcgym.machine.model", "hpcgym.machine.allocator"])
def test_engine_and_machine_import_neither_gymnasium_torch_nor_ortools(module):
    assert not set(loaded_by(module)) & {"gymnasium", "torch", "ortools"}


# ------------------------------------------------------------------ the package layout (issue 22)
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hpcgym"
LAYERS = (
    "common",
    "machine",
    "workloads",
    "predict",
    "sim",
    "baselines",
    "env",
    "agents",
    "experiments",
    "studies",
    "cli",
)
"""The layers from the ground up, as pyproject.toml's import-linter contract lists them (top down)."""


def test_the_import_linter_contracts_hold():
    # pyproject.toml: layers, no library module imports the CLI, no circles among siblings
    pytest.importorskip("importlinter")
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def test_the_contract_lists_the_layers_in_order():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    assert tuple(reversed(layers["layers"])) == LAYERS
    assert {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()} == set(LAYERS)


def module_graph(package: str = "hpcgym") -> dict[str, set[str]]:
    """Every module of ``package`` and the modules of ``package`` it imports, anywhere in it."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph(package)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles_anywhere():
    # stricter than the siblings contract: a module importing its own package's __init__,
    # which imports the module back, is a circle too
    assert circles(module_graph()) == []


def test_the_circle_finder_sees_a_circle():
    # guards the test above against a finder that can never fail
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_package_root_holds_at_most_14_entries():
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 14, sorted(entries)


LIBRARY_MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1])


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_800_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 800


@pytest.mark.parametrize("path", LIBRARY_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_library_module_parses_arguments(path):
    # argument parsing is the CLI's (hpcgym/cli/); a library function takes plain values
    assert "argparse" not in _imported_names(path)
