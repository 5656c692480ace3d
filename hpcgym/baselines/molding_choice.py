"""003's size choice: the candidate sizes, their scores, the molded estimate and run time.

003 IV-A scores each candidate size's response rangeSet (:func:`gain_score`,
:func:`choose_size`); V-C molds the estimate (:func:`molded_estimate`) and draws the run
time (:func:`roulette`) from the user's earlier jobs (:class:`UserHistory`); IV-B's
future time is :func:`settle_time`. The manager (:mod:`hpcgym.baselines.molding`) calls them.
"""

from __future__ import annotations

import numpy as np

from hpcgym.predict import RangeSet
from hpcgym.workloads import Workload

__all__ = [
    "UserHistory",
    "amdahl_factor",
    "choose_size",
    "gain_score",
    "molded_estimate",
    "roulette",
    "settle_time",
]

_ZERO_WIDTH = 1e-9


def gain_score(lo: np.ndarray, hi: np.ndarray, scale: float) -> float:
    """003's gain score (eq. 5, normalised by coverage) of response ranges ``[lo, hi]`` divided by ``scale``.

    With ``f(t) = 1 - t``, the sum of the integrals over the ranges divided by their
    total length: 1 minus the length-weighted mean of the range midpoints. A range of
    zero length counts with a tiny length (a set of points scores 1 - their mean).

    >>> gain_score(np.array([0.0]), np.array([10.0]), 10.0)  # the whole [0, 1]: mean gain 1/2
    0.5
    >>> round(gain_score(np.array([0.0, 8.0]), np.array([2.0, 10.0]), 10.0), 3)  # midpoints .1, .9
    0.5
    >>> gain_score(np.array([2.0, 4.0]), np.array([2.0, 4.0]), 10.0)  # points .2 and .4
    0.7
    """
    lo_n = np.asarray(lo, np.float64) / scale
    hi_n = np.asarray(hi, np.float64) / scale
    width = np.maximum(hi_n - lo_n, _ZERO_WIDTH)
    mid = 0.5 * (lo_n + hi_n)
    return float(1.0 - (width * mid).sum() / width.sum())


def choose_size(rangesets: list[RangeSet], waits: np.ndarray) -> tuple[int, np.ndarray]:
    """The index of the best candidate and every candidate's score (003 IV-A).

    Each candidate's response rangeSet is its run-time rangeSet shifted by its predicted
    wait; all are normalised by the largest upper limit among them. Ties go to the
    lowest index (callers list the job's own size first).

    >>> a = RangeSet(np.array([100.0]), np.array([200.0]), np.array([1.0]))
    >>> b = RangeSet(np.array([50.0]), np.array([60.0]), np.array([1.0]))
    >>> best, scores = choose_size([a, b], np.array([0.0, 500.0]))  # b waits 500 s more
    >>> int(best), scores.round(3).tolist()
    (0, [0.732, 0.009])
    """
    scale = max(float(rs.hi.max()) + float(w) for rs, w in zip(rangesets, waits, strict=True))
    scale = scale if scale > 0 else 1.0
    scores = np.array(
        [gain_score(rs.lo + w, rs.hi + w, scale) for rs, w in zip(rangesets, waits, strict=True)]
    )
    return int(np.argmax(scores)), scores


def molded_estimate(
    original: float, original_size: int, size: int, max_previous: float, max_limit: float
) -> float:
    """The molded job's estimate (003 V-C).

    Shrunk (``size < original_size``): the smaller of *maxPrevious* and *maxLimit* that
    exceeds the original estimate (neither does: the original); otherwise the original.

    >>> molded_estimate(3600.0, 64, 32, 7200.0, 86400.0)
    7200.0
    >>> molded_estimate(3600.0, 64, 32, 1800.0, 86400.0)  # maxPrevious is not longer
    86400.0
    >>> molded_estimate(3600.0, 64, 128, 7200.0, 86400.0)  # expanded: the original
    3600.0
    """
    if size < original_size:
        longer = [v for v in (max_previous, max_limit) if v > original]
        return float(min(longer)) if longer else float(original)
    return float(original)


