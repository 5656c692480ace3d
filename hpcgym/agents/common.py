"""What the training scripts share: configuration, environments, seeding, saved models.

Each algorithm keeps its own readable file (:mod:`~hpcgym.agents.train_maskable_ppo`,
:mod:`~hpcgym.agents.train_ppo`); this module holds only what both need:

* :class:`TrainArgs`, the fields every script's ``Args`` dataclass starts with (the run,
  the environment, the PPO hyperparameters, validation and checkpoints);
* :func:`make_vec_env`, the training environments: ``DummyVecEnv`` for one,
  ``SubprocVecEnv`` (one worker process each) for ``n_envs > 1``;
* :func:`seed_everything` and :class:`Run`, which ties seeding, environments, callbacks
  (:mod:`hpcgym.agents.callbacks`) and saving together;
* the metadata a saved model carries (:func:`model_metadata`, :func:`save_model`,
  :func:`read_metadata`, :func:`evaluation_env_kwargs`), from which ``hpcgym evaluate
  --model`` rebuilds the environment.

**Seeds.** Everything random is seeded from ``seed``: Python's ``random``, numpy's global
generator, torch (:func:`seed_everything`), the model (``seed=``: its action sampling and
weight initialisation), training environment ``i`` (its window sampling, through the
first ``reset(seed=seed + i)``, and its action space), and nothing else draws: the
validation windows are fixed and played deterministically. Torch uses ``torch_threads``
CPU threads (1 by default) so that a run gives the same model on any machine with the same
library versions.

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
import importlib
import json
import os
import platform
import random
import subprocess
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

import hpcgym
from hpcgym.common.errors import HpcGymError, InvalidConfigError
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


@dataclass(frozen=True)
class TrainArgs:
    """The fields every training script's ``Args`` starts with (each is a ``--flag``)."""

    # ---- the run
    seed: int = 1
    """seed of every random generator (Python, numpy, torch, the model, the environments)"""
    total_timesteps: int = 100_000
    """environment steps to train for, summed over the environments"""
    out: str | None = None
    """folder of the models, checkpoints and training.json; None: runs/ALGORITHM-seedSEED"""
    n_envs: int = 1
    """training environments: 1 in this process (DummyVecEnv), more in one process each (SubprocVecEnv)"""
    torch_threads: int = 1
    """torch CPU threads"""
    tensorboard_log: str | None = None
    """write TensorBoard logs into this folder; None: no logs"""
    progress_bar: bool = True
    """show a progress bar of the timesteps"""
    verbose: int = 0
    """stable-baselines3 verbosity (0 quiet, 1 a table per rollout)"""
    # ---- the environment
    env_id: str = "hpcgym/Dispatch-v1"
    """registered environment id (hpcgym/DispatchBackfill-v1, hpcgym/DispatchPolicy-v1, ...)"""
    trace: str | None = None
    """SWF trace or job table (.csv, .csv.gz, .parquet); None: the bundled SDSC-SP2 slice"""
    machine: str | None = None
    """machine preset or TOML file, e.g. eurora; None: the trace's own machine"""
    procs: int | None = None
    """machine size in processors of an SWF trace; None: the trace's, as for simulate"""
    window_jobs: int = 256
    """jobs per training episode (a window of the train split)"""
    window_size: int = 64
    """K, the waiting jobs the agent sees and chooses among"""
    backfill: Literal["none", "easy"] | None = None
    """'easy': a chosen job that does not fit gets EASY's reservation; None: the env id's"""
    policies: tuple[str, ...] | None = None
    """policy mode (hpcgym/DispatchPolicy-v1): the dispatcher presets an action picks; None: the env's"""
    reward: str = "bsld"
    """reward name (bsld, bsld-sparse, wait)"""
    observations: tuple[str, ...] | None = None
    """observation parts by name; None: the environment's"""
    predictor: str | None = None
    """runtime predictor the agent sees; None: walltime, the user estimate"""
    invalid_penalty: float = 0.0
    """subtracted from the reward of an invalid action"""
    # ---- PPO
    n_steps: int = 512
    """steps per environment per rollout"""
    batch_size: int = 256
    """minibatch size"""
    n_epochs: int = 4
    """epochs per rollout"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.999
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    ent_coef: float = 0.01
    """entropy bonus"""
    net_arch: tuple[int, ...] = (128, 128)
    """hidden layer sizes of the policy and value networks"""
    # ---- validation and checkpoints
    eval_freq: int = 10_000
    """score the agent on the validation windows every this many timesteps, and at the end (0: at the end)"""
    eval_windows: int = 5
    """validation windows (non-overlapping, evenly spaced in the validation split)"""
    eval_window_jobs: int | None = None
    """jobs per validation window; None: window_jobs"""
    checkpoint_freq: int = 0
    """save a checkpoint every this many timesteps (0: none)"""

    def __post_init__(self) -> None:
        for name, minimum in (
            ("seed", 0),
            ("total_timesteps", 1),
            ("n_envs", 1),
            ("torch_threads", 1),
            ("window_jobs", 1),
            ("window_size", 1),
            ("n_steps", 1),
            ("batch_size", 1),
            ("n_epochs", 1),
            ("eval_freq", 0),
            ("eval_windows", 1),
            ("checkpoint_freq", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                flag = "--" + name.replace("_", "-")
                raise InvalidConfigError(f"{flag}: must be an integer >= {minimum}, got {value!r}")
        if self.eval_window_jobs is not None and self.eval_window_jobs < 1:
            raise InvalidConfigError(f"--eval-window-jobs: must be >= 1, got {self.eval_window_jobs}")
        if not self.net_arch or any(n < 1 for n in self.net_arch):
            raise InvalidConfigError(f"--net-arch: must be one or more positive sizes, got {self.net_arch}")
        for name in ("learning_rate", "gamma", "gae_lambda"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InvalidConfigError(f"--{name.replace('_', '-')}: must be in (0, 1], got {value}")
        if self.ent_coef < 0:
            raise InvalidConfigError(f"--ent-coef: must be >= 0, got {self.ent_coef}")
        self._check_env_id_and_policies()
        from hpcgym.env import make_config

        make_config(**env_kwargs(self))  # every environment argument checked before any work

    def _check_env_id_and_policies(self) -> None:
        """``--env-id`` is registered; ``--policies`` names dispatcher presets of a policy-mode id."""
        import gymnasium as gym

        from hpcgym.baselines import resolve_policy_name

        module, _, env_id = self.env_id.rpartition(":")
        try:
            if module:
                importlib.import_module(module)
            spec = gym.spec(env_id)
        except (ImportError, gym.error.Error) as err:
            raise InvalidConfigError(f"--env-id: {err}") from err
        if self.policies is None:
            return
        if (spec.kwargs or {}).get("mode") != "policy":
            raise InvalidConfigError(
                f"--policies: only policy-mode environments pick among dispatchers; {self.env_id} is "
                "not one (use --env-id hpcgym/DispatchPolicy-v1)"
            )
        for name in self.policies:
            try:
                resolve_policy_name(name)
            except HpcGymError as err:
                raise InvalidConfigError(f"--policies: {err}") from err


def env_kwargs(args: TrainArgs) -> dict[str, Any]:
    """The environment arguments of ``args`` (``backfill`` only when given: the id sets it)."""
    kw: dict[str, Any] = {
        "trace": args.trace,
        "machine": args.machine,
        "procs": args.procs,
        "window_jobs": args.window_jobs,
        "window_size": args.window_size,
        "reward": args.reward,
        "observations": args.observations,
        "predictor": args.predictor,
        "invalid_penalty": args.invalid_penalty,
    }
    if args.backfill is not None:
        kw["backfill"] = args.backfill
    if args.policies is not None:
        kw["policies"] = args.policies
    return kw


def ppo_kwargs(args: TrainArgs) -> dict[str, Any]:
    """The keyword arguments PPO and MaskablePPO share."""
    return {
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "n_epochs": args.n_epochs,
        "learning_rate": args.learning_rate,
        "gamma": args.gamma,
        "gae_lambda": args.gae_lambda,
        "ent_coef": args.ent_coef,
        "policy_kwargs": {"net_arch": list(args.net_arch)},
        "tensorboard_log": args.tensorboard_log,
        "seed": args.seed,
        "verbose": args.verbose,
        "device": "cpu",
    }


def _module_id(env_id: str) -> str:
    """``env_id`` with Gymnasium's module prefix, so worker processes register the ids."""
    return env_id if ":" in env_id else f"hpcgym:{env_id}"


