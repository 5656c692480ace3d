"""A sweep's figures: wait and bounded slowdown against offered load, or 004's parameter study."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.files import atomic_path
from hpcgym.experiments.sweep.spec import SweepSpec


def load_figure(rows: Sequence[Mapping[str, Any]], title: str = "") -> Any:
    """Mean wait and mean bounded slowdown against offered load, a panel per trace and metric.

    One line per dispatcher (and predictor, when a sweep has several); the y axes are
    logarithmic (both metrics grow by orders of magnitude near saturation).

    Raises:
        ImportError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from matplotlib.figure import Figure

    traces = list(dict.fromkeys(r["trace"] for r in rows))
    several_predictors = len({r["predictor"] for r in rows}) > 1
    fig = Figure(figsize=(5.5 * len(traces), 7.5), layout="constrained")
    axes = np.atleast_2d(fig.subplots(2, len(traces), squeeze=False))
    for j, trace in enumerate(traces):
        mine = [r for r in rows if r["trace"] == trace]
        lines: dict[str, list[Mapping[str, Any]]] = {}
        for r in mine:
            label = r["policy"] + (f" ({r['predictor_used']})" if several_predictors else "")
            lines.setdefault(label, []).append(r)
        for i, (metric, ylabel, scale) in enumerate(
            (("mean_wait_s", "mean wait [min]", 60.0), ("mean_bsld", "mean bounded slowdown", 1.0))
        ):
            ax = axes[i][j]
            for label, pts in lines.items():
                pts = sorted(pts, key=lambda r: r["offered_load"])
                x = [100 * r["offered_load"] for r in pts]
                y = [r[metric] / scale if r[metric] is not None else np.nan for r in pts]
                ax.plot(x, y, marker="o", label=label)
            ax.set_yscale("log")
            ax.set_xlabel("offered load [%]")
            ax.set_ylabel(ylabel)
            ax.set_title(trace)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    if title:
        fig.suptitle(title)
    return fig


def write_figures(spec: SweepSpec, rows: Sequence[Mapping[str, Any]], folder: Path) -> list[Path]:
    """The figures ``spec.plot`` asks for, as PNG files in ``folder``."""
    if spec.plot == "none" or not rows:
        return []
    from hpcgym.common.extras import require

    require("plot", what=f"plot = {spec.plot!r}")
    if spec.plot == "params":
        from hpcgym.experiments import paramstudy

        return paramstudy.write_study(rows, folder, title=spec.name)
    path = folder / "wait_bsld_vs_load.png"
    fig = load_figure(rows, title=f"{spec.name}: wait and bounded slowdown against offered load")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    return [path]
