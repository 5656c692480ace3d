"""Runtime predictors: what dispatchers plan with.

A predictor keeps ``prediction``, one float per job, that the engine shows to
dispatchers. The engine tells it, in time order, of submissions, starts and
terminations; it never sees a job's real run time before the job ends, except the
oracle (``needs_runtime = True``), which is the point of the oracle.

The protocol, event by event (all times in seconds):

* :meth:`Predictor.reset` gives the job columns it may read (``submit``,
  ``procs_req``, ``estimate``, ``user``, ``executable``, ``queue``, ...) with the run
  time hidden, and sets every prediction to the estimate;
* :meth:`Predictor.on_submit` -- ``job`` arrived: set ``self.prediction[job]``;
* :meth:`Predictor.on_start` -- ``job`` started;
* :meth:`Predictor.on_end` -- ``job`` ended after running ``runtime`` seconds;
* :meth:`Predictor.on_expire` (only when ``corrects`` is True) -- a running job has run
  as long as its prediction: return a larger one (prediction correction).

After a job's submission its prediction changes only through :meth:`Predictor.revise`,
at any event: it logs the change (for time-weighted accuracy) and adds the job to the
predictor's private set of revised jobs. The engine asks :meth:`Predictor.has_revised`
after the predictor's calls of each event and, if so, drains that set with
:meth:`Predictor.take_revised` and re-arms those jobs' expiry alarms. Predictions are
never used to kill a job: kills use the estimate only
(``Simulator(kill_at_estimate=True)``).

Writing your own predictor::

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
prediction by 2 (:class:`Scaled`, the X2 schedulers) and ``+pcor`` adds prediction
correction (:class:`Corrected`). Whatever order they are written in, scaling is applied
first and correction last, so ``+pcor`` corrects the scaled prediction.

>>> p = make_predictor("user-avg:k=3+pcor")
>>> p.name, p.corrects
('user-avg:k=3+pcor', True)

004 section 7's 8,640 configurations of EASY++'s predictor are ``user-history:...``
names (:class:`UserHistoryConfig`, :class:`UserHistory`); :func:`predictor_space` and
:func:`sample_predictor_space` enumerate and sample them for parameter studies:

>>> make_predictor("user-history:k=1,metric=max").name
'user-history:k=1,metric=max'
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.registry import Registry, factory_parameters, parse_value

MINUTE = 60.0


class Predictor:
    """Base class: predicts every job's run time as its estimate (wall-time, W).

    Attributes:
        name: CLI name.
        needs_runtime: True only for the oracle; the engine then hands it the real run
            times in :meth:`reset`.
        corrects: whether :meth:`on_expire` revises a prediction its job outlived.
        prediction: current prediction of every job, in seconds.
        estimate: every job's user estimate (s), as the predictor sees it.
        changes: ``(time, job, new prediction)`` for every revision after submission,
            in time order; used for time-weighted accuracy.

    The revision contract between a predictor and the engine: :meth:`revise` is the only
    way to change a submitted job's prediction; it records the job in a set the
    predictor keeps private. The engine never reads or clears that set itself. It asks
    :meth:`has_revised` (cheap: it is called at every event) after the ``on_end`` calls
    of an instant's terminations, after the ``on_submit`` calls of its arrivals and after
    each ``on_start``, and only if it is True calls :meth:`take_revised`, which hands
    over the revised jobs and empties the set; after a correction (``on_expire``, then
    the engine's own :meth:`revise`) it calls :meth:`take_revised` at once. A running
    job among the revised ones gets its expiry alarm re-armed at its new predicted end
    (if the predictor ``corrects``); a waiting one is armed with its prediction when it
    starts. A wrapper (:class:`Scaled`, :class:`Corrected`) composes through the same
    two methods on its ``inner`` predictor; a predictor that keeps its revisions
    elsewhere overrides :meth:`revise`, :meth:`has_revised` and :meth:`take_revised`
    together.
    """

    name = "walltime"
    needs_runtime = False
    corrects = False

    def __init__(self) -> None:
        self.prediction: np.ndarray = np.zeros(0)
        self.estimate: np.ndarray = np.zeros(0)
        self.changes: list[tuple[float, int, float]] = []
        self._revised: dict[int, None] = {}  # an insertion-ordered set: see take_revised

    def reset(self, workload: Any) -> None:
        """Start over for ``workload``; by default every prediction is the estimate."""
        self.workload = workload
        self.estimate = np.asarray(workload.estimate, dtype=np.float64)
        self.prediction = self.estimate.copy()
        self.changes = []
        self._revised = {}

    def on_submit(self, job: int, now: float) -> None:
        """``job`` arrived; set ``self.prediction[job]``."""

    def on_start(self, job: int, now: float) -> None:
        """``job`` started."""

    def on_end(self, job: int, now: float, runtime: float) -> None:
        """``job`` ended after running ``runtime`` seconds (now known)."""

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        """``job`` has run ``elapsed`` seconds, as long as its prediction: return a new one.

        Called only when ``corrects`` is True; the engine then calls :meth:`revise` with
        the new value if it is larger. The default keeps the prediction.
        """
        return float(self.prediction[job])

    def revise(self, job: int, now: float, value: float) -> None:
        """Set a new prediction for ``job``, log it for accuracy and tell the engine.

        The engine learns of it through :meth:`has_revised` and :meth:`take_revised`.
        """
        self.prediction[job] = value
        self.changes.append((now, job, float(value)))
        self._revised[job] = None

    def has_revised(self) -> bool:
        """Whether a job was revised since the last :meth:`take_revised` (O(1))."""
        return bool(self._revised)

    def take_revised(self) -> list[int]:
        """The jobs revised since the last call, each once, and forget them.

        Returns:
            Job ids in the order of their first revision since the last call (a job
            revised twice appears once, at its first place); empty if none.
        """
        revised = self._revised
        jobs = list(revised)
        revised.clear()
        return jobs

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Walltime(Predictor):
    """W: the user's estimate (requested time, SWF field 9)."""

    name = "walltime"


class Oracle(Predictor):
    """R: the real run time. Only for upper bounds and studies of perfect information."""

    name = "real"
    needs_runtime = True

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        self.prediction = np.asarray(workload.runtime, dtype=np.float64).copy()


# ---------------------------------------------------------------- 004's predictor space
WINDOW_TYPES: dict[str, str] = {
    "all": "all",
    "immediate": "immediate",
    "imm": "immediate",
    "extended": "extended",
    "ext": "extended",
}
"""``type=`` values (the paper's terms and their abbreviations in its Table 11) -> the canonical one."""
FULLNESS: dict[str, str] = {"partial": "partial", "full": "full"}
"""``fullness=`` values."""
METRICS: dict[str, str] = {
    "avg": "avg",
    "average": "avg",
    "mean": "avg",
    "median": "median",
    "med": "median",
    "min": "min",
    "minimum": "min",
    "max": "max",
    "maximum": "max",
}
"""``metric=`` values -> the canonical one."""
FALLBACKS: dict[str, str] = {
    "estimate": "estimate",
    "est": "estimate",
    "relative": "relative",
    "rel": "relative",
}
"""``fallback=`` values -> the canonical one."""
CORRECTIONS: dict[str, str] = {
    "estimate": "estimate",
    "est": "estimate",
    "gradual": "gradual",
    "exponential": "exponential",
    "exp": "exponential",
    "none": "none",
}
"""``correction=`` values -> the canonical one (``none`` is outside 004's space)."""
PROPAGATION: dict[str, bool] = {"yes": True, "no": False, "true": True, "false": False}
"""``propagation=`` values -> the flag."""
ORDERS = ("submit", "end")
"""``order=`` values: which terminated jobs are the "most recent" (see :class:`UserHistory`)."""
EXPONENTIAL_GROWTH = 0.2
"""``correction=exponential`` adds this fraction of the prediction (at least a minute) each time."""

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


def _choice(parameter: str, value: object, allowed: dict[str, Any]) -> Any:
    """The canonical form of ``value`` among ``allowed``'s keys (case-insensitive), else an error."""
    if isinstance(value, str) and value.strip().lower() in allowed:
        return allowed[value.strip().lower()]
    if value is None and "none" in allowed:  # ``correction=none`` reads as None
        return allowed["none"]
    if isinstance(value, (bool, np.bool_)) and parameter == "propagation":
        return bool(value)
    names = " | ".join(dict.fromkeys(str(v) if not isinstance(v, bool) else k for k, v in allowed.items()))
    aliases = ", ".join(k for k, v in allowed.items() if k != v and not isinstance(v, bool))
    more = f" (aliases: {aliases})" if aliases else ""
    raise InvalidConfigError(f"user-history: {parameter} must be {names}{more}, got {value!r}")


def _positive_int(parameter: str, value: object) -> int:
    """``value`` as an int if it is a positive whole number (not a bool), else an error."""
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )
    if not number or not np.isfinite(value) or int(value) != value or value < 1:  # type: ignore[call-overload,operator,arg-type]
        raise InvalidConfigError(f"{parameter} must be a positive integer (1, 2, ...), got {value!r}")
    return int(value)  # type: ignore[call-overload]


