"""Tuning on the validation set: one parameter at a time over 003 Table IV's ranges."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from hpcgym.predict.waitpred.config import FAR_MODELS, STATES
from hpcgym.predict.waitpred.runs import _Context, _run_many, aae_hours

TUNING: dict[str, dict[str, tuple[Any, ...]]] = {
    "apq": {
        "history": (2000, 4000, 6000),
        "bins": (5, 10, 20),
        "state": STATES,
        "distinctness": (0.4, 0.5, 0.6),
        "k_percent": (1.0, 3.0, 5.0),
        "outlier_fraction": (0.1, 0.5, 0.9),
        "eps": (0.05, 0.1),
        "min_pts": (2, 3, 5),
        "sdm_window": (0.01, 0.05, 0.1),
        "sdm_threshold": (0.3, 0.45, 0.6),
        "far_model": FAR_MODELS,
        "ridge_max_distance": (0.4, 0.7, 1.0),
        "neighbors": (1, 5, 10, 20),
    },
    "ibl": {"history": (2000, 4000, 6000), "neighbors": (1, 5, 10, 20)},
    "qbets": {"history": (2000, 4000, 6000)},
}
"""Values tried on the validation set, one parameter at a time (within 003 Table IV's ranges)."""

_APPLIES: dict[str, Callable[[Any], bool]] = {"distinctness": lambda cfg: cfg.state == "adaptive"}
"""Parameters tuned only when they can change the predictions."""


def tune(
    ctx: _Context,
    method: str,
    targets: np.ndarray,
    base: Any,
    fixed: Iterable[str] = (),
    progress: bool = False,
) -> tuple[Any, list[dict[str, Any]]]:
    """``base`` tuned on ``targets`` one parameter at a time (coordinate descent).

    The parameters of :data:`TUNING` are varied one at a time, in its order, over its
    values (003 section V varies each parameter alone); a value is kept when it lowers
    the AAE of the current config, so the returned config is the best one evaluated.
    (Picking each parameter's best value independently and combining them gave a
    combination never evaluated, worse on the bundled slice's test jobs.) ``fixed``
    parameters keep ``base``'s value. Returns the tuned config and one row per config
    tried: the parameter varied, its value and the validation AAE in hours.
    """
    actual = ctx.state.wait[targets]
    cfg = base
    best = aae_hours(_run_many(ctx, method, targets, [cfg], progress)[0][0], actual)
    rows: list[dict[str, Any]] = [{"parameter": "base", "value": None, "aae_hours": best}]
    for name, values in TUNING[method].items():
        alternatives = [v for v in values if v != getattr(cfg, name)]
        applies = _APPLIES.get(name)
        if name in fixed or not alternatives or (applies is not None and not applies(cfg)):
            continue
        cfgs = [dataclasses.replace(cfg, **{name: v}) for v in alternatives]
        results = _run_many(ctx, method, targets, cfgs, progress)
        for v, c, res in zip(alternatives, cfgs, results, strict=True):
            aae = aae_hours(res[0], actual)
            rows.append({"parameter": name, "value": v, "aae_hours": aae})
            if aae < best:
                best, cfg = aae, c
    rows.append({"parameter": "tuned", "value": None, "aae_hours": best})
    return cfg, rows
