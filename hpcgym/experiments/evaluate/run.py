"""``evaluate``: every policy on the same windows of a trace, summarized against a reference."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from hpcgym.baselines import resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.report import json_ready
from hpcgym.common.stats import FEW_PAIRS, paired_difference_ci
from hpcgym.env import episodes
from hpcgym.experiments.evaluate.policies import Candidate, agent_env_kwargs, candidates
from hpcgym.experiments.evaluate.provenance import check_held_out, model_windows
from hpcgym.experiments.evaluate.results import Evaluation, _summarize, vs_reference
from hpcgym.experiments.evaluate.windows import _AgentEnv, _run_dispatcher, _window_metrics
from hpcgym.experiments.protocols import (
    Protocol,
    default_window_jobs,
    evaluation_offsets,
    make_protocol,
    published_comparison,
    reading_of,
)
from hpcgym.workloads import Workload

BEST = "best"
"""``reference=BEST``: the heuristic best on the validation split is the reference."""


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
    """Every policy on the same held-out windows; see :mod:`hpcgym.experiments.evaluate`.

    Args:
        policies: preset names (with ``:key=value`` parameters), saved model files
            (``.zip``), dispatcher callables or objects with ``predict``; a mapping
            names them.
        trace: a workload, a trace file, or None for the bundled SDSC-SP2 slice.
        procs: machine size when reading ``trace`` from an SWF file.
        machine: machine preset or file for ``trace``.
        split: the split the windows come from.
        split_fractions: train, validation, test fractions.
        window_jobs: jobs per window (None: 1,024, shorter where the split would hold fewer
            than 20 windows (:func:`~hpcgym.experiments.protocols.default_window_jobs`),
            or the protocol's).
        windows: how many windows (evenly spaced); None: as many as the split holds
            (or the protocol's number). Below 20 the notes say the intervals are approximate.
        protocol: draw the windows as this :class:`~hpcgym.experiments.protocols.Protocol` (or
            registered name, ``"held-out"`` or ``"rlscheduler"``) does; it replaces
            ``split`` and ``split_fractions``, and the table adds the figures it
            published for the trace, if any.
        warm_start: begin each window in the state a full replay had (context jobs are
            simulated, not measured).
        warm_policy: the preset of that replay.
        predictor: plan with this predictor (dispatchers: instead of the preset's own,
            as ``--predictor``; agents: the env's).
        reference: the preset the paired differences are taken against (added if absent),
            or ``"best"``: the dispatcher among ``policies`` with the lowest mean bsld on
            the validation split's windows (same window size, as many as it holds); the
            notes name it and the best on the evaluated windows, with each policy's
            difference to that one too (``config["reference_choice"]``).
        seed: seed of the bootstrap.
        confidence: level of the intervals.
        n_resamples: bootstrap resamples.
        env_kwargs: further :class:`~hpcgym.env.DispatchEnv` arguments for agents
            (``window_size``, ``backfill``, ``observations``...); a saved model's own
            are used otherwise (:func:`agent_env_kwargs`).
        progress: one line per policy and window on stderr.

    Raises:
        InvalidConfigError: a bad name, split, window size, a model whose observation
            space is not the environment's, or a test-split evaluation whose windows hold
            jobs a model was trained or validated on
            (:func:`~hpcgym.experiments.evaluate.provenance.check_held_out`).
        UnknownNameError: an unknown protocol; the message lists the known ones.
    """
    proto = None if protocol is None else make_protocol(protocol)
    reading = "hpcgym" if proto is None else proto.reading
    w = episodes.load_trace(trace, procs=procs, machine=machine, reading=reading)
    if proto is None:
        if window_jobs is None:
            window_jobs = default_window_jobs(len(w), split, split_fractions, windows)
        job_range, offsets = evaluation_offsets(len(w), window_jobs, windows, split, split_fractions)
    else:
        window_jobs = proto.test_window_jobs if window_jobs is None else window_jobs
        job_range, offsets = proto.test_offsets(len(w), window_jobs, windows)
        split = "test" if proto.held_out else f"first {job_range[1]} jobs"
        split_fractions = proto.split_fractions
    best = reference == BEST
    cands = candidates(policies, None if best else reference, predictor)
    warm = episodes.WarmStart(w, warm_policy) if warm_start else None
    held_split = proto.held_out if proto is not None else split == "test"
    # every agent's environment arguments checked before anything runs (a model's own split
    # fractions first: windows of other fractions would also overlap its training jobs)
    setups = {
        c.name: agent_env_kwargs(c, env_kwargs, predictor, split_fractions)
        for c in cands
        if c.kind == "agent"
    }
    # where the windows lie for each saved model: a test split that holds its training jobs is an error
    for_models = {
        c.name: model_windows(c.name, c.metadata, w, offsets, window_jobs)
        for c in cands
        if c.kind == "agent" and c.metadata is not None
    }
    if held_split:
        for mw in for_models.values():
            check_held_out(mw, w, offsets, window_jobs)
    choice = None
    if best:
        if proto is not None and not proto.held_out:
            raise InvalidConfigError(
                f"reference: 'best' picks on the validation split, which protocol {proto.name!r} has none of"
            )
        choice = _pick_on_validation(cands, w, window_jobs, split_fractions, warm, progress)
        ref = choice["picked"]
    else:
        ref = resolve_policy_name(reference)
    per_window: dict[str, list[dict[str, Any]]] = {c.name: [] for c in cands}
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
    for row in summary:
        if row["policy"] in for_models:
            row["windows_vs_model"] = for_models[row["policy"]].relation
    if choice is not None:
        _against_test_best(choice, cands, per_window, summary, confidence, n_resamples, seed)
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
        # the windows are a test split and hold no job a model was trained or validated on
        "held_out": held_split and all(mw.held_out for mw in for_models.values()),
        "model_windows": {name: mw.to_dict() for name, mw in for_models.items()},
        "window_jobs": window_jobs,
        "windows": len(offsets),
        "warm_start": warm_start,
        "warm_policy": warm_policy if warm_start else None,
        "predictor": predictor,
        "reference": ref,
        "reference_choice": choice,
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
        f"(seed {seed}); an interval that excludes 0 is a difference; beside it the paired "
        f"t-interval and the wins: windows whose mean bsld is below {ref}'s, of all, with the "
        "sign test's two-sided p (ties left out)",
    ]
    if choice is not None:
        notes += choice["notes"]
    notes += [mw.note(w.name) for mw in for_models.values()]
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
    if len(offsets) == 1:
        notes.append("one window: no interval; use smaller --window-jobs or a longer trace for more")
    elif len(offsets) < FEW_PAIRS:
        notes.append(
            f"only {len(offsets)} windows: the intervals are approximate (below {FEW_PAIRS} pairs neither "
            f"the bootstrap's nor the t-interval's coverage can be taken as {confidence:.0%}); use smaller "
            "--window-jobs or a longer trace for more"
        )
    config["intervals_approximate"] = len(offsets) < FEW_PAIRS
    published = [] if proto is None else published_comparison(proto, w.name, summary)
    return Evaluation(config, win, per_window, summary, notes, published)


def _pick_on_validation(
    cands: list[Candidate],
    w: Workload,
    window_jobs: int,
    split_fractions: tuple[float, float, float],
    warm: episodes.WarmStart | None,
    progress: bool,
) -> dict[str, Any]:
    """``reference="best"``: the dispatcher with the lowest mean bsld on the validation windows.

    Raises:
        InvalidConfigError: no dispatcher preset among the policies.
    """
    pool = [c for c in cands if c.kind == "dispatcher" and c.preset]
    if not pool:
        raise InvalidConfigError(
            "reference: 'best' picks among the dispatcher presets of the policies; none given"
        )
    (lo, hi), offsets = evaluation_offsets(len(w), window_jobs, None, "validation", split_fractions)
    scores = {}
    for c in pool:
        bsld = [
            _window_metrics(_run_dispatcher(c, w, off, window_jobs, warm))["mean_bsld"] for off in offsets
        ]
        scores[c.name] = float(sum(bsld) / len(bsld))
        if progress:
            print(
                f"validation: {c.name} mean bsld {scores[c.name]:.2f} ({len(offsets)} windows)",
                file=sys.stderr,
            )
    picked = min(scores, key=lambda k: scores[k])
    ranked = ", ".join(f"{k} {v:.2f}" for k, v in sorted(scores.items(), key=lambda kv: kv[1])[:4])
    note = (
        f"reference {picked}: picked on the validation split, the lowest mean bsld of the {len(pool)} "
        f"heuristics on its {len(offsets)} windows of {window_jobs} jobs (jobs [{lo}, {hi})): {ranked}"
    )
    return {
        "picked_on": "validation",
        "picked": picked,
        "validation_windows": len(offsets),
        "validation_range": [lo, hi],
        "validation_mean_bsld": scores,
        "notes": [note],
    }


def _against_test_best(
    choice: dict[str, Any],
    cands: list[Candidate],
    per_window: dict[str, list[dict[str, Any]]],
    summary: list[dict[str, Any]],
    confidence: float,
    n_resamples: int,
    seed: int,
) -> None:
    """Beside a reference picked on validation: the heuristic best on the evaluated windows, and
    each policy's paired difference with it (``bsld_vs_test_best``), in ``choice`` and the notes."""
    mean = {r["policy"]: r["mean_bsld"] for r in summary}
    pool = [c.name for c in cands if c.kind == "dispatcher" and c.preset]
    test_best = min(pool, key=lambda k: mean[k])
    choice["test_best"] = test_best
    if test_best == choice["picked"]:
        choice["notes"].append(f"{test_best} is also the best heuristic on the evaluated windows")
        return
    ref = [r["mean_bsld"] for r in per_window[test_best]]
    parts = []
    for row in summary:
        if row["policy"] == test_best:
            continue
        mine = [r["mean_bsld"] for r in per_window[row["policy"]]]
        d, lo, hi = paired_difference_ci(mine, ref, confidence=confidence, n_resamples=n_resamples, seed=seed)
        row.update(bsld_diff_test_best=d, bsld_diff_test_best_low=lo, bsld_diff_test_best_high=hi)
        row["bsld_vs_test_best"] = vs_reference(d, lo, hi)
        if row["kind"] == "agent":
            parts.append(f"{row['policy']} {row['bsld_vs_test_best']}")
    against = f"; against it: {', '.join(parts)}" if parts else ""
    choice["notes"].append(
        f"the best heuristic on the evaluated windows is {test_best} ({mean[test_best]:.2f}, "
        f"{choice['picked']} {mean[choice['picked']]:.2f}): picking it there would be picking on the "
        f"test data{against}"
    )
