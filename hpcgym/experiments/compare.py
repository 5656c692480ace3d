"""``hpcgym compare``: several policies and predictors on one trace, as a table, CSV/JSON and a plot.

Every run of a comparison is averaged over the *same* jobs, chosen by ``measure``
(:data:`hpcgym.sim.metrics.MEASURED_SETS`): by default ``trimmed``, all but the first and
the last 1 % of jobs by submission, decided from the workload alone. A single run's
default, 004's steady state, leaves out the jobs that end after the last arrival, so it
depends on the schedule: on an overloaded trace FCFS, whose queue is still draining
long after the last arrival, would be averaged over far fewer jobs than EASY++ (5,964
against 9,792 of lublin_256's 10,000), and over the ones it made wait least.
``measure="steady-state"`` keeps 004's rule but takes the jobs every run's set keeps.

>>> from hpcgym.workloads import load_default
>>> rows, schedules = compare(load_default().window(300), ["fcfs", "easy"], ["walltime"])
>>> [(r["policy"], r["jobs_measured"], r["measured_set"]) for r in rows]
[('fcfs', 294, 'trimmed'), ('easy', 294, 'trimmed')]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from hpcgym.baselines import easy_extra, policy_specs, preset_predictor, resolve_policy_name, run_policy
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.extras import require
from hpcgym.common.files import atomic_path
from hpcgym.common.report import with_minutes
from hpcgym.sim import (
    MEASURED_SETS,
    SMALL_SET_JOBS,
    SMALL_SET_SHARE,
    Schedule,
    bounded_slowdown,
    common_measured_jobs,
    compute_metrics,
    measurement_notes,
    prediction_metrics,
)
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_SUFFIXES = (".png", ".pdf", ".svg")
"""File types :func:`plot` writes (matplotlib picks the format from the suffix)."""


def check_names(policies: Sequence[str], predictors: Sequence[str | None]) -> None:
    """Fail fast, before any simulation, on an empty list or a name that is not registered.

    Raises:
        InvalidConfigError: no policy or no predictor given.
        UnknownNameError: a policy or predictor name is not known (the message lists the known ones).
    """
    if not policies:
        raise InvalidConfigError(
            f"--policies: no policy given; give a comma-separated list of {', '.join(policy_specs())}"
        )
    if not predictors:
        raise InvalidConfigError(
            "--predictors: no predictor given; give a comma-separated list of names "
            "(hpcgym predictors) or 'preset' for each preset's own"
        )
    for policy in policies:
        resolve_policy_name(policy)
    for predictor in predictors:
        preset_predictor(resolve_policy_name(policies[0]), predictor)


def check_plot_path(path: Path) -> None:
    """Fail fast when ``path`` cannot be plotted: a suffix :func:`plot` does not write, or no matplotlib.

    Raises:
        InvalidConfigError: the suffix is not one of :data:`PLOT_SUFFIXES`.
        MissingExtraError: matplotlib is not installed (the message names the extra).
    """
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise InvalidConfigError(
            f"--plot {path}: the plot is written as PNG, PDF or SVG; "
            f"the file name must end in {', '.join(PLOT_SUFFIXES)}"
        )
    require("plot", what=f"--plot {path}")


def compare(
    workload: Workload,
    policies: Sequence[str],
    predictors: Sequence[str | None],
    *,
    measure: str = "trimmed",
    include_all: bool = False,
    progress: bool = False,
    extra: str | None = None,
) -> tuple[list[dict[str, Any]], list[Schedule]]:
    """Run every policy with every predictor (``None`` = the preset's own) on ``workload``.

    Args:
        workload: the jobs and machine.
        policies: preset names (``hpcgym policies``).
        predictors: predictor names (``hpcgym predictors``); ``None`` is each preset's own.
        measure: the jobs every run is averaged over (:data:`~hpcgym.sim.metrics.MEASURED_SETS`):
            ``trimmed`` (default), ``steady-state`` (the jobs 004's rule keeps in every
            run) or ``all``.
        include_all: the same as ``measure="all"``.
        progress: one line per run on stderr.
        extra: how every EASY-family preset among ``policies`` counts its extra
            processors (``"classic"`` or ``"all"``); the other presets run as they are.

    Returns:
        One row per run (policy-major; :func:`hpcgym.baselines.run.run_policy`'s row with the
        averages, ``prediction`` and ``notes`` recomputed over the common set, plus
        ``mean_wait_min`` and ``jobs_measured_steady_state``, the size of the run's own
        004 set) and the schedules. Every row has the same ``jobs_measured``.

    Raises:
        InvalidConfigError, UnknownNameError: bad names, before anything runs.
    """
    measure = "all" if include_all else measure
    if measure not in MEASURED_SETS:
        raise InvalidConfigError(f"--measure: unknown set {measure!r}; known: {', '.join(MEASURED_SETS)}")
    check_names(policies, predictors)
    results = []
    for policy in policies:
        for predictor in predictors:
            if progress:
                print(f"  {policy} / {predictor or 'preset'} ...", file=sys.stderr, flush=True)
            rule = extra if easy_extra(policy) is not None else None
            results.append(run_policy(workload, policy, predictor, progress=False, extra=rule))
    schedules = [r.schedule for r in results]
    mask = common_measured_jobs(schedules, measure)
    n, m = len(workload), int(mask.sum())
    notes = _notes(results, m, n, measure)
    rows = []
    for r in results:
        own = r.row["jobs_measured"]  # run_policy measures 004's steady state of this run alone
        row = {**r.row, **compute_metrics(r.schedule, jobs=mask, measure=measure)}
        row["prediction"] = prediction_metrics(r.schedule, jobs=mask)
        row["include_all"] = measure == "all"
        row["jobs_measured_steady_state"] = own
        row["notes"] = notes
        rows.append(with_minutes(row))
    return rows, schedules


def _notes(results: Sequence[Any], measured: int, total: int, measure: str) -> list[str]:
    if measure == "steady-state":
        rule = "the jobs that 004's rule (first 1 % to end, ending after the last arrival) keeps in every run"
    else:
        rule = MEASURED_SETS[measure]
    notes = [f"every run is averaged over the same {measured:,} of {total:,} jobs ({measure}: {rule})"]
    notes += measurement_notes(measured, total, measure)
    if measure == "steady-state":
        for r in results:
            own = r.row["jobs_measured"]
            if own < SMALL_SET_JOBS or own < SMALL_SET_SHARE * total:
                notes.append(
                    f"{r.row['policy']} / {r.row['predictor']}: 004's rule alone keeps only {own:,} of "
                    f"{total:,} jobs (the rest end after the last arrival or are the first 1 % to end)"
                )
    return notes


def _spans_decades(values: Sequence[float], ratio: float = 30.0) -> bool:
    """True when ``values`` are positive and the largest is ``ratio`` times the smallest or more."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=np.float64)
    return bool(len(v) and (v > 0).all() and v.max() >= ratio * v.min())


def _short(value: float) -> str:
    """A bar's label: three significant digits, thousands written out (39,811, not 3.98e+04)."""
    if not np.isfinite(value):
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def plot(
    path: str | Path,
    rows: Sequence[dict[str, Any]],
    schedules: Sequence[Schedule],
    title: str,
    measured: np.ndarray | None = None,
) -> None:
    """Write :func:`comparison_figure` to ``path`` (``.png``, ``.pdf`` or ``.svg``).

    Raises:
        InvalidConfigError: unknown suffix or no matplotlib (:func:`check_plot_path`).
    """
    path = Path(path)
    check_plot_path(path)
    fig = comparison_figure(rows, schedules, title, measured)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)


