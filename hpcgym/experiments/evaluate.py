"""Evaluate dispatchers and agents on the same held-out windows: ``hpcgym evaluate``.

One definition of the episodes (:mod:`hpcgym.env.episodes`) for every policy:

1. the trace is split by time into train / validation / test parts
   (:func:`~hpcgym.env.episodes.split_range`, fractions 0.7 / 0.15 / 0.15 by default, in
   submission order);
2. the windows are :func:`~hpcgym.env.episodes.evaluation_windows` of ``window_jobs``
   consecutive jobs of the chosen split (``test`` by default): evenly spaced, never
   overlapping, never leaving the split; by default as many as the split holds
   (``split jobs // window_jobs``);
3. with ``warm_start`` each window begins in the state a full replay of the trace by
   ``warm_policy`` had when its first job arrived (:class:`~hpcgym.env.episodes.WarmStart`);
   those context jobs are simulated but not measured;
4. or, with ``protocol``, as a study drew them (:mod:`hpcgym.experiments.protocols`): ``"rlscheduler"``
   draws RLScheduler's 10 random 1,024-job windows (seed 1) in the first 10,000 jobs, which
   overlap the range agents train on (not a held-out evaluation), and the table adds the
   figures RLScheduler published for the trace.

A registered dispatcher (``"easy"``, ``"f1-bf"``, ``"random-fit:seed=1"``) or any
dispatcher callable (``view -> jobs``) is simulated directly by the engine on each
window's jobs; an agent (anything with ``predict``, e.g. a stable-baselines3 model, or a
saved model ``.zip``) acts through :class:`~hpcgym.env.DispatchEnv` reset to the same
window (``options={"offset": ...}``), which builds the same episode from the same
functions. A model saved by ``hpcgym train`` carries its environment configuration
(:mod:`hpcgym.agents.common`): its environment is rebuilt from it, explicit
``env_kwargs`` override it except where they contradict what the model sees or what its
actions mean (an error), and the CLI takes the model's trace when no ``--trace`` is
given. Both are measured the same way: every job of the window (the env's
``include_all`` default), with :func:`~hpcgym.sim.metrics.compute_metrics`.

Per policy the summary gives, over the windows: the mean and the median of the
windows' mean bounded slowdown (bsld, tau = 10 s) and mean wait, the mean utilization,
the invalid-action rate (agents only: invalid steps / steps, the env's FCFS fallback
replaced them), and for bsld and wait the mean paired difference with the reference
policy (EASY by default: each window's figure minus the reference's on the same window)
with its bootstrap confidence interval (BCa, 95 %, :func:`~hpcgym.sim.metrics.paired_difference_ci`
seeded with ``seed``). Everything is deterministic for a given seed: the windows are
fixed, dispatchers are deterministic (``random-fit`` is seeded by its name), agents
act with ``deterministic=True`` and the bootstrap is seeded.

>>> from hpcgym.workloads import load_default
>>> ev = evaluate(["fcfs", "f1-bf"], load_default().window(3000), window_jobs=200, windows=2, n_resamples=200)
>>> [w["offset"] for w in ev.windows], [r["policy"] for r in ev.summary]
([2550, 2800], ['fcfs', 'f1-bf', 'easy'])
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.baselines import make_policy, preset_predictor, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError
from hpcgym.common.report import format_table, json_ready, to_json, write_csv
from hpcgym.common.stats import paired_difference_ci
from hpcgym.env import episodes
from hpcgym.experiments.protocols import Protocol, make_protocol, published_comparison, reading_of
from hpcgym.predict import make_predictor
from hpcgym.sim import Schedule, Simulator, as_dispatcher, bounded_slowdown, callable_name, compute_metrics
from hpcgym.workloads import READINGS, Workload

BASELINES = (
    "fcfs",
    "easy",
    "sjf-est",
    "sjf",
    "saf",
    "saf-bf",
    "f1",
    "f1-bf",
    "f2",
    "f2-bf",
    "f3",
    "f3-bf",
    "f4",
    "f4-bf",
    "wfp3",
    "wfp3-bf",
    "unicep",
    "unicep-bf",
    "random-fit",
    "random-fit-bf",
    "easy++",
)
"""The heuristic baselines ``hpcgym evaluate`` runs by default: each queue order without
and with EASY backfilling (FCFS's are ``fcfs`` and ``easy``, SJF's ``sjf-est`` and
``sjf``), and EASY++."""

SUMMARY_COLUMNS = [
    ("policy", "policy", ""),
    ("kind", "kind", ""),
    ("windows", "windows", "d"),
    ("mean_bsld", "mean bsld", ".2f"),
    ("median_bsld", "median bsld", ".2f"),
    ("mean_wait_min", "mean wait [min]", ".1f"),
    ("median_wait_min", "median wait [min]", ".1f"),
    ("utilization", "util", ".3f"),
    ("invalid_rate", "invalid", ".3f"),
    ("bsld_vs_reference", "bsld - ref [95% CI]", ""),
]
"""``(key, header, format)`` of the printed summary table."""

FIGURES = ("bsld_by_window", "paired_bsld")
"""The PNGs ``--out DIR`` writes: a box plot per window and the paired differences."""

WINDOW_CSV = [
    "policy",
    "window",
    "offset",
    "jobs",
    "mean_bsld",
    "median_bsld",
    "mean_wait_s",
    "utilization",
    "steps",
    "invalid_steps",
]
SUMMARY_CSV = [
    "policy",
    "kind",
    "windows",
    "jobs_measured",
    "mean_bsld",
    "median_bsld",
    "mean_wait_min",
    "median_wait_min",
    "utilization",
    "invalid_rate",
    "bsld_diff",
    "bsld_diff_low",
    "bsld_diff_high",
    "wait_diff_min",
    "wait_diff_low_min",
    "wait_diff_high_min",
]


# ----------------------------------------------------------------------------- policies
@dataclass
class Candidate:
    """One policy under evaluation.

    Attributes:
        name: its name in the tables.
        kind: ``"dispatcher"`` (simulated directly) or ``"agent"`` (acts through the env).
        make: a fresh dispatcher for a window (dispatchers).
        predictor: the predictor name the dispatcher plans with (dispatchers).
        agent: the object with ``predict`` (agents).
        preset: the canonical preset name (registered dispatchers), else "".
        metadata: what a model saved by ``hpcgym train`` carries (agents), else None.
    """

    name: str
    kind: str
    preset: str = ""
    make: Callable[[], Any] | None = None
    predictor: Callable[[], Any] | None = None
    agent: Any = None
    metadata: dict[str, Any] | None = None


def _model_is_maskable(path: Path) -> bool:
    """Whether a saved stable-baselines3 model was trained with action masks (sb3-contrib)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = z.read("data").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise InvalidConfigError(f"model {path}: not a saved stable-baselines3 model (.zip): {err}") from err
    return "sb3_contrib" in data or "Maskable" in data


