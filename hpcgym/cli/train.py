"""``hpcgym train {maskable-ppo,ppo} [flags]``: route to a training script of :mod:`hpcgym.agents`.

The script parses its own flags (tyro, from its ``Args`` dataclass); this command only picks
the script: ``hpcgym train ALGORITHM FLAGS...`` is ``python -m hpcgym.agents.train_ALGORITHM
FLAGS...``.
"""

from __future__ import annotations

import argparse

from hpcgym.agents.train import ALGORITHMS, algorithm_module

HELP = "train an agent (MaskablePPO or PPO) on the train split, keep the best on the validation split"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", choices=tuple(ALGORITHMS), help="the training script")
    p.add_argument(
        "flags",
        nargs=argparse.REMAINDER,
        help="the script's flags (`hpcgym train ALGORITHM --help` lists them): --total-timesteps, "
        "--n-envs, --out, --tensorboard-log, --eval-freq, --checkpoint-freq, --window-size, --backfill, ...",
    )


def run(args: argparse.Namespace) -> int:
    algorithm_module(args.algorithm).main(list(args.flags))
    return 0
