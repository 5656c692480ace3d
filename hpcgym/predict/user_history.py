"""004's history-based predictor, EASY++'s family: any point of section 7's parameter space.

:class:`UserHistoryConfig` is one configuration (window size, type, fullness, metric,
fallback, propagation, correction), validated, named ``user-history:k=2,...`` and read back
from that name; :class:`UserHistory` predicts with it. :class:`LastKUserAverage`
(``user-avg``, Tsafrir et al. 2007) is its default configuration with its own parameters.
The value tables below accept the paper's terms and its abbreviations (its Table 11).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.base import Deferred, Predictor
from hpcgym.predict.modifiers import CorrectionSteps
from hpcgym.predict.registry import parse_parameters, predictor_parameters, resolve_predictor_name

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
            predictions at once, through :meth:`~hpcgym.predict.base.Predictor.revise`); ``no``: a
            prediction is made once, at submission. Running jobs are not re-predicted.
        correction: what happens when a running job reaches its predicted end (see
            :class:`~hpcgym.predict.modifiers.CorrectionSteps`): ``estimate`` (jump to
            the estimate; 004 section 3.2, the ``+pcor`` modifier), ``gradual`` (1 min,
            15 min, 30 min, 1 h, ... added each time) or ``exponential`` (20 % added each
            time, at least 1 min);
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
        kwargs = parse_parameters(text, params, "user-history", predictor_parameters("user-history"))
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


class UserHistory(Predictor, Deferred):
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
        self.__dict__.pop("_deferred", None)  # a compiled run's state, never read: gone with it
        super().reset(workload)
        # per job, as lists for the Python loop's hooks (made when first read: a run in the
        # compiled loop reads the arrays instead)
        user, estimate = workload.user, self.estimate

        def lists() -> None:
            self._user: list[int] = np.asarray(user).tolist()
            self._est: list[float] = estimate.tolist()

        self.defer(("_user", "_est"), lists)
        # per user (type=extended: per (user, estimate)), the k latest terminated jobs,
        # oldest first, as parallel lists: sort keys (the job index = submission order,
        # or a termination counter), run times and estimates
        self._windows: dict[Hashable, tuple[list[int], list[float], list[float]]] = {}
        self._ends = 0
        self._ratio: dict[int, list[float]] = {}  # per user: [sum of run time / estimate, count]
        self._waiting: dict[int, dict[int, None]] = {}  # per user: waiting jobs (propagation)
        self._steps = CorrectionSteps(self.config.correction, estimate) if self.corrects else None

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
