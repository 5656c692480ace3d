"""The parameters of APQ, IBL and QBETS (003 Table IV's ranges), validated, and their names.

:func:`method_config` checks a method's config and the parameters set on it;
:func:`parse_wait_predictor` reads ``METHOD[:key=value,...]`` (the environment's
``wait_predictor``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.registry import parse_parameters

METHODS = ("apq", "ibl", "qbets")
"""The predictors :func:`~hpcgym.predict.waitpred.evaluation.predict_waits` runs."""

SDM, REGRESSION, WEIGHTED, EMPTY = 0, 1, 2, 3
CASES = ("sdm", "regression", "weighted_average", "no_history")
"""Which model of APQ's chain gave each prediction (``WaitPrediction.case``)."""

STATES = ("distributions", "summaries", "adaptive")
"""APQ's system-state statistics (:attr:`APQConfig.state`)."""

FAR_MODELS = ("regression", "weighted_average")
"""APQ's choices for 003's case A (:attr:`APQConfig.far_model`)."""


def _positive_int(name: str, value: object, low: int = 1, high: int | None = None) -> None:
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low
    if ok and high is not None:
        ok = value <= high  # type: ignore[operator]
    if not ok:
        rng = f"{low}..{high}" if high is not None else f">= {low}"
        raise InvalidConfigError(f"{name} must be a whole number {rng}, got {value!r}")


def _fraction(name: str, value: object, low: float, high: float, *, open_low: bool = True) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = (v > low if open_low else v >= low) and v <= high
    if not ok:
        bracket = "(" if open_low else "["
        raise InvalidConfigError(f"{name} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")


@dataclass(frozen=True)
class APQConfig:
    """Parameters of APQ (003 section II, ranges of Table IV).

    Attributes:
        history: size of the history set (2000-6000).
        bins: bins of each Table I histogram (5-50).
        state: ``"distributions"`` (eq. 2), ``"summaries"`` (eq. 3-4) or ``"adaptive"``
            (per job: distributions when its histograms' distinctness is at least
            ``distinctness``, else summaries).
        distinctness: the threshold of ``state="adaptive"``, in [0, 1]
            (:func:`~hpcgym.predict.waitpred.models.histogram_distinctness`).
        k_percent: the closest k % of the history examined by the clustering (1-5).
        outlier_fraction: SDM when DBSCAN leaves fewer than this fraction as noise (0.1-0.9).
        eps: DBSCAN's neighbourhood radius (0.05-0.1).
        min_pts: DBSCAN's core-point count, also the fewest jobs of an SDM window (2-5).
        sdm_window: width of SDM's distance windows (0.01-0.1).
        sdm_threshold: SDM's maximum distance, also the case-A threshold (0.3-0.6).
        far_model: the model of case A (the closest ``k_percent`` % farther than
            ``sdm_threshold`` on average), which 003 leaves open: ``"regression"`` (the
            default and the behaviour before this parameter existed: the regression,
            then the weighted average if it is negative) or ``"weighted_average"``.
        ridge_max_distance: history jobs within this distance train the regression (0.4-1.0).
        ridge_alpha: ridge regularisation on standardised features.
        ridge_min_jobs: the fewest jobs the regression is fitted on.
        neighbors: k of the weighted-average fallback (1-20).
        weight_refresh: predictions between recomputations of the Spearman weights.
        max_time_s: time scale of the histograms' log bins, seconds.
        backend: ``"numpy"`` (fast, the default) or ``"sklearn"`` (scikit-learn's DBSCAN
            and Ridge; the same predictions, slower; needs the ``learn`` extra).
    """

    history: int = 6000
    bins: int = 10
    state: str = "distributions"
    distinctness: float = 0.4
    k_percent: float = 3.0
    outlier_fraction: float = 0.5
    eps: float = 0.1
    min_pts: int = 3
    sdm_window: float = 0.05
    sdm_threshold: float = 0.45
    far_model: str = "regression"
    ridge_max_distance: float = 0.7
    ridge_alpha: float = 1.0
    ridge_min_jobs: int = 32
    neighbors: int = 10
    weight_refresh: int = 100
    max_time_s: float = 7 * 86400.0
    backend: str = "numpy"

    def __post_init__(self) -> None:
        _positive_int("apq history", self.history)
        _positive_int("apq bins", self.bins, 2)
        if self.state not in STATES:
            raise InvalidConfigError(f"apq state must be one of {', '.join(STATES)}, got {self.state!r}")
        _fraction("apq distinctness", self.distinctness, 0.0, 1.0, open_low=False)
        _fraction("apq k_percent", self.k_percent, 0.0, 100.0)
        _fraction("apq outlier_fraction", self.outlier_fraction, 0.0, 1.0)
        _fraction("apq eps", self.eps, 0.0, 1.0)
        _positive_int("apq min_pts", self.min_pts)
        _fraction("apq sdm_window", self.sdm_window, 0.0, 1.0)
        _fraction("apq sdm_threshold", self.sdm_threshold, 0.0, 1.0)
        if self.far_model not in FAR_MODELS:
            raise InvalidConfigError(
                f"apq far_model must be one of {', '.join(FAR_MODELS)}, got {self.far_model!r}"
            )
        _fraction("apq ridge_max_distance", self.ridge_max_distance, 0.0, 1.0)
        _fraction("apq ridge_alpha", self.ridge_alpha, 0.0, 1e12, open_low=False)
        _positive_int("apq ridge_min_jobs", self.ridge_min_jobs, 2)
        _positive_int("apq neighbors", self.neighbors)
        _positive_int("apq weight_refresh", self.weight_refresh)
        _fraction("apq max_time_s", self.max_time_s, 1.0, 1e12)
        if self.backend not in ("numpy", "sklearn"):
            raise InvalidConfigError(f"apq backend must be 'numpy' or 'sklearn', got {self.backend!r}")


