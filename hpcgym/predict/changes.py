"""The log of prediction revisions, as a sequence of tuples kept in arrays (:class:`ChangeLog`).

A predictor logs every revision after a job's submission as ``(time, job, prediction)``
(:meth:`hpcgym.predict.base.Predictor.revise`); the schedule keeps the log and the
prediction metrics weigh each prediction by how long it was in effect. EASY++ over
SDSC-SP2 revises about 120,000 times: as Python tuples that log cost more than the
compiled simulation that made it (building the tuples, then reading them back into
arrays for the metrics). :class:`ChangeLog` reads as the list of tuples it replaces
(iteration, indexing, ``len``, ``==`` with a list) while the compiled loop hands it its
rows as one array and the metrics read them back as arrays (:meth:`ChangeLog.rows`),
with no tuple made on either side.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

Change = tuple[float, int, float]
"""One revision: (time, job, new prediction)."""


class ChangeLog(Sequence[Change]):
    """Revisions ``(time, job, prediction)`` in the order they were logged.

    :meth:`append` and :meth:`extend` take tuples (a Python predictor's revisions),
    :meth:`add_rows` a float array of shape (m, 3) (the compiled loop's log); both keep
    the order of the calls. Reading it as tuples gives ``(float, int, float)``;
    :meth:`rows` gives every revision as one (m, 3) float array without making a tuple.
    A log compares equal to any sequence of the same tuples (``log == [(10.0, 0, 50.0)]``).

    >>> log = ChangeLog([(10.0, 0, 50.0)])
    >>> log.add_rows(np.array([[50.0, 0.0, 500.0]]))
    >>> log.append((60.0, 1, 70.0))
    >>> list(log), len(log), log[1]
    ([(10.0, 0, 50.0), (50.0, 0, 500.0), (60.0, 1, 70.0)], 3, (50.0, 0, 500.0))
    >>> log.rows()[:, 1].tolist()
    [0.0, 0.0, 1.0]
    """

    __slots__ = ("_blocks", "_tail")

    def __init__(self, changes: Iterable[Change] = ()) -> None:
        self._blocks: list[np.ndarray] = []  # (m, 3) float arrays, oldest first
        self._tail: list[Change] = []  # tuples logged after the last block
        if isinstance(changes, ChangeLog):
            self._blocks = list(changes._blocks)  # the arrays are never written after being added
            self._tail = list(changes._tail)
        else:
            self.extend(changes)

    def append(self, change: Change) -> None:
        """Log one revision ``(time, job, prediction)``."""
        self._tail.append(change)

    def extend(self, changes: Iterable[Change]) -> None:
        """Log revisions ``(time, job, prediction)`` in order."""
        self._tail.extend(changes)

    def add_rows(self, rows: np.ndarray) -> None:
        """Log the revisions of ``rows``, a float array of shape (m, 3): time, job, prediction.

        The log keeps ``rows`` itself: the caller hands it over and does not write it after.
        """
        if rows.ndim != 2 or rows.shape[1] != 3:
            raise ValueError(f"revision rows must have shape (m, 3), not {rows.shape}")
        if len(rows):
            self._flush()
            self._blocks.append(rows)

    def rows(self) -> np.ndarray:
        """Every revision as a float array of shape (m, 3): time, job, prediction."""
        self._flush()
        if len(self._blocks) != 1:  # none, or several joined once (later calls read the one)
            self._blocks = [np.concatenate(self._blocks) if self._blocks else np.zeros((0, 3))]
        return self._blocks[0]

    def _flush(self) -> None:
        if self._tail:
            self._blocks.append(np.array(self._tail, dtype=np.float64).reshape(-1, 3))
            self._tail = []

    def __len__(self) -> int:
        return sum(len(b) for b in self._blocks) + len(self._tail)

    def __iter__(self) -> Iterator[Change]:
        for block in self._blocks:
            times, values = block[:, 0].tolist(), block[:, 2].tolist()
            jobs = block[:, 1].astype(np.int64).tolist()
            yield from zip(times, jobs, values, strict=True)
        yield from self._tail

    @overload
    def __getitem__(self, index: int) -> Change: ...
    @overload
    def __getitem__(self, index: slice) -> list[Change]: ...
    def __getitem__(self, index: int | slice) -> Change | list[Change]:
        if isinstance(index, slice):
            return list(self)[index]
        n = len(self)
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("revision index out of range")
        for block in self._blocks:
            if i < len(block):
                t, j, p = block[i].tolist()
                return (t, int(j), p)
            i -= len(block)
        return self._tail[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it replaces

    def __repr__(self) -> str:
        return f"ChangeLog({list(self)!r})"

    def __reduce__(self) -> tuple[object, tuple[np.ndarray]]:
        return (_from_rows, (self.rows(),))  # pickled as one array, not as tuples


def _from_rows(rows: np.ndarray) -> ChangeLog:
    log = ChangeLog()
    log.add_rows(rows)
    return log


def change_rows(changes: Sequence[Change]) -> np.ndarray:
    """``changes`` (a :class:`ChangeLog` or any sequence of tuples) as a float array of shape (m, 3)."""
    if isinstance(changes, ChangeLog):
        return changes.rows()
    return np.array(changes, dtype=np.float64).reshape(-1, 3)
