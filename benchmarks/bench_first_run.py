"""First run: ``hpcgym demo`` with an empty kernel cache, a warm one, and ``import hpcgym``.

Every figure is a fresh interpreter (``python -m hpcgym demo``, ``python -c "import
hpcgym"``) started from a tree's root. A cold run gets an empty cache folder of its own
through ``NUMBA_CACHE_DIR`` (numba then reads and writes its cache only there), which is
what a fresh install sees; nothing of the tree's own cache is read or removed. A tree with a
current native core (``hpcgym/common/native.py``, built by ``pip install -e .``) is also run
cold with the core off (``cold_no_core``: an install without a C compiler). ``cold_env`` is a
first environment on an empty cache: ``Dispatch-v1`` made, reset and stepped 500 times. Seconds are wall
time and the child's CPU time (user + system), medians of ``--repeat`` runs.

``make bench`` calls :func:`run` (this tree only). Run directly, it can compare with an
earlier commit, whose files ``git archive`` extracts into a temporary folder; the two
trees alternate (A B, B A, ...) so a machine that gets busier slows both alike::

    python benchmarks/bench_first_run.py --base COMMIT --repeat 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REPEATS = 3


def timed(
    argv: Sequence[str], tree: Path, cache: Path | None = None, core: bool = True
) -> tuple[float, float]:
    """Wall and CPU seconds of ``python argv`` run in ``tree`` (with its own numba cache folder).

    ``core=False`` turns the native core off (``HPCGYM_NATIVE=0``): what an install without a
    C compiler, or an older commit, gets.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "HPCGYM_NATIVE")}
    env["PYTHONPATH"] = str(tree)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    if not core:
        env["HPCGYM_NATIVE"] = "0"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=tree, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


FIRST_EPISODE = """
import gymnasium as gym, numpy as np, hpcgym
env = gym.make("hpcgym/Dispatch-v1")
obs, info = env.reset(seed=0)
rng = np.random.default_rng(0)
for _ in range(500):
    obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    if term or trunc:
        obs, info = env.reset()
"""
"""A first environment: ``Dispatch-v1`` made, reset, 500 random masked steps (``cold_env``)."""


def native_status(tree: Path) -> str:
    """What ``hpcgym.common.native.status()`` says in ``tree`` ("none" before the native core)."""
    code = "from hpcgym.common import native; print(native.status())"
    env = {k: v for k, v in os.environ.items() if k != "HPCGYM_NATIVE"}
    env["PYTHONPATH"] = str(tree)
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "none"


def measure(trees: dict[str, Path], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Every figure of every tree, ``repeats`` times, the trees alternating."""
    out: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    names = list(trees)
    with tempfile.TemporaryDirectory(prefix="hpcgym-first-run-") as tmp:
        for i in range(repeats):
            for name in names if i % 2 == 0 else names[::-1]:
                tree, fig = trees[name], out[name]
                cache = Path(tmp) / f"{name}-{i}"
                demo = ["-m", "hpcgym", "demo"]
                # an empty cache, then the same cache again: what every later run pays
                for kind in ("cold", "warm"):
                    wall, cpu = timed(demo, tree, cache)
                    fig.setdefault(f"{kind}_wall_s", []).append(wall)
                    fig.setdefault(f"{kind}_cpu_s", []).append(cpu)
                wall, _ = timed(["-c", "import hpcgym"], tree, cache)
                fig.setdefault("import_wall_s", []).append(wall)
                shutil.rmtree(cache, ignore_errors=True)
                wall, cpu = timed(["-c", FIRST_EPISODE], tree, cache)  # the environment, cold
                fig.setdefault("cold_env_wall_s", []).append(wall)
                fig.setdefault("cold_env_cpu_s", []).append(cpu)
                shutil.rmtree(cache, ignore_errors=True)
                if native_status(tree).startswith("loaded"):  # and without it, on an empty cache
                    wall, cpu = timed(demo, tree, cache, core=False)
                    fig.setdefault("cold_no_core_wall_s", []).append(wall)
                    fig.setdefault("cold_no_core_cpu_s", []).append(cpu)
                    shutil.rmtree(cache, ignore_errors=True)
    return out


def run(traces_dir: Path | None = None, repeats: int = REPEATS) -> list[dict]:
    """The figures of this tree (``make bench``)."""
    figs = measure({"head": REPO}, repeats)["head"]
    return [{"what": key, "median": statistics.median(v), "runs": len(v)} for key, v in figs.items()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default=None, help="a commit to compare with (its files, via git archive)")
    ap.add_argument("--repeat", type=int, default=REPEATS)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hpcgym-base-") as tmp:
        trees = {"head": REPO}
        if args.base is not None:
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.base], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            trees = {"base": Path(tmp), "head": REPO}
        figs = measure(trees, args.repeat)
        status = {name: native_status(tree) for name, tree in trees.items()}
    compare = len(trees) > 1
    header = " | ".join(f"{name} median" for name in trees)
    print(f"| figure | {header} |" + (" head/base |" if compare else ""))
    print("|---" * (len(trees) + 1 + compare) + "|")
    for key in figs["head"]:
        meds = [statistics.median(figs[name][key]) if key in figs[name] else None for name in trees]
        cells = " | ".join("-" if m is None else f"{m:.2f}" for m in meds)
        ratio = f" {meds[-1] / meds[0]:.2f} |" if None not in meds else " - |"
        print(f"| {key} | {cells} |" + (ratio if compare else ""))
    for name in trees:
        print(f"{name}: native core {status[name]}")
    for name in trees:
        runs = "; ".join(f"{k} " + ", ".join(f"{v:.2f}" for v in vs) for k, vs in figs[name].items())
        print(f"{name}: {runs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
