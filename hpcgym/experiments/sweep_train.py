"""Training sweeps of ``hpcgym sweep``: seeds and hyperparameters of ``hpcgym train`` as trials.

A spec file with a ``[train]`` table (or ``hpcgym sweep --train ALGORITHM``) describes
**trials** instead of simulations::

    name = "train-seeds"

    [train]
    algorithm = "maskable-ppo"       # hpcgym train ALGORITHM
    seeds = [1, 2, 3]                # one trial per seed and grid point

    [train.args]                     # fixed fields of the algorithm's Args (hpcgym train ... --help)
    total_timesteps = 20000
    window_jobs = 256

    [train.grid]                     # lists of values: their product (x seeds) are the trials
    learning_rate = [3e-4, 1e-4]

    [train.evaluate]                 # hpcgym evaluate on the test split
    baselines = ["easy", "easy++", "sjf"]
    windows = 10

Each trial is :func:`hpcgym.agents.train.train` into its own run folder ``OUT/runs/NAME`` (the
models, ``training.json``), then :func:`hpcgym.experiments.evaluate.evaluate` of its best model
(on the validation split) beside the baselines on the windows of the test split of the
trace it trained on (``OUT/runs/NAME/evaluation``: the JSON and the per-window CSV). The
evaluation's summary rows -- one per policy: mean and median bsld and wait, utilization,
invalid-action rate, the paired difference with the reference and its bootstrap
interval -- are appended to ``OUT/results.csv`` with the trial's parameters as columns
(:func:`columns`), all rows of a trial in one write, the moment the trial ends. A re-run
skips the trials whose key (:meth:`Trial.key`) is in the table; a trial cut short while
its rows were written is run again.

Backends: ``local`` runs the trials on a process pool of ``processes`` workers (spawned
processes, each trial in a fresh worker state; one process: in this one); ``ray`` runs
each trial as a Ray Tune trial (a function trainable under ``tune.Tuner``, 1 CPU per
trial, ``n_envs`` CPUs when ``n_envs > 1``; Tune's files under ``OUT/tune``), which
reports the validation score to Tune after every validation of the training
(``validation_mean_bsld``) and the trial's rows at the end. Training is deterministic on
CPU with ``torch_threads = 1`` (the default), so both backends write the same table
apart from the timing columns (:data:`TIMING_COLUMNS`), as ``tests/experiments/test_sweep_train.py``
checks.

Choices where the issue leaves a detail open:

* ``seed`` and ``out`` are not training arguments of a sweep: the seeds are the
  ``seeds`` axis and every trial has its own run folder; the timesteps' progress bar
  is off unless ``progress_bar = true`` is given.
* A trial's key hashes the algorithm, every training argument (the trace by its file
  name, so a table stays valid when the traces move) and the evaluation's settings.
* The evaluation uses the trial's trace, machine and ``window_jobs`` unless
  ``[train.evaluate]`` sets ``window_jobs``; the reference (EASY by default) is added to
  the baselines if absent. The model evaluated is ``best_model.zip`` (the best on the
  validation windows), else the final one.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, TrialError, UnknownNameError
from hpcgym.common.registry import parse_value
from hpcgym.experiments.evaluate import SUMMARY_CSV, vs_reference

__all__ = [
    "TIMING_COLUMNS",
    "TrainSweepSpec",
    "Trial",
    "columns",
    "estimate",
    "is_training_spec",
    "run_train_sweep",
    "run_trial",
]

TRAIN_KEYS = {
    "algorithm": "the training script (hpcgym train ALGORITHM): maskable-ppo or ppo",
    "seeds": "training seeds; one trial per seed and grid point",
    "args": "a table of fixed training arguments (fields of the algorithm's Args)",
    "grid": "a table of training arguments with lists of values; their product is swept",
    "sample": "run a seeded random sample of this many trials instead of all",
    "sample_seed": "seed of that sample",
    "evaluate": "a table of evaluation settings: "
    + "; ".join(
        f"{k}: {v}"
        for k, v in {
            "baselines": "dispatchers evaluated beside each agent (default easy)",
            "window_jobs": "jobs per test window (default: the trial's window_jobs)",
            "windows": "test windows (default: as many as the test split holds)",
            "reference": "preset of the paired differences (default easy)",
            "seed": "bootstrap seed (default 0)",
            "n_resamples": "bootstrap resamples (default 9999)",
        }.items()
    ),
}
"""The keys of a spec's ``[train]`` table, with what each means."""

EVALUATE_KEYS = ("baselines", "window_jobs", "windows", "reference", "seed", "n_resamples")

