"""The named dispatcher presets: the table (name -> :class:`PolicySpec`) and how a name becomes a dispatcher.

:data:`PRESETS` holds every built-in preset as data, in the order ``hpcgym policies``
lists them, and :data:`ALIASES` their other names; both are registered on
:data:`POLICIES`, where :func:`register_policy` adds more. :func:`make_policy`,
:func:`resolve_policy_name`, :func:`policy_specs` and :func:`preset_predictor` read
the registry.

>>> make_policy("easy").name
'easy'
>>> policy_specs()["easy"].predictor
'walltime'

A name may carry parameters for its factory, ``NAME:key=value,...`` (as predictors do):

>>> resolve_policy_name("PRB: ewt=uniform")
'prb:ewt=uniform'
>>> make_policy("prb:ewt=uniform,allocation=first-fit").allocation
'first-fit'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hpcgym.baselines.cp import ConstraintProgramming
from hpcgym.baselines.dispatchers import FCFS, EasyBackfilling, ListScheduler, PriorityRuleBased
from hpcgym.baselines.heuristics import QueueOrder
from hpcgym.baselines.replay import Replay
from hpcgym.baselines.rlscheduler import RLS_SCORES, RLSchedulerOrder
from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.registry import Entry, Registry, factory_parameters, parse_value
from hpcgym.predict import Predictor, Scaled, make_predictor, with_correction
from hpcgym.sim import Dispatcher

__all__ = [
    "ALIASES",
    "POLICIES",
    "PRESETS",
    "PolicySpec",
    "make_policy",
    "policy_parameters",
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
    factory: Callable[..., Dispatcher]
    predictor: str
    description: str
    combines: dict[str, str] = field(default_factory=dict)
    correction: bool = False
    doubling: float = 1.0

    def __call__(self, **kwargs: object) -> Dispatcher:
        """A fresh dispatcher (a spec is the factory its registry entry holds).

        ``kwargs`` are the parameters of a ``NAME:key=value`` name, passed to the factory.
        """
        return self.factory(**kwargs)


POLICIES: Registry[Dispatcher] = Registry(
    "policy",
    "policies",
    usage="(add ':key=value' parameters where a preset takes them, e.g. prb:ewt=uniform)",
)
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
    """The preset registered as ``name`` or one of its aliases (case-insensitive).

    Parameters (``NAME:key=value``) are ignored here: the spec is the preset's.
    """
    return _as_spec(POLICIES.entry(_base(name)))


def _base(name: str) -> str:
    if not isinstance(name, str):
        return name  # the registry's message for a name that is not a string
    return name.partition(":")[0]


def policy_parameters(name: str) -> tuple[str, ...] | None:
    """The ``key=value`` parameters the preset ``name`` takes (``None``: any).

    >>> policy_parameters("prb")
    ('ewt', 'unknown', 'allocation')
    >>> policy_parameters("easy")
    ()
    """
    return factory_parameters(policy_spec(name).factory)


def _parse(name: str) -> tuple[str, dict[str, object], str]:
    """``(canonical preset name, parameters, canonical full name)`` of ``NAME[:key=value,...]``."""
    base, colon, params = name.partition(":") if isinstance(name, str) else (name, "", "")
    key = POLICIES.resolve(base.strip() if isinstance(base, str) else base)
    if not colon:
        return key, {}, key
    accepted = policy_parameters(key)
    takes = (
        "takes no parameters"
        if accepted == ()
        else f"takes {', '.join(accepted)}"
        if accepted
        else "takes the parameters of its factory"
    )
    items = [item.strip() for item in params.split(",")]
    kwargs: dict[str, object] = {}
    for item in items:
        k, eq, v = item.partition("=")
        k = k.strip()
        if not eq or not k:
            raise InvalidConfigError(f"policy {name!r}: parameter {item!r} is not key=value ({key} {takes})")
        if accepted is not None and k not in accepted:
            raise InvalidConfigError(f"policy {name!r}: unknown parameter {k!r} ({key} {takes})")
        if k in kwargs:
            raise InvalidConfigError(f"policy {name!r}: parameter {k!r} is given twice")
        kwargs[k] = parse_value(v.strip())
    return (
        key,
        kwargs,
        f"{key}:{','.join(f'{k.strip()}={v.strip()}' for k, _, v in (i.partition('=') for i in items))}",
    )


def resolve_policy_name(name: str) -> str:
    """The canonical name for ``name`` or one of its aliases (case-insensitive).

    A name with parameters (``prb:ewt=uniform``) keeps them, after the canonical preset
    name, and is checked by building the dispatcher once.

    Raises:
        UnknownNameError: no such preset.
        InvalidConfigError: a parameter the preset does not take or rejects.
    """
    _, kwargs, full = _parse(name)
    if kwargs:
        make_policy(full)  # a bad value fails here, before any simulation
    return full


def make_policy(name: str) -> Dispatcher:
    """A fresh dispatcher for a registered preset name or alias, with its ``:key=value`` parameters.

    Raises:
        UnknownNameError: no such preset.
        InvalidConfigError: a parameter the preset does not take or rejects.
    """
    key, kwargs, full = _parse(name)
    if not kwargs:
        return POLICIES.make(key)
    try:
        return POLICIES.make(key, **kwargs)
    except InvalidConfigError as err:
        raise InvalidConfigError(f"policy {full!r}: {err}") from err
    except TypeError as err:  # a factory without a signature that rejects a keyword
        raise InvalidConfigError(f"policy {full!r}: {err}") from err


def preset_predictor(policy: str, predictor: str | None = None) -> Predictor:
    """The predictor a preset plans with, or ``predictor`` (a name or alias) instead.

    The CLI, the reproduction tables and the Gymnasium environment all build predictors
    here, so a policy run directly and through the environment plans with the same one.
    The preset's doubling (:class:`~hpcgym.predict.Scaled`) and prediction correction
    (:class:`~hpcgym.predict.Corrected`) are applied to ``predictor`` too, so
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


