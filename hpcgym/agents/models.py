"""Saved models: the metadata a model's ``.zip`` carries, from which its environment is rebuilt.

* :func:`model_metadata` gathers it from a training run, :func:`save_model` writes the
  model with it, :func:`read_metadata` reads it back;
* :func:`evaluation_env_kwargs` gives the environment arguments from which ``hpcgym
  evaluate --model`` rebuilds the environment on other windows: all but
  :data:`EVALUATION_OWNS`, which the evaluator sets itself; :data:`SHAPING` are those it
  may not change.

**The saved model.** :func:`save_model` writes stable-baselines3's ``.zip`` and adds one
member, ``hpcgym.json`` (stable-baselines3 ignores members it does not know): the
environment it was trained on (id, trace path and name, machine, every environment
argument resolved, including the observation parts shown and the backfill mode), the
training arguments, and the hpcgym version and git commit that made it, with the versions
of Python, numpy, gymnasium, torch and stable-baselines3. One file carries everything, so
a model cannot lose its configuration on the way to another machine.

**The trace it learned from** (:func:`trace_provenance`, under ``env``): besides the trace's
path, name and job count, its content hash (``trace_sha256``,
:func:`hpcgym.workloads.content_sha256`), the job ranges of its splits (``splits``: for
train, validation and test, the job indices ``[first, stop)`` and the first and last SWF
job numbers) and ``fingerprint``, every 64th job's number and key
(:func:`hpcgym.workloads.job_keys`). ``hpcgym evaluate`` uses them to tell whether its
windows hold jobs the model was trained or validated on, also on a cut or re-read copy of
the trace (:mod:`hpcgym.experiments.evaluate.provenance`). Models saved before these fields
existed get them from :func:`add_trace_provenance`, which rewrites only the metadata member.

**Several traces** (``hpcgym train --traces``): ``env["traces"]`` holds one such record per
trace, in metadata of format :data:`MULTI_FORMAT` (:func:`model_metadata`);
:func:`model_logs` lists the traces of a model of either format.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import hpcgym
from hpcgym.agents.common import TrainArgs
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path
from hpcgym.common.report import json_ready, to_json
from hpcgym.workloads import Workload, content_sha256, job_keys

METADATA_MEMBER = "hpcgym.json"
"""Name of the metadata member inside a saved model's ``.zip``."""
METADATA_FORMAT = "hpcgym-model/1"
"""Format of a model trained on one trace."""
MULTI_FORMAT = "hpcgym-model/2"
"""Format of a model trained on several traces (``env["traces"]``, :func:`model_metadata`);
a new format so that hpcgym versions that know only one trace per model refuse it plainly."""
FINGERPRINT_EVERY = 64
"""Every how many jobs of the training trace the metadata's ``fingerprint`` samples one."""

EVALUATION_OWNS = (
    "trace",
    "machine",
    "procs",
    "load_factor",
    "window_jobs",
    "split",
    "split_fractions",
    "job_range",
    "warm_start",
    "warm_policy",
)
"""Environment arguments the evaluator sets itself (which jobs, which windows)."""

SHAPING = (
    "window_size",
    "observations",
    "histogram_bins",
    "histogram_duration",
    "max_time_s",
    "oracle",
    "mode",
    "backfill",
    "policies",
    "order",
    "every_event",
)
"""Environment arguments that change what a model sees or what its actions mean: giving
another value than the model was trained with is an error of ``hpcgym evaluate``."""


