"""``hpcgym train {maskable-ppo,ppo} [flags]``: see HELP.

Each algorithm is one cleanrl-style file of :mod:`hpcgym.agents` whose ``Args``
dataclass is its flags (tyro turns it into the command line;
``hpcgym train ppo --help`` lists every flag with its default). This command only routes
to the script (:data:`hpcgym.agents.train.ALGORITHMS`): ``hpcgym train ALGORITHM FLAGS...``
is ``python -m hpcgym.agents.train_ALGORITHM FLAGS...``.
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
    from hpcgym.baselines._compile import announce_compilation

    announce_compilation()  # the first run on a fresh install compiles kernels: say so
    algorithm_module(args.algorithm).main(list(args.flags))
    return 0


__all__ = ["HELP", "configure", "run"]
