"""001's study end to end (``hpcgym study galleguillos2017``): runs, figures, table and findings.

``hpcgym study galleguillos2017 [--jobs N --seed S | --workload FILE] [-o DIR]`` re-runs
the study of Galleguillos et al. (2017, paper 001 in ``docs/REPRODUCTION.md``) on the
Eurora machine: the dispatchers SJF, LJF, EASY backfilling (EBF) and PRB -- and CPH when
it is named with ``--dispatchers``, see :data:`CP_DISPATCHERS` -- each with the wall-time
(W), data-driven (D, 001's profile predictor) and real (R) durations. 001's workload,
the Eurora PBS logs, is not public: by default the study runs on the synthetic Eurora
workload of :mod:`hpcgym.workloads.eurora`, or on any job table given with ``--workload``.

What 001 measures and how this module measures it:

* **Slowdown** ``(wait + duration) / duration`` of every job (001 section 5; plain, not
  bounded). Jobs of zero duration have none and are left out, counted in the notes.
* **Figure 3 and 4**: box plots (log scale) of the slowdown of each combination over all
  jobs and over the short (< 1 h), medium (1-12 h) and long (> 12 h) classes, leaving
  out, as 001 does, the jobs whose slowdown is 1 under every combination. The boxes
  show quartiles and median, the whiskers minimum and maximum, the triangle the mean, as
  in 001. The table's means are over the same jobs, so every combination is averaged
  over one job set.
* **Figure 5**: the distribution of the number of waiting jobs at every second,
  leaving out the seconds at which no combination has a waiting job. Event times are
  whole seconds, so the queue length is constant between events; the distribution is
  computed exactly from those intervals, weighted by their length, instead of
  enumerating seconds.
* **Figure 2**: the absolute error of each job's prediction at submission, W against D,
  from the EBF runs (D learns from the jobs that have ended, so its errors depend a
  little on the dispatcher; every run's MAE is in the table).
* **Findings**: 001's statements, each checked on these runs (see :func:`findings`),
  with a paired 95 % bootstrap interval of the per-job slowdown difference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.baselines import policy_specs
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.report import format_table
from hpcgym.common.stats import paired_difference_ci
from hpcgym.studies.eurora_runs import CP_DELTA, PREDICTORS, Run, cp_spec, find_run, run_all, write_results
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DISPATCHERS = ("sjf-list", "ljf-list", "easy", "prb")
"""001's heuristic dispatchers by hpcgym name, in its order: the study's default."""

CP_DISPATCHERS = ("cph",)
"""001's CP dispatcher (HCP v0 on CP-SAT, ``pip install 'hpcgym[cp]'``): in the study by
default when OR-Tools is installed. It makes each decision with a solver call of up to
its time limit (:data:`CP_DELTA`), so it is by far the slowest run: leave it out with
``--dispatchers sjf-list,ljf-list,easy,prb``."""

LABELS = {"sjf-list": "SJF", "ljf-list": "LJF", "easy": "EBF", "prb": "PRB", "cph": "CPH"}
"""hpcgym name -> 001's name."""

FIGURES = ("fig2_prediction_error", "fig3_slowdown", "fig4_slowdown_by_class", "fig5_queue")
"""File stems of the PNG figures :func:`write_outputs` writes (001's Figures 2-5)."""

CLASSES = {"short": (0.0, 3600.0), "medium": (3600.0, 43200.0), "long": (43200.0, np.inf)}
"""001's job classes by duration in seconds: [low, high)."""

COLUMNS = (
    "dispatcher",
    "prediction",
    "mean_slowdown",
    "median_slowdown",
    "mean_slowdown_short",
    "mean_slowdown_medium",
    "mean_slowdown_long",
    "mean_wait_min",
    "mean_queue",
    "prediction_mae_min",
    "decisions",
    "sim_seconds",
)


TABLE = (
    ("dispatcher", "dispatcher", ""),
    ("prediction", "pred", ""),
    ("mean_slowdown", "slowdown", ".2f"),
    ("median_slowdown", "median", ".2f"),
    ("mean_slowdown_short", "short", ".2f"),
    ("mean_slowdown_medium", "medium", ".2f"),
    ("mean_slowdown_long", "long", ".2f"),
    ("mean_wait_min", "wait [min]", ".1f"),
    ("mean_queue", "queue", ".2f"),
    ("prediction_mae_min", "MAE [min]", ".1f"),
)
"""The printed table: (key, header, format)."""


