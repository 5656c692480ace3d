"""003's six distributions of the system state (Hariharan et al., Table I), compiled.

The wait predictors (:mod:`hpcgym.predict.waitpred`), 003's molding manager and the
environment's ``histograms`` observation all describe the queue and the running jobs with
these histograms, so they live here, below all three. Times are binned on a log scale,
``log1p(t) * inv_log_t * bins`` (``inv_log_t = 1 / log1p(max_time)``), the last bin
taking everything longer.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _tbin(t: float, inv_log_t: float, bins: int) -> int:
    if t <= 0.0:
        return 0
    b = int(np.log1p(t) * inv_log_t * bins)
    return b if b < bins else bins - 1


NO_BINS = np.zeros(0, dtype=np.int64)
"""The ``duration_bin`` of :func:`histograms` when the durations are binned there (empty, so
nothing can be written to it: it stays writable, the kernels' one array type)."""


@njit(cache=True)
def histograms(
    out: np.ndarray,
    queue: np.ndarray,
    running: np.ndarray,
    now: float,
    size_bin: np.ndarray,
    duration: np.ndarray,
    submit: np.ndarray,
    start: np.ndarray,
    inv_log_t: float,
    duration_bin: np.ndarray,
) -> None:
    """The six distributions of Hariharan et al. Table I, each normalised to sum 1.

    Rows: queue request sizes, queue durations, queue elapsed waits, running request
    sizes, running durations, running elapsed run times (an empty set stays all 0).
    ``duration_bin``: each job's duration bin (:func:`duration_bins`) when the durations
    do not change in a run (the compiled environment step's memo: a logarithm less a
    job), or an empty array (:data:`NO_BINS`): binned here.
    """
    binned = len(duration_bin) > 0
    bins = out.shape[1]
    for j in queue:
        out[0, size_bin[j]] += 1.0
        out[1, duration_bin[j] if binned else _tbin(duration[j], inv_log_t, bins)] += 1.0
        out[2, _tbin(now - submit[j], inv_log_t, bins)] += 1.0
    for j in running:
        out[3, size_bin[j]] += 1.0
        out[4, duration_bin[j] if binned else _tbin(duration[j], inv_log_t, bins)] += 1.0
        out[5, _tbin(now - start[j], inv_log_t, bins)] += 1.0
    if len(queue):
        out[0:3] *= 1.0 / len(queue)
    if len(running):
        out[3:6] *= 1.0 / len(running)


@njit(cache=True)
def duration_bins(out: np.ndarray, duration: np.ndarray, inv_log_t: float, bins: int) -> None:
    """Each job's duration bin, as :func:`histograms` bins it (its ``duration_bin``)."""
    for j in range(len(out)):
        out[j] = _tbin(duration[j], inv_log_t, bins)


__all__ = ["NO_BINS", "duration_bins", "histograms"]
