"""``hpcgym sweep``: many simulations from one spec, on a local process pool or on Ray.

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

Backends: ``local`` (default) runs on a process pool of one worker per core, each worker
receiving every trace once through the pool's initializer; ``ray`` runs every
configuration as a Ray task on a local Ray instance (all cores) or on the cluster of
``address`` (``"auto"``, ``"ray://host:10001"``), every trace put in the object store
once. Both give the same table apart from the timing columns (:data:`TIMING_COLUMNS`):
the simulations are deterministic.

Choices where 004 and the issue leave a detail open:

* ``seeds`` reach only dispatchers and predictors that take a ``seed`` parameter
  (``random-fit:seed=S``); for the deterministic ones (the EASY family, every predictor
  of 004) the seed axis is collapsed to one run with an empty ``seed`` cell, instead of
  repeating identical simulations.
* ``offered_loads`` (targets such as 0.8 = 80 % of the machine) are turned into load
  factors per trace: ``factor = target / offered_load(trace)``, where
  :func:`offered_load` is the requested processor-seconds of the jobs over the machine's
  processor-seconds between the first and the last submission -- 004's "raise BLUE's
  76 % load to 80 % by multiplying all arrival times by 76/80".
* The run key hashes the trace's file name (not its folder), the job window, the
  machine size and the run's parameters, so a table stays valid when the traces move.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.workloads import Workload

__all__ = [
    "COLUMNS",
    "PRESETS",
    "RunConfig",
    "SweepResult",
    "SweepSpec",
    "expand",
    "load_traces",
    "offered_load",
    "preset_path",
    "read_results",
    "run_sweep",
]

PRESET_PREDICTOR = "preset"
"""The predictor string that means "the dispatcher's own" (``hpcgym policies``)."""

BUNDLED = "bundled"
"""The trace name that means the bundled 10,000-job slice of SDSC-SP2."""

PARAMETER_COLUMNS = ("key", "trace", "jobs", "offset", "dispatcher", "predictor", "load", "seed")
"""A run's parameters, as the table holds them (``jobs`` empty: the whole trace)."""

RESULT_COLUMNS = (
    "policy",
    "predictor_used",
    "procs",
    "offered_load",
    "jobs_simulated",
    "jobs_dropped",
    "jobs_measured",
    "mean_wait_s",
    "mean_slowdown",
    "mean_bsld",
    "max_wait_s",
    "utilization",
    "makespan_s",
    "accuracy",
    "mae_s",
    "decisions",
)
"""What a run measured (``jobs_dropped``: dropped while reading the trace, by its load report)."""

TIMING_COLUMNS = ("sim_seconds", "run_seconds", "cpu_seconds")
"""Timing columns, the only ones that differ between two runs of one configuration: the
engine's simulation seconds, the run's wall-clock seconds (scaling the load, simulating,
the metrics) and the CPU seconds of its process over the same span (on a machine shared
with other work, the run's own cost)."""

COLUMNS = PARAMETER_COLUMNS + RESULT_COLUMNS + TIMING_COLUMNS
"""The columns of a sweep's results table, in order."""

SPEC_KEYS = {
    "name": "the sweep's name (default: the spec file's stem)",
    "dispatchers": "dispatcher presets, NAME[:key=value,...] (hpcgym policies)",
    "predictors": 'predictor strings (hpcgym predictors); "preset" is the dispatcher\'s own',
    "predictor_grid": "tables of a predictor name and lists of its parameters' values; their product "
    "is added to predictors",
    "traces": 'SWF traces (paths relative to the current folder) or "bundled"',
    "loads": "offered-load factors: inter-arrival times are divided by each",
    "offered_loads": "target offered loads (0.8 = 80 %), turned into a load factor per trace",
    "seeds": "seeds for dispatchers and predictors that take a seed parameter",
    "jobs": "simulate only this many jobs of each trace (default: all)",
    "offset": "skip this many jobs of each trace first",
    "procs": "machine size in processors for every trace (default: the trace's, as hpcgym simulate)",
    "extra": "EASY-family presets' extra-processor rule: classic or all (default: the preset's)",
    "kill_at_estimate": "end jobs that reach their estimate",
    "include_all": "average over every job (no warm-up/cool-down exclusion)",
    "sample": "run a seeded random sample of this many configurations of the grid instead of all",
    "sample_seed": "seed of that sample",
    "predictor_sample": "keep a seeded random sample (sample_seed) of this many of predictor_grid's "
    "strings, each run on every trace, dispatcher and load (the explicit predictors always run)",
    "plot": 'figures written after the sweep: "load" (wait and bsld against offered load), "params" '
    '(004 section 7\'s ranking of predictor configurations, hpcgym.experiments.paramstudy) or "none"',
}
"""The keys of a spec file, with what each means (``hpcgym sweep --help`` lists them)."""

PLOTS = ("none", "load", "params")

PRESETS = {
    "tsafrir-load": "004 section 3.4, Fig. 7: EASY, EASY++ and PERFECT++ as the offered load grows",
    "tsafrir-params": "004 section 7: EASY++ with a sample of the 8,640 predictor configurations, "
    "ranked by average degradation (Table 11, Figs. 9-10, Table 12)",
    "train-seeds": "a training sweep: MaskablePPO, 3 seeds x 2 learning rates, each evaluated on the "
    "test split beside EASY, EASY++ and SJF",
}
"""Sweep specs shipped with the package (``hpcgym/experiments/sweep_presets/NAME.toml``)."""


def preset_path(name: str) -> Path:
    """The spec file of the shipped preset ``name`` (:data:`PRESETS`).

    Raises:
        UnknownNameError: no such preset.
    """
    if name not in PRESETS:
        raise UnknownNameError(f"--preset: unknown sweep preset {name!r}; known: {', '.join(PRESETS)}")
    return Path(str(resources.files("hpcgym.experiments").joinpath("sweep_presets", f"{name}.toml")))


