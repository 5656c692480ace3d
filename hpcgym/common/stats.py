"""Statistics every layer reports with: paired differences and their bootstrap intervals.

The evaluation protocol (design card) compares two policies on the same episodes by the
mean of their paired differences and a 95 % BCa bootstrap interval; the engine's reports,
the wait predictors, the molding manager and the studies all use this one function.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hpcgym.common.errors import InvalidConfigError


def paired_difference_ci(
    values: Sequence[float] | np.ndarray,
    reference: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of the paired differences ``values - reference`` and its bootstrap confidence interval.

    The evaluation protocol's comparison (design card): each policy's per-window figure
    minus the reference policy's on the same window, with a BCa bootstrap interval from
    :func:`scipy.stats.bootstrap` (``pip install 'hpcgym[stats]'``). A claim that a policy
    beats the reference needs an interval that excludes 0.

    Returns:
        ``(mean, low, high)``; the interval is ``(mean, mean)`` when every difference is
        the same and NaN with fewer than two pairs.

    Raises:
        InvalidConfigError: the two sequences differ in length or ``confidence`` is not in (0, 1).
        ImportError: scipy is missing.

    >>> mean, low, high = paired_difference_ci([3.0, 5.0, 4.0, 6.0, 5.5], [1.0, 2.0, 2.5, 2.0, 3.0])
    >>> round(mean, 2), bool(0 < low < mean < high)
    (2.6, True)
    """
    a = np.asarray(values, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InvalidConfigError(
            "values, reference: paired differences need two sequences of one length, "
            f"got {a.shape} and {b.shape}"
        )
    if not 0.0 < confidence < 1.0:
        raise InvalidConfigError(f"confidence: must be in (0, 1), got {confidence}")
    diff = a - b
    if len(diff) == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(diff.mean())
    if len(diff) < 2:
        return mean, float("nan"), float("nan")
    if np.all(diff == diff[0]):
        return mean, mean, mean
    try:
        from scipy.stats import bootstrap
    except ImportError as err:
        raise ImportError(
            "confidence intervals need scipy, which is not installed: pip install 'hpcgym[stats]'"
        ) from err
    res = bootstrap(
        (diff,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="BCa",
        rng=np.random.default_rng(seed),
        # resamples (and BCa's jackknife, n x n - 1 values) in batches of about 2e7
        # values, so that per-job differences of many jobs fit in memory
        batch=max(1, 20_000_000 // len(diff)),
    )
    ci = res.confidence_interval
    return mean, float(ci.low), float(ci.high)
