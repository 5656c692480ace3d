"""Sweep throughput: full SDSC-SP2 EASY++ simulations per minute, one process against all cores.

The sweep is EASY++ over the full SDSC-SP2 trace with ``HPCGYM_BENCH_SWEEP_RUNS``
(default 200) predictor configurations of 004 section 7, drawn with
:func:`hpcgym.predict.sample_predictor_space` (seed 0): every configuration a
different simulation, as in 004's parameter study. The same configurations run three
ways, each into a fresh results table, timed by the wall clock of
:func:`hpcgym.experiments.sweep.run_sweep` with the trace read beforehand:

0. one process on the engine's Python loop (every ``Simulator.run`` with
   ``compiled=False``): what a configuration cost before EASY++ ran in the compiled
   event loop;
1. one process (``processes=1``: the runs one after another in this process);
2. the local process pool on every core (``processes=os.cpu_count()``);
3. Ray on every core (when the ``ray`` extra is installed), including Ray's start-up.

Ways 0 and 1 give the cost of one configuration (wall seconds / N) and in CartPole
steps (that times ``CartPole-v1``'s random steps per second, measured just before, see
``bench_engine.py``), and way 1 its ratio to way 0. ``HPCGYM_BENCH_SWEEP_WAYS=one`` runs
ways 0 and 1 only (on a busy machine, where the parallel ways measure the contention).

Parallel efficiency = time of 1 / (cores x time of 2 or 3). Targets of issue 14: >= 85 %
on 2 cores and >= 20 full SDSC-SP2 simulations per core-minute. Wall-clock figures need a
quiet machine; ``sims_per_cpu_minute`` (from each run's CPU seconds) and the 1-minute
``load_average`` at the end of each way say how far another load skewed them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
from bench_engine import cartpole_rate  # the same yardstick as the engine figures

from hpcgym.common.extras import is_available
from hpcgym.experiments.sweep import SweepSpec, load_traces, run_sweep
from hpcgym.predict import sample_predictor_space

TRACE = "SDSC-SP2-1998-4.2-cln.swf.gz"


@contextmanager
def python_loop() -> Iterator[None]:
    """Every ``Simulator.run`` in this process on the engine's Python loop (``compiled=False``)."""
    from hpcgym.sim import engine

    run = engine.Simulator.run

    def on_python_loop(self, dispatcher, *, progress=None, compiled=True):  # type: ignore[no-untyped-def]
        return run(self, dispatcher, progress=progress, compiled=False)

    engine.Simulator.run = on_python_loop  # type: ignore[method-assign]
    try:
        yield
    finally:
        engine.Simulator.run = run  # type: ignore[method-assign]


def run(traces_dir: Path) -> list[dict]:
    path = traces_dir / TRACE
    if not path.is_file():
        print(f"   skipped: {path} not found")
        return []
    n = int(os.environ.get("HPCGYM_BENCH_SWEEP_RUNS", "200"))
    cores = os.cpu_count() or 1
    predictors = [str(c) for c in sample_predictor_space(n, seed=0)]
    spec = SweepSpec.from_mapping(
        {"name": "bench", "dispatchers": ["easy++"], "traces": [str(path)], "predictors": predictors}
    )
    traces = load_traces(spec)
    jobs = len(traces[str(path)])
    ways = [("one process, Python loop", "local", 1), ("one process", "local", 1)]
    if os.environ.get("HPCGYM_BENCH_SWEEP_WAYS", "all") != "one":
        ways.append((f"process pool, {cores} workers", "local", cores))
        if is_available("ray"):
            ways.append((f"ray, {cores} CPUs", "ray", cores))
    rate = cartpole_rate()
    rows: list[dict] = []
    single = slow = None
    for what, backend, workers in ways:
        loop = python_loop() if what.endswith("Python loop") else nullcontext()
        with tempfile.TemporaryDirectory() as tmp, loop:
            result = run_sweep(
                spec,
                Path(tmp) / "results.csv",
                backend=backend,
                processes=workers,
                progress=False,
                traces=traces,
            )
        assert result.ran == n, (result.ran, n)
        seconds = result.seconds
        if slow is None:
            slow = seconds
        elif single is None:
            single = seconds
        per_run = {}
        if workers == 1:
            per_run = {
                "seconds_per_configuration": seconds / n,
                "cartpole_steps_per_configuration": rate * seconds / n,
                "python_loop_ratio": slow / seconds,
            }
        rows.append(
            {
                "what": f"EASY++ with {n} predictor configurations on SDSC-SP2 ({jobs:,} jobs), {what}",
                **per_run,
                "cartpole_steps_per_second": rate,
                "seconds": seconds,
                "sims_per_minute": 60.0 * n / seconds,
                "sims_per_core_minute": 60.0 * n / (seconds * workers),
                "efficiency": single / (workers * seconds) if single is not None else float("nan"),
                "mean_sim_seconds": float(np.mean([r["sim_seconds"] for r in result.rows])),
                "mean_cpu_seconds": float(np.mean([r["cpu_seconds"] for r in result.rows])),
                "sims_per_cpu_minute": 60.0 / float(np.mean([r["cpu_seconds"] for r in result.rows])),
                "load_average": os.getloadavg()[0],
            }
        )
    return rows