def load_model(path: str | os.PathLike[str]) -> Any:
    """A saved model: ``MaskablePPO`` (sb3-contrib) if it was trained with masks, else ``PPO``.

    Raises:
        InvalidConfigError: the file is missing or not a saved model.
        MissingExtraError: stable-baselines3 / sb3-contrib are not installed (the ``rl`` extra).
    """
    from hpcgym.common.extras import require

    p = Path(path)
    if not p.is_file():
        raise InvalidConfigError(f"model: no such file {p}")
    maskable = _model_is_maskable(p)
    require("rl", "stable_baselines3", *(("sb3_contrib",) if maskable else ()), what=f"loading the model {p}")
    if maskable:
        from sb3_contrib import MaskablePPO

        return MaskablePPO.load(p, device="cpu")
    from stable_baselines3 import PPO

    return PPO.load(p, device="cpu")


def _candidate(policy: Any, name: str | None, predictor: str | None) -> Candidate:
    if isinstance(policy, (str, os.PathLike)):
        text = os.fspath(policy)
        if text.endswith(".zip") or (os.sep in text and Path(text).exists()):
            from hpcgym.agents.common import read_metadata

            model = load_model(text)
            return Candidate(name or Path(text).stem, "agent", agent=model, metadata=read_metadata(text))
        key = resolve_policy_name(text)
        return Candidate(
            name or key,
            "dispatcher",
            preset=key,
            make=lambda: make_policy(key),
            predictor=lambda: preset_predictor(key, predictor),
        )
    if hasattr(policy, "predict"):
        return Candidate(name or type(policy).__name__.lower(), "agent", agent=policy)
    if callable(policy):
        d = as_dispatcher(policy)
        return Candidate(
            name or callable_name(policy),
            "dispatcher",
            make=lambda: d,
            predictor=lambda: make_predictor(predictor if predictor is not None else "walltime"),
        )
    raise InvalidConfigError(
        f"policies: {policy!r} is neither a preset name, a model file, a dispatcher callable nor an "
        "object with predict()"
    )