SWEEP_OWNS = {
    "seed": "the seeds are the sweep's seeds axis (seeds = [...])",
    "out": "every trial trains into its own folder OUT/runs/NAME",
}
"""Training arguments a sweep sets itself, with why."""

PARAMETER_COLUMNS = ("key", "trial", "algorithm", "seed")
"""A trial's identity; the grid's argument names follow (:func:`columns`)."""

RESULT_COLUMNS = (
    *SUMMARY_CSV,
    "run",
    "timesteps",
    "best_validation_bsld",
    "easy_validation_bsld",
)
"""One evaluated policy of a trial (:data:`hpcgym.experiments.evaluate.SUMMARY_CSV`), then the trial's
run folder (relative to the sweep's folder), its timesteps and its validation scores."""

TIMING_COLUMNS = ("train_seconds", "trial_seconds")
"""The only columns that differ between two runs of one trial: training wall seconds
(validation included) and the whole trial's (evaluation included)."""

_TEXT = {"key", "trial", "algorithm", "policy", "kind", "run"}


def columns(spec: TrainSweepSpec) -> tuple[str, ...]:
    """The results table's columns: the trial's identity, the grid's names, the results, timing."""
    return PARAMETER_COLUMNS + tuple(spec.grid) + RESULT_COLUMNS + TIMING_COLUMNS


def _parse_cell(column: str, text: str) -> Any:
    """A cell of a training sweep's table: text columns as they are; numbers; JSON lists."""
    if column in _TEXT:
        return text
    if text == "":
        return None
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return parse_value(text)


def _cell_value(value: Any) -> Any:
    """A grid value as the table holds it: tuples as JSON lists, everything else as is."""
    return json.dumps(list(value)) if isinstance(value, (tuple, list)) else value


def _tuple_fields(algorithm: str) -> set[str]:
    from hpcgym.agents.train import algorithm_module

    return {f.name for f in dataclasses.fields(algorithm_module(algorithm).Args) if "tuple[" in str(f.type)}


# ------------------------------------------------------------------------------- spec
@dataclass(frozen=True)
class Trial:
    """One training run of a sweep and the evaluation of its model.

    Attributes:
        algorithm: the training script.
        seed: the training seed.
        params: the grid's values of this trial, in the grid's order.
        fixed: the fixed training arguments (``[train.args]``).
        evaluation: the evaluation's settings (``[train.evaluate]``, defaults filled).
    """

    algorithm: str
    seed: int
    params: tuple[tuple[str, Any], ...]
    fixed: tuple[tuple[str, Any], ...]
    evaluation: tuple[tuple[str, Any], ...]

    def fields(self) -> dict[str, Any]:
        """The training arguments (``out`` excepted): fixed ones, the grid's, the seed."""
        return {**dict(self.fixed), **dict(self.params), "seed": self.seed}

    def key(self) -> str:
        """A stable 16-hex-digit key of the algorithm, the training arguments and the evaluation."""
        fields = self.fields()
        fields.pop("progress_bar", None)
        fields.pop("verbose", None)
        if fields.get("trace") is not None:
            fields["trace"] = Path(str(fields["trace"])).name
        text = json.dumps(
            {"algorithm": self.algorithm, "args": fields, "evaluate": dict(self.evaluation)},
            sort_keys=True,
            separators=(",", ":"),
            default=list,
        )
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        """The trial's name and run folder: ``ALGORITHM-seedS-KEY8``."""
        return f"{self.algorithm}-seed{self.seed}-{self.key()[:8]}"

    def describe(self) -> str:
        """``seed=1 learning_rate=0.0003`` -- what varies between trials."""
        return " ".join(f"{k}={_cell_value(v)}" for k, v in (("seed", self.seed), *self.params))


def _pairs(value: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in value.items())


