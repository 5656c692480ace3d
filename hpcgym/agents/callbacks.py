"""stable-baselines3 callbacks of the training scripts (need the ``rl`` extra).

* :class:`InvalidActionCounter` counts the training steps whose action the environment
  flagged invalid (``info["invalid_action"]``; it replaced them by its fallback) and logs
  their share per rollout as ``train/invalid_action_rate``;
* :class:`Validation` plays the validation windows and keeps the best model;
* :class:`Checkpoints` saves the model every N timesteps;
* :class:`ProgressBar` is a tqdm bar of the timesteps;
* :func:`validation_listener` lets a caller see every validation of the trainings run
  inside a ``with`` block (``hpcgym sweep`` reports them to Ray Tune as training goes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from hpcgym.common.report import json_ready

_VALIDATION_LISTENERS: list[Callable[[dict[str, Any]], None]] = []


@contextmanager
def validation_listener(listener: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """Call ``listener(row)`` after every validation of a training run inside the block.

    ``row`` is what :meth:`Validation.validate` returns (``timesteps``, ``mean_bsld``,
    ``window_bsld``, ``offsets``, ``invalid_rate``), after the best model is saved.
    """
    _VALIDATION_LISTENERS.append(listener)
    try:
        yield
    finally:
        _VALIDATION_LISTENERS.remove(listener)


class InvalidActionCounter(BaseCallback):
    """Counts the steps and the invalid actions of every training environment."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0
        self.invalid = 0
        self._rollout_steps = 0
        self._rollout_invalid = 0

    def _on_step(self) -> bool:
        infos = self.locals["infos"]
        bad = sum(bool(info.get("invalid_action", False)) for info in infos)
        self.steps += len(infos)
        self.invalid += bad
        self._rollout_steps += len(infos)
        self._rollout_invalid += bad
        return True

    def _on_rollout_end(self) -> None:
        if self._rollout_steps:
            self.logger.record("train/invalid_action_rate", self._rollout_invalid / self._rollout_steps)
        self.logger.record("train/invalid_actions", self.invalid)
        self._rollout_steps = self._rollout_invalid = 0