def amdahl_factor(size: int, new_size: int, serial_fraction: float) -> float:
    """How much longer a job runs on ``new_size`` processors than on ``size``, by Amdahl's law.

    Amdahl: on ``n`` processors a job of serial fraction ``f`` runs ``T1 (f + (1 - f) / n)``;
    the factor is that at ``new_size`` over that at ``size``. With ``f = 0`` (linear
    speedup) it is ``size / new_size`` and the job keeps its processor-seconds; with
    ``f > 0`` an expanded job uses more processor-seconds and a shrunk one fewer. 003 uses
    no speedup model (its molded run time is drawn from the user's earlier jobs, V-C);
    the serial fraction is the caller's choice (no log records it).

    >>> amdahl_factor(64, 32, 0.0), amdahl_factor(8, 32, 0.0)
    (2.0, 0.25)
    >>> round(amdahl_factor(8, 32, 0.1), 4)  # (0.1 + 0.9 / 32) / (0.1 + 0.9 / 8)
    0.6029
    """
    f = float(serial_fraction)

    def time_on(n: int) -> float:
        return f + (1.0 - f) / n

    return time_on(int(new_size)) / time_on(int(size))


def roulette(runtimes: np.ndarray, rng: np.random.Generator) -> float:
    """One run time drawn by roulette wheel: each earlier job's slot is equally wide.

    >>> roulette(np.array([5.0, 5.0, 9.0]), np.random.default_rng(0)) in (5.0, 9.0)
    True
    """
    return float(runtimes[int(rng.integers(len(runtimes)))])


def settle_time(now: float, ends: np.ndarray, settle: float = 0.05) -> float:
    """003 IV-B's future time: the earliest predicted end after ``now``, moved on while the next comes soon.

    From the earliest end ``t``, the next end is taken while it is within ``settle``
    times ``t - now`` of ``t``; inf if no end lies after ``now``.

    >>> settle_time(0.0, np.array([100.0, 104.0, 108.0, 200.0]))
    108.0
    >>> settle_time(0.0, np.array([-5.0]))
    inf
    """
    e = np.sort(np.asarray(ends, np.float64))
    e = e[e > now]
    if not len(e):
        return float("inf")
    t = float(e[0])
    for x in e[1:].tolist():
        if x - t > settle * (t - now):
            break
        t = x
    return t


# ------------------------------------------------------------------ the users' earlier jobs
class UserHistory:
    """Each user's earlier jobs by request size (as logged), told of the jobs in order.

    The candidate sizes, *maxPrevious*, *maxLimit* and the roulette wheel of 003 V-C
    read it; :meth:`see_until` adds the jobs before a given one, so nothing submitted
    later is ever read.
    """

    def __init__(self, workload: Workload) -> None:
        self.w = workload
        self.seen = 0
        self.by_user: dict[int, dict[int, list[int]]] = {}
        self.max_estimate = 0.0

    def see_until(self, job: int) -> None:
        """Add the jobs before ``job``."""
        w = self.w
        for k in range(self.seen, job):
            u, s = int(w.user[k]), int(w.procs_req[k])
            self.by_user.setdefault(u, {}).setdefault(s, []).append(k)
            self.max_estimate = max(self.max_estimate, float(w.estimate[k]))
        self.seen = max(self.seen, job)

    def candidates(self, job: int) -> list[int]:
        """``job``'s own size, then the other sizes of its user's earlier jobs, ascending."""
        own = int(self.w.procs_req[job])
        sizes = sorted(self.by_user.get(int(self.w.user[job]), {}))
        return [own, *(s for s in sizes if s != own)]

    def estimate(self, job: int, size: int) -> float:
        """The estimate of ``job`` molded to ``size`` (:func:`molded_estimate`)."""
        w = self.w
        own, est0 = int(w.procs_req[job]), float(w.estimate[job])
        if size == own:
            return est0
        prev = self.by_user.get(int(w.user[job]), {}).get(size, ())
        mp = max((float(w.estimate[k]) for k in prev), default=0.0)
        return molded_estimate(est0, own, size, mp, self.max_estimate)

    def draw(self, job: int, size: int, rng: np.random.Generator) -> tuple[float, int]:
        """``(run time, donor)`` of ``job`` molded to ``size``: the roulette wheel over the
        user's earlier jobs of that size, and the latest of them (whose request it takes)."""
        donors = self.by_user[int(self.w.user[job])][size]
        return roulette(np.asarray(self.w.runtime)[donors], rng), donors[-1]

    def latest(self, job: int, size: int) -> int:
        """The user's latest earlier job of ``size`` (whose request a job molded to it takes)."""
        return self.by_user[int(self.w.user[job])][size][-1]