@dataclass(frozen=True)
class TrainSweepSpec:
    """A training sweep: trials of one algorithm over seeds x a grid of training arguments.

    Attributes:
        algorithm: the training script (``hpcgym train ALGORITHM``).
        seeds: the training seeds.
        args: fixed training arguments (fields of the algorithm's ``Args``).
        grid: training arguments with lists of values; the trials are seeds x their product.
        sample: run a seeded random sample of this many trials (None: all).
        sample_seed: seed of the sample.
        baselines: dispatchers evaluated beside each trial's agent.
        window_jobs: jobs per test window (None: each trial's ``window_jobs``).
        windows: test windows (None: as many as the test split holds).
        reference: preset of the paired differences (added to the baselines if absent).
        eval_seed: seed of the bootstrap.
        n_resamples: bootstrap resamples.
        name: the sweep's name.
        source: where the spec came from, for messages.

    Raises:
        InvalidConfigError: a bad value, an unknown training argument (the message names
            it), or an argument the sweep sets itself (``seed``, ``out``).
        UnknownNameError: an unknown algorithm or baseline.
    """

    algorithm: str
    seeds: tuple[int, ...] = (1,)
    args: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    grid: Mapping[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    sample: int | None = None
    sample_seed: int = 0
    baselines: tuple[str, ...] = ("easy",)
    window_jobs: int | None = None
    windows: int | None = None
    reference: str = "easy"
    eval_seed: int = 0
    n_resamples: int = 9999
    name: str = "train"
    source: str = "flags"

    def _fail(self, key: str, message: str) -> InvalidConfigError:
        return InvalidConfigError(f"{self.source}: train.{key}: {message}")

    def __post_init__(self) -> None:
        from hpcgym.agents.train import ALGORITHMS, make_args
        from hpcgym.baselines import resolve_policy_name

        if self.algorithm not in ALGORITHMS:
            raise UnknownNameError(
                f"{self.source}: train.algorithm: unknown {self.algorithm!r}; known: {', '.join(ALGORITHMS)}"
            )
        seeds = self.seeds if isinstance(self.seeds, (list, tuple)) else (self.seeds,)
        if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
            raise self._fail("seeds", f"give whole numbers >= 0, got {list(seeds)}")
        if len(set(seeds)) != len(seeds):
            raise self._fail("seeds", f"a seed is given twice in {list(seeds)}")
        object.__setattr__(self, "seeds", tuple(seeds))
        for table in ("args", "grid"):
            value = getattr(self, table)
            if not isinstance(value, Mapping):
                raise self._fail(table, f"must be a table of training arguments, got {value!r}")
            for name in value:
                if name in SWEEP_OWNS:
                    raise self._fail(f"{table}.{name}", f"set by the sweep: {SWEEP_OWNS[name]}")
        both = set(self.args) & set(self.grid)
        if both:
            raise self._fail("grid", f"{sorted(both)[0]} is also in train.args; give it in one of them")
        tuples = _tuple_fields(self.algorithm)
        grid: dict[str, tuple[Any, ...]] = {}
        for name, values in self.grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise self._fail(f"grid.{name}", f"give a non-empty list of values, got {values!r}")
            if name in tuples and not all(isinstance(v, (list, tuple)) for v in values):
                raise self._fail(
                    f"grid.{name}", f"each value is a list, such as [[64, 64], [128]]; got {values!r}"
                )
            grid[name] = tuple(tuple(v) if isinstance(v, list) else v for v in values)
            if len(set(grid[name])) != len(grid[name]):
                raise self._fail(f"grid.{name}", f"a value is given twice in {list(values)}")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "args", dict(_pairs(self.args)))
        for key, low in (("sample", 1), ("window_jobs", 1), ("windows", 1), ("n_resamples", 1)):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise self._fail(key, f"must be a whole number >= {low}, got {v!r}")
        for key in ("sample_seed", "eval_seed"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self._fail(key, f"must be a whole number >= 0, got {v!r}")
        baselines = self.baselines if isinstance(self.baselines, (list, tuple)) else (self.baselines,)
        try:
            canonical = tuple(resolve_policy_name(b) for b in baselines)
            reference = resolve_policy_name(self.reference)
        except (UnknownNameError, InvalidConfigError) as err:
            raise self._fail("evaluate.baselines", str(err)) from err
        object.__setattr__(self, "baselines", canonical)
        object.__setattr__(self, "reference", reference)
        # every trial's arguments checked before anything runs: an unknown name is named here
        for trial in self.trials():
            try:
                make_args(self.algorithm, **trial.fields())
            except InvalidConfigError as err:
                raise InvalidConfigError(f"{self.source}: train: {err}") from err

    def trials(self) -> list[Trial]:
        """Every trial, seeds outermost then the grid in its order, or the seeded sample of them."""
        evaluation = (
            ("baselines", list(self.baselines)),
            ("window_jobs", self.window_jobs),
            ("windows", self.windows),
            ("reference", self.reference),
            ("seed", self.eval_seed),
            ("n_resamples", self.n_resamples),
        )
        names = list(self.grid)
        out = [
            Trial(
                self.algorithm,
                seed,
                tuple(zip(names, combo, strict=True)),
                tuple(self.args.items()),
                evaluation,
            )
            for seed in self.seeds
            for combo in itertools.product(*(self.grid[n] for n in names))
        ]
        if self.sample is not None and self.sample < len(out):
            pick = np.random.default_rng(self.sample_seed).choice(len(out), size=self.sample, replace=False)
            out = [out[i] for i in sorted(pick.tolist())]
        return out

    @property
    def policies(self) -> int:
        """Rows per trial: the agent, the baselines and the reference."""
        return 1 + len(set(self.baselines) | {self.reference})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "flags") -> TrainSweepSpec:
        """A spec from a parsed file's ``name`` and ``[train]`` table; an unknown key is named.

        Raises:
            InvalidConfigError: an unknown key, a simulation key beside ``[train]``, or a bad value.
        """
        extra = [k for k in data if k not in ("name", "train")]
        if extra:
            raise InvalidConfigError(
                f"{source}: {extra[0]}: a training sweep has only name and a [train] table "
                "(run simulations in another sweep)"
            )
        train = data.get("train")
        if not isinstance(train, Mapping):
            raise InvalidConfigError(f"{source}: train: must be a table ([train]), got {train!r}")
        unknown = [k for k in train if k not in TRAIN_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: train: unknown key {unknown[0]!r}; a [train] table has: {', '.join(TRAIN_KEYS)}"
            )
        if "algorithm" not in train:
            raise InvalidConfigError(f"{source}: train.algorithm: missing (maskable-ppo or ppo)")
        evaluation = train.get("evaluate", {})
        if not isinstance(evaluation, Mapping):
            raise InvalidConfigError(f"{source}: train.evaluate: must be a table, got {evaluation!r}")
        unknown = [k for k in evaluation if k not in EVALUATE_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: train.evaluate: unknown key {unknown[0]!r}; known: {', '.join(EVALUATE_KEYS)}"
            )
        kw: dict[str, Any] = {k: v for k, v in train.items() if k != "evaluate"}
        kw.update({("eval_seed" if k == "seed" else k): v for k, v in evaluation.items()})
        if "name" in data:
            kw["name"] = data["name"]
        return cls(**kw, source=source)


