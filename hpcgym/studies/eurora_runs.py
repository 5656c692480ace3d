"""The runs both Eurora studies make: 001's (:mod:`hpcgym.studies.galleguillos2017`) and 002's
(:mod:`hpcgym.studies.galleguillos2019`).

A run is one dispatcher with one of the papers' duration predictions (W, D, R,
:data:`PREDICTORS`) on one workload; :func:`run_all` makes a list of them in worker
processes and keeps each run's per-job columns (:class:`Run`), not its schedule. Also
here: the studies' CP time limit (:data:`CP_DELTA`, :func:`cp_spec`), finding a run in
a list (:func:`find_run`) and writing a study's result (:func:`public`,
:func:`write_results`).

A study at the papers' sizes takes hours (002's 23 runs over 2,000 jobs: about two hours of
one core per generator seed), so :func:`run_all` can keep every finished run in a folder
(``hpcgym study -o OUT`` uses ``OUT/runs``) and read it back instead of running it again:
an interrupted study resumes where it stopped when the same command is run again. A run
is found by a key of everything its schedule depends on (the workload's content hash,
the dispatcher, its parameters and the prediction, :func:`run_key`); its recorded
simulation and CP decision times are those of the run that made it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.baselines import make_policy, policy_parameters, preset_predictor, resolve_policy_name
from hpcgym.common.files import atomic_path, write_atomic, write_text_atomic
from hpcgym.common.report import to_json, write_csv
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, content_sha256

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CP_DELTA = 0.02
"""The studies' CP time limit ``delta`` in seconds (``--cp-delta``), with ``delta_max = 16
delta`` as 002's ratio. 001 gives no limit ("we impose a time limit to bound the
search"); 002 uses 1 s of wall-clock time. The studies' default is 0.02 s of
deterministic time (runs repeat on any machine): ``docs/CP.md`` measures the same
decisions with 0.02 and 0.1 and what 1 s adds, at 002's problem sizes."""


def cp_spec(dispatcher: str, delta: float | None) -> str | None:
    """The policy to make for ``dispatcher`` with the CP time limit ``delta`` (None: as named).

    A CP dispatcher (``hcp*``, ``pcp*``, ``cph``) gets ``delta`` and ``delta_max = 16 delta``
    unless its name already carries parameters; other dispatchers are made as named.

    >>> cp_spec("cph", 0.1)
    'cph:delta=0.1,delta_max=1.6'
    >>> cp_spec("prb", 0.1) is None
    True
    """
    if delta is None or ":" in dispatcher or "delta" not in (policy_parameters(dispatcher) or ()):
        return None
    return f"{dispatcher}:delta={delta:g},delta_max={16 * delta:g}"


PREDICTORS = {"W": "walltime", "D": "profile", "R": "real"}
"""001's duration predictions, which 002 keeps -> hpcgym predictor names."""


@dataclass(frozen=True)
class Run:
    """What one dispatcher x prediction run keeps: per-job columns, not the schedule.

    ``cp`` holds a CP dispatcher's figures (``Schedule.extras["cp"]``), else it is empty.
    """

    dispatcher: str
    prediction: str
    start: np.ndarray
    first_prediction: np.ndarray
    decisions: int
    sim_seconds: float
    cp: dict[str, Any] = field(default_factory=dict)


def _run_one(workload: Workload, dispatcher: str, prediction: str, spec: str | None = None) -> Run:
    """Simulate ``workload`` under ``dispatcher`` with the ``prediction`` (W, D or R).

    ``spec`` is the policy to make when it carries parameters (``"cph:delta=0.1"``);
    ``dispatcher`` is then only the run's label.
    """
    name = resolve_policy_name(dispatcher.split(":")[0])
    sim = Simulator(workload, predictor=preset_predictor(name, PREDICTORS[prediction]))
    schedule = sim.run(make_policy(spec or dispatcher), progress=False)
    cp = schedule.extras.get("cp", {})
    return Run(
        dispatcher,
        prediction,
        schedule.start,
        schedule.first_prediction,
        schedule.decisions,
        schedule.sim_seconds,
        dict(cp) if isinstance(cp, dict) else {},
    )


RUN_FILE_VERSION = 1
"""Bumped when :class:`Run`'s stored fields change: older run files are then run again."""


def run_key(workload_sha256: str, dispatcher: str, prediction: str, spec: str | None) -> str:
    """The key a finished run is stored under: 16 hex digits of everything its schedule depends on.

    >>> run_key("ab" * 32, "easy", "W", None) == run_key("ab" * 32, "easy", "W", None)
    True
    >>> run_key("ab" * 32, "easy", "W", None) == run_key("ab" * 32, "easy", "D", None)
    False
    """
    text = json.dumps([RUN_FILE_VERSION, workload_sha256, dispatcher, prediction, spec])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _run_path(folder: Path, key: str, dispatcher: str, prediction: str) -> Path:
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in dispatcher)
    return folder / f"{name}-{prediction}-{key}.npz"


