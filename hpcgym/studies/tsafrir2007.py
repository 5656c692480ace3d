"""``hpcgym reproduce tsafrir2007``: 004's Tables 2, 3 and 6 (and 4, 5), recomputed on one trace.

``hpcgym reproduce tsafrir2007 --trace PATH [--procs N] [--json]`` runs the eight
schedulers of Tsafrir, Etsion and Feitelson (2007) Tables 2, 3 and 6 (EASY, EASY_PCOR,
EASY+, EASY_SJBF, EASY++, PERFECT++, X2, SJF) on one trace and prints the tables'
layout: average wait, average bounded slowdown and prediction accuracy, each with its
change relative to EASY, and the paper's figures beside ours when the trace is one of
the paper's (SDSC-SP2, CTC-SP2, KTH-SP2, SDSC-BLUE).

Defaults follow the paper: the machine size of its Table 1 when the trace is one of
its four (CTC-SP2: 512 CPUs, not the file header's 338), jobs are not killed at their
estimate, averages leave out warm-up and cool-down, and EASY counts its *extra*
processors the classic way (``--extra classic``; see
:class:`hpcgym.baselines.EasyBackfilling`). ``--predictability`` adds Tables 4 and 5
(start times against first reservations) for EASY, EASY+ and EASY++.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.baselines import EXTRA_RULES, EasyBackfilling, make_policy, preset_predictor
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path
from hpcgym.sim import Simulator, compute_metrics, measurement_notes, predictability, prediction_metrics
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAPER_LABELS = {
    "easy": "EASY",
    "easy-pcor": "EASY_PCOR",
    "easy+": "EASY+",
    "easy-sjbf": "EASY_SJBF",
    "easy++": "EASY++",
    "perfect++": "PERFECT++",
    "x2": "X2",
    "sjf": "SJF",
}
"""Preset name -> the scheduler's name in the paper."""

TSAFRIR2007_TABLES: dict[str, tuple[str, ...]] = {
    "2": ("easy", "easy-pcor", "easy+"),
    "3": ("easy", "easy-sjbf", "easy++", "perfect++"),
    "6": ("easy", "x2", "sjf", "easy++"),
}
"""Table number -> the presets in its columns, EASY first (the reference)."""

# 004 Tables 2, 3 and 6: (average wait [min], average bounded slowdown, accuracy [%]);
# None where the paper gives no figure (Table 2 omits the accuracy of nothing, Table 3 has
# no EASY_PCOR and so on: every scheduler appears in at least one of the three tables).
TSAFRIR2007_PAPER: dict[str, dict[str, tuple[float, float, float]]] = {
    "SDSC": {
        "easy": (363, 99, 32),
        "easy-pcor": (360, 93, 32),
        "easy+": (326, 86, 60),
        "easy-sjbf": (361, 87, 32),
        "easy++": (327, 70, 60),
        "perfect++": (278, 58, 100),
        "x2": (333, 89, 16),
        "sjf": (535, 69, 32),
    },
    "CTC": {
        "easy": (21, 4.6, 39),
        "easy-pcor": (21, 4.5, 39),
        "easy+": (16, 3.3, 62),
        "easy-sjbf": (19, 3.9, 39),
        "easy++": (14, 2.9, 62),
        "perfect++": (19, 2.8, 100),
        "x2": (20, 4.1, 20),
        "sjf": (13, 2.8, 39),
    },
    "KTH": {
        "easy": (114, 90, 47),
        "easy-pcor": (115, 90, 47),
        "easy+": (96, 65, 60),
        "easy-sjbf": (102, 73, 47),
        "easy++": (95, 57, 61),
        "perfect++": (91, 50, 100),
        "x2": (102, 80, 24),
        "sjf": (79, 45, 47),
    },
    "BLUE": {
        "easy": (130, 35, 31),
        "easy-pcor": (128, 36, 31),
        "easy+": (102, 26, 61),
        "easy-sjbf": (102, 21, 31),
        "easy++": (87, 19, 62),
        "perfect++": (87, 13, 100),
        "x2": (115, 30, 16),
        "sjf": (81, 25, 31),
    },
}
"""The paper's figures by trace and preset."""

