"""Sweeps (``hpcgym sweep``): many simulations from one spec, on a local process pool or on Ray.

A **sweep** is the grid (or a seeded random sample of the grid) of dispatchers x
predictors x traces x load factors x seeds, described in a TOML (or YAML) file or by
command-line flags::

    name = "easy-loads"
    dispatchers = ["easy", "easy++"]         # hpcgym policies, NAME[:key=value,...]
    predictors = ["preset", "user-avg:k=3"]  # hpcgym predictors; "preset": the dispatcher's own
    traces = ["../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"]  # SWF paths, or "bundled"
    loads = [0.9, 1.0, 1.1]                  # offered-load factors (inter-arrival times / F)
    seeds = [0]

Every run is one :func:`hpcgym.baselines.run.run_policy` call on the trace with its load
scaled by :meth:`~hpcgym.workloads.Workload.scale_load` (004 section 3.4). Its result row
(:data:`COLUMNS`) is appended to a CSV table the moment the run finishes and flushed,
so Ctrl-C or a crash loses no finished run; running the same spec again reads the table
and runs only the configurations whose **run key** (:meth:`RunConfig.key`, a hash of the
run's parameters) is not in it yet.

Backends (:mod:`~hpcgym.experiments.sweep.backends`): a local process pool (default) or Ray;
both give the same table apart from the timing columns (:data:`TIMING_COLUMNS`): the
simulations are deterministic.

The modules: :mod:`~hpcgym.experiments.sweep.spec` (what a sweep runs),
:mod:`~hpcgym.experiments.sweep.runs` (its runs and their keys, one run simulated),
:mod:`~hpcgym.experiments.sweep.table` (the results table),
:mod:`~hpcgym.experiments.sweep.backends` (process pool and Ray),
:mod:`~hpcgym.experiments.sweep.running` (:func:`run_sweep`, resuming, the estimate),
:mod:`~hpcgym.experiments.sweep.figures` (the figures after a sweep); training sweeps, whose
runs are trainings of an agent, are :mod:`~hpcgym.experiments.sweep.train_spec` and
:mod:`~hpcgym.experiments.sweep.train_runs` (imported by their module path).
"""

from __future__ import annotations

from hpcgym.experiments.sweep.backends import BACKENDS
from hpcgym.experiments.sweep.figures import load_figure, write_figures
from hpcgym.experiments.sweep.running import SweepResult, estimate, run_sweep
from hpcgym.experiments.sweep.runs import RunConfig, expand, load_traces, offered_load
from hpcgym.experiments.sweep.spec import PRESETS, SweepSpec, preset_path
from hpcgym.experiments.sweep.table import COLUMNS, TIMING_COLUMNS, ResultsTable, read_results, write_parquet

__all__ = [
    "BACKENDS",
    "COLUMNS",
    "PRESETS",
    "TIMING_COLUMNS",
    "ResultsTable",
    "RunConfig",
    "SweepResult",
    "SweepSpec",
    "estimate",
    "expand",
    "load_figure",
    "load_traces",
    "offered_load",
    "preset_path",
    "read_results",
    "run_sweep",
    "write_figures",
    "write_parquet",
]
