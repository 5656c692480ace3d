"""Queue-order heuristics, with and without EASY backfilling.

The priority functions RLScheduler (Zhang et al., SC'20, section 5.1) compares its agent
with, from Carastan-Santos and de Camargo (2017), Tang et al. (2009) and the usual list
schedulers. Each gives every waiting job a *score*; the queue is taken lowest score
first, ties by arrival (a stable sort of the arrival-ordered queue). With ``r`` the job's
run-time estimate, ``n`` its processors, ``s`` its submit time and ``w`` its current wait
(``now - s``):

=========  ===========================================  =============================
score      formula                                      from
=========  ===========================================  =============================
sjf        ``r``                                        shortest job first (estimate)
saf        ``r * n``                                    smallest area first
f1         ``log10(r) * n + 870 * log10(s)``            Carastan-Santos & de Camargo
f2         ``sqrt(r) * n + 25600 * log10(s)``           Carastan-Santos & de Camargo
f3         ``r * n + 6860000 * log10(s)``               Carastan-Santos & de Camargo
f4         ``r * sqrt(n) + 530000 * log10(s)``          Carastan-Santos & de Camargo
wfp3       ``-(w / r)**3 * n``                          WFP3 (Tang et al. 2009)
unicep     ``-w / (log2(n) * r)``                       UNICEP (Tang et al. 2009)
random     uniform on [0, 1), drawn at every decision   random fitting job
=========  ===========================================  =============================

What the papers leave open, and what hpcgym does (each checked in
``tests/baselines/test_heuristics.py``):

* **r** is the prediction the simulation plans with (``view.prediction``): the user
  estimate W under the presets' default predictor ``walltime``, as in RLScheduler
  (``request_time``); ``--predictor`` replaces it. It is taken as ``max(r, 1)`` seconds,
  so ``log10(r)`` is finite and ``w / r`` defined for a zero estimate.
* **s** is the job's submit time in the trace (seconds since the trace's start, not
  since the episode's window: the F scores age jobs by it, as RLScheduler's do). The
  first job's submit time is usually 0, so ``log10(s)`` is taken as ``log10(max(s, 1))``:
  jobs submitted in the trace's first second count as submitted at 1 s (RLScheduler
  uses 0.1 for a zero submit time; the order differs only among jobs submitted in that
  first second, which then tie on the aging term).
* **n** is the job's total of the machine's first resource type (``view.procs``): the
  requested processors of an SWF job; on a machine of several resource types the
  cores (or whatever type comes first), every node counted.
* **w** is ``now - s`` at each decision: WFP3 and UNICEP are recomputed at every
  decision point, so a job's rank rises while it waits.
* **log2(n)** of UNICEP is 0 for a one-processor job; hpcgym takes ``log2(max(n, 2))``,
  so a one-processor job scores as a two-processor one (RLScheduler adds 1e-15 to n,
  which makes every waiting one-processor job jump the whole queue).
* **random**: one generator per dispatcher, seeded with ``seed`` and re-seeded at every
  run's start, so a run is reproducible. Without backfilling, ``random-fit`` starts every
  job that fits in a random order (a uniformly random fitting job, again, until none
  fits: the free resources only shrink, so a job skipped once stays unfit). With
  backfilling it is EASY over that random order.

Without backfilling (``backfill=False``) the jobs start in score order until one does
not fit, which then blocks the rest (RLScheduler's "without backfilling"). With
backfilling the first job of the order that does not fit gets an EASY reservation and
the later ones are backfilled *in score order* (RLScheduler, Carastan-Santos & de
Camargo); the reservation is that of :class:`~hpcgym.baselines.EasyBackfilling` with
Lifka's extra processors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpcgym.baselines._kernels import (
    ARRIVAL,
    RESERVATION_FIELDS,
    easy_decide_order,
    load_kernels,
    order_decide,
)
from hpcgym.baselines.dispatchers import _Buffers
from hpcgym.common.errors import InvalidConfigError
from hpcgym.sim import Decision, DispatcherBase, SystemView

SCORES = ("sjf", "saf", "f1", "f2", "f3", "f4", "wfp3", "unicep", "random")
"""The score names :class:`QueueOrder` accepts."""

DYNAMIC = frozenset({"wfp3", "unicep", "random"})
"""Scores that change while a job waits (recomputed at every decision anyway)."""


def heuristic_score(
    score: str,
    now: float,
    submit: np.ndarray,
    estimate: np.ndarray,
    procs: np.ndarray,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Each job's score (lowest goes first) under ``score``; see the module docstring.

    Args:
        score: one of :data:`SCORES`.
        now: the decision time (s), for the wait ``w = now - submit``.
        submit: submit times ``s`` (s, since the trace's start).
        estimate: run-time estimates ``r`` (s); taken as ``max(r, 1)``.
        procs: processors ``n``.
        rng: the generator of ``"random"``.

    >>> heuristic_score("saf", 0.0, np.zeros(2), np.array([10.0, 3.0]), np.array([1, 4]))
    array([10., 12.])

    Raises:
        InvalidConfigError: an unknown score, or ``"random"`` without ``rng``.
    """
    s = np.asarray(submit, dtype=np.float64)
    r = np.maximum(np.asarray(estimate, dtype=np.float64), 1.0)
    n = np.asarray(procs, dtype=np.float64)
    if score == "sjf":
        return r.copy()
    if score == "saf":
        return r * n
    log_s = np.log10(np.maximum(s, 1.0))
    if score == "f1":
        return np.log10(r) * n + 870.0 * log_s
    if score == "f2":
        return np.sqrt(r) * n + 25600.0 * log_s
    if score == "f3":
        return r * n + 6860000.0 * log_s
    if score == "f4":
        return r * np.sqrt(n) + 530000.0 * log_s
    w = now - s
    if score == "wfp3":
        return -((w / r) ** 3) * n
    if score == "unicep":
        return -w / (np.log2(np.maximum(n, 2.0)) * r)
    if score == "random":
        if rng is None:
            raise InvalidConfigError("score 'random' needs a random generator (rng)")
        return rng.random(len(s))
    raise InvalidConfigError(f"score must be one of {', '.join(SCORES)}; got {score!r}")


