"""A predictor run off-line over a log: every job's prediction at submission.

001 section 5.1 scores its data-driven predictor this way; the Eurora generator
(:mod:`hpcgym.workloads.eurora`) is calibrated against these figures.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hpcgym.predict.base import Predictor
from hpcgym.predict.profile import trailing_number_prefix
from hpcgym.predict.runtime import make_predictor
from hpcgym.workloads import Workload


def name_prefix(workload: Workload) -> Callable[[int], str]:
    """A job-name prefix function for :class:`~hpcgym.predict.ProfilePredictor`.

    The predictor sees job names as codes (``workload.executable``); this maps a code to
    its name without the trailing number (``run_a2`` -> ``run_a``), 001's "same prefix",
    the predictor's default on job tables (:func:`~hpcgym.predict.trailing_number_prefix`).
    """
    return trailing_number_prefix(workload.names.get("job_name", ()))


def offline_predictions(workload: Workload, predictor: str | Predictor = "profile") -> np.ndarray:
    """Every job's prediction at submission, each job running as soon as it arrives.

    001 section 5.1 evaluates its predictor this way, off-line over the log: a job's
    run time becomes known at ``submit + runtime`` (terminations before submissions at
    the same instant). ``predictor`` is a name of :func:`hpcgym.predict.make_predictor`
    (``walltime`` or ``W``, ``profile`` or ``D``, ...) or a predictor (e.g.
    ``ProfilePredictor(name_prefix=None)`` to leave out the prefix rules).
    """
    pr = make_predictor(predictor) if isinstance(predictor, str) else predictor
    pr.reset(workload if pr.needs_runtime else workload.public)
    n = len(workload)
    submit = np.asarray(workload.submit, dtype=np.float64)
    runtime = np.asarray(workload.runtime, dtype=np.float64)
    times = np.concatenate([submit, submit + runtime])
    kinds = np.concatenate([np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)])
    jobs = np.concatenate([np.arange(n), np.arange(n)])
    order = np.lexsort((jobs, kinds, times))
    first = np.empty(n)
    rt = runtime.tolist()
    for i in order.tolist():
        job = int(jobs[i])
        if kinds[i]:
            pr.on_submit(job, float(times[i]))
            first[job] = pr.prediction[job]
        else:
            pr.on_end(job, float(times[i]), rt[job])
    return first


def prediction_mae_minutes(workload: Workload, predictor: str | Predictor = "profile") -> float:
    """Mean absolute error in minutes of :func:`offline_predictions` (001: D 38.9, W 225.1)."""
    first = offline_predictions(workload, predictor)
    return float(np.abs(first - np.asarray(workload.runtime)).mean() / 60.0)


__all__ = ["name_prefix", "offline_predictions", "prediction_mae_minutes"]
