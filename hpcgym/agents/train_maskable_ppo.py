"""Train MaskablePPO on an hpcgym environment, then compare it with FCFS and EASY.

One file, cleanrl style: the configuration is the :class:`Args` dataclass, turned into
command-line flags (``--total-timesteps 2048`` sets ``total_timesteps``); every random
generator (Python, numpy, torch, the environments, the action spaces) is seeded from
``--seed``. Training uses windows of the ``train`` split; the comparison replays
``--eval-windows`` evenly spaced, non-overlapping windows of the ``test`` split
(:func:`hpcgym.episodes.evaluation_windows`), which the agent never saw, with the agent
(deterministic, masked), FCFS and EASY (each acting through the same environment with
:class:`~hpcgym.env.DispatcherPolicy`), and prints one table.

Usage::

    python -m hpcgym.agents.train_maskable_ppo --total-timesteps 2048
    python -m hpcgym.agents.train_maskable_ppo --backfill easy --total-timesteps 200000 --save-path ppo.zip
    python -m hpcgym.agents.train_maskable_ppo --machine eurora --trace jobs.csv --window-jobs 64

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
from hpcgym.env import DispatchEnv, DispatcherPolicy, FlattenDispatchObservation, run_episode
from hpcgym.episodes import evaluation_windows
from hpcgym.errors import HpcGymError
from hpcgym.report import format_table, to_json


@dataclass(frozen=True)
class Args:
    """Configuration of one training run (each field is a ``--flag``)."""

    seed: int = field(default=1, metadata={"help": "seed of every random generator"})
    total_timesteps: int = field(default=100_000, metadata={"help": "environment steps to train for"})
    env_id: str = field(default="hpcgym/Dispatch-v1", metadata={"help": "registered environment id"})
    trace: str | None = field(
        default=None,
        metadata={
            "help": "SWF trace or job table (.csv, .csv.gz, .parquet; default: the bundled SDSC-SP2 slice)"
        },
    )
    machine: str | None = field(
        default=None,
        metadata={"help": "machine preset or TOML file, e.g. eurora (default: the trace's own machine)"},
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
        "machine": args.machine,
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
    unwrapped = agent_env.unwrapped
    assert isinstance(unwrapped, DispatchEnv)
    # the windows of the split the env samples from, never overlapping each other
    offsets = evaluation_windows(unwrapped.job_range, unwrapped.window_jobs, args.eval_windows)
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


def _summary(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "mean_bsld": float(m["mean_bsld"]),
        "mean_wait_min": float(m["mean_wait_s"]) / 60.0,
        "utilization": float(m["utilization"]),
        "jobs_measured": int(m["jobs_measured"]),
        "measured_set": m["measured_set"],
    }


def summarize(rows: list[dict[str, Any]], reference: str = "easy") -> list[dict[str, Any]]:
    """Means over the evaluation windows, one row per policy.

    Each row also has ``jobs_measured`` (summed over the windows) and, against
    ``reference`` on the same windows, ``bsld_diff`` (mean paired difference of the
    window means) with its 95 % bootstrap interval ``bsld_diff_low``/``bsld_diff_high``
    (:func:`hpcgym.metrics.paired_difference_ci`; NaN without scipy).
    """
    from hpcgym.metrics import paired_difference_ci

    by_offset = {r["offset"]: r["mean_bsld"] for r in rows if r["policy"] == reference}
    out = []
    for name in dict.fromkeys(r["policy"] for r in rows):
        mine = [r for r in rows if r["policy"] == name]
        row: dict[str, Any] = {
            "policy": name,
            "windows": len(mine),
            "jobs_measured": sum(r["jobs_measured"] for r in mine),
            "measured_set": "/".join(dict.fromkeys(r["measured_set"] for r in mine)),
            **{
                k: float(np.mean([r[k] for r in mine])) for k in ("mean_bsld", "mean_wait_min", "utilization")
            },
        }
        paired = [(r["mean_bsld"], by_offset[r["offset"]]) for r in mine if r["offset"] in by_offset]
        nan = float("nan")
        diff = low = high = nan
        if paired and name != reference:
            try:
                diff, low, high = paired_difference_ci(*zip(*paired, strict=True), seed=0)
            except ImportError:  # scipy is optional: the difference without its interval
                diff = float(np.mean([a - b for a, b in paired]))
        row.update(bsld_diff=diff, bsld_diff_low=low, bsld_diff_high=high)
        if not np.isfinite(diff):
            row["bsld_vs_reference"] = "-"
        elif np.isfinite(low):
            row["bsld_vs_reference"] = f"{diff:+.2f} [{low:+.2f}, {high:+.2f}]"
        else:
            row["bsld_vs_reference"] = f"{diff:+.2f}"
        out.append(row)
    return out


def table_notes(rows: list[dict[str, Any]], reference: str = "easy") -> list[str]:
    """What the summary table averages over, and a note when the policies' job sets differ."""
    counts = {r["policy"]: (r["measured_set"], r["jobs_measured"]) for r in rows}
    notes = []
    if len(set(counts.values())) == 1:
        (measured_set, jobs), *_ = counts.values()
        notes.append(
            f"every policy is averaged over the same {jobs:,} jobs ({measured_set} jobs of each window)"
        )
    else:
        notes.append(
            "the policies are averaged over different job sets: "
            + ", ".join(f"{p} {n:,} ({s})" for p, (s, n) in counts.items())
        )
    notes.append(
        f"bsld - {reference}: mean over the windows of each window's difference, with its 95 % "
        "bootstrap confidence interval (an interval that excludes 0 is a difference)"
    )
    return notes


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
            ("jobs_measured", "measured", ",d"),
            ("mean_bsld", "bsld", ".2f"),
            ("bsld_vs_reference", "bsld - easy [95 % CI]", ""),
            ("mean_wait_min", "wait [min]", ".1f"),
            ("utilization", "util", ".3f"),
        ]
        print(format_table(summary, columns, notes=table_notes(summary)))
    sys.stdout.flush()
    return result


if __name__ == "__main__":
    try:
        main()
    except HpcGymError as err:
        print(f"train_maskable_ppo: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
