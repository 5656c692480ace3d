"""004 section 7's predictor space: its 8,640 ``user-history`` configurations, enumerated and sampled.

For parameter studies (:mod:`hpcgym.experiments.paramstudy`, ``hpcgym predictors --space``):
:data:`PREDICTOR_SPACE` lists the parameters and their values, :func:`predictor_space`
enumerates the configurations (:class:`~hpcgym.predict.user_history.UserHistoryConfig`) and
:func:`sample_predictor_space` draws some.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.user_history import UserHistoryConfig, _positive_int

PREDICTOR_SPACE: dict[str, tuple[Any, ...]] = {
    "correction": ("estimate", "gradual", "exponential"),
    "fallback": ("estimate", "relative"),
    "propagation": (False, True),
    "fullness": ("partial", "full"),
    "metric": ("avg", "median", "min", "max"),
    "type": ("all", "immediate", "extended"),
    "k": tuple(range(1, 31)),
}
"""004 section 7's parameters and their values, in its Fig. 9 order (left to right):
3 x 2 x 2 x 2 x 4 x 3 x 30 = 8,640 configurations (its footnote 8)."""


def predictor_space(**values: Iterable[Any]) -> Iterator[UserHistoryConfig]:
    """004 section 7's configurations, in a fixed order; ``values`` restrict parameters.

    Without arguments, all 8,640 (:data:`PREDICTOR_SPACE`), the last parameter (``k``)
    varying fastest. A keyword narrows or widens a parameter's values, e.g. 004's
    suggested subspace ``predictor_space(type=["all"], correction=["estimate"],
    k=range(1, 4))``; values are validated as :class:`UserHistoryConfig` does.

    Raises:
        InvalidConfigError: an unknown parameter or an invalid value.

    >>> sum(1 for _ in predictor_space())
    8640
    >>> [str(c) for c in predictor_space(correction=["estimate"], fallback=["estimate"],
    ...     propagation=[False], fullness=["partial"], metric=["avg"], type=["all"], k=[2])]
    ['user-history:correction=estimate']
    """
    unknown = set(values) - set(PREDICTOR_SPACE)
    if unknown:
        raise InvalidConfigError(
            f"predictor space: unknown parameter(s) {', '.join(sorted(unknown))} "
            f"(known: {', '.join(PREDICTOR_SPACE)})"
        )
    axes = []
    for name, default in PREDICTOR_SPACE.items():
        given = values.get(name)
        chosen = tuple(default if given is None else (given,) if isinstance(given, (str, int)) else given)
        if not chosen:
            raise InvalidConfigError(f"predictor space: no values for {name}")
        axes.append(chosen)
    names = list(PREDICTOR_SPACE)
    for combo in itertools.product(*axes):
        yield UserHistoryConfig(**dict(zip(names, combo, strict=True)))


def sample_predictor_space(n: int, seed: int = 0, **values: Iterable[Any]) -> list[UserHistoryConfig]:
    """``n`` distinct configurations drawn uniformly from :func:`predictor_space` (``values``).

    The draw is ``numpy.random.default_rng(seed).choice(size, n, replace=False)``; the
    configurations are returned in the space's order, so the same ``n``, ``seed`` and
    ``values`` always give the same list, and a larger ``n`` with the same seed is not
    a superset (draw once with the largest ``n`` you need).

    Raises:
        InvalidConfigError: ``n`` is not between 1 and the space's size.

    >>> [c.k for c in sample_predictor_space(3, seed=1, type="all", correction="estimate")]
    [4, 11, 5]
    """
    space = list(predictor_space(**values))
    count = _positive_int("sample size n", n)
    if count > len(space):
        raise InvalidConfigError(f"sample size n={count} exceeds the space's {len(space)} configurations")
    picks = np.sort(np.random.default_rng(seed).choice(len(space), size=count, replace=False))
    return [space[i] for i in picks.tolist()]