def make_env(args: TrainArgs, split: str, **overrides: Any) -> Any:
    """One flattened environment of ``split`` (for validation and the metadata)."""
    import gymnasium as gym

    from hpcgym.env import FlattenDispatchObservation

    return FlattenDispatchObservation(
        gym.make(_module_id(args.env_id), **{**env_kwargs(args), "split": split, **overrides})
    )


def make_vec_env(args: TrainArgs) -> Any:
    """The ``n_envs`` training environments of the train split, flattened, seeded from ``args.seed``.

    One environment runs in this process (``DummyVecEnv``); more run in one worker
    process each (``SubprocVecEnv``), built by stable-baselines3's ``make_vec_env``
    (each wrapped in its ``Monitor``, so episode returns reach the logs). Environment
    ``i`` is seeded with ``seed + i``.
    """
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from hpcgym.env import FlattenDispatchObservation

    return sb3_make_vec_env(
        _module_id(args.env_id),
        n_envs=args.n_envs,
        seed=args.seed,
        env_kwargs={**env_kwargs(args), "split": "train"},
        wrapper_class=FlattenDispatchObservation,
        vec_env_cls=SubprocVecEnv if args.n_envs > 1 else DummyVecEnv,
    )


def require_training(args: TrainArgs, what: str) -> None:
    """Raise :class:`~hpcgym.common.errors.MissingExtraError` unless the ``rl`` extra (and
    tensorboard, for ``--tensorboard-log``) is installed: before any work."""
    from hpcgym.common.extras import require

    require("rl", what=what)
    if args.tensorboard_log is not None:
        require("rl", "tensorboard", what="--tensorboard-log")


