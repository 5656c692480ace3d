"""Statistics every layer reports with: paired differences and their intervals.

The evaluation protocol (design card) compares two policies on the same episodes by the
mean of their paired differences and a 95 % BCa bootstrap interval; the engine's reports,
the wait predictors, the molding manager and the studies all use this one function
(:func:`paired_difference_ci`). Beside it, for few pairs, where a BCa interval is too
narrow (over 7 pairs it covered the true mean 80-88 % of the time in simulation, issue 24):
the paired t-interval (:func:`paired_t_interval`) and the sign test's win count
(:func:`sign_test`). :func:`interval_text` prints an interval, or says there is none.

scipy is the ``stats`` extra, imported only when an interval is computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpcgym.common.errors import InvalidConfigError

FEW_PAIRS = 20
"""Below this many pairs an interval is reported as approximate: neither the bootstrap's
nor the t-interval's coverage can be trusted to be the nominal one."""


def _pairs(values: Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InvalidConfigError(
            "values, reference: paired differences need two sequences of one length, "
            f"got {a.shape} and {b.shape}"
        )
    return a - b


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
        MissingExtraError: scipy is missing (an ``ImportError``).

    >>> mean, low, high = paired_difference_ci([3.0, 5.0, 4.0, 6.0, 5.5], [1.0, 2.0, 2.5, 2.0, 3.0])
    >>> round(mean, 2), bool(0 < low < mean < high)
    (2.6, True)
    """
    diff = _pairs(values, reference)
    _check_confidence(confidence)
    if len(diff) == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(diff.mean())
    if len(diff) < 2:
        return mean, float("nan"), float("nan")
    if np.all(diff == diff[0]):
        return mean, mean, mean
    from hpcgym.common.extras import require

    require("stats", "scipy.stats", what="confidence intervals")
    from scipy.stats import bootstrap

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


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise InvalidConfigError(f"confidence: must be in (0, 1), got {confidence}")


def paired_t_interval(
    values: Sequence[float] | np.ndarray,
    reference: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Mean of the paired differences and Student's t confidence interval.

    ``mean -/+ t(n-1, (1 + confidence) / 2) * sd / sqrt(n)`` with the sample standard
    deviation (``ddof=1``). It assumes the differences are roughly normal, which
    heavy-tailed per-window slowdowns are not; it is shown beside the bootstrap so that a
    reader sees when the two disagree.

    Returns:
        ``(mean, low, high)``; ``(mean, mean, mean)`` when every difference is the same,
        NaN bounds with fewer than two pairs.

    Raises:
        InvalidConfigError: the sequences differ in length or ``confidence`` is not in (0, 1).
        MissingExtraError: scipy is missing.

    >>> mean, low, high = paired_t_interval([3.0, 5.0, 4.0, 6.0, 5.5], [1.0, 2.0, 2.5, 2.0, 3.0])
    >>> round(mean, 2), round(low, 2), round(high, 2)
    (2.6, 1.41, 3.79)
    """
    diff = _pairs(values, reference)
    _check_confidence(confidence)
    nan = float("nan")
    if len(diff) == 0:
        return nan, nan, nan
    mean = float(diff.mean())
    if len(diff) < 2:
        return mean, nan, nan
    if np.all(diff == diff[0]):
        return mean, mean, mean
    from hpcgym.common.extras import require

    require("stats", "scipy.stats", what="confidence intervals")
    from scipy.stats import t

    quantile = float(t.ppf((1.0 + confidence) / 2.0, len(diff) - 1))
    half = quantile * float(diff.std(ddof=1)) / math.sqrt(len(diff))
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class SignTest:
    """How often ``values`` fell below, above or on ``reference``, and the sign test's p-value.

    Attributes:
        below: pairs with ``value < reference`` (a win where lower is better: slowdown, wait).
        above: pairs with ``value > reference``.
        ties: equal pairs (left out of the test, as the sign test does).
        p_value: two-sided exact binomial p-value of ``below`` among ``below + above`` under
            p = 1/2; 1.0 without untied pairs.
    """

    below: int
    above: int
    ties: int
    p_value: float

    def text(self) -> str:
        """``"5/7 (p 0.45)"``: windows below the reference of those compared, and p.

        >>> SignTest(5, 1, 1, 0.21875).text()
        '5/7 (p 0.22)'
        """
        return f"{self.below}/{self.below + self.above + self.ties} (p {self.p_value:.2g})"


def sign_test(values: Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray) -> SignTest:
    """The sign test of paired values: counts below / above / tied and the exact two-sided p.

    Needs no distributional assumption (and no scipy): under "no difference" each untied
    pair is below the reference with probability 1/2, so the count below is
    Binomial(n, 1/2); the p-value doubles the smaller tail (at most 1).

    >>> sign_test([1, 2, 3, 4, 5, 6, 7], [2, 3, 4, 5, 6, 7, 1])
    SignTest(below=6, above=1, ties=0, p_value=0.125)
    """
    diff = _pairs(values, reference)
    below, above = int(np.sum(diff < 0)), int(np.sum(diff > 0))
    ties = len(diff) - below - above
    n, k = below + above, min(below, above)
    if n == 0:
        return SignTest(below, above, ties, 1.0)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return SignTest(below, above, ties, min(1.0, 2.0 * tail))


def interval_text(low: float | None, high: float | None, spec: str = "+.2f", *, why: str = "one pair") -> str:
    """An interval as ``[low, high]``, or ``no interval (WHY)`` when a bound is missing or NaN.

    A NaN interval comes from a single pair (one window, one block): printing
    ``[+nan, +nan]`` would look like a result.

    >>> interval_text(-4.0, -1.0), interval_text(float("nan"), float("nan"), ".1f", why="one block")
    ('[-4.00, -1.00]', 'no interval (one block)')
    """
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"no interval ({why})"
    return f"[{low:{spec}}, {high:{spec}}]"
