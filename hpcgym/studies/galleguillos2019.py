"""``hpcgym study galleguillos2019``: 002's CP dispatchers -- Table 2, Figures 2-3, findings.

Galleguillos et al. (2019, paper 002 in ``docs/REPRODUCTION.md``) compare the pure (PCP)
and hybrid (HCP) CP dispatchers in the versions of their Table 1 (see
:mod:`hpcgym.baselines.cp`), each planning with the wall-time (W), data-driven (D) or
real (R) durations, on the Eurora PBS logs. Those logs are not public: this study runs
on the synthetic Eurora workload of :mod:`hpcgym.workloads.eurora` (or any job table, or an SWF
trace window) and writes:

* **Table 2**'s layout per CP run: average dispatch time (ms, wall-clock per decision:
  modelling, solving, verifying, allocating), total simulation time (s, wall-clock of the
  whole run), average number of intervals, of requested and of available resources
  (summed over resource types), beside the PRB and EASY references.
* **Figures 2 and 3**: mean slowdown and mean wait with one standard deviation, for the
  PCP and for the HCP runs, each beside PRB and EASY (002 compares with the logged PBS
  schedule, which a synthetic workload does not have). Log scale: the standard deviation
  of these heavy-tailed figures is larger than the mean, so the bars show mean and
  mean + one standard deviation.
* **Findings**: 002's four directions, each checked on these runs (:func:`findings`),
  with paired 95 % bootstrap intervals of the per-job differences.

Slowdown is ``(wait + duration) / duration`` of every job with a positive duration
(002 section 6, plain, not bounded); waits are over every job. The CP time limit is
``--cp-delta`` (default :data:`CP_DELTA`, deterministic seconds) with 002's ratio
``delta_max = 16 delta``; 002 used ``delta = 1 s`` of wall-clock time. A shorter limit
keeps the study to minutes; ``docs/CP.md`` measures what it costs in quality.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.report import format_table
from hpcgym.common.stats import paired_difference_ci
from hpcgym.studies.eurora_runs import CP_DELTA, PREDICTORS, Run, cp_spec, find_run, run_all, write_results
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HCP_RUNS = (*((f"hcp{v}", p) for v in (0, 1, 3) for p in "WDR"), ("hcp2", "D"))
"""002 Figure 3's HCP runs (v0 is 002's original HCP, 001's CPH)."""

PCP_RUNS = (*((f"pcp{v}", p) for v in (1, 3) for p in "WDR"), ("pcp2", "D"))
"""002 Figure 2's PCP runs. PCP v0 (every waiting job modelled) is left out by default, as
it could not process 002's workload; name it with ``--dispatchers`` to try."""

REFERENCE_RUNS = tuple((d, p) for d in ("prb", "easy") for p in "WDR")
"""The references beside them: PRB (001/002's priority rule with best-fit) and EASY."""

RUNS = HCP_RUNS + PCP_RUNS + REFERENCE_RUNS
"""Every run of the study, in the order of the tables."""

LABELS = {
    "hcp0": "HCP",
    "hcp1": "HCP1",
    "hcp2": "HCP2",
    "hcp3": "HCP3",
    "pcp0": "PCP",
    "pcp1": "PCP1",
    "pcp2": "PCP2",
    "pcp3": "PCP3",
    "prb": "PRB",
    "easy": "EASY",
}
"""hpcgym name -> 002's name (``-W``, ``-D``, ``-R`` appended)."""

FIGURES = ("fig2_pcp", "fig3_hcp")
"""File stems of the PNG figures :func:`write_outputs` writes (002's Figures 2 and 3)."""

