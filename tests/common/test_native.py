"""The native core: used only when current, the same schedules as numba's kernels, one signature each."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hpcgym.baselines import _kernels, make_policy, preset_predictor
from hpcgym.common import native
from hpcgym.sim import Simulator
from hpcgym.sim import _kernels as ek
from hpcgym.workloads import load_default

BUILD_HINT = "the native core is not built or not current here (`pip install -e .` builds it)"


@pytest.fixture
def fresh(monkeypatch):
    """Whatever a test sets, the next test looks at the core anew."""
    native.reload()
    yield monkeypatch
    native.reload()


def loaded() -> bool:
    native.reload()
    return native.status().startswith("loaded")


def test_off_gives_the_numba_kernels(fresh):
    fresh.setenv("HPCGYM_NATIVE", "0")
    assert native.get(ek.instant) is ek.instant
    assert not native.has(ek.commit)
    assert native.status() == "off (HPCGYM_NATIVE=0)"


def test_a_core_older_than_the_sources_is_not_used(fresh):
    fresh.setattr(native, "source_digest", lambda root=None: "edited since")
    assert native.get(ek.instant) is ek.instant
    if (native.HERE / f"{native.EXTENSION}.json").exists():
        assert native.status().startswith("stale")


def test_a_missing_core_is_said_and_not_used(fresh, tmp_path):
    fresh.setattr(native, "HERE", tmp_path)  # no signatures file there
    assert native.get(ek.instant) is ek.instant
    assert native.status().startswith("absent")


def test_the_digest_covers_every_source_of_the_kernels_packages(tmp_path):
    for package in native.PACKAGES:
        (tmp_path / package / "sub").mkdir(parents=True)
        (tmp_path / package / "sub" / "k.py").write_text("x = 1\n")
    before = native.source_digest(tmp_path)
    assert native.source_digest(tmp_path) == before
    (tmp_path / "baselines" / "sub" / "k.py").write_text("x = 2\n")
    assert native.source_digest(tmp_path) != before
    (tmp_path / "baselines" / "sub" / "k.py").write_text("x = 1\n")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "a.py").write_text("y = 1\n")  # not a kernels package: no change
    assert native.source_digest(tmp_path) == before


def test_every_kernel_is_registered_with_an_example_of_its_callers_types():
    import hpcgym.baselines._loop
    import hpcgym.sim.loop  # noqa: F401 - registers the engine's kernels

    names = set(native._examples)
    assert {
        "hpcgym.baselines._loop.run_loop",
        "hpcgym.baselines._loop.run_loop_predicting",
        "hpcgym.sim._kernels.instant",
        "hpcgym.sim._kernels.commit",
        "hpcgym.machine.allocator.fits",
    } <= names
    for name, (part, kernel, example) in native._examples.items():
        assert native.key(kernel) == name and part in native.PARTS
        types = native.argument_types(example())
        assert not any(t.endswith(" A)") for t in types), (name, types)  # contiguous: what the callers pass


def _schedules(policies: tuple[str, ...]) -> list[tuple[np.ndarray, int]]:
    w = load_default().window(3000, offset=2000)
    out = []
    for policy in policies:
        predictor = preset_predictor(policy) if policy == "easy++" else preset_predictor(policy, "walltime")
        s = Simulator(w, predictor=predictor).run(make_policy(policy), progress=False)
        out.append((s.start.copy(), s.decisions))
        # the engine's Python path: its step kernels, a dispatcher called at every decision
        s = Simulator(w).run(make_policy(policy if policy != "easy++" else "easy"), compiled=False)
        out.append((s.start.copy(), s.decisions))
    return out


POLICIES = ("fcfs", "sjf-list", "easy", "easy++")


@pytest.mark.skipif(not loaded(), reason=BUILD_HINT)
def test_the_native_core_gives_the_schedules_of_numbas_kernels(fresh):
    assert native.has(ek.instant)
    with_core = _schedules(POLICIES)
    fresh.setenv("HPCGYM_NATIVE", "0")
    native.reload()
    assert not native.has(ek.instant)
    without = _schedules(POLICIES)
    for (a, da), (b, db) in zip(with_core, without, strict=True):
        np.testing.assert_array_equal(a, b)
        assert da == db


@pytest.mark.skipif(not loaded(), reason=BUILD_HINT)
def test_with_the_core_the_loops_and_the_engine_compile_nothing(fresh):
    fresh.setattr(_kernels, "_loaded", set())
    calls: list[list[str]] = []
    fresh.setattr(_kernels, "_warm_up", lambda families: calls.append(list(families)))
    _kernels.load_kernels("loop", "loop-predicting")
    assert calls == []  # the engine's kernels and both loops are native
    _kernels.load_kernels("prb")
    assert calls == [["prb"]]  # not in the core: numba compiles it


@pytest.mark.skipif(not loaded(), reason=BUILD_HINT)
def test_check_mode_refuses_a_call_of_other_types(fresh):
    fresh.setenv("HPCGYM_NATIVE", "check")
    native.reload()
    mem = Simulator(load_default().window(10))._mem
    assert native.get(ek.fits_job)(mem, 0) in (True, False)
    with pytest.raises(TypeError, match="compiled for"):
        native.get(ek.fits_job)(mem.astype(np.float64), 0)


def test_the_signatures_file_names_every_export_if_built():
    meta = native.HERE / f"{native.EXTENSION}.json"
    if not meta.exists():
        pytest.skip(BUILD_HINT)
    exports = json.loads(meta.read_text())["exports"]
    assert all(isinstance(types, list) for types in exports.values())
    assert "hpcgym.baselines._loop.run_loop" in exports


@pytest.mark.expensive
def test_the_build_makes_a_core_that_loads(tmp_path: Path):
    """The whole build (about a minute): the extension and its signatures file, importable."""
    import importlib.util

    path = native.build(tmp_path, ("hpcgym.machine.allocator", "hpcgym.sim.loop", "hpcgym.baselines._loop"))
    meta = json.loads((tmp_path / f"{native.EXTENSION}.json").read_text())
    assert meta["digest"] == native.source_digest()
    spec = importlib.util.spec_from_file_location(f"hpcgym.common.{native.EXTENSION}", path)
    assert spec is not None and spec.loader is not None
    core = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core)
    for name in meta["exports"]:
        assert callable(getattr(core, name.replace(".", "__")))