# --------------------------------------------------------------- the factories and generated rows
def _prb(ewt: str = "machine", unknown: float | None = None, allocation: str = "best-fit") -> Dispatcher:
    return PriorityRuleBased(ewt=ewt, unknown=unknown, allocation=allocation)


def _easy(name: str, **kwargs: object) -> Callable[[], Dispatcher]:
    return lambda: EasyBackfilling(name=name, **kwargs)  # type: ignore[arg-type]


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


# RLScheduler (Zhang et al. 2020) section 5.1 and Carastan-Santos & de Camargo (2017):
# queue orders by score, each without and with EASY backfilling (see heuristics.py).
_HEURISTICS = {
    "sjf-est": ("sjf", "shortest estimate first", "r"),
    "saf": ("saf", "smallest area first", "r * n"),
    "f1": ("f1", "Carastan-Santos & de Camargo F1", "log10(r)*n + 870*log10(s)"),
    "f2": ("f2", "Carastan-Santos & de Camargo F2", "sqrt(r)*n + 25600*log10(s)"),
    "f3": ("f3", "Carastan-Santos & de Camargo F3", "r*n + 6860000*log10(s)"),
    "f4": ("f4", "Carastan-Santos & de Camargo F4", "r*sqrt(n) + 530000*log10(s)"),
    "wfp3": ("wfp3", "WFP3: long waits relative to the estimate first", "-(w/r)^3 * n, w = current wait"),
    "unicep": ("unicep", "UNICEP: long waits per log-size and estimate first", "-w / (log2(max(n,2)) * r)"),
}


def _queue_order(score: str, backfill: bool, name: str) -> Callable[[], Dispatcher]:
    return lambda: QueueOrder(score=score, backfill=backfill, name=name)


