"""Layering: the engine loads no gymnasium, torch or ortools; the env loads no torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("module", ["hpcgym", "hpcgym.sim.engine", "hpcgym.baselines", "hpcgym.sim.metrics"])
def test_engine_imports_no_gymnasium_torch_or_ortools(module: str) -> None:
    assert not loaded_after(f"import {module}") & {"gymnasium", "torch", "ortools", "stable_baselines3"}


def test_env_imports_no_torch_and_registers_on_gymnasium_import() -> None:
    mods = loaded_after(
        "import hpcgym, gymnasium; assert 'hpcgym/Dispatch-v1' in gymnasium.registry; "
        "import hpcgym.env; gymnasium.make('hpcgym/DispatchPolicy-v1').reset(seed=0)"
    )
    assert "gymnasium" in mods and "torch" not in mods and "stable_baselines3" not in mods


def test_registration_survives_probing_for_gymnasium_first() -> None:
    loaded_after(
        "import hpcgym, importlib.util; assert importlib.util.find_spec('gymnasium'); "
        "import gymnasium; assert 'hpcgym/Dispatch-v1' in gymnasium.registry; "
        "assert type(gymnasium.__spec__.loader).__name__ == 'SourceFileLoader'"
    )


def test_registration_when_gymnasium_was_imported_first() -> None:
    loaded_after("import gymnasium, hpcgym; gymnasium.make('hpcgym/Dispatch-v1')")
    loaded_after("import gymnasium; gymnasium.make('hpcgym:hpcgym/DispatchBackfill-v1')")


def test_rgb_rendering_needs_no_plotting_package() -> None:
    mods = loaded_after(
        "import gymnasium, hpcgym; env = gymnasium.make('hpcgym/Dispatch-v1', render_mode='rgb_array'); "
        "env.reset(seed=0); assert env.render().shape == (176, 256, 3)"
    )
    assert not mods & {"matplotlib", "pygame", "PIL", "cv2"}
