"""Reference dispatchers: FCFS, SJF/LJF list scheduling, EASY backfilling and PRB.

Every dispatcher is a :class:`~hpcgym.sim.DispatcherBase`, a callable
``dispatcher(view) -> Decision`` with the engine's hooks, that plans with
``view.prediction``: whatever predictor the simulation runs with (wall-time W, real
run time R, or a system-generated prediction). None of them sees real run times. Each
places the jobs it starts with the machine's allocation policy (one allocator, see
:mod:`hpcgym.machine.allocator`) and returns those placements with the jobs. The arrays of a
returned :class:`~hpcgym.sim.Decision` are views of the dispatcher's own buffers, valid
until its next call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from hpcgym.baselines._kernels import (
    ARRIVAL,
    LONGEST_FIRST,
    RES_HEAD,
    RES_PREDICTED_TIME,
    RES_TIME,
    RESERVATION_FIELDS,
    SHORTEST_FIRST,
    easy_decide,
    easy_decide_first,
    easy_decide_order,
    load_kernels,
    order_decide,
    prb_decide,
    work_words,
)
from hpcgym.baselines._loop import EASY, ORDER, load_loop, run_compiled
from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import POLICIES as ALLOCATIONS
from hpcgym.sim import Decision, DispatcherBase, Simulator, SystemView

EXTRA_RULES = ("all", "classic")
"""Accepted values of ``EasyBackfilling.extra``."""

PRB_ALLOCATIONS = ("best-fit", "first-fit", "machine")
"""Accepted values of ``PriorityRuleBased.allocation``."""


_ARRIVAL_ORDER = np.zeros(0, dtype=np.int64)
"""The ``order`` argument of ``order_decide`` that means the queue as it is."""


class _Buffers:
    """The output buffer of a compiled kernel, sized for the view's workload.

    ``out[:n]`` receives the jobs to start, ``out[n:]`` their placements (n jobs), and the
    rest is the kernels' scratch (:func:`~hpcgym.baselines._kernels.work_words`).
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
            nodes, n_res = view.free.shape
            # the kernels' scratch, after the placements (a formula: Python computes it, nothing compiles)
            work = work_words.py_func(nodes, n_res, self.n)
            self.out = np.zeros(self.n + int(view.placement_ptr[-1]) + work, dtype=np.int64)
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


def _decides_as(dispatcher: DispatcherBase, cls: type, *methods: str) -> bool:
    """Whether ``dispatcher``'s class keeps ``cls``'s deciding ``methods``.

    The compiled event loop replays ``cls``'s decisions; a subclass that decides
    otherwise must be asked at every decision, on the Python loop.
    """
    return all(getattr(type(dispatcher), m) is getattr(cls, m) for m in methods)


