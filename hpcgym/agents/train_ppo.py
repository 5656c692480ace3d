"""Train plain PPO (stable-baselines3) on an hpcgym environment: ``hpcgym train ppo``.

One file, cleanrl style: the configuration is the :class:`Args` dataclass, turned into
command-line flags by tyro (``hpcgym train ppo --help`` lists them with their defaults).

Plain PPO does not see the action mask, so it can pick an invalid action (an empty slot,
a job that does not fit without backfilling, advancing when nothing is left to happen).
The environment never raises on one: it applies its documented fallback (advance, or
start the oldest waiting job on an idle machine) and flags the step with
``info["invalid_action"]``. These steps are counted, not hidden: the report and
``training.json`` give how many training steps were invalid, TensorBoard logs their share
per rollout (``train/invalid_action_rate``) and on the validation windows
(``eval/invalid_action_rate``), and ``hpcgym evaluate`` reports the rate of the saved
model. ``--invalid-penalty P`` subtracts P from the reward of each invalid action.

The run itself (seeds, environments, validation on the ``validation`` split with the
best model kept, checkpoints, TensorBoard, progress bar, the saved models' metadata) is
the one :mod:`hpcgym.agents.train_maskable_ppo` describes, shared through
:mod:`hpcgym.agents.common` and :mod:`hpcgym.agents.run`.

Usage::

    hpcgym train ppo --total-timesteps 2048 --out runs/ppo
    hpcgym train ppo --invalid-penalty 0.1 --n-envs 2 --out runs/ppo-penalty

Needs the ``rl`` extra (stable-baselines3, torch, tyro; tensorboard for
``--tensorboard-log``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from hpcgym.agents.common import TrainArgs, ppo_kwargs, require_training
from hpcgym.agents.run import Run, TrainResult, train_main
from hpcgym.common.errors import HpcGymError

ALGORITHM = "ppo"


@dataclass(frozen=True)
class Args(TrainArgs):
    """Train PPO (no action masks; invalid actions counted) on windows of the train split."""


def train(args: Args) -> TrainResult:
    """Train PPO as ``args`` says; the model, the files written, the validation scores and invalid actions."""
    require_training(args, what="training PPO")
    from stable_baselines3 import PPO

    run = Run(args, ALGORITHM)
    model = PPO("MlpPolicy", run.venv, **ppo_kwargs(args))
    run.behaviour_clone(model, masked=False)  # --bc-policy: start from a dispatcher's decisions
    model.learn(args.total_timesteps, callback=run.callbacks(), tb_log_name=ALGORITHM)
    return run.finish(model)


def main(argv: Sequence[str] | None = None) -> TrainResult:
    """Parse the flags, train, print the report."""
    return train_main(argv, Args, train, "hpcgym train ppo")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except HpcGymError as err:
        print(f"train_ppo: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
