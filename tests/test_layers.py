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