def is_training_spec(data: Any) -> bool:
    """Whether a parsed spec file describes a training sweep (it has a ``[train]`` table)."""
    return isinstance(data, Mapping) and "train" in data


# ------------------------------------------------------------------------------ a trial
def _absolute_paths(trial: Trial) -> Trial:
    """``trial`` with its trace (and a machine file) as absolute paths of this machine.

    Done where the command runs, before a trial leaves for a worker: Ray Tune runs each
    trial in a folder of its own. The key hashes only the trace's file name, so it is
    unchanged.
    """

    def absolute(pairs: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        out = []
        for k, v in pairs:
            if v is not None and (k == "trace" or (k == "machine" and Path(str(v)).is_file())):
                v = str(Path(str(v)).resolve())
            out.append((k, v))
        return tuple(out)

    return dataclasses.replace(trial, fixed=absolute(trial.fixed), params=absolute(trial.params))


def run_trial(trial: Trial, out: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Train ``trial`` into ``OUT/runs/NAME``, evaluate its model; the trial's table rows.

    The evaluation is also written to ``OUT/runs/NAME/evaluation`` (``evaluation.json``,
    ``summary.csv``, ``windows.csv``; no plots).
    """
    from hpcgym.agents.train import make_args, train
    from hpcgym.baselines import resolve_policy_name
    from hpcgym.experiments.evaluate import evaluate

    t0 = time.perf_counter()
    run = Path("runs") / trial.name
    folder = Path(out).resolve() / run
    fields = trial.fields()
    fields.setdefault("progress_bar", False)
    result = train(trial.algorithm, **fields, out=str(folder))
    ev_settings = dict(trial.evaluation)
    model = result.best_model or result.final_model
    policies: dict[str, Any] = {trial.algorithm: str(model)}
    for b in ev_settings["baselines"]:
        policies[resolve_policy_name(b)] = b
    ev = evaluate(
        policies,
        fields.get("trace"),
        procs=fields.get("procs"),
        machine=fields.get("machine"),
        window_jobs=ev_settings["window_jobs"] or make_args(trial.algorithm, **trial.fields()).window_jobs,
        windows=ev_settings["windows"],
        reference=ev_settings["reference"],
        seed=ev_settings["seed"],
        n_resamples=ev_settings["n_resamples"],
    )
    ev.write(folder / "evaluation", plots=False)
    best = min((v["mean_bsld"] for v in result.validations), default=None)
    common: dict[str, Any] = {
        "key": trial.key(),
        "trial": trial.name,
        "algorithm": trial.algorithm,
        "seed": trial.seed,
        **{k: _cell_value(v) for k, v in trial.params},
        "run": run.as_posix(),
        "timesteps": result.steps,
        "best_validation_bsld": best,
        "easy_validation_bsld": result.easy_mean_bsld,
        "train_seconds": result.train_seconds,
    }
    rows = []
    for summary in ev.summary:
        row = dict(common)
        row.update({c: summary.get(c) for c in RESULT_COLUMNS if c in summary})
        row["trial_seconds"] = time.perf_counter() - t0
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- backends
def _local(trials: Sequence[Trial], out: Path, processes: int) -> Iterator[list[dict[str, Any]]]:
    """Each trial's rows as it finishes, on ``processes`` spawned workers (1: in this process).

    Spawned, not forked: a worker never inherits torch's or numba's threads of this process.
    """
    if processes <= 1:
        for trial in trials:
            yield run_trial(trial, out)
        return
    import multiprocessing

    from hpcgym.experiments.sweep import pool_results

    yield from pool_results(
        run_trial, [(t, str(out)) for t in trials], processes, mp_context=multiprocessing.get_context("spawn")
    )


def _default_workers(trials: Sequence[Trial]) -> int:
    """One worker per core, or per ``n_envs`` cores when trials train on several environments."""
    n_envs = max(int(t.fields().get("n_envs", 1)) for t in trials)
    return max(1, (os.cpu_count() or 1) // max(1, n_envs))


def _trial_cpus(config: Mapping[str, Any]) -> Any:
    """A Tune trial's resources: 1 CPU, or ``n_envs`` when it trains on several environments."""
    from ray import tune

    trial = _trial_from(config["trial"])
    n_envs = int(trial.fields().get("n_envs", 1))
    return tune.PlacementGroupFactory([{"CPU": max(1, n_envs)}])


def _trial_to(trial: Trial) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(trial), default=list))


