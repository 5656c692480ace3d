"""Queue-wait prediction on the system as it ran: APQ (Hariharan et al. 003, section II), IBL, QBETS.

003 predicts how long each arriving job will wait from jobs that arrived in similar
queue and processor states. The states are rebuilt from the SWF log itself: a job's
start is its submit time plus the logged wait (SWF field 3), its end the start plus the
logged run time. At the submission of job ``j`` (time ``t``) the **queue** holds the jobs
logged before ``j`` that have not started (start >= t) and the **running** set the jobs
with start < t < end (:class:`LogState`); nothing after ``t`` is read. A job's wait joins
the **history** once the job has started (start < t), the paper's "history set is updated
when a waiting job is removed from the waiting list"; the history keeps the last
``history`` jobs to start (the oldest dropped).

Methods (:func:`predict_waits`):

* ``apq``: the 16 features of Table II and the six histograms of Table I; the
  distribution-based (eq. 2) or feature-summary (eq. 3-4) distance with |Spearman rho|
  weights, chosen once per trace or, with ``state="adaptive"``, per job by the
  distinctness of the job's histograms (:func:`histogram_distinctness`); the chain
  of section II-C: if the closest ``k_percent`` % of the history are
  far (mean distance > ``sdm_threshold``, 003's case A), the model ``far_model``
  (ridge regression by default, or the weighted average; tuned); else if DBSCAN over
  their (distance, wait) points leaves fewer than a fraction ``outlier_fraction`` as
  noise (case B), SDM; else (case C) ridge regression on the feature summaries of the
  history jobs within ``ridge_max_distance``; if that gives a negative wait (or has
  too few jobs), the weighted average of the ``neighbors`` nearest by feature-summary
  distance.
* ``ibl`` (Li et al.): the k nearest history jobs by a heterogeneous Euclidean-overlap
  distance over the same 16 features, equal weights, their waits averaged with Gaussian
  weights.
* ``qbets`` (Nurmi et al.): an upper bound on the 0.95 quantile of the history's waits at
  95 % confidence (binomial order statistic), the same for every job at one instant.

Open details chosen here (each a parameter where it is a number):

* Job numbers of the protocol count the jobs of the trace as read (jobs that never ran,
  run time < 0, are dropped by the reader) after dropping jobs without a logged wait
  (field 3 < 0), which are counted in ``dropped_no_wait``; status 0/5 jobs that ran stay,
  which gives 003 Table III's job counts for SDSC-SP2 and SDSC-Par.
* Weights are recomputed every ``weight_refresh`` predictions (the paper: every added
  job), from the history of the first prediction of the block.
* "Distinctness in the shape" (section II-A) of a job's histograms is one minus their
  Shannon entropy over ``log(bins)``, averaged over the non-empty ones of the six
  (0: all uniform or all empty; 1: each in one bin); the paper's premise is that
  distributions help "if the distributions are not uniform". With
  ``state="adaptive"`` a job whose distinctness is below ``distinctness`` is compared
  by its feature summaries, the others by their distributions.
* DBSCAN runs on the closest jobs' points (distance, wait / largest wait among them).
* 003 names the model of case A (the neighbours too far away) nowhere: it gives SDM to
  case B, regression to "poor clustering" (case C) and the weighted average to a
  negative regression output. ``far_model`` chooses it and is tuned on the validation
  set. Its default, ``"regression"`` (case A through the regression, then the
  weighted average if that is negative), is the behaviour before the parameter
  existed, so the tuning starts where it did and ends at a validation AAE no higher;
  the other choice, ``"weighted_average"``, answers case A with the weighted average
  of the ``neighbors`` nearest by feature-summary distance. The measured effect is in
  docs/REPRODUCTION.md (Table V section).
* SDM windows need ``min_pts`` jobs; the Gaussian kernel is ``exp(-d**2)``, also for the
  weighted average and IBL.
* Ridge regression needs ``ridge_min_jobs`` history jobs within ``ridge_max_distance``.
* Histograms bin sizes by ``log2(procs) / log2(machine)`` and times by
  ``log1p(t) / log1p(max_time_s)``, as the environment's ``histograms`` observation.
* Tuning (:func:`tune`) varies one parameter at a time over values in Table IV's ranges
  on the validation set, keeping each change that lowers the validation AAE.

The package, by concern: :mod:`~hpcgym.predict.waitpred.config` (the methods' parameters),
:mod:`~hpcgym.predict.waitpred.features` (the log's system state: Table I and II),
:mod:`~hpcgym.predict.waitpred.models` (APQ's chain, IBL, QBETS),
:mod:`~hpcgym.predict.waitpred.runs` (the methods run over a log's jobs),
:mod:`~hpcgym.predict.waitpred.tuning` (validation-set tuning),
:mod:`~hpcgym.predict.waitpred.evaluation` (003 section V's protocol and the errors) and
:mod:`~hpcgym.predict.waitpred.online` (inside a simulation, for the environment).

>>> from hpcgym.predict.waitpred import Protocol
>>> Protocol().test_first, Protocol().test_last
(20001, 60000)
"""

from __future__ import annotations

from hpcgym.predict.waitpred.config import (
    CASES,
    CONFIGS,
    EMPTY,
    FAR_MODELS,
    METHODS,
    REGRESSION,
    SDM,
    STATES,
    WEIGHTED,
    APQConfig,
    IBLConfig,
    QBETSConfig,
    method_config,
    parse_wait_predictor,
)
from hpcgym.predict.waitpred.evaluation import (
    TABLE_V,
    Protocol,
    WaitPrediction,
    apq_comparisons,
    compare_aae,
    evaluate_waits,
    predict_waits,
)
from hpcgym.predict.waitpred.features import FEATURES, LogState
from hpcgym.predict.waitpred.models import (
    _weighted as _weighted,  # molding imports it from here
)
from hpcgym.predict.waitpred.models import (
    apq_chain,
    apq_distances,
    apq_weights,
    by_distributions,
    chi2_distances,
    dbscan_noise,
    gaussian_average,
    histogram_distinctness,
    ibl_distances,
    nearest_average,
    normalized_differences,
    qbets_bound,
    qbets_rank,
    spearman_weights,
)
from hpcgym.predict.waitpred.online import (
    OnlineWaitPredictor,
)
from hpcgym.predict.waitpred.online import (
    _ibl_predict as _ibl_predict,  # a test of the environment imports it from here
)
from hpcgym.predict.waitpred.runs import aae_hours, scaled_aae
from hpcgym.predict.waitpred.tuning import TUNING, tune

__all__ = [
    "CASES",
    "CONFIGS",
    "EMPTY",
    "FAR_MODELS",
    "FEATURES",
    "METHODS",
    "REGRESSION",
    "SDM",
    "STATES",
    "TABLE_V",
    "TUNING",
    "WEIGHTED",
    "APQConfig",
    "IBLConfig",
    "LogState",
    "OnlineWaitPredictor",
    "Protocol",
    "QBETSConfig",
    "WaitPrediction",
    "aae_hours",
    "apq_chain",
    "apq_comparisons",
    "apq_distances",
    "apq_weights",
    "by_distributions",
    "chi2_distances",
    "compare_aae",
    "dbscan_noise",
    "evaluate_waits",
    "gaussian_average",
    "histogram_distinctness",
    "ibl_distances",
    "method_config",
    "nearest_average",
    "normalized_differences",
    "parse_wait_predictor",
    "predict_waits",
    "qbets_bound",
    "qbets_rank",
    "scaled_aae",
    "spearman_weights",
    "tune",
]