def available_dispatchers(names: Sequence[str] | None = None) -> list[str]:
    """The names of ``names`` that are registered dispatchers, in order.

    By default: :data:`DISPATCHERS`, and :data:`CP_DISPATCHERS` when OR-Tools (the ``cp``
    extra) is installed.
    """
    if names is None:
        from hpcgym.common.extras import is_available

        names = DISPATCHERS + (CP_DISPATCHERS if is_available("ortools") else ())
    known = set(policy_specs())
    return [n for n in names if n in known]


def run_galleguillos2017(
    workload: Workload,
    *,
    dispatchers: Sequence[str] | None = None,
    predictions: Sequence[str] = tuple(PREDICTORS),
    processes: int | None = None,
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
    cp_delta: float | None = CP_DELTA,
    runs_dir: Path | None = None,
) -> dict[str, Any]:
    """Run 001's study on ``workload`` (a heterogeneous job table on its machine).

    Args:
        workload: the jobs, already fitted to their machine (e.g. the synthetic Eurora
            workload of :func:`hpcgym.workloads.eurora.eurora`).
        dispatchers: hpcgym dispatcher names; by default those of :data:`DISPATCHERS`
            that are registered.
        predictions: 001's predictions to use, of ``W``, ``D``, ``R``.
        processes: parallel processes (default: one per core, at most one per run; 1
            runs in this process).
        progress: called with a line after every finished run.
        seed: seed of the bootstrap intervals.
        cp_delta: the CP dispatchers' time limit (s, :data:`CP_DELTA`; None: the
            preset's own, 002's 1 s).
        runs_dir: keep every finished run there and read back those already there
            (:func:`~hpcgym.studies.eurora_runs.run_all`); None: keep none.

    Returns:
        A JSON-ready dict: ``rows`` (one per run, :data:`COLUMNS`), ``findings``,
        ``notes``, ``jobs``, ``kept`` and the per-run arrays under ``_runs`` (not in
        the JSON) for :func:`galleguillos2017_figures`.

    Raises:
        InvalidConfigError: an unknown prediction letter, or no dispatcher to run.
    """
    bad = [p for p in predictions if p not in PREDICTORS]
    if bad:
        raise InvalidConfigError(f"predictions: unknown {bad}; 001's are {', '.join(PREDICTORS)}")
    names = list(dispatchers) if dispatchers is not None else available_dispatchers()
    known = set(policy_specs())
    unknown = [n for n in names if n.partition(":")[0] not in known]
    if unknown:
        raise UnknownNameError(f"dispatchers: unknown {unknown}; see `hpcgym policies`")
    if not names:
        raise InvalidConfigError("dispatchers: nothing to run")
    combos = [(d, p, cp_spec(d, cp_delta)) for d in names for p in predictions]
    ordered = run_all(
        workload,
        combos,
        processes=processes,
        progress=progress,
        label=lambda d: LABELS.get(d, d),
        runs_dir=runs_dir,
    )
    return summarize(workload, ordered, seed=seed)