PAPER_TABLE2 = {
    "PCP1-W": (743, 262_436, 145, 853, 1_476),
    "PCP3-R": (692, 261_985, 94, 142, 1_471),
    "PCP3-D": (701, 262_764, 115, 584, 1_473),
    "HCP-W": (1_014, 374_788, 379, 6_267, 1_487),
    "HCP1-W": (703, 245_663, 100, 1_292, 1_477),
    "HCP3-R": (523, 201_223, 51, 258, 1_473),
    "HCP3-D": (575, 215_814, 63, 571, 1_474),
}
"""002 Table 2: (avg dispatch time ms, total simulation time s, avg intervals, avg requested
resources, avg available resources) on the Eurora logs (400,000 jobs, 16-core server, OR-Tools
6.7). PCP (v0) did not finish."""

TABLE2_KEYS = ("dispatch_ms", "sim_seconds", "intervals", "requested", "available")
"""The columns of 002 Table 2, in :data:`PAPER_TABLE2`'s order."""

COLUMNS = (
    "run",
    "dispatcher",
    "prediction",
    "mean_slowdown",
    "std_slowdown",
    "mean_wait_s",
    "std_wait_s",
    "dispatch_ms",
    "p95_dispatch_ms",
    "sim_seconds",
    "intervals",
    "requested",
    "available",
    "fallbacks",
    "decisions",
)

TABLE = (
    ("run", "run", ""),
    ("mean_slowdown", "slowdown", ".2f"),
    ("std_slowdown", "sd", ".1f"),
    ("mean_wait_s", "wait [s]", ".0f"),
    ("std_wait_s", "sd", ".0f"),
    ("dispatch_ms", "disp. [ms]", ".1f"),
    ("p95_dispatch_ms", "p95 [ms]", ".0f"),
    ("sim_seconds", "sim. [s]", ".1f"),
    ("intervals", "intervals", ".1f"),
    ("requested", "req. res.", ".0f"),
    ("available", "avl. res.", ".0f"),
    ("fallbacks", "fallbacks", "d"),
)
"""The printed table: (key, header, format)."""


def label(dispatcher: str, prediction: str) -> str:
    """002's name of a run: ``label("hcp1", "W") == "HCP1-W"``."""
    return f"{LABELS.get(dispatcher, dispatcher)}-{prediction}"


def select_runs(
    dispatchers: Sequence[str] | None = None, predictions: Sequence[str] | None = None
) -> list[tuple[str, str]]:
    """:data:`RUNS` restricted to ``dispatchers`` and ``predictions``.

    A dispatcher not in :data:`RUNS` (e.g. ``pcp0``) runs with every prediction asked.

    Raises:
        InvalidConfigError: an unknown prediction letter, or nothing left to run.
    """
    preds = list(predictions) if predictions is not None else list(PREDICTORS)
    bad = [p for p in preds if p not in PREDICTORS]
    if bad:
        raise InvalidConfigError(f"predictions: unknown {bad}; 002's are {', '.join(PREDICTORS)}")
    if dispatchers is None:
        runs = [r for r in RUNS if r[1] in preds]
    else:
        runs = []
        for d in dispatchers:
            own = [r for r in RUNS if r[0] == d and r[1] in preds]
            runs += own or [(d, p) for p in preds]
    if not runs:
        raise InvalidConfigError("dispatchers/predictions: nothing to run")
    return runs