@dataclass
class QueueOrder(DispatcherBase):
    """A queue order by score, lowest first, ties by arrival; optionally EASY backfilling.

    See :mod:`hpcgym.baselines.heuristics` for the scores and what hpcgym chose where the
    papers are silent.

    Args:
        score: one of :data:`SCORES`.
        backfill: EASY backfilling over the order (reservation for the first job of the
            order that does not fit, backfill in the order); else the jobs start in the
            order until one does not fit (``random``: every job that fits starts).
        seed: seed of the ``random`` score (ignored by the others).
        name: report name.

    Attributes:
        last_order: the waiting jobs in the order of the last decision (for checks).

    Raises:
        InvalidConfigError: an unknown score or a seed that is not an integer.
    """

    score: str = "f1"
    backfill: bool = False
    seed: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        if self.score not in SCORES:
            raise InvalidConfigError(f"score must be one of {', '.join(SCORES)}; got {self.score!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise InvalidConfigError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not self.name:
            base = "random-fit" if self.score == "random" else self.score
            self.name = f"{base}-bf" if self.backfill else base
        self._every_fit = self.score == "random" and not self.backfill
        self._rule = (1.0, False, False, False)
        self.reservation = np.zeros(RESERVATION_FIELDS)
        self._rng = np.random.default_rng(int(self.seed))
        self._out = _Buffers()
        self.last_order = np.zeros(0, dtype=np.int64)

    def reset(self, view: SystemView) -> None:
        load_kernels("easy-order" if self.backfill else "order")
        self._out.ready(view)
        self._rng = np.random.default_rng(int(self.seed))

    def order(self, view: SystemView) -> np.ndarray:
        """The waiting jobs in this heuristic's order now (draws from the generator for ``random``)."""
        q = view.queue
        sc = heuristic_score(
            self.score, view.now, view.submit[q], view.prediction[q], view.procs[q], self._rng
        )
        return np.ascontiguousarray(q[np.argsort(sc, kind="stable")])

    def __call__(self, view: SystemView) -> Decision:
        out = self._out.ready(view)
        order = self.last_order = self.order(view)
        mem, prediction, start, now = view.kernel_inputs(live=True)
        if self.backfill:
            counts = easy_decide_order(
                mem, prediction, start, now, order, self._rule, out.out, self.reservation
            )
        else:
            counts = order_decide(mem, prediction, start, now, order, self._every_fit, ARRIVAL, out.out)
        return out.decision(*counts)