TSAFRIR2007_CORRECTIONS = {
    "SDSC": {"easy-pcor": (0.09, 0.33), "easy+": (0.56, 0.64)},
    "CTC": {"easy-pcor": (0.12, 0.41), "easy+": (0.63, 0.69)},
    "KTH": {"easy-pcor": (0.02, 0.24), "easy+": (0.53, 0.57)},
    "BLUE": {"easy-pcor": (0.13, 0.48), "easy+": (0.60, 0.69)},
}
"""004 Table 2, last column: prediction corrections per job, mean and standard deviation."""

TSAFRIR2007_PREDICTABILITY_RUNS: tuple[tuple[str, str | None], ...] = (
    ("easy", None),
    ("easy+", "user-avg-imm"),
    ("easy++", "user-avg-imm"),
)
"""004 section 4: the schedulers of Tables 4 and 5, with the "immediate" user average."""

PREDICTABILITY_KEYS = (
    "reserved_rate",
    "abs_diff_mean_s",
    "abs_diff_median_s",
    "abs_diff_std_s",
    "delayed_rate",
    "delay_mean_s",
    "delay_median_s",
    "delay_std_s",
)
"""The figures of 004 Tables 4 and 5, in their column order."""

# 004 Tables 4 and 5, per scheduler: reserved [% of jobs], |start - reservation| mean,
# median, std [min]; delayed [% of jobs], delay mean, median, std [min].
TSAFRIR2007_PREDICTABILITY_PAPER: dict[str, dict[str, tuple[float, ...]]] = {
    "SDSC": {
        "easy": (17, 171, 64, 471, 1.5, 513, 0.9, 1442),
        "easy+": (14, 93, 20, 174, 3.8, 92, 8.6, 223),
        "easy++": (15, 91, 19, 168, 3.8, 86, 8.3, 206),
    },
    "CTC": {
        "easy": (6.8, 51, 8.3, 92, 0.7, 72, 1.9, 119),
        "easy+": (5.4, 29, 2.2, 74, 1.3, 37, 3.0, 102),
        "easy++": (5.7, 27, 1.9, 69, 1.3, 34, 2.6, 94),
    },
    "KTH": {
        "easy": (15, 38, 6.3, 84, 0.1, 58, 0.7, 108),
        "easy+": (14, 35, 3.2, 90, 1.8, 52, 11, 107),
        "easy++": (14, 35, 3.2, 88, 1.8, 44, 9.9, 87),
    },
    "BLUE": {
        "easy": (9.6, 68, 16, 212, 0.9, 48, 0.8, 318),
        "easy+": (7.5, 45, 3.3, 191, 1.8, 35, 2.2, 154),
        "easy++": (7.8, 45, 3.4, 184, 1.8, 31, 2.1, 136),
    },
}
"""The paper's predictability figures by trace and preset."""

TRACE_PREFIXES = (("SDSC-SP2", "SDSC"), ("CTC-SP2", "CTC"), ("KTH-SP2", "KTH"), ("SDSC-BLUE", "BLUE"))
"""How the file names of the paper's traces start -> the paper's short names."""


def paper_trace_key(name: str) -> str | None:
    """The paper's short name (SDSC, CTC, KTH, BLUE) of a trace file name, or None."""
    upper = name.upper()
    for prefix, key in TRACE_PREFIXES:
        if upper.startswith(prefix):
            return key
    return None


