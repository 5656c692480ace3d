"""SIGTERM as an interrupt: a long command stops its workers and says how to resume, as on Ctrl-C.

By default SIGTERM ends a Python process at once: no ``finally`` block runs, so a
process pool's workers are left running without a parent and a Ray task goes on.
Within :func:`terminate_as_interrupt` SIGTERM raises :class:`Terminated` instead, a
:class:`KeyboardInterrupt`, so everything that cleans up after Ctrl-C (cancelling
queued runs, ending workers, shutting Ray down) runs for SIGTERM too.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TERMINATED_EXIT_CODE = 128 + signal.SIGTERM
"""The exit code of a command ended by SIGTERM (143), as a shell reports a process killed by it."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while :func:`terminate_as_interrupt` was in force."""


_received = threading.Event()


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    # a second SIGTERM during the clean-up ends the process the default way
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _received.set()
    raise Terminated(f"terminated by signal {signum} (SIGTERM)")


def was_terminated(err: BaseException | None = None) -> bool:
    """Whether ``err`` is :class:`Terminated`, or SIGTERM arrived in the last :func:`terminate_as_interrupt`.

    Ray turns an exception raised by a signal handler while it waits into a plain
    :class:`KeyboardInterrupt` of its own; the signal is still known here.
    """
    return isinstance(err, Terminated) or _received.is_set()


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (in the main thread); then the old handler.

    Outside the main thread (where Python cannot set handlers) the block runs unchanged.
    Libraries that set their own SIGTERM handler when they start (Ray's ``ray.init``)
    should have this one put back: :func:`restore_handler`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def sigterm_handler() -> object:
    """The SIGTERM handler in force (to hand to :func:`restore_handler` after a library replaced it)."""
    return signal.getsignal(signal.SIGTERM)


def restore_handler(previous: object) -> None:
    """Put back ``previous`` (from :func:`sigterm_handler`) if it was :class:`Terminated`'s handler.

    Ray's ``ray.init`` replaces the SIGTERM handler by one that exits the process
    without the interrupt's message; within :func:`terminate_as_interrupt` ours is put
    back. Any other handler is left as the library set it.
    """
    if previous is _raise_terminated and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)
