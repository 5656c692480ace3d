"""Reference dispatchers: FCFS, SJF/LJF list scheduling and EASY backfilling.

Every dispatcher is a callable ``dispatcher(view) -> jobs to start now`` that plans with
``view.prediction``: whatever predictor the simulation runs with (wall-time W, real
run time R, or a system-generated prediction). None of them sees real run times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpcgym.baselines._kernels import easy_kernel, list_kernel, load_kernels
from hpcgym.errors import InvalidConfigError
from hpcgym.sim import SystemView

EXTRA_RULES = ("all", "classic")
"""Accepted values of ``EasyBackfilling.extra``."""


class FCFS:
    """First come, first served: start jobs in arrival order until one does not fit.

    Nothing overtakes the first waiting job, so no job waits for a later one.
    """

    name = "fcfs"

    def __call__(self, view: SystemView) -> list[int]:
        # Walks only the prefix that starts: the queue can hold thousands of jobs.
        free = view.free_procs
        procs = view.procs
        out = []
        for j in view.iter_queue():
            p = procs[j]
            if p > free:
                break
            free -= p
            out.append(j)
        return out


class ListScheduler:
    """SJF or LJF as in Galleguillos et al. (2017) section 4.

    Sorts the waiting jobs by expected duration (the predictor's output; ties keep
    arrival order), then walks the whole sorted list and starts every job that fits.
    There is no reservation, so a large job can starve.

    Args:
        longest_first: LJF instead of SJF.
    """

    def __init__(self, longest_first: bool = False) -> None:
        self.longest_first = bool(longest_first)
        self.name = "ljf-list" if longest_first else "sjf-list"

    def reset(self, view: SystemView) -> None:
        load_kernels()

    def __call__(self, view: SystemView) -> np.ndarray:
        return list_kernel(  # type: ignore[no-any-return]
            view.queue, view.procs, view.prediction, view.free_procs, self.longest_first
        )


@dataclass
class EasyBackfilling:
    """EASY backfilling (Lifka 1995) and the variants of Tsafrir et al. (2007).

    1. Start waiting jobs in *reservation order* (arrival order; shortest predicted
       first with ``reserve_shortest``) while they fit.
    2. The first job that does not fit gets a reservation: the earliest time at which,
       by the running jobs' predicted ends (start + prediction, a time already passed
       counting as now), enough processors are free. Processors free at that time
       beyond its need are the *extra* processors.
    3. Every later job, in *backfill order* (arrival order; shortest predicted first
       with ``sjbf``), starts now if it fits and either is predicted to end by the
       reservation or uses only extra processors (which it then consumes).

    The reservation is recomputed at every decision, so it moves when predictions are
    corrected. Sorting by prediction is stable: ties keep arrival order. With
    ``doubling`` every prediction is multiplied by that factor for planning (the presets
    of the X2 family double through the predictor instead, see
    :class:`hpcgym.predictors.Scaled`). Kills never use predictions: see
    ``Simulator(kill_at_estimate=...)``.

    Args:
        sjbf: shortest job backfilled first (backfill candidates by prediction).
        reserve_shortest: give the reservation to the shortest predicted job (SJF order),
            not the oldest.
        doubling: factor applied to predictions when planning (2 for X2).
        name: report name.
        record_reservations: keep each job's first reservation (for predictability);
            the engine then asks at every event so reservations are made when a job
            becomes first, as in the paper's simulator.
        extra: which processors count as *extra* at the reservation. ``"classic"``
            (default): the free processors plus those of the running jobs, taken in
            predicted-end order, needed to reach the head job's size, minus that size
            (Lifka's EASY; what reproduces Tsafrir et al. 2007 — with ``"all"`` SDSC-SP2
            EASY gives 384 min / bsld 104 instead of 364 / 99, see docs/REPRODUCTION.md).
            ``"all"``: every processor predicted to be free at the reservation, i.e. also
            those of further jobs whose predicted end ties with it or, for predictions
            already outlived, that the scheduler believes free now. The two differ only
            on such ties and outlived predictions.
        record_past_reservations: with ``record_reservations``, record the reservation
            as the predicted ends give it even when it lies in the past (every prediction
            it rests on already outlived), instead of "now". The schedule is the same
            either way; Tsafrir et al.'s predictability tables (004 Tables 4 and 5) are
            reproduced this way (see docs/REPRODUCTION.md).
    """

    sjbf: bool = False
    reserve_shortest: bool = False
    doubling: float = 1.0
    name: str = "easy"
    record_reservations: bool = False
    extra: str = "classic"
    record_past_reservations: bool = False
    first_reservation: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def __post_init__(self) -> None:
        if not np.isfinite(self.doubling) or self.doubling <= 0:
            raise InvalidConfigError(f"doubling must be a positive factor, got {self.doubling}")
        if self.extra not in EXTRA_RULES:
            raise InvalidConfigError(f"extra must be one of {', '.join(EXTRA_RULES)}; got {self.extra!r}")
        self._res = np.zeros(4)

    @property
    def every_event(self) -> bool:
        return self.record_reservations

    def reset(self, view: SystemView) -> None:
        load_kernels()
        self.first_reservation = np.full(len(view.submit), np.nan)

    def __call__(self, view: SystemView) -> np.ndarray:
        res = self._res
        jobs = easy_kernel(
            view.now,
            view.free_procs,
            view.queue,
            view.running,
            view.procs,
            view.prediction,
            view.start,
            self.doubling,
            self.sjbf,
            self.reserve_shortest,
            res,
            self.extra != "classic",
        )
        if self.record_reservations and res[0] >= 0:
            head = int(res[0])
            if np.isnan(self.first_reservation[head]):
                self.first_reservation[head] = res[3] if self.record_past_reservations else res[1]
        return jobs  # type: ignore[no-any-return]

    def extras(self) -> dict[str, object]:
        """What the run recorded, for the schedule's ``extras``."""
        if not self.record_reservations:
            return {}
        return {"first_reservation": self.first_reservation.copy()}