def run_galleguillos2019(
    workload: Workload,
    *,
    runs: Sequence[tuple[str, str]] | None = None,
    cp_delta: float | None = CP_DELTA,
    processes: int | None = None,
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
    runs_dir: Path | None = None,
) -> dict[str, Any]:
    """Run 002's study on ``workload``.

    Args:
        workload: the jobs on their machine (synthetic Eurora, a job table, or an SWF
            window on its processor machine).
        runs: ``(dispatcher, prediction)`` pairs; default :data:`RUNS`.
        cp_delta: the CP dispatchers' first time limit (deterministic s; None: the
            presets' own 1 s).
        processes: parallel processes (default one per core).
        progress: called with a line after every finished run.
        seed: seed of the bootstrap intervals.
        runs_dir: keep every finished run there and read back those already there
            (:func:`~hpcgym.studies.eurora_runs.run_all`); None: keep none.

    Returns:
        A JSON-ready dict: ``rows`` (:data:`COLUMNS`), ``paper_table2``, ``findings``,
        ``notes``; the per-run arrays under ``_runs`` for :func:`figures`.
    """
    from hpcgym.baselines import policy_specs

    pairs = list(runs) if runs is not None else list(RUNS)
    known = set(policy_specs())
    unknown = sorted({d for d, _ in pairs if d.partition(":")[0] not in known})
    if unknown:
        raise InvalidConfigError(f"dispatchers: unknown {unknown}; see `hpcgym policies`")
    if cp_delta is not None and not cp_delta > 0:
        raise InvalidConfigError(f"cp_delta must be a positive number of seconds, got {cp_delta}")
    combos = [(d, p, cp_spec(d, cp_delta)) for d, p in pairs]
    done = run_all(
        workload,
        combos,
        processes=processes,
        progress=progress,
        label=lambda d: LABELS.get(d, d),
        runs_dir=runs_dir,
    )
    return summarize(workload, done, cp_delta=cp_delta, seed=seed)


def _per_job(workload: Workload, runs: Sequence[Run]) -> tuple[np.ndarray, np.ndarray]:
    """(slowdown matrix runs x jobs of positive duration, wait matrix runs x all jobs)."""
    runtime = np.asarray(workload.runtime, dtype=np.float64)
    submit = np.asarray(workload.submit, dtype=np.float64)
    positive = runtime > 0
    wait = np.stack([r.start - submit for r in runs])
    sd = (wait[:, positive] + runtime[positive]) / runtime[positive]
    return sd, wait


def summarize(
    workload: Workload, runs: Sequence[Run], *, cp_delta: float | None = CP_DELTA, seed: int = 0
) -> dict[str, Any]:
    """Table, findings and notes of finished runs (see :func:`run_galleguillos2019`)."""
    sd, wait = _per_job(workload, runs)
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(runs):
        cp = r.cp or {}
        ms = cp.get("decision_ms") or {}
        rows.append(
            {
                "run": label(r.dispatcher, r.prediction),
                "dispatcher": r.dispatcher,
                "prediction": r.prediction,
                "mean_slowdown": float(sd[i].mean()) if sd.shape[1] else float("nan"),
                "std_slowdown": float(sd[i].std()) if sd.shape[1] else float("nan"),
                "mean_wait_s": float(wait[i].mean()),
                "std_wait_s": float(wait[i].std()),
                "dispatch_ms": ms.get("mean", float("nan")),
                "p95_dispatch_ms": ms.get("p95", float("nan")),
                "sim_seconds": r.sim_seconds,
                "intervals": cp.get("intervals", float("nan")),
                "requested": cp.get("requested", float("nan")),
                "available": cp.get("available", float("nan")),
                "fallbacks": cp.get("fallbacks", 0),
                "decisions": r.decisions,
            }
        )
    runtime = np.asarray(workload.runtime, dtype=np.float64)
    notes = [
        f"slowdown over the {int(np.sum(runtime > 0)):,} jobs of positive duration, wait over all "
        f"{len(workload):,} jobs",
        f"CP time limits: delta = {cp_delta} s, delta_max = {16 * cp_delta:g} s, deterministic"
        if cp_delta is not None
        else "CP time limits: the presets' own (delta = 1 s, delta_max = 16 s, deterministic)",
        "dispatch and simulation times are wall-clock on this machine; 002's are on a 16-core "
        "server with OR-Tools 6.7 over 400,000 jobs, so compare their ratios, not their values",
    ]
    result: dict[str, Any] = {
        "study": "galleguillos2019",
        "trace": workload.name,
        "jobs": len(workload),
        "cp_delta": cp_delta,
        "rows": rows,
        "paper_table2": {k: dict(zip(TABLE2_KEYS, v, strict=True)) for k, v in PAPER_TABLE2.items()},
        "notes": notes,
    }
    result["findings"] = findings(runs, sd, wait, rows, seed=seed)
    result["_runs"] = runs
    return result


