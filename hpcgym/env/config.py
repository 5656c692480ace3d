"""Frozen configuration of the dispatch environment, one dataclass per concern.

``gymnasium.make("hpcgym/Dispatch-v1", **kwargs)`` takes the fields of all four
dataclasses as flat keyword arguments (every field name is unique across them);
:func:`make_config` routes each keyword to its dataclass and rejects unknown ones
with the closest valid name, so a misspelt option is never silently ignored.

>>> cfg = make_config(window_jobs=128, window_size=32, reward="bsld-sparse")
>>> cfg.episode.window_jobs, cfg.observation.window_size, cfg.scoring.reward
(128, 32, 'bsld-sparse')
>>> make_config(windw_jobs=128)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
hpcgym.common.errors.InvalidConfigError: unknown environment argument 'windw_jobs'; did you mean ...
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.env.backfill import base_preset
from hpcgym.env.episodes import SPLITS
from hpcgym.machine import Machine
from hpcgym.predict import parse_wait_predictor
from hpcgym.workloads import Workload, check_procs, real_number

ACTION_MODES = ("job", "policy", "backfill")
BACKFILL_MODES = ("none", "easy")
HISTOGRAM_DURATIONS = ("prediction", "estimate")
DEFAULT_POLICIES = ("fcfs", "sjf-list", "ljf-list", "easy")
"""Reference dispatchers the agent chooses among in ``policy`` mode, by default."""


def _check(ok: bool, name: str, message: str) -> None:
    if not ok:
        raise InvalidConfigError(f"{name}: {message}")


def _choice(value: str, name: str, allowed: tuple[str, ...]) -> None:
    ok = isinstance(value, str) and value in allowed
    _check(ok, name, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _integer(obj: object, name: str, minimum: int, *, none: bool = False) -> None:
    """Check the field ``name`` of ``obj`` is an integer >= ``minimum`` (or None) and store it as int."""
    value = getattr(obj, name)
    if value is None and none:
        return
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= minimum
    _check(ok, name, f"must be an integer >= {minimum}{' or None' if none else ''}, got {value!r}")
    object.__setattr__(obj, name, int(value))  # type: ignore[call-overload]


def _number(
    obj: object, name: str, accepted: str, ok: Callable[[float], bool], *, none: bool = False
) -> None:
    """Check the field ``name`` of ``obj`` is a finite number with ``ok(value)``; store it as float."""
    value = getattr(obj, name)
    if value is None and none:
        return
    number = real_number(value)
    good = number is not None and math.isfinite(number) and ok(number)
    _check(good, name, f"must be {accepted}{' or None' if none else ''}, got {value!r}")
    object.__setattr__(obj, name, number)


def _flag(obj: object, name: str) -> None:
    value = getattr(obj, name)
    _check(isinstance(value, (bool, np.bool_)), name, f"must be True or False, got {value!r}")
    object.__setattr__(obj, name, bool(value))


def _names(obj: object, name: str, what: str) -> None:
    value = getattr(obj, name)
    ok = (
        not isinstance(value, str)
        and isinstance(value, (tuple, list))
        and all(isinstance(v, str) for v in value)
    )
    _check(ok, name, f"must be a tuple of {what} names, got {value!r}")
    object.__setattr__(obj, name, tuple(value))


def _optional_name(obj: object, name: str, what: str) -> None:
    value = getattr(obj, name)
    _check(value is None or isinstance(value, str), name, f"must be a {what} name or None, got {value!r}")


@dataclass(frozen=True)
class EpisodeConfig:
    """Which jobs an episode replays, on what machine, planned with which predictor.

    Attributes:
        trace: an SWF file (plain or gzipped), a job table (``.csv``, ``.csv.gz`` or
            ``.parquet``, read by :func:`hpcgym.workloads.jobtable.read_jobs`; schema in
            ``docs/WORKLOADS.md``), an already loaded
            :class:`~hpcgym.workloads.Workload`, or ``None`` for the bundled slice of
            SDSC-SP2 (8,943 jobs on 128 processors).
        machine: the machine the jobs run on: a preset name (``hpcgym machines``, e.g.
            ``"eurora"``), a TOML/YAML machine file or a
            :class:`~hpcgym.machine.Machine`. Jobs it can never run are dropped and
            counted in the load report (:func:`hpcgym.workloads.fit_workload`), as with
            the CLI's ``--machine``. ``None``: the machine the workload was read for
            (a job table's ``Machine`` header), else one node of ``procs`` processors.
        procs: machine size in processors when reading ``trace`` from a file without
            a ``machine`` (default: its header); not together with ``machine``.
        load_factor: multiply the offered load (inter-arrival times divided by it).
        window_jobs: jobs per episode, N: a window of N consecutive jobs. ``None``
            replays the whole job range as one episode.
        split: which chronological part of the trace episodes come from: ``"train"``,
            ``"validation"``, ``"test"`` (the fractions below, in that order) or
            ``"all"``. Training and evaluating on different splits keeps evaluation on
            jobs the agent never trained on.
        split_fractions: sizes of the train, validation and test parts (sum 1).
        job_range: ``(first, stop)`` job indices episodes come from; overrides
            ``split``.
        warm_start: begin each episode with the running and waiting jobs a full replay
            of the trace (by ``warm_policy``) had when the window's first job arrived,
            instead of an empty machine. Those jobs are simulated but neither observed
            in rewards nor counted in the episode's metrics.
        warm_policy: the baseline preset of that replay.
        predictor: runtime predictor the agent and the dispatchers plan with (a name or
            alias from ``hpcgym predictors``). A predictor that shows real run times
            (``real``) needs ``oracle=True``.
        predictor_of: plan with the predictor of this baseline preset instead (exactly
            as ``hpcgym simulate --policy`` does); ``predictor`` then overrides it the
            same way ``--predictor`` does.
        kill_at_estimate: end jobs at their estimate when they would run longer.
    """

    trace: str | os.PathLike[str] | Workload | None = None
    machine: str | os.PathLike[str] | Machine | None = None
    procs: int | None = None
    load_factor: float = 1.0
    window_jobs: int | None = 256
    split: str = "train"
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15)
    job_range: tuple[int, int] | None = None
    warm_start: bool = False
    warm_policy: str = "easy"
    predictor: str | None = None
    predictor_of: str | None = None
    kill_at_estimate: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.trace, os.PathLike):
            object.__setattr__(self, "trace", os.fspath(self.trace))
        _check(
            self.trace is None or isinstance(self.trace, (str, Workload)),
            "trace",
            f"must be a path, a Workload or None, got {type(self.trace).__name__}",
        )
        if isinstance(self.machine, os.PathLike):
            object.__setattr__(self, "machine", os.fspath(self.machine))
        _check(
            self.machine is None or isinstance(self.machine, (str, Machine)),
            "machine",
            f"must be a preset name, a machine file, a Machine or None, got {type(self.machine).__name__}",
        )
        if self.procs is not None:
            object.__setattr__(self, "procs", check_procs(self.procs))
            _check(
                self.machine is None,
                "procs",
                f"{self.procs} processors and machine {self.machine!r}: give one (the machine says its size)",
            )
        _number(self, "load_factor", "a positive number", lambda v: v > 0)
        _integer(self, "window_jobs", 1, none=True)
        _choice(self.split, "split", SPLITS)
        fractions = self.split_fractions
        fr = tuple(real_number(f) for f in fractions) if isinstance(fractions, (tuple, list)) else ()
        _check(
            len(fr) == 3
            and all(f is not None and math.isfinite(f) and f >= 0 for f in fr)
            and abs(sum(f or 0.0 for f in fr) - 1.0) < 1e-9,
            "split_fractions",
            f"must be three non-negative fractions summing to 1, got {fractions!r}",
        )
        object.__setattr__(self, "split_fractions", fr)
        if self.job_range is not None:
            bounds = self.job_range
            ok = (
                isinstance(bounds, (tuple, list))
                and len(bounds) == 2
                and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in bounds)
                and 0 <= bounds[0] < bounds[1]
            )
            _check(ok, "job_range", f"must be (first, stop) integers with 0 <= first < stop, got {bounds!r}")
            object.__setattr__(self, "job_range", (int(bounds[0]), int(bounds[1])))
        _flag(self, "warm_start")
        _check(
            isinstance(self.warm_policy, str),
            "warm_policy",
            f"must be a preset name, got {self.warm_policy!r}",
        )
        _optional_name(self, "predictor", "predictor")
        _optional_name(self, "predictor_of", "preset")
        _flag(self, "kill_at_estimate")


@dataclass(frozen=True)
class ObservationConfig:
    """What the agent sees. Every value is normalised to [0, 1].

    Attributes:
        window_size: K, the number of queued jobs shown (oldest first) and selectable.
            ``None`` makes K as large as the longest possible queue (every job of an
            episode), which adapters of reference dispatchers need to pick any job.
        observations: observation builders by name (see
            :func:`hpcgym.env.observations.observation_names`, matched
            case-insensitively); each becomes one key of the Dict observation, spelt as
            the builder's registered name. ``None``: the defaults of the machine,
            :func:`hpcgym.env.observations.default_observations` (``jobs``,
            ``histograms``, ``system``, and on a machine of more than one resource type
            also ``resources`` and ``requests``).
        histogram_bins: bins per histogram of the ``histograms`` builder.
        histogram_duration: what the duration histograms count: each job's current
            ``"prediction"`` or its user ``"estimate"``.
        max_time_s: times (waits, estimates, predictions) are scaled as
            ``log(1 + t) / log(1 + max_time_s)`` and clipped to 1.
        oracle: allow real run times in observations: a ``runtime`` job feature is
            added, and predictors that show real run times may be used. Without it the
            real run time of a job never appears in an observation.
        wait_predictor: the queue-wait predictor of the ``predicted_wait`` part (off
            unless ``observations`` names it): ``"ibl"`` (the default), ``"qbets"`` or
            ``"apq"`` of Hariharan et al. (003), with parameters as
            ``"ibl:neighbors=5,history=1000"`` (:mod:`hpcgym.predict.waitpred`'s configs).
    """

    window_size: int | None = 64
    observations: tuple[str, ...] | None = None
    histogram_bins: int = 16
    histogram_duration: str = "prediction"
    max_time_s: float = 7 * 86400.0
    oracle: bool = False
    wait_predictor: str = "ibl"

    def __post_init__(self) -> None:
        _integer(self, "window_size", 1, none=True)
        if self.observations is not None:
            _names(self, "observations", "observation builder")
            obs = self.observations
            lowered = [o.lower() for o in obs]
            _check(
                len(obs) > 0 and len(set(lowered)) == len(obs),
                "observations",
                f"must be distinct names (case-insensitive), got {obs}",
            )
        _integer(self, "histogram_bins", 1)
        _choice(self.histogram_duration, "histogram_duration", HISTOGRAM_DURATIONS)
        _number(self, "max_time_s", "a number of seconds > 1", lambda v: v > 1)
        _flag(self, "oracle")
        parse_wait_predictor(self.wait_predictor)


@dataclass(frozen=True)
class ActionConfig:
    """What an action means.

    Attributes:
        mode: ``"job"``: Discrete(K + 1), start one of the K shown jobs now or
            advance to the next event; ``"policy"``: Discrete(len(policies)), let one
            reference dispatcher make this decision; ``"backfill"``: Discrete(K + 1),
            the preset ``order`` starts jobs and keeps EASY's reservation, the agent
            picks which job backfills or stops (:mod:`hpcgym.env.backfill`).
        backfill: in ``job`` mode, ``"easy"`` gives a chosen job that does not fit
            EASY's reservation and backfills around it until it starts; ``"none"``
            treats such a choice as invalid.
        policies: the reference dispatcher presets of ``policy`` mode. They all plan
            with the environment's predictor.
        order: in ``backfill`` mode, the preset whose priority order, reservation and
            backfilling rule the agent backfills within: EASY-family presets (``easy``,
            ``easy-sjbf``, ``sjf``, ...) and queue orders with EASY backfilling
            (``f1-bf``, ``f2-bf``, ``saf-bf``, ...); see
            :func:`hpcgym.env.backfill.backfill_orders`. Checked in every mode, stored
            as the preset's canonical name; it plans with the environment's predictor.
        every_event: also stop at instants where nothing fits (only advancing is then
            valid); for adapters of dispatchers that want to see every event.
    """

    mode: str = "job"
    backfill: str = "none"
    policies: tuple[str, ...] = DEFAULT_POLICIES
    order: str = "easy"
    every_event: bool = False

    def __post_init__(self) -> None:
        _choice(self.mode, "mode", ACTION_MODES)
        _choice(self.backfill, "backfill", BACKFILL_MODES)
        _names(self, "policies", "dispatcher preset")
        _check(len(self.policies) > 0, "policies", "must name at least one dispatcher preset")
        object.__setattr__(self, "order", base_preset(self.order)[0])
        _flag(self, "every_event")


@dataclass(frozen=True)
class RewardConfig:
    """How a step is scored (see :mod:`hpcgym.env.rewards`).

    Attributes:
        reward: reward by name: ``"bsld"`` (dense bounded-slowdown increments),
            ``"bsld-sparse"`` (minus the episode's mean bounded slowdown at the end),
            ``"wait"`` (dense waiting-time increments, in hours).
        reward_scale: multiplies the cost term; ``None``: 1 / N for the dense rewards
            (whose costs add up to a total over the window's N jobs) and 1 for
            ``bsld-sparse``, so an episode's return is minus a per-job mean.
        invalid_penalty: subtracted from the reward of an invalid action.
        include_all: average the episode metrics (and ``bsld-sparse``) over every job
            of the window; ``False`` leaves out warm-up and cool-down as the reports do.
    """

    reward: str = "bsld"
    reward_scale: float | None = None
    invalid_penalty: float = 0.0
    include_all: bool = True

    def __post_init__(self) -> None:
        _check(isinstance(self.reward, str), "reward", f"must be a reward name, got {self.reward!r}")
        _number(self, "reward_scale", "a positive number", lambda v: v > 0, none=True)
        _number(self, "invalid_penalty", "a number >= 0", lambda v: v >= 0)
        _flag(self, "include_all")


@dataclass(frozen=True)
class DispatchConfig:
    """The whole configuration of :class:`~hpcgym.env.DispatchEnv`.

    Attributes:
        episode: which jobs, machine and predictor.
        observation: what the agent sees.
        action: what an action means.
        scoring: how a step is rewarded.
    """

    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    observation: ObservationConfig = field(default_factory=ObservationConfig)
    action: ActionConfig = field(default_factory=ActionConfig)
    scoring: RewardConfig = field(default_factory=RewardConfig)

    def replace(self, **kwargs: Any) -> DispatchConfig:
        """A copy with flat keyword arguments (as :func:`make_config` takes) changed."""
        return make_config(self, **kwargs)

    def to_kwargs(self) -> dict[str, Any]:
        """Every field as a flat keyword argument of ``gymnasium.make``."""
        out: dict[str, Any] = {}
        for group in _GROUPS:
            part = getattr(self, group)
            out.update({f.name: getattr(part, f.name) for f in dataclasses.fields(part)})
        return out


_GROUPS = {
    "episode": EpisodeConfig,
    "observation": ObservationConfig,
    "action": ActionConfig,
    "scoring": RewardConfig,
}
_FIELD_GROUP = {f.name: group for group, cls in _GROUPS.items() for f in dataclasses.fields(cls)}
assert len(_FIELD_GROUP) == sum(len(dataclasses.fields(c)) for c in _GROUPS.values()), "field names clash"
assert not set(_FIELD_GROUP) & set(_GROUPS), "a field is named like a config group"


def argument_names() -> dict[str, str]:
    """Every keyword argument of the environment and the config group it belongs to."""
    return dict(_FIELD_GROUP)


def make_config(base: DispatchConfig | None = None, /, **kwargs: Any) -> DispatchConfig:
    """A :class:`DispatchConfig` from flat keyword arguments.

    Args:
        base: the configuration to start from (default: all defaults).
        **kwargs: any field of the four config dataclasses, or a whole group
            (``episode=EpisodeConfig(...)``, ``observation=``, ``action=``, ``scoring=``).

    Raises:
        InvalidConfigError: an unknown argument (the message suggests the closest
            name) or an invalid value (the message names the parameter).
    """
    cfg = base if base is not None else DispatchConfig()
    groups: dict[str, Any] = {g: getattr(cfg, g) for g in _GROUPS}
    changes: dict[str, dict[str, Any]] = {g: {} for g in _GROUPS}
    for key, value in kwargs.items():
        if key in _GROUPS:
            if not isinstance(value, _GROUPS[key]):
                raise InvalidConfigError(
                    f"{key}: expected a {_GROUPS[key].__name__}, got {type(value).__name__}"
                )
            groups[key] = value
        elif key in _FIELD_GROUP:
            changes[_FIELD_GROUP[key]][key] = value
        else:
            close = difflib.get_close_matches(key, [*_FIELD_GROUP, *_GROUPS], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(_FIELD_GROUP)}"
            raise InvalidConfigError(f"unknown environment argument {key!r}{hint}")
    for g, ch in changes.items():
        if ch:
            groups[g] = dataclasses.replace(groups[g], **ch)
    return DispatchConfig(**groups)
