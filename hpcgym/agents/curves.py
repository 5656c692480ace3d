"""The learning curve of a training run as a picture: ``OUT/learning_curve.png``.

The validation score (mean over the validation windows of each window's mean bounded
slowdown) against the training steps, on a log scale (bsld is heavy-tailed: one congested
window moves the mean by an order of magnitude), with EASY's score on the same windows and,
after behaviour cloning, the cloned dispatcher's, as horizontal lines. TensorBoard has the
same values (``eval/mean_bsld``); the picture is for a reader of the run's folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hpcgym.common.extras import is_available
from hpcgym.common.files import atomic_path


def write_learning_curve(result: Any, path: Path) -> Path | None:
    """Draw ``result``'s validations (a :class:`~hpcgym.agents.run.TrainResult`) into ``path``.

    Returns the path, or None when there is nothing to draw or matplotlib is not installed
    (the ``plot`` extra; training does not need it).
    """
    if not result.validations or not is_available("matplotlib"):
        return None
    from matplotlib.figure import Figure

    steps = [v["timesteps"] for v in result.validations]
    scores = [v["mean_bsld"] for v in result.validations]
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.plot(steps, scores, marker="o", markersize=3, label=f"{result.metadata['algorithm']} (validation)")
    best = min(range(len(scores)), key=scores.__getitem__)
    ax.plot([steps[best]], [scores[best]], marker="*", markersize=12, linestyle="none", label="best model")
    if result.easy_mean_bsld is not None:
        ax.axhline(result.easy_mean_bsld, color="grey", linestyle="--", label="easy")
    bc = result.behaviour_cloning
    if bc is not None and bc["policy"] in bc["validation_scores"]:
        ax.axhline(bc["validation_scores"][bc["policy"]], color="black", linestyle=":", label=bc["policy"])
    ax.set_yscale("log")
    ax.set_xlabel("training steps")
    ax.set_ylabel("mean bsld over the validation windows")
    ax.set_title(f"{len(result.validations[0]['window_bsld'])} validation windows", fontsize="medium")
    ax.legend(fontsize="small")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110)
    return path