@dataclass(frozen=True)
class UserHistoryConfig:
    """One configuration of 004 section 7's history-based predictor (EASY++'s family).

    Every parameter decides which of the user's terminated jobs (the *window*) predict a
    new job's run time and what happens when there are none or the job outlives it. All
    predictions are capped by the job's estimate, as in 004 section 3.1.

    The string form ``user-history:k=2,type=all,...`` (``str(config)``) names the
    predictor everywhere a predictor is named (``--predictor``, ``make_predictor``) and
    :meth:`parse` reads it back; values are case-insensitive and the paper's
    abbreviations are accepted (``imm``, ``ext``, ``med``, ``est``, ``rel``, ``exp``,
    ``average``, ...). Omitted parameters take the defaults below, ``user-avg``'s
    (``user-history`` is ``user-avg``, ``user-history:correction=estimate`` is EASY++'s
    ``user-avg+pcor``); ``str(config)`` lists only the parameters that differ from them,
    so one configuration has one name however it was spelt.

    Attributes:
        k: window size: how many history jobs (004: 1-30; any positive integer here).
        type: which jobs may be in the window. ``all``: the user's ``k`` most recent
            terminated jobs. ``immediate``: the same ``k`` jobs, used only if every one
            had the new job's estimate, else the fallback (004 sections 4 and 6).
            ``extended``: the ``k`` most recent terminated jobs of the user *with the new
            job's estimate*, however old (the whole user history). "Similar" is "same
            estimate" for both, as 004 defines it for ``immediate``.
        fullness: ``partial``: predict from the window's jobs however few (at least
            one); ``full``: only from ``k`` jobs, else the fallback.
        metric: ``avg``, ``median`` (the mean of the two middle run times for an even
            count), ``min`` or ``max`` of the window's run times.
        fallback: the prediction without a usable window. ``estimate``: the user's
            estimate. ``relative``: the estimate scaled by the user's past accuracy
            (004 after Smith et al.), the mean of run time / estimate over *all* the
            user's terminated jobs; the estimate if the user has none yet. With
            ``type=all, fullness=partial`` the fallback only happens for a user without
            history, so there both values predict alike (as in 004 Table 11, ranks 7/8).
        propagation: ``yes``: when one of the user's jobs terminates, re-predict the
            user's *waiting* jobs with the new history (the dispatcher sees the revised
            predictions at once, through :meth:`Predictor.revise`); ``no``: a
            prediction is made once, at submission. Running jobs are not re-predicted.
        correction: what happens when a running job reaches its predicted end (see
            :class:`CorrectionSteps`): ``estimate`` (jump to the estimate; 004 section
            3.2, the ``+pcor`` modifier), ``gradual`` (1 min, 15 min, 30 min, 1 h, ...
            added each time) or ``exponential`` (20 % added each time, at least 1 min);
            ``none`` (the default; outside 004's space) keeps the prediction, as
            ``user-avg`` does, and leaves correction to the policy preset or ``+pcor``.
        order: ``submit`` (004's "most recently submitted (and already terminated)")
            or ``end`` (most recently terminated); outside 004's space.

    >>> c = UserHistoryConfig.parse("user-history:k=3,type=ext,metric=MED,propagation=yes,correction=est")
    >>> str(c)
    'user-history:k=3,type=extended,metric=median,propagation=yes,correction=estimate'
    >>> UserHistoryConfig.parse(str(c)) == c, c.in_space
    (True, True)
    """

    k: int = 2
    type: str = "all"
    fullness: str = "partial"
    metric: str = "avg"
    fallback: str = "estimate"
    propagation: bool = False
    correction: str = "none"
    order: str = "submit"

    def __post_init__(self) -> None:
        try:
            k = _positive_int("k", self.k)
        except InvalidConfigError as err:
            raise InvalidConfigError(f"user-history: {err} (004's space: 1-30)") from err
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "type", _choice("type", self.type, WINDOW_TYPES))
        object.__setattr__(self, "fullness", _choice("fullness", self.fullness, FULLNESS))
        object.__setattr__(self, "metric", _choice("metric", self.metric, METRICS))
        object.__setattr__(self, "fallback", _choice("fallback", self.fallback, FALLBACKS))
        object.__setattr__(self, "propagation", _choice("propagation", self.propagation, PROPAGATION))
        object.__setattr__(self, "correction", _choice("correction", self.correction, CORRECTIONS))
        if self.order not in ORDERS:
            raise InvalidConfigError(f"user-history: order must be submit | end, got {self.order!r}")

    def __str__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                parts.append(f"{f.name}={('yes' if value else 'no') if f.name == 'propagation' else value}")
        return "user-history" + (":" + ",".join(parts) if parts else "")

    @classmethod
    def parse(cls, text: str) -> UserHistoryConfig:
        """The configuration named by ``user-history[:key=value,...]`` (no ``+`` modifiers).

        Raises:
            InvalidConfigError: another predictor, a modifier, or a bad parameter; the
                message names it and the allowed values.
        """
        if not isinstance(text, str):
            raise InvalidConfigError(f"a user-history configuration must be text, got {text!r}")
        base, _, params = text.partition(":")
        if "+" in text:
            raise InvalidConfigError(f"{text!r}: a configuration takes no '+' modifiers")
        if resolve_predictor_name(base.strip()) != "user-history":
            raise InvalidConfigError(f"{text!r} is not a user-history configuration (user-history:k=2,...)")
        kwargs = _parse_parameters(text, params, "user-history", predictor_parameters("user-history"))
        try:
            return cls(**kwargs)  # type: ignore[arg-type]
        except InvalidConfigError as err:
            raise InvalidConfigError(f"predictor {text!r}: {err}") from err

    @property
    def in_space(self) -> bool:
        """Whether this is one of 004's 8,640 configurations (k <= 30, a correction, order=submit)."""
        return self.k <= 30 and self.correction != "none" and self.order == "submit"

    def canonical(self) -> UserHistoryConfig:
        """The representative of the configurations that always predict as this one does.

        004's footnote 9: some combinations are equivalent and need one simulation. With
        ``k=1`` every metric and both fullness values are alike (avg, partial stand for
        them); with ``k=2`` the median is the average; with ``type=all,
        fullness=partial`` the fallback only meets users without history, for whom
        ``relative`` is the estimate.
        """
        c = self
        if c.k == 1:
            c = replace(c, metric="avg", fullness="partial")
        if c.k == 2 and c.metric == "median":
            c = replace(c, metric="avg")
        if c.type == "all" and c.fullness == "partial":
            c = replace(c, fallback="estimate")
        return c

    def build(self) -> UserHistory:
        """A fresh predictor of this configuration (named by :meth:`__str__`)."""
        return UserHistory(self)


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