class FCFS(DispatcherBase):
    """First come, first served: start jobs in arrival order until one does not fit.

    Nothing overtakes the first waiting job, so no job waits for a later one.
    """

    name = "fcfs"

    def __init__(self) -> None:
        self._out = _Buffers()

    def reset(self, view: SystemView) -> None:
        load_loop(view)  # the compiled event loop, and order_decide with it (_loop.py)
        self._out.ready(view)

    def run_compiled(self, sim: Simulator, progress: Callable[[int], None] | None) -> bool:
        if not _decides_as(self, FCFS, "__call__"):
            return False
        out = self._out.ready(sim.view).out
        return run_compiled(sim, self.name, out, kind=ORDER, progress=progress, sort=ARRIVAL)

    def __call__(self, view: SystemView) -> Decision | tuple[()]:
        queue = view.queue
        if not view.fits(queue[0]):  # usual at FCFS's decision points: a later job fits, not the first
            return ()
        out = self._out.ready(view)
        counts = order_decide(*view.kernel_inputs(live=True), _ARRIVAL_ORDER, False, ARRIVAL, out.out)
        return out.decision(*counts)


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
        load_loop(view)  # the compiled event loop, and order_decide with it (_loop.py)
        self._out.ready(view)

    def run_compiled(self, sim: Simulator, progress: Callable[[int], None] | None) -> bool:
        if not _decides_as(self, ListScheduler, "__call__"):
            return False
        out = self._out.ready(sim.view).out
        sort = LONGEST_FIRST if self.longest_first else SHORTEST_FIRST
        return run_compiled(sim, self.name, out, kind=ORDER, progress=progress, every_fit=True, sort=sort)

    def __call__(self, view: SystemView) -> Decision:
        out = self._out.ready(view)
        sort = LONGEST_FIRST if self.longest_first else SHORTEST_FIRST
        counts = order_decide(*view.kernel_inputs(live=True), _ARRIVAL_ORDER, True, sort, out.out)
        return out.decision(*counts)


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
    :class:`hpcgym.predict.Scaled`). Kills never use predictions: see
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
        self._first_loaded = self._order_loaded = False

    @property
    def every_event(self) -> bool:
        return self.record_reservations

    def reset(self, view: SystemView) -> None:
        load_loop(view)  # the compiled event loop, and easy_decide with it (_loop.py)
        self._out.ready(view)
        self.first_reservation = np.full(len(view.submit) if self.record_reservations else 0, np.nan)

    def run_compiled(self, sim: Simulator, progress: Callable[[int], None] | None) -> bool:
        if self.record_reservations or not _decides_as(self, EasyBackfilling, "__call__", "decide"):
            return False  # asked at every event, or a subclass decides otherwise: the Python loop
        out = self._out.ready(sim.view).out
        return run_compiled(
            sim, self.name, out, kind=EASY, progress=progress, rule=self._rule, reservation=self.reservation
        )

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
            counts = easy_decide(*view.kernel_inputs(live=True), self._rule, out.out, self.reservation)
        else:
            if not self._first_loaded:  # the environment's backfill="easy" mode only
                load_kernels("easy-first")
                self._first_loaded = True
            inputs = view.kernel_inputs(live=True)
            counts = easy_decide_first(*inputs, first, self._rule, out.out, self.reservation)
        return out.decision(*counts)

    def decide_order(
        self,
        view: SystemView,
        order: np.ndarray,
        inputs: tuple[np.ndarray, np.ndarray, np.ndarray, float] | None = None,
    ) -> Decision:
        """This decision with the waiting jobs taken in ``order``, on the state ``inputs``.

        The jobs of ``order`` (waiting jobs, each once; the others are left out) start in
        that order while they fit, the first that does not gets the reservation, and the
        later ones are backfilled in that order (``sjbf`` and ``reserve_shortest`` sort on
        top of it). ``inputs`` is ``view.kernel_inputs(live=True)`` (the default) or a copy
        of it taken earlier with ``prediction`` and ``start`` made read-only: the decision
        is then made on that earlier state, which the environment's ``backfill`` mode uses to
        replay one decision a job at a time. :attr:`reservation` then holds ``[head, time,
        predicted time]`` as after :meth:`decide`.
        """
        out = self._out.ready(view)
        if not self._order_loaded:  # the environment's learned-backfilling mode only
            load_kernels("easy-order")
            self._order_loaded = True
        mem, prediction, start, now = view.kernel_inputs(live=True) if inputs is None else inputs
        order = np.ascontiguousarray(order, dtype=np.int64)
        counts = easy_decide_order(mem, prediction, start, now, order, self._rule, out.out, self.reservation)
        return out.decision(*counts)

    def extras(self) -> dict[str, object]:
        """What the run recorded, for the schedule's ``extras``."""
        if not self.record_reservations:
            return {}
        return {"first_reservation": self.first_reservation.copy()}


def parse_ewt(text: str) -> dict[str, float]:
    """Expected waits from ``QUEUE=SECONDS/QUEUE=SECONDS/...`` (the CLI form of ``prb:ewt=...``).

    >>> parse_ewt("debug=3600/parallel=21600")
    {'debug': 3600.0, 'parallel': 21600.0}

    Raises:
        InvalidConfigError: an item is not ``QUEUE=SECONDS``, a queue is given twice, or a
            value is not a positive number.
    """
    table: dict[str, float] = {}
    for item in text.split("/"):
        queue, eq, value = item.partition("=")
        queue = queue.strip()
        if not eq or not queue:
            raise InvalidConfigError(
                f"ewt: {item.strip()!r} is not QUEUE=SECONDS; give 'machine', 'uniform' or "
                "QUEUE=SECONDS/QUEUE=SECONDS/..."
            )
        if queue in table:
            raise InvalidConfigError(f"ewt: queue {queue!r} is given twice")
        try:
            table[queue] = float(value)
        except ValueError as err:
            raise InvalidConfigError(
                f"ewt: queue {queue!r}: {value.strip()!r} is not a number of seconds"
            ) from err
    return table


def _positive_ewt(value: object, what: str) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise InvalidConfigError(f"{what}: expected wait must be a number of seconds, got {value!r}") from err
    if not np.isfinite(x) or x <= 0:
        raise InvalidConfigError(f"{what}: expected wait must be a positive number of seconds, got {value!r}")
    return x


