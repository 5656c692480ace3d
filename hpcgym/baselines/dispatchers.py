"""Reference dispatchers: FCFS, SJF/LJF list scheduling and EASY backfilling.

Every dispatcher is a :class:`~hpcgym.sim.DispatcherBase`, a callable
``dispatcher(view) -> Decision`` with the engine's hooks, that plans with
``view.prediction``: whatever predictor the simulation runs with (wall-time W, real
run time R, or a system-generated prediction). None of them sees real run times. Each
places the jobs it starts with the machine's allocation policy (one allocator, see
:mod:`hpcgym.allocator`) and returns those placements with the jobs. The arrays of a
returned :class:`~hpcgym.sim.Decision` are views of the dispatcher's own buffers, valid
until its next call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpcgym.baselines._kernels import (
    RES_HEAD,
    RES_PREDICTED_TIME,
    RES_TIME,
    RESERVATION_FIELDS,
    easy_decide,
    easy_decide_first,
    fcfs_decide,
    list_decide,
    load_kernels,
)
from hpcgym.errors import InvalidConfigError
from hpcgym.sim import Decision, DispatcherBase, SystemView

EXTRA_RULES = ("all", "classic")
"""Accepted values of ``EasyBackfilling.extra``."""


class _Buffers:
    """The output buffer of a compiled kernel, sized for the view's workload.

    ``out[:n]`` receives the jobs to start, ``out[n:]`` their placements (n jobs).
    """

    __slots__ = ("_decision", "n", "out", "view")

    def __init__(self) -> None:
        self.view: SystemView | None = None
        self.out = np.zeros(0, dtype=np.int64)
        self.n = 0
        self._decision = Decision(self.out, self.out)

    def ready(self, view: SystemView) -> _Buffers:
        if self.view is not view:
            self.view = view
            self.n = len(view.chunks)
            self.out = np.zeros(self.n + int(view.placement_ptr[-1]), dtype=np.int64)
        return self

    def decision(self, jobs: int, nodes: int) -> Decision:
        """The kernel's answer (one Decision object, refilled on every call)."""
        n = self.n
        d = self._decision
        d.jobs = self.out[:jobs]
        d.nodes = self.out[n : n + nodes]
        return d

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return _Buffers, ()  # a copy starts empty and is sized on its next call


class FCFS(DispatcherBase):
    """First come, first served: start jobs in arrival order until one does not fit.

    Nothing overtakes the first waiting job, so no job waits for a later one.
    """

    name = "fcfs"

    def __init__(self) -> None:
        self._out = _Buffers()

    def reset(self, view: SystemView) -> None:
        load_kernels()
        self._out.ready(view)

    def __call__(self, view: SystemView) -> Decision | tuple[()]:
        queue = view.queue
        if not view.fits(queue[0]):  # usual at FCFS's decision points: a later job fits, not the first
            return ()
        out = self._out.ready(view)
        return out.decision(*fcfs_decide(*view.kernel_inputs(), out.out))


class ListScheduler(DispatcherBase):
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
        self._out = _Buffers()

    def reset(self, view: SystemView) -> None:
        load_kernels()
        self._out.ready(view)

    def __call__(self, view: SystemView) -> Decision:
        out = self._out.ready(view)
        return out.decision(*list_decide(*view.kernel_inputs(), self.longest_first, out.out))


@dataclass
class EasyBackfilling(DispatcherBase):
    """EASY backfilling (Lifka 1995) and the variants of Tsafrir et al. (2007).

    1. Start waiting jobs in *reservation order* (arrival order; shortest predicted
       first with ``reserve_shortest``) while they fit.
    2. The first job that does not fit, the *head*, gets a reservation: the earliest
       time at which, by the running jobs' predicted ends (start + prediction, a time
       already passed counting as now), it fits. It is found by trial allocation:
       running jobs are released in order of predicted end on a copy of the free
       matrix until the head fits there; the head's trial placement reserves those
       nodes, and the resources free at that time beyond it are the *extra* resources.
    3. Every later job, in *backfill order* (arrival order; shortest predicted first
       with ``sjbf``), starts now if it fits and either is predicted to end by the
       reservation or fits within the extra resources (node by node, and within what
       is free now), which it then consumes.

    On the one-node machine of an SWF trace, "fits" is "enough free processors" and the
    extra resources are Lifka's extra processors.

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
        self.reservation = np.zeros(RESERVATION_FIELDS)
        self._rule = (
            float(self.doubling),
            bool(self.sjbf),
            bool(self.reserve_shortest),
            self.extra != "classic",
        )
        self._out = _Buffers()

    @property
    def every_event(self) -> bool:
        return self.record_reservations

    def reset(self, view: SystemView) -> None:
        load_kernels()
        self._out.ready(view)
        self.first_reservation = np.full(len(view.submit), np.nan)

    def __call__(self, view: SystemView) -> Decision:
        decision = self.decide(view)
        res = self.reservation
        if self.record_reservations and res[RES_HEAD] >= 0:
            head = int(res[RES_HEAD])
            if np.isnan(self.first_reservation[head]):
                self.first_reservation[head] = (
                    res[RES_PREDICTED_TIME] if self.record_past_reservations else res[RES_TIME]
                )
        return decision

    def decide(self, view: SystemView, first: int | None = None) -> Decision:
        """This decision, with waiting job ``first`` taken as the head of the queue.

        ``first`` goes before the other waiting jobs (which keep their order): if it
        does not fit, it gets the reservation. The environment's ``backfill="easy"``
        mode uses it to reserve for the job the agent chose. :attr:`reservation` then
        holds ``[head, time, predicted time]`` (indices ``RES_HEAD``, ``RES_TIME``,
        ``RES_PREDICTED_TIME`` of :mod:`hpcgym.baselines._kernels`).
        """
        out = self._out.ready(view)
        if first is None:
            counts = easy_decide(*view.kernel_inputs(), self._rule, out.out, self.reservation)
        else:
            counts = easy_decide_first(*view.kernel_inputs(), first, self._rule, out.out, self.reservation)
        return out.decision(*counts)

    def extras(self) -> dict[str, object]:
        """What the run recorded, for the schedule's ``extras``."""
        if not self.record_reservations:
            return {}
        return {"first_reservation": self.first_reservation.copy()}