def _median(runs: list[float]) -> float:
    s = sorted(runs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2.0


def _mean(runs: list[float]) -> float:
    return sum(runs) / len(runs)


_METRIC_FUNCTIONS: dict[str, Callable[[list[float]], float]] = {
    "avg": _mean,
    "median": _median,
    "min": min,
    "max": max,
}


def _correction_step(i: int) -> float:
    """The i-th increment of 004 section 3.2 (seconds): 1 min, then 15 x 2^(i-2) min."""
    return MINUTE if i == 1 else 15.0 * MINUTE * 2.0 ** (i - 2)


class CorrectionSteps:
    """Prediction correction, one of 004 section 7's three, with its per-job counters.

    When a running job reaches its prediction ``old`` (its estimate is ``est``):

    * ``estimate`` (004 section 3.2, :class:`Corrected`'s default): below ``est`` the new
      prediction is ``est``; from ``est`` on, the i-th correction beyond it adds 1 min
      for i = 1 and 15 x 2^(i-2) min after that;
    * ``gradual``: the job's i-th correction adds those same increments from the start
      (1 min, 15 min, 30 min, 1 h, ...), stopping once at ``est`` if it would jump past it;
    * ``exponential``: below ``est``, adds 20 % of ``old`` but at least 1 min (so a
      0 s prediction grows), stopping once at ``est``; from ``est`` on, as ``estimate``.

    Every step grows the prediction, so the engine's next alarm is always later.

    Args:
        mode: ``estimate``, ``gradual`` or ``exponential``.
        estimate: every job's estimate (s), as the predictor sees it.
    """

    def __init__(self, mode: str, estimate: list[float]) -> None:
        if mode not in ("estimate", "gradual", "exponential"):
            raise InvalidConfigError(f"correction must be estimate | gradual | exponential, got {mode!r}")
        self.mode = mode
        self._est = estimate
        self._count: dict[int, int] = {}  # all corrections, per job
        self._beyond: dict[int, int] = {}  # corrections beyond the estimate, per job

    def next(self, job: int, old: float) -> float:
        """The corrected prediction of ``job``, which outlived ``old``; counts the correction."""
        count = self._count
        c = count.get(job, 0) + 1
        count[job] = c
        est = self._est[job]
        mode = self.mode
        if mode == "gradual":
            new = old + _correction_step(c)
            return est if old < est < new else new
        if old < est:
            if mode == "estimate":
                return est
            new = old + max(EXPONENTIAL_GROWTH * old, MINUTE)
            return new if new < est else est
        i = self._beyond.get(job, 0) + 1
        self._beyond[job] = i
        return old + _correction_step(i)

    def counts(self, n: int) -> np.ndarray:
        """Number of corrections of each of ``n`` jobs so far."""
        out = np.zeros(n, dtype=np.int64)
        if self._count:
            jobs = np.fromiter(self._count.keys(), dtype=np.int64, count=len(self._count))
            out[jobs] = np.fromiter(self._count.values(), dtype=np.int64, count=len(self._count))
        return out


class UserHistory(Predictor):
    """004 section 7's history-based predictor, any point of its space (:class:`UserHistoryConfig`).

    A new job's prediction is the ``metric`` of the run times in its user's window (see
    the configuration for ``type``, ``fullness`` and ``fallback``), capped by the job's
    estimate; the predictor corrects its own predictions (``corrects``) unless
    ``correction=none``. The window keeps the ``k`` most recent terminated jobs of the
    user (``type=extended``: of the user and estimate) by submission (``order=submit``:
    among terminated jobs, those submitted last) or termination (``order=end``).

    Cost: O(k) per submission and termination (a sorted list of at most ``k`` run
    times per user, or per user and estimate); ``propagation=yes`` adds O(k) per waiting
    job of the terminating user. The default configuration predicts exactly as
    ``user-avg`` does (``correction=estimate``: as ``user-avg+pcor``, EASY++'s predictor),
    float for float.

    Args:
        config: the configuration (default: ``user-avg``'s).

    >>> from types import SimpleNamespace
    >>> p = UserHistory(UserHistoryConfig(k=3, metric="max"))
    >>> p.reset(SimpleNamespace(estimate=[100.0, 100.0, 100.0], user=[7, 7, 7]))
    >>> p.on_end(0, 30.0, 30.0); p.on_end(1, 40.0, 60.0); p.on_submit(2, 40.0)
    >>> float(p.prediction[2])
    60.0
    """

    name = "user-history"

    def __init__(self, config: UserHistoryConfig | None = None) -> None:
        super().__init__()
        if config is None:
            config = UserHistoryConfig()
        if not isinstance(config, UserHistoryConfig):
            raise InvalidConfigError(f"UserHistory takes a UserHistoryConfig, got {config!r}")
        self.config = config
        self.name = str(config)
        self.corrects = config.correction != "none"
        self._k = config.k
        self._full = config.fullness == "full"
        self._immediate = config.type == "immediate"
        self._extended = config.type == "extended"
        self._relative = config.fallback == "relative"
        self._propagate = config.propagation
        self._metric = _METRIC_FUNCTIONS[config.metric]
        self._by_submit = config.order == "submit"

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        self._user: list[int] = np.asarray(workload.user).tolist()
        self._est: list[float] = self.estimate.tolist()
        # per user (type=extended: per (user, estimate)), the k latest terminated jobs,
        # oldest first, as parallel lists: sort keys (the job index = submission order,
        # or a termination counter), run times and estimates
        self._windows: dict[Hashable, tuple[list[int], list[float], list[float]]] = {}
        self._ends = 0
        self._ratio: dict[int, list[float]] = {}  # per user: [sum of run time / estimate, count]
        self._waiting: dict[int, dict[int, None]] = {}  # per user: waiting jobs (propagation)
        self._steps = CorrectionSteps(self.config.correction, self._est) if self.corrects else None

    def predict(self, job: int) -> float:
        """What the history known now predicts for ``job`` (the fallback without a window)."""
        est = self._est[job]
        u = self._user[job]
        window = self._windows.get((u, est) if self._extended else u)
        if window is not None:
            runs = window[1]
            if runs and (not self._full or len(runs) >= self._k):
                usable = True
                if self._immediate:
                    for e in window[2]:
                        if e != est:
                            usable = False
                            break
                if usable:
                    p = self._metric(runs)
                    return p if p < est else est
        if self._relative:
            ratio = self._ratio.get(u)
            if ratio is not None:
                p = est * (ratio[0] / ratio[1])
                return p if p < est else est
        return est

    def on_submit(self, job: int, now: float) -> None:
        if self._propagate:
            self._waiting.setdefault(self._user[job], {})[job] = None
        self.prediction[job] = self.predict(job)

    def on_start(self, job: int, now: float) -> None:
        if self._propagate:
            self._waiting[self._user[job]].pop(job, None)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        u = self._user[job]
        est = self._est[job]
        wkey: Hashable = (u, est) if self._extended else u
        window = self._windows.get(wkey)
        if window is None:
            window = self._windows[wkey] = ([], [], [])
        keys, runs, ests = window
        if self._by_submit:
            key = job
        else:
            key = self._ends
            self._ends += 1
        changed = True
        if not keys or key > keys[-1]:  # the usual case: the newest so far
            keys.append(key)
            runs.append(runtime)
            ests.append(est)
        elif len(keys) == self._k and key < keys[0]:
            changed = False  # older than every job the window holds
        else:
            i = bisect.bisect(keys, key)
            keys.insert(i, key)
            runs.insert(i, runtime)
            ests.insert(i, est)
        if len(keys) > self._k:
            del keys[0], runs[0], ests[0]
        if self._relative and est > 0:
            changed = True
            ratio = self._ratio.get(u)
            if ratio is None:
                self._ratio[u] = [runtime / est, 1.0]
            else:
                ratio[0] += runtime / est
                ratio[1] += 1.0
        if self._propagate and changed:
            self._propagate_end(u, est, now)

    def _propagate_end(self, user: int, est: float, now: float) -> None:
        """Re-predict ``user``'s waiting jobs after one of the user's jobs (estimate ``est``) ended.

        A prediction depends on the job only through its user and estimate, so it is
        computed once per estimate; with ``type=extended`` (and no relative fallback)
        only the jobs with the ended job's estimate can change.
        """
        waiting = self._waiting.get(user)
        if not waiting:
            return
        pred = self.prediction
        est_of = self._est
        only_same = self._extended and not self._relative
        memo: dict[float, float] = {}
        for w in waiting:
            e = est_of[w]
            if only_same and e != est:
                continue
            p = memo.get(e)
            if p is None:
                p = memo[e] = self.predict(w)
            if p != pred[w]:
                self.revise(w, now, p)

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        if self._steps is None:
            return float(self.prediction[job])
        return self._steps.next(job, float(self.prediction[job]))

    @property
    def corrections(self) -> np.ndarray:
        """Number of corrections of every job so far."""
        n = len(self.prediction)
        return np.zeros(n, dtype=np.int64) if self._steps is None else self._steps.counts(n)

    def __repr__(self) -> str:
        return f"UserHistory({self.config!r})"


class LastKUserAverage(UserHistory):
    """Mean run time of the user's ``k`` latest terminated jobs (Tsafrir et al. 2007).

    004 section 3.1: a new job's prediction is the average run time of the ``k`` (2)
    most recent jobs that the same user submitted before it and that have already
    terminated; with no such job it falls back on the job's estimate, and a prediction
    above the estimate is replaced by the estimate ("the job would be killed anyway").
    The prediction is made once, at submission; later terminations do not change it
    (004 section 7: no "propagation"). It is :class:`UserHistory` with
    ``metric=avg, fallback=estimate, propagation=no, correction=none`` (``user-avg``
    predicts as ``user-history``, ``user-avg+pcor`` as ``user-history:correction=estimate``).

    Choices where the paper leaves a detail open:

    * "most recent" means most recently *submitted* among the terminated jobs, as the
      paper's conclusion words it ("the two most recently submitted (and already
      terminated) jobs by the same user"); ``order="end"`` takes the most recently
      terminated instead. The two differ when a user's jobs end out of submission order;
      on the paper's traces the submission order lands closer to its figures (CTC-SP2
      EASY++ 14.1 min / bsld 2.83 against the paper's 14 / 2.9; 15.1 / 3.00 by end);
    * with fewer than ``k`` terminated jobs the average is over those there are (004
      section 7's "partial" window); ``full=True`` falls back on the estimate instead;
    * ``window="immediate"`` (004 sections 4 and 6) uses the ``k`` history jobs only if
      each had an estimate equal to the new job's, else the estimate.

    Args:
        k: window size (number of history jobs), at least 1.
        window: ``"all"`` or ``"immediate"``.
        full: require ``k`` history jobs (else fall back on the estimate).
        order: ``"submit"`` or ``"end"``: which terminated jobs count as the latest.

    >>> from types import SimpleNamespace
    >>> p = LastKUserAverage()
    >>> p.reset(SimpleNamespace(estimate=[100.0, 100.0, 100.0, 50.0], user=[7, 7, 7, 7]))
    >>> p.on_end(0, 30.0, 30.0); p.on_end(1, 40.0, 60.0)
    >>> p.on_submit(2, 40.0); p.on_submit(3, 40.0)
    >>> p.prediction[2], p.prediction[3]
    (np.float64(45.0), np.float64(45.0))
    """

    name = "user-avg"

    def __init__(self, k: int = 2, window: str = "all", full: bool = False, order: str = "submit") -> None:
        try:
            k = _positive_int("k", k)
        except InvalidConfigError as err:
            raise InvalidConfigError(f"user-avg: {err}") from err
        if window not in ("all", "immediate"):
            raise InvalidConfigError(f"user-avg: window must be 'all' or 'immediate', got {window!r}")
        if not isinstance(full, (bool, np.bool_)):
            raise InvalidConfigError(f"user-avg: full must be true or false, got {full!r}")
        if order not in ORDERS:
            raise InvalidConfigError(f"user-avg: order must be 'submit' or 'end', got {order!r}")
        super().__init__(
            UserHistoryConfig(
                k=k, type=window, fullness="full" if full else "partial", correction="none", order=order
            )
        )
        self.name = type(self).name
        self.k = k
        self.window = window
        self.full = bool(full)
        self.order = order

    def __repr__(self) -> str:
        return f"LastKUserAverage(k={self.k}, window={self.window!r}, full={self.full}, order={self.order!r})"


def trailing_number_prefix(names: Sequence[str]) -> Callable[[int], str]:
    """A job-name prefix function for :class:`ProfilePredictor` over a job table's names.

    The predictor sees job names as codes (``workload.executable``, indices into
    ``workload.names["job_name"]``); this maps a code to its name without the trailing
    number (``run_a2`` -> ``run_a``); a code without a name (-1) to ``""``.

    >>> prefix = trailing_number_prefix(["run_a1", "run_a2", "post"])
    >>> prefix(0), prefix(1), prefix(2), prefix(-1)
    ('run_a', 'run_a', 'post', '')
    """
    prefixes = [n.rstrip("0123456789") for n in names]

    def prefix(code: int) -> str:
        return prefixes[code] if 0 <= code < len(prefixes) else ""

    return prefix


class ProfilePredictor(Predictor):
    """D: the data-driven profile heuristic of Galleguillos et al. (2017) section 3.

    For a new job, look through the same user's terminated jobs for the *last* one
    (most recently terminated) whose profile matches, by these rules in this order,
    and predict its run time:

    1. same job name, queue, wall-time and resources (full profile);
    2. same name prefix, queue, wall-time and resources;
    3. same name, queue and wall-time (resources may differ);
    4. same name prefix, queue and wall-time;
    5. same name;
    6. same name prefix;
    7. otherwise the wall-time.

    The prediction is capped by the wall-time (the estimate). ``rule[job]`` records which
    rule gave it (1-7).

    A job table's job names are text: by default a name's prefix is the name without
    its trailing number (``run_a2`` -> ``run_a``), 001's example of "the same job name
    followed by a number (e.g. job1, job2)". On SWF traces the executable id (field 14)
    stands in for the job name, the queue is field 15 and the resources are the
    requested processors. A numeric id has no prefix, so there are no prefix rules by
    default and rules 2, 4 and 6 are skipped. A missing name or executable (-1) acts as
    one name shared by all of a user's jobs; then rule 5 is simply "the user's last job".

    Args:
        name_prefix: ``"auto"`` (default) for the rule above; a function mapping a job
            name code (``workload.executable``) to its prefix (e.g. ``lambda n: n // 100``
            for numbered SWF executables); None for no prefix rules.
    """

    name = "profile"

    def __init__(self, name_prefix: Callable[[Any], Hashable] | str | None = "auto") -> None:
        super().__init__()
        if name_prefix is not None and name_prefix != "auto" and not callable(name_prefix):
            raise InvalidConfigError(
                "profile: name_prefix must be a function of the job name (Python API only), "
                f"'auto' or None, got {name_prefix!r}"
            )
        self.name_prefix = name_prefix
        self._prefix: Callable[[Any], Hashable] | None = None
        self.rule: np.ndarray = np.zeros(0, dtype=np.int8)

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        n = len(self.estimate)
        self._user: list[int] = np.asarray(workload.user).tolist()
        self._name: list[Any] = np.asarray(getattr(workload, "executable", np.full(n, -1))).tolist()
        self._queue: list[int] = np.asarray(getattr(workload, "queue", np.full(n, -1))).tolist()
        self._procs: list[int] = np.asarray(workload.procs_req).tolist()
        self._est: list[float] = self.estimate.tolist()
        self._last: list[dict[tuple[Any, ...], float]] = [{} for _ in range(6)]
        self.rule = np.full(n, 7, dtype=np.int8)
        prefix = self.name_prefix
        if prefix == "auto":
            names = getattr(workload, "names", {}).get("job_name", ())
            prefix = trailing_number_prefix(names) if names else None
        self._prefix = prefix  # type: ignore[assignment]

    def _keys(self, job: int) -> list[tuple[Any, ...] | None]:
        u, nm, q, e, r = self._user[job], self._name[job], self._queue[job], self._est[job], self._procs[job]
        if self._prefix is None:
            return [(u, nm, q, e, r), None, (u, nm, q, e), None, (u, nm), None]
        p = self._prefix(nm)
        return [(u, nm, q, e, r), (u, p, q, e, r), (u, nm, q, e), (u, p, q, e), (u, nm), (u, p)]

    def on_submit(self, job: int, now: float) -> None:
        for i, key in enumerate(self._keys(job)):
            if key is None:
                continue
            v = self._last[i].get(key)
            if v is not None:
                est = self._est[job]
                self.prediction[job] = v if v < est else est
                self.rule[job] = i + 1
                return

    def on_end(self, job: int, now: float, runtime: float) -> None:
        for last, key in zip(self._last, self._keys(job), strict=True):
            if key is not None:
                last[key] = runtime


class _Wrapper(Predictor):
    """A predictor built on another one (``inner``), which it drives."""

    def __init__(self, inner: Predictor) -> None:
        super().__init__()
        self.inner = inner
        self.needs_runtime = inner.needs_runtime


class Corrected(_Wrapper):
    """Prediction correction (Tsafrir et al. 2007, section 3.2) on top of any predictor.

    When a running job reaches its predicted end (the default ``mode="estimate"``):

    * if the prediction was below the estimate, the new prediction is the estimate
      ("the user was smarter than us");
    * otherwise (the job outlived its estimate) the i-th such correction adds 1 minute
      for i = 1 and 15 x 2^(i-2) minutes after that (15 min, 30 min, 1 h, 2 h, ...).

    004 section 7's other two corrections, ``gradual`` and ``exponential``, are
    :class:`CorrectionSteps`' other modes.

    The engine calls :meth:`on_expire` at the predicted end and, if the job is still
    running, asks again at the new one. The job is not killed: kills only ever use the
    estimate. ``corrections`` counts every job's corrections (004 Table 2's overhead).

    Args:
        inner: the predictor whose predictions are corrected; it shares this one's
            ``prediction`` array.
        mode: ``estimate`` (``+pcor``), ``gradual`` or ``exponential``.
    """

    corrects = True

    def __init__(self, inner: Predictor, mode: str = "estimate") -> None:
        super().__init__(inner)
        if mode not in ("estimate", "gradual", "exponential"):
            raise InvalidConfigError(f"correction must be estimate | gradual | exponential, got {mode!r}")
        self.mode = mode
        self.name = f"{inner.name}+pcor" if mode == "estimate" else f"{inner.name}+pcor({mode})"
        self._steps = CorrectionSteps(mode, [])

    def reset(self, workload: Any) -> None:
        inner = self.inner
        inner.reset(workload)
        self.workload = workload
        self.estimate = inner.estimate
        self.prediction = inner.prediction
        self.changes = inner.changes
        self._steps = CorrectionSteps(self.mode, self.estimate.tolist())
        # the engine calls these at every event: hand it the inner methods directly
        self.on_submit = inner.on_submit  # type: ignore[method-assign]
        self.on_start = inner.on_start  # type: ignore[method-assign]
        self.on_end = inner.on_end  # type: ignore[method-assign]
        self.revise = inner.revise  # type: ignore[method-assign]
        self.has_revised = inner.has_revised  # type: ignore[method-assign]
        self.take_revised = inner.take_revised  # type: ignore[method-assign]

    def revise(self, job: int, now: float, value: float) -> None:
        # the inner predictor owns the prediction, the log and the revised set
        self.inner.revise(job, now, value)

    def has_revised(self) -> bool:
        return self.inner.has_revised()

    def take_revised(self) -> list[int]:
        return self.inner.take_revised()

    def on_submit(self, job: int, now: float) -> None:
        self.inner.on_submit(job, now)

    def on_start(self, job: int, now: float) -> None:
        self.inner.on_start(job, now)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        self.inner.on_end(job, now, runtime)

    @property
    def corrections(self) -> np.ndarray:
        """Number of corrections of every job so far."""
        return self._steps.counts(len(self.prediction))

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        return self._steps.next(job, float(self.prediction[job]))

    def __repr__(self) -> str:
        mode = "" if self.mode == "estimate" else f", mode={self.mode!r}"
        return f"Corrected({self.inner!r}{mode})"


class Scaled(_Wrapper):
    """Every prediction of ``inner`` multiplied by ``factor`` (2 for the X2 schedulers).

    Tsafrir et al. (2007, section 6) argue that doubling belongs to the scheduler, not
    the predictor; hpcgym applies it to what the scheduler plans with, so accuracy is
    measured on the doubled prediction (as in 004 Table 6, where X2 halves EASY's
    accuracy). The scaled predictor's ``estimate`` is ``factor`` x the user estimate, so
    ``Corrected(Scaled(p, 2))`` (the X2+ preset) corrects a job that outlives its doubled
    prediction to its doubled estimate, and beyond that adds 1 min, 15 min, 30 min, ...

    If ``inner`` corrects itself, its clock is slowed by ``factor``: it is asked when the
    job has run ``factor`` x its own prediction, with ``elapsed / factor``.

    Args:
        inner: the predictor to scale.
        factor: a positive multiplier.
    """

    def __init__(self, inner: Predictor, factor: float = 2.0) -> None:
        super().__init__(inner)
        if not np.isfinite(factor) or factor <= 0:
            raise InvalidConfigError(f"scaling factor must be positive and finite, got {factor!r}")
        self.factor = float(factor)
        self.name = f"{inner.name}+x{self.factor:g}"
        self.corrects = inner.corrects

    def reset(self, workload: Any) -> None:
        inner = self.inner
        inner.reset(workload)
        self.workload = workload
        f = self.factor
        self.estimate = f * inner.estimate
        self.prediction = f * inner.prediction
        self.changes = []
        self._revised = {}
        self._f = f
        self._inner_prediction = inner.prediction
        self._inner_has_revised = inner.has_revised
        self._inner_take_revised = inner.take_revised

    def _sync(self, now: float, skip: int = -1) -> None:
        """Revise, scaled, every job the inner predictor revised (but ``skip``)."""
        inner_pred = self._inner_prediction
        for j in self._inner_take_revised():
            if j != skip:
                self.revise(j, now, self._f * float(inner_pred[j]))

    def on_submit(self, job: int, now: float) -> None:
        self.inner.on_submit(job, now)
        self.prediction[job] = self._f * self._inner_prediction[job]
        if self._inner_has_revised():
            self._sync(now)

    def on_start(self, job: int, now: float) -> None:
        self.inner.on_start(job, now)
        if self._inner_has_revised():
            self._sync(now)

    def on_end(self, job: int, now: float, runtime: float) -> None:
        self.inner.on_end(job, now, runtime)
        if self._inner_has_revised():
            self._sync(now)

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        inner = self.inner
        old = float(self._inner_prediction[job])
        new = float(inner.on_expire(job, now, elapsed / self._f))
        grows = new > old
        if grows:
            inner.revise(job, now, new)
        if self._inner_has_revised():
            # other jobs the inner revised meanwhile are passed on; ``job`` itself only if
            # it did not grow (the engine revises this predictor's own, scaled, value with
            # what this returns when it grows)
            self._sync(now, skip=job if grows else -1)
        return self._f * float(self._inner_prediction[job])

    def __repr__(self) -> str:
        return f"Scaled({self.inner!r}, {self.factor:g})"


def with_correction(predictor: Predictor) -> Predictor:
    """``predictor`` with prediction correction (unchanged if it already corrects)."""
    return predictor if predictor.corrects else Corrected(predictor)


# ---------------------------------------------------------------------- registry
PredictorFactory = Callable[..., Predictor]

PREDICTORS: Registry[Predictor] = Registry(
    "predictor",
    usage="(add ':key=value' parameters, '+x2' to double, '+pcor' for prediction correction)",
)
"""Every predictor by name (``make_predictor`` adds parameters and modifiers to a name)."""
_PREDICTORS = PREDICTORS  # the registry's name before it was public


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


def predictor_names() -> dict[str, str]:
    """Registered predictor names with a one-line description each."""
    return PREDICTORS.descriptions()


def predictor_aliases() -> dict[str, str]:
    """Alias -> registered name."""
    return PREDICTORS.aliases()


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


def _parse_parameters(
    name: str, params: str, key: str, accepted: tuple[str, ...] | None
) -> dict[str, object]:
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
    kwargs = _parse_parameters(name, params, key, accepted)
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
    """003's rangeSet predictor (:class:`hpcgym.predict.rangesets.RangeSetPredictor`), imported when used."""
    from hpcgym.predict.rangesets import RangeSetPredictor

    return RangeSetPredictor(**params)


register_predictor(
    "rangeset",
    _rangeset,
    "003 execution-time rangeSets (load functions, merged ranges, probabilities): the weighted sum "
    "of range medians, capped by W; params k, l, m, x, eps, recent, span, compact, overlap, "
    "new_mass, max_ranges, window, refit, shift=additive|relative, history (hpcgym.predict.rangesets)",
    aliases=("rangesets", "hariharan"),
)
