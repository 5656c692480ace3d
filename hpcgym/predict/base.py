"""Runtime predictors, the protocol: what dispatchers plan with.

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

:class:`Predictor` is the base class and W (:class:`Walltime`); :class:`Oracle` is R.
Predictors are made by name with :func:`hpcgym.predict.runtime.make_predictor`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hpcgym.predict.changes import ChangeLog

_EVENT_HOOKS = ("on_submit", "on_start", "on_end", "on_expire", "revise", "has_revised", "take_revised")
"""The hooks through which a predictor could change a prediction after :meth:`Predictor.reset`."""


class Deferred:
    """A mixin: attributes whose values a function completes the first time one of them is read.

    The compiled event loop leaves a predictor's Python state -- a user history's windows,
    the correction counters -- in arrays (:mod:`hpcgym.predict.loop`), and a reset makes
    per-job Python lists that only the Python loop reads. Building them cost as much as a
    tenth of an EASY++ run over SDSC-SP2, and a run whose predictor nobody inspects
    afterwards (every sweep run) never needs them. :meth:`defer` sets the named attributes
    aside with the function that completes them; the first read of any deferred attribute
    (or a copy or pickle of the object) puts them back and runs every pending function in
    the order they were deferred, so a reader sees exactly what eager updates would have left.
    """

    def defer(self, names: tuple[str, ...], complete: Callable[[], None]) -> None:
        """Set ``names`` aside until a deferred attribute is read; then restore them, call ``complete()``."""
        pending = self.__dict__.setdefault("_deferred", [])
        saved = {name: self.__dict__.pop(name) for name in names if name in self.__dict__}
        pending.append((frozenset(names), saved, complete))

    def _undefer(self) -> None:
        pending = self.__dict__.pop("_deferred", ())
        for _, saved, _ in pending:  # every attribute back first: a completion may read any
            self.__dict__.update(saved)
        for _, _, complete in pending:
            complete()

    def __getattr__(self, name: str) -> Any:
        # only called for attributes not found: nothing is added to the usual reads
        if any(name in names for names, _, _ in self.__dict__.get("_deferred", ())):
            self._undefer()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict[str, Any]:
        self._undefer()
        return self.__dict__.copy()


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
            in time order (a :class:`~hpcgym.predict.changes.ChangeLog`, read as a list
            of tuples); used for time-weighted accuracy.

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
    starts. A wrapper (:class:`~hpcgym.predict.modifiers.Scaled`,
    :class:`~hpcgym.predict.modifiers.Corrected`) composes through the same
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
        self.changes = ChangeLog()
        self._revised: dict[int, None] = {}  # an insertion-ordered set: see take_revised

    def reset(self, workload: Any) -> None:
        """Start over for ``workload``; by default every prediction is the estimate."""
        self.workload = workload
        self.estimate = np.asarray(workload.estimate, dtype=np.float64)
        self.prediction = self.estimate.copy()
        self.changes = ChangeLog()
        self._revised = {}

    @property
    def fixed(self) -> bool:
        """Whether every prediction is set in :meth:`reset` and never changes after.

        True when the predictor does not correct and its class keeps the base class's
        event hooks (:meth:`on_submit`, :meth:`on_start`, :meth:`on_end`,
        :meth:`revise`, :meth:`has_revised`): W, R, and any predictor that only fills
        ``prediction`` in :meth:`reset`. The engine then needs no Python between events
        and may replay a reference dispatcher's whole run in compiled code
        (:mod:`hpcgym.sim.loop`); it may too with the built-in predictors whose hooks
        it runs as kernels (:func:`hpcgym.predict.loop.runs_compiled`).
        """
        cls = type(self)
        return not self.corrects and all(
            getattr(cls, hook) is getattr(Predictor, hook) for hook in _EVENT_HOOKS
        )

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
