"""Prediction metrics: accuracy, error and predictability of what dispatchers planned with.

Definitions (Tsafrir, Etsion and Feitelson 2007, sections 2 and 4; design card):

* **accuracy** of a prediction P of a job that ran T seconds: 1 if P == T, T/P if
  P > T, P/T if P < T (so 0 when exactly one of them is 0). When the prediction changes
  during the job's life (prediction correction), the job's accuracy is the average of
  the accuracies of its successive predictions weighted by how long each was in effect,
  from submission to termination. A job whose life has zero length gets the accuracy of
  its last prediction.
* **MAE**: mean absolute difference between the prediction made at submission and
  the run time; **under-/over-prediction rate**: share of jobs whose prediction at
  submission was below / above the run time.
* **corrections**: number of prediction revisions per job (004 Table 2, last column).
* **predictability** (004 section 4): the share of jobs that wait and get a
  reservation; for those, the absolute difference between their *first* reservation and
  their actual start (Table 4), and the delays beyond that reservation (Table 5). It needs
  the reservations a dispatcher recorded (``EasyBackfilling(record_reservations=True)``).

Here T is the time a job actually ran (``end - start``). Averages leave out warm-up and
cool-down like every other average (``include_all=True`` keeps every job).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import change_rows
from hpcgym.sim.metrics import measured_jobs, stable_int_order
from hpcgym.sim.schedule import Schedule


def accuracy(prediction: np.ndarray | float, runtime: np.ndarray | float) -> np.ndarray:
    """Accuracy of ``prediction`` against ``runtime``, element-wise, in [0, 1].

    >>> accuracy([10.0, 20.0, 5.0, 0.0, 0.0], [10.0, 10.0, 10.0, 0.0, 3.0]).tolist()
    [1.0, 0.5, 0.5, 1.0, 0.0]
    """
    p = np.asarray(prediction, dtype=np.float64)
    t = np.asarray(runtime, dtype=np.float64)
    lo = np.minimum(p, t)
    hi = np.maximum(p, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hi > 0, lo / np.where(hi > 0, hi, 1.0), 1.0)


def job_accuracy(schedule: Schedule) -> np.ndarray:
    """Every job's accuracy, time-weighted over its life (submission to termination)."""
    w = schedule.workload
    n = len(w)
    submit = np.asarray(w.submit, dtype=np.float64)
    end = schedule.end
    runtime = schedule.end - schedule.start
    first = schedule.first_prediction
    rows = change_rows(schedule.prediction_changes)
    if not len(rows):
        return accuracy(first, runtime)  # type: ignore[no-any-return]
    ct, cj, cp = rows[:, 0], rows[:, 1].astype(np.int64), rows[:, 2]
    # one segment per prediction in effect: (job, from time, prediction), ordered per job
    seg_job = np.concatenate([np.arange(n), cj])
    seg_from = np.concatenate([submit, ct])
    seg_pred = np.concatenate([first, cp])
    seg_kind = np.concatenate([np.zeros(n, dtype=np.int8), np.ones(len(ct), dtype=np.int8)])
    if np.all(ct[1:] >= ct[:-1]) and np.all(ct >= submit[cj]):
        # a log in time order, no revision before its job's submission (what the engine logs):
        # each job's segments are already in (from, kind, log) order, a stable sort by job keeps it
        order = stable_int_order(seg_job)
    else:
        order = np.lexsort((np.arange(len(seg_job)), seg_kind, seg_from, seg_job))
    seg_job, seg_from, seg_pred = seg_job[order], seg_from[order], seg_pred[order]
    last_of_job = np.ones(len(seg_job), dtype=bool)
    last_of_job[:-1] = seg_job[1:] != seg_job[:-1]
    seg_to = np.where(last_of_job, end[seg_job], np.roll(seg_from, -1))
    width = np.maximum(seg_to - seg_from, 0.0)
    acc = accuracy(seg_pred, runtime[seg_job])
    life = np.bincount(seg_job, weights=width, minlength=n)
    weighted = np.bincount(seg_job, weights=acc * width, minlength=n)
    last_pred = np.empty(n)
    last_pred[seg_job[last_of_job]] = seg_pred[last_of_job]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(life > 0, weighted / np.where(life > 0, life, 1.0), accuracy(last_pred, runtime))
    return out  # type: ignore[no-any-return]


