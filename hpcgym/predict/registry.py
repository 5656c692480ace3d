"""The runtime-predictor registry: register a predictor, look up a name, read its parameters.

Predictors are registered by name (:func:`register_predictor`; the built-in ones in
:mod:`hpcgym.predict.runtime`) and named with ``key=value`` parameters after a colon
(``user-avg:k=3``); :func:`parse_parameters` reads those for :func:`hpcgym.predict.make_predictor`
and for the configurations that parse their own names.
"""

from __future__ import annotations

from collections.abc import Callable

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.registry import Registry, factory_parameters, parse_value
from hpcgym.predict.base import Predictor

PredictorFactory = Callable[..., Predictor]

PREDICTORS: Registry[Predictor] = Registry(
    "predictor",
    usage="(add ':key=value' parameters, '+x2' to double, '+pcor' for prediction correction)",
)
"""Every predictor by name (``make_predictor`` adds parameters and modifiers to a name)."""


def register_predictor(
    name: str,
    factory: PredictorFactory,
    description: str,
    aliases: tuple[str, ...] = (),
    *,
    replace: bool = False,
) -> None:
    """Make a predictor available by name (CLI ``--predictor``, ``make_predictor``).

    Args:
        name: lower-case name without ``+`` or ``:`` (those separate modifiers and
            parameters).
        factory: builds a fresh predictor; keyword parameters given as ``name:key=value``
            are passed to it.
        description: one line for ``hpcgym predictors``.
        aliases: other accepted names.
        replace: replace a predictor already registered as ``name``.

    Raises:
        InvalidConfigError: a name has a separator character, or it is taken.
    """
    for n in (name, *aliases):
        if not isinstance(n, str) or not n or any(c in n for c in "+:,= "):
            raise InvalidConfigError(
                f"predictor name {n!r} must be non-empty without '+', ':', ',', '=' or spaces"
            )
    PREDICTORS.register(name, factory, aliases=aliases, description=description, replace=replace)


def resolve_predictor_name(name: str) -> str:
    """The registered name for ``name`` or one of its aliases (no parameters or modifiers)."""
    return PREDICTORS.resolve(name)


def predictor_parameters(name: str) -> tuple[str, ...] | None:
    """The ``key=value`` parameters the predictor ``name`` takes (``None``: not known, any).

    >>> predictor_parameters("user-avg")
    ('k', 'window', 'full', 'order')
    >>> predictor_parameters("W")
    ()
    """
    return factory_parameters(PREDICTORS.factory(name))


def _takes(accepted: tuple[str, ...] | None) -> str:
    if accepted == ():
        return "takes no parameters"
    return f"takes {', '.join(accepted)}" if accepted else "takes the parameters of its constructor"


def parse_parameters(name: str, params: str, key: str, accepted: tuple[str, ...] | None) -> dict[str, object]:
    """The ``key=value`` pairs of ``params`` (the text after ``NAME:`` in ``name``) as keywords.

    Raises:
        InvalidConfigError: an item is not ``key=value``, a key is not one ``key``
            takes (``accepted``) or is given twice.
    """
    kwargs: dict[str, object] = {}
    if params.strip():
        for item in params.split(","):
            k, eq, v = item.partition("=")
            k = k.strip()
            if not eq or not k:
                raise InvalidConfigError(
                    f"predictor {name!r}: parameter {item.strip()!r} is not key=value "
                    f"({key} {_takes(accepted)})"
                )
            if accepted is not None and k not in accepted:
                raise InvalidConfigError(
                    f"predictor {name!r}: unknown parameter {k!r} ({key} {_takes(accepted)})"
                )
            if k in kwargs:
                raise InvalidConfigError(f"predictor {name!r}: parameter {k!r} is given twice")
            kwargs[k] = parse_value(v.strip())
    return kwargs
