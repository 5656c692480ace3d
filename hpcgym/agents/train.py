"""The training scripts by algorithm name, and training one from Python by name.

Each algorithm is one cleanrl-style file of :mod:`hpcgym.agents` whose ``Args``
dataclass is its configuration (:data:`ALGORITHMS`). :func:`train` takes the algorithm's
name and the fields of its ``Args``; :func:`make_args` only checks them. The command
``hpcgym train ALGORITHM FLAGS...`` (:mod:`hpcgym.cli.train`) routes to the script's
``main``, which reads the flags with tyro.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from hpcgym.common.errors import InvalidConfigError, UnknownNameError

ALGORITHMS = {
    "maskable-ppo": "hpcgym.agents.train_maskable_ppo",
    "ppo": "hpcgym.agents.train_ppo",
}
"""The training scripts by algorithm name."""


def algorithm_module(name: str) -> ModuleType:
    """The training script of ``name``.

    Raises:
        UnknownNameError: not one of :data:`ALGORITHMS`.
    """
    if name not in ALGORITHMS:
        raise UnknownNameError(f"algorithm: unknown {name!r}; known: {', '.join(ALGORITHMS)}")
    return importlib.import_module(ALGORITHMS[name])


def train(algorithm: str, **fields: Any) -> Any:
    """Train ``algorithm`` with ``Args(**fields)``; returns its :class:`~hpcgym.agents.run.TrainResult`.

    Raises:
        UnknownNameError: an unknown algorithm.
        InvalidConfigError: an unknown or invalid field (the message names it).

    >>> train("a2c")
    Traceback (most recent call last):
    ...
    hpcgym.common.errors.UnknownNameError: algorithm: unknown 'a2c'; known: maskable-ppo, ppo
    >>> train("ppo", total_timestep=10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hpcgym.common.errors.InvalidConfigError: unknown training argument 'total_timestep' of ppo; ...
    """
    from hpcgym.agents.common import require_training

    args = make_args(algorithm, **fields)
    require_training(args, what=f"training {algorithm}")
    return algorithm_module(algorithm).train(args)


def make_args(algorithm: str, **fields: Any) -> Any:
    """The ``Args`` of ``algorithm`` with ``fields``, validated (nothing is trained).

    Raises:
        UnknownNameError: an unknown algorithm.
        InvalidConfigError: an unknown field (the message names it and the closest known
            one) or an invalid value.
    """
    import dataclasses
    import difflib

    module = algorithm_module(algorithm)
    known = [f.name for f in dataclasses.fields(module.Args)]
    for name in fields:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            raise InvalidConfigError(f"unknown training argument {name!r} of {algorithm}{hint}")
    return module.Args(**fields)


__all__ = ["ALGORITHMS", "algorithm_module", "make_args", "train"]