def simulate_preset(
    workload: Workload,
    policy: str,
    predictor: str | None = None,
    *,
    extra: str = "classic",
    record_reservations: bool = False,
) -> dict[str, Any]:
    """Run one preset and return its figures (wait in minutes, bsld, accuracy in %, ...).

    With ``record_reservations`` the dispatcher records every job's first reservation as
    the paper does (as the predicted ends give it, even if already past) and the result
    has ``predictability``.
    """
    dispatcher = make_policy(policy)
    if isinstance(dispatcher, EasyBackfilling):
        dispatcher.extra = extra
        dispatcher.record_reservations = record_reservations
        dispatcher.record_past_reservations = record_reservations
    sim = Simulator(workload, predictor=preset_predictor(policy, predictor))
    schedule = sim.run(dispatcher, progress=False)
    metrics = compute_metrics(schedule)
    pm = prediction_metrics(schedule)
    out: dict[str, Any] = {
        "policy": policy,
        "paper_name": PAPER_LABELS.get(policy, policy),
        "predictor": schedule.predictor,
        "wait_min": metrics["mean_wait_s"] / 60.0,
        "bsld": metrics["mean_bsld"],
        "accuracy_pct": 100.0 * pm["accuracy"],
        "mae_min": pm["mae_s"] / 60.0,
        "under_rate": pm["under_rate"],
        "over_rate": pm["over_rate"],
        "corrections_mean": pm["corrections_mean"],
        "corrections_std": pm["corrections_std"],
        "utilization": metrics["utilization"],
        "jobs_measured": metrics["jobs_measured"],
        "sim_seconds": schedule.sim_seconds,
    }
    if record_reservations:
        out["predictability"] = predictability(schedule)
    return out


def _changes(values: list[float]) -> list[float | None]:
    """Percent change of each value against the first (None for the first itself)."""
    ref = values[0]
    return [None, *(100.0 * (v / ref - 1.0) if ref else float("nan") for v in values[1:])]


