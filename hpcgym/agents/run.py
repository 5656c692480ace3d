"""A training run: seeds, environments, callbacks and saving tied together, and what it made.

A script builds its model on :attr:`Run.venv`, learns with :meth:`Run.callbacks` (of
:mod:`hpcgym.agents.callbacks`) and returns :meth:`Run.finish`, a :class:`TrainResult`
(the models written, the validation scores, the invalid actions). :func:`train_main` is
a script's ``main``: its flags, the training, the report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.agents.common import TrainArgs, make_env, make_vec_env, seed_everything, trace_logs
from hpcgym.agents.curves import write_learning_curve
from hpcgym.agents.models import model_metadata, save_model
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import write_text_atomic
from hpcgym.common.report import json_ready, to_json


@dataclass
class TrainResult:
    """What a training run made.

    Attributes:
        model: the trained model (after the last update).
        out: the run's folder.
        final_model: the model after the last update (``final_model.zip``).
        best_model: the model with the lowest mean validation bsld (``best_model.zip``).
        metadata: what every saved model of the run carries.
        validations: each validation: ``timesteps``, ``mean_bsld`` (over the windows;
            with several traces, the mean of each trace's mean), ``window_bsld``,
            ``invalid_rate``, and with several traces ``logs``, each trace's scores
            (:class:`~hpcgym.agents.callbacks.Validation`); and ``easy_mean_bsld`` on the
            same windows.
        steps: training steps taken; ``invalid_steps``: how many were invalid actions
            (the environment replaced them by its fallback; masked agents have none).
        train_seconds: wall time of learning (validation and checkpoints included).
        validation_seconds: the part of it spent on validation; ``steps_per_second``
            of :meth:`summary` leaves it out.
        vec_env: the vector environment's class name.
        behaviour_cloning: what ``--bc-policy`` did (:meth:`Run.behaviour_clone`), or None.
        learning_curve: ``learning_curve.png`` (None without matplotlib).
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
    behaviour_cloning: dict[str, Any] | None = None
    learning_curve: Path | None = None

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
                "behaviour_cloning": self.behaviour_cloning,
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
            for name, log in best.get("logs", {}).items():
                lines.append(
                    f"  {name}: {log['mean_bsld']:.2f} (EASY {log['easy_mean_bsld']:.2f}, "
                    f"{len(log['window_bsld'])} windows)"
                )
        bc = s["behaviour_cloning"]
        if bc is not None:
            held = bc["held_out_accuracy"]
            lines.append(
                f"behaviour cloning of {bc['policy']}: {bc['steps']:,} steps, held-out accuracy "
                f"{'-' if held is None else format(held, '.1%')}, validation mean bsld "
                f"{bc['clone_validation_mean_bsld']:.2f} "
                f"({bc['policy']} itself: {bc['validation_scores'][bc['policy']]:.2f})"
            )
        lines.append(f"models: {s['final_model']}, {s['best_model']}")
        traces = s["metadata"]["env"].get("traces")
        if traces:
            lines.append("evaluate on each trace's test split (or on a trace it never saw):")
            lines += [f"  hpcgym evaluate --model {s['best_model']} --trace {t['trace']}" for t in traces]
        else:
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
        # one environment per trace here: checks the traces and windows before workers start,
        # and gives the resolved configuration the saved models carry
        logs = trace_logs(args)
        probes = [make_env(args, "train", log) for log in range(len(logs))]
        _check_same_spaces(probes, logs)
        self.metadata = model_metadata(algorithm, args, probes if len(logs) > 1 else probes[0])
        self.log_names = [p.unwrapped.trace.name for p in probes]
        for p in probes:
            p.close()
        dup = sorted({n for n in self.log_names if self.log_names.count(n) > 1})
        if dup:
            raise InvalidConfigError(
                f"--traces: two traces are named {', '.join(dup)}; give traces of different names"
            )
        try:
            envs = [
                make_env(args, "validation", log, window_jobs=self.eval_window_jobs)
                for log in range(len(logs))
            ]
        except InvalidConfigError as err:
            raise InvalidConfigError(
                f"--eval-window-jobs: validation windows of {self.eval_window_jobs} jobs: {err}; give "
                "a smaller --eval-window-jobs"
            ) from err
        self.validation_env: Any = envs[0] if len(logs) == 1 else dict(zip(self.log_names, envs, strict=True))
        """The validation environment, or a mapping trace name -> environment with several traces."""
        self.out.mkdir(parents=True, exist_ok=True)
        self.venv = make_vec_env(args)
        self._t0 = 0.0
        self._callbacks: list[Any] = []
        self.behaviour_cloning: dict[str, Any] | None = None
        self._first_validation: dict[str, Any] | None = None
        self._easy_by_log: dict[str, list[float]] | None = None  # EASY per validation window, if scored

    def behaviour_clone(self, model: Any, masked: bool) -> None:
        """Clone ``--bc-policy``'s decisions into ``model`` (nothing without it), score the
        clone on the validation windows (step 0) and save it as the best model so far.

        ``--bc-policy best`` first scores ``--bc-candidates`` (policy mode: the environment's
        policies; learned backfilling: its order, the only expert there) on the validation
        windows and clones the lowest; every score is kept in
        ``training.json`` (``behaviour_cloning.validation_scores``).
        """
        from hpcgym.agents import bc
        from hpcgym.agents.callbacks import heuristic_window_bsld, play_logs

        a = self.args
        if a.bc_policy is None:
            return
        t0 = time.perf_counter()
        if a.progress_bar:  # the demonstrations and the fit take minutes on a real log
            print(
                f"behaviour cloning (--bc-policy {a.bc_policy}): {a.bc_steps:,} demonstration steps, "
                f"then {a.bc_epochs} epochs",
                file=sys.stderr,
            )
        envs = self.validation_env if isinstance(self.validation_env, dict) else {"": self.validation_env}
        offsets = {n: list(e.unwrapped.window_offsets(a.eval_windows)) for n, e in envs.items()}

        def score(preset: str) -> float:  # the mean over the traces, as validation scores
            by_log = {n: heuristic_window_bsld(e, offsets[n], preset) for n, e in envs.items()}
            if preset == "easy":  # Validation's reference, on the same windows: not played again
                self._easy_by_log = by_log
            return float(np.mean([np.mean(bsld) for bsld in by_log.values()]))

        name = a.bc_policy
        scores: dict[str, float] = {}
        if name == "best":
            action = next(iter(envs.values())).unwrapped.config.action
            own = {"policy": action.policies, "backfill": (action.order,)}.get(action.mode)
            names = bc.candidates(own, a.bc_candidates)
            scores = {n: score(n) for n in names}
            name = bc.pick_reference(scores)
        summary = bc.clone(
            model,
            [lambda log=log: make_env(a, "train", log) for log in range(len(envs))],
            name,
            steps=a.bc_steps,
            epochs=a.bc_epochs,
            batch_size=a.bc_batch_size,
            learning_rate=a.bc_learning_rate,
            seed=a.seed,
            gamma=a.gamma,
            masked=masked,
        )
        if not scores:
            scores = {name: score(name)}
        row = play_logs(envs, model, offsets, 0)
        save_model(model, self.out / "best_model.zip", self.metadata)
        self._first_validation = row
        self.behaviour_cloning = {
            **summary,
            "validation_scores": scores,
            "clone_validation_mean_bsld": row["mean_bsld"],
            "seconds": time.perf_counter() - t0,
        }

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
            first=self._first_validation,
            easy_by_log=self._easy_by_log,
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
            vec_env=vec_env_name(self.venv),
            behaviour_cloning=self.behaviour_cloning,
        )
        write_text_atomic(self.out / "training.json", to_json(result.summary()) + "\n")
        result.learning_curve = write_learning_curve(result, self.out / "learning_curve.png")
        self.venv.close()
        return result


