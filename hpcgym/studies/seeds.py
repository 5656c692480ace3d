"""A study over several generator seeds (``hpcgym study NAME --seeds 1,2,3,4,5``).

One synthetic Eurora workload is one sample: a finding of 001 or 002 that holds on the
jobs of one generator seed may not hold on those of another (issue 24). :func:`run_over_seeds`
generates the workload of each seed (:func:`hpcgym.workloads.eurora.eurora`, fitted to the
machine), runs the study on it with that seed for its bootstrap intervals too, and
reports every finding as "holds in k of n seeds" with each seed's verdict and interval:

* ``k`` counts the seeds where the finding holds, ``n`` those where it could be checked
  (``holds`` True or False); a seed where a run is missing or a class has no jobs
  (``holds`` None) is listed, marked n/a, and not counted in ``n``.
* A finding is matched across seeds by its claim's text; a claim a seed does not make at
  all (e.g. a ranking that needs CPH when CPH did not run) counts as n/a for it.
* Each seed's figure is the finding's paired 95 % interval where it has one (mean
  difference and ``[low, high]``), else the figures it is decided on (relative gains,
  mean queues, the lowest run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import write_atomic
from hpcgym.common.report import format_table, to_json
from hpcgym.studies.eurora_runs import public
from hpcgym.studies.registry import Study
from hpcgym.workloads import Workload, eurora, fit_workload

__all__ = ["finding_detail", "render_over_seeds", "run_over_seeds", "summarize_over_seeds"]


def finding_detail(f: dict[str, Any]) -> str:
    """One finding's figures in a few characters: its interval, or what decides it.

    >>> finding_detail({"mean_difference": -0.5, "ci_low": -0.9, "ci_high": -0.1})
    '-0.5 [-0.9, -0.1]'
    >>> finding_detail({"relative_gain": {"short": 0.25, "medium": 0.1}})
    'short +25.0%, medium +10.0%'
    """
    if "ci_low" in f:
        return f"{f['mean_difference']:+.3g} [{f['ci_low']:+.3g}, {f['ci_high']:+.3g}]"
    if "relative_gain" in f:
        return ", ".join(f"{c} {v:+.1%}" for c, v in f["relative_gain"].items())
    for key in ("mean_queue", "mean_slowdown"):
        if key in f:
            return ", ".join(f"{k} {v:.2f}" for k, v in f[key].items())
    if "lowest_slowdown" in f:
        return f"lowest slowdown {f['lowest_slowdown']}, wait {f['lowest_wait']}"
    if "dispatch_ms" in f:
        return ", ".join(f"{k} {v:.1f} ms" for k, v in f["dispatch_ms"].items())
    return str(f.get("why", ""))


def summarize_over_seeds(results: Sequence[dict[str, Any]], seeds: Sequence[int]) -> dict[str, Any]:
    """Every finding of ``results`` (one study result per seed, in order) as "holds in k of n seeds".

    Returns a JSON-ready dict: ``seeds``, ``findings`` (``claim``, ``holds_in``,
    ``checked``, ``seeds``: one entry per seed with ``seed``, ``holds`` and the
    finding's own figures), and ``per_seed`` (each seed's rows and notes).

    Raises:
        InvalidConfigError: the numbers of results and seeds differ, or there are none.
    """
    if not results or len(results) != len(seeds):
        raise InvalidConfigError(f"{len(results)} study results for {len(seeds)} seeds: give one per seed")
    claims: list[str] = []
    for r in results:
        claims += [f["claim"] for f in r["findings"] if f["claim"] not in claims]
    findings = []
    for claim in claims:
        by_seed = []
        for seed, r in zip(seeds, results, strict=True):
            f = next((x for x in r["findings"] if x["claim"] == claim), None)
            if f is None:
                by_seed.append({"seed": seed, "holds": None, "why": "not checked on this seed"})
            else:
                by_seed.append({"seed": seed, **{k: v for k, v in f.items() if k != "claim"}})
        verdicts = [e["holds"] for e in by_seed if e["holds"] is not None]
        findings.append(
            {
                "claim": claim,
                "holds_in": sum(bool(v) for v in verdicts),
                "checked": len(verdicts),
                "seeds": by_seed,
            }
        )
    first = results[0]
    return {
        "study": first["study"],
        "jobs": first["jobs"],
        "seeds": list(seeds),
        "traces": [r["trace"] for r in results],
        "findings": findings,
        "per_seed": [
            {"seed": s, "trace": r["trace"], "rows": r["rows"], "notes": r["notes"]}
            for s, r in zip(seeds, results, strict=True)
        ],
    }


def run_over_seeds(
    study: Study,
    seeds: Sequence[int],
    *,
    jobs: int,
    machine: str = "eurora",
    load: float = 1.0,
    out: Path | None = None,
    plots: bool = False,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run ``study`` on the synthetic Eurora workload of each of ``seeds`` and summarize its findings.

    Args:
        study: the study (:data:`hpcgym.studies.registry.STUDIES`).
        seeds: generator seeds, distinct; each also seeds that run's bootstrap intervals.
        jobs, machine, load: the generated workload (:func:`hpcgym.workloads.eurora.eurora`).
        out: folder for ``seed-S/`` (each seed's results, as ``hpcgym study`` writes them,
            and its finished runs in ``seed-S/runs``, read back when the same command runs
            again) and ``seeds.json`` (:func:`summarize_over_seeds`); None: nothing written.
        plots: each seed's figures too.
        progress: called with a line per seed and per finished run.
        options: the study's own options (``dispatchers``, ``predictions``, ``cp_delta``,
            ``processes``).

    Raises:
        InvalidConfigError: no seed, a repeated or negative seed.
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise InvalidConfigError(f"seeds must be distinct whole numbers >= 0, got {list(seeds)}")
    options.setdefault("dispatchers", None)
    options.setdefault("predictions", None)
    results = []
    for s in seeds:
        workload: Workload = fit_workload(eurora(jobs, seed=s, load=load), machine)
        if progress is not None:
            progress(f"seed {s}: {len(workload):,} jobs on {machine}")
        runs_dir = None if out is None else out / f"seed-{s}" / "runs"
        result = study.run(workload, progress=progress, seed=s, runs_dir=runs_dir, **options)
        if out is not None:
            study.write(result, out / f"seed-{s}", plots=plots)
        results.append(public(result))
    summary = summarize_over_seeds(results, seeds)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "seeds.json", (to_json(summary) + "\n").encode())
    return summary


def render_over_seeds(summary: dict[str, Any]) -> str:
    """The findings over the seeds as a table: k of n, then each seed's verdict and figures."""
    seeds = summary["seeds"]
    rows = []
    for f in summary["findings"]:
        row: dict[str, Any] = {"claim": f["claim"], "holds": f"{f['holds_in']} of {f['checked']}"}
        for e in f["seeds"]:
            mark = {True: "yes", False: "no", None: "n/a"}[e["holds"]]
            row[f"s{e['seed']}"] = f"{mark} {finding_detail(e)}".strip()
        rows.append(row)
    columns = [
        ("claim", "finding", ""),
        ("holds", "holds in", ""),
        *((f"s{s}", f"seed {s}", "") for s in seeds),
    ]
    head = (
        f"{summary['study']} over {len(seeds)} generator seeds ({', '.join(map(str, seeds))}), "
        f"{summary['jobs']:,} jobs each: each finding holds in k of n seeds (n: seeds where it "
        "could be checked); each seed's verdict and its paired 95 % interval or figures"
    )
    return "\n".join([head, format_table(rows, columns)])