def candidates(
    policies: Sequence[Any] | Mapping[str, Any], reference: str, predictor: str | None
) -> list[Candidate]:
    """The policies as :class:`Candidate` objects, the reference preset added last if missing.

    Raises:
        InvalidConfigError: two policies share a name, or a policy is not usable.
    """
    items = list(policies.items()) if isinstance(policies, Mapping) else [(None, p) for p in policies]
    out = [_candidate(p, n, predictor) for n, p in items]
    ref = resolve_policy_name(reference)
    same = [c for c in out if c.name == ref]
    if not same:
        out.append(_candidate(ref, None, predictor))
    elif same[0].preset != ref:
        raise InvalidConfigError(
            f"policies: {ref!r} names the reference preset but is given as another policy; rename it"
        )
    names = [c.name for c in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidConfigError(f"policies: the name(s) {', '.join(dup)} are given twice; name them apart")
    return out


def agent_env_kwargs(
    c: Candidate,
    env_kwargs: Mapping[str, Any] | None,
    predictor: str | None,
    split_fractions: tuple[float, float, float],
) -> tuple[str | None, dict[str, Any]]:
    """The predictor and environment arguments an agent plays with.

    A model saved by ``hpcgym train`` brings its own (everything but the trace and the
    windows, :func:`hpcgym.agents.common.evaluation_env_kwargs`); ``env_kwargs``
    override them, and ``predictor`` overrides the model's predictor.

    Raises:
        InvalidConfigError: an explicit argument contradicts the model where that matters
            (:data:`hpcgym.agents.common.SHAPING`: what it sees or what its actions mean),
            or the model was trained with other split fractions (its test split would
            not be held out).
    """
    kw = dict(env_kwargs or {})
    if c.metadata is not None:
        from hpcgym.agents.common import SHAPING, evaluation_env_kwargs

        recorded = evaluation_env_kwargs(c.metadata)
        for key, value in kw.items():
            mine = recorded.get(key)
            if key in SHAPING and key in recorded and _same(value) != _same(mine):
                raise InvalidConfigError(
                    f"{key} (--{key.replace('_', '-')}): {value!r} contradicts the model {c.name!r}, "
                    f"trained with {key}={mine!r}; leave it out to use the model's"
                )
        fractions = c.metadata["env"]["kwargs"].get("split_fractions")
        if fractions is not None and _same(fractions) != _same(split_fractions):
            raise InvalidConfigError(
                f"split_fractions: the model {c.name!r} was trained with split fractions {fractions}, "
                f"not {list(split_fractions)}: its training windows may fall in this evaluation's split"
            )
        kw = {**recorded, **kw}
    pred = kw.pop("predictor", None)
    return (predictor if predictor is not None else pred), kw


def _same(value: Any) -> Any:
    """``value`` comparable with its JSON round trip (lists and tuples alike)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


# ----------------------------------------------------------------------------- windows
def evaluation_offsets(
    n_jobs: int,
    window_jobs: int,
    windows: int | None = None,
    split: str = "test",
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15),
) -> tuple[tuple[int, int], list[int]]:
    """The split's job range and the first job of each evaluation window.

    ``windows=None`` takes as many non-overlapping windows as the split holds.

    Raises:
        InvalidConfigError: the window does not fit the split, or ``windows`` < 1.
    """
    job_range = episodes.split_range(n_jobs, split, split_fractions)
    lo, hi = job_range
    if windows is None:
        if window_jobs > hi - lo:
            raise InvalidConfigError(
                f"window_jobs: {window_jobs} jobs do not fit the {split!r} split [{lo}, {hi}) of "
                f"{hi - lo} jobs; give --window-jobs {hi - lo} or less"
            )
        windows = (hi - lo) // window_jobs
    return job_range, episodes.evaluation_windows(job_range, window_jobs, windows)


# ----------------------------------------------------------------------------- running
def _window_metrics(s: Schedule) -> dict[str, float]:
    m = compute_metrics(s, include_all=True)
    bsld = bounded_slowdown(s.wait, s.runtime)
    return {
        "jobs": int(m["jobs_measured"]),
        "mean_bsld": float(m["mean_bsld"]),
        "median_bsld": float(np.median(bsld)),
        "mean_wait_s": float(m["mean_wait_s"]),
        "utilization": float(m["utilization"]),
    }


def _run_dispatcher(
    c: Candidate, trace: Workload, offset: int, window_jobs: int, warm: episodes.WarmStart | None
) -> Schedule:
    """One window simulated directly, from the same episode the env builds (see DispatchEnv.reset)."""
    idx, running, starts = np.arange(offset, offset + window_jobs), np.zeros(0, np.int64), None
    if warm is not None:
        idx, running, starts = warm.jobs(offset, window_jobs)
    w = episodes.episode_workload(trace, idx)
    assert c.make is not None and c.predictor is not None
    sim = Simulator(w, predictor=c.predictor())
    if starts is not None and len(running):
        sim.warm_start(float(trace.submit[offset]), running, starts)
    d = as_dispatcher(c.make())
    d.reset(sim.view)
    every_event = bool(d.every_event)
    view = sim.view
    while sim.advance(every_event):
        sim.decisions += 1
        decision = d(view)
        if len(decision):
            sim.start(decision)
        elif not len(view.running) and not sim.has_future_event():
            raise InvalidDecisionError(
                f"dispatcher {c.name!r} started nothing at t={sim.now:g} with {view.queue_length} jobs "
                "waiting, an idle machine and no event left"
            )
    s = sim.schedule(policy=c.name)
    return s if len(w) == window_jobs else s.jobs_slice(len(w) - window_jobs)


class _AgentEnv:
    """The environment an agent plays the windows in, built once per agent."""

    def __init__(
        self,
        agent: Any,
        trace: Workload,
        window_jobs: int,
        job_range: tuple[int, int],
        warm_start: bool,
        warm_policy: str,
        predictor: str | None,
        env_kwargs: Mapping[str, Any],
    ) -> None:
        from gymnasium import spaces

        from hpcgym.env import DispatchEnv, FlattenDispatchObservation

        env: Any = DispatchEnv(
            trace=trace,
            window_jobs=window_jobs,
            job_range=job_range,
            warm_start=warm_start,
            warm_policy=warm_policy,
            predictor=predictor,
            **dict(env_kwargs),
        )
        space = getattr(agent, "observation_space", None)
        if isinstance(space, spaces.Box) and not isinstance(env.observation_space, spaces.Box):
            env = FlattenDispatchObservation(env)
        if space is not None and space != env.observation_space:
            raise InvalidConfigError(
                f"model: its observation space {space} is not the environment's {env.observation_space}; "
                "give the environment arguments it was trained with (e.g. --window-size, --backfill)"
            )
        self.env = env
        try:
            import inspect

            self.masked = "action_masks" in inspect.signature(agent.predict).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            self.masked = False
        self.agent = agent

    def policies(self) -> tuple[str, ...]:
        """The dispatchers a ``policy``-mode agent picks among (empty in ``job`` mode)."""
        u = self.env.unwrapped
        return tuple(u.config.action.policies) if u.mode == "policy" else ()

    def play(self, offset: int) -> tuple[Schedule, int, int, dict[str, int]]:
        """The window's schedule, steps, invalid steps and, in policy mode, each dispatcher's picks."""
        env = self.env
        obs, _ = env.reset(options={"offset": offset})
        steps = invalid = 0
        names = self.policies()
        picks = np.zeros(len(names), dtype=np.int64)
        while True:
            if self.masked:
                action, _ = self.agent.predict(
                    obs, deterministic=True, action_masks=env.get_wrapper_attr("action_masks")()
                )
            else:
                action, _ = self.agent.predict(obs, deterministic=True)
            if names and 0 <= (a := int(np.asarray(action).reshape(-1)[0])) < len(names):
                picks[a] += 1
            obs, _, terminated, truncated, info = env.step(action)
            steps += 1
            invalid += bool(info["invalid_action"])
            if terminated or truncated:
                return env.unwrapped.schedule(), steps, invalid, dict(zip(names, picks.tolist(), strict=True))


# ----------------------------------------------------------------------------- results
@dataclass
class Evaluation:
    """What :func:`evaluate` measured.

    Attributes:
        config: the evaluation's settings (trace, split, windows, seed, ...).
        windows: each window: ``offset`` (first trace job), ``stop``, ``first_submit_s``
            and ``last_submit_s``.
        per_window: per policy, one dict per window (``jobs``, ``mean_bsld``,
            ``median_bsld`` (of the window's jobs), ``mean_wait_s``, ``utilization``,
            ``steps`` and ``invalid_steps`` (agents), and ``picks``: for an agent of a
            ``policy``-mode environment, how many decisions each dispatcher made, which a note
            sums over the windows).
        summary: one row per policy (see the module docstring).
        notes: what the table averages, in words.
    """

    config: dict[str, Any]
    windows: list[dict[str, Any]]
    per_window: dict[str, list[dict[str, Any]]]
    summary: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    published: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "windows": self.windows,
            "summary": self.summary,
            "per_window": self.per_window,
            "notes": self.notes,
            "published": self.published,
        }

    def to_json(self) -> str:
        return to_json(self.to_dict())

    def table(self) -> str:
        """The summary table; with a protocol's published figures, those beside the measured ones."""
        text = format_table(self.summary, SUMMARY_COLUMNS, self.notes)
        if self.published:
            from hpcgym.experiments.protocols import PUBLISHED_COLUMNS

            text += (
                f"\n\nmean bsld beside the figures published for protocol {self.config['protocol']!r} "
                f"({self.config['trace']}):\n" + format_table(self.published, PUBLISHED_COLUMNS)
            )
        return text

    def window_rows(self) -> list[dict[str, Any]]:
        return [
            {"policy": p, "window": i, "offset": self.windows[i]["offset"], **row}
            for p, rows in self.per_window.items()
            for i, row in enumerate(rows)
        ]

    def write(self, out: str | os.PathLike[str], plots: bool = True) -> list[Path]:
        """Write ``evaluation.json``, ``summary.csv``, ``windows.csv`` and (``plots``) the two PNGs.

        Returns:
            The files written.
        """
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        files = [d / "evaluation.json", d / "summary.csv", d / "windows.csv"]
        files[0].write_text(self.to_json() + "\n")
        write_csv(files[1], self.summary, SUMMARY_CSV)
        write_csv(files[2], self.window_rows(), WINDOW_CSV)
        if plots:
            files += [d / f"{name}.png" for name in FIGURES]
            self.box_figure().savefig(files[3], dpi=100)
            self.paired_figure().savefig(files[4], dpi=100)
        return files

    def _spread(self, values: Sequence[float]) -> bool:
        v = np.asarray([x for x in values if np.isfinite(x)])
        return bool(len(v) and v.min() > 0 and v.max() / v.min() > 30)

    def box_figure(self) -> Any:
        """Box plot of each policy's per-window mean bsld (points: the windows); log axis when heavy-tailed.

        Raises:
            ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
        """
        from matplotlib.figure import Figure

        names = list(self.per_window)
        data = [[r["mean_bsld"] for r in self.per_window[p]] for p in names]
        fig = Figure(figsize=(max(6.0, 0.45 * len(names) + 2), 4.5), layout="constrained")
        ax = fig.subplots()
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(names) + 1), names, rotation=60, ha="right")
        for i, vals in enumerate(data, start=1):
            ax.plot(np.full(len(vals), i), vals, "o", ms=3, alpha=0.5, color="tab:gray")
        if self._spread([x for v in data for x in v]):
            ax.set_yscale("log")
        ax.set_ylabel("mean bounded slowdown of a window")
        ax.set_title(
            f"{self.config['trace']}: {len(self.windows)} {self.config['split']} windows of "
            f"{self.config['window_jobs']} jobs"
        )
        return fig

    def paired_figure(self) -> Any:
        """Each policy's mean paired bsld difference with the reference and its confidence interval.

        Symmetric-log axis (linear within 1 of 0) when the differences span decades.

        Raises:
            ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
        """
        from matplotlib.figure import Figure

        ref = self.config["reference"]
        rows = [r for r in self.summary if r["policy"] != ref]
        fig = Figure(figsize=(7, max(3.0, 0.35 * len(rows) + 1.5)), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(rows))
        mean = np.array([r["bsld_diff"] for r in rows], dtype=float)
        low = np.array([r["bsld_diff_low"] for r in rows], dtype=float)
        high = np.array([r["bsld_diff_high"] for r in rows], dtype=float)
        has = np.isfinite(low) & np.isfinite(high)
        err = np.vstack([np.where(has, mean - low, 0.0), np.where(has, high - mean, 0.0)])
        ax.errorbar(mean, y, xerr=err, fmt="o", capsize=3)
        ax.axvline(0.0, color="k", lw=0.8)
        ax.set_yticks(y, [r["policy"] for r in rows])
        ax.invert_yaxis()
        finite = np.abs(np.concatenate([mean, low[has], high[has]]))
        finite = finite[np.isfinite(finite) & (finite > 0)]
        if len(finite) and finite.max() / max(finite.min(), 1e-9) > 30:
            ax.set_xscale("symlog", linthresh=1.0)  # linear within one bsld unit of 0
        ax.set_xlabel(f"mean bsld - {ref} (per-window pairs, {self.config['confidence']:.0%} bootstrap CI)")
        ax.set_title(
            f"{self.config['trace']}: {len(self.windows)} {self.config['split']} windows, paired with {ref}"
        )
        return fig