def _trial_from(data: Mapping[str, Any]) -> Trial:
    def pairs(items: Any) -> tuple[tuple[str, Any], ...]:
        return tuple((k, tuple(v) if isinstance(v, list) and k != "baselines" else v) for k, v in items)

    return Trial(
        data["algorithm"],
        data["seed"],
        pairs(data["params"]),
        pairs(data["fixed"]),
        pairs(data["evaluation"]),
    )


def _tune_trainable(config: dict[str, Any]) -> None:
    """A Tune function trainable: one trial; validation scores as training goes, rows at the end."""
    from ray import tune

    from hpcgym.agents.callbacks import validation_listener

    trial = _trial_from(config["trial"])

    def report(row: dict[str, Any]) -> None:
        tune.report({"timesteps": row["timesteps"], "validation_mean_bsld": row["mean_bsld"]})

    with validation_listener(report):
        rows = run_trial(trial, config["out"])
    tune.report(
        {
            "timesteps": rows[0]["timesteps"],
            "validation_mean_bsld": rows[0]["best_validation_bsld"],
            "test_mean_bsld": rows[0]["mean_bsld"],
            "rows_json": json.dumps(rows),
        }
    )


def _trial_dirname(trial: Any) -> str:
    return str(trial.config["trial"]["algorithm"]) + "-" + _trial_from(trial.config["trial"]).key()


def _tune(
    trials: Sequence[Trial],
    out: Path,
    address: str | None,
    processes: int | None,
    on_rows: Callable[[list[dict[str, Any]]], None],
) -> None:
    """Run ``trials`` as Ray Tune trials; ``on_rows`` gets each trial's rows as it ends (in this process).

    Raises:
        TrialError: a trial failed (the others' rows are already delivered).
    """
    import ray
    from ray import tune

    from hpcgym.experiments.sweep import start_ray

    class Collect(tune.Callback):
        def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
            result = trial.last_result or {}
            if "rows_json" in result:
                on_rows(json.loads(result["rows_json"]))

    started = start_ray(address, processes)
    try:
        tuner = tune.Tuner(
            tune.with_resources(_tune_trainable, _trial_cpus),
            param_space={
                "trial": tune.grid_search([_trial_to(t) for t in trials]),
                "out": str(out.resolve()),
            },
            tune_config=tune.TuneConfig(trial_dirname_creator=_trial_dirname),
            run_config=tune.RunConfig(
                name=time.strftime("trials-%Y%m%d-%H%M%S"),
                storage_path=str((out / "tune").resolve()),
                verbose=0,
                callbacks=[Collect()],
            ),
        )
        with contextlib.redirect_stdout(sys.stderr):  # Tune's own tables: not in --json output
            grid = tuner.fit()
        failed = [grid[i] for i in range(len(grid)) if grid[i].error is not None]
        if failed:
            first = failed[0]
            message = str(first.error).strip().splitlines()[-1]
            raise TrialError(
                f"{len(failed)} of {len(trials)} training trial(s) failed on Ray Tune; the first "
                f"({first.path}): {message}; the finished trials are in the table: fix and run again"
            )
    finally:
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------- running
def _open_table(spec: TrainSweepSpec, path: Path) -> Any:
    """The results table, without the rows of trials cut short while being written."""
    from hpcgym.experiments.sweep import ResultsTable

    cols = columns(spec)
    table = ResultsTable(path, cols, _parse_cell)
    counts: dict[str, int] = {}
    for r in table.rows:
        counts[r["key"]] = counts.get(r["key"], 0) + 1
    partial = {k for k, n in counts.items() if n < spec.policies}
    if partial:
        import csv

        with open(path, newline="") as fh:
            lines = list(csv.reader(fh))
        with open(path, "w", newline="") as fh:
            csv.writer(fh).writerows([lines[0], *(c for c in lines[1:] if c[0] not in partial)])
        table = ResultsTable(path, cols, _parse_cell)
    return table