@dataclass
class PriorityRuleBased(DispatcherBase):
    """PRB: the priority-rule-based dispatcher of Galleguillos et al. (2017, 2019).

    What the papers say (001 section 4; 002 section 2.2):

    * the priority of a waiting job ``j`` at dispatching time ``t`` is
      ``max(ewt) / ewt_j * (t - submit_j)``, where ``ewt_j`` is the expected waiting
      time of the queue ``j`` was submitted to; jobs with higher priority go first
      (the jobs "closer to surpass their expected waiting time");
    * ties are broken by the job's *demand*, "the job's resource requirements
      multiplied by the estimated job duration": smaller demand first;
    * the jobs are taken in that order and each is allocated with **best-fit** (nodes
      with fewer free resources first); a job that cannot be allocated is postponed to
      the next dispatching time, and the following jobs are still tried. There is no
      reservation.

    What the papers leave open, and what hpcgym does:

    * **max(ewt)** is taken over the ewt table in use and the ``unknown`` value (below).
      It is one factor common to every job, so it does not change the order; it only
      scales the priorities.
    * **requested resources** on a machine of several resource types: the sum over
      types of the job's total request divided by the machine's total capacity of
      that type (``sum_r request[j, r] / total[r]``; types the machine lacks are
      skipped), i.e. the fraction of the machine it asks for, each type counting
      alike. On an SWF machine (one type) it is the requested processors over the
      machine size. The *estimated duration* is the predictor's current prediction,
      so PRB runs with W, D or R like every other dispatcher.
    * jobs equal in priority and demand keep arrival order.
    * **ewt** per queue (``ewt``): ``"machine"`` (default) takes the machine's queue
      table (``Machine.queues``, e.g. the Eurora preset's published values: debug
      1 h, parallel 6 h, np_longpar and longpar 24 h, reservation 30 min); a queue
      whose ``ewt_s`` is 0 (not given) counts as not in the table. ``"uniform"`` uses
      no table: every job has the same ewt, so the priority is the wait. A mapping
      ``{queue: seconds}`` (or the string ``"debug=3600/parallel=21600"``) replaces the
      machine's table.
    * a job's **queue name** is ``jobs.names["queue"][code]`` for a job table; an SWF
      trace has numeric queue ids, matched as their decimal text (``"3"``); code -1
      means no queue.
    * jobs whose queue is not in the table, or who have none, get ``unknown``
      seconds; by default the largest ewt of the table (they are as patient as the
      most patient queue), or 1 s when the table is empty (any constant gives the
      same order: priority is then proportional to the wait). On an SWF machine
      without queues every job is such a job, so PRB orders by wait, then demand.
    * the allocation is best-fit whatever the machine's own ``allocation``;
      ``allocation="first-fit"`` or ``"machine"`` changes that (not in the papers).
    * a job's demand and ewt weight are computed once per run; priorities at each
      decision (002: "calculated once statically at the dispatching time").

    The run's schedule records, in ``extras``, where the expected waits came from:
    ``prb_ewt_source`` (``"machine <name>"``, ``"uniform"`` or ``"given"``),
    ``prb_ewt_s`` (the table used), ``prb_unknown_ewt_s`` and ``prb_jobs_unknown_queue``
    (how many jobs got the ``unknown`` value).

    Args:
        ewt: ``"machine"``, ``"uniform"``, a ``{queue: seconds}`` mapping or its string
            form ``"QUEUE=SECONDS/QUEUE=SECONDS/..."``.
        unknown: expected wait (s) of a job whose queue is not in the table; None: the
            largest in the table (1 s for an empty table).
        allocation: ``"best-fit"`` (the papers'), ``"first-fit"`` or ``"machine"``.
        name: report name.

    Raises:
        InvalidConfigError: an expected wait is not a positive number, or ``ewt`` or
            ``allocation`` is not one of the accepted values.
    """

    ewt: str | Mapping[str, float] = "machine"
    unknown: float | None = None
    allocation: str = "best-fit"
    name: str = "prb"

    def __post_init__(self) -> None:
        if isinstance(self.ewt, str):
            key = self.ewt.strip()
            self._uniform = key == "uniform"
            if key in ("machine", "uniform"):
                self._table: dict[str, float] | None = None
            elif "=" in key:
                self._table = parse_ewt(key)
            else:
                raise InvalidConfigError(
                    f"ewt must be 'machine', 'uniform', a {{queue: seconds}} mapping or "
                    f"'QUEUE=SECONDS/...', got {self.ewt!r}"
                )
        elif isinstance(self.ewt, Mapping):
            self._uniform = False
            self._table = {str(q): v for q, v in self.ewt.items()}
        else:
            raise InvalidConfigError(
                f"ewt must be a string or a {{queue: seconds}} mapping, got {self.ewt!r}"
            )
        if self._table is not None:
            self._table = {q: _positive_ewt(v, f"ewt: queue {q!r}") for q, v in self._table.items()}
            if not self._table:
                raise InvalidConfigError("ewt: the table is empty; give 'uniform' for no table")
        if self.unknown is not None:
            self.unknown = _positive_ewt(self.unknown, "unknown")
        if self.allocation not in PRB_ALLOCATIONS:
            raise InvalidConfigError(
                f"allocation must be one of {', '.join(PRB_ALLOCATIONS)}; got {self.allocation!r}"
            )
        self._policy = -1 if self.allocation == "machine" else ALLOCATIONS[self.allocation]
        self._out = _Buffers()
        self._view: SystemView | None = None
        self._info: dict[str, object] = {}

    def reset(self, view: SystemView) -> None:
        load_kernels("prb")
        self._prepare(view)

    def _prepare(self, view: SystemView) -> None:
        """Each job's ewt weight and resource share, once per view (i.e. per workload)."""
        self._out.ready(view)
        if self._view is view:
            return
        machine = view.machine
        if self._table is not None:
            table, source = dict(self._table), "given"
        elif self._uniform:
            table, source = {}, "uniform"
        else:
            table = {q: ewt for q, (_, ewt) in machine.queues.items() if ewt > 0}
            source = f"machine {machine.name}"
        unknown = self.unknown if self.unknown is not None else max(table.values(), default=1.0)
        top = max(max(table.values(), default=unknown), unknown)
        jobs = view.jobs
        codes = np.asarray(jobs.queue, dtype=np.int64)
        names = jobs.names.get("queue")
        uniq, inverse = np.unique(codes, return_inverse=True)
        per_code = np.empty(len(uniq))
        known = np.zeros(len(uniq), dtype=bool)
        for i, code in enumerate(uniq.tolist()):
            if code < 0:
                continue
            qname = (names[code] if code < len(names) else None) if names is not None else str(code)
            if qname is not None and qname in table:
                per_code[i] = table[qname]
                known[i] = True
        per_code[~known] = unknown
        ewt = per_code[inverse.reshape(-1)]
        self._weight = top / ewt
        self._ewt = ewt
        total = machine.total
        size = np.zeros(len(view.request))
        for r in range(len(total)):  # in type order, so the sum is the documented one
            if total[r] > 0:
                size += view.request[:, r] / float(total[r])
        self._size = size
        self._submit = np.array(view.submit, dtype=np.float64)
        self._view = view
        self._info = {
            "prb_ewt_source": source,
            "prb_ewt_s": table,
            "prb_unknown_ewt_s": unknown,
            "prb_jobs_unknown_queue": int((~known[inverse.reshape(-1)]).sum()),
        }

    def priority(self, view: SystemView, jobs: np.ndarray | None = None) -> np.ndarray:
        """The priority ``max(ewt) / ewt_j * (now - submit_j)`` of ``jobs`` (default: the queue)."""
        self._prepare(view)
        j = view.queue if jobs is None else np.asarray(jobs, dtype=np.int64)
        return np.asarray(self._weight[j] * (view.now - self._submit[j]))

    def expected_wait(self, view: SystemView, jobs: np.ndarray | None = None) -> np.ndarray:
        """The expected wait ``ewt_j`` (s) of ``jobs`` (default: the queue), from the table in use."""
        self._prepare(view)
        j = view.queue if jobs is None else np.asarray(jobs, dtype=np.int64)
        return np.asarray(self._ewt[j])

    def demand(self, view: SystemView, jobs: np.ndarray | None = None) -> np.ndarray:
        """The tie-break ``sum_r request[j, r] / total[r] * prediction_j`` of ``jobs`` (default: queue)."""
        self._prepare(view)
        j = view.queue if jobs is None else np.asarray(jobs, dtype=np.int64)
        return np.asarray(self._size[j] * view.prediction[j])

    def __call__(self, view: SystemView) -> Decision:
        self._prepare(view)
        out = self._out
        counts = prb_decide(
            *view.kernel_inputs(live=True), self._submit, self._weight, self._size, self._policy, out.out
        )
        return out.decision(*counts)

    def extras(self) -> dict[str, object]:
        """Where the expected waits came from, for the schedule's ``extras``."""
        return dict(self._info)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_view"] = None  # per-workload tables are rebuilt on the next call
        return state