class Validation(BaseCallback):
    """Every ``freq`` timesteps and at the end: the agent on the validation windows.

    The windows are :meth:`~hpcgym.env.DispatchEnv.window_offsets` of the validation
    split (evenly spaced, non-overlapping, inside the split), played with
    ``deterministic=True`` (masked when the model takes masks). The score is the mean
    over the windows of each window's mean bounded slowdown (every job of the window),
    as ``hpcgym evaluate`` computes it. A better score than every earlier one saves the
    model through ``save_best``. EASY's score on the same windows is computed once, for
    the logs (``eval/easy_mean_bsld``).

    Several traces (``make_env`` returns a mapping, trace name -> environment): each
    trace's validation split gives ``windows`` windows; the score is the mean over the
    traces of each trace's score (each trace counts once, whatever its window count; the
    scores are raw bsld, so the trace of the largest bsld moves the mean most), the best
    model is picked on it, and each row adds
    ``logs``: per trace its ``mean_bsld``, ``window_bsld``, ``offsets``,
    ``invalid_rate`` and ``easy_mean_bsld`` (TensorBoard: ``eval/NAME/mean_bsld``).

    Args:
        make_env: builds the flattened validation environment, or a mapping of them by
            trace name.
        windows: how many windows (per trace).
        freq: timesteps between validations (0: only at the end).
        save_best: saves the model (called with it).
        first: a validation made before training (the behaviour-cloned model's, at step 0,
            already saved): the first row of :attr:`history`, the score to beat.
        easy_by_log: EASY's mean bsld on each validation window, by trace name ("" for one
            trace), when the caller has already played it on the same windows (behaviour
            cloning's ``best`` scores it); otherwise it is played at the start of training.
    """

    def __init__(
        self,
        make_env: Callable[[], Any | Mapping[str, Any]],
        windows: int,
        freq: int,
        save_best: Callable[[Any], Any],
        first: dict[str, Any] | None = None,
        easy_by_log: Mapping[str, list[float]] | None = None,
    ) -> None:
        super().__init__()
        self._make_env = make_env
        self._easy_given = easy_by_log
        self._windows = windows
        self._freq = freq
        self._save_best = save_best
        self._next = freq
        self._last = -1
        self.history: list[dict[str, Any]] = [] if first is None else [json_ready(first)]
        self.best = float("inf") if first is None else float(first["mean_bsld"])
        self.easy_mean_bsld: float | None = None
        self.seconds = 0.0
        """Wall time spent validating (EASY's reference included)."""

    def _on_training_start(self) -> None:
        t0 = time.perf_counter()
        made = self._make_env()
        self.several = isinstance(made, Mapping)
        self.envs: dict[str, Any] = dict(made) if isinstance(made, Mapping) else {"": made}
        self.env = next(iter(self.envs.values()))
        self.log_offsets: dict[str, list[int]] = {}
        self.easy_by_log: dict[str, list[float]] = {}
        for name, env in self.envs.items():
            base = env.unwrapped
            offsets = self.log_offsets[name] = list(base.window_offsets(self._windows))
            given = self._easy_given
            self.easy_by_log[name] = (
                list(given[name]) if given is not None else heuristic_window_bsld(env, offsets, "easy")
            )
        self.offsets = [o for offsets in self.log_offsets.values() for o in offsets]
        self.easy_window_bsld = [b for bsld in self.easy_by_log.values() for b in bsld]
        self.easy_mean_bsld = float(np.mean([np.mean(b) for b in self.easy_by_log.values()]))
        for row in self.history:  # a validation made before training (behaviour cloning)
            for name, log in row.get("logs", {}).items():
                log.setdefault("easy_mean_bsld", float(np.mean(self.easy_by_log[name])))
        self.seconds += time.perf_counter() - t0

    def _on_step(self) -> bool:
        if self._freq and self.num_timesteps >= self._next:
            self._next += self._freq
            self.validate()
        return True

    def _on_training_end(self) -> None:
        if self._last != self.num_timesteps:
            self.validate()

    def validate(self) -> dict[str, Any]:
        """Play the windows now; log, remember and (if best) save."""
        t0 = time.perf_counter()
        row = play_logs(self.envs, self.model, self.log_offsets, int(self.num_timesteps), self.easy_by_log)
        logs = row.get("logs", {})
        self.history.append(json_ready(row))
        self._last = self.num_timesteps
        scalars = {
            "eval/mean_bsld": row["mean_bsld"],
            "eval/easy_mean_bsld": self.easy_mean_bsld,
            "eval/invalid_action_rate": row["invalid_rate"],
        }
        if self.several:
            scalars.update({f"eval/{name}/mean_bsld": log["mean_bsld"] for name, log in logs.items()})
        self._log_now(scalars)
        if row["mean_bsld"] < self.best:
            self.best = row["mean_bsld"]
            self._save_best(self.model)
        self.seconds += time.perf_counter() - t0
        for listener in list(_VALIDATION_LISTENERS):
            listener(self.history[-1])
        return row

    def _log_now(self, scalars: dict[str, Any]) -> None:
        """Log a validation at its own step.

        stable-baselines3's logger writes what is recorded at the next rollout's end, under
        that step: a validation at 10,000 steps showed in TensorBoard at 10,240, and the last
        one, at the end of training, never. TensorBoard gets the values at once, at the
        validation's step (as ``training.json`` has them); the other outputs (stdout, CSV)
        keep the rollout rows.
        """
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        boards = [f for f in self.logger.output_formats if isinstance(f, TensorBoardOutputFormat)]
        for key, value in scalars.items():
            self.logger.record(key, value, exclude=("tensorboard",))
        for board in boards:
            for key, value in scalars.items():
                board.writer.add_scalar(key, value, self.num_timesteps)
            board.writer.flush()


