"""Optional dependencies: check for them before a long run, not after it.

A command that plots or trains calls :func:`require` first, so a missing package is a
:class:`~hpcgym.common.errors.MissingExtraError` naming the ``pip install 'hpcgym[...]'`` that
adds it, raised before any simulation starts rather than a ``ModuleNotFoundError`` at the
end of one.

>>> require("plot", "math", what="a plot")  # present: nothing happens
>>> require("plot", "no_such_module_hpcgym", what="--plot")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hpcgym.common.errors.MissingExtraError: --plot needs no_such_module_hpcgym, ...: pip install 'hpcgym[plot]'
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from hpcgym.common.errors import InvalidConfigError, MissingExtraError

EXTRAS: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib",),
    "rl": ("torch", "stable_baselines3", "sb3_contrib", "tyro"),
    "cp": ("ortools",),
    "ray": ("ray",),
    "learn": ("sklearn",),
    "stats": ("scipy",),
}
"""The optional extras of ``pyproject.toml`` and the modules each provides."""


def is_available(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (its parents may be imported)."""
    if module in sys.modules:
        return sys.modules[module] is not None  # None: import blocked on purpose
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing or blocked
        return False


def require(extra: str, *modules: str, what: str) -> None:
    """Raise unless every module of ``extra`` (or the ``modules`` given) can be imported.

    Args:
        extra: the extra that installs them (``"plot"``, ``"rl"``, ``"cp"``, ``"ray"``).
        modules: the modules needed; by default all those of the extra (:data:`EXTRAS`).
        what: what needs them, for the message (``"--plot"``, ``"training"``).

    Raises:
        MissingExtraError: a module is missing; the message names it and the
            ``pip install 'hpcgym[extra]'`` that adds it.
        InvalidConfigError: ``extra`` is not one of :data:`EXTRAS`.
    """
    if extra not in EXTRAS:
        raise InvalidConfigError(f"extra: unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    missing = [m for m in (modules or EXTRAS[extra]) if not is_available(m)]
    if missing:
        raise MissingExtraError(
            f"{what} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed: pip install 'hpcgym[{extra}]'"
        )


def _pyarrow_parquet(what: str) -> Any:
    """``pyarrow.parquet``, imported; Parquet files need it (the ``parquet`` extra).

    Raises:
        MissingExtraError: pyarrow is not installed; the message names ``what`` needs it.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(
            f"{what} needs pyarrow, which is not installed: pip install 'hpcgym[parquet]'"
        ) from None
    return pq
