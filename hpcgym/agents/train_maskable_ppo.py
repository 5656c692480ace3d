"""Train MaskablePPO on an hpcgym environment, then compare it with FCFS and EASY.

One file, cleanrl style: the configuration is the :class:`Args` dataclass, turned into
command-line flags (``--total-timesteps 2048`` sets ``total_timesteps``); every random
generator (Python, numpy, torch, the environments, the action spaces) is seeded from
``--seed``. Training uses windows of the ``train`` split; the comparison replays
``--eval-windows`` evenly spaced windows of the ``test`` split, which the agent never
saw, with the agent (deterministic, masked), FCFS and EASY (each acting through the
same environment with :class:`~hpcgym.env.DispatcherPolicy`), and prints one table.

Usage::

    python -m hpcgym.agents.train_maskable_ppo --total-timesteps 2048
    python -m hpcgym.agents.train_maskable_ppo --backfill easy --total-timesteps 200000 --save-path ppo.zip

Needs the ``rl`` extra (stable-baselines3, sb3-contrib, torch).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

import hpcgym  # noqa: F401 - registers the environment ids
from hpcgym._extras import require
from hpcgym.baselines import make_policy
from hpcgym.cli import to_json
from hpcgym.env import DispatchEnv, DispatcherPolicy, FlattenDispatchObservation, run_episode
from hpcgym.errors import HpcGymError
from hpcgym.runner import format_table


@dataclass(frozen=True)
class Args:
    """Configuration of one training run (each field is a ``--flag``)."""

    seed: int = field(default=1, metadata={"help": "seed of every random generator"})
    total_timesteps: int = field(default=100_000, metadata={"help": "environment steps to train for"})
    env_id: str = field(default="hpcgym/Dispatch-v0", metadata={"help": "registered environment id"})
    trace: str | None = field(
        default=None, metadata={"help": "SWF trace (default: the bundled SDSC-SP2 slice)"}
    )
    window_jobs: int = field(default=256, metadata={"help": "jobs per episode"})
    window_size: int = field(
        default=64, metadata={"help": "K, waiting jobs the agent sees and chooses among"}
    )
    backfill: str = field(
        default="none", metadata={"help": "'easy': a chosen job that does not fit is reserved"}
    )
    reward: str = field(default="bsld", metadata={"help": "reward name (bsld, bsld-sparse, wait)"})
    num_envs: int = field(default=4, metadata={"help": "parallel environments (DummyVecEnv)"})
    n_steps: int = field(default=512, metadata={"help": "steps per environment per rollout"})
    batch_size: int = field(default=256, metadata={"help": "minibatch size"})
    n_epochs: int = field(default=4, metadata={"help": "epochs per rollout"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    gamma: float = field(default=0.999, metadata={"help": "discount factor"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    net_arch: tuple[int, ...] = field(default=(128, 128), metadata={"help": "hidden layer sizes"})
    eval_windows: int = field(default=8, metadata={"help": "test windows of the final comparison"})
    eval_split: str = field(default="test", metadata={"help": "split of the comparison windows"})
    torch_threads: int = field(default=1, metadata={"help": "torch CPU threads"})
    save_path: str | None = field(default=None, metadata={"help": "save the trained model here (.zip)"})
    json: bool = field(default=False, metadata={"help": "print the results as JSON instead of a table"})
    verbose: int = field(default=0, metadata={"help": "stable-baselines3 verbosity"})


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """:class:`Args` from command-line flags (``--total-timesteps 2048``; booleans are switches)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        helptext = f.metadata.get("help", "")
        if "default" not in helptext:
            helptext += f" (default: {f.default})"
        if f.type in ("bool",):
            p.add_argument(flag, action="store_true", help=helptext)
        elif f.name == "net_arch":
            p.add_argument(flag, type=int, nargs="+", default=f.default, help=helptext)
        else:
            kind: Callable[[str], Any] = {"int": int, "float": float}.get(str(f.type), str)
            p.add_argument(flag, type=kind, default=f.default, help=helptext)
    ns = vars(p.parse_args(argv))
    ns["net_arch"] = tuple(ns["net_arch"])
    return Args(**ns)


