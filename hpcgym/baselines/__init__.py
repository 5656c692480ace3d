"""Reference dispatchers and the named presets the CLI and the environment use.

>>> from hpcgym.baselines import make_policy, policy_specs
>>> make_policy("easy").name
'easy'
>>> policy_specs()["easy"].predictor
'walltime'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hpcgym.baselines.dispatchers import FCFS, EasyBackfilling, ListScheduler
from hpcgym.errors import UnknownNameError
from hpcgym.predictors import Predictor, make_predictor
from hpcgym.sim import Dispatcher

__all__ = [
    "FCFS",
    "EasyBackfilling",
    "ListScheduler",
    "PolicySpec",
    "make_policy",
    "policy_specs",
    "preset_predictor",
    "register_policy",
]


@dataclass(frozen=True)
class PolicySpec:
    """A named dispatcher preset.

    Attributes:
        name: CLI name (lower case).
        factory: builds a fresh dispatcher.
        predictor: the predictor the preset plans with unless ``--predictor`` overrides it.
        description: one line for ``hpcgym policies``.
        combines: what the preset is made of (queue order, backfill order, ...), shown
            by ``hpcgym policies``.
    """

    name: str
    factory: Callable[[], Dispatcher]
    predictor: str
    description: str
    combines: dict[str, str] = field(default_factory=dict)


_POLICIES: dict[str, PolicySpec] = {}
_ALIASES: dict[str, str] = {}


def register_policy(spec: PolicySpec, aliases: tuple[str, ...] = ()) -> None:
    """Make a preset available by name."""
    _POLICIES[spec.name] = spec
    for alias in aliases:
        _ALIASES[alias.lower()] = spec.name


def policy_specs() -> dict[str, PolicySpec]:
    """Every registered preset by name."""
    return dict(_POLICIES)


def resolve_policy_name(name: str) -> str:
    """The registered name for ``name`` or one of its aliases (case-insensitive)."""
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _POLICIES:
        known = ", ".join(_POLICIES)
        raise UnknownNameError(f"unknown policy {name!r}; known policies: {known}")
    return key


def make_policy(name: str) -> Dispatcher:
    """A fresh dispatcher for a registered preset name or alias."""
    return _POLICIES[resolve_policy_name(name)].factory()


def preset_predictor(policy: str, predictor: str | None = None) -> Predictor:
    """The predictor a preset plans with, or ``predictor`` (a name or alias) instead.

    The CLI, the reproduction tables and the Gymnasium environment all build predictors
    here, so a policy run directly and through the environment plans with the same one.
    """
    spec = _POLICIES[resolve_policy_name(policy)]
    return make_predictor(predictor if predictor is not None else spec.predictor)


def _easy(name: str, **kwargs: object) -> Callable[[], Dispatcher]:
    return lambda: EasyBackfilling(name=name, **kwargs)  # type: ignore[arg-type]


register_policy(
    PolicySpec(
        "fcfs",
        FCFS,
        "walltime",
        "first come, first served; nothing overtakes the first waiting job",
        {"queue order": "arrival", "backfill": "none"},
    )
)
register_policy(
    PolicySpec(
        "sjf-list",
        ListScheduler,
        "walltime",
        "001 SJF: sort by expected duration, start every job that fits (no reservation)",
        {"queue order": "shortest predicted first", "backfill": "whole list, no reservation"},
    ),
)
register_policy(
    PolicySpec(
        "ljf-list",
        lambda: ListScheduler(longest_first=True),
        "walltime",
        "001 LJF: sort by expected duration, longest first, start every job that fits",
        {"queue order": "longest predicted first", "backfill": "whole list, no reservation"},
    ),
    aliases=("ljf",),
)
register_policy(
    PolicySpec(
        "easy",
        _easy("easy"),
        "walltime",
        "EASY backfilling: FCFS with a reservation for the first job that cannot start",
        {
            "queue order": "arrival",
            "backfill order": "arrival",
            "predictor": "walltime",
            "correction": "none",
            "doubling": "1",
        },
    ),
    aliases=("ebf",),
)