def run_train_sweep(
    spec: TrainSweepSpec,
    out: str | os.PathLike[str],
    *,
    backend: str = "local",
    address: str | None = None,
    processes: int | None = None,
    max_runs: int | None = None,
    progress: bool | None = None,
) -> Any:
    """Run every trial of ``spec`` not yet in ``OUT/results.csv``, appending each trial's rows as it ends.

    Args:
        spec: the training sweep.
        out: the sweep's folder: ``results.csv``, ``runs/NAME`` per trial, ``tune/`` (Ray).
        backend: ``"local"`` (a process pool) or ``"ray"`` (Ray Tune trials).
        address: with ``backend="ray"``: a cluster (``"auto"``, ``"ray://host:10001"``).
        processes: local workers (default: one per core, or per ``n_envs`` cores when
            the trials train on several environments; at most one per trial); with a
            local Ray, its CPUs.
        max_runs: stop after this many new trials (the rest is left for the next call).
        progress: a progress bar of the trials on stderr (default: on a terminal).

    Returns:
        A :class:`hpcgym.experiments.sweep.SweepResult` counting trials; its rows are the table's rows of
        this sweep's trials, in trial order.

    Raises:
        InvalidConfigError: an unknown backend, ``address`` without Ray, or a bad count.
        MissingExtraError: the ``rl`` extra (or Ray, for ``backend="ray"``) is missing.
        TrialError: a Ray Tune trial failed.
    """
    from hpcgym.common.extras import require
    from hpcgym.experiments.sweep import SweepResult, check_run_options, progress_bar

    check_run_options(backend, address, processes, max_runs)
    require("rl", what="a training sweep")
    if backend == "ray":
        require("ray", "ray", "ray.tune", what="--backend ray (Ray Tune trials): pip install 'hpcgym[ray]'")
    t0 = time.perf_counter()
    folder = Path(out)
    trials = spec.trials()
    table = _open_table(spec, folder / "results.csv")
    pending = [_absolute_paths(t) for t in trials if t.key() not in table.done]
    skipped = len(trials) - len(pending)
    if max_runs is not None:
        pending = pending[:max_runs]
    ran = 0
    if pending:
        bar = progress_bar(len(pending), "trial", spec.name, progress)

        def append(rows: list[dict[str, Any]]) -> None:
            nonlocal ran
            table.append(*rows)
            ran += 1
            bar.update(1)

        try:
            if backend == "ray":
                _tune(pending, folder, address, processes, append)
            else:
                procs = min(processes or _default_workers(pending), len(pending))
                for rows in _local(pending, folder, procs):
                    append(rows)
        finally:
            bar.close()
    order = {t.key(): i for i, t in enumerate(trials)}
    from hpcgym.experiments.sweep import read_results

    mine = [r for r in read_results(table.path, table.columns, _parse_cell) if r["key"] in order]
    mine.sort(key=lambda r: order[r["key"]])  # stable: a trial's rows keep their order
    return SweepResult(table.path, len(trials), skipped, ran, mine, time.perf_counter() - t0)


