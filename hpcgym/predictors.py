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
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from hpcgym.errors import InvalidConfigError
from hpcgym.registry import Registry, factory_parameters, parse_value

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


class LastKUserAverage(Predictor):
    """Mean run time of the user's ``k`` latest terminated jobs (Tsafrir et al. 2007).

    004 section 3.1: a new job's prediction is the average run time of the ``k`` (2)
    most recent jobs that the same user submitted before it and that have already
    terminated; with no such job it falls back on the job's estimate, and a prediction
    above the estimate is replaced by the estimate ("the job would be killed anyway").
    The prediction is made once, at submission; later terminations do not change it
    (004 section 7: no "propagation").

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
        super().__init__()
        whole = isinstance(k, (int, float, np.integer, np.floating)) and not isinstance(k, (bool, np.bool_))
        if not whole or not np.isfinite(k) or int(k) != k or k < 1:
            raise InvalidConfigError(f"user-avg: k must be a positive integer (1, 2, ...), got {k!r}")
        if window not in ("all", "immediate"):
            raise InvalidConfigError(f"user-avg: window must be 'all' or 'immediate', got {window!r}")
        if not isinstance(full, (bool, np.bool_)):
            raise InvalidConfigError(f"user-avg: full must be true or false, got {full!r}")
        if order not in ("submit", "end"):
            raise InvalidConfigError(f"user-avg: order must be 'submit' or 'end', got {order!r}")
        self.k = int(k)
        self.window = window
        self.full = bool(full)
        self.order = order

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        self._user: list[int] = np.asarray(workload.user).tolist()
        self._est: list[float] = self.estimate.tolist()
        # per user, the k latest terminated jobs, oldest first, as parallel lists: sort
        # keys (the job index = submission order, or a termination counter), run times
        # and estimates
        self._keys: dict[int, list[int]] = {}
        self._runs: dict[int, list[float]] = {}
        self._ests: dict[int, list[float]] = {}
        self._ends = 0

    def on_submit(self, job: int, now: float) -> None:
        runs = self._runs.get(self._user[job])
        if not runs:
            return  # no history: the estimate (set by reset) stays
        if self.full and len(runs) < self.k:
            return
        est = self._est[job]
        if self.window == "immediate":
            for e in self._ests[self._user[job]]:
                if e != est:
                    return
        p = sum(runs) / len(runs)
        if p < est:
            self.prediction[job] = p

    def on_end(self, job: int, now: float, runtime: float) -> None:
        u = self._user[job]
        keys = self._keys.get(u)
        if keys is None:
            keys, runs, ests = self._keys[u], self._runs[u], self._ests[u] = [], [], []
        else:
            runs, ests = self._runs[u], self._ests[u]
        if self.order == "submit":
            key = job
        else:
            key = self._ends
            self._ends += 1
        if not keys or key > keys[-1]:  # the usual case: the newest so far
            keys.append(key)
            runs.append(runtime)
            ests.append(self._est[job])
        elif len(keys) == self.k and key < keys[0]:
            return  # older than every job the window holds
        else:
            i = bisect.bisect(keys, key)
            keys.insert(i, key)
            runs.insert(i, runtime)
            ests.insert(i, self._est[job])
        if len(keys) > self.k:
            del keys[0], runs[0], ests[0]

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

    When a running job reaches its predicted end:

    * if the prediction was below the estimate, the new prediction is the estimate
      ("the user was smarter than us");
    * otherwise (the job outlived its estimate) the i-th such correction adds 1 minute
      for i = 1 and 15 x 2^(i-2) minutes after that (15 min, 30 min, 1 h, 2 h, ...).

    The engine calls :meth:`on_expire` at the predicted end and, if the job is still
    running, asks again at the new one. The job is not killed: kills only ever use the
    estimate. ``corrections`` counts every job's corrections (004 Table 2's overhead).

    Args:
        inner: the predictor whose predictions are corrected; it shares this one's
            ``prediction`` array.
    """

    corrects = True

    def __init__(self, inner: Predictor) -> None:
        super().__init__(inner)
        self.name = f"{inner.name}+pcor"
        self._count: dict[int, int] = {}

    def reset(self, workload: Any) -> None:
        inner = self.inner
        inner.reset(workload)
        self.workload = workload
        self.estimate = inner.estimate
        self.prediction = inner.prediction
        self.changes = inner.changes
        self._beyond: dict[int, int] = {}  # corrections beyond the estimate, per job
        self._count = {}  # all corrections, per job
        self._est: list[float] = self.estimate.tolist()
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
        out = np.zeros(len(self.prediction), dtype=np.int64)
        if self._count:
            jobs = np.fromiter(self._count.keys(), dtype=np.int64, count=len(self._count))
            out[jobs] = np.fromiter(self._count.values(), dtype=np.int64, count=len(self._count))
        return out

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        count = self._count
        count[job] = count.get(job, 0) + 1
        old = self.prediction[job]
        est = self._est[job]
        if old < est:
            return est
        i = self._beyond.get(job, 0) + 1
        self._beyond[job] = i
        return float(old) + (MINUTE if i == 1 else 15.0 * MINUTE * 2.0 ** (i - 2))

    def __repr__(self) -> str:
        return f"Corrected({self.inner!r})"


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
    takes = (
        "takes no parameters"
        if accepted == ()
        else f"takes {', '.join(accepted)}"
        if accepted
        else "takes the parameters of its constructor"
    )
    kwargs: dict[str, object] = {}
    if params.strip():
        for item in params.split(","):
            k, eq, v = item.partition("=")
            k = k.strip()
            if not eq or not k:
                raise InvalidConfigError(
                    f"predictor {name!r}: parameter {item.strip()!r} is not key=value ({key} {takes})"
                )
            if accepted is not None and k not in accepted:
                raise InvalidConfigError(f"predictor {name!r}: unknown parameter {k!r} ({key} {takes})")
            if k in kwargs:
                raise InvalidConfigError(f"predictor {name!r}: parameter {k!r} is given twice")
            kwargs[k] = parse_value(v.strip())
    try:
        predictor = PREDICTORS.make(key, **kwargs)
    except InvalidConfigError as err:
        raise InvalidConfigError(f"predictor {name!r}: {err}") from err
    except TypeError as err:  # a factory without a signature that rejects a keyword
        raise InvalidConfigError(f"predictor {name!r}: {err} ({key} {takes})") from err
    if params.strip():
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
    """003's rangeSet predictor (:class:`hpcgym.rangesets.RangeSetPredictor`), imported when used."""
    from hpcgym.rangesets import RangeSetPredictor

    return RangeSetPredictor(**params)


register_predictor(
    "rangeset",
    _rangeset,
    "003 execution-time rangeSets (load functions, merged ranges, probabilities): the weighted sum "
    "of range medians, capped by W; params k, l, m, x, eps, recent, span, compact, overlap, "
    "new_mass, max_ranges, window, refit, shift=additive|relative, history (hpcgym.rangesets)",
    aliases=("rangesets", "hariharan"),
)
