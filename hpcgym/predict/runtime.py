"""Every runtime predictor by name: the built-in ones registered, listed, and made from a name.

The built-in predictors are registered here (``hpcgym predictors`` lists them with
:func:`predictor_names`); a predictor of your own is registered the same way
(:func:`~hpcgym.predict.registry.register_predictor`). Writing your own predictor
(the protocol: :mod:`hpcgym.predict.base`)::

    class HalfEstimate(Predictor):
        name = "half"

        def on_submit(self, job: int, now: float) -> None:
            self.prediction[job] = 0.5 * self.estimate[job]

    register_predictor("half", HalfEstimate, "half the user's estimate")

Then ``hpcgym simulate --predictor half+pcor`` plans with it, corrected as in Tsafrir
et al. (2007) section 3.2 whenever a job outlives it.

Names (``make_predictor`` and the CLI's ``--predictor``) have the form
``NAME[:key=value,...][+xF][+pcor]``: ``NAME`` is registered (``hpcgym predictors``),
``key=value`` pairs go to its constructor (``user-avg:k=3``), ``+x2`` multiplies every
prediction by 2 (:class:`~hpcgym.predict.modifiers.Scaled`, the X2 schedulers) and ``+pcor``
adds prediction correction (:class:`~hpcgym.predict.modifiers.Corrected`). Whatever order
they are written in, scaling is applied first and correction last, so ``+pcor`` corrects
the scaled prediction.

>>> p = make_predictor("user-avg:k=3+pcor")
>>> p.name, p.corrects
('user-avg:k=3+pcor', True)

004 section 7's 8,640 configurations of EASY++'s predictor are ``user-history:...``
names (:class:`~hpcgym.predict.user_history.UserHistoryConfig`,
:class:`~hpcgym.predict.user_history.UserHistory`); :mod:`hpcgym.predict.space` enumerates
and samples them for parameter studies:

>>> make_predictor("user-history:k=1,metric=max").name
'user-history:k=1,metric=max'
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.base import Oracle, Predictor, Walltime
from hpcgym.predict.modifiers import Scaled, with_correction
from hpcgym.predict.profile import ProfilePredictor
from hpcgym.predict.rangesets import RangeSetPredictor
from hpcgym.predict.registry import (
    PREDICTORS,
    _takes,
    parse_parameters,
    predictor_parameters,
    register_predictor,
    resolve_predictor_name,
)
from hpcgym.predict.user_history import LastKUserAverage, UserHistory, UserHistoryConfig


def predictor_names() -> dict[str, str]:
    """Registered predictor names with a one-line description each."""
    return PREDICTORS.descriptions()


def predictor_aliases() -> dict[str, str]:
    """Alias -> registered name."""
    return PREDICTORS.aliases()


def make_predictor(name: str) -> Predictor:
    """A new predictor from ``NAME[:key=value,...][+xF][+pcor]`` (case-insensitive name).

    Raises:
        UnknownNameError: ``NAME`` is not registered.
        InvalidConfigError: a parameter or modifier is not understood.

    >>> make_predictor("W").name
    'walltime'
    >>> make_predictor("user-avg+pcor+x2").name
    'user-avg+x2+pcor'
    """
    if not isinstance(name, str):
        raise InvalidConfigError(f"predictor must be a name (hpcgym predictors), got {name!r}")
    base, *mods = (part.strip() for part in name.split("+"))
    base_name, _, params = base.partition(":")
    key = resolve_predictor_name(base_name.strip())
    accepted = predictor_parameters(key)
    kwargs = parse_parameters(name, params, key, accepted)
    try:
        predictor = PREDICTORS.make(key, **kwargs)
    except InvalidConfigError as err:
        raise InvalidConfigError(f"predictor {name!r}: {err}") from err
    except TypeError as err:  # a factory without a signature that rejects a keyword
        raise InvalidConfigError(f"predictor {name!r}: {err} ({key} {_takes(accepted)})") from err
    if isinstance(predictor, UserHistory) and not isinstance(predictor, LastKUserAverage):
        predictor.name = str(predictor.config)  # one name per configuration, however spelt
    elif params.strip():
        predictor.name = f"{key}:{','.join(item.strip() for item in params.split(','))}"
    else:
        predictor.name = key
    factor = 1.0
    correct = False
    for mod in mods:
        m = mod.lower()
        if m == "pcor":
            correct = True
        elif m.startswith("x"):
            try:
                value = float(m[1:])
            except ValueError:
                value = float("nan")
            if not (np.isfinite(value) and value > 0):
                raise InvalidConfigError(
                    f"predictor {name!r}: modifier {mod!r} is not x<factor> with a positive factor (e.g. +x2)"
                )
            factor *= value
        else:
            raise InvalidConfigError(
                f"predictor {name!r}: unknown modifier {mod!r} (use +x<factor> or +pcor)"
            )
    if factor != 1.0:
        predictor = Scaled(predictor, factor)
    if correct:
        predictor = with_correction(predictor)
    return predictor


register_predictor("walltime", Walltime, "W: the user's estimate (SWF field 9)", aliases=("w",))
register_predictor("real", Oracle, "R: the real run time (oracle)", aliases=("r", "oracle"))
register_predictor(
    "user-avg",
    LastKUserAverage,
    "mean run time of the k (=2) terminated jobs the user submitted last, capped by the estimate "
    "(Tsafrir 2007); params k, window=all|immediate, full, order=submit|end",
    aliases=("last-k", "tsafrir"),
)


def _user_history(
    k: int = 2,
    type: str = "all",
    fullness: str = "partial",
    metric: str = "avg",
    fallback: str = "estimate",
    propagation: bool | str = False,
    correction: str = "none",
    order: str = "submit",
) -> UserHistory:
    """``user-history:key=value,...``: :class:`UserHistory` of that :class:`UserHistoryConfig`."""
    return UserHistory(
        UserHistoryConfig(k, type, fullness, metric, fallback, propagation, correction, order)  # type: ignore[arg-type]
    )


register_predictor(
    "user-history",
    _user_history,
    "004 s.7's predictor space: k=1..30, type=all|immediate|extended, fullness=partial|full, "
    "metric=avg|median|min|max, fallback=estimate|relative, propagation=no|yes, "
    "correction=none|estimate|gradual|exponential (defaults: user-avg's)",
    aliases=("history",),
)
register_predictor(
    "user-avg-imm",
    functools.partial(LastKUserAverage, window="immediate"),
    "user-avg, 'immediate' window: history used only if its estimates equal the job's (Tsafrir 2007 s.4)",
)
register_predictor(
    "profile",
    ProfilePredictor,
    "D: run time of the user's last job with the closest profile (Galleguillos 2017 s.3), capped by W",
    aliases=("d", "data-driven"),
)


def _rangeset(**params: Any) -> Predictor:
    """003's rangeSet predictor (:class:`~hpcgym.predict.rangesets.RangeSetPredictor`).

    Its keywords are left to the constructor to check (``predictor_parameters("rangeset")``
    is None), so a wrong one is reported with "takes the parameters of its constructor".
    """
    return RangeSetPredictor(**params)


register_predictor(
    "rangeset",
    _rangeset,
    "003 execution-time rangeSets (load functions, merged ranges, probabilities): the weighted sum "
    "of range medians, capped by W; params k, l, m, x, eps, recent, span, compact, overlap, "
    "new_mass, max_ranges, window, refit, shift=additive|relative, history (hpcgym.predict.rangesets)",
    aliases=("rangesets", "hariharan"),
)
