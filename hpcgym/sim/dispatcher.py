"""What a dispatcher is: the :class:`Decision` it returns, the :class:`Dispatcher` protocol,
:class:`DispatcherBase` with the engine's optional hooks, and :func:`as_dispatcher`, which
resolves a dispatcher's kind once for the engine and the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.sim.view import SystemView
from hpcgym.workloads import Workload

__all__ = [
    "CallableDispatcher",
    "Decision",
    "DecisionLike",
    "Dispatcher",
    "DispatcherBase",
    "as_dispatcher",
    "callable_name",
]


class Decision:
    """What a dispatcher may return: jobs to start now and, optionally, where.

    A decision behaves as the sequence of its jobs (``len``, iteration, indexing,
    ``np.asarray``), so code that treats a dispatcher's answer as a list of jobs keeps
    working, and ``sim.start(decision)`` starts them on the given nodes.

    Attributes:
        jobs: the jobs, in the order the engine starts them.
        nodes: their placements, concatenated in job order: job ``jobs[i]``
            contributes ``view.chunks[jobs[i]]`` node indices, one per chunk. ``None``
            lets the engine place every job with the machine's allocation policy, in
            order (which is what returning just the list of jobs does).

    >>> d = Decision([3, 5], [0, 0, 2])  # job 3 has two chunks on node 0, job 5 one on node 2
    >>> list(d), len(d), d.nodes
    ([3, 5], 2, [0, 0, 2])
    """

    __slots__ = ("jobs", "nodes")

    def __init__(
        self, jobs: Sequence[int] | np.ndarray, nodes: Sequence[int] | np.ndarray | None = None
    ) -> None:
        self.jobs = jobs
        self.nodes = nodes

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[int]:
        return iter(self.jobs)

    def __getitem__(self, i: Any) -> Any:
        return self.jobs[i]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.jobs, dtype=dtype)

    def __repr__(self) -> str:
        jobs = list(np.asarray(self.jobs).tolist())
        nodes = None if self.nodes is None else list(np.asarray(self.nodes).tolist())
        return f"Decision(jobs={jobs}, nodes={nodes})"


DecisionLike = Sequence[int] | np.ndarray | Decision
"""What a dispatcher returns: the jobs to start now, or a :class:`Decision` with placements."""


@runtime_checkable
class Dispatcher(Protocol):
    """Anything that, given a view, returns the jobs to start now (or a :class:`Decision`).

    A plain callable is enough. A dispatcher that needs the engine's optional hooks
    (``reset``, ``every_event``, ``extras``) subclasses :class:`DispatcherBase`; the
    engine and the environment call the hooks of a :class:`DispatcherBase` and no
    others (see :func:`as_dispatcher`).

    Attributes:
        name: short name used in reports.
    """

    name: str

    def __call__(self, view: SystemView) -> DecisionLike: ...


class DispatcherBase:
    """A dispatcher with the engine's optional hooks, each a no-op by default.

    Subclasses implement ``__call__`` and override the hooks they need:

    * :meth:`reset` -- called once with the view before a run or an episode;
    * :attr:`every_event` -- True to be asked at every instant with a waiting job,
      even when nothing fits (e.g. to record reservations);
    * :meth:`extras` -- what the run recorded, merged into ``Schedule.extras``;
    * :meth:`wake_times` -- instants at which :meth:`Simulator.run` must stop even
      without an event (e.g. a replay's logged starts);
    * :attr:`needs_log` -- True only for a dispatcher that replays the log: the engine
      then hands it the whole workload, logged waits (SWF field 3) and run times
      included, with :meth:`see_log` after :meth:`reset`, as the oracle predictor is
      handed the run times.

    >>> class Oldest(DispatcherBase):
    ...     name = "oldest"
    ...     def __call__(self, view):
    ...         return view.queue[:1] if view.queue_fits[:1].any() else []
    >>> from hpcgym.sim import Simulator
    >>> from hpcgym.workloads import Workload
    >>> w = Workload.from_columns([0, 0], [5, 5], [4, 4], [5, 5], procs=4)
    >>> Simulator(w).run(Oldest()).start.tolist()
    [0.0, 5.0]
    """

    name: str = "dispatcher"

    @property
    def every_event(self) -> bool:
        """Ask at every instant with a waiting job, not only when one fits (default False)."""
        return False

    def reset(self, view: SystemView) -> None:
        """Prepare for a run on ``view``'s workload (default: nothing)."""

    def extras(self) -> dict[str, object]:
        """What the run recorded, for ``Schedule.extras`` (default: nothing)."""
        return {}

    needs_log: bool = False

    def see_log(self, workload: Workload) -> None:
        """The workload as logged (waits, run times); called only if :attr:`needs_log`."""

    def wake_times(self) -> np.ndarray:
        """Times (s) at which the engine holds an instant with no event (default: none).

        Asked once, after :meth:`reset`; at such an instant the dispatcher is asked as at
        any other (if a waiting job fits, or at every instant with ``every_event``).
        """
        return np.zeros(0)

    def run_compiled(self, sim: Any, progress: Callable[[int], None] | None) -> bool:
        """Replay the whole run of ``sim`` (a :class:`Simulator`) in compiled code, if it can (default: no).

        :meth:`Simulator.run` calls it after :meth:`reset`; a dispatcher that can replay
        its runs checks first that this one needs no Python between events
        (:func:`hpcgym.sim.loop.compilable`) and returns False if not. A dispatcher that returns
        True has run every event and decision exactly as :meth:`__call__` would have, and
        left the engine's state as the Python loop leaves it
        (:func:`hpcgym.sim.loop.adopt_loop`); ``progress``, if given, is called now and then
        with the number of jobs that ended since its last call. The reference dispatchers do
        (:mod:`hpcgym.baselines._loop`).
        """
        return False

    def __call__(self, view: SystemView) -> DecisionLike:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(view)")


_HOOKS = ("reset", "every_event", "extras", "wake_times", "see_log")


class CallableDispatcher(DispatcherBase):
    """A plain dispatcher callable, with the no-op hooks of :class:`DispatcherBase`.

    Args:
        fn: ``view -> jobs to start``.
        name: report name; by default ``fn``'s ``name`` attribute, else its
            ``__name__``, else its type's name.
    """

    def __init__(self, fn: Dispatcher | Any, name: str | None = None) -> None:
        self.fn = fn
        self.name = name or callable_name(fn)

    def __call__(self, view: SystemView) -> DecisionLike:
        return self.fn(view)  # type: ignore[no-any-return]


def callable_name(fn: object) -> str:
    """The report name of a dispatcher callable: its ``name``, else ``__name__``, else its type's."""
    for attr in ("name", "__name__"):
        name = getattr(fn, attr, None)
        if isinstance(name, str) and name:
            return name
    return type(fn).__name__


def as_dispatcher(dispatcher: Dispatcher | Any) -> DispatcherBase:
    """``dispatcher`` with its hooks: itself if a :class:`DispatcherBase`, else a wrapper.

    The one place a dispatcher's kind is resolved: the engine and the environment
    call the hooks of the result and probe nothing else.

    Raises:
        InvalidConfigError: ``dispatcher`` is not callable, or its class defines a hook
            (``reset``, ``every_event``, ``extras``) without subclassing
            :class:`DispatcherBase` (the hook would be ignored).
    """
    if isinstance(dispatcher, DispatcherBase):
        return dispatcher
    if not callable(dispatcher):
        raise InvalidConfigError(f"dispatcher: must be callable (view -> jobs), got {dispatcher!r}")
    hooks = [h for h in _HOOKS if hasattr(type(dispatcher), h)]
    if hooks:
        raise InvalidConfigError(
            f"dispatcher: {type(dispatcher).__name__} defines {', '.join(hooks)} but does not "
            "subclass hpcgym.sim.DispatcherBase, so the engine would ignore it; subclass it"
        )
    return CallableDispatcher(dispatcher)