def estimate(spec: TrainSweepSpec, out: str | os.PathLike[str], *, workers: int) -> dict[str, Any]:
    """The trials, the finished ones, and an estimated time from one short probe (nothing kept).

    The probe trains the first pending trial (else the first trial) for one rollout
    (``n_steps x n_envs`` timesteps, at most ``total_timesteps``) with one validation in
    a temporary folder, and evaluates that model as the trial would. A trial is
    estimated as its ``total_timesteps`` at the probe's training seconds per timestep,
    plus one validation per ``eval_freq`` timesteps and one at the end at the probe's
    validation seconds (EASY's reference included, so an over-estimate), plus the
    probe's evaluation seconds. Wall seconds on this machine: on a machine busy with
    other work, more than an idle core needs; trials with other hyperparameters than the
    probe's (``n_epochs``, ``net_arch``, ``n_steps``) cost differently.
    """
    import tempfile

    from hpcgym.experiments.sweep import read_results

    trials = spec.trials()
    path = Path(out) / "results.csv"
    done: set[str] = set()
    if path.exists() and path.stat().st_size > 0:
        done = {r["key"] for r in read_results(path, columns(spec), _parse_cell)}
    pending = [t for t in trials if t.key() not in done]
    probe = pending[0] if pending else trials[0]
    from hpcgym.agents.train import make_args

    args = make_args(spec.algorithm, **probe.fields())
    steps = min(args.total_timesteps, args.n_steps * args.n_envs)
    budget = ("total_timesteps", "eval_freq")
    short = dataclasses.replace(
        probe,
        fixed=(
            *((k, v) for k, v in probe.fixed if k not in budget),
            ("total_timesteps", steps),
            ("eval_freq", 0),
        ),
        params=tuple((k, v) for k, v in probe.params if k not in budget),
    )
    with tempfile.TemporaryDirectory(prefix="hpcgym-probe-") as tmp:
        t0 = time.perf_counter()
        rows = run_trial(short, tmp)
        probe_seconds = time.perf_counter() - t0
        summary = json.loads((Path(tmp) / rows[0]["run"] / "training.json").read_text())
    train_s = float(summary["train_seconds"])
    validation_s = float(summary["validation_seconds"])
    per_step = max(0.0, train_s - validation_s) / max(1, int(summary["timesteps"]))
    rest_s = max(0.0, probe_seconds - train_s)  # environments, saving, the evaluation
    per_trial = []
    for t in pending:
        a = make_args(spec.algorithm, **t.fields())
        validations = (a.total_timesteps // a.eval_freq if a.eval_freq else 0) + 1
        per_trial.append(per_step * a.total_timesteps + validations * validation_s + rest_s)
    seconds = float(sum(per_trial))
    return {
        "name": spec.name,
        "trials": [{"trial": t.name, "parameters": t.describe(), "done": t.key() in done} for t in trials],
        "runs": len(trials),
        "done": len(trials) - len(pending),
        "pending": len(pending),
        "probe": {
            "trial": probe.name,
            "timesteps": int(summary["timesteps"]),
            "seconds": probe_seconds,
            "seconds_per_timestep": per_step,
            "validation_seconds": validation_s,
            "other_seconds": rest_s,
        },
        "core_seconds": seconds,
        "workers": workers,
        "wall_seconds": seconds / max(1, workers),
    }


# --------------------------------------------------------------------------------- CLI
SIMULATION_FLAGS = {
    "dispatchers": "--dispatchers",
    "predictors": "--predictors",
    "trace": "--trace (give the trace as --train-arg trace=...)",
    "loads": "--loads",
    "offered_loads": "--offered-loads",
    "jobs": "--jobs",
    "offset": "--offset",
    "procs": "--procs (give it as --train-arg procs=...)",
    "predictor_sample": "--predictor-sample",
    "plot": "--plot",
}
"""Flags of simulation sweeps that a training sweep refuses (rather than ignores)."""


def _spec_file(args: argparse.Namespace) -> Path | None:
    if args.spec is not None and args.preset is not None:
        raise InvalidConfigError(f"give a spec file ({args.spec}) or --preset {args.preset}, not both")
    if args.preset is not None:
        from hpcgym.experiments.sweep import preset_path

        return preset_path(args.preset)
    return args.spec


def wants_training(args: argparse.Namespace) -> bool:
    """Whether ``hpcgym sweep``'s arguments describe a training sweep (flags or a ``[train]`` table)."""
    if args.train is not None or args.train_arg or args.train_grid:
        return True
    path = _spec_file(args)
    if path is None or not Path(path).is_file():
        return False
    from hpcgym.machine import read_toml_or_yaml

    return is_training_spec(read_toml_or_yaml(Path(path), "sweep spec"))


def _toml_items(texts: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` flags, each value read as TOML (``3e-4``, ``[64, 64]``, ``"bsld"``, ``true``)."""
    from hpcgym.common.files import _toml_module

    toml = _toml_module()
    out: dict[str, Any] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise InvalidConfigError(f"{flag} {text!r}: give KEY=VALUE, such as learning_rate=3e-4")
        try:
            out[key] = toml.loads(f"v = {value.strip()}")["v"]
        except toml.TOMLDecodeError:
            out[key] = value.strip()  # a bare word: text (reward=wait)
    return out


def spec_from_args(args: argparse.Namespace) -> TrainSweepSpec:
    """The training sweep of ``hpcgym sweep``'s arguments: the file's ``[train]`` table, flags replacing keys.

    Raises:
        InvalidConfigError: a simulation flag, a malformed ``KEY=VALUE``, or a bad spec.
    """
    given = [flag for key, flag in SIMULATION_FLAGS.items() if getattr(args, key, None) is not None]
    if given:
        raise InvalidConfigError(f"{given[0]}: not an option of a training sweep")
    path = _spec_file(args)
    data: dict[str, Any] = {"name": "train", "train": {}}
    source = "flags"
    if path is not None:
        from hpcgym.machine import read_toml_or_yaml

        read = read_toml_or_yaml(Path(path), "sweep spec")
        if not is_training_spec(read):
            raise InvalidConfigError(f"{path}: --train, --train-arg and --train-grid need a [train] table")
        data = {"name": Path(path).stem, **read}
        source = str(path)
    train = dict(data["train"]) if isinstance(data.get("train"), Mapping) else data.get("train")
    if isinstance(train, dict):
        if args.train is not None:
            train["algorithm"] = args.train
        if args.seeds is not None:
            from hpcgym.experiments.sweep import _split

            train["seeds"] = _split(args.seeds, "seeds", int)
        for key in ("sample", "sample_seed"):
            if getattr(args, key) is not None:
                train[key] = getattr(args, key)
        for table, flags, flag in (
            ("args", args.train_arg, "--train-arg"),
            ("grid", args.train_grid, "--train-grid"),
        ):
            if flags:
                items = _toml_items(flags, flag)
                base = train.get(table, {})
                train[table] = {**(base if isinstance(base, Mapping) else {}), **items}
                other = "grid" if table == "args" else "args"
                if isinstance(train.get(other), Mapping):  # a flag moves a key between the tables
                    train[other] = {k: v for k, v in train[other].items() if k not in items}
    return TrainSweepSpec.from_mapping({**data, "train": train}, source=source)


def _print_rows(rows: Sequence[Mapping[str, Any]], spec: TrainSweepSpec) -> None:
    from hpcgym.common.report import format_table

    cols = [("trial", "trial", ""), ("seed", "seed", "")]
    cols += [(name, name, "") for name in spec.grid]
    cols += [
        ("policy", "policy", ""),
        ("mean_bsld", "mean bsld", ".2f"),
        ("mean_wait_min", "mean wait [min]", ".1f"),
        ("vs_reference", f"bsld - {spec.reference} [95% CI]", ""),
    ]
    shown = []
    for r in rows:
        if r["policy"] == spec.reference:
            vs = "(reference)"
        else:
            vs = vs_reference(r["bsld_diff"], r["bsld_diff_low"], r["bsld_diff_high"])
        shown.append({**r, "vs_reference": vs})
    print(format_table(shown, cols))


def run_cli(args: argparse.Namespace) -> int:
    """``hpcgym sweep`` for a training sweep: dry run, or the trials and the table."""
    from hpcgym.experiments.sweep import cli_outputs, interrupted, report_finished

    spec = spec_from_args(args)
    out, table, workers = cli_outputs(args, spec.name)
    if args.dry_run:
        est = estimate(spec, out, workers=workers)
        if args.json:
            from hpcgym.common.report import to_json

            print(to_json(est))
        else:
            for t in est["trials"]:
                print(f"{t['trial']}: {t['parameters']}{' (done)' if t['done'] else ''}")
            print(
                f"{est['name']}: {est['runs']} trials, {est['done']} already in {table}, "
                f"{est['pending']} to run; about {est['core_seconds'] / 60:.1f} core-minutes, "
                f"{est['wall_seconds'] / 60:.1f} min on {workers} workers (a probe of "
                f"{est['probe']['timesteps']} timesteps: {est['probe']['seconds_per_timestep'] * 1e3:.2f} ms "
                f"per timestep, {est['probe']['validation_seconds']:.1f} s per validation, "
                f"{est['probe']['other_seconds']:.1f} s to set up and evaluate)"
            )
        return 0
    from hpcgym.experiments.sweep import write_parquet

    try:
        result = run_train_sweep(
            spec,
            out,
            backend=args.backend,
            address=args.address,
            processes=args.processes,
            max_runs=args.max_runs,
            progress=False if args.no_progress else None,
        )
    except KeyboardInterrupt:
        return interrupted(table, "trials")
    written = [table]
    if args.parquet:
        write_parquet(result.rows, out / "results.parquet", columns(spec))
        written.append(out / "results.parquet")
    if report_finished(args, spec.name, "trials", result, table, written):
        _print_rows(result.rows, spec)
    return 0