def seed_everything(seed: int, torch_threads: int) -> None:
    """Seed Python's ``random``, numpy's global generator and torch; set torch's CPU threads."""
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - libraries that still read the global generator
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, torch_threads))


# ----------------------------------------------------------------------------- metadata
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
    model.save(p)
    with zipfile.ZipFile(p, "a") as z:
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


# ----------------------------------------------------------------------------- a run
@dataclass
class TrainResult:
    """What a training run made.

    Attributes:
        model: the trained model (after the last update).
        out: the run's folder.
        final_model: the model after the last update (``final_model.zip``).
        best_model: the model with the lowest mean validation bsld (``best_model.zip``).
        metadata: what every saved model of the run carries.
        validations: each validation: ``timesteps``, ``mean_bsld`` (over the windows),
            ``window_bsld``, ``invalid_rate``; and ``easy_mean_bsld`` on the same windows.
        steps: training steps taken; ``invalid_steps``: how many were invalid actions
            (the environment replaced them by its fallback; masked agents have none).
        train_seconds: wall time of learning (validation and checkpoints included).
        validation_seconds: the part of it spent on validation; ``steps_per_second``
            of :meth:`summary` leaves it out.
        vec_env: the vector environment's class name.
    """

    model: Any
    out: Path
    final_model: Path
    best_model: Path | None
    metadata: dict[str, Any]
    validations: list[dict[str, Any]] = field(default_factory=list)
    easy_mean_bsld: float | None = None
    steps: int = 0
    invalid_steps: int = 0
    train_seconds: float = 0.0
    validation_seconds: float = 0.0
    vec_env: str = ""

    def summary(self) -> dict[str, Any]:
        """Everything but the model, JSON-ready (what ``training.json`` holds)."""
        best = min(self.validations, key=lambda v: v["mean_bsld"]) if self.validations else None
        return json_ready(
            {
                "algorithm": self.metadata["algorithm"],
                "out": str(self.out),
                "final_model": str(self.final_model),
                "best_model": None if self.best_model is None else str(self.best_model),
                "timesteps": self.steps,
                "invalid_steps": self.invalid_steps,
                "invalid_rate": self.invalid_steps / max(1, self.steps),
                "train_seconds": self.train_seconds,
                "validation_seconds": self.validation_seconds,
                "steps_per_second": self.steps / max(1e-9, self.train_seconds - self.validation_seconds),
                "vec_env": self.vec_env,
                "best_validation": best,
                "easy_validation_mean_bsld": self.easy_mean_bsld,
                "validations": self.validations,
                "metadata": self.metadata,
            }
        )

    def report(self) -> str:
        """A few lines for the terminal."""
        s = self.summary()
        lines = [
            f"{s['algorithm']}: {s['timesteps']:,} steps in {s['train_seconds']:.1f} s, "
            f"{s['validation_seconds']:.1f} s of it validating ({s['steps_per_second']:.0f} steps/s "
            f"of training, {s['vec_env']})",
            f"invalid actions: {s['invalid_steps']:,} of {s['timesteps']:,} steps ({s['invalid_rate']:.1%}; "
            "each replaced by the environment's fallback)",
        ]
        best = s["best_validation"]
        if best is not None:
            lines.append(
                f"best validation mean bsld {best['mean_bsld']:.2f} at {best['timesteps']:,} steps "
                f"(EASY on the same {len(best['window_bsld'])} windows: {s['easy_validation_mean_bsld']:.2f})"
            )
        lines.append(f"models: {s['final_model']}, {s['best_model']}")
        lines.append(f"evaluate on the test split: hpcgym evaluate --model {s['best_model']}")
        return "\n".join(lines)