def corrections_per_job(schedule: Schedule) -> np.ndarray:
    """How many times each job's prediction was revised after its submission."""
    n = len(schedule.workload)
    rows = change_rows(schedule.prediction_changes)
    return np.bincount(rows[:, 1].astype(np.int64), minlength=n)


def prediction_metrics(
    schedule: Schedule, *, include_all: bool = False, jobs: np.ndarray | None = None
) -> dict[str, Any]:
    """Accuracy and error of the predictions a schedule was planned with.

    Averaged over the jobs :func:`hpcgym.sim.metrics.measured_jobs` chooses (``jobs``: a
    measured set given as a boolean mask, e.g. the common set of ``hpcgym compare``).

    Returns:
        ``accuracy`` (mean time-weighted accuracy, 0-1), ``accuracy_at_submit``
        (accuracy of the first prediction only), ``mae_s`` (mean absolute error of the
        first prediction, s), ``under_rate`` and ``over_rate`` (shares of jobs whose first
        prediction was below / above their run time), ``corrections_mean`` and
        ``corrections_std`` (revisions per job).
    """
    mask = measured_jobs(schedule, include_all, jobs=jobs)
    runtime = (schedule.end - schedule.start)[mask]
    first = schedule.first_prediction[mask]
    corr = corrections_per_job(schedule)[mask]
    if not mask.any():
        nan = float("nan")
        return dict.fromkeys(
            ("accuracy", "accuracy_at_submit", "mae_s", "under_rate", "over_rate", "corrections_mean"), nan
        ) | {"corrections_std": nan}
    return {
        "accuracy": float(job_accuracy(schedule)[mask].mean()),
        "accuracy_at_submit": float(accuracy(first, runtime).mean()),
        "mae_s": float(np.abs(first - runtime).mean()),
        "under_rate": float((first < runtime).mean()),
        "over_rate": float((first > runtime).mean()),
        "corrections_mean": float(corr.mean()),
        "corrections_std": float(corr.std()),
    }


def predictability(schedule: Schedule, *, include_all: bool = False) -> dict[str, float]:
    """Predictability of start times against first reservations (004 Tables 4 and 5).

    Args:
        schedule: a schedule whose ``extras["first_reservation"]`` holds every job's first
            reservation (NaN for jobs that never got one), as recorded by
            ``EasyBackfilling(record_reservations=True)``.
        include_all: count every job instead of leaving out warm-up/cool-down.

    Returns:
        ``reserved_rate`` (share of jobs that waited and got a reservation),
        ``abs_diff_mean_s``, ``abs_diff_median_s``, ``abs_diff_std_s`` (|start - first
        reservation| over those jobs), ``delayed_rate`` (share of all jobs that started
        after their first reservation) and ``delay_mean_s``, ``delay_median_s``,
        ``delay_std_s`` (start - first reservation over the delayed jobs).

    Raises:
        InvalidConfigError: the schedule has no recorded reservations.
    """
    res = schedule.extras.get("first_reservation")
    if res is None:
        raise InvalidConfigError(
            "predictability needs the reservations a dispatcher recorded: run an EasyBackfilling "
            "preset with record_reservations=True (hpcgym reproduce ... --predictability)"
        )
    res = np.asarray(res, dtype=np.float64)
    mask = measured_jobs(schedule, include_all)
    n = int(mask.sum())
    has = mask & ~np.isnan(res)
    diff = schedule.start[has] - res[has]
    delay = diff[diff > 0]

    def stats(x: np.ndarray) -> tuple[float, float, float]:
        if len(x) == 0:
            return (float("nan"),) * 3
        return float(x.mean()), float(np.median(x)), float(x.std())

    a_mean, a_med, a_std = stats(np.abs(diff))
    d_mean, d_med, d_std = stats(delay)
    return {
        "reserved_rate": len(diff) / n if n else float("nan"),
        "abs_diff_mean_s": a_mean,
        "abs_diff_median_s": a_med,
        "abs_diff_std_s": a_std,
        "delayed_rate": len(delay) / n if n else float("nan"),
        "delay_mean_s": d_mean,
        "delay_median_s": d_med,
        "delay_std_s": d_std,
    }
