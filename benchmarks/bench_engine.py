"""Engine throughput: FCFS and EASY-W over full PWA traces (in-process simulation time).

Each figure is also given in *CartPole steps*: the run's seconds times the steps per
second of Gymnasium's ``CartPole-v1`` with random actions, measured in the same process
just before (:func:`cartpole_rate`): a yardstick that moves with the machine, so figures
of different machines and loads compare. On the full SDSC-SP2 log the built-in
dispatchers are timed on both paths of the engine, the compiled event loop (the default,
:mod:`hpcgym.baselines._loop`) and the Python loop (``Simulator.run(compiled=False)``),
in the same run, with their ratio: FCFS, EASY, and EASY++ (whose user-history predictor
and prediction correction run in the compiled loop as kernels).

``make bench`` calls :func:`run`. Run directly, it times one preset with one predictor on
one trace, e.g. EASY++ (whose predictor revises running jobs' predictions)::

    python benchmarks/bench_engine.py --policy easy++ --trace path/to/SDSC-SP2-1998-4.2-cln.swf.gz

``--easypp-parts`` times where EASY++'s compiled run goes instead (:func:`easypp_parts`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, read_swf

TRACES = (
    ("SDSC-SP2-1998-4.2-cln.swf.gz", None),
    ("CTC-SP2-1996-3.1-cln.swf.gz", 512),
    ("HPC2N-2002-2.2-cln.swf.gz", None),
)
REPEATS = 3


def cartpole_rate(seconds: float = 1.0) -> float:
    """Random-action steps per second of ``gym.make("CartPole-v1")`` (resets included)."""
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(1000):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
        steps += 1000
    return steps / (time.perf_counter() - t0)


def time_policy(
    workload, policy: str, predictor: str | None = None, repeats: int = REPEATS, compiled: bool = True
) -> dict:
    """Median in-process seconds of ``repeats`` runs (after one warm-up that compiles kernels).

    ``sim_seconds`` is the run itself; ``run_seconds`` adds building the engine for the
    workload (``Simulator(...)``) and the schedule, what a user's call costs.
    """
    secs = []
    total = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        sim = Simulator(workload, predictor=preset_predictor(policy, predictor))
        s = sim.run(make_policy(policy), progress=False, compiled=compiled)
        if i:
            secs.append(s.sim_seconds)
            total.append(time.perf_counter() - t0)
    med = statistics.median(secs)
    return {
        "what": f"{policy} {s.predictor}" + ("" if compiled else " (Python loop)"),
        "trace": workload.name,
        "jobs": len(workload),
        "sim_seconds": med,
        "run_seconds": statistics.median(total),
        "jobs_per_second": len(workload) / med,
        "decisions": s.decisions,
        "decision_us": 1e6 * med / max(s.decisions, 1),
    }


def easypp_parts(workload, repeats: int = REPEATS) -> list[dict]:
    """EASY++'s compiled run taken apart, each the best of ``repeats`` warm runs (in-process seconds).

    Three runs: EASY-SJBF with W (no predictor hooks); EASY++'s own first predictions
    as a fixed predictor with correction on top (EASY++'s schedule without the user
    history's kernels); EASY++ itself. The difference of the last two is what the user
    history's kernels cost in the loop.
    """
    from hpcgym.predict import Corrected, Predictor

    first = (
        Simulator(workload, predictor=preset_predictor("easy++")).run(make_policy("easy++")).first_prediction
    )

    class FirstPredictions(Predictor):
        def reset(self, w) -> None:  # type: ignore[no-untyped-def]
            super().reset(w)
            self.prediction = first.copy()

    cases = (
        ("easy-sjbf with W", "easy-sjbf", lambda: preset_predictor("easy-sjbf")),
        ("easy++ first predictions, fixed, + pcor", "easy++", lambda: Corrected(FirstPredictions())),
        ("easy++ (user-avg+pcor)", "easy++", lambda: preset_predictor("easy++")),
    )
    rows = []
    for what, policy, predictor in cases:
        secs = []
        for i in range(repeats + 1):
            s = Simulator(workload, predictor=predictor()).run(make_policy(policy), progress=False)
            if i:
                secs.append(s.sim_seconds)
        rows.append(
            {
                "what": what,
                "sim_seconds": min(secs),
                "decisions": s.decisions,
                "revisions": len(s.prediction_changes),
            }
        )
    return rows


def present_traces(traces: Path, names: Iterable[str | tuple[str, int | None]]) -> Iterator[Workload]:
    """Each named trace (or ``(name, procs)``) found in ``traces``, read; a line for each absent one."""
    for entry in names:
        name, procs = entry if isinstance(entry, tuple) else (entry, None)
        path = traces / name
        if not path.exists():
            print(f"   skipped {name}: not in {traces}")
            continue
        yield read_swf(path, procs=procs)


def run(traces: Path) -> list[dict]:
    rows = []
    rate = cartpole_rate()
    for w in present_traces(traces, TRACES):
        both = w.name.startswith("SDSC-SP2")
        for policy in ("fcfs", "easy", *(("easy++",) if both else ())):
            fast = time_policy(w, policy)
            rows.append(fast)
            if both:
                slow = time_policy(w, policy, compiled=False)
                fast["python_loop_ratio"] = slow["run_seconds"] / fast["run_seconds"]
                rows.append(slow)
    for row in rows:
        row["cartpole_steps_per_second"] = rate
        row["cartpole_steps"] = row["run_seconds"] * rate
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", type=Path, default=None, help="SWF trace (default: the bundled slice)")
    ap.add_argument("--procs", type=int, default=None, help="machine size (default: read_swf's)")
    ap.add_argument("--policy", default="easy", help="dispatcher preset (default: easy)")
    ap.add_argument("--predictor", default=None, help="predictor name (default: the preset's own)")
    ap.add_argument("--repeats", type=int, default=REPEATS, help=f"timed runs (default {REPEATS})")
    ap.add_argument("--easypp-parts", action="store_true", help="time EASY++'s compiled run taken apart")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be positive")
    from hpcgym.workloads import default_trace_path

    w = read_swf(args.trace if args.trace is not None else default_trace_path(), procs=args.procs)
    if args.easypp_parts:
        for row in easypp_parts(w, args.repeats):
            print(json.dumps(row))
        return 0
    rate = cartpole_rate()
    row = time_policy(w, args.policy, args.predictor, args.repeats)
    row["cartpole_steps"] = row["run_seconds"] * rate
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
