"""A simulation sweep's spec: the grid's axes, the options every run shares, the shipped presets.

:class:`SweepSpec` checks every key and every dispatcher x predictor pair when it is
made, before anything runs; :meth:`SweepSpec.from_file` reads a TOML (or YAML) file,
:data:`SPEC_KEYS` says what each key means and :data:`PRESETS` lists the specs shipped in
``hpcgym/experiments/sweep_presets/``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, UnknownNameError

PRESET_PREDICTOR = "preset"
"""The predictor string that means "the dispatcher's own" (``hpcgym policies``)."""

BUNDLED = "bundled"
"""The trace name that means the bundled 10,000-job slice of SDSC-SP2."""

SPEC_KEYS = {
    "name": "the sweep's name (default: the spec file's stem)",
    "dispatchers": "dispatcher presets, NAME[:key=value,...] (hpcgym policies)",
    "predictors": 'predictor strings (hpcgym predictors); "preset" is the dispatcher\'s own',
    "predictor_grid": "tables of a predictor name and lists of its parameters' values; their product "
    "is added to predictors",
    "traces": 'SWF traces (paths relative to the current folder) or "bundled"',
    "loads": "offered-load factors: inter-arrival times are divided by each",
    "offered_loads": "target offered loads (0.8 = 80 %), turned into a load factor per trace",
    "seeds": "seeds for dispatchers and predictors that take a seed parameter",
    "jobs": "simulate only this many jobs of each trace (default: all)",
    "offset": "skip this many jobs of each trace first",
    "procs": "machine size in processors for every trace (default: the trace's, as hpcgym simulate)",
    "extra": "EASY-family presets' extra-processor rule: classic or all (default: the preset's)",
    "kill_at_estimate": "end jobs that reach their estimate",
    "include_all": "average over every job (no warm-up/cool-down exclusion)",
    "sample": "run a seeded random sample of this many configurations of the grid instead of all",
    "sample_seed": "seed of that sample",
    "predictor_sample": "keep a seeded random sample (sample_seed) of this many of predictor_grid's "
    "strings, each run on every trace, dispatcher and load (the explicit predictors always run)",
    "plot": 'figures written after the sweep: "load" (wait and bsld against offered load), "params" '
    '(004 section 7\'s ranking of predictor configurations, hpcgym.experiments.paramstudy) or "none"',
}
"""The keys of a spec file, with what each means (``hpcgym sweep --help`` lists them)."""

PLOTS = ("none", "load", "params")

PRESETS = {
    "tsafrir-load": "004 section 3.4, Fig. 7: EASY, EASY++ and PERFECT++ as the offered load grows",
    "tsafrir-params": "004 section 7: EASY++ with a sample of the 8,640 predictor configurations, "
    "ranked by average degradation (Table 11, Figs. 9-10, Table 12)",
    "train-seeds": "a training sweep: MaskablePPO, 3 seeds x 2 learning rates, each evaluated on the "
    "test split beside EASY, EASY++ and SJF",
}
"""Sweep specs shipped with the package (``hpcgym/experiments/sweep_presets/NAME.toml``)."""


def preset_path(name: str) -> Path:
    """The spec file of the shipped preset ``name`` (:data:`PRESETS`).

    Raises:
        UnknownNameError: no such preset.
    """
    if name not in PRESETS:
        raise UnknownNameError(f"--preset: unknown sweep preset {name!r}; known: {', '.join(PRESETS)}")
    return Path(str(resources.files("hpcgym.experiments").joinpath("sweep_presets", f"{name}.toml")))


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep runs: the grid's axes and the options every run shares.

    Attributes:
        dispatchers: dispatcher presets, ``NAME[:key=value,...]`` (``hpcgym policies``).
        traces: SWF paths (relative to the current folder), names of downloaded logs of the
            trace catalogue (``hpcgym traces list``), or ``"bundled"``.
        predictors: predictor strings (``hpcgym predictors``, ``NAME:key=value``);
            ``"preset"`` is the dispatcher's own predictor (the default when neither this
            nor ``predictor_grid`` is given). Each is kept in one spelling
            (:func:`canonical_predictor`), so ``propagation=no`` and ``propagation=false``
            are one configuration with one run key.
        predictor_grid: tables such as ``{"name": "user-avg", "k": [1, 2], "full": [true,
            false]}``: the product of each table's parameter values, as
            ``NAME:key=value,...`` strings in the table's key order, is added to
            ``predictors`` (:func:`predictor_grid_names`).
        loads: offered-load factors (inter-arrival times are divided by each).
        offered_loads: target offered loads (fractions of the machine); when given they
            replace ``loads`` with one factor per trace (see :func:`offered_load`).
        seeds: seeds for dispatchers and predictors that take a ``seed`` parameter.
        jobs: simulate only this many jobs of each trace (None: all).
        offset: skip this many jobs of each trace first.
        procs: machine size for every trace (None: the trace's own).
        extra: EASY-family presets' extra-processor rule (None: the preset's).
        kill_at_estimate: end jobs that reach their estimate.
        include_all: average over every job (no warm-up/cool-down exclusion).
        sample: run a seeded random sample of this many configurations (None: the grid).
        sample_seed: seed of the sample (and of ``predictor_sample``).
        predictor_sample: keep a seeded random sample of this many of
            ``predictor_grid``'s strings (in grid order), each run on every trace,
            dispatcher and load, so that a parameter study's configurations are all
            measured on every trace (``sample`` draws runs, not configurations). The
            explicit ``predictors`` always run. None: the whole grid.
        plot: figures to write after the sweep, one of :data:`PLOTS`.
        name: the sweep's name.
        source: where the spec came from, for messages (a file, or ``"flags"``).
    """

    dispatchers: tuple[str, ...]
    traces: tuple[str, ...]
    predictors: tuple[str, ...] = ()
    predictor_grid: tuple[Mapping[str, Any], ...] = ()
    loads: tuple[float, ...] = (1.0,)
    offered_loads: tuple[float, ...] = ()
    seeds: tuple[int, ...] = (0,)
    jobs: int | None = None
    offset: int = 0
    procs: int | None = None
    extra: str | None = None
    kill_at_estimate: bool = False
    include_all: bool = False
    sample: int | None = None
    sample_seed: int = 0
    predictor_sample: int | None = None
    plot: str = "none"
    name: str = "sweep"
    source: str = "flags"

    def _fail(self, key: str, message: str) -> InvalidConfigError:
        return InvalidConfigError(f"{self.source}: {key}: {message}")

    def __post_init__(self) -> None:
        from hpcgym.baselines import EXTRA_RULES, preset_predictor, resolve_policy_name

        for key in (
            "dispatchers",
            "traces",
            "predictors",
            "predictor_grid",
            "loads",
            "offered_loads",
            "seeds",
        ):
            object.__setattr__(self, key, _as_tuple(getattr(self, key)))
        grid = predictor_grid_names(self.predictor_grid, self.source)
        n = self.predictor_sample
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise self._fail("predictor_sample", f"must be a whole number >= 1, got {n!r}")
        if n is not None and n < len(grid):
            pick = np.random.default_rng(self.sample_seed).choice(len(grid), size=n, replace=False)
            grid = [grid[i] for i in sorted(pick.tolist())]
        # one spelling per configuration (the run key hashes it), then: the explicit
        # predictors always run; a sampled grid string equal to one runs once
        explicit = tuple(canonical_predictor(p) if isinstance(p, str) else p for p in self.predictors)
        grid = list(dict.fromkeys(canonical_predictor(g) for g in grid))
        predictors = explicit + tuple(g for g in grid if g not in explicit)
        object.__setattr__(self, "predictors", predictors or (PRESET_PREDICTOR,))
        for key in ("dispatchers", "traces", "predictors"):
            values = getattr(self, key)
            if not values:
                raise self._fail(key, "give at least one")
            bad = [v for v in values if not isinstance(v, str) or not v.strip()]
            if bad:
                raise self._fail(key, f"every entry must be a non-empty string, got {bad[0]!r}")
            if len(set(values)) != len(values):
                raise self._fail(key, f"an entry is given twice in {list(values)}")
        if not self.loads and not self.offered_loads:
            raise self._fail("loads", "give at least one load factor")
        for key in ("loads", "offered_loads"):
            values = getattr(self, key)
            bad = [v for v in values if not _is_number(v) or not math.isfinite(v) or v <= 0]
            if bad:
                raise self._fail(key, f"every entry must be a positive number, got {bad[0]!r}")
            if len(set(values)) != len(values):
                raise self._fail(key, f"a value is given twice in {list(values)}")
        if not self.seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in self.seeds):
            raise self._fail("seeds", f"give whole numbers >= 0, got {list(self.seeds)}")
        for key, low in (("jobs", 1), ("procs", 1), ("sample", 1)):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise self._fail(key, f"must be a whole number >= {low}, got {v!r}")
        for key in ("offset", "sample_seed"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self._fail(key, f"must be a whole number >= 0, got {v!r}")
        for key in ("kill_at_estimate", "include_all"):
            if not isinstance(getattr(self, key), bool):
                raise self._fail(key, f"must be true or false, got {getattr(self, key)!r}")
        if self.extra is not None and self.extra not in EXTRA_RULES:
            raise self._fail("extra", f"must be one of {', '.join(EXTRA_RULES)}, got {self.extra!r}")
        if self.plot not in PLOTS:
            raise self._fail("plot", f"must be one of {', '.join(PLOTS)}, got {self.plot!r}")
        # names: canonical, and every dispatcher x predictor pair checked before any run
        try:
            canonical = tuple(resolve_policy_name(d) for d in self.dispatchers)
        except (UnknownNameError, InvalidConfigError) as err:
            raise self._fail("dispatchers", str(err)) from err
        object.__setattr__(self, "dispatchers", canonical)
        for d in canonical:
            for p in self.predictors:
                try:
                    preset_predictor(d, None if p == PRESET_PREDICTOR else p)
                except (UnknownNameError, InvalidConfigError) as err:
                    raise self._fail("predictors", str(err)) from err

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "flags") -> SweepSpec:
        """A spec from a parsed TOML/YAML table; an unknown key is an error naming it.

        Raises:
            InvalidConfigError: an unknown or missing key, or a value out of range; the
                message names the source and the key.
        """
        if not isinstance(data, Mapping):
            raise InvalidConfigError(
                f"{source}: a sweep spec must be a table of keys, got {type(data).__name__}"
            )
        unknown = [k for k in data if k not in SPEC_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: unknown key {unknown[0]!r}; a sweep spec has: {', '.join(SPEC_KEYS)}"
            )
        for key in ("dispatchers", "traces"):
            if key not in data:
                raise InvalidConfigError(f"{source}: {key}: missing (a sweep needs {key})")
        return cls(**{k: v for k, v in data.items()}, source=source)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> SweepSpec:
        """Read a ``.toml`` (or ``.yaml``/``.yml``, with PyYAML) spec; ``overrides`` replace its keys.

        Raises:
            InvalidConfigError: the file does not parse, or a key is unknown or out of range.
            FileNotFoundError: no such file.
        """
        from hpcgym.common.files import read_toml_or_yaml

        p = Path(path)
        data = read_toml_or_yaml(p, "sweep spec")
        if isinstance(data, Mapping):
            data = {"name": p.stem, **data, **overrides}
        return cls.from_mapping(data, source=str(p))


