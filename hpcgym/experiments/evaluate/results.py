"""What an evaluation measured: per-window rows, the summary with paired intervals, and its outputs.

:class:`Evaluation` holds them and writes the table, JSON, CSVs and the two figures;
:func:`_summarize` makes the summary rows (means, medians and the bootstrap interval of the
paired difference with the reference); :func:`vs_reference` formats such a difference.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.files import atomic_path, write_text_atomic
from hpcgym.common.report import format_table, to_json, write_csv
from hpcgym.common.stats import interval_text, paired_difference_ci, paired_t_interval, sign_test
from hpcgym.experiments.evaluate.policies import Candidate
from hpcgym.experiments.protocols import PUBLISHED_COLUMNS

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
    ("bsld_t_interval", "t-interval", ""),
    ("bsld_sign", "wins (sign p)", ""),
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
    "bsld_diff_t_low",
    "bsld_diff_t_high",
    "bsld_wins",
    "bsld_losses",
    "bsld_ties",
    "bsld_sign_p",
    "wait_diff_min",
    "wait_diff_low_min",
    "wait_diff_high_min",
]


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
        summary: one row per policy (see :mod:`hpcgym.experiments.evaluate`).
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
        """The summary table; with a protocol's published figures, those beside the measured ones.

        An agent's kind says where the windows lie for it (``agent: test``, ``agent:
        transfer``, ``agent: train``; see :mod:`hpcgym.experiments.evaluate.provenance`).
        """
        rows = [
            {**r, "kind": f"{r['kind']}: {r['windows_vs_model']}"} if r.get("windows_vs_model") else r
            for r in self.summary
        ]
        text = format_table(rows, SUMMARY_COLUMNS, self.notes)
        if self.published:
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
        write_text_atomic(files[0], self.to_json() + "\n")
        write_csv(files[1], self.summary, SUMMARY_CSV)
        write_csv(files[2], self.window_rows(), WINDOW_CSV)
        if plots:
            files += [d / f"{name}.png" for name in FIGURES]
            for fig, path in ((self.box_figure(), files[3]), (self.paired_figure(), files[4])):
                with atomic_path(path) as tmp:
                    fig.savefig(tmp, dpi=100)
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
        bd = bl = bh = wd = wl = wh = tl = th = nan
        signs = None
        if c.name != reference:
            ref_bsld = np.array([r["mean_bsld"] for r in ref])
            ref_wait = np.array([r["mean_wait_s"] for r in ref]) / 60.0
            kw = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
            bd, bl, bh = paired_difference_ci(bsld, ref_bsld, **kw)  # type: ignore[arg-type]
            wd, wl, wh = paired_difference_ci(wait, ref_wait, **kw)  # type: ignore[arg-type]
            _, tl, th = paired_t_interval(bsld, ref_bsld, confidence=confidence)
            signs = sign_test(bsld, ref_bsld)
        row.update(
            bsld_diff=bd,
            bsld_diff_low=bl,
            bsld_diff_high=bh,
            bsld_diff_t_low=tl,
            bsld_diff_t_high=th,
            bsld_wins=None if signs is None else signs.below,
            bsld_losses=None if signs is None else signs.above,
            bsld_ties=None if signs is None else signs.ties,
            bsld_sign_p=None if signs is None else signs.p_value,
            wait_diff_min=wd,
            wait_diff_low_min=wl,
            wait_diff_high_min=wh,
        )
        row["bsld_vs_reference"] = "(reference)" if c.name == reference else vs_reference(bd, bl, bh)
        row["bsld_t_interval"] = "" if c.name == reference else interval_text(tl, th, why="one window")
        row["bsld_sign"] = "" if signs is None else signs.text()
        out.append(row)
    return out