@dataclass(frozen=True)
class IBLConfig:
    """Parameters of IBL: history size and the k of its k-nearest weighted average."""

    history: int = 6000
    neighbors: int = 10

    def __post_init__(self) -> None:
        _positive_int("ibl history", self.history)
        _positive_int("ibl neighbors", self.neighbors)


@dataclass(frozen=True)
class QBETSConfig:
    """Parameters of QBETS: history size, the quantile bounded and the confidence of the bound."""

    history: int = 6000
    quantile: float = 0.95
    confidence: float = 0.95

    def __post_init__(self) -> None:
        _positive_int("qbets history", self.history)
        _fraction("qbets quantile", self.quantile, 0.0, 1.0)
        _fraction("qbets confidence", self.confidence, 0.0, 1.0)


CONFIGS: dict[str, Any] = {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}


def method_config(method: str, config: Any = None, overrides: dict[str, Any] | None = None) -> Any:
    """``config`` of ``method`` (its defaults when None) with ``overrides`` set, validated.

    Raises:
        InvalidConfigError: an unknown method or parameter, a config of another method,
            or a value out of range; the message names it.
    """
    if method not in METHODS:
        raise InvalidConfigError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    cls = CONFIGS[method]
    cfg: Any = config if config is not None else cls()
    if not isinstance(cfg, cls):
        raise InvalidConfigError(f"config of {method} must be a {cls.__name__}, got {type(cfg).__name__}")
    if overrides:
        known = {f.name for f in dataclasses.fields(cls)}
        for key in overrides:
            if key not in known:
                raise InvalidConfigError(
                    f"{method}: unknown parameter {key!r}; known: {', '.join(sorted(known))}"
                )
        try:
            cfg = dataclasses.replace(cfg, **overrides)
        except TypeError as err:
            raise InvalidConfigError(f"{method}: {err}") from err
    if method == "apq" and cfg.backend == "sklearn":
        from hpcgym.common.extras import require

        require("learn", what="apq backend=sklearn")
    return cfg


def parse_wait_predictor(spec: str) -> tuple[str, Any]:
    """``(method, config)`` of ``METHOD[:key=value,...]`` (e.g. ``"ibl:neighbors=5"``).

    Raises:
        InvalidConfigError: not text, an unknown method or parameter, or a bad value;
            the message names it.

    >>> parse_wait_predictor("qbets:history=500")[1].history
    500
    """
    if not isinstance(spec, str):
        raise InvalidConfigError(
            f"wait_predictor must be text such as 'ibl' or 'qbets:history=500', got {spec!r}"
        )
    method, _, params = spec.partition(":")
    method = method.strip().lower()
    if method not in METHODS:
        raise InvalidConfigError(f"wait_predictor {spec!r}: the method must be one of {', '.join(METHODS)}")
    known = tuple(f.name for f in dataclasses.fields(CONFIGS[method]))
    try:
        kwargs = parse_parameters(spec, params, method, known)
        return method, method_config(method, None, kwargs)
    except InvalidConfigError as err:
        raise InvalidConfigError(f"wait_predictor {spec!r}: {err}") from err
