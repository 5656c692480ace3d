"""A/B benchmark: two versions of hpcgym measured in the same run, interleaved.

Usage::

    python benchmarks/ab.py --base COMMIT [--head COMMIT] [--repeat 5] [--check]
    python benchmarks/ab.py --base-from tests/golden/schedules.json --check   # make bench

``base`` is checked out into a temporary ``git worktree`` (removed at the end); ``head``
is this working tree (uncommitted changes included) unless ``--head`` names a commit,
which gets a temporary worktree too. Every measurement runs in a fresh subprocess whose
``PYTHONPATH`` is that side's tree, and the sides alternate (A B, B A, A B, ...), so a
machine that gets busier slows both alike. A first round, not counted, compiles each
side's kernels. Figures (as in ``bench_engine.py`` and ``bench_env.py``):

* ``easy_sdsc_sp2_s``: in-process seconds of the simulation run of EASY with wall-time
  estimates over the full SDSC-SP2 trace, after one warm-up run in the same process
  (lower is better);
* ``easypp_sdsc_sp2_s``: the same for EASY++ (``user-avg+pcor``, Tsafrir et al. 2007),
  whose predictor revises running jobs' predictions: the engine's revision path;
* ``sweep_config_s``: seconds per configuration of 004 section 7's sweep (EASY++ over
  SDSC-SP2 with eight predictor configurations of ``sample_predictor_space(8, seed=0)``,
  each simulated and reported by ``run_policy`` as ``hpcgym sweep`` does), the mean;
* ``env_{none,easy}_steps_per_s``: steps per second of the newest
  ``hpcgym/Dispatch-v*`` environment with ``backfill`` none and easy, K = 64, bundled
  trace, made with ``gymnasium.make``, driven by a random policy that asks for the
  action mask at every step and draws a valid action with a seeded generator (higher
  is better).

Seconds are the process's CPU time by default (``--clock cpu``): on a shared machine a
process waiting for a core loses wall time, not CPU time, so CPU time is the steadier
measure of what the code costs. ``--clock wall`` uses wall time (for the engine,
``Schedule.sim_seconds``, the figure of ``bench_engine.py``); both are in ``--out``.

Prints, per figure, both medians, head/base, how much slower head is and both ranges;
with ``--check`` exits 1 when head is more than ``--tolerance`` (10 %) slower than base
on any figure (2 on errors). It also says whether both sides give EASY and EASY++ the
same schedules on SDSC-SP2 (sha256 of the start times).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_TRACES = REPO.parent / "shared" / "traces"
SDSC_SP2 = "SDSC-SP2-1998-4.2-cln.swf.gz"
ENV_STEPS = 50_000
ENV_CASES = ("none", "easy")
SWEEP_CONFIGS = 8
"""Predictor configurations of 004 section 7 (``sample_predictor_space(8, seed=0)``) in ``sweep_config_s``."""


@dataclass(frozen=True)
class Figure:
    key: str
    what: str
    unit: str
    higher_is_better: bool


FIGURES = (
    Figure("easy_sdsc_sp2_s", "EASY (W), full SDSC-SP2, simulation loop", "s", False),
    Figure("easypp_sdsc_sp2_s", "EASY++ (user-avg+pcor), full SDSC-SP2, simulation loop", "s", False),
    Figure(
        "sweep_config_s",
        f"004 section 7 sweep, one EASY++ configuration with its report row (mean of {SWEEP_CONFIGS})",
        "s",
        False,
    ),
    *(
        Figure(
            f"env_{b}_steps_per_s", f"env Dispatch K=64 backfill={b}, random masked policy", "steps/s", True
        )
        for b in ENV_CASES
    ),
)


# ------------------------------------------------------------------ the measuring side
def measure(trace: str, env_steps: int, seed: int) -> dict[str, Any]:
    """One round of every figure with whatever ``hpcgym`` is on the path (runs in the subprocess).

    Uses only the public API both sides share: ``read_swf``, ``make_policy``,
    ``preset_predictor``, ``Simulator(...).run`` and ``gymnasium.make``, imported from the
    package faces that exist before and after the layered packages (issue 22).
    """
    import hashlib
    import re
    import time

    import numpy as np

    import hpcgym
    from hpcgym import read_swf
    from hpcgym.baselines import make_policy, preset_predictor
    from hpcgym.sim import Simulator

    figures: dict[str, dict[str, float]] = {}
    out: dict[str, Any] = {"hpcgym": str(Path(hpcgym.__file__).resolve().parent), "figures": figures}
    w = read_swf(trace)
    for _ in range(2):  # the first run loads the compiled kernels
        sim = Simulator(w, predictor=preset_predictor("easy"))
        cpu0 = time.process_time()
        s = sim.run(make_policy("easy"), progress=False)
        cpu = time.process_time() - cpu0
    figures["easy_sdsc_sp2_s"] = {"wall": s.sim_seconds, "cpu": cpu}
    out["easy_jobs"] = len(w)
    out["easy_start_sha256"] = hashlib.sha256(
        np.ascontiguousarray(s.start, dtype="<f8").tobytes()
    ).hexdigest()
    for _ in range(2):
        sim = Simulator(w, predictor=preset_predictor("easy++"))
        cpu0 = time.process_time()
        s = sim.run(make_policy("easy++"), progress=False)
        cpu = time.process_time() - cpu0
    figures["easypp_sdsc_sp2_s"] = {"wall": s.sim_seconds, "cpu": cpu}
    out["easypp_start_sha256"] = hashlib.sha256(
        np.ascontiguousarray(s.start, dtype="<f8").tobytes()
    ).hexdigest()

    # what the 004 section 7 sweep pays per configuration: EASY++ planning with one predictor of
    # 004's space, the simulation and the report row (``run_policy``, as ``hpcgym sweep`` runs it)
    from hpcgym.baselines import run_policy
    from hpcgym.predict import sample_predictor_space

    configs = [str(c) for c in sample_predictor_space(SWEEP_CONFIGS, seed=0)]
    run_policy(w, "easy++", configs[0], progress=False)  # loads the kernels
    t0, cpu0 = time.perf_counter(), time.process_time()
    for config in configs:
        run_policy(w, "easy++", config, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    figures["sweep_config_s"] = {"wall": wall / len(configs), "cpu": cpu / len(configs)}

    import gymnasium as gym

    versions = [int(m.group(1)) for i in gym.registry if (m := re.fullmatch(r"hpcgym/Dispatch-v(\d+)", i))]
    env_id = f"hpcgym/Dispatch-v{max(versions)}"
    out["env_id"] = env_id
    for backfill in ENV_CASES:
        env = gym.make(env_id, window_size=64, backfill=backfill)
        masks = env.unwrapped.action_masks  # type: ignore[attr-defined]
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        for warm in (True, False):  # a short warm-up run loads the kernels
            steps = min(2_000, env_steps) if warm else env_steps
            t0, cpu0 = time.perf_counter(), time.process_time()
            for _ in range(steps):
                valid = np.flatnonzero(masks())
                _, _, terminated, _, _ = env.step(valid[rng.integers(len(valid))])
                if terminated:
                    env.reset()
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        env.close()
        figures[f"env_{backfill}_steps_per_s"] = {"wall": env_steps / wall, "cpu": env_steps / cpu}
    return out


# ------------------------------------------------------------------ the driver
def fail(message: str) -> NoReturn:
    """Stop with ``message`` on stderr and exit status 2 (1 is kept for "head is slower")."""
    print(f"ab.py: {message}", file=sys.stderr)
    raise SystemExit(2)


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    if proc.returncode:
        fail(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def resolve(commit: str) -> str:
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        fail(f"{commit!r} is not a commit of this repository (is its history fetched?)")
    return proc.stdout.strip()


class Worktrees:
    """Temporary detached ``git worktree``s, all removed on exit."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hpcgym-ab-"))
        self.paths: list[Path] = []

    def add(self, commit: str, name: str) -> Path:
        path = self.root / name
        git("worktree", "add", "--detach", "--quiet", str(path), commit)
        self.paths.append(path)
        return path

    def __enter__(self) -> Worktrees:
        return self

    def __exit__(self, *exc: object) -> None:
        for path in self.paths:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO, capture_output=True)


