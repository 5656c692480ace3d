"""Mutation testing (``make mutation``): how many small changes to the code its own tests catch.

Cosmic Ray (``pip install 'hpcgym[mutation]'``) changes one operator, number, comparison
or condition at a time in a module and runs that module's own tests on the changed code;
a change the tests fail on is *killed*, one they pass is a *survivor*, a gap in the tests
or a change that does not change behaviour. The score is killed / (killed + survived);
mutants that make the module fail to import are counted as killed (the tests fail).

The modules and their own tests (:data:`TARGETS`) run with numba's JIT disabled
(``NUMBA_DISABLE_JIT=1``), so the compiled kernels run as the Python they are written in
and each mutant takes effect without compiling. Mutants are made and tested in a copy of
``hpcgym`` and ``tests`` in a temporary folder, so an interrupted run leaves the work tree
as it was.

Left out (:data:`EXCLUDED_OPERATORS`), as they change nothing the tests could see:
removing a decorator (with the JIT off ``@njit`` does nothing); replacing ``|``, which in
these modules appears only in type annotations (``np.ndarray | None``, text under ``from
__future__ import annotations``); replacing an arithmetic operator by a bitwise, shift,
power, modulo or floor division one or back; and ``is``/``is not`` in place of a
comparison of numbers.

``--sample N --seed S`` tests a seeded random sample of N mutants of each module
instead of all of them (a full run costs one test run per mutant: hours on 2 cores);
the score is then an estimate, printed with a 95 % Wilson interval.

    python benchmarks/mutation.py                                 # every target, every mutant
    python benchmarks/mutation.py --target metrics --target allocator --sample 40 --seed 0
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TARGETS = {
    "metrics": ("hpcgym/sim/metrics.py", ["tests/sim/test_metrics.py"]),
    "allocator": ("hpcgym/machine/allocator.py", ["tests/machine/test_allocator.py"]),
    "kernels": ("hpcgym/sim/_kernels.py", ["tests/sim/test_engine.py"]),
}
"""Each target: the module mutated and its own tests."""

EXCLUDED_OPERATORS = [
    r"core/RemoveDecorator",
    r"core/ReplaceBinaryOperator_BitOr_",
    r"core/ReplaceBinaryOperator_\w+_(BitXor|BitOr|BitAnd|LShift|RShift|Pow|Mod|FloorDiv)$",
    r"core/ReplaceBinaryOperator_(BitXor|LShift|RShift|Pow|Mod)_",
    r"core/ReplaceComparisonOperator_\w+_(Is|IsNot)$",
    r"core/ReplaceUnaryOperator_USub_(Invert|Not)$",
]
"""Cosmic Ray operators left out (regular expressions; see the module docstring)."""

TIMEOUT_S = 600.0
"""A mutant whose tests run longer than this (an endless loop) counts as killed."""


def _tool(name: str) -> str:
    """The Cosmic Ray command ``name`` beside this interpreter, else on ``PATH``."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def _config(module: str, tests: list[str], path: Path) -> None:
    command = " ".join(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *tests]
    )
    excluded = ", ".join(json.dumps(e) for e in EXCLUDED_OPERATORS)
    path.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {TIMEOUT_S}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(command)}\n\n"
        '[cosmic-ray.distributor]\nname = "local"\n\n'
        f"[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n"
    )


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def run_target(name: str, work: Path, sample: int | None, seed: int) -> dict[str, object]:
    """Make, filter (and sample) and test the mutants of one target; its counts and survivors."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    module, tests = TARGETS[name]
    config, session = work / f"{name}.toml", work / f"{name}.sqlite"
    _config(module, tests, config)
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    subprocess.run([_tool("cosmic-ray"), "init", str(config), str(session)], cwd=work, env=env, check=True)
    subprocess.run([_tool("cr-filter-operators"), str(session), str(config)], cwd=work, env=env, check=True)
    with use_db(str(session), WorkDB.Mode.open) as db:
        # in the module's order (job ids are random): a seed draws the same mutants every time
        def where(item: Any) -> tuple[Any, ...]:
            m = item.mutations[0]
            return (m.start_pos, m.operator_name, m.occurrence)

        pending = [item.job_id for item in sorted(db.pending_work_items, key=where)]
        made = len(pending)
        if sample is not None and sample < len(pending):
            keep = set(random.Random(seed).sample(pending, sample))
            skip = [j for j in pending if j not in keep]
            db.set_multiple_results(
                skip, WorkResult(output="not sampled", worker_outcome=WorkerOutcome.SKIPPED)
            )
    t0 = time.perf_counter()
    subprocess.run([_tool("cosmic-ray"), "exec", str(config), str(session)], cwd=work, env=env, check=True)
    seconds = time.perf_counter() - t0
    killed = survived = incompetent = 0
    survivors = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.SURVIVED:
                survived += 1
                m = item.mutations[0]
                survivors.append(f"{m.module_path}:{m.start_pos[0]} {m.operator_name} #{m.occurrence}")
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                incompetent += 1
            else:
                killed += 1
    tested = killed + survived
    low, high = _wilson(killed, tested)
    return {
        "target": name,
        "module": module,
        "tests": tests,
        "mutants": made,
        "tested": tested,
        "killed": killed,
        "survived": survived,
        "incompetent": incompetent,
        "score": killed / tested if tested else math.nan,
        "score_95ci": [low, high],
        "seconds": seconds,
        "survivors": sorted(survivors),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", action="append", choices=sorted(TARGETS), help="default: every target")
    parser.add_argument("--sample", type=int, default=None, help="test this many mutants of each target")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    if not Path(_tool("cosmic-ray")).exists():
        print("mutation: cosmic-ray is not installed: pip install 'hpcgym[mutation]'", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="hpcgym-mutation-") as tmp:
        work = Path(tmp)
        for part in ("hpcgym", "tests"):
            shutil.copytree(ROOT / part, work / part, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(ROOT / "pyproject.toml", work / "pyproject.toml")
        for name in args.target or list(TARGETS):
            r = run_target(name, work, args.sample, args.seed)
            results.append(r)
            low, high = r["score_95ci"]  # type: ignore[misc]
            print(
                f"{name}: {r['killed']} of {r['tested']} mutants killed ({100 * r['score']:.1f} %, "  # type: ignore[operator]
                f"95 % CI {100 * low:.0f}-{100 * high:.0f} %) of {r['mutants']} made, "
                f"{r['incompetent']} incompetent, {r['seconds'] / 60:.1f} min",
                flush=True,
            )
            for s in r["survivors"]:  # type: ignore[attr-defined]
                print(f"  survived: {s}", flush=True)
    killed = sum(int(r["killed"]) for r in results)  # type: ignore[call-overload]
    tested = sum(int(r["tested"]) for r in results)  # type: ignore[call-overload]
    if tested:
        low, high = _wilson(killed, tested)
        share = f"{100 * killed / tested:.1f} %, 95 % CI {100 * low:.0f}-{100 * high:.0f} %"
        print(f"total: {killed} of {tested} killed ({share})")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
