"""The first run compiles only what it uses, says so, and caches where it can write."""

from __future__ import annotations

import numpy as np
import pytest

from hpcgym.baselines import _compile, _kernels, make_policy
from hpcgym.common import native
from hpcgym.sim import Simulator
from hpcgym.sim import _kernels as ek

SMALL = [(0, 10, 2, 10), (0, 5, 3, 5), (1, 2, 1, 2)]


@pytest.fixture
def warmed(monkeypatch):
    """The families a dispatcher's reset asks to compile, in a process that has loaded none.

    Without the native core (tests/common/test_native.py: with it, its families compile nothing).
    """
    monkeypatch.setenv("HPCGYM_NATIVE", "0")
    native.reload()
    calls: list[list[str]] = []
    monkeypatch.setattr(_kernels, "_loaded", set())
    monkeypatch.setattr(_kernels, "_warm_up", lambda families: calls.append(list(families)))
    yield calls
    native.reload()


@pytest.mark.parametrize(
    ("policy", "families"),
    [
        ("fcfs", ["loop"]),  # the compiled event loop, order_decide and easy_decide within
        ("sjf-list", ["loop"]),
        ("easy", ["loop"]),
        ("easy-sjbf", ["loop"]),
        ("prb", ["prb"]),
        ("replay", ["order"]),
        ("saf", ["order"]),
        ("saf-bf", ["easy-order"]),
    ],
)
def test_a_dispatcher_compiles_only_its_own_family(make_workload, warmed, policy, families):
    Simulator(make_workload(SMALL, 4)).run(make_policy(policy))
    assert warmed == [["engine", families[0]], *([f] for f in families[1:])]


def test_a_family_is_compiled_once_per_process(make_workload, warmed):
    w = make_workload(SMALL, 4)
    for policy in ("fcfs", "sjf-list", "easy", "fcfs", "easy"):
        Simulator(w).run(make_policy(policy))
    assert warmed == [["engine", "loop"]]
    _kernels.load_kernels()  # a sweep: every family not loaded yet
    assert warmed[-1] == ["order", "prb", "easy", "easy-first", "easy-order", "loop-predicting"]


def test_a_predictor_with_hooks_compiles_the_loop_that_runs_them(make_workload, warmed):
    from hpcgym.baselines import preset_predictor

    w = make_workload(SMALL, 4)
    Simulator(w, predictor=preset_predictor("easy++")).run(make_policy("easy++"))
    assert warmed == [["engine", "loop-predicting"]]  # not the loop without hooks


def test_every_family_names_compiled_entry_points():
    assert set(_kernels.FAMILIES) >= {"order", "easy", "prb"}
    for family in ("engine", *_kernels.FAMILIES):
        assert all(hasattr(k, "signatures") for k in _kernels.entry_points(family)), family


def test_the_notice_is_said_only_when_on_and_only_around_cold_kernels(monkeypatch, capsys):
    kernels = _kernels.entry_points("easy")
    monkeypatch.setattr(_compile, "cold_kernels", lambda ks: ["easy_decide"])
    monkeypatch.setattr(native, "status", lambda: "loaded (9 kernels)")
    before = _compile.announce_compilation(False)
    try:
        with _compile.announce_compilation_of(kernels) as said:
            assert not said  # off: a library user's process stays quiet
        _compile.announce_compilation(True)
        with _compile.announce_compilation_of(kernels) as said:
            assert said
        monkeypatch.setattr(_compile, "cold_kernels", lambda ks: [])
        with _compile.announce_compilation_of(kernels) as said:
            assert not said  # nothing to compile: nothing to say
    finally:
        _compile.announce_compilation(before)
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: compiling kernels, first run only ... done in ")
    assert err.count("compiling") == 1


def test_the_notice_says_when_the_native_core_is_older_than_the_sources(monkeypatch, capsys):
    monkeypatch.setattr(_compile, "cold_kernels", lambda ks: ["easy_decide"])
    monkeypatch.setattr(native, "status", lambda: "stale (sources changed since the build): ...")
    before = _compile.announce_compilation(True)
    try:
        with _compile.announce_compilation_of(_kernels.entry_points("easy")):
            pass
    finally:
        _compile.announce_compilation(before)
    err = capsys.readouterr().err
    assert "the native core is older than the sources: `pip install -e .` rebuilds it" in err


def test_a_second_notice_of_one_command_says_more(monkeypatch, capsys):
    kernels = _kernels.entry_points("easy")
    monkeypatch.setattr(_compile, "cold_kernels", lambda ks: ["easy_decide"])
    monkeypatch.setattr(native, "status", lambda: "loaded (9 kernels)")
    before = _compile.announce_compilation(True)
    try:
        for _ in range(2):
            with _compile.announce_compilation_of(kernels):
                pass
        _compile.announce_compilation(True)  # the next command starts afresh
        with _compile.announce_compilation_of(kernels):
            pass
    finally:
        _compile.announce_compilation(before)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" ...")[0] for line in lines] == [
        "hpcgym: compiling kernels, first run only",
        "hpcgym: compiling more kernels",
        "hpcgym: compiling kernels, first run only",
    ]


def test_a_package_folder_that_cannot_be_written_caches_in_the_user_cache_folder(monkeypatch, tmp_path):
    """A wheel installed into a read-only site-packages: numba's own fallback, which hpcgym relies on.

    numba tries ``__pycache__`` beside the source first and, when it cannot write there,
    the user-wide cache folder (``$XDG_CACHE_HOME/numba`` on Linux). A read-only package
    folder is simulated (the real one is not touched): numba's in-tree locator fails its
    write test as it does on a read-only folder. One of the engine's kernels, compiled
    afresh, is stored there, and a new process would find it (not cold).
    """
    from numba import njit
    from numba.core import caching, config

    def read_only(self):
        raise PermissionError(13, "Read-only file system", self.get_cache_path())

    monkeypatch.setattr(caching.InTreeCacheLocator, "ensure_cache_path", read_only)
    monkeypatch.setattr(config, "CACHE_DIR", "")  # no NUMBA_CACHE_DIR of the user's
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    compact = njit(cache=True)(ek.compact.py_func)  # the kernel as its module declares it
    assert compact._cache.cache_path.startswith(str(tmp_path / "numba"))
    assert _compile.cold_kernels([compact]) == ["compact"], "nothing stored there yet"
    compact(np.zeros(ek.HEADER + 1, dtype=np.int64))
    assert list((tmp_path / "numba").rglob("*.nbi")), "the index numba looks up"
    again = njit(cache=True)(ek.compact.py_func)  # as a new process sees it
    assert _compile.cold_kernels([again]) == []