def _heuristics() -> list[PolicySpec]:
    """The queue orders of :data:`_HEURISTICS`: each without backfilling, then with EASY's."""
    specs = []
    for name, (score, what, formula) in _HEURISTICS.items():
        order_text = f"score {formula}, lowest first, ties by arrival"
        specs.append(
            PolicySpec(
                name,
                _queue_order(score, False, name),
                "walltime",
                f"{what}; start in that order until a job does not fit, no backfilling"
                + (" (backfilled: sjf)" if name == "sjf-est" else ""),
                {"queue order": order_text, "backfill": "none"},
            )
        )
        if name != "sjf-est":  # the backfilled SJF order is the preset 'sjf' (alias sjf-bf)
            specs.append(
                PolicySpec(
                    f"{name}-bf",
                    _queue_order(score, True, f"{name}-bf"),
                    "walltime",
                    f"{what}, EASY backfilling in that order "
                    "(reservation for its first job that does not fit)",
                    {
                        "queue order": f"{order_text} (gets the reservation)",
                        "backfill order": "the same score",
                    },
                )
            )
    return specs


def _random_fit(backfill: bool) -> Callable[..., Dispatcher]:
    name = "random-fit-bf" if backfill else "random-fit"

    def factory(seed: int = 0) -> Dispatcher:
        return QueueOrder(
            score="random", backfill=backfill, seed=seed, name=name if not seed else f"{name}:seed={seed}"
        )

    return factory


# RLScheduler's table under its own simulator's rules (rlscheduler.py), for --protocol rlscheduler.
def _rls(score: str, backfill: bool) -> Callable[[], Dispatcher]:
    return lambda: RLSchedulerOrder(score=score, backfill=backfill)


def _rlscheduler() -> list[PolicySpec]:
    """Each score of :data:`~hpcgym.baselines.rlscheduler.RLS_SCORES` without, then with backfilling."""
    return [
        PolicySpec(
            f"rls-{score}" + ("-bf" if bf else ""),
            _rls(score, bf),
            "walltime",
            f"{score} as RLScheduler's simulator runs it: committed head"
            + (", backfilling in FCFS order before its earliest start" if bf else ", no backfilling"),
            {
                "queue order": f"RLScheduler's {score} score as coded; the chosen job waits to fit",
                "backfill": "FCFS order, estimated end strictly before the head's earliest start"
                if bf
                else "none",
            },
        )
        for score in RLS_SCORES
        for bf in (False, True)
    ]


def _cp(model: str, version: int, name: str) -> Callable[..., Dispatcher]:
    def factory(
        m: int | None = None,
        delta: float = 1.0,
        delta_max: float = 16.0,
        k: int | None = None,
        reduce: bool | None = None,
        fix: bool | None = None,
        slowdown: bool | None = None,
        search: str = "hint",
        workers: int = 1,
        seed: int = 0,
        dtime: float | None = 1.0,
        presolve: bool | None = None,
        ewt: str = "machine",
        unknown: float | None = None,
    ) -> Dispatcher:
        return ConstraintProgramming(
            model=model,
            version=version,
            m=m,
            delta=delta,
            delta_max=delta_max,
            k=k,
            reduce=reduce,
            fix=fix,
            slowdown=slowdown,
            search=search,
            workers=workers,
            seed=seed,
            dtime=dtime,
            presolve=presolve,
            ewt=ewt,
            unknown=unknown,
            name=name,
        )

    return factory


_CP_VERSIONS = {
    0: "the original",
    1: "reduced model (m=100, jobs that do not fit now left out) and search control",
    2: "v1 + running jobs past their predicted end get 1 s left",
    3: "v2 + slowdown objective and priorities",
}
_CP_PARAMETERS = (
    "m, delta, delta_max, k, reduce, fix, slowdown, search=hint|strategy|default, workers, seed, "
    "dtime, ewt, unknown"
)


def _constraint_programming() -> list[PolicySpec]:
    """HCP and PCP in each version of :data:`_CP_VERSIONS` (002 Table 1)."""
    specs = []
    for v, what in _CP_VERSIONS.items():
        specs.append(
            PolicySpec(
                f"hcp{v}",
                _cp("hcp", v, f"hcp{v}"),
                "walltime",
                f"002 HCP v{v} (CP-SAT on pooled resources, then PRB best-fit): {what}",
                {"model": "pooled cumulatives + best-fit", "version": str(v), "parameters": _CP_PARAMETERS},
            )
        )
        specs.append(
            PolicySpec(
                f"pcp{v}",
                _cp("pcp", v, f"pcp{v}"),
                "walltime",
                f"002 PCP v{v} (CP-SAT scheduling and allocation per node): {what}",
                {
                    "model": "per-node cumulatives, optional intervals",
                    "version": str(v),
                    "parameters": _CP_PARAMETERS,
                },
            )
        )
    return specs