def vs_reference(diff: float | None, low: float | None, high: float | None) -> str:
    """A paired difference and its interval as the tables print it (none from one window).

    >>> vs_reference(-2.5, -4.0, -1.0), vs_reference(1.0, float("nan"), float("nan"))
    ('-2.50 [-4.00, -1.00]', '+1.00 (no interval: one window)')
    """
    if diff is None:
        return ""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{diff:+.2f} (no interval: one window)"
    return f"{diff:+.2f} [{low:+.2f}, {high:+.2f}]"


def _summarize(
    cands: list[Candidate],
    per_window: dict[str, list[dict[str, Any]]],
    reference: str,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> list[dict[str, Any]]:
    ref = per_window[reference]
    out = []
    for c in cands:
        rows = per_window[c.name]
        bsld = np.array([r["mean_bsld"] for r in rows])
        wait = np.array([r["mean_wait_s"] for r in rows]) / 60.0
        row: dict[str, Any] = {
            "policy": c.name,
            "kind": c.kind,
            "windows": len(rows),
            "jobs_measured": int(sum(r["jobs"] for r in rows)),
            "mean_bsld": float(bsld.mean()),
            "median_bsld": float(np.median(bsld)),
            "mean_wait_min": float(wait.mean()),
            "median_wait_min": float(np.median(wait)),
            "utilization": float(np.mean([r["utilization"] for r in rows])),
            "invalid_rate": (
                sum(r["invalid_steps"] for r in rows) / max(1, sum(r["steps"] for r in rows))
                if c.kind == "agent"
                else None
            ),
        }
        nan = float("nan")
        bd = bl = bh = wd = wl = wh = nan
        if c.name != reference:
            ref_bsld = np.array([r["mean_bsld"] for r in ref])
            ref_wait = np.array([r["mean_wait_s"] for r in ref]) / 60.0
            kw = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
            bd, bl, bh = paired_difference_ci(bsld, ref_bsld, **kw)  # type: ignore[arg-type]
            wd, wl, wh = paired_difference_ci(wait, ref_wait, **kw)  # type: ignore[arg-type]
        row.update(
            bsld_diff=bd,
            bsld_diff_low=bl,
            bsld_diff_high=bh,
            wait_diff_min=wd,
            wait_diff_low_min=wl,
            wait_diff_high_min=wh,
        )
        row["bsld_vs_reference"] = "(reference)" if c.name == reference else vs_reference(bd, bl, bh)
        out.append(row)
    return out


def evaluate(
    policies: Sequence[Any] | Mapping[str, Any],
    trace: Workload | str | os.PathLike[str] | None = None,
    *,
    procs: int | None = None,
    machine: str | None = None,
    split: str = "test",
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15),
    window_jobs: int | None = None,
    windows: int | None = None,
    protocol: str | Protocol | None = None,
    warm_start: bool = False,
    warm_policy: str = "easy",
    predictor: str | None = None,
    reference: str = "easy",
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> Evaluation:
    """Every policy on the same held-out windows; see the module docstring.

    Args:
        policies: preset names (with ``:key=value`` parameters), saved model files
            (``.zip``), dispatcher callables or objects with ``predict``; a mapping
            names them.
        trace: a workload, a trace file, or None for the bundled SDSC-SP2 slice.
        procs: machine size when reading ``trace`` from an SWF file.
        machine: machine preset or file for ``trace``.
        split: the split the windows come from.
        split_fractions: train, validation, test fractions.
        window_jobs: jobs per window (None: 1,024, or the protocol's).
        windows: how many windows (evenly spaced); None: as many as the split holds
            (or the protocol's number).
        protocol: draw the windows as this :class:`~hpcgym.experiments.protocols.Protocol` (or
            registered name, ``"held-out"`` or ``"rlscheduler"``) does; it replaces
            ``split`` and ``split_fractions``, and the table adds the figures it
            published for the trace, if any.
        warm_start: begin each window in the state a full replay had (context jobs are
            simulated, not measured).
        warm_policy: the preset of that replay.
        predictor: plan with this predictor (dispatchers: instead of the preset's own,
            as ``--predictor``; agents: the env's).
        reference: the preset the paired differences are taken against (added if absent).
        seed: seed of the bootstrap.
        confidence: level of the intervals.
        n_resamples: bootstrap resamples.
        env_kwargs: further :class:`~hpcgym.env.DispatchEnv` arguments for agents
            (``window_size``, ``backfill``, ``observations``...); a saved model's own
            are used otherwise (:func:`agent_env_kwargs`).
        progress: one line per policy and window on stderr.

    Raises:
        InvalidConfigError: a bad name, split, window size, or a model whose observation
            space is not the environment's.
        UnknownNameError: an unknown protocol; the message lists the known ones.
    """
    proto = None if protocol is None else make_protocol(protocol)
    reading = "hpcgym" if proto is None else proto.reading
    w = episodes.load_trace(trace, procs=procs, machine=machine, reading=reading)
    if proto is None:
        window_jobs = 1024 if window_jobs is None else window_jobs
        job_range, offsets = evaluation_offsets(len(w), window_jobs, windows, split, split_fractions)
    else:
        window_jobs = proto.test_window_jobs if window_jobs is None else window_jobs
        job_range, offsets = proto.test_offsets(len(w), window_jobs, windows)
        split = "test" if proto.held_out else f"first {job_range[1]} jobs"
        split_fractions = proto.split_fractions
    cands = candidates(policies, reference, predictor)
    ref = resolve_policy_name(reference)
    warm = episodes.WarmStart(w, warm_policy) if warm_start else None
    per_window: dict[str, list[dict[str, Any]]] = {c.name: [] for c in cands}
    # every agent's environment arguments checked before anything runs
    setups = {
        c.name: agent_env_kwargs(c, env_kwargs, predictor, split_fractions)
        for c in cands
        if c.kind == "agent"
    }
    agent_env = {name: {"predictor": pred, **kw} for name, (pred, kw) in setups.items()}
    t0 = time.perf_counter()
    for ci, c in enumerate(cands):
        player = None
        if c.kind == "agent":
            pred, kw = setups[c.name]
            player = _AgentEnv(c.agent, w, window_jobs, job_range, warm_start, warm_policy, pred, kw)
        for k, off in enumerate(offsets):
            steps = invalid = 0
            picks: dict[str, int] = {}
            if player is not None:
                s, steps, invalid, picks = player.play(off)
            else:
                s = _run_dispatcher(c, w, off, window_jobs, warm)
            row: dict[str, Any] = {**_window_metrics(s), "steps": steps, "invalid_steps": invalid}
            if picks:
                row["picks"] = picks
            per_window[c.name].append(row)
            if progress:
                print(
                    f"[{ci + 1}/{len(cands)}] {c.name} window {k + 1}/{len(offsets)} (jobs {off}-"
                    f"{off + window_jobs - 1}): mean bsld {row['mean_bsld']:.2f} "
                    f"({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                )
    summary = _summarize(cands, per_window, ref, confidence, n_resamples, seed)
    lo, hi = job_range
    win = [
        {
            "offset": off,
            "stop": off + window_jobs,
            "first_submit_s": float(w.submit[off]),
            "last_submit_s": float(w.submit[off + window_jobs - 1]),
        }
        for off in offsets
    ]
    config = {
        "trace": w.name,
        "jobs": len(w),
        "procs": int(w.procs),
        "split": split,
        "split_fractions": list(split_fractions),
        "split_range": [lo, hi],
        "protocol": None if proto is None else proto.name,
        "held_out": True if proto is None else proto.held_out,
        "window_jobs": window_jobs,
        "windows": len(offsets),
        "warm_start": warm_start,
        "warm_policy": warm_policy if warm_start else None,
        "predictor": predictor,
        "reference": ref,
        "seed": seed,
        "confidence": confidence,
        "n_resamples": n_resamples,
        "measured_set": "all",
        "env_kwargs": json_ready(dict(env_kwargs or {})),
        "agent_env": json_ready(agent_env),
    }
    warm_note = f"; each window starts warm (a full {warm_policy} replay's state)" if warm_start else ""
    notes = [
        f"{len(offsets)} non-overlapping windows of {window_jobs} jobs in the {split!r} split, jobs "
        f"[{lo}, {hi}) of {len(w)}; every job of a window is measured" + warm_note,
        "mean/median bsld and wait: over the windows, of each window's mean",
        f"bsld - {ref}: mean per-window paired difference, {confidence:.0%} BCa bootstrap interval "
        f"(seed {seed}); an interval that excludes 0 is a difference",
    ]
    if proto is not None and reading_of(w) != proto.reading:
        notes.append(
            f"the trace was read with {reading_of(w)}'s rules, not the protocol's ({proto.reading}'s): "
            "give the file, not a loaded workload, to compare with the published figures"
        )
    if proto is not None and not proto.held_out:
        overlapping = sum(abs(a - b) < window_jobs for i, a in enumerate(offsets) for b in offsets[i + 1 :])
        notes[0] = (
            f"protocol {proto.name!r}: {len(offsets)} windows of {window_jobs} jobs drawn at random "
            f"(seed {proto.seed}) in the first {hi} jobs of {len(w)}, {overlapping} overlapping pair(s); "
            "every job of a window is measured" + warm_note
        )
        notes.insert(
            1,
            "NOT a held-out evaluation: the test windows lie in the range agents train on "
            f"(jobs {proto.train_range(len(w))[0]}-{proto.train_range(len(w))[1] - 1})",
        )
    for name, rows in per_window.items():
        if rows and "picks" in rows[0]:
            total = {p: sum(r["picks"][p] for r in rows) for p in rows[0]["picks"]}
            n = max(1, sum(total.values()))
            shares = ", ".join(
                f"{p} {100 * v / n:.1f} %" for p, v in sorted(total.items(), key=lambda kv: -kv[1])
            )
            notes.append(f"{name} (policy mode) picked, over its {n} decisions: {shares}")
    if len(offsets) < 5:
        notes.append(
            f"only {len(offsets)} window(s): a bootstrap interval from so few pairs is rough "
            "(none from one); "
            "use smaller --window-jobs or a longer trace for more"
        )
    published = [] if proto is None else published_comparison(proto, w.name, summary)
    return Evaluation(config, win, per_window, summary, notes, published)


# ----------------------------------------------------------------------------- CLI
def _configure(p: argparse.ArgumentParser) -> None:
    from hpcgym.cli._common import add_trace_arguments

    add_trace_arguments(p)
    p.add_argument(
        "--policies",
        default=None,
        help="comma-separated presets (default: every heuristic baseline with and without backfilling, "
        "and easy++; with --protocol, the heuristics of its table)",
    )
    p.add_argument(
        "--protocol",
        default=None,
        help="draw the windows as a study did: held-out (the default windows) or rlscheduler (first "
        "10,000 jobs, 10 random 1,024-job windows, seed 1; NOT held out), printed beside its "
        "published figures; --window-jobs and --windows override its sizes",
    )
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PATH",
        help="a saved stable-baselines3 model (.zip; MaskablePPO if trained with masks, else PPO); "
        "repeatable (named by the file's stem, or folder/stem where stems repeat). A model of "
        "`hpcgym train` brings its environment configuration and, without --trace/--workload, its trace",
    )
    p.add_argument(
        "--split", default="test", choices=episodes.SPLITS, help="split of the windows (default test)"
    )
    p.add_argument(
        "--reading",
        default=None,
        choices=READINGS,
        help="how SWF lines become jobs: hpcgym's rules or RLScheduler's (cancelled jobs kept as 10-s "
        "jobs, ...; see docs/EVALUATION.md) (default: the protocol's, else hpcgym)",
    )
    p.add_argument(
        "--window-jobs", type=int, default=None, help="jobs per window (default 1024, or the protocol's)"
    )
    p.add_argument(
        "--windows", type=int, default=None, help="number of windows (default: as many as the split holds)"
    )
    p.add_argument("--warm-start", action="store_true", help="start each window in a full replay's state")
    p.add_argument("--warm-policy", default="easy", help="preset of the warm-start replay (default easy)")
    p.add_argument("--predictor", default=None, help="plan with this predictor instead of each preset's own")
    p.add_argument("--reference", default="easy", help="preset of the paired differences (default easy)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument(
        "--window-size",
        type=int,
        default=None,
        help="models: K, waiting jobs the agent sees (default: the model's, else 64)",
    )
    p.add_argument(
        "--backfill",
        default=None,
        choices=("none", "easy"),
        help="models: the env's backfill mode (default: the model's, else none)",
    )
    p.add_argument("--out", type=Path, default=None, help="write JSON, CSVs and the two PNG plots here")
    p.add_argument("--no-plots", action="store_true", help="with --out: no PNG files")
    p.add_argument("--json", action="store_true", help="print the whole evaluation as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def _run(args: argparse.Namespace) -> int:
    from hpcgym.cli._common import load_trace

    if args.window_jobs is not None and args.window_jobs < 1:
        raise InvalidConfigError(f"--window-jobs: must be >= 1, got {args.window_jobs}")
    if args.windows is not None and args.windows < 1:
        raise InvalidConfigError(f"--windows: must be >= 1, got {args.windows}")
    if args.out is not None and not args.no_plots:
        from hpcgym.common.extras import require

        require("plot", what="the plots of --out (or give --no-plots)")
    proto = None if args.protocol is None else make_protocol(args.protocol)
    if args.reading is None:
        args.reading = proto.reading if proto is not None else "hpcgym"
    names = args.policies
    if names is None:
        names = ",".join(proto.policies if proto is not None and proto.policies else BASELINES)
    policies: dict[str, Any] = {}
    for p in (x.strip() for x in names.split(",")):
        if p:
            policies[resolve_policy_name(p)] = p
    for name, path in model_names(args.model).items():
        if name in policies:
            raise InvalidConfigError(f"--model {path}: its name {name!r} is also a policy of --policies")
        policies[name] = path
    env_kwargs = {
        k: v for k, v in (("window_size", args.window_size), ("backfill", args.backfill)) if v is not None
    }
    _trace_from_models(args)
    w = load_trace(args)
    print(w.report, file=sys.stderr)
    ev = evaluate(
        policies,
        w,
        split=args.split,
        window_jobs=args.window_jobs,
        windows=args.windows,
        protocol=proto,
        warm_start=args.warm_start,
        warm_policy=args.warm_policy,
        predictor=args.predictor,
        reference=args.reference,
        seed=args.seed,
        confidence=args.confidence,
        n_resamples=args.resamples,
        env_kwargs=env_kwargs,
        progress=not args.no_progress,
    )
    if args.out is not None:
        for f in ev.write(args.out, plots=not args.no_plots):
            print(f"wrote {f}", file=sys.stderr)
    if args.json:
        print(ev.to_json())
    else:
        print(ev.table())
    return 0


def model_names(paths: Sequence[str | os.PathLike[str]]) -> dict[str, str]:
    """The table names of ``--model`` files: each file's stem, or ``folder/stem`` where stems repeat.

    ``runs/a/best_model.zip`` and ``runs/b/best_model.zip`` are ``a/best_model`` and
    ``b/best_model``; a lone ``runs/a/best_model.zip`` is ``best_model``.

    Raises:
        InvalidConfigError: two files would still get the same name.
    """
    stems = [Path(p).stem for p in paths]
    out: dict[str, str] = {}
    for p, stem in zip(paths, stems, strict=True):
        name = stem if stems.count(stem) == 1 else f"{Path(p).parent.name}/{stem}"
        if name in out:
            raise InvalidConfigError(f"--model {p}: another model is named {name!r} too; rename one file")
        out[name] = os.fspath(p)
    return out


def _trace_from_models(args: argparse.Namespace) -> None:
    """Without ``--trace``/``--workload``: the trace (and machine) the ``--model`` files were trained on.

    Raises:
        InvalidConfigError: the models were trained on different traces.
    """
    if not args.model or args.trace is not None or args.workload is not None:
        return
    from hpcgym.agents.common import read_metadata
    from hpcgym.workloads import is_job_table

    seen = {}
    for path in args.model:
        meta = read_metadata(path) if Path(path).is_file() else None
        if meta is not None:
            env = meta["env"]
            seen[path] = (env["trace"], env["kwargs"].get("machine"), env["kwargs"].get("procs"))
    if len(set(seen.values())) > 1:
        raise InvalidConfigError(
            "--model: the models were trained on different traces ("
            + "; ".join(f"{p}: {t[0] or 'the bundled trace'}" for p, t in seen.items())
            + "); give --trace or --workload"
        )
    if not seen:
        return
    trace, machine, procs = next(iter(seen.values()))
    if trace is not None:
        if is_job_table(trace):
            args.workload = Path(trace)
        else:
            args.trace = Path(trace)
    if args.machine is None and args.procs is None:
        args.machine, args.procs = machine, procs
    print(f"trace of the model: {trace or 'the bundled trace'}", file=sys.stderr)


__all__ = ["BASELINES", "Evaluation", "agent_env_kwargs", "evaluate", "evaluation_offsets", "load_model"]
