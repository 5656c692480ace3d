"""Runtime predictors: what dispatchers plan with.

A predictor keeps ``prediction``, one float per job, that the engine shows to
dispatchers. The engine tells it, in time order, of submissions, starts and
terminations; it never sees a job's real run time before the job ends, except the
oracle (``needs_runtime = True``), which is the point of the oracle.

Writing your own predictor::

    class HalfEstimate(Predictor):
        name = "half"

        def on_submit(self, job: int, now: float) -> None:
            self.prediction[job] = 0.5 * self.estimate[job]

``reset`` gives the predictor the job columns it may read (``submit``, ``procs_req``,
``estimate``, ``user``, ...) with the run time hidden. A predictor that revises the
prediction of a running job when that job outlives it implements :meth:`on_expire`
and sets ``corrects = True``; the engine then calls it at the predicted end.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hpcgym.errors import UnknownNameError


class Predictor:
    """Base class: predicts every job's run time as its estimate (wall-time, W).

    Attributes:
        name: CLI name.
        needs_runtime: True only for the oracle; the engine then hands it the real run
            times in :meth:`reset`.
        corrects: whether :meth:`on_expire` revises a prediction its job outlived.
        prediction: current prediction of every job, in seconds.
        changes: ``(time, job, new prediction)`` for every revision after submission,
            in time order; used for time-weighted accuracy.
    """

    name = "walltime"
    needs_runtime = False
    corrects = False

    def __init__(self) -> None:
        self.prediction: np.ndarray = np.zeros(0)
        self.estimate: np.ndarray = np.zeros(0)
        self.changes: list[tuple[float, int, float]] = []

    def reset(self, workload: object) -> None:
        """Start over for ``workload``; by default every prediction is the estimate."""
        self.workload = workload
        self.estimate = np.asarray(workload.estimate, dtype=np.float64)  # type: ignore[attr-defined]
        self.prediction = self.estimate.copy()
        self.changes = []

    def on_submit(self, job: int, now: float) -> None:
        """``job`` arrived; set ``self.prediction[job]``."""

    def on_start(self, job: int, now: float) -> None:
        """``job`` started."""

    def on_end(self, job: int, now: float, runtime: float) -> None:
        """``job`` ended after running ``runtime`` seconds (now known)."""

    def on_expire(self, job: int, now: float, elapsed: float) -> float:
        """``job`` has run ``elapsed`` seconds, as long as its prediction: return a new one.

        Called only when ``corrects`` is True. The default keeps the prediction.
        """
        return float(self.prediction[job])

    def revise(self, job: int, now: float, value: float) -> None:
        """Set a new prediction for ``job`` and log it for accuracy."""
        self.prediction[job] = value
        self.changes.append((now, job, float(value)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Walltime(Predictor):
    """W: the user's estimate (requested time, SWF field 9)."""

    name = "walltime"


class Oracle(Predictor):
    """R: the real run time. Only for upper bounds and studies of perfect information."""

    name = "real"
    needs_runtime = True

    def reset(self, workload: object) -> None:
        super().reset(workload)
        self.prediction = np.asarray(workload.runtime, dtype=np.float64).copy()  # type: ignore[attr-defined]


PredictorFactory = Callable[[], Predictor]

_PREDICTORS: dict[str, tuple[PredictorFactory, str]] = {}
_ALIASES: dict[str, str] = {}


def register_predictor(
    name: str, factory: PredictorFactory, description: str, aliases: tuple[str, ...] = ()
) -> None:
    """Make a predictor available by name (CLI ``--predictor``, ``make_predictor``)."""
    _PREDICTORS[name] = (factory, description)
    for alias in aliases:
        _ALIASES[alias.lower()] = name


def predictor_names() -> dict[str, str]:
    """Registered predictor names with a one-line description each."""
    return {name: desc for name, (_, desc) in _PREDICTORS.items()}


def predictor_aliases() -> dict[str, str]:
    """Alias -> registered name."""
    return dict(_ALIASES)


def resolve_predictor_name(name: str) -> str:
    """The registered name for ``name`` or one of its aliases."""
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _PREDICTORS:
        known = ", ".join(sorted(_PREDICTORS))
        raise UnknownNameError(f"unknown predictor {name!r}; known predictors: {known}")
    return key


def make_predictor(name: str) -> Predictor:
    """A new predictor by registered name or alias (case-insensitive)."""
    return _PREDICTORS[resolve_predictor_name(name)][0]()


register_predictor("walltime", Walltime, "W: the user's estimate (SWF field 9)", aliases=("w",))
register_predictor("real", Oracle, "R: the real run time (oracle)", aliases=("r", "oracle"))