def play_windows(env: Any, model: Any, offsets: list[int], timesteps: int) -> dict[str, Any]:
    """``model`` on the windows at ``offsets`` of ``env`` (deterministic, masked if it takes masks).

    Returns the validation row: ``timesteps``, ``mean_bsld`` (the mean over the windows of each
    window's mean bsld), ``window_bsld``, ``offsets``, ``invalid_rate``.
    """
    return play_logs({"": env}, model, {"": offsets}, timesteps)


def play_logs(
    envs: Mapping[str, Any],
    model: Any,
    offsets: Mapping[str, list[int]],
    timesteps: int,
    easy: Mapping[str, list[float]] | None = None,
) -> dict[str, Any]:
    """:func:`play_windows` on each trace's windows (``envs`` and ``offsets`` by trace name).

    One trace (named ``""``): its row. Several: the score is the mean of the traces'
    scores, ``window_bsld`` and ``offsets`` are every trace's in turn, the invalid rate is
    over all their steps, and ``logs`` holds each trace's row (with EASY's score on its
    windows when ``easy`` is given).
    """
    from hpcgym.env import run_episode

    logs: dict[str, dict[str, Any]] = {}
    steps = invalid = 0
    for name, env in envs.items():
        finals = [run_episode(env, model, options={"offset": o}) for o in offsets[name]]
        log_steps = sum(f["steps"] for f in finals)
        log_invalid = sum(f["invalid_steps"] for f in finals)
        bsld = [float(f["metrics"]["mean_bsld"]) for f in finals]
        logs[name] = {
            "mean_bsld": float(np.mean(bsld)),
            "window_bsld": bsld,
            "offsets": list(offsets[name]),
            "invalid_rate": log_invalid / max(1, log_steps),
        }
        if easy is not None:
            logs[name]["easy_mean_bsld"] = float(np.mean(easy[name]))
        steps += log_steps
        invalid += log_invalid
    if list(logs) == [""]:
        return {"timesteps": timesteps, **{k: v for k, v in logs[""].items() if k != "easy_mean_bsld"}}
    return {
        "timesteps": timesteps,
        "mean_bsld": float(np.mean([log["mean_bsld"] for log in logs.values()])),
        "window_bsld": [b for log in logs.values() for b in log["window_bsld"]],
        "offsets": [o for log in logs.values() for o in log["offsets"]],
        "invalid_rate": invalid / max(1, steps),
        "logs": logs,
    }


def heuristic_window_bsld(env: Any, offsets: list[int], policy: str) -> list[float]:
    """The dispatcher preset ``policy``'s mean bsld on each window at ``offsets`` of ``env``.

    It acts through the same episodes as the agent (the environment's configuration, its
    predictor included), shown every waiting job and without the environment's
    backfilling, in job mode: exactly its own schedule of each window.
    """
    from hpcgym.baselines import make_policy
    from hpcgym.env import DispatchEnv, DispatcherPolicy, run_episode

    base = env.unwrapped
    job_env = DispatchEnv(config=base.config.replace(window_size=None, backfill="none", mode="job"))
    expert = DispatcherPolicy(make_policy(policy), job_env)
    return [
        float(run_episode(job_env, expert, options={"offset": o})["metrics"]["mean_bsld"]) for o in offsets
    ]


class Checkpoints(BaseCallback):
    """Save the model every ``freq`` timesteps through ``save(model, timesteps)``."""

    def __init__(self, freq: int, save: Callable[[Any, int], Any]) -> None:
        super().__init__()
        self._freq = freq
        self._save = save
        self._next = freq

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self._freq
            self._save(self.model, int(self.num_timesteps))
        return True


class ProgressBar(BaseCallback):
    """A tqdm progress bar of the timesteps on stderr, drawn only when stderr is a terminal
    (a log file would fill with carriage-return redraws)."""

    def __init__(self, total: int) -> None:
        super().__init__()
        self._total = total

    def _on_training_start(self) -> None:
        self.bar = tqdm(total=self._total, unit="step", desc="training", dynamic_ncols=True, disable=None)

    def _on_step(self) -> bool:
        self.bar.update(self.num_timesteps - self.bar.n)
        return True

    def _on_training_end(self) -> None:
        self.bar.update(self.num_timesteps - self.bar.n)
        self.bar.close()
