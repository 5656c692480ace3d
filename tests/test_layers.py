"""Layers point one way: the engine and the reference dispatchers load no RL or solver stack."""

from __future__ import annotations

import json
import subprocess
import sys

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
    engine = ("hpcgym.sim", "hpcgym.workload", "hpcgym.baselines", "hpcgym.metrics")
    assert loaded_by(*engine) == []


@pytest.mark.parametrize(
    "module", ["hpcgym", "hpcgym.machine", "hpcgym.allocator", "hpcgym.predictors", "hpcgym.runner"]
)
def test_lower_modules_import_no_rl_or_solver_package(module):
    assert loaded_by(module) == []


def test_the_probe_sees_a_heavy_import():
    # guards the test above against a probe that can never fail
    pytest.importorskip("gymnasium")
    assert loaded_by("hpcgym.sim", "gymnasium") == ["gymnasium"]