def save_run(path: Path, run: Run, key: str) -> None:
    """Write ``run`` to ``path`` (``.npz``; written whole or not at all)."""
    import io

    meta = {
        "key": key,
        "dispatcher": run.dispatcher,
        "prediction": run.prediction,
        "decisions": run.decisions,
        "sim_seconds": run.sim_seconds,
        "cp": run.cp,
    }
    buf = io.BytesIO()
    np.savez(buf, start=run.start, first_prediction=run.first_prediction, meta=np.array(to_json(meta)))
    write_atomic(path, buf.getvalue())


def load_run(path: Path, key: str) -> Run | None:
    """The run stored at ``path`` under ``key``; None if there is none, or another key's or an
    unreadable file's there (it is then run again and overwritten)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("key") != key:
                return None
            return Run(
                meta["dispatcher"],
                meta["prediction"],
                z["start"],
                z["first_prediction"],
                int(meta["decisions"]),
                float(meta["sim_seconds"]),
                dict(meta["cp"]),
            )
    except (OSError, ValueError, KeyError, TypeError):
        return None


_WORKER_WORKLOAD: Workload | None = None


def _init_worker(workload: Workload) -> None:
    global _WORKER_WORKLOAD
    _WORKER_WORKLOAD = workload


def _run_in_worker(dispatcher: str, prediction: str, spec: str | None) -> Run:
    assert _WORKER_WORKLOAD is not None
    return _run_one(_WORKER_WORKLOAD, dispatcher, prediction, spec)


def run_all(
    workload: Workload,
    combos: Sequence[tuple[str, str, str | None]],
    *,
    processes: int | None = None,
    progress: Callable[[str], None] | None = None,
    label: Callable[[str], str] = lambda d: d,
    runs_dir: Path | None = None,
) -> list[Run]:
    """Every ``(dispatcher, prediction, spec)`` run of ``combos`` on ``workload``, in order.

    Runs go to ``processes`` worker processes (default: one per core, at most one per
    run; 1 runs here), the workload sent to each worker once. ``progress`` gets a line
    after every finished run. With ``runs_dir``, every finished run is written there as it
    ends and a run already there (same :func:`run_key`) is read back instead of run.
    """
    runs: dict[tuple[str, str], Run] = {}
    t0 = time.perf_counter()
    paths: dict[tuple[str, str], tuple[Path, str]] = {}
    todo = list(combos)
    if runs_dir is not None:
        sha = content_sha256(workload)
        todo = []
        for d, p, spec in combos:
            key = run_key(sha, d, p, spec)
            path = paths[(d, p)] = (_run_path(runs_dir, key, d, p), key)
            stored = load_run(*path)
            if stored is None:
                todo.append((d, p, spec))
            else:
                runs[(d, p)] = stored
        if runs and progress is not None:
            progress(f"{len(runs)} of {len(combos)} runs read back from {runs_dir}")
    procs = min(processes or os.cpu_count() or 1, max(len(todo), 1))

    def done(run: Run) -> None:
        runs[(run.dispatcher, run.prediction)] = run
        if runs_dir is not None:
            runs_dir.mkdir(parents=True, exist_ok=True)
            path, key = paths[(run.dispatcher, run.prediction)]
            save_run(path, run, key)
        if progress is not None:
            progress(
                f"[{len(runs)}/{len(combos)}] {label(run.dispatcher)}-{run.prediction}: "
                f"simulation {run.sim_seconds:.1f} s, {time.perf_counter() - t0:.0f} s elapsed"
            )

    if procs <= 1:
        for d, p, spec in todo:
            done(_run_one(workload, d, p, spec))
    elif todo:
        with ProcessPoolExecutor(procs, initializer=_init_worker, initargs=(workload,)) as pool:
            futures = [pool.submit(_run_in_worker, d, p, spec) for d, p, spec in todo]
            for f in as_completed(futures):
                done(f.result())
    return [runs[(d, p)] for d, p, _ in combos]


def find_run(runs: Sequence[Run], dispatcher: str, prediction: str) -> int | None:
    """The index in ``runs`` of ``dispatcher``'s run with ``prediction``, or None."""
    for i, r in enumerate(runs):
        if r.dispatcher == dispatcher and r.prediction == prediction:
            return i
    return None


def public(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without its private run arrays (what the JSON holds)."""
    return {k: v for k, v in result.items() if not k.startswith("_")}


def write_results(
    result: dict[str, Any],
    out: Path,
    columns: Sequence[str],
    figures: Callable[[dict[str, Any]], dict[str, Figure]],
    *,
    plots: bool = True,
) -> list[Path]:
    """Write ``results.json``, ``results.csv`` (of ``columns``) and, with matplotlib and ``plots``,
    the ``figures`` as PNG files to ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "results.json", out / "results.csv"]
    write_text_atomic(written[0], to_json(public(result)) + "\n")
    write_csv(written[1], result["rows"], columns)
    if plots:
        for stem, fig in figures(result).items():
            path = out / f"{stem}.png"
            with atomic_path(path) as tmp:
                fig.savefig(tmp, dpi=100)
            written.append(path)
    return written