def git_commit() -> tuple[str | None, bool | None]:
    """The commit of the git checkout hpcgym is imported from and whether it has local changes.

    ``(None, None)`` when hpcgym is not imported from a git checkout (an installed
    package) or git is not available.
    """
    root = Path(hpcgym.__file__).resolve().parent.parent

    def git(*argv: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *argv], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            return None, None  # hpcgym lives inside some other repository (e.g. a venv in one)
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return None, None


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("numpy", "gymnasium", "torch", "stable-baselines3", "sb3-contrib"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def model_metadata(algorithm: str, args: TrainArgs, env: Any | Sequence[Any]) -> dict[str, Any]:
    """What a saved model carries: its environment (resolved), training arguments and versions.

    Args:
        algorithm: ``"maskable-ppo"`` or ``"ppo"``.
        args: the training arguments.
        env: one training environment (its resolved configuration is recorded: the
            env id's own arguments, e.g. ``backfill="easy"`` of
            ``hpcgym/DispatchBackfill-v1``, and the observation parts actually shown);
            a list of them, one per trace, for a run on several traces (``--traces``).

    With several traces the metadata is of format :data:`MULTI_FORMAT`: ``env`` holds
    ``traces``, one record per trace (:func:`_trace_record`: path as given, name, job
    count, machine and processors, hash, splits, fingerprint), and ``kwargs`` the
    arguments they share (``machine`` and ``procs`` None: each trace's own are in its
    record). One trace keeps :data:`METADATA_FORMAT`, with the record's fields in ``env``.
    """
    envs = list(env) if isinstance(env, Sequence) else [env]
    records = [_trace_record(e) for e in envs]
    kwargs = records[0].pop("kwargs")
    for r in records[1:]:
        r.pop("kwargs")
    commit, dirty = git_commit()
    if len(records) == 1:
        record = {k: v for k, v in records[0].items() if k not in ("machine", "procs")}
        env_meta = {"env_id": args.env_id, "flatten": True, **record, "kwargs": kwargs}
    else:
        kwargs.update(machine=None, procs=None)
        env_meta = {"env_id": args.env_id, "flatten": True, "traces": records, "kwargs": kwargs}
    return json_ready(
        {
            "format": METADATA_FORMAT if len(records) == 1 else MULTI_FORMAT,
            "algorithm": algorithm,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hpcgym_version": hpcgym.__version__,
            "git_commit": commit,
            "git_dirty": dirty,
            "versions": _versions(),
            "env": env_meta,
            "training": dataclasses.asdict(args),
        }
    )


def _trace_record(env: Any) -> dict[str, Any]:
    """One training environment's trace (path, name, jobs, machine, provenance) and its ``kwargs``."""
    base = env.unwrapped
    kwargs = base.config.to_kwargs()
    machine = kwargs["machine"]
    kwargs["machine"] = machine if machine is None or isinstance(machine, str) else machine.name
    kwargs["observations"] = list(base.observation_space.spaces)
    trace = kwargs.pop("trace")
    provenance = trace_provenance(base.trace, tuple(kwargs["split_fractions"]), kwargs.get("job_range"))
    return {
        "trace": trace if trace is None or isinstance(trace, str) else None,
        "trace_name": base.trace.name,
        "trace_jobs": len(base.trace),
        "machine": kwargs["machine"],
        "procs": int(base.trace.procs),
        **provenance,
        "kwargs": kwargs,
    }


def model_logs(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The traces a model was trained on, one record each (``trace``, ``trace_name``,
    ``trace_jobs``, and the provenance fields when recorded): ``env["traces"]`` of a model
    trained on several, else its one trace's fields of ``env``."""
    env = metadata["env"]
    if "traces" in env:
        return [dict(r) for r in env["traces"]]
    return [{k: v for k, v in env.items() if k not in ("env_id", "flatten", "kwargs")}]


def save_model(model: Any, path: str | os.PathLike[str], metadata: Mapping[str, Any]) -> Path:
    """Save ``model`` as a stable-baselines3 ``.zip`` with ``metadata`` inside; the path written."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(p) as tmp:  # a kill mid-save leaves the earlier model whole
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as z:
            z.writestr(METADATA_MEMBER, to_json(dict(metadata)), compress_type=zipfile.ZIP_DEFLATED)
    return p


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The metadata of a saved model, or None for a model saved without it (by plain SB3).

    Raises:
        InvalidConfigError: the file is not a zip, or its metadata is not readable.
    """
    try:
        with zipfile.ZipFile(path) as z:
            if METADATA_MEMBER not in z.namelist():
                return None
            data = json.loads(z.read(METADATA_MEMBER))
    except (OSError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InvalidConfigError(f"model {path}: cannot read its {METADATA_MEMBER}: {err}") from err
    if not isinstance(data, dict) or data.get("format") not in (METADATA_FORMAT, MULTI_FORMAT):
        raise InvalidConfigError(
            f"model {path}: {METADATA_MEMBER} is not of format {METADATA_FORMAT!r} or {MULTI_FORMAT!r} "
            "(written by another hpcgym version?); give the environment arguments by hand"
        )
    return data


def evaluation_env_kwargs(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The environment arguments to rebuild a model's environment on other windows.

    Everything recorded except what the evaluator sets itself (:data:`EVALUATION_OWNS`:
    trace, machine, which windows, warm start). Lists become tuples, as the environment's
    configuration holds them.
    """
    kwargs = metadata["env"]["kwargs"]
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items() if k not in EVALUATION_OWNS}


def trace_provenance(
    trace: Workload,
    split_fractions: tuple[float, float, float],
    job_range: tuple[int, int] | list[int] | None = None,
) -> dict[str, Any]:
    """What a model's metadata records of its training trace, beside its path and name.

    Returns:
        ``trace_sha256`` (the content hash), ``splits`` (``train`` / ``validation`` /
        ``test``: ``jobs``, the indices ``[first, stop)``, and ``job_ids``, the first and
        last SWF job numbers; ``train`` is ``job_range`` when the model was trained on
        one), ``job_ids_increasing`` (whether job numbers grow with the index, so that a
        split is a range of job numbers) and ``fingerprint`` (``every``, ``job_id`` and
        ``key``: every :data:`FINGERPRINT_EVERY`-th job's number and key).
    """
    from hpcgym.env import episodes

    n = len(trace)
    ids = np.asarray(trace.job_id, dtype=np.int64)
    splits = {}
    for split in ("train", "validation", "test"):
        rng = (int(job_range[0]), int(job_range[1])) if split == "train" and job_range is not None else None
        lo, hi = episodes.split_range(n, split, split_fractions, rng)
        splits[split] = {"jobs": [lo, hi], "job_ids": [int(ids[lo]), int(ids[hi - 1])]}
    sample = np.arange(0, n, FINGERPRINT_EVERY)
    return {
        "trace_sha256": content_sha256(trace),
        "splits": splits,
        "job_ids_increasing": bool(np.all(np.diff(ids) > 0)),
        "fingerprint": {
            "every": FINGERPRINT_EVERY,
            "job_id": ids[sample].tolist(),
            "key": job_keys(trace)[sample].tolist(),
        },
    }


def add_trace_provenance(path: str | os.PathLike[str], trace: Workload) -> dict[str, Any]:
    """Add :func:`trace_provenance` to the metadata of a model saved before it existed.

    Only the ``hpcgym.json`` member changes: the weights and every other member are copied
    byte for byte, so the model acts as before. The file is rewritten through a temporary
    file in its folder, renamed into place.

    Args:
        path: the saved model.
        trace: its training trace, read as the model's environment read it (the
            recorded path, machine and procs).

    Returns:
        The new metadata.

    Raises:
        InvalidConfigError: the model has no hpcgym metadata, or ``trace`` is not the trace
            it records (another name or job count).
    """
    p = Path(path)
    meta = read_metadata(p)
    if meta is None:
        raise InvalidConfigError(f"model {p}: no {METADATA_MEMBER}; it was not saved by hpcgym train")
    env = meta["env"]
    if "traces" in env:
        raise InvalidConfigError(
            f"model {p}: trained on several traces, each recorded with its provenance already"
        )
    if (trace.name, len(trace)) != (env["trace_name"], env["trace_jobs"]):
        raise InvalidConfigError(
            f"model {p}: trained on {env['trace_name']} ({env['trace_jobs']} jobs), "
            f"not {trace.name} ({len(trace)} jobs)"
        )
    kwargs = env["kwargs"]
    provenance = trace_provenance(trace, tuple(kwargs["split_fractions"]), kwargs.get("job_range"))
    new_env = {k: v for k, v in env.items() if k != "kwargs"} | provenance | {"kwargs": kwargs}
    meta = json_ready({**meta, "env": new_env})
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(p) as src, zipfile.ZipFile(tmp, "w") as dst:
            for info in src.infolist():
                if info.filename == METADATA_MEMBER:
                    info.compress_type = zipfile.ZIP_DEFLATED
                    dst.writestr(info, to_json(dict(meta)))
                else:
                    dst.writestr(info, src.read(info))
        os.chmod(tmp, p.stat().st_mode & 0o7777)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return meta
