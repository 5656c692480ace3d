"""Backfilling as the agent's action: EASY keeps the head job's reservation, the agent picks who backfills.

``mode="backfill"`` (``hpcgym/DispatchLearnedBackfill-v1``) is learned backfilling as in
RLBackfilling (Fan & Lan, SC-W 2023): a base dispatcher's priority order (``order=``, a preset
of the EASY family) decides which jobs start first and which one gets EASY's reservation; the
agent decides only which job backfills around that reservation. At every decision point of
the engine (an instant at which a waiting job fits):

1. the base preset's own step runs (its compiled kernel, on the engine's state): it starts
   waiting jobs in its priority order while they fit; the first that does not fit, the
   *head*, gets EASY's reservation (the *shadow* time at which the running jobs' predicted
   ends free enough resources for it, and the *extra* resources then free beyond it), all
   computed from the environment's predictor exactly as the preset computes them;
2. the jobs the preset started up to the head start (with the preset's placements);
3. if no waiting job may backfill now (none fits now without delaying the reservation by
   EASY's rule), the engine moves on to the next decision point without asking the agent:
   **every step is a real choice** (at least one job may backfill);
4. otherwise the agent picks one *eligible* job, which starts now (placed where the preset's
   kernel places it: within what is free now, and within the extra resources if it is
   predicted to end after the shadow time), or "stop". After a start the eligible jobs are
   found again at the same instant, against the same reservation (the shadow time and what
   is left of the extra resources, as the preset's kernel updates them within one decision);
   when none is left, or after "stop", the engine moves on.

Which job is eligible is asked of the preset's kernel itself: for each waiting job that fits
now, the kernel is run on the engine's state as it was at the instant's first step with the
jobs in the order (started jobs, head, jobs backfilled so far, that job); the job is
eligible if the kernel backfills it. So the reservation and the rule are the preset's own
code, not a copy.

The base presets (``order``): every preset of the EASY family (:class:`~hpcgym.baselines.
EasyBackfilling`: ``easy``, ``easy-sjbf``, ``easy++``, ``x2``, ``sjf``, ...) and every queue
order with EASY backfilling (:class:`~hpcgym.baselines.QueueOrder` with ``backfill``:
``f1-bf`` .. ``f4-bf``, ``saf-bf``, ``wfp3-bf``, ``unicep-bf``, ``random-fit-bf``). Their
*backfill order* (in which the preset itself tries the candidates) is the priority order,
except with shortest-job-backfilled-first (``easy-sjbf``, ``easy++``, ``x2++``,
``perfect++``, ``sjf``, ``sjf+``): predicted run time, shortest first, ties by the priority
order. The preset's step then backfills, in that order, every job eligible at the moment
it gets there: the first eligible job, then the first eligible one after that against the
updated extra resources, and so on. Hence the property the tests check
(``tests/env/test_learned_backfill.py``): an agent that always picks the first eligible job
in backfill order (and stops when none is left), :func:`expert_action`, gives exactly the
preset's schedule. The preset plans with the environment's predictor (``predictor_of=``
the preset to plan with its own, as ``hpcgym simulate --policy`` does).

**The slots.** The K shown job slots (the rows of ``jobs``, ``requests`` and
``predicted_wait``; the action indices) hold the waiting jobs in this order: the eligible
jobs in backfill order, then the head, then the other waiting jobs in the priority order.
The mask allows the eligible slots and "stop" (action K), so slot 0 is always the job the
preset would backfill next. Those parts read the queue in slot order; ``system`` and
``histograms`` read it in arrival order (``oldest_wait`` is the first job's wait). More than
K eligible jobs: the first K are shown and selectable.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hpcgym.baselines import EasyBackfilling, QueueOrder, make_policy, policy_specs, resolve_policy_name
from hpcgym.common.errors import HpcGymError, InvalidConfigError
from hpcgym.sim import Simulator, SystemView

__all__ = ["LearnedBackfill", "backfill_orders", "base_preset", "expert_action", "reserve_and_backfill"]

ARRIVAL_ORDER_PARTS = frozenset({"system", "histograms"})
"""Observation parts that read the queue in arrival order in ``backfill`` mode (the others: slot order)."""


def backfill_orders() -> tuple[str, ...]:
    """The registered presets ``order`` accepts: those that backfill around an EASY reservation.

    >>> {"easy", "f2-bf", "saf-bf", "sjf"} <= set(backfill_orders())
    True
    """
    return tuple(name for name, spec in policy_specs().items() if "backfill order" in spec.combines)


def base_preset(order: str) -> tuple[str, EasyBackfilling | QueueOrder]:
    """The canonical name of ``order`` and a fresh dispatcher of it, checked to be EASY-based.

    Raises:
        InvalidConfigError: ``order`` is not a preset name (or its parameters are wrong), or
            its dispatcher makes no EASY reservation (naming the accepted presets).
    """
    if not isinstance(order, str):
        raise InvalidConfigError(f"order: must be a dispatcher preset name, got {order!r}")
    try:
        name = resolve_policy_name(order)
        preset = make_policy(name)
    except HpcGymError as err:
        raise InvalidConfigError(f"order: {err}") from err
    if isinstance(preset, EasyBackfilling) or (isinstance(preset, QueueOrder) and preset.backfill):
        return name, preset
    raise InvalidConfigError(
        f"order: {order!r} makes no EASY reservation, so there is nothing to backfill around; "
        f"learned backfilling takes one of {', '.join(backfill_orders())}"
    )


class LearnedBackfill:
    """The state of ``backfill`` mode within an episode (see the module docstring).

    Args:
        order: the base preset (:func:`base_preset`).
        window_size: K, the job slots.

    Attributes:
        name: the base preset's canonical name.
        head: the job holding the reservation at this decision (-1: none).
        shadow: its reservation time (NaN: none).
        slots: the waiting jobs in slot order (empty when no choice is pending).
        eligible: how many of them (the first) may backfill now.
    """

    def __init__(self, order: str, window_size: int) -> None:
        self.name, base = base_preset(order)
        self.base = base
        self.k = int(window_size)
        easy = base if isinstance(base, EasyBackfilling) else EasyBackfilling(name=self.name)
        self._sjbf, self._shortest = easy.sjbf, easy.reserve_shortest
        # the preset's rule on orders given in full (its own sorting applied here, once)
        self._replay = dataclasses.replace(
            easy, sjbf=False, reserve_shortest=False, record_reservations=False
        )
        self._clear()

    def _clear(self) -> None:
        self.head = -1
        self.shadow = float("nan")
        self.slots = np.zeros(0, dtype=np.int64)
        self.eligible = 0
        self._fits = np.zeros(0, dtype=bool)
        self._prefix = np.zeros(0, dtype=np.int64)
        self._candidates = np.zeros(0, dtype=np.int64)
        self._order = np.zeros(0, dtype=np.int64)
        self._state: tuple[Any, ...] = ()

    def reset(self, view: SystemView) -> None:
        """A new episode starts on ``view``'s engine."""
        self.base.reset(view)
        self._replay.reset(view)
        self._clear()

    # ------------------------------------------------------------------ steps
    def arrive(self, sim: Simulator) -> bool:
        """At a decision point: the preset's starts up to its head; True if a job may backfill now.

        Without a choice the preset's whole decision starts here (it then backfills nothing).
        """
        view = sim.view
        decision = self.base(view)  # the preset's own step: its order (drawn once for random-fit-bf)
        order = np.array(self.base.last_order) if isinstance(self.base, QueueOrder) else self._priority(view)
        res = self.base.reservation  # [head, time, predicted time]
        head = int(res[0])
        i = len(decision) if head < 0 else int(np.flatnonzero(order == head)[0])
        if head < 0 or len(decision) == i:  # nothing to backfill: the preset's decision as it is
            if len(decision):
                sim.start(decision)
            self._clear()
            return False
        mem, prediction, start, now = view.kernel_inputs(live=True)
        self._state = (mem.copy(), _frozen(prediction), _frozen(start), now)
        self.head, self.shadow = head, float(res[1])
        self._prefix = order[: i + 1].copy()
        rest = order[i + 1 :]
        if self._sjbf:
            rest = rest[np.argsort(view.prediction[rest], kind="stable")]
        self._candidates = rest
        self._order = order
        if i:
            started = order[:i].copy()
            nodes = np.asarray(decision.nodes)  # the preset's placements, in its order
            sim.start(started, nodes[: int(view.chunks[started].sum())].copy())
        return self._refresh(view)

    def start(self, sim: Simulator, slot: int) -> bool:
        """Backfill the job in eligible ``slot``; True if another job may still backfill now."""
        j = int(self.slots[slot])
        view = sim.view
        nodes = self._try(view, j)
        assert nodes is not None, "an eligible job must backfill"
        sim.start((j,), np.array(nodes))
        self._prefix = np.append(self._prefix, j)
        self._candidates = self._candidates[self._candidates != j]
        return self._refresh(view)

    def _try(self, view: SystemView, j: int) -> np.ndarray | None:
        """Where the preset's step backfills ``j`` next at this instant (None: it does not).

        The preset's rule replayed on the instant's first state, the order being the jobs
        started up to the head, the head, the jobs backfilled since, then ``j``.
        """
        order = np.append(self._prefix, j)
        decision = self._replay.decide_order(view, order, self._state)
        jobs, nodes = np.asarray(decision.jobs), np.asarray(decision.nodes)
        if len(jobs) != len(order) - 1 or jobs[-1] != j:
            return None
        return nodes[len(nodes) - int(view.chunks[j]) :]

    def _refresh(self, view: SystemView) -> bool:
        """Find the eligible jobs and the slot order; True if there is at least one."""
        cands = self._candidates
        fits = view.fits_each(cands)
        eligible = np.zeros(len(cands), dtype=bool)
        count = 0
        for a in np.flatnonzero(fits):
            if self._try(view, int(cands[a])) is not None:
                eligible[a] = True
                count += 1
                if count == self.k:
                    break
        if not count:
            self._clear()
            return False
        chosen = cands[eligible]
        order = self._order
        rest = np.zeros(len(view.chunks), dtype=bool)  # the other waiting jobs
        rest[view.queue] = True
        rest[chosen] = rest[self.head] = False
        others = order[rest[order]]
        slots = np.concatenate([chosen, [self.head], others]).astype(np.int64)
        self.slots = _frozen(slots)
        self._fits = _frozen(view.fits_each(slots))
        self.eligible = count
        return True

    def _priority(self, view: SystemView) -> np.ndarray:
        """The waiting jobs in an EASY-family preset's reservation order (arrival, or shortest first)."""
        queue = np.array(view.queue)
        if self._shortest:
            return queue[np.argsort(view.prediction[queue], kind="stable")]
        return queue

    # ------------------------------------------------------------- observing
    def mask(self, mask: np.ndarray) -> None:
        """The action mask: the eligible slots and "stop" (the last action)."""
        mask[:] = False
        mask[: self.eligible] = True
        mask[-1] = True

    def observe(self, builders: dict[str, Any], view: SystemView) -> dict[str, np.ndarray]:
        """Each part built from the view, with the queue in slot order for the parts with job slots."""
        if not len(self.slots):
            return {name: b.build(view) for name, b in builders.items()}
        slotted: Any = SlotView(view, self.slots, self._fits)
        return {
            name: b.build(view if name in ARRIVAL_ORDER_PARTS else slotted) for name, b in builders.items()
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # copies come back writable; the compiled kernels take these read-only, as the engine's views
        self.__dict__.update(state)
        self.slots, self._fits = _frozen(self.slots), _frozen(self._fits)
        if self._state:
            mem, prediction, start, now = self._state
            self._state = (mem, _frozen(prediction), _frozen(start), now)


class SlotView:
    """A :class:`~hpcgym.sim.SystemView` whose ``queue`` (and ``queue_fits``) are in slot order.

    Every other attribute is the engine's view's.
    """

    __slots__ = ("_view", "queue", "queue_fits")

    def __init__(self, view: SystemView, queue: np.ndarray, queue_fits: np.ndarray) -> None:
        self._view = view
        self.queue = queue
        self.queue_fits = queue_fits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._view, name)


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only copy (the compiled kernels' argument type, as the engine's views are)."""
    out = np.array(a)
    out.flags.writeable = False
    return out


def expert_action(env: Any) -> int:
    """The action with which ``backfill`` mode gives exactly the base preset's schedule.

    The first eligible job in backfill order (slot 0) when a job may backfill, else "stop"
    (the last action). ``env`` is the environment or any wrapper of it.
    """
    u = env.unwrapped
    bf = u._bf
    if bf is None:
        raise InvalidConfigError(f"expert_action: the environment's mode is {u.mode!r}, not 'backfill'")
    return 0 if bf.eligible and not u._done else int(u.action_space.n) - 1


def reserve_and_backfill(sim: Simulator, backfiller: EasyBackfilling, j: int) -> None:
    """``job`` mode, ``backfill="easy"``: job ``j`` does not fit; reserve for it, backfill until it starts.

    EASY's step with ``j`` as the head (:meth:`~hpcgym.baselines.EasyBackfilling.decide`) at
    every event, until ``j`` fits and starts.
    """
    view = sim.view
    while True:
        decision = backfiller.decide(view, first=j)
        if len(decision):
            sim.start(decision)
        if not sim.advance(every_event=True):  # pragma: no cover - j still waits
            raise AssertionError("the engine ran out of events while a job waited")
        if view.fits(j):
            sim.start((j,))
            return