def comparison_figure(
    rows: Sequence[dict[str, Any]],
    schedules: Sequence[Schedule],
    title: str,
    measured: np.ndarray | None = None,
) -> Figure:
    """Mean wait and bounded slowdown as bars grouped by policy, and ECDFs of the per-job values.

    Four panels: mean wait and mean bounded slowdown (one group of bars per policy, a
    bar per predictor, a log axis when the values span decades) and the empirical
    distributions of every measured job's wait and bounded slowdown (one line per
    run: colour = policy, dash = predictor). ``measured`` is the jobs the averages count
    (by default every job); the distributions show the same jobs.

    A :class:`matplotlib.figure.Figure` of its own: no pyplot state and no change of
    backend, so it is safe in an interactive session (a notebook displays it as is).

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    policies = list(dict.fromkeys(r["policy"] for r in rows))
    # a preset adds its own modifiers (easy++ plans with "real+pcor" when given "real"):
    # one colour and one dash per predictor as given, whatever the preset adds
    base = [str(r["predictor"]).split("+")[0] for r in rows]
    predictors = list(dict.fromkeys(base))
    policy_color = {p: colormaps["tab10"](i % 10) for i, p in enumerate(policies)}
    predictor_color = {p: colormaps["Set2"](i % 8) for i, p in enumerate(predictors)}
    dashes: list[Literal["-", "--", ":", "-."]] = ["-", "--", ":", "-."]
    predictor_dash = {p: dashes[i % len(dashes)] for i, p in enumerate(predictors)}

    fig = Figure(figsize=(11, 8.5), dpi=100, layout="constrained")
    (ax_wait, ax_bsld), (ax_wait_cdf, ax_bsld_cdf) = fig.subplots(2, 2)
    groups = {p: [i for i, r in enumerate(rows) if r["policy"] == p] for p in policies}
    width = 0.8 / max(len(g) for g in groups.values())
    for ax, key, label in (
        (ax_wait, "mean_wait_min", "mean wait [min]"),
        (ax_bsld, "mean_bsld", "mean bounded slowdown"),
    ):
        seen: set[str] = set()
        for x, (_, members) in enumerate(groups.items()):
            left = x - width * (len(members) - 1) / 2
            for k, i in enumerate(members):
                pred = base[i]
                value = float(rows[i][key])
                bars = ax.bar(
                    left + k * width,
                    value if np.isfinite(value) else 0.0,
                    width * 0.95,
                    color=predictor_color[pred],
                    edgecolor="0.3",
                    linewidth=0.5,
                    label=None if pred in seen else pred,
                )
                seen.add(pred)
                ax.bar_label(bars, labels=[_short(value)], fontsize=8)
        ax.set_xticks(range(len(policies)), policies, fontsize=10)
        ax.set_ylabel(label, fontsize=10)
        if _spans_decades([float(r[key]) for r in rows]):
            ax.set_yscale("log")
            ax.set_ylabel(f"{label} (log scale)", fontsize=10)
        ax.margins(y=0.12)
        ax.grid(axis="y", alpha=0.3, which="both")
        ax.set_axisbelow(True)
    ax_wait.legend(title="predictor", fontsize=8, title_fontsize=8, loc="best")

    for r, pred, s in zip(rows, base, schedules, strict=True):
        keep = np.ones(len(s.workload), dtype=bool) if measured is None else measured
        wait = (s.start - s.workload.submit)[keep]
        run = (s.end - s.start)[keep]
        style = {"color": policy_color[r["policy"]], "linestyle": predictor_dash[pred]}
        if len(wait):
            ax_wait_cdf.ecdf(wait / 60.0, **style)
            ax_bsld_cdf.ecdf(bounded_slowdown(wait, run), **style)
    ax_wait_cdf.set_xscale("symlog", linthresh=1.0)
    ax_wait_cdf.set_xlim(left=0)
    ax_wait_cdf.set_xlabel("wait [min] (linear below 1 min, log above)", fontsize=10)
    ax_bsld_cdf.set_xscale("log")
    ax_bsld_cdf.set_xlabel("bounded slowdown (log scale)", fontsize=10)
    ax_wait_cdf.set_title("wait of every measured job", fontsize=10)
    ax_bsld_cdf.set_title("bounded slowdown of every measured job", fontsize=10)
    for ax in (ax_wait_cdf, ax_bsld_cdf):
        ax.set_ylabel("fraction of measured jobs", fontsize=10)
        ax.set_ylim(0, 1.01)
        ax.grid(alpha=0.3, which="major")
    handles = [Line2D([], [], color=policy_color[p], label=p) for p in policies]
    if len(predictors) > 1:
        handles += [Line2D([], [], color="0.3", linestyle=predictor_dash[p], label=p) for p in predictors]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(len(handles), 8),
        fontsize=9,
        title="lines: colour = policy" + (", dash = predictor" if len(predictors) > 1 else ""),
        title_fontsize=9,
        frameon=False,
    )
    fig.suptitle(title, fontsize=11)
    return fig
