"""Prediction-expiry alarms in the compiled event loop, as the engine arms and fires them.

The Python engine keeps ``(time, kind, seq, job)`` tuples in its heap: a termination is
kind 0, an expiry alarm kind 1, so at one instant every termination comes before every
alarm, each kind in the order it was scheduled. The compiled loop's heap is keyed on
``(time, key)``: a termination's key is its sequence number, an alarm's is
:data:`EXPIRE_KEY` plus its sequence number, which gives the same order.

:func:`arm` is the engine's ``Simulator._arm`` (with the corrections it makes at once),
:func:`expire` its ``_correct`` at a live alarm; ``alarm[j]`` is the time of ``j``'s live
alarm (NaN if none), as the engine's ``_alarm`` dict. Corrections and their log are the
predictor's (:mod:`hpcgym.predict._kernels`): both return the log.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hpcgym.predict import _kernels as pk
from hpcgym.sim import _kernels as ek

EXPIRE_KEY = 1 << 62
"""Added to an alarm's sequence number: its heap key sorts after every termination's."""


@njit(cache=True, inline="always")
def arm(
    ps: pk.PredictorArrays,
    pred: np.ndarray,
    log: np.ndarray,
    alarm: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    ctl: np.ndarray,
    now: float,
    j: int,
) -> np.ndarray:
    """Set running job ``j``'s expiry alarm if it will outlive its prediction; returns the log.

    A prediction it has already outlived (e.g. 0 s) is corrected at once, and again
    until it is not (``Simulator._arm``, ``_correct``).
    """
    at = start[j]
    while True:
        alarm[j] = np.nan
        t = at + pred[j]
        if t >= end[j]:
            return log  # it ends first; the alarm would find nothing to correct
        if t > now:
            alarm[j] = t
            size = ctl[ek.C_HEAP]
            seq = ctl[ek.C_SEQ]
            ek.heap_push(heap_t, heap_s, heap_j, size, t, EXPIRE_KEY + seq, j)
            ctl[ek.C_HEAP] = size + 1
            ctl[ek.C_SEQ] = seq + 1
            return log
        old = pred[j]
        new = pk.correction(ps, j, old)
        if not new > old:  # a correction that does not grow would loop forever
            return log
        log = pk.revise(ps, pred, log, now, j, new)


@njit(cache=True, inline="always")
def expire(
    ps: pk.PredictorArrays,
    pred: np.ndarray,
    log: np.ndarray,
    alarm: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    heap_t: np.ndarray,
    heap_s: np.ndarray,
    heap_j: np.ndarray,
    ctl: np.ndarray,
    now: float,
    j: int,
) -> np.ndarray:
    """``j``'s live alarm rang at ``now``: correct its prediction and arm the next alarm; returns the log."""
    alarm[j] = np.nan
    old = pred[j]
    new = pk.correction(ps, j, old)
    if new > old:
        log = pk.revise(ps, pred, log, now, j, new)
        log = arm(ps, pred, log, alarm, start, end, heap_t, heap_s, heap_j, ctl, now, j)
    return log
