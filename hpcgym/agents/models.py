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
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import subprocess
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import hpcgym
from hpcgym.agents.common import TrainArgs
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path
from hpcgym.common.report import json_ready, to_json

METADATA_MEMBER = "hpcgym.json"
"""Name of the metadata member inside a saved model's ``.zip``."""
METADATA_FORMAT = "hpcgym-model/1"

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


def model_metadata(algorithm: str, args: TrainArgs, env: Any) -> dict[str, Any]:
    """What a saved model carries: its environment (resolved), training arguments and versions.

    Args:
        algorithm: ``"maskable-ppo"`` or ``"ppo"``.
        args: the training arguments.
        env: one training environment (its resolved configuration is recorded: the
            env id's own arguments, e.g. ``backfill="easy"`` of
            ``hpcgym/DispatchBackfill-v1``, and the observation parts actually shown).
    """
    base = env.unwrapped
    kwargs = base.config.to_kwargs()
    machine = kwargs["machine"]
    kwargs["machine"] = machine if machine is None or isinstance(machine, str) else machine.name
    kwargs["observations"] = list(base.observation_space.spaces)
    trace = kwargs.pop("trace")
    commit, dirty = git_commit()
    return json_ready(
        {
            "format": METADATA_FORMAT,
            "algorithm": algorithm,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hpcgym_version": hpcgym.__version__,
            "git_commit": commit,
            "git_dirty": dirty,
            "versions": _versions(),
            "env": {
                "env_id": args.env_id,
                "flatten": True,
                "trace": trace if trace is None or isinstance(trace, str) else None,
                "trace_name": base.trace.name,
                "trace_jobs": len(base.trace),
                "kwargs": kwargs,
            },
            "training": dataclasses.asdict(args),
        }
    )


def save_model(model: Any, path: str | os.PathLike[str], metadata: Mapping[str, Any]) -> Path:
    """Save ``model`` as a stable-baselines3 ``.zip`` with ``metadata`` inside; the path written."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(p) as tmp:  # a kill mid-save leaves the earlier model whole
        model.save(tmp)
        with zipfile.ZipFile(tmp, "a") as z:
            z.writestr(METADATA_MEMBER, to_json(dict(metadata)))
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
    if not isinstance(data, dict) or data.get("format") != METADATA_FORMAT:
        raise InvalidConfigError(
            f"model {path}: {METADATA_MEMBER} is not of format {METADATA_FORMAT!r} (written by another "
            "hpcgym version?); give the environment arguments by hand"
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
