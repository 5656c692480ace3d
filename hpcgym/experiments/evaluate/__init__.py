"""Evaluate dispatchers and agents on the same held-out windows (``hpcgym evaluate``).

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
(:mod:`hpcgym.agents.models`): its environment is rebuilt from it, explicit
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

from hpcgym.experiments.evaluate.policies import (
    BASELINES,
    Candidate,
    agent_env_kwargs,
    candidates,
    load_model,
)
from hpcgym.experiments.evaluate.results import (
    FIGURES,
    SUMMARY_COLUMNS,
    SUMMARY_CSV,
    WINDOW_CSV,
    Evaluation,
    vs_reference,
)
from hpcgym.experiments.evaluate.run import evaluate

__all__ = [
    "BASELINES",
    "FIGURES",
    "SUMMARY_COLUMNS",
    "SUMMARY_CSV",
    "WINDOW_CSV",
    "Candidate",
    "Evaluation",
    "agent_env_kwargs",
    "candidates",
    "evaluate",
    "load_model",
    "vs_reference",
]
