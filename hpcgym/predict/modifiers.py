"""Prediction correction and scaling: the ``+pcor`` and ``+xF`` modifiers of a predictor name.

:class:`CorrectionSteps` is prediction correction, 004's three kinds (section 3.2 and
section 7) with their per-job counters; :class:`Corrected` applies it on top of any
predictor (``+pcor``), :class:`Scaled` multiplies every prediction (``+x2``, the X2
schedulers) and :func:`with_correction` adds correction unless a predictor corrects itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.base import Deferred, Predictor
from hpcgym.predict.changes import ChangeLog

MINUTE = 60.0
EXPONENTIAL_GROWTH = 0.2
"""``correction=exponential`` adds this fraction of the prediction (at least a minute) each time."""


def _correction_step(i: int) -> float:
    """The i-th increment of 004 section 3.2 (seconds): 1 min, then 15 x 2^(i-2) min."""
    return MINUTE if i == 1 else 15.0 * MINUTE * 2.0 ** (i - 2)


class CorrectionSteps(Deferred):
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

    def __init__(self, mode: str, estimate: list[float] | np.ndarray) -> None:
        if mode not in ("estimate", "gradual", "exponential"):
            raise InvalidConfigError(f"correction must be estimate | gradual | exponential, got {mode!r}")
        self.mode = mode
        if isinstance(estimate, np.ndarray):  # as a list when the Python loop first corrects
            self.defer(("_est",), lambda: setattr(self, "_est", estimate.tolist()))
        else:
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
        self._steps = CorrectionSteps(self.mode, self.estimate)
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
        self.changes = ChangeLog()
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