class Run:
    """The shared part of a training run: seeds, environments, callbacks, saving.

    A script builds its model on :attr:`venv`, calls ``model.learn(...,
    callback=run.callbacks(model))`` and returns :meth:`finish`.

    Args:
        args: the training arguments.
        algorithm: the algorithm's name (``"maskable-ppo"``, ``"ppo"``).
    """

    def __init__(self, args: TrainArgs, algorithm: str) -> None:
        self.args = args
        self.algorithm = algorithm
        self.eval_window_jobs = args.eval_window_jobs or args.window_jobs
        self.out = Path(args.out if args.out is not None else f"runs/{algorithm}-seed{args.seed}")
        seed_everything(args.seed, args.torch_threads)
        # one environment here: checks the trace and window before workers start, and
        # gives the resolved configuration the saved models carry
        probe = make_env(args, "train")
        self.metadata = model_metadata(algorithm, args, probe)
        probe.close()
        try:
            self.validation_env = make_env(args, "validation", window_jobs=self.eval_window_jobs)
        except InvalidConfigError as err:
            raise InvalidConfigError(
                f"--eval-window-jobs: validation windows of {self.eval_window_jobs} jobs: {err}; give "
                "a smaller --eval-window-jobs"
            ) from err
        self.out.mkdir(parents=True, exist_ok=True)
        self.venv = make_vec_env(args)
        self._t0 = 0.0
        self._callbacks: list[Any] = []

    def callbacks(self) -> list[Any]:
        """Invalid-action counting, validation (best model), checkpoints and the progress bar."""
        from hpcgym.agents import callbacks as cb

        a = self.args

        def save(model: Any, path: Path) -> Path:
            return save_model(model, path, self.metadata)

        self.counter = cb.InvalidActionCounter()
        self.validation = cb.Validation(
            lambda: self.validation_env,
            a.eval_windows,
            a.eval_freq,
            lambda model: save(model, self.out / "best_model.zip"),
        )
        self._callbacks = [self.counter, self.validation]
        if a.checkpoint_freq:
            self._callbacks.append(
                cb.Checkpoints(
                    a.checkpoint_freq,
                    lambda model, steps: save(model, self.out / "checkpoints" / f"model_{steps}_steps.zip"),
                )
            )
        if a.progress_bar:
            self._callbacks.append(cb.ProgressBar(a.total_timesteps))
        self._t0 = time.perf_counter()
        return self._callbacks

    def finish(self, model: Any) -> TrainResult:
        """Save the final model and ``training.json``; close the environments."""
        seconds = time.perf_counter() - self._t0
        final = save_model(model, self.out / "final_model.zip", self.metadata)
        best = self.out / "best_model.zip"
        result = TrainResult(
            model=model,
            out=self.out,
            final_model=final,
            best_model=best if best.is_file() else None,
            metadata=self.metadata,
            validations=self.validation.history,
            easy_mean_bsld=self.validation.easy_mean_bsld,
            steps=self.counter.steps,
            invalid_steps=self.counter.invalid,
            train_seconds=seconds,
            validation_seconds=self.validation.seconds,
            vec_env=type(self.venv).__name__,
        )
        (self.out / "training.json").write_text(to_json(result.summary()) + "\n")
        self.venv.close()
        return result


def train_main(
    argv: Sequence[str] | None, args_type: type[TrainArgs], train: Callable[[Any], TrainResult], prog: str
) -> TrainResult:
    """Parse ``argv`` into ``args_type`` with tyro, train, print the report.

    tyro prints its own usage errors and exits with status 2; the caller turns an
    :class:`~hpcgym.common.errors.HpcGymError` into a one-line error.
    """
    from hpcgym.common.extras import require

    require("rl", what=prog)
    import tyro

    args = tyro.cli(args_type, args=None if argv is None else list(argv), prog=prog)
    result = train(args)
    print(result.report())
    return result