def run_tsafrir2007(
    workload: Workload,
    *,
    extra: str = "classic",
    predictability_runs: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Tables 2, 3 and 6 of Tsafrir et al. (2007) on ``workload``.

    Args:
        workload: the trace (with the machine size to simulate).
        extra: how EASY counts extra processors (``"classic"``, as in the paper's
            simulator and the library default, or ``"all"``; see
            :class:`~hpcgym.baselines.EasyBackfilling`).
        predictability_runs: also run Tables 4 and 5 (004 section 4): EASY, and EASY+ and
            EASY++ with the "immediate" user average, recording every job's first
            reservation (the dispatcher is then asked at every event, which is slower).
        progress: called with one line per simulation.

    Returns:
        A JSON-ready dict: ``trace``, ``paper_trace`` (SDSC, CTC, KTH, BLUE or None),
        ``procs``, ``jobs``, ``extra``, ``results`` (figures per preset), ``tables``
        (per table: columns, and per metric our value, the change against EASY and the
        paper's value and change where known), ``predictability`` (None unless asked:
        per scheduler, ours and the paper's figures in :data:`PREDICTABILITY_KEYS` order,
        rates in % and times in minutes).
    """
    if extra not in EXTRA_RULES:
        raise InvalidConfigError(f"--extra must be one of {', '.join(EXTRA_RULES)}; got {extra!r}")
    key = paper_trace_key(workload.name)
    policies = list(dict.fromkeys(p for cols in TSAFRIR2007_TABLES.values() for p in cols))
    results: dict[str, dict[str, Any]] = {}
    for i, policy in enumerate(policies, 1):
        t0 = time.perf_counter()
        r = simulate_preset(workload, policy, extra=extra)
        results[policy] = r
        if progress is not None:
            progress(
                f"[{i}/{len(policies)}] {PAPER_LABELS[policy]:<9} ({r['predictor']}): "
                f"wait {r['wait_min']:.1f} min, bsld {r['bsld']:.2f}, "
                f"accuracy {r['accuracy_pct']:.1f} % ({time.perf_counter() - t0:.1f} s)"
            )
    predictability_results: dict[str, Any] | None = None
    if predictability_runs:
        predictability_results = {}
        runs = TSAFRIR2007_PREDICTABILITY_RUNS
        for i, (policy, pred) in enumerate(runs, 1):
            t0 = time.perf_counter()
            r = simulate_preset(workload, policy, pred, extra=extra, record_reservations=True)
            p = r["predictability"]
            predictability_results[policy] = {
                "predictor": r["predictor"],
                "ours": [100 * p[k] if k.endswith("rate") else p[k] / 60.0 for k in PREDICTABILITY_KEYS],
                "paper": list(TSAFRIR2007_PREDICTABILITY_PAPER[key][policy]) if key else None,
            }
            if progress is not None:
                progress(
                    f"[predictability {i}/{len(runs)}] {PAPER_LABELS[policy]:<9} ({r['predictor']}): "
                    f"{100 * p['reserved_rate']:.1f} % reserved, {100 * p['delayed_rate']:.1f} % delayed "
                    f"({time.perf_counter() - t0:.1f} s)"
                )
    paper = TSAFRIR2007_PAPER.get(key or "", {})
    tables: dict[str, Any] = {}
    for number, columns in TSAFRIR2007_TABLES.items():
        rows: dict[str, Any] = {}
        for metric, idx in (("wait_min", 0), ("bsld", 1), ("accuracy_pct", 2)):
            ours = [float(results[c][metric]) for c in columns]
            theirs = [float(paper[c][idx]) for c in columns] if paper else None
            rows[metric] = {
                "ours": ours,
                "ours_change_pct": _changes(ours),
                "paper": theirs,
                "paper_change_pct": _changes(theirs) if theirs else None,
            }
        tables[number] = {
            "columns": list(columns),
            "labels": [PAPER_LABELS[c] for c in columns],
            "rows": rows,
        }
    return {
        "reproduction": "tsafrir2007",
        "trace": workload.name,
        "paper_trace": key,
        "procs": workload.procs,
        "jobs": len(workload),
        "extra": extra,
        "results": results,
        "tables": tables,
        "paper_corrections": TSAFRIR2007_CORRECTIONS.get(key or ""),
        "predictability": predictability_results,
    }


_METRIC_LABELS = {"wait_min": "wait [min]", "bsld": "b. slowdown", "accuracy_pct": "accuracy [%]"}
_TITLES = {
    "2": "Table 2: prediction correction (PCOR) and system-generated predictions (+)",
    "3": "Table 3: shortest job backfilled first (SJBF), EASY++ and PERFECT++",
    "6": "Table 6: EASY++ against doubling (X2) and SJF",
}


def _fmt(value: float | None, metric: str, paper: bool = False) -> str:
    if value is None:
        return "-"
    if paper:
        return f"{value:g}"
    if metric == "bsld" and value < 10:
        return f"{value:.2f}"
    return f"{value:.1f}"


def _text_table(cells: list[list[str]]) -> str:
    """``cells[0]`` as the header, the first column left-aligned and the others right (tabulate)."""
    from tabulate import tabulate

    n = len(cells[0])
    return tabulate(
        cells[1:],
        headers=cells[0],
        tablefmt="simple",
        disable_numparse=True,
        colalign=["left"] + ["right"] * (n - 1),
        preserve_whitespace=True,  # the paper's rows are indented under ours
    )


def render_tsafrir2007(result: dict[str, Any]) -> str:
    """The three tables as text, ours and (when known) the paper's figures per metric."""
    lines = [
        f"Tsafrir, Etsion and Feitelson (2007) on {result['trace']}: {result['jobs']:,} jobs, "
        f"{result['procs']} CPUs, EASY extra processors: {result['extra']}",
        "(averages leave out warm-up and cool-down as the paper does: each scheduler's own first 1 % of "
        "jobs to end and jobs ending after the last arrival, so the sets differ a little, see 'jobs "
        "measured'; changes are relative to EASY, the paper's computed from its rounded figures)",
    ]
    for policy, r in result["results"].items():
        for note in measurement_notes(int(r.get("jobs_measured", 0)), int(result["jobs"]), "steady-state"):
            lines.append(f"note: {PAPER_LABELS.get(policy, policy)}: {note}")
    for number, table in result["tables"].items():
        labels = table["labels"]
        cells: list[list[str]] = [["", *labels]]
        for metric, row in table["rows"].items():
            for who in ("ours", "paper"):
                values = row[who]
                if values is None:
                    continue
                changes = row[f"{who}_change_pct"]
                line = [_METRIC_LABELS[metric] if who == "ours" else "  paper"]
                for v, c in zip(values, changes, strict=True):
                    text = _fmt(v, metric, paper=who == "paper")
                    if c is not None and v is not None:
                        text += f" ({c:+.0f}%)"
                    line.append(text)
                cells.append(line)
        if number == "2":
            ours = [result["results"][c] for c in table["columns"]]
            cells.append(
                ["corrections/job"]
                + [
                    f"{r['corrections_mean']:.2f} ± {r['corrections_std']:.2f}"
                    if r["corrections_mean"]
                    else "-"
                    for r in ours
                ]
            )
            paper_corr = result.get("paper_corrections")
            if paper_corr:
                cells.append(
                    ["  paper"]
                    + [
                        f"{paper_corr[c][0]:.2f} ± {paper_corr[c][1]:.2f}" if c in paper_corr else "-"
                        for c in table["columns"]
                    ]
                )
        measured = [f"{result['results'][c].get('jobs_measured', 0):,}" for c in table["columns"]]
        cells.append(["jobs measured", *measured])
        lines += ["", _TITLES[number], _text_table(cells)]
    pred = result.get("predictability")
    if pred:
        lines += [
            "",
            "Tables 4 and 5: predictability, first reservation against actual start "
            "(EASY+ and EASY++ with the 'immediate' user average)",
        ]
        header = ["", "reserved %", "|diff| avg [min]", "median", "std"]
        header += ["delayed %", "delay avg [min]", "median", "std"]
        cells = [header]
        for c, p in pred.items():
            cells.append([PAPER_LABELS.get(c, c)] + [f"{v:.1f}" for v in p["ours"]])
            if p["paper"]:
                cells.append(["  paper"] + [f"{v:g}" for v in p["paper"]])
        lines.append(_text_table(cells))
    return "\n".join(lines)


def plot_tsafrir2007(result: dict[str, Any], path: str | Path) -> None:
    """Write :func:`tsafrir2007_figure` to ``path`` in the format of its suffix (png, pdf, svg).

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    fig = tsafrir2007_figure(result)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)


def tsafrir2007_figure(result: dict[str, Any]) -> Figure:
    """Wait, bounded slowdown and accuracy of every scheduler, ours beside the paper's.

    Three panels of horizontal bars sharing the schedulers' names, so no label overlaps
    another. A :class:`matplotlib.figure.Figure` of its own: no pyplot state, no change
    of backend.

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    results = result["results"]
    paper = TSAFRIR2007_PAPER.get(result.get("paper_trace") or "", {})
    names = [n for n in results if n in paper] or list(results)
    labels = [results[n].get("paper_name", n) for n in names]
    y = np.arange(len(names))
    height = 0.4 if paper else 0.7
    fig = Figure(figsize=(11, 0.42 * len(names) + 2.2), dpi=100, layout="constrained")
    axes = fig.subplots(1, 3, sharey=True)
    for ax, (i, key, label) in zip(
        axes,
        (
            (0, "wait_min", "average wait [min]"),
            (1, "bsld", "average bounded slowdown"),
            (2, "accuracy_pct", "accuracy [%]"),
        ),
        strict=True,
    ):
        ours = [float(results[n][key]) for n in names]
        offset = height / 2 if paper else 0.0
        bars = ax.barh(y - offset, ours, height, label="hpcgym", color="tab:blue")
        ax.bar_label(bars, fmt="%.3g", fontsize=8, padding=2)
        if paper:
            theirs = [paper[n][i] for n in names]
            bars = ax.barh(y + offset, theirs, height, label="paper", color="0.65")
            ax.bar_label(bars, fmt="%g", fontsize=8, padding=2, color="0.3")
        ax.set_xlabel(label, fontsize=10)
        ax.margins(x=0.18)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    axes[0].set_yticks(y, labels, fontsize=10)
    axes[0].invert_yaxis()  # the paper's order, top to bottom
    if paper:
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=9)
    counts = [int(r["jobs_measured"]) for r in results.values() if "jobs_measured" in r]
    measured = ""
    if counts:
        span = f"{min(counts):,}" if min(counts) == max(counts) else f"{min(counts):,}-{max(counts):,}"
        measured = f"; each averaged over its own 004 set of {span} jobs"
    where = result.get("paper_trace") or result.get("trace")
    fig.suptitle(
        f"Tsafrir, Etsion and Feitelson (2007), Tables 2, 3 and 6 on {where}: "
        f"{result['jobs']:,} jobs, {result['procs']:,} CPUs{measured}",
        fontsize=10,
    )
    return fig