def _value_text(value: Any) -> str:
    """A parameter value as a predictor string writes it: ``true``/``false``, ``none``, the number."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def canonical_predictor(text: str) -> str:
    """One spelling of the predictor string ``text``: the registered name, each value in one form.

    The parameters keep their order and the ``+`` modifiers stay as written; each value
    is written in one form, so that a sweep's run key (which hashes the string) is the
    same however a spec spelt it: a ``user-history`` configuration's values as
    :class:`~hpcgym.predict.UserHistoryConfig` reads them (``propagation=no``, ``=False``
    and ``=false`` are all ``false``; ``type=ext`` is ``extended``), any other
    predictor's as :func:`~hpcgym.common.registry.parse_value` reads them (``True`` is
    ``true``, ``2.50`` is ``2.5``). ``"preset"`` and a string that does not parse are
    returned as given (the spec's checks then name what is wrong).

    >>> canonical_predictor("user-history:propagation=no,type=EXT,k=2")
    'user-history:propagation=false,type=extended,k=2'
    >>> canonical_predictor("W+pcor"), canonical_predictor("user-avg:k=03,full=True")
    ('walltime+pcor', 'user-avg:k=3,full=true')
    """
    from hpcgym.common.registry import parse_value
    from hpcgym.predict import UserHistoryConfig, resolve_predictor_name

    if text == PRESET_PREDICTOR:
        return text
    base, plus, mods = text.partition("+")
    name, _, params = base.partition(":")
    try:
        canonical = resolve_predictor_name(name.strip())
        if not params.strip():
            return canonical + plus + mods
        items = [item.partition("=") for item in params.split(",")]
        if any(not eq or not k.strip() for k, eq, _ in items):
            return text
        if canonical == "user-history":
            config = UserHistoryConfig.parse(f"{canonical}:{params}")
            values = [getattr(config, k.strip()) for k, _, _ in items]
        else:
            values = [parse_value(v.strip()) for _, _, v in items]
    except (UnknownNameError, InvalidConfigError, AttributeError):
        return text
    written = ",".join(f"{k.strip()}={_value_text(v)}" for (k, _, _), v in zip(items, values, strict=True))
    return f"{canonical}:{written}{plus}{mods}"


def predictor_grid_names(grid: Iterable[Mapping[str, Any]], source: str = "flags") -> list[str]:
    """The predictor strings of ``predictor_grid`` tables: each table's parameter product.

    >>> predictor_grid_names([{"name": "user-avg", "k": [1, 2], "full": [True, False]}])
    ['user-avg:k=1,full=true', 'user-avg:k=1,full=false', 'user-avg:k=2,full=true', 'user-avg:k=2,full=false']

    Raises:
        InvalidConfigError: a table without a ``name`` or with an empty list; the message
            names the source and ``predictor_grid``.
    """
    import itertools

    out: list[str] = []
    for i, table in enumerate(grid):
        where = f"{source}: predictor_grid[{i}]"
        if not isinstance(table, Mapping) or not isinstance(table.get("name"), str):
            raise InvalidConfigError(f'{where}: a table with a predictor name (name = "user-avg") and lists')
        keys = [k for k in table if k != "name"]
        values = [_as_tuple(table[k]) for k in keys]
        empty = [k for k, v in zip(keys, values, strict=True) if not v]
        if empty:
            raise InvalidConfigError(f"{where}: {empty[0]}: give at least one value")
        for combo in itertools.product(*values):
            params = ",".join(
                f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                for k, v in zip(keys, combo, strict=True)
            )
            out.append(f"{table['name']}:{params}" if params else table["name"])
    return out
