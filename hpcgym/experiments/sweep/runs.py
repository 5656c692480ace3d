"""A sweep's runs: the grid expanded into :class:`RunConfig` objects, the traces read, one run simulated.

:func:`expand` lists a spec's runs, :func:`load_traces` reads its traces once and
:func:`run_one` simulates one run into a row of the results table
(:data:`hpcgym.experiments.sweep.table.COLUMNS`), keyed by :meth:`RunConfig.key`.

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

import hashlib
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.sweep.spec import BUNDLED, PRESET_PREDICTOR, SweepSpec
from hpcgym.experiments.sweep.table import RESULT_COLUMNS
from hpcgym.workloads import Workload


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
    """The file of a spec's trace: the bundled slice, a path, or a downloaded catalogue log."""
    from hpcgym.workloads import default_trace_path, resolve_trace

    return default_trace_path() if trace == BUNDLED else resolve_trace(trace)


def load_traces(spec: SweepSpec) -> dict[str, Workload]:
    """Every trace of ``spec``, read once, windowed and on its machine size (load not scaled yet).

    Reader warnings (:class:`~hpcgym.common.errors.TraceWarning`) are left to each load report.

    Raises:
        FileNotFoundError: a trace does not exist (MissingTraceError: a catalogue name whose
            log is not downloaded).
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