def env_kwargs(args: Args) -> dict[str, Any]:
    """The environment arguments a run trains and evaluates with."""
    return {
        "trace": args.trace,
        "window_jobs": args.window_jobs,
        "window_size": args.window_size,
        "backfill": args.backfill,
        "reward": args.reward,
    }


def make_env(args: Args, split: str) -> Callable[[], gym.Env[Any, Any]]:
    """A thunk building one flattened environment of ``split`` (for vector envs)."""

    def thunk() -> gym.Env[Any, Any]:
        return FlattenDispatchObservation(gym.make(args.env_id, split=split, **env_kwargs(args)))

    return thunk


def seed_everything(seed: int, torch_threads: int) -> None:
    """Seed Python, numpy and torch; limit torch's CPU threads."""
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - libraries that still read the global generator
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, torch_threads))


def train(args: Args) -> Any:
    """Train MaskablePPO and return the model."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    seed_everything(args.seed, args.torch_threads)
    venv = DummyVecEnv([make_env(args, "train") for _ in range(args.num_envs)])
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        ent_coef=args.ent_coef,
        policy_kwargs={"net_arch": list(args.net_arch)},
        seed=args.seed,
        verbose=args.verbose,
        device="cpu",
    )
    model.learn(total_timesteps=args.total_timesteps)
    return model


def evaluate(model: Any, args: Args) -> list[dict[str, Any]]:
    """The agent, FCFS and EASY on the same evaluation windows: one row per policy and window."""
    agent_env = make_env(args, args.eval_split)()
    offsets = agent_env.unwrapped.window_offsets(args.eval_windows)  # type: ignore[attr-defined]
    # the baselines act through the same environment, shown every waiting job
    base_env = DispatchEnv(
        split=args.eval_split, **{**env_kwargs(args), "window_size": None, "backfill": "none"}
    )
    rows = []
    for offset in offsets:
        options = {"offset": offset}
        players: list[tuple[str, gym.Env[Any, Any], Any]] = [("maskable-ppo", agent_env, model)]
        players += [(p, base_env, DispatcherPolicy(make_policy(p), base_env)) for p in ("fcfs", "easy")]
        for name, env, policy in players:
            metrics = run_episode(env, policy, options=options)["metrics"]
            rows.append({"policy": name, "offset": offset, **_summary(metrics)})
    return rows


def _summary(m: dict[str, Any]) -> dict[str, float]:
    return {
        "mean_bsld": float(m["mean_bsld"]),
        "mean_wait_min": float(m["mean_wait_s"]) / 60.0,
        "utilization": float(m["utilization"]),
    }


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Means over the evaluation windows, one row per policy."""
    out = []
    for name in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == name]
        out.append(
            {
                "policy": name,
                "windows": len(mine),
                **{
                    k: float(np.mean([r[k] for r in mine]))
                    for k in ("mean_bsld", "mean_wait_min", "utilization")
                },
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, evaluate, print; returns ``{"args", "train_seconds", "windows", "summary"}``."""
    args = parse_args(argv)
    require("rl", what="training MaskablePPO")  # before any work, not at the first import of sb3
    t0 = time.perf_counter()
    model = train(args)
    train_seconds = time.perf_counter() - t0
    if args.save_path:
        model.save(args.save_path)
    rows = evaluate(model, args)
    summary = summarize(rows)
    result = {
        "args": dataclasses.asdict(args),
        "train_seconds": train_seconds,
        "windows": rows,
        "summary": summary,
    }
    if args.json:
        print(to_json(result))
    else:
        print(
            f"MaskablePPO, {args.total_timesteps} steps in {train_seconds:.1f} s; means over "
            f"{summary[0]['windows']} {args.eval_split} windows of {args.window_jobs} jobs:\n"
        )
        columns = [
            ("policy", "policy", ""),
            ("windows", "windows", "d"),
            ("mean_bsld", "bsld", ".2f"),
            ("mean_wait_min", "wait [min]", ".1f"),
            ("utilization", "util", ".3f"),
        ]
        print(format_table(summary, columns))
    sys.stdout.flush()
    return result


if __name__ == "__main__":
    try:
        main()
    except HpcGymError as err:
        print(f"train_maskable_ppo: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