# --------------------------------------------------------------- the table
PRESETS: dict[str, PolicySpec] = {
    spec.name: spec
    for spec in (
        PolicySpec(
            "fcfs",
            FCFS,
            "walltime",
            "first come, first served; nothing overtakes the first waiting job",
            {"queue order": "arrival", "backfill": "none"},
        ),
        PolicySpec(
            "sjf-list",
            ListScheduler,
            "walltime",
            "001 SJF: sort by expected duration, start every job that fits (no reservation)",
            {"queue order": "shortest predicted first", "backfill": "whole list, no reservation"},
        ),
        PolicySpec(
            "ljf-list",
            lambda: ListScheduler(longest_first=True),
            "walltime",
            "001 LJF: sort by expected duration, longest first, start every job that fits",
            {"queue order": "longest predicted first", "backfill": "whole list, no reservation"},
        ),
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
        # Tsafrir, Etsion and Feitelson (2007), sections 3-5: names as in the paper, lower case.
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
            "perfect++",
            "PERFECT++",
            "EASY with SJBF and perfect predictions (real run times)",
            "real",
            sjbf=True,
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
        # Galleguillos et al. (2017) section 4, (2019) section 2.2
        PolicySpec(
            "prb",
            _prb,
            "walltime",
            "001/002 PRB: most urgent first (wait / queue's expected wait), ties by smaller "
            "demand; best-fit; every job that fits starts",
            {
                "queue order": "max(ewt)/ewt x wait, highest first; ties: resources x predicted duration",
                "backfill": "whole list, no reservation",
                "allocation": "best-fit",
                "parameters": "ewt=machine|uniform|QUEUE=S/..., unknown=S, "
                "allocation=best-fit|first-fit|machine",
            },
        ),
        # Hariharan et al. (003) and Galleguillos et al. (002): the system as it ran
        PolicySpec(
            "replay",
            Replay,
            "walltime",
            "the logged schedule: each job starts at submit + SWF wait, or as soon after as it fits "
            "(delays and the log's overcommitted instants counted)",
            {"queue order": "logged start", "backfill": "every due job that fits", "predictor": "unused"},
        ),
        *_heuristics(),
        PolicySpec(
            "random-fit",
            _random_fit(False),
            "walltime",
            "a uniformly random waiting job that fits, again until none fits (seeded: random-fit:seed=1)",
            {
                "queue order": "random, drawn at every decision",
                "backfill": "every job that fits, no reservation",
                "parameters": "seed=0",
            },
        ),
        PolicySpec(
            "random-fit-bf",
            _random_fit(True),
            "walltime",
            "random queue order at every decision, EASY backfilling in that order "
            "(seeded: random-fit-bf:seed=1)",
            {
                "queue order": "random, drawn at every decision (gets the reservation)",
                "backfill order": "the same",
                "parameters": "seed=0",
            },
        ),
        *_rlscheduler(),
        *_constraint_programming(),
        PolicySpec(
            "cph",
            _cp("hcp", 0, "cph"),
            "walltime",
            "001 CPH: HCP v0 with wall-time durations (CP-SAT on pooled resources, then PRB best-fit)",
            {"model": "pooled cumulatives + best-fit", "version": "0", "parameters": _CP_PARAMETERS},
        ),
    )
}
"""Every built-in preset by name, in the order they are registered (and ``hpcgym policies`` lists them)."""

ALIASES: dict[str, tuple[str, ...]] = {
    "ljf-list": ("ljf",),
    "easy": ("ebf", "fcfs-bf"),
    "sjf": ("sjf-bf",),
    "replay": ("log",),
}
"""The other names of built-in presets, by preset (names are case-insensitive)."""

for _spec in PRESETS.values():
    register_policy(_spec, aliases=ALIASES.get(_spec.name, ()))