def findings(
    runs: Sequence[Run],
    sd: np.ndarray,
    wait: np.ndarray,
    rows: Sequence[dict[str, Any]],
    *,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """002's directions, each checked on these runs (``holds``: True, False, None if a run is missing).

    * "v1 much faster than v0": HCP1-W's mean dispatch time and simulation time both
      below HCP-W's (002: 703 against 1,014 ms, 245,663 against 374,788 s).
    * "v3-R best": per model, v3-R has the lowest mean slowdown and the lowest mean wait
      of that model's runs.
    * "naive D without v2 worse than W": v1-D's per-job slowdown above v1-W's (paired
      interval above 0).
    * "v3-D beats v1-W": v3-D's per-job slowdown below v1-W's (paired interval below 0);
      the wait is reported beside it.
    """
    out: list[dict[str, Any]] = []

    def paired(a: int, b: int, m: np.ndarray) -> dict[str, float]:
        mean, low, high = paired_difference_ci(m[a], m[b], seed=seed, n_resamples=999)
        return {"mean_difference": mean, "ci_low": low, "ci_high": high}

    a, b = find_run(runs, "hcp1", "W"), find_run(runs, "hcp0", "W")
    claim = "v1 much faster than v0: HCP1-W's dispatch and simulation time below HCP-W's"
    if a is None or b is None:
        out.append({"claim": claim, "holds": None, "why": "a run is missing"})
    else:
        ra, rb = rows[a], rows[b]
        out.append(
            {
                "claim": claim,
                "holds": bool(
                    ra["dispatch_ms"] < rb["dispatch_ms"] and ra["sim_seconds"] < rb["sim_seconds"]
                ),
                "dispatch_ms": {"HCP1-W": ra["dispatch_ms"], "HCP-W": rb["dispatch_ms"]},
                "sim_seconds": {"HCP1-W": ra["sim_seconds"], "HCP-W": rb["sim_seconds"]},
                "intervals": {"HCP1-W": ra["intervals"], "HCP-W": rb["intervals"]},
            }
        )
    for model in ("pcp", "hcp"):
        name = model.upper()
        own = [i for i, r in enumerate(runs) if r.dispatcher.startswith(model)]
        best = find_run(runs, f"{model}3", "R")
        claim = f"v3-R best: {name}3-R has the lowest mean slowdown and wait of the {name} runs"
        if best is None or len(own) < 2:
            out.append({"claim": claim, "holds": None, "why": "a run is missing"})
        else:
            by_sd = min(own, key=lambda i: rows[i]["mean_slowdown"])
            by_wait = min(own, key=lambda i: rows[i]["mean_wait_s"])
            out.append(
                {
                    "claim": claim,
                    "holds": by_sd == best and by_wait == best,
                    "lowest_slowdown": rows[by_sd]["run"],
                    "lowest_wait": rows[by_wait]["run"],
                }
            )
        for claim, x, y, expect in (
            (
                f"naive D without v2 worse than W: {name}1-D's slowdown above {name}1-W's",
                "1D",
                "1W",
                "higher",
            ),
            (f"v3-D beats v1-W: {name}3-D's slowdown below {name}1-W's", "3D", "1W", "lower"),
        ):
            i, j = find_run(runs, f"{model}{x[0]}", x[1]), find_run(runs, f"{model}{y[0]}", y[1])
            if i is None or j is None:
                out.append({"claim": claim, "holds": None, "why": "a run is missing"})
                continue
            stats = paired(i, j, sd)
            holds = stats["ci_high"] < 0 if expect == "lower" else stats["ci_low"] > 0
            entry = {"claim": claim, "holds": bool(holds), **stats}
            entry["wait"] = paired(i, j, wait)
            out.append(entry)
    return out


# ----------------------------------------------------------------------------- figures
def figures(result: dict[str, Any]) -> dict[str, Figure]:
    """002's Figures 2 (PCP) and 3 (HCP): mean slowdown and wait with one standard deviation.

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    rows = result["rows"]
    out: dict[str, Figure] = {}
    for stem, model, title in (("fig2_pcp", "pcp", "PCP"), ("fig3_hcp", "hcp", "HCP")):
        sel = [r for r in rows if r["dispatcher"].startswith(model) or r["dispatcher"] in ("prb", "easy")]
        if not any(r["dispatcher"].startswith(model) for r in sel):
            continue
        fig = Figure(figsize=(11, 4.5), layout="constrained")
        axes = fig.subplots(1, 2)
        x = np.arange(len(sel))
        colors = ["#4878a8" if r["dispatcher"].startswith(model) else "#a0a0a0" for r in sel]
        for ax, key, ylabel in zip(
            axes, ("slowdown", "wait_s"), ("slowdown", "waiting time [s]"), strict=True
        ):
            mean = np.array([r[f"mean_{key}"] for r in sel])
            std = np.array([r[f"std_{key}"] for r in sel])
            ax.bar(x, mean, color=colors)
            ax.errorbar(x, mean, yerr=[np.zeros_like(std), std], fmt="none", ecolor="black", capsize=3)
            if (mean > 0).any():
                ax.set_yscale("log")
            ax.set_xticks(x, [r["run"] for r in sel], rotation=60, ha="right")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{title}: mean and + one standard deviation")
        fig.suptitle(f"{result['trace']}, {result['jobs']:,} jobs (grey: references)")
        out[stem] = fig
    return out


def render(result: dict[str, Any]) -> str:
    """The table, 002's Table 2 beside it, the findings and the notes as text."""
    lines = [
        f"002 (Galleguillos et al. 2019) on {result['trace']}: {result['jobs']:,} jobs",
        format_table(result["rows"], TABLE),
        "",
        "002 Table 2 (Eurora logs, 400,000 jobs; PCP did not finish):",
        format_table(
            [{"run": k, **v} for k, v in result["paper_table2"].items()],
            (
                ("run", "run", ""),
                ("dispatch_ms", "disp. [ms]", ",.0f"),
                ("sim_seconds", "sim. [s]", ",.0f"),
                ("intervals", "intervals", ",.0f"),
                ("requested", "req. res.", ",.0f"),
                ("available", "avl. res.", ",.0f"),
            ),
        ),
        "",
        "002's directions (paired 95 % bootstrap interval of per-job differences):",
    ]
    for f in result["findings"]:
        mark = {True: "yes", False: "no", None: "n/a"}[f["holds"]]
        detail = ""
        if "ci_low" in f:
            w = f["wait"]
            detail = (
                f" (slowdown {f['mean_difference']:+.3g} [{f['ci_low']:+.3g}, {f['ci_high']:+.3g}]; "
                f"wait {w['mean_difference']:+.0f} s [{w['ci_low']:+.0f}, {w['ci_high']:+.0f}])"
            )
        elif "dispatch_ms" in f:
            d, s = f["dispatch_ms"], f["sim_seconds"]
            detail = (
                f" (dispatch {d['HCP1-W']:.1f} against {d['HCP-W']:.1f} ms; simulation "
                f"{s['HCP1-W']:.1f} against {s['HCP-W']:.1f} s)"
            )
        elif "lowest_slowdown" in f:
            detail = f" (lowest slowdown {f['lowest_slowdown']}, lowest wait {f['lowest_wait']})"
        elif "why" in f:
            detail = f" ({f['why']})"
        lines.append(f"  {mark:3}  {f['claim']}{detail}")
    lines += ["", *(f"note: {n}" for n in result["notes"])]
    return "\n".join(lines)


def write_outputs(result: dict[str, Any], out: Path, *, plots: bool = True) -> list[Path]:
    """Write ``results.json``, ``results.csv`` and (with matplotlib) the figures to ``out``."""
    return write_results(result, out, COLUMNS, figures, plots=plots)