def run_side(tree: Path, trace: Path, env_steps: int, seed: int, clock: str) -> dict[str, Any]:
    """One round of measurements in a fresh interpreter with ``tree`` first on the path.

    Returns the subprocess's report with each figure by ``clock`` as ``result[figure]``.
    """
    cmd = [sys.executable, str(Path(__file__).resolve()), "--measure", str(trace)]
    cmd += ["--env-steps", str(env_steps), "--seed", str(seed)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode:
        fail(f"measuring {tree} failed:\n{proc.stderr.strip()[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    if Path(result["hpcgym"]) != (tree / "hpcgym").resolve():
        fail(f"the side in {tree} imported hpcgym from {result['hpcgym']}, not its own tree")
    for fig in FIGURES:
        result[fig.key] = result["figures"][fig.key][clock]
    return result


def slowdown(fig: Figure, base: float, head: float) -> float:
    """How much slower head is than base (0.1 = 10 % slower; negative: faster)."""
    return base / head - 1 if fig.higher_is_better else head / base - 1


def table(sides: dict[str, list[dict[str, Any]]], tolerance: float) -> tuple[list[str], list[str]]:
    """The printed table and the figures on which head is more than ``tolerance`` slower."""
    lines = [
        f"{'figure':<64} {'base median':>12} {'head median':>12} {'head/base':>9} {'head slower':>11}"
        "  base range / head range",
    ]
    failed = []
    for fig in FIGURES:
        b = [r[fig.key] for r in sides["base"]]
        h = [r[fig.key] for r in sides["head"]]
        mb, mh = statistics.median(b), statistics.median(h)
        slow = slowdown(fig, mb, mh)
        flag = ""
        if slow > tolerance:
            failed.append(fig.key)
            flag = "  <- over the tolerance"
        fmt = "{:.3f}" if fig.unit == "s" else "{:,.0f}"
        name = f"{fig.what} ({fig.unit})"
        lines.append(
            f"{name:<64} {fmt.format(mb):>12} {fmt.format(mh):>12} {mh / mb:>9.3f} {100 * slow:>+10.1f}%  "
            f"{fmt.format(min(b))}-{fmt.format(max(b))} / {fmt.format(min(h))}-{fmt.format(max(h))}{flag}"
        )
    return lines, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--base", help="the commit to compare against")
    which.add_argument("--base-from", type=Path, help="a golden fixture JSON: compare against its commit")
    ap.add_argument("--head", help="a commit to measure instead of this working tree")
    ap.add_argument("--repeat", type=int, default=5, help="measured rounds per side (default 5)")
    ap.add_argument("--check", action="store_true", help="exit 1 if head is slower than --tolerance allows")
    ap.add_argument("--tolerance", type=float, default=0.10, help="allowed slowdown (default 0.10)")
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES, help=f"folder holding {SDSC_SP2}")
    ap.add_argument("--env-steps", type=int, default=ENV_STEPS, help="measured env steps per round")
    ap.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time figures by the process's CPU time (default: steadier on a shared machine) or wall time",
    )
    ap.add_argument("--out", type=Path, help="also write every measurement as JSON here")
    ap.add_argument("--measure", metavar="TRACE", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.measure:  # we are a side's subprocess
        print(json.dumps(measure(args.measure, args.env_steps, args.seed)))
        return 0
    if args.base is None and args.base_from is None:
        ap.error("give --base COMMIT or --base-from FIXTURE.json")
    if args.repeat < 1 or args.env_steps < 1:
        ap.error("--repeat and --env-steps must be positive")
    if not 0 <= args.tolerance < 1:
        ap.error(f"--tolerance must be in [0, 1), got {args.tolerance}")
    trace = (args.traces / SDSC_SP2).resolve()
    if not trace.is_file():
        ap.error(f"{SDSC_SP2} not found in {args.traces}; pass --traces")
    if args.base_from is not None:
        try:
            base_ref = json.loads(args.base_from.read_text())["commit"]
        except (OSError, ValueError, KeyError) as err:
            ap.error(f"--base-from {args.base_from}: no commit recorded there ({err})")
    else:
        base_ref = args.base
    base = resolve(base_ref)
    head = resolve(args.head) if args.head else None
    if head:
        head_name = head[:12]
    else:
        dirty = " + uncommitted changes" if git("status", "--porcelain", "--", "hpcgym") else ""
        head_name = f"this tree ({git('rev-parse', '--short=12', 'HEAD')}{dirty})"

    with Worktrees() as trees:
        paths = {"base": trees.add(base, "base"), "head": trees.add(head, "head") if head else REPO}
        print(f"base: {base[:12]} ({paths['base']})\nhead: {head_name}", flush=True)
        print(
            f"{args.repeat} rounds + 1 warm-up, sides alternating; SDSC-SP2 and {args.env_steps:,} env "
            f"steps; {args.clock} time"
        )
        sides: dict[str, list[dict[str, Any]]] = {"base": [], "head": []}
        for r in range(args.repeat + 1):
            order = ("base", "head") if r % 2 == 0 else ("head", "base")
            for side in order:
                result = run_side(paths[side], trace, args.env_steps, r, args.clock)
                if r:
                    sides[side].append(result)
                print(
                    f"  round {r}{' (warm-up)' if not r else ''} {side}: "
                    + "  ".join(f"{f.key}={result[f.key]:.4g}" for f in FIGURES),
                    flush=True,
                )

    lines, failed = table(sides, args.tolerance)
    print("\n" + "\n".join(lines))
    for key, what in (("easy_start_sha256", "EASY"), ("easypp_start_sha256", "EASY++")):
        same = {r[key] for s in sides.values() for r in s}
        print(
            f"{what} schedule on SDSC-SP2 ({sides['head'][0]['easy_jobs']:,} jobs): "
            + ("identical on both sides" if len(same) == 1 else "DIFFERS between the sides")
        )
    print(f"env ids: base {sides['base'][0]['env_id']}, head {sides['head'][0]['env_id']}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        record = {"base_commit": base, "head_commit": head or "working tree", "rounds": sides}
        args.out.write_text(json.dumps(record, indent=1))
    if failed:
        verdict = f"head is more than {100 * args.tolerance:g} % slower than base on: {', '.join(failed)}"
        print(verdict, file=sys.stderr)
        return 1 if args.check else 0
    print(f"head is within {100 * args.tolerance:g} % of base on every figure")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
