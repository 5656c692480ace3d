"""Running a training sweep: each trial trained and evaluated, on a process pool or in Ray Tune.

Each trial is :func:`hpcgym.agents.train.train` into its own run folder ``OUT/runs/NAME``
(the models, ``training.json``), then :func:`hpcgym.experiments.evaluate.evaluate` of its
best model (on the validation split) beside the baselines on the windows of the test split
of the trace it trained on (``OUT/runs/NAME/evaluation``: the JSON and the per-window CSV).
The evaluation's summary rows -- one per policy: mean and median bsld and wait, utilization,
invalid-action rate, the paired difference with the reference and its bootstrap interval --
are appended to ``OUT/results.csv`` with the trial's parameters as columns
(:func:`~hpcgym.experiments.sweep.train_spec.columns`), all rows of a trial in one write,
the moment the trial ends. A re-run skips the trials whose key (:meth:`Trial.key`) is in the
table; a trial cut short while its rows were written is run again.

Backends: ``local`` runs the trials on a process pool of ``processes`` workers (spawned
processes, each trial in a fresh worker state; one process: in this one); ``ray`` runs each
trial as a Ray Tune trial (a function trainable under ``tune.Tuner``, 1 CPU per trial,
``n_envs`` CPUs when ``n_envs > 1``; Tune's files under ``OUT/tune``), which reports the
validation score to Tune after every validation of the training (``validation_mean_bsld``)
and the trial's rows at the end. A trial whose worker is lost (its node lost, its process
killed) is run again from its start, up to :data:`TRIAL_RETRIES` times; a trial's own error
is not (it would fail again) and ends the sweep with a :class:`~hpcgym.common.errors.TrialError`
once the other trials are done. Training is deterministic on CPU with ``torch_threads = 1``
(the default), so both backends write the same table apart from the timing columns
(:data:`~hpcgym.experiments.sweep.train_spec.TIMING_COLUMNS`), as
``tests/experiments/test_sweep_train.py`` checks.

Where the issue leaves a detail open:

* The evaluation uses the trial's trace, machine and ``window_jobs`` unless
  ``[train.evaluate]`` sets ``window_jobs``; the reference (EASY by default) is added to
  the baselines if absent. The model evaluated is ``best_model.zip`` (the best on the
  validation windows), else the final one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import sys
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hpcgym.common.errors import TrialError
from hpcgym.common.files import write_text_atomic
from hpcgym.experiments.sweep.backends import check_address, check_run_options, pool_results, start_ray
from hpcgym.experiments.sweep.running import SweepResult, progress_bar
from hpcgym.experiments.sweep.table import ResultsTable, read_results
from hpcgym.experiments.sweep.train_spec import (
    RESULT_COLUMNS,
    TrainSweepSpec,
    Trial,
    _cell_value,
    _parse_cell,
    columns,
)


def _absolute_paths(trial: Trial) -> Trial:
    """``trial`` with its trace (and a machine file) as absolute paths of this machine (a
    trace named by its catalogue name: the downloaded file's).

    Done where the command runs, before a trial leaves for a worker: Ray Tune runs each
    trial in a folder of its own. The key hashes only the trace's file name, so it is
    unchanged.
    """

    def absolute(pairs: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        from hpcgym.workloads import resolve_trace

        out = []
        for k, v in pairs:
            if v is not None and k == "trace":  # a catalogue name: its downloaded file
                v = str(resolve_trace(str(v)).resolve())
            elif v is not None and k == "machine" and Path(str(v)).is_file():
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
    from hpcgym.experiments.evaluate.run import evaluate

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
def _local(trials: Sequence[Trial], out: Path, processes: int) -> Generator[list[dict[str, Any]], None, None]:
    """Each trial's rows as it finishes, on ``processes`` spawned workers (1: in this process).

    Spawned, not forked: a worker never inherits torch's or numba's threads of this process.
    """
    if processes <= 1:
        for trial in trials:
            yield run_trial(trial, out)
        return
    import multiprocessing

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


TRIAL_RETRIES = 2
"""How many times Ray Tune runs a trial again, from its start, after it lost its worker (a
node lost, a worker process killed): Tune's ``FailureConfig(max_failures=...)``. A trial's
own error (a bad setting, a bug) is not retried: it is reported as :data:`TRIAL_ERROR`."""

TRIAL_ERROR = "trial_error"
"""The metric a Tune trial reports instead of its rows when training or evaluation raised."""


def _tune_trainable(config: dict[str, Any]) -> None:
    """A Tune function trainable: one trial; validation scores as training goes, rows at the end."""
    from ray import tune

    from hpcgym.agents.callbacks import validation_listener

    trial = _trial_from(config["trial"])

    def report(row: dict[str, Any]) -> None:
        tune.report({"timesteps": row["timesteps"], "validation_mean_bsld": row["mean_bsld"]})

    try:
        with validation_listener(report):
            rows = run_trial(trial, config["out"])
    except Exception as err:  # the trial's own error: the same on a retry (training is deterministic)
        tune.report({TRIAL_ERROR: f"{type(err).__name__}: {err}"})
        return
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

    class Collect(tune.Callback):
        def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
            result = trial.last_result or {}
            if "rows_json" in result:
                on_rows(json.loads(result["rows_json"]))

    # Tune's tables, and Ray's messages about lost nodes (printed from a thread of its own
    # until Ray shuts down): stderr, so that stdout holds only the command's output (--json)
    with contextlib.redirect_stdout(sys.stderr):
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
                    failure_config=tune.FailureConfig(max_failures=TRIAL_RETRIES),
                ),
            )
            grid = tuner.fit()
            results = [grid[i] for i in range(len(grid))]
            own = [r for r in results if r.error is None and TRIAL_ERROR in (r.metrics or {})]
            if own:
                raise TrialError(
                    f"{len(own)} of {len(trials)} training trial(s) failed on Ray Tune; the first "
                    f"({own[0].path}): {(own[0].metrics or {})[TRIAL_ERROR]}; the finished trials are in the "
                    "table: fix and run again"
                )
            lost = [r for r in results if r.error is not None]
            if lost:
                message = str(lost[0].error).strip().splitlines()[-1]
                raise TrialError(
                    f"{len(lost)} of {len(trials)} training trial(s) lost their Ray worker "
                    f"{TRIAL_RETRIES + 1} times (a node or worker process lost; each was run again from "
                    f"its start {TRIAL_RETRIES} times); the first ({lost[0].path}): {message}; the "
                    "finished trials are in the table: run the same command to resume"
                )
        finally:
            if started:
                ray.shutdown()


# ---------------------------------------------------------------------------- running
def _open_table(spec: TrainSweepSpec, path: Path) -> ResultsTable:
    """The results table, without the rows of trials cut short while being written."""
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
        text = io.StringIO(newline="")
        csv.writer(text).writerows([lines[0], *(c for c in lines[1:] if c[0] not in partial)])
        write_text_atomic(path, text.getvalue())
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
) -> SweepResult:
    """Run every trial of ``spec`` not yet in ``OUT/results.csv``, appending each trial's rows as it ends.

    Args:
        spec: the training sweep.
        out: the sweep's folder: ``results.csv``, ``runs/NAME`` per trial, ``tune/`` (Ray).
        backend: ``"local"`` (a process pool) or ``"ray"`` (Ray Tune trials).
        address: with ``backend="ray"``: a cluster (the head's ``"HOST:PORT"``, ``"auto"``,
            ``"ray://host:10001"``).
        processes: local workers (default: one per core, or per ``n_envs`` cores when
            the trials train on several environments; at most one per trial); with a
            local Ray, its CPUs.
        max_runs: stop after this many new trials (the rest is left for the next call).
        progress: a progress bar of the trials on stderr (default: on a terminal).

    Returns:
        A :class:`~hpcgym.experiments.sweep.running.SweepResult` counting trials; its rows are
        the table's rows of this sweep's trials, in trial order.

    Raises:
        InvalidConfigError: an unknown backend, ``address`` without Ray, or a bad count.
        MissingExtraError: the ``rl`` extra (or Ray, for ``backend="ray"``) is missing.
        TrialError: a Ray Tune trial failed (its own error, or its worker lost more than
            :data:`TRIAL_RETRIES` times).
        ClusterConnectionError: nothing answers at ``address``, or the cluster refuses this process.
    """
    from hpcgym.common.extras import require

    check_run_options(backend, address, processes, max_runs)
    require("rl", what="a training sweep")
    if backend == "ray":
        require("ray", "ray", "ray.tune", what="--backend ray (Ray Tune trials): pip install 'hpcgym[ray]'")
        if address is not None:
            check_address(address)  # before any table is written or trace read
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
                finished = _local(pending, folder, procs)
                try:
                    for rows in finished:
                        append(rows)
                finally:  # now, not when the traceback lets go: the workers end here
                    finished.close()
        finally:
            bar.close()
    order = {t.key(): i for i, t in enumerate(trials)}
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
