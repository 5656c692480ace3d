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
from hpcgym.predictors import Predictor, Scaled, make_predictor, with_correction
from hpcgym.registry import Entry, Registry
from hpcgym.sim import Dispatcher

__all__ = [
    "FCFS",
    "POLICIES",
    "EasyBackfilling",
    "ListScheduler",
    "PolicySpec",
    "make_policy",
    "policy_spec",
    "policy_specs",
    "preset_predictor",
    "register_policy",
    "resolve_policy_name",
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
        correction: plan with prediction correction (Tsafrir et al. 2007 section 3.2),
            whatever the predictor.
        doubling: multiply every prediction by this factor (2 for the X2 family).

    A preset's correction and doubling belong to the scheduler: ``--predictor`` replaces
    only the predictor, and :func:`preset_predictor` adds the preset's doubling and
    correction to it.
    """

    name: str
    factory: Callable[[], Dispatcher]
    predictor: str
    description: str
    combines: dict[str, str] = field(default_factory=dict)
    correction: bool = False
    doubling: float = 1.0

    def __call__(self) -> Dispatcher:
        """A fresh dispatcher (a spec is the factory its registry entry holds)."""
        return self.factory()


POLICIES: Registry[Dispatcher] = Registry("policy", "policies")
"""Every dispatcher preset by name; each entry's factory is its :class:`PolicySpec`."""


def register_policy(spec: PolicySpec, aliases: tuple[str, ...] = (), *, replace: bool = False) -> None:
    """Make a preset available by name (and ``aliases``, case-insensitive).

    Raises:
        InvalidConfigError: the name or an alias is taken (unless ``replace=True`` for
            the preset's own name).
    """
    POLICIES.register(spec.name, spec, aliases=aliases, description=spec.description, replace=replace)


def _as_spec(entry: Entry[Dispatcher]) -> PolicySpec:
    """The entry's spec; a factory registered directly on :data:`POLICIES` plans with W."""
    if isinstance(entry.factory, PolicySpec):
        return entry.factory
    return PolicySpec(entry.name, entry.factory, "walltime", entry.description)


def policy_specs() -> dict[str, PolicySpec]:
    """Every registered preset by name."""
    return {name: _as_spec(entry) for name, entry in POLICIES.items()}


def policy_spec(name: str) -> PolicySpec:
    """The preset registered as ``name`` or one of its aliases (case-insensitive)."""
    return _as_spec(POLICIES.entry(name))


def resolve_policy_name(name: str) -> str:
    """The registered name for ``name`` or one of its aliases (case-insensitive)."""
    return POLICIES.resolve(name)


def make_policy(name: str) -> Dispatcher:
    """A fresh dispatcher for a registered preset name or alias."""
    return POLICIES.make(name)


def preset_predictor(policy: str, predictor: str | None = None) -> Predictor:
    """The predictor a preset plans with, or ``predictor`` (a name or alias) instead.

    The CLI, the reproduction tables and the Gymnasium environment all build predictors
    here, so a policy run directly and through the environment plans with the same one.
    The preset's doubling (:class:`~hpcgym.predictors.Scaled`) and prediction correction
    (:class:`~hpcgym.predictors.Corrected`) are applied to ``predictor`` too, so
    ``preset_predictor("easy++", "real")`` is the oracle with SJBF's correction setting
    (never triggered: the oracle is never outlived).

    >>> preset_predictor("easy++").name
    'user-avg+pcor'
    >>> preset_predictor("x2+", "profile").name
    'profile+x2+pcor'
    """
    spec = policy_spec(policy)
    pred = make_predictor(predictor if predictor is not None else spec.predictor)
    if spec.doubling != 1.0:
        pred = Scaled(pred, spec.doubling)
    if spec.correction:
        pred = with_correction(pred)
    return pred


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


def _family(
    name: str,
    paper: str,
    description: str,
    predictor: str,
    *,
    correction: bool = False,
    sjbf: bool = False,
    reserve_shortest: bool = False,
    doubling: float = 1.0,
) -> PolicySpec:
    """A preset of the prediction-based backfilling family of Tsafrir et al. (2007)."""
    queue = "shortest predicted first" if reserve_shortest else "arrival"
    return PolicySpec(
        name,
        _easy(name, sjbf=sjbf, reserve_shortest=reserve_shortest),
        predictor,
        f"{paper}: {description}",
        {
            "queue order": f"{queue} (gets the reservation)",
            "backfill order": "shortest predicted first" if sjbf else "arrival",
            "predictor": predictor,
            "correction": "pcor" if correction else "none",
            "doubling": f"{doubling:g}",
        },
        correction=correction,
        doubling=doubling,
    )


# Tsafrir, Etsion and Feitelson (2007), sections 3-5: names as in the paper, lower case.
_FAMILY = [
    _family(
        "easy-pcor",
        "EASY_PCOR",
        "EASY with prediction correction of user estimates",
        "walltime",
        correction=True,
    ),
    _family(
        "easy+",
        "EASY+",
        "EASY planning with user-average predictions, corrected",
        "user-avg",
        correction=True,
    ),
    _family(
        "easy-sjbf",
        "EASY_SJBF",
        "EASY with shortest-job-backfilled-first, user estimates",
        "walltime",
        sjbf=True,
    ),
    _family(
        "easy++",
        "EASY++",
        "EASY+ with SJBF (FCFS reservation order kept)",
        "user-avg",
        correction=True,
        sjbf=True,
    ),
    _family(
        "perfect++", "PERFECT++", "EASY with SJBF and perfect predictions (real run times)", "real", sjbf=True
    ),
    _family("x2", "X2", "EASY with doubled user estimates", "walltime", doubling=2.0),
    _family(
        "x2+",
        "X2+",
        "EASY with doubled user-average predictions, corrected",
        "user-avg",
        correction=True,
        doubling=2.0,
    ),
    _family("x2++", "X2++", "X2+ with SJBF", "user-avg", correction=True, sjbf=True, doubling=2.0),
    _family(
        "sjf",
        "SJF",
        "backfilling with the reservation for the shortest job, user estimates",
        "walltime",
        sjbf=True,
        reserve_shortest=True,
    ),
    _family(
        "sjf+",
        "SJF+",
        "SJF with user-average predictions, corrected",
        "user-avg",
        correction=True,
        sjbf=True,
        reserve_shortest=True,
    ),
]
for _spec in _FAMILY:
    register_policy(_spec)