def _slowdowns(workload: Workload, runs: Sequence[Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slowdown matrix runs x kept jobs, kept job indices, their durations)."""
    runtime = np.asarray(workload.runtime, dtype=np.float64)
    positive = runtime > 0
    sd = np.stack([(r.start - workload.submit + runtime) / np.where(positive, runtime, 1.0) for r in runs])
    changed = positive & np.any(sd != 1.0, axis=0)
    kept = np.flatnonzero(changed)
    return sd[:, kept], kept, runtime[kept]


def _queue_intervals(workload: Workload, runs: Sequence[Run]) -> tuple[np.ndarray, np.ndarray]:
    """Queue length of every run over the union of event intervals, and their lengths.

    Returns ``(lengths runs x intervals, durations)`` with the intervals where no run has
    a waiting job left out (001's Figure 5).
    """
    submit = np.asarray(workload.submit, dtype=np.float64)
    cuts = np.unique(np.concatenate([submit] + [r.start for r in runs]))
    if len(cuts) < 2:
        return np.zeros((len(runs), 0)), np.zeros(0)
    # queue length on [cuts[i], cuts[i+1]) = arrived by cuts[i] - started by cuts[i]
    arrived = np.searchsorted(np.sort(submit), cuts[:-1], side="right")
    lengths = np.stack([arrived - np.searchsorted(np.sort(r.start), cuts[:-1], side="right") for r in runs])
    dur = np.diff(cuts)
    busy = np.any(lengths > 0, axis=0)
    return lengths[:, busy], dur[busy]


def _weighted_quantiles(values: np.ndarray, weights: np.ndarray, qs: Sequence[float]) -> list[float]:
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cw = np.cumsum(w) / w.sum()
    return [float(v[min(int(np.searchsorted(cw, q)), len(v) - 1)]) for q in qs]


def _box(values: np.ndarray, weights: np.ndarray | None = None) -> dict[str, float]:
    """Box-plot statistics as 001 draws them: min/max whiskers, quartiles, median, mean."""
    if len(values) == 0:
        return {k: float("nan") for k in ("whislo", "q1", "med", "q3", "whishi", "mean")}
    if weights is None:
        q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
        mean = values.mean()
    else:
        q1, med, q3 = _weighted_quantiles(values, weights, (0.25, 0.5, 0.75))
        mean = float((values * weights).sum() / weights.sum())
    return {
        "whislo": float(values.min()),
        "q1": float(q1),
        "med": float(med),
        "q3": float(q3),
        "whishi": float(values.max()),
        "mean": float(mean),
    }


def summarize(workload: Workload, runs: Sequence[Run], *, seed: int = 0) -> dict[str, Any]:
    """Table, box statistics and findings of finished runs (see :func:`run_galleguillos2017`)."""
    sd, kept, dur = _slowdowns(workload, runs)
    lengths, weights = _queue_intervals(workload, runs)
    runtime = np.asarray(workload.runtime, dtype=np.float64)
    n_zero = int(np.sum(runtime <= 0))
    rows: list[dict[str, Any]] = []
    boxes: dict[str, dict[str, Any]] = {}
    for i, r in enumerate(runs):
        key = f"{LABELS.get(r.dispatcher, r.dispatcher)}-{r.prediction}"
        row: dict[str, Any] = {
            "dispatcher": r.dispatcher,
            "prediction": r.prediction,
            "mean_slowdown": float(sd[i].mean()) if len(kept) else float("nan"),
            "median_slowdown": float(np.median(sd[i])) if len(kept) else float("nan"),
        }
        boxes[key] = {"all": _box(sd[i])}
        for c, (lo, hi) in CLASSES.items():
            m = (dur >= lo) & (dur < hi)
            row[f"mean_slowdown_{c}"] = float(sd[i][m].mean()) if m.any() else float("nan")
            boxes[key][c] = _box(sd[i][m])
        wait = r.start - workload.submit
        row["mean_wait_min"] = float(wait.mean() / 60.0)
        row["mean_queue"] = float((lengths[i] * weights).sum() / weights.sum()) if len(weights) else 0.0
        boxes[key]["queue"] = _box(lengths[i].astype(np.float64), weights)
        row["prediction_mae_min"] = float(np.abs(r.first_prediction - runtime).mean() / 60.0)
        row["decisions"] = r.decisions
        row["sim_seconds"] = r.sim_seconds
        rows.append(row)
    classes = {c: int(np.sum((dur >= lo) & (dur < hi))) for c, (lo, hi) in CLASSES.items()}
    notes = [
        f"{len(kept):,} of {len(workload):,} jobs have a slowdown other than 1 under some combination; "
        "the slowdown figures and means are over them (001's Figure 3 selection)",
        f"kept jobs by class: {', '.join(f'{c} {n:,}' for c, n in classes.items())}",
    ]
    if n_zero:
        notes.append(f"{n_zero:,} jobs of zero duration have no slowdown and are left out")
    result: dict[str, Any] = {
        "study": "galleguillos2017",
        "trace": workload.name,
        "jobs": len(workload),
        "kept": len(kept),
        "kept_by_class": classes,
        "rows": rows,
        "boxes": boxes,
        "notes": notes,
    }
    result["findings"] = findings(runs, sd, dur, rows, seed=seed)
    result["_runs"] = runs
    result["_workload"] = workload
    return result


def _paired(sd: np.ndarray, a: int, b: int, mask: np.ndarray | None, seed: int) -> dict[str, float]:
    x, y = sd[a], sd[b]
    if mask is not None:
        x, y = x[mask], y[mask]
    mean, low, high = paired_difference_ci(x, y, seed=seed, n_resamples=999)
    return {"mean_difference": mean, "ci_low": low, "ci_high": high, "jobs": len(x)}


def findings(
    runs: Sequence[Run], sd: np.ndarray, dur: np.ndarray, rows: Sequence[dict[str, Any]], *, seed: int = 0
) -> list[dict[str, Any]]:
    """001's statements, each checked on these runs.

    A statement "X lowers slowdown" holds when the paired 95 % bootstrap interval of the
    per-job difference (X minus the reference, over the kept jobs) lies below 0; "no
    change" holds when the interval contains 0. Returned as dicts with ``claim``,
    ``holds`` (True, False, or None when a run is missing) and the figures.
    """
    out: list[dict[str, Any]] = []

    def check(claim: str, d: str, better: str, worse: str, expect: str) -> None:
        a, b = find_run(runs, d, better), find_run(runs, d, worse)
        if a is None or b is None:
            out.append({"claim": claim, "holds": None, "why": "a run is missing"})
            return
        stats = _paired(sd, a, b, None, seed)
        lo, hi = stats["ci_low"], stats["ci_high"]
        if not (np.isfinite(lo) and np.isfinite(hi)):
            out.append({"claim": claim, "holds": None, "why": "fewer than two kept jobs", **stats})
            return
        holds = {"lower": hi < 0, "higher": lo > 0, "same": lo <= 0 <= hi}[expect]
        out.append({"claim": claim, "holds": bool(holds), **stats})

    for d in ("sjf-list", "easy"):
        name = LABELS[d]
        check(f"D lowers {name}'s slowdown against W", d, "D", "W", "lower")
        check(f"R lowers {name}'s slowdown against W", d, "R", "W", "lower")
    check("D raises LJF's slowdown against W", "ljf-list", "D", "W", "higher")
    check("R raises LJF's slowdown against W", "ljf-list", "R", "W", "higher")
    check("R lowers CPH's slowdown against W", "cph", "R", "W", "lower")
    check("D raises CPH's slowdown against W", "cph", "D", "W", "higher")
    check("R leaves PRB's slowdown unchanged against W", "prb", "R", "W", "same")
    check("D leaves PRB's slowdown unchanged against W", "prb", "D", "W", "same")
    # short jobs gain most: the relative gain of the mean slowdown, W -> D, per class
    for d in ("sjf-list", "easy"):
        gains = {}
        a, b = find_run(runs, d, "D"), find_run(runs, d, "W")
        if a is None or b is None:
            continue
        for c, (lo, hi) in CLASSES.items():
            m = (dur >= lo) & (dur < hi)
            if m.any():
                gains[c] = float(1.0 - sd[a][m].mean() / sd[b][m].mean())
        short = gains.get("short", float("nan"))
        others = [v for c, v in gains.items() if c != "short"]
        if not np.isfinite(short) or not others:
            out.append(
                {
                    "claim": f"short jobs gain most from D under {LABELS[d]}",
                    "holds": None,
                    "why": "a class has no kept jobs",
                    "relative_gain": gains,
                }
            )
            continue
        out.append(
            {
                "claim": f"short jobs gain most from D under {LABELS[d]} (relative drop of mean slowdown)",
                "holds": all(short > v for v in others if np.isfinite(v)),
                "relative_gain": gains,
            }
        )
    # PRB has the shortest queue among the dispatchers with W
    w_rows = [r for r in rows if r["prediction"] == "W"]
    if any(r["dispatcher"] == "cph" for r in w_rows) and len(w_rows) > 2:
        ranked = sorted(w_rows, key=lambda r: r["mean_slowdown"])
        out.append(
            {
                "claim": "PRB and CPH have the lowest mean slowdown with W",
                "holds": {r["dispatcher"] for r in ranked[:2]} == {"prb", "cph"},
                "mean_slowdown": {
                    LABELS.get(r["dispatcher"], r["dispatcher"]): r["mean_slowdown"] for r in w_rows
                },
            }
        )
    if any(r["dispatcher"] == "prb" for r in w_rows) and len(w_rows) > 1:
        best = min(w_rows, key=lambda r: r["mean_queue"])
        out.append(
            {
                "claim": "PRB has the shortest mean queue among the dispatchers with W",
                "holds": best["dispatcher"] == "prb",
                "mean_queue": {LABELS.get(r["dispatcher"], r["dispatcher"]): r["mean_queue"] for r in w_rows},
            }
        )
    return out


# ----------------------------------------------------------------------------- figures
def galleguillos2017_figures(result: dict[str, Any]) -> dict[str, Figure]:
    """001's Figures 2-5 from a result of :func:`run_galleguillos2017`, by file stem.

    ``fig2_prediction_error``, ``fig3_slowdown``, ``fig4_slowdown_by_class`` and
    ``fig5_queue``: :class:`matplotlib.figure.Figure` objects of their own (no pyplot).

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    boxes: dict[str, dict[str, Any]] = result["boxes"]
    labels = list(boxes)
    figs: dict[str, Figure] = {}

    def draw(ax: Any, key: str, title: str, ylabel: str) -> None:
        stats = [dict(boxes[k][key], label=k) for k in labels]
        ok = [s for s in stats if np.isfinite(s["med"])]
        if ok:
            ax.bxp(ok, showmeans=True, showfliers=False, meanprops={"marker": "^"})
            ax.set_yscale("log")
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.tick_params(axis="x", labelrotation=60)

    fig = Figure(figsize=(11, 4.5), layout="constrained")
    title = "Slowdown of each method (jobs of slowdown 1 in every run left out)"
    draw(fig.subplots(), "all", title, "slowdown")
    figs["fig3_slowdown"] = fig
    fig = Figure(figsize=(11, 11), layout="constrained")
    for ax, c in zip(fig.subplots(3, 1), CLASSES, strict=True):
        draw(ax, c, f"{c} jobs ({result['kept_by_class'][c]:,})", "slowdown")
    figs["fig4_slowdown_by_class"] = fig
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    draw(fig.subplots(), "queue", "Waiting jobs at every second (seconds with none left out)", "jobs")
    figs["fig5_queue"] = fig

    runs: Sequence[Run] = result["_runs"]
    runtime = np.asarray(result["_workload"].runtime, dtype=np.float64)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    bins = np.concatenate(([0.0], np.logspace(-1, np.log10(24 * 60), 40)))
    for p in ("W", "D"):
        i = find_run(runs, "easy", p)
        if i is None:
            i = next((k for k, r in enumerate(runs) if r.prediction == p), None)
        if i is None:
            continue
        err = np.abs(runs[i].first_prediction - runtime) / 60.0
        ax.hist(err, bins=list(bins), histtype="step", label=f"{p}: MAE {err.mean():.1f} min")
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_yscale("log")
    ax.set_xlabel("absolute error of the prediction at submission [min]")
    ax.set_ylabel("jobs")
    ax.set_title("Prediction error: data-driven (D) against wall-time (W)")
    ax.legend()
    figs["fig2_prediction_error"] = fig
    return figs


def render(result: dict[str, Any]) -> str:
    """The table, the findings and the notes as text."""
    rows = [dict(r, dispatcher=LABELS.get(r["dispatcher"], r["dispatcher"])) for r in result["rows"]]
    lines = [
        f"001 (Galleguillos et al. 2017) on {result['trace']}: {result['jobs']:,} jobs",
        format_table(rows, TABLE),
        "",
        "findings (paired 95 % bootstrap interval of per-job slowdown differences):",
    ]
    for f in result["findings"]:
        mark = {True: "yes", False: "no", None: "n/a"}[f["holds"]]
        detail = ""
        if "ci_low" in f:
            ci = f"[{f['ci_low']:+.3g}, {f['ci_high']:+.3g}]"
            detail = f" (mean difference {f['mean_difference']:+.3g}, 95 % CI {ci})"
        elif "relative_gain" in f:
            detail = " (" + ", ".join(f"{c} {v:+.1%}" for c, v in f["relative_gain"].items()) + ")"
        elif "mean_queue" in f:
            detail = " (" + ", ".join(f"{k} {v:.2f}" for k, v in f["mean_queue"].items()) + ")"
        elif "mean_slowdown" in f:
            detail = " (" + ", ".join(f"{k} {v:.2f}" for k, v in f["mean_slowdown"].items()) + ")"
        lines.append(f"  {mark:3}  {f['claim']}{detail}")
    lines += ["", *(f"note: {n}" for n in result["notes"])]
    return "\n".join(lines)


def write_outputs(result: dict[str, Any], out: Path, *, plots: bool = True) -> list[Path]:
    """Write ``results.json``, ``results.csv`` and (with matplotlib) the figures to ``out``."""
    return write_results(result, out, COLUMNS, galleguillos2017_figures, plots=plots)