def vec_env_name(venv: Any) -> str:
    """The vector environment's class name; a stack of them says of which and how many."""
    parts = getattr(venv, "parts", None)
    if parts:
        inner = sorted({type(p).__name__ for p in parts})
        return f"{type(venv).__name__} of {len(parts)} {'/'.join(inner)}"
    return type(venv).__name__


def _check_same_spaces(envs: list[Any], logs: tuple[str | None, ...]) -> None:
    """Every trace's environment shows the same observation and action spaces (one network plays all).

    Raises:
        InvalidConfigError: naming the traces whose spaces differ (e.g. a machine of several
            resource types, whose default observation adds parts).
    """
    first = envs[0]
    for env, log in zip(envs[1:], logs[1:], strict=True):
        if env.observation_space != first.observation_space or env.action_space != first.action_space:
            raise InvalidConfigError(
                f"--traces: {log} gives observations {env.observation_space} and actions {env.action_space}, "
                f"{logs[0]} gives {first.observation_space} and {first.action_space}; one agent needs the "
                "same on every trace (name the parts with --observations)"
            )


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

    given = sys.argv[1:] if argv is None else list(argv)
    repeated = sum(a == "--trace" or a.startswith("--trace=") for a in given)
    if repeated > 1:  # argparse would keep the last one silently
        raise InvalidConfigError(
            f"--trace: given {repeated} times; to train on several traces give them all after one "
            "--traces (--traces A.swf.gz B.swf.gz ...)"
        )
    args = tyro.cli(args_type, args=None if argv is None else list(argv), prog=prog)
    result = train(args)
    print(result.report())
    return result
