"""Train MaskablePPO (sb3-contrib) on an hpcgym environment: ``hpcgym train maskable-ppo``.

One file, cleanrl style: the configuration is the :class:`Args` dataclass, turned into
command-line flags by tyro (``--total-timesteps 2048`` sets ``total_timesteps``;
``hpcgym train maskable-ppo --help`` lists them all with their defaults). The agent only
ever picks valid actions: the environment's ``action_masks()`` reach the policy, which
gives masked actions probability 0, so the invalid-action count of the report is 0.

What a run does (the shared parts are in :mod:`hpcgym.agents.common` and
:mod:`hpcgym.agents.run`):

1. seeds every random generator from ``--seed``;
2. builds ``--n-envs`` environments on windows of the ``train`` split
   (``DummyVecEnv`` for one, ``SubprocVecEnv`` for more);
   with ``--bc-policy NAME``, clones the dispatcher preset NAME's decisions into the
   policy first (:mod:`hpcgym.agents.bc`; ``best``: the best of ``--bc-candidates`` on the
   validation windows) and scores the clone (step 0);
3. learns for ``--total-timesteps`` steps, logging to ``--tensorboard-log`` if given,
   scoring the agent on ``--eval-windows`` windows of the ``validation`` split every
   ``--eval-freq`` steps and at the end (the best scoring model is
   ``OUT/best_model.zip``), saving checkpoints every ``--checkpoint-freq`` steps;
4. saves ``OUT/final_model.zip`` and ``OUT/training.json``. Every saved model carries
   its environment configuration, so ``hpcgym evaluate --model OUT/best_model.zip``
   rebuilds the environment and scores the agent beside every baseline on the test split.

Usage::

    hpcgym train maskable-ppo --total-timesteps 2048 --out runs/quick
    hpcgym train maskable-ppo --backfill easy --n-envs 2 --tensorboard-log tb --out runs/bf
    python -m hpcgym.agents.train_maskable_ppo --machine eurora --trace jobs.csv --window-jobs 50
    hpcgym train maskable-ppo --traces A.swf.gz B.swf.gz C.swf.gz --n-envs 12   # one agent, three logs

Python::

    from hpcgym.agents import train_maskable_ppo
    run = train_maskable_ppo.train(train_maskable_ppo.Args(total_timesteps=2048, out="runs/quick"))
    run.best_model  # a path for hpcgym.experiments.evaluate.evaluate([...])

Needs the ``rl`` extra (stable-baselines3, sb3-contrib, torch, tyro; tensorboard for
``--tensorboard-log``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from hpcgym.agents.common import TrainArgs, ppo_kwargs, require_training
from hpcgym.agents.run import Run, TrainResult, train_main
from hpcgym.common.errors import HpcGymError

ALGORITHM = "maskable-ppo"


@dataclass(frozen=True)
class Args(TrainArgs):
    """Train MaskablePPO (invalid actions masked) on windows of the train split."""


def train(args: Args) -> TrainResult:
    """Train MaskablePPO as ``args`` says; the model, the files written and the validation scores."""
    require_training(args, what="training MaskablePPO")
    from sb3_contrib import MaskablePPO

    run = Run(args, ALGORITHM)
    model = MaskablePPO("MlpPolicy", run.venv, **ppo_kwargs(args))
    run.behaviour_clone(model, masked=True)  # --bc-policy: start from a dispatcher's decisions
    model.learn(args.total_timesteps, callback=run.callbacks(), tb_log_name=ALGORITHM)
    return run.finish(model)


def main(argv: Sequence[str] | None = None) -> TrainResult:
    """Parse the flags, train, print the report."""
    return train_main(argv, Args, train, "hpcgym train maskable-ppo")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except HpcGymError as err:
        print(f"train_maskable_ppo: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