# ------------------------------------------------------------------------------- spec
def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep runs: the grid's axes and the options every run shares.

    Attributes:
        dispatchers: dispatcher presets, ``NAME[:key=value,...]`` (``hpcgym policies``).
        traces: SWF paths (relative to the current folder) or ``"bundled"``.
        predictors: predictor strings (``hpcgym predictors``, ``NAME:key=value``);
            ``"preset"`` is the dispatcher's own predictor (the default when neither this
            nor ``predictor_grid`` is given).
        predictor_grid: tables such as ``{"name": "user-avg", "k": [1, 2], "full": [true,
            false]}``: the product of each table's parameter values, as
            ``NAME:key=value,...`` strings in the table's key order, is added to
            ``predictors`` (:func:`predictor_grid_names`).
        loads: offered-load factors (inter-arrival times are divided by each).
        offered_loads: target offered loads (fractions of the machine); when given they
            replace ``loads`` with one factor per trace (see :func:`offered_load`).
        seeds: seeds for dispatchers and predictors that take a ``seed`` parameter.
        jobs: simulate only this many jobs of each trace (None: all).
        offset: skip this many jobs of each trace first.
        procs: machine size for every trace (None: the trace's own).
        extra: EASY-family presets' extra-processor rule (None: the preset's).
        kill_at_estimate: end jobs that reach their estimate.
        include_all: average over every job (no warm-up/cool-down exclusion).
        sample: run a seeded random sample of this many configurations (None: the grid).
        sample_seed: seed of the sample (and of ``predictor_sample``).
        predictor_sample: keep a seeded random sample of this many of
            ``predictor_grid``'s strings (in grid order), each run on every trace,
            dispatcher and load, so that a parameter study's configurations are all
            measured on every trace (``sample`` draws runs, not configurations). The
            explicit ``predictors`` always run. None: the whole grid.
        plot: figures to write after the sweep, one of :data:`PLOTS`.
        name: the sweep's name.
        source: where the spec came from, for messages (a file, or ``"flags"``).
    """

    dispatchers: tuple[str, ...]
    traces: tuple[str, ...]
    predictors: tuple[str, ...] = ()
    predictor_grid: tuple[Mapping[str, Any], ...] = ()
    loads: tuple[float, ...] = (1.0,)
    offered_loads: tuple[float, ...] = ()
    seeds: tuple[int, ...] = (0,)
    jobs: int | None = None
    offset: int = 0
    procs: int | None = None
    extra: str | None = None
    kill_at_estimate: bool = False
    include_all: bool = False
    sample: int | None = None
    sample_seed: int = 0
    predictor_sample: int | None = None
    plot: str = "none"
    name: str = "sweep"
    source: str = "flags"

    def _fail(self, key: str, message: str) -> InvalidConfigError:
        return InvalidConfigError(f"{self.source}: {key}: {message}")

    def __post_init__(self) -> None:
        from hpcgym.baselines import EXTRA_RULES, preset_predictor, resolve_policy_name

        for key in (
            "dispatchers",
            "traces",
            "predictors",
            "predictor_grid",
            "loads",
            "offered_loads",
            "seeds",
        ):
            object.__setattr__(self, key, _as_tuple(getattr(self, key)))
        grid = predictor_grid_names(self.predictor_grid, self.source)
        n = self.predictor_sample
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise self._fail("predictor_sample", f"must be a whole number >= 1, got {n!r}")
        if n is not None and n < len(grid):
            pick = np.random.default_rng(self.sample_seed).choice(len(grid), size=n, replace=False)
            grid = [grid[i] for i in sorted(pick.tolist())]
        # the explicit predictors always run; a sampled grid string equal to one runs once
        predictors = self.predictors + tuple(g for g in grid if g not in self.predictors)
        object.__setattr__(self, "predictors", predictors or (PRESET_PREDICTOR,))
        for key in ("dispatchers", "traces", "predictors"):
            values = getattr(self, key)
            if not values:
                raise self._fail(key, "give at least one")
            bad = [v for v in values if not isinstance(v, str) or not v.strip()]
            if bad:
                raise self._fail(key, f"every entry must be a non-empty string, got {bad[0]!r}")
            if len(set(values)) != len(values):
                raise self._fail(key, f"an entry is given twice in {list(values)}")
        if not self.loads and not self.offered_loads:
            raise self._fail("loads", "give at least one load factor")
        for key in ("loads", "offered_loads"):
            values = getattr(self, key)
            bad = [v for v in values if not _is_number(v) or not math.isfinite(v) or v <= 0]
            if bad:
                raise self._fail(key, f"every entry must be a positive number, got {bad[0]!r}")
            if len(set(values)) != len(values):
                raise self._fail(key, f"a value is given twice in {list(values)}")
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise self._fail("seeds", f"give whole numbers >= 0, got {list(self.seeds)}")
        for key, low in (("jobs", 1), ("procs", 1), ("sample", 1)):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise self._fail(key, f"must be a whole number >= {low}, got {v!r}")
        for key in ("offset", "sample_seed"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self._fail(key, f"must be a whole number >= 0, got {v!r}")
        for key in ("kill_at_estimate", "include_all"):
            if not isinstance(getattr(self, key), bool):
                raise self._fail(key, f"must be true or false, got {getattr(self, key)!r}")
        if self.extra is not None and self.extra not in EXTRA_RULES:
            raise self._fail("extra", f"must be one of {', '.join(EXTRA_RULES)}, got {self.extra!r}")
        if self.plot not in PLOTS:
            raise self._fail("plot", f"must be one of {', '.join(PLOTS)}, got {self.plot!r}")
        # names: canonical, and every dispatcher x predictor pair checked before any run
        try:
            canonical = tuple(resolve_policy_name(d) for d in self.dispatchers)
        except (UnknownNameError, InvalidConfigError) as err:
            raise self._fail("dispatchers", str(err)) from err
        object.__setattr__(self, "dispatchers", canonical)
        for d in canonical:
            for p in self.predictors:
                try:
                    preset_predictor(d, None if p == PRESET_PREDICTOR else p)
                except (UnknownNameError, InvalidConfigError) as err:
                    raise self._fail("predictors", str(err)) from err

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "flags") -> SweepSpec:
        """A spec from a parsed TOML/YAML table; an unknown key is an error naming it.

        Raises:
            InvalidConfigError: an unknown or missing key, or a value out of range; the
                message names the source and the key.
        """
        if not isinstance(data, Mapping):
            raise InvalidConfigError(
                f"{source}: a sweep spec must be a table of keys, got {type(data).__name__}"
            )
        unknown = [k for k in data if k not in SPEC_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: unknown key {unknown[0]!r}; a sweep spec has: {', '.join(SPEC_KEYS)}"
            )
        for key in ("dispatchers", "traces"):
            if key not in data:
                raise InvalidConfigError(f"{source}: {key}: missing (a sweep needs {key})")
        return cls(**{k: v for k, v in data.items()}, source=source)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> SweepSpec:
        """Read a ``.toml`` (or ``.yaml``/``.yml``, with PyYAML) spec; ``overrides`` replace its keys.

        Raises:
            InvalidConfigError: the file does not parse, or a key is unknown or out of range.
            FileNotFoundError: no such file.
        """
        from hpcgym.machine import read_toml_or_yaml

        p = Path(path)
        data = read_toml_or_yaml(p, "sweep spec")
        if isinstance(data, Mapping):
            data = {"name": p.stem, **data, **overrides}
        return cls.from_mapping(data, source=str(p))


def predictor_grid_names(grid: Iterable[Mapping[str, Any]], source: str = "flags") -> list[str]:
    """The predictor strings of ``predictor_grid`` tables: each table's parameter product.

    >>> predictor_grid_names([{"name": "user-avg", "k": [1, 2], "full": [True, False]}])
    ['user-avg:k=1,full=true', 'user-avg:k=1,full=false', 'user-avg:k=2,full=true', 'user-avg:k=2,full=false']

    Raises:
        InvalidConfigError: a table without a ``name`` or with an empty list; the message
            names the source and ``predictor_grid``.
    """
    import itertools

    out: list[str] = []
    for i, table in enumerate(grid):
        where = f"{source}: predictor_grid[{i}]"
        if not isinstance(table, Mapping) or not isinstance(table.get("name"), str):
            raise InvalidConfigError(f'{where}: a table with a predictor name (name = "user-avg") and lists')
        keys = [k for k in table if k != "name"]
        values = [_as_tuple(table[k]) for k in keys]
        empty = [k for k, v in zip(keys, values, strict=True) if not v]
        if empty:
            raise InvalidConfigError(f"{where}: {empty[0]}: give at least one value")
        for combo in itertools.product(*values):
            params = ",".join(
                f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                for k, v in zip(keys, combo, strict=True)
            )
            out.append(f"{table['name']}:{params}" if params else table["name"])
    return out


def offered_load(workload: Workload) -> float:
    """Requested processor-seconds of the jobs over the machine's between first and last submission.

    The jobs' real run times times their processors, over ``procs x (last submit - first
    submit)``; NaN for a workload whose jobs all arrive at one instant. This is the
    load 004 scales ("multiplying all arrival times by 76/80" raises 76 % to 80 %):
    :meth:`~hpcgym.workloads.Workload.scale_load` by ``F`` multiplies it by ``F``.

    >>> from hpcgym.workloads import Workload
    >>> w = Workload.from_columns([0, 100], [50, 50], [2, 2], [60, 60], procs=2)
    >>> offered_load(w), offered_load(w.scale_load(1.25))
    (1.0, 1.25)
    """
    span = float(workload.submit[-1] - workload.submit[0]) if len(workload) else 0.0
    if span <= 0:
        return float("nan")
    work = float(np.sum(np.maximum(workload.runtime, 0.0) * workload.procs_req))
    return work / (workload.procs * span)


# ------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class RunConfig:
    """One simulation of a sweep.

    Attributes:
        trace: the trace as the spec names it (a path, or ``"bundled"``).
        dispatcher: the dispatcher preset with its parameters (and the seed, if it takes one).
        predictor: the predictor string, or ``"preset"``.
        load: the load factor.
        seed: the seed given to the dispatcher or predictor; None when neither takes one.
        jobs: the trace's job window (None: all jobs from ``offset``).
        offset: jobs skipped first.
        procs: the machine size (None: the trace's).
    """

    trace: str
    dispatcher: str
    predictor: str
    load: float
    seed: int | None
    jobs: int | None = None
    offset: int = 0
    procs: int | None = None

    @property
    def trace_name(self) -> str:
        """The trace's file name (what the table holds and the key hashes)."""
        return BUNDLED if self.trace == BUNDLED else Path(self.trace).name

    def key(self, options: Mapping[str, Any] | None = None) -> str:
        """A stable 16-hex-digit key of the run's parameters and the sweep's shared ``options``."""
        params = {
            "trace": self.trace_name,
            "jobs": self.jobs,
            "offset": self.offset,
            "procs": self.procs,
            "dispatcher": self.dispatcher,
            "predictor": self.predictor,
            "load": repr(float(self.load)),
            "seed": self.seed,
            **(options or {}),
        }
        text = json.dumps(params, sort_keys=True, separators=(",", ":"))
        return hashlib.sha1(text.encode()).hexdigest()[:16]


def _options(spec: SweepSpec) -> dict[str, Any]:
    """The spec's options that change every run's result (part of each run key)."""
    return {"extra": spec.extra, "kill_at_estimate": spec.kill_at_estimate, "include_all": spec.include_all}


def _with_seed(name: str, parameters: tuple[str, ...] | None, seed: int) -> str | None:
    """``name`` with ``seed=S`` added if it takes a seed and does not set one; else None."""
    if parameters is None or "seed" not in parameters:
        return None
    base, colon, params = name.partition(":")
    given = [p.split("=")[0].strip() for p in params.split(",")] if colon else []
    if "seed" in given:
        return None
    return f"{name},seed={seed}" if colon else f"{base}:seed={seed}"


def _seeded(dispatcher: str, predictor: str, seed: int) -> tuple[str, str, bool]:
    """``(dispatcher, predictor, seeded)``: the seed given to whichever takes one."""
    from hpcgym.baselines import policy_parameters
    from hpcgym.predict import predictor_parameters

    d = _with_seed(dispatcher, policy_parameters(dispatcher), seed)
    p = None
    if predictor != PRESET_PREDICTOR:
        base = predictor.split("+")[0]
        mods = predictor[len(base) :]
        seeded = _with_seed(base, predictor_parameters(base.partition(":")[0].strip()), seed)
        p = seeded + mods if seeded is not None else None
    return d or dispatcher, p or predictor, d is not None or p is not None


def expand(spec: SweepSpec, base_loads: Mapping[str, float] | None = None) -> list[RunConfig]:
    """Every run of ``spec``, in grid order (trace, dispatcher, predictor, load, seed), or its sample.

    Args:
        spec: the sweep.
        base_loads: each trace's :func:`offered_load` at factor 1; needed only when the
            spec has ``offered_loads``.

    A random sample (``spec.sample``) draws that many distinct runs of the grid with
    ``numpy.random.default_rng(spec.sample_seed)`` and keeps them in grid order; a
    sample at least as large as the grid is the grid.

    Raises:
        InvalidConfigError: ``offered_loads`` without ``base_loads`` for a trace.
    """
    runs: list[RunConfig] = []
    seen: set[tuple[Any, ...]] = set()
    for trace in spec.traces:
        if spec.offered_loads:
            base = (base_loads or {}).get(trace)
            if base is None or not math.isfinite(base) or base <= 0:
                raise InvalidConfigError(
                    f"{spec.source}: offered_loads: the offered load of trace {trace!r} is unknown "
                    "(its jobs all arrive at one instant?); use loads instead"
                )
            factors = [round(target / base, 12) for target in spec.offered_loads]
        else:
            factors = list(spec.loads)
        for d in spec.dispatchers:
            for p in spec.predictors:
                for load in factors:
                    for seed in spec.seeds:
                        dd, pp, seeded = _seeded(d, p, seed)
                        cfg = RunConfig(
                            trace,
                            dd,
                            pp,
                            float(load),
                            seed if seeded else None,
                            spec.jobs,
                            spec.offset,
                            spec.procs,
                        )
                        ident = (trace, dd, pp, cfg.load, cfg.seed)
                        if ident not in seen:  # unseeded runs: one per seed list
                            seen.add(ident)
                            runs.append(cfg)
    if spec.sample is not None and spec.sample < len(runs):
        pick = np.random.default_rng(spec.sample_seed).choice(len(runs), size=spec.sample, replace=False)
        runs = [runs[i] for i in sorted(pick.tolist())]
    return runs


def _trace_path(trace: str) -> Path:
    from hpcgym.workloads import default_trace_path

    return default_trace_path() if trace == BUNDLED else Path(trace)


def load_traces(spec: SweepSpec) -> dict[str, Workload]:
    """Every trace of ``spec``, read once, windowed and on its machine size (load not scaled yet).

    Reader warnings (:class:`~hpcgym.common.errors.TraceWarning`) are left to each load report.

    Raises:
        FileNotFoundError: a trace does not exist.
        TraceFormatError, EmptyWorkloadError: as :func:`hpcgym.workloads.read_swf`.
    """
    import warnings

    from hpcgym.common.errors import TraceWarning
    from hpcgym.workloads import read_swf

    out: dict[str, Workload] = {}
    for trace in spec.traces:
        path = _trace_path(trace)
        if not path.is_file():
            raise FileNotFoundError(f"{spec.source}: traces: no such file: {trace}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            w = read_swf(path, procs=spec.procs)
        if spec.offset or spec.jobs is not None:
            w = w.window(spec.jobs, spec.offset)
        out[trace] = w
    return out


def run_one(workload: Workload, cfg: RunConfig, options: Mapping[str, Any]) -> dict[str, Any]:
    """Simulate one configuration on its (unscaled) trace; the row of :data:`COLUMNS`."""
    from hpcgym.baselines import run_policy

    t0, c0 = time.perf_counter(), time.process_time()
    w = workload.scale_load(cfg.load)
    result = run_policy(
        w,
        cfg.dispatcher,
        None if cfg.predictor == PRESET_PREDICTOR else cfg.predictor,
        kill_at_estimate=bool(options.get("kill_at_estimate", False)),
        include_all=bool(options.get("include_all", False)),
        progress=False,
        extra=options.get("extra"),
    )
    r = result.row
    pm = r.get("prediction") or {}
    row: dict[str, Any] = {
        "key": cfg.key(options),
        "trace": cfg.trace_name,
        "jobs": cfg.jobs,
        "offset": cfg.offset,
        "dispatcher": cfg.dispatcher,
        "predictor": cfg.predictor,
        "load": cfg.load,
        "seed": cfg.seed,
        "policy": r["policy"],
        "predictor_used": r["predictor"],
        "procs": r["procs"],
        "offered_load": offered_load(w),
        "accuracy": pm.get("accuracy"),
        "mae_s": pm.get("mae_s"),
    }
    for col in RESULT_COLUMNS:
        row.setdefault(col, r.get(col))
    row["sim_seconds"] = r["sim_seconds"]
    row["run_seconds"] = time.perf_counter() - t0
    row["cpu_seconds"] = time.process_time() - c0
    return row


# ------------------------------------------------------------------------------ table
def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return "" if not math.isfinite(value) else repr(float(value))
    return str(value)


class ResultsTable:
    """A CSV table of finished runs, appended to and flushed one row at a time.

    A file that ends in a partial line (a run killed while writing) is cut back to its
    last whole line before appending.

    Args:
        path: the CSV file (created with a header of ``columns`` if absent or empty).
        columns: the table's columns (default :data:`COLUMNS`; a training sweep has its own).
        parse: ``(column, text) -> value`` of a cell when reading the table back.

    Raises:
        InvalidConfigError: the file exists with other columns than ``columns``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        columns: Sequence[str] = COLUMNS,
        parse: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.columns = tuple(columns)
        self.done: set[str] = set()
        if self.path.exists() and self.path.stat().st_size > 0:
            data = self.path.read_bytes()
            if not data.endswith(b"\n"):
                with open(self.path, "r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
            self.rows = read_results(self.path, self.columns, parse)
            self.done = {r["key"] for r in self.rows}
        else:
            self.rows = []
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w", newline="") as fh:
                csv.writer(fh).writerow(self.columns)

    def append(self, *rows: Mapping[str, Any]) -> None:
        """Write ``rows`` (of one run) in one write and flush it to the operating system."""
        import io

        text = io.StringIO()
        writer = csv.writer(text)
        for row in rows:
            writer.writerow([_cell(row.get(c)) for c in self.columns])
        with open(self.path, "a", newline="") as fh:
            fh.write(text.getvalue())
            fh.flush()
        self.done.update(str(row["key"]) for row in rows)


_INTS = {"jobs", "offset", "seed", "procs", "jobs_simulated", "jobs_dropped", "jobs_measured", "decisions"}
_TEXT = {"key", "trace", "dispatcher", "predictor", "policy", "predictor_used"}


def _parse_cell(column: str, text: str) -> Any:
    if column in _TEXT:
        return text
    if text == "":
        return None
    return int(text) if column in _INTS else float(text)


def read_results(
    path: str | os.PathLike[str],
    columns: Sequence[str] = COLUMNS,
    parse: Callable[[str, str], Any] | None = None,
) -> list[dict[str, Any]]:
    """The rows of a sweep's CSV table, typed (empty cells are None), in file order.

    Args:
        path: the table.
        columns: the columns it must have (default :data:`COLUMNS`).
        parse: ``(column, text) -> value`` of a cell (default: a simulation sweep's types).

    Raises:
        InvalidConfigError: the header is not ``columns``, or a line is malformed;
            the message names the file and the line.
    """
    p = Path(path)
    columns = tuple(columns)
    parse = parse or _parse_cell
    with open(p, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return []
        if tuple(header) != columns:
            raise InvalidConfigError(
                f"{p}:1: not a results table of this sweep or hpcgym version (columns {header[:4]}...); "
                "write to another folder (--out)"
            )
        rows = []
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(columns):
                raise InvalidConfigError(f"{p}:{line}: {len(cells)} cells, expected {len(columns)}")
            try:
                rows.append({c: parse(c, v) for c, v in zip(columns, cells, strict=True)})
            except ValueError as err:
                raise InvalidConfigError(f"{p}:{line}: {err}") from err
    return rows


def write_parquet(
    rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], columns: Sequence[str] = COLUMNS
) -> None:
    """The rows of a results table as Parquet (``columns``, default :data:`COLUMNS`; empty cells null).

    Raises:
        MissingExtraError: pyarrow is missing (``pip install 'hpcgym[parquet]'``).
    """
    import pyarrow as pa

    from hpcgym.common.extras import _pyarrow_parquet

    pq = _pyarrow_parquet("--parquet")
    table = pa.table({c: [r.get(c) for r in rows] for c in columns})
    pq.write_table(table, path)


# ---------------------------------------------------------------------------- backends
_WORKER_TRACES: dict[str, Workload] = {}


def _init_worker(traces: dict[str, Workload]) -> None:
    from hpcgym.baselines._kernels import load_kernels

    global _WORKER_TRACES
    _WORKER_TRACES = traces
    load_kernels()  # before the first run, so its run_seconds is the simulation's


def _run_in_worker(cfg: RunConfig, options: dict[str, Any]) -> dict[str, Any]:
    return run_one(_WORKER_TRACES[cfg.trace], cfg, options)


def _local(
    traces: dict[str, Workload], runs: Sequence[RunConfig], options: dict[str, Any], processes: int
) -> Iterator[dict[str, Any]]:
    """Rows of ``runs`` as they finish, on ``processes`` worker processes (1: in this process)."""
    if processes <= 1:
        for cfg in runs:
            yield run_one(traces[cfg.trace], cfg, options)
        return
    yield from pool_results(
        _run_in_worker, [(cfg, options) for cfg in runs], processes, _init_worker, (traces,)
    )


def pool_results(
    fn: Callable[..., Any],
    calls: Sequence[tuple[Any, ...]],
    processes: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    mp_context: Any = None,
) -> Iterator[Any]:
    """``fn(*call)`` of every call on a pool of ``processes`` workers, yielded as each finishes.

    At most ``2 x processes`` calls are submitted at a time, so Ctrl-C does not wait for
    the whole queue; the calls not started yet are cancelled when the generator is closed.
    """
    with ProcessPoolExecutor(
        processes, mp_context=mp_context, initializer=initializer, initargs=initargs
    ) as pool:
        pending: set[Future[Any]] = set()
        todo = iter(calls)
        try:
            for call in todo:
                pending.add(pool.submit(fn, *call))
                if len(pending) >= 2 * processes:
                    break
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    yield f.result()
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.add(pool.submit(fn, *nxt))
        finally:
            for f in pending:
                f.cancel()


def _ray_run(workload: Workload, cfg: RunConfig, options: dict[str, Any]) -> dict[str, Any]:
    return run_one(workload, cfg, options)


def start_ray(address: str | None, processes: int | None) -> bool:
    """Start a local Ray (``address`` None) or connect to ``address``, unless Ray is already up.

    A local Ray gets ``processes`` CPUs (default: all cores), no dashboard and a 200 MB
    object store. Returns whether this call started Ray (then the caller shuts it down).

    Raises:
        MissingExtraError: Ray is not installed.
    """
    from hpcgym.common.extras import require

    require("ray", what="--backend ray")
    import ray

    if ray.is_initialized():
        return False
    if address is None:
        ray.init(
            num_cpus=processes or os.cpu_count() or 1,
            object_store_memory=200 * 1024 * 1024,
            include_dashboard=False,
            log_to_driver=False,
        )
    else:  # an existing cluster: its own settings; Ray refuses resource arguments here
        ray.init(address=address)
    return True


def _ray(
    traces: dict[str, Workload],
    runs: Sequence[RunConfig],
    options: dict[str, Any],
    address: str | None,
    processes: int | None,
) -> Iterator[dict[str, Any]]:
    """Rows of ``runs`` as they finish, each a Ray task; every trace put in the object store once.

    Starts a local Ray (``address`` None: ``processes`` or all cores, no dashboard, a
    200 MB object store) or connects to ``address``, and shuts it down at the end unless
    Ray was already initialised by the caller.
    """
    import ray

    started = start_ray(address, processes)
    try:
        refs = {t: ray.put(w) for t, w in traces.items()}
        task = ray.remote(num_cpus=1)(_ray_run)
        pending = [task.remote(refs[cfg.trace], cfg, options) for cfg in runs]
        try:
            while pending:
                finished, pending = ray.wait(pending, num_returns=1)
                for ref in finished:
                    yield ray.get(ref)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()


BACKENDS = ("local", "ray")


# ---------------------------------------------------------------------------- running
@dataclass
class SweepResult:
    """What :func:`run_sweep` did.

    Attributes:
        path: the results table.
        total: runs in the sweep.
        skipped: runs already in the table before this call.
        ran: runs finished by this call.
        rows: every row of the table for this sweep's runs, in the sweep's order.
        seconds: wall-clock seconds of this call.
    """

    path: Path
    total: int
    skipped: int
    ran: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def check_run_options(backend: str, address: str | None, processes: int | None, max_runs: int | None) -> None:
    """Refuse an unknown backend, a cluster address without Ray, or a count below 1.

    Raises:
        InvalidConfigError: naming the flag.
    """
    if backend not in BACKENDS:
        raise InvalidConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if address is not None and backend != "ray":
        raise InvalidConfigError(f"--address {address}: a cluster address needs --backend ray")
    for name, v in (("processes", processes), ("max_runs", max_runs)):
        if v is not None and v < 1:
            raise InvalidConfigError(f"--{name.replace('_', '-')} must be at least 1, got {v}")


def progress_bar(total: int, unit: str, desc: str, progress: bool | None) -> Any:
    """A tqdm bar on stderr; ``progress`` None: shown on a terminal only."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=unit,
        desc=desc,
        disable=(not sys.stderr.isatty()) if progress is None else not progress,
        file=sys.stderr,
    )


def run_sweep(
    spec: SweepSpec,
    out: str | os.PathLike[str],
    *,
    backend: str = "local",
    address: str | None = None,
    processes: int | None = None,
    max_runs: int | None = None,
    progress: bool | None = None,
    traces: Mapping[str, Workload] | None = None,
) -> SweepResult:
    """Run every configuration of ``spec`` not yet in the table ``out``, appending each row as it ends.

    Args:
        spec: the sweep.
        out: the CSV results table (created, or resumed: runs whose key it holds are skipped).
        backend: ``"local"`` (a process pool) or ``"ray"``.
        address: with ``backend="ray"``: a cluster (``"auto"``, ``"ray://host:10001"``);
            None starts a local Ray.
        processes: local workers (default: one per core, at most one per run); with a
            local Ray, its CPUs.
        max_runs: stop after this many new runs (the rest is left for the next call).
        progress: a progress bar with ETA on stderr (default: on a terminal).
        traces: the traces already read (:func:`load_traces`), to avoid reading them again.

    Returns:
        The counts and the table's rows of this sweep, in its order.

    Raises:
        InvalidConfigError: an unknown backend, ``address`` without Ray, or a bad count.
        MissingExtraError: ``backend="ray"`` without Ray installed.
    """
    check_run_options(backend, address, processes, max_runs)
    if backend == "ray":
        from hpcgym.common.extras import require

        require("ray", what="--backend ray")
    t0 = time.perf_counter()
    loaded = dict(traces) if traces is not None else load_traces(spec)
    runs = expand(spec, {t: offered_load(w) for t, w in loaded.items()})
    options = _options(spec)
    table = ResultsTable(out)
    pending = [cfg for cfg in runs if cfg.key(options) not in table.done]
    skipped = len(runs) - len(pending)
    if max_runs is not None:
        pending = pending[:max_runs]
    from hpcgym.baselines._compile import announce_compilation

    announce_compilation()  # once here, not in every worker at the same time
    ran = 0
    if pending:
        bar = progress_bar(len(pending), "run", spec.name, progress)
        if backend == "ray":
            rows: Iterable[dict[str, Any]] = _ray(loaded, pending, options, address, processes)
        else:
            procs = min(processes or os.cpu_count() or 1, len(pending))
            if procs <= 1:
                from hpcgym.baselines._kernels import load_kernels

                load_kernels()  # as the pool's workers do, before the first run's clock
            rows = _local(loaded, pending, options, procs)
        try:
            for row in rows:
                table.append(row)
                ran += 1
                bar.update(1)
        finally:
            bar.close()
    wanted = {cfg.key(options): i for i, cfg in enumerate(runs)}
    mine = [r for r in read_results(table.path) if r["key"] in wanted]
    mine.sort(key=lambda r: wanted[r["key"]])
    return SweepResult(table.path, len(runs), skipped, ran, mine, time.perf_counter() - t0)


def estimate(spec: SweepSpec, out: str | os.PathLike[str] | None, *, workers: int) -> dict[str, Any]:
    """Runs, finished runs and an estimated time for ``spec``, from one timed run (nothing written).

    The first pending run (else the first run) is simulated once in this process; its
    CPU seconds per job (``cpu_seconds``: what the run costs a core of its own, even on a
    machine busy with other work) times the jobs of each pending run's trace, summed, is
    the core-seconds estimate; divided by ``workers`` the wall-clock one, for workers
    with a core each. Runs whose dispatcher or predictor costs more per job than the
    timed one (a CP dispatcher, a long predictor window) take longer than estimated.
    """
    traces = load_traces(spec)
    runs = expand(spec, {t: offered_load(w) for t, w in traces.items()})
    options = _options(spec)
    done: set[str] = set()
    if out is not None and Path(out).exists() and Path(out).stat().st_size > 0:
        done = {r["key"] for r in read_results(out)}
    pending = [cfg for cfg in runs if cfg.key(options) not in done]
    from hpcgym.baselines._compile import announce_compilation

    if not announce_compilation():
        from hpcgym.baselines._kernels import load_kernels

        load_kernels()  # not part of the timed run
    probe = pending[0] if pending else runs[0]
    row = run_one(traces[probe.trace], probe, options)
    per_job = row["cpu_seconds"] / max(1, len(traces[probe.trace]))
    core_seconds = sum(per_job * len(traces[cfg.trace]) for cfg in pending)
    return {
        "name": spec.name,
        "runs": len(runs),
        "done": len(runs) - len(pending),
        "pending": len(pending),
        "timed_run": {
            k: row[k] for k in ("trace", "dispatcher", "predictor", "load", "run_seconds", "cpu_seconds")
        },
        "seconds_per_job": per_job,
        "core_seconds": core_seconds,
        "workers": workers,
        "wall_seconds": core_seconds / max(1, workers),
    }


# ------------------------------------------------------------------------------ figures
def load_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> Any:
    """Mean wait and mean bounded slowdown against offered load, a panel per trace and metric.

    One line per dispatcher (and predictor, when a sweep has several); the y axes are
    logarithmic (both metrics grow by orders of magnitude near saturation).

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    several_predictors = len({r["predictor"] for r in rows}) > 1
    fig = Figure(figsize=(5.5 * len(traces), 7.5), layout="constrained")
    axes = np.atleast_2d(fig.subplots(2, len(traces), squeeze=False))
    for j, trace in enumerate(traces):
        mine = [r for r in rows if r["trace"] == trace]
        lines: dict[str, list[Mapping[str, Any]]] = {}
        for r in mine:
            label = r["policy"] + (f" ({r['predictor_used']})" if several_predictors else "")
            lines.setdefault(label, []).append(r)
        for i, (metric, ylabel, scale) in enumerate(
            (("mean_wait_s", "mean wait [min]", 60.0), ("mean_bsld", "mean bounded slowdown", 1.0))
        ):
            ax = axes[i][j]
            for label, pts in lines.items():
                pts = sorted(pts, key=lambda r: r["offered_load"])
                x = [100 * r["offered_load"] for r in pts]
                y = [r[metric] / scale if r[metric] is not None else np.nan for r in pts]
                ax.plot(x, y, marker="o", label=label)
            ax.set_yscale("log")
            ax.set_xlabel("offered load [%]")
            ax.set_ylabel(ylabel)
            ax.set_title(trace)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    if title:
        fig.suptitle(title)
    return fig


def write_figures(spec: SweepSpec, rows: Sequence[Mapping[str, Any]], folder: Path) -> list[Path]:
    """The figures ``spec.plot`` asks for, as PNG files in ``folder``."""
    if spec.plot == "none" or not rows:
        return []
    from hpcgym.common.extras import require

    require("plot", what=f"plot = {spec.plot!r}")
    if spec.plot == "params":
        from hpcgym.experiments import paramstudy

        return paramstudy.write_study(rows, folder, title=spec.name)
    path = folder / "wait_bsld_vs_load.png"
    load_figure(rows, title=f"{spec.name}: wait and bounded slowdown against offered load").savefig(
        path, dpi=100
    )
    return [path]


# --------------------------------------------------------------------------------- CLI
def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", type=Path, default=None, help="the sweep's TOML (or YAML) file")
    p.add_argument("--preset", default=None, help=f"a shipped spec instead of a file: {', '.join(PRESETS)}")
    grid = p.add_argument_group(
        "axes and options (set or replace the spec's keys; without a spec they describe the whole sweep)"
    )
    grid.add_argument("--dispatchers", default=None, metavar="A,B", help="dispatcher presets")
    grid.add_argument(
        "--predictors", default=None, metavar="A,B", help='predictor strings; "preset": the own'
    )
    grid.add_argument(
        "--trace", action="append", default=None, metavar="SWF", help="a trace (repeat for several)"
    )
    grid.add_argument("--loads", default=None, metavar="F,G", help="offered-load factors")
    grid.add_argument(
        "--offered-loads", default=None, metavar="X,Y", help="target offered loads (0.8 = 80 %%)"
    )
    grid.add_argument(
        "--seeds",
        default=None,
        metavar="S,T",
        help="seeds (for seeded dispatchers/predictors; a training sweep's training seeds)",
    )
    grid.add_argument("--jobs", type=int, default=None, help="only this many jobs of each trace")
    grid.add_argument("--offset", type=int, default=None, help="skip this many jobs of each trace first")
    grid.add_argument("--procs", type=int, default=None, help="machine size for every trace")
    grid.add_argument("--sample", type=int, default=None, help="a random sample of this many runs")
    grid.add_argument("--sample-seed", type=int, default=None, help="seed of the sample")
    grid.add_argument(
        "--predictor-sample",
        type=int,
        default=None,
        help="a random sample of this many predictor strings, each on every trace",
    )
    train = p.add_argument_group(
        "training sweeps (a [train] table in the spec, or these flags): each trial trains an agent "
        "(hpcgym train) and evaluates it beside baselines on the test split (hpcgym evaluate)"
    )
    train.add_argument(
        "--train",
        default=None,
        metavar="ALGORITHM",
        help="sweep trainings of this algorithm (maskable-ppo, ppo) over --seeds and --train-grid",
    )
    train.add_argument(
        "--train-arg",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a fixed training argument as TOML (total_timesteps=20000, net_arch=[64,64]); repeatable",
    )
    train.add_argument(
        "--train-grid",
        action="append",
        default=None,
        metavar="KEY=[V,W]",
        help="a training argument's values as a TOML list (learning_rate=[3e-4,1e-4]); repeatable",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local process pool or Ray (tasks; Ray Tune trials for training sweeps) (default local)",
    )
    p.add_argument(
        "--address",
        default=None,
        help="with --backend ray: the cluster, 'auto' (this node's cluster) or ray://HOST:10001 "
        "(default: start a local Ray on this machine's cores)",
    )
    p.add_argument("--processes", type=int, default=None, help="local workers (default: one per core)")
    p.add_argument("--max-runs", type=int, default=None, help="stop after this many new runs (resume later)")
    p.add_argument("-o", "--out", type=Path, default=None, help="output folder (default: sweep-NAME)")
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="FILE.png",
        help="also write the wait and bounded slowdown against offered load figure to this file",
    )
    p.add_argument(
        "--parquet",
        action="store_true",
        help="also write the table as OUT/results.parquet at the end (needs pyarrow)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the run count and an estimated time")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    from hpcgym.experiments.sweep_train import TRAIN_KEYS

    p.epilog = (
        "spec keys: "
        + "; ".join(f"{k}: {v}" for k, v in SPEC_KEYS.items())
        + ". A training sweep's spec has name and a [train] table instead, with: "
        + "; ".join(f"{k}: {v}" for k, v in TRAIN_KEYS.items())
    )


def _split(text: str, key: str, kind: Callable[[str], Any] = str) -> list[Any]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    try:
        return [kind(t) for t in items]
    except ValueError:
        raise InvalidConfigError(
            f"--{key.replace('_', '-')}: {text!r} is not a comma-separated list"
        ) from None


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    """The spec of ``hpcgym sweep``'s arguments: the file or preset, with the flags' keys replaced."""
    overrides: dict[str, Any] = {}
    for key, kind in (
        ("dispatchers", str),
        ("predictors", str),
        ("loads", float),
        ("offered_loads", float),
        ("seeds", int),
    ):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = _split(value, key, kind)
    if args.offered_loads is not None and args.loads is None:
        overrides["loads"] = []
    if args.loads is not None and args.offered_loads is None:
        overrides["offered_loads"] = []
    if args.trace is not None:
        overrides["traces"] = [str(t) for t in args.trace]
    for key in ("jobs", "offset", "procs", "sample", "sample_seed", "predictor_sample"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    if args.spec is not None and args.preset is not None:
        raise InvalidConfigError(f"give a spec file ({args.spec}) or --preset {args.preset}, not both")
    if args.preset is not None:
        return SweepSpec.from_file(preset_path(args.preset), **overrides)
    if args.spec is not None:
        return SweepSpec.from_file(args.spec, **overrides)
    return SweepSpec.from_mapping(overrides, source="flags")


def cli_outputs(args: argparse.Namespace, name: str) -> tuple[Path, Path, int]:
    """``(folder, results table, workers)`` of a sweep command; checks ``--parquet`` before any run."""
    if args.parquet:
        from hpcgym.common.extras import _pyarrow_parquet

        _pyarrow_parquet("--parquet")  # before any run, not after them
    out = args.out if args.out is not None else Path(f"sweep-{name}")
    return out, out / "results.csv", args.processes or os.cpu_count() or 1


def interrupted(table: Path, unit: str) -> int:
    """Ctrl-C in a sweep: say where the finished ``unit`` are and how to resume; exit code 130."""
    print(
        f"hpcgym: interrupted; finished {unit} are in {table}: run the same command to resume",
        file=sys.stderr,
    )
    return 130


def report_finished(
    args: argparse.Namespace, name: str, unit: str, result: Any, table: Path, written: Sequence[Path]
) -> bool:
    """Print the files ``written`` (stderr) and the count of ``unit`` run, skipped and left:
    as JSON with ``--json`` (then False), else one line (then True: the caller prints its table)."""
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    left = result.total - result.skipped - result.ran
    if args.json:
        from hpcgym.common.report import to_json

        summary = {"name": name, unit: result.total, "skipped": result.skipped, "ran": result.ran}
        print(to_json({**summary, "left": left, "seconds": result.seconds, "table": str(table)}))
        return False
    print(
        f"{name}: {result.total} {unit}; {result.skipped} already done, {result.ran} run now"
        f"{f', {left} left (run again to resume)' if left else ''} in {result.seconds:.1f} s"
    )
    return True


def _sweep(args: argparse.Namespace) -> int:
    from hpcgym.experiments import sweep_train

    if sweep_train.wants_training(args):
        return sweep_train.run_cli(args)
    spec = spec_from_args(args)
    out, table, workers = cli_outputs(args, spec.name)
    if args.plot is not None:
        from hpcgym.common.extras import require

        require("plot", what="--plot")
        if not args.plot.parent.is_dir() and str(args.plot.parent):
            raise InvalidConfigError(f"--plot {args.plot}: no such directory: {args.plot.parent}")
    if args.dry_run:
        est = estimate(spec, table, workers=workers)
        if args.json:
            from hpcgym.common.report import to_json

            print(to_json(est))
        else:
            print(
                f"{est['name']}: {est['runs']} runs, {est['done']} already in {table}, "
                f"{est['pending']} to run; "
                f"about {est['core_seconds'] / 60:.1f} core-minutes, {est['wall_seconds'] / 60:.1f} min "
                f"on {workers} workers (one run timed: {est['seconds_per_job'] * 1e6:.1f} CPU-µs per job)"
            )
        return 0
    try:
        result = run_sweep(
            spec,
            table,
            backend=args.backend,
            address=args.address,
            processes=args.processes,
            max_runs=args.max_runs,
            progress=False if args.no_progress else None,
        )
    except KeyboardInterrupt:
        return interrupted(table, "runs")
    written = [table, *write_figures(spec, result.rows, out)]
    if args.parquet:
        write_parquet(read_results(table), out / "results.parquet")
        written.append(out / "results.parquet")
    if args.plot is not None and result.rows:
        title = f"{spec.name}: wait and bounded slowdown against offered load"
        load_figure(result.rows, title=title).savefig(args.plot, dpi=100)
        written.append(args.plot)
    if report_finished(args, spec.name, "runs", result, table, written):
        _print_table(result.rows)
    return 0


def _print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    from hpcgym.common.report import format_table

    columns = [
        ("trace", "trace", ""),
        ("policy", "policy", ""),
        ("predictor", "predictor", ""),
        ("predictor_used", "used", ""),
        ("load", "load", ".3g"),
        ("offered_pct", "offered [%]", ".1f"),
        ("wait_min", "wait [min]", ".1f"),
        ("mean_bsld", "bsld", ".2f"),
        ("utilization", "util", ".3f"),
        ("run_seconds", "run [s]", ".2f"),
    ]
    shown = [
        dict(
            r,
            offered_pct=100 * r["offered_load"] if r["offered_load"] is not None else None,
            wait_min=r["mean_wait_s"] / 60 if r["mean_wait_s"] is not None else None,
        )
        for r in rows
    ]
    print(format_table(shown, columns))
