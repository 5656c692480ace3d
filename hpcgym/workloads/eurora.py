"""Synthetic workloads: a seeded Eurora job generator, its duration classes from 001 and 002.

The Eurora PBS logs that Galleguillos et al. (001, MOD 2017) and Borghesi/Galleguillos
et al. (002, CP 2019) study are not public. :func:`eurora` generates a job table with the
few figures those papers publish, for the Eurora machine preset (``hpcgym machines``), so
that their studies can be re-run by anyone. Queue, request, accelerator, memory and
arrival shares are in neither paper: they are assumptions (hpcgym's issue 10), listed with
their reasons in :data:`hpcgym.workloads.eurora_sources.SOURCES`:

* **duration classes** (001 section 2, 002 section 5): 93.15 % short (< 1 h); 6.82 %
  medium (1-12 h) and 0.03 % long (> 12 h) in 001's classes, which are at the same time
  6.10 % medium (1-5 h) and 0.75 % long (> 5 h) in 002's: the generator draws four
  classes, short, 1-5 h, 5-12 h and > 12 h, with shares 93.15, 6.10, 0.72 and 0.03 %, which
  satisfy both papers at once; maximum 24 h (001); long-tailed within each class
  (truncated Pareto levels, 001 Fig. 1);
* **queues** (assumption: the Eurora preset, issue 10; 002 says Eurora had four queues
  and names none, 001 none either): about 50 % ``debug``, 41 % ``parallel``, 6 %
  ``reservation``, 3 % ``np_longpar`` and a few ``longpar``; a job runs no longer than
  its queue's maximum wall-time, so medium and long jobs go to the queues that allow them;
* **wall-time requests** (001 section 3, 002 section 5): per job profile, mostly the
  queue's maximum (the queue default on Eurora: "user-supplied values tend to be equal to
  the wall-time of the queue"), otherwise a multiple of the profile's first duration
  rounded up to 15 minutes, never above the queue's maximum;
* **requests** (assumption: issue 10, not in 001 or 002): about 95 % of jobs on one
  node (one chunk), 62 % on one core, 15 % asking for GPUs, 0.6 % for MICs (GPU and MIC
  never in the same chunk: every Eurora node carries one kind); memory per chunk
  proportional to its cores, with noise, at most a node's 16 GB;
* **arrivals** (assumption: issue 10): bursty, median inter-arrival 0 s; jobs come in sessions (a
  user submitting a run of jobs of one profile, most in the same second), sessions arrive
  as a Poisson process; ``load`` divides every inter-arrival time (004 section 3.4);
* **users and job names** (001 section 3): users own job profiles (name prefix such as
  ``run_a``, queue, wall-time and kind of request fixed); a profile's durations stay
  around one level for a while and then shift to another; the numbered name (``run_a1``,
  ``run_a2``) and the size of the request sometimes change with the shift. This is the temporal locality 001's
  profile predictor (``profile``, alias ``D``) exploits.

Every parameter, and where it comes from, is a field of :class:`EuroraParams`;
``docs/WORKLOADS.md`` lists them with the shares measured on generated jobs.

Not in the papers, chosen here and documented on the fields: the number of users and how
unevenly they submit, session sizes, how often profiles are reused and shift, the
within-class duration shapes, the noise around a profile's level, the request shapes of
multi-core and multi-node jobs, and the memory per core. The mean inter-arrival time
defaults to 30 s, half the real machine's 60 s: the papers call the Eurora workload heavy,
and at 60 s this generator's jobs keep about a quarter of the cores busy and hardly wait
(``docs/WORKLOADS.md`` has the measured utilization and waits at both, and the commands).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import Machine, make_machine
from hpcgym.workloads.workload import LoadReport, Workload

RESOURCES = ("cores", "gpus", "mics", "mem_gb")
"""The per-chunk columns of a generated workload (those of a job table)."""

CLASS_NAMES = ("short", "1-5h", "5-12h", "12-24h")
"""The four duration classes the generator draws (001's medium is the middle two)."""


def _tuple(value: object, name: str, length: int | None = None) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InvalidConfigError(
            f"EuroraParams.{name} must be a sequence of numbers, got {value!r}"
        ) from None
    if length is not None and len(out) != length:
        raise InvalidConfigError(f"EuroraParams.{name} must have {length} entries, got {len(out)}")
    if not all(math.isfinite(v) for v in out):
        raise InvalidConfigError(f"EuroraParams.{name} must hold finite numbers, got {value!r}")
    return out


def _real(value: object) -> float:
    """``value`` as a float, NaN if it is not a real number (so every check on it fails)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return math.nan


def _whole(value: object) -> int | None:
    """``value`` as an int, None if it is not a whole number."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def _shares(value: object, name: str, length: int | None = None) -> tuple[float, ...]:
    out = _tuple(value, name, length)
    if any(v < 0 for v in out) or abs(sum(out) - 1.0) > 1e-6:
        raise InvalidConfigError(
            f"EuroraParams.{name} must be non-negative shares summing to 1, got {value!r}"
        )
    return out


@dataclass(frozen=True)
class EuroraParams:
    """Every parameter of :func:`eurora`, with where it comes from (001, 002 or an assumption).

    Shares are fractions of jobs. "issue 10" means hpcgym's issue 10, a characterisation
    of Eurora that is not in 001 or 002: its values are assumptions, as are the "chosen"
    ones (no paper gives the figure). :data:`hpcgym.workloads.eurora_sources.SOURCES`
    gives every field's source (001, 002 or assumption) and reason.

    Attributes:
        queues: queue names; each must be a queue of the Eurora preset (whose maximum
            wall-times bound run times and wall-time requests).
        queue_shares: share of jobs per queue: debug 49.8 %, parallel 41 %, reservation
            6 %, np_longpar 3 %, longpar 0.2 % (issue 10: "about 50/41/6/3 % and a few
            longpar").
        class_mix: per queue, the shares of its jobs in the classes short (< 1 h),
            1-5 h, 5-12 h and 12-24 h (:data:`CLASS_NAMES`). Derived so that over all
            queues the classes are 93.15 / 6.10 / 0.72 / 0.03 % (001: 93.15 % short,
            6.82 % medium, 0.03 % long; 002: 6.10 % in 1-5 h, 0.75 % over 5 h), with each
            class only in queues whose maximum wall-time allows it (debug 30 min: short
            only; parallel 4 h: up to 1-5 h; np_longpar 8 h: up to 5-12 h).
        class_bounds_s: run-time bounds of the four classes in seconds, ``(lo, hi)``
            each, inclusive: short [1, 3599], 1-5 h [3600, 17999], 5-12 h [18000,
            43200], 12-24 h [43201, 86400] (001: short < 1 h, long > 12 h, maximum 24 h;
            002: the 5 h edge). A class is further capped by the queue's maximum.
        level_alpha: Pareto tail index of a profile's duration level within each class
            (a truncated Pareto on the class's range; the smaller, the heavier the
            tail): chosen so that short jobs dominate by count and medium jobs by CPU time
            (001: medium jobs use 87.63 % of CPU time, short 10.77 %, long 1.6 %).
        short_level_min_s: the smallest level of a short profile, seconds (chosen).
        noise_sigma: a job's run time is its profile's level times a log-normal factor
            of this sigma (chosen so that the data-driven predictor is within 25 % of the
            run time for about half the jobs, as 002 reports), then kept within its class
            and its wall-time (a job reaching its wall-time was killed there).
        session_mean_jobs: mean jobs per session (geometric, at least 1), per class:
            short jobs come in long runs, long jobs alone (chosen; with these the median
            inter-arrival is 0 s, issue 10).
        same_second: share of a session's later jobs submitted in the same second as
            the one before (bursts; issue 10: median inter-arrival 0 s).
        session_gap_s: mean gap between later jobs of a session when not in the same
            second, seconds (chosen).
        mean_interarrival_s: mean inter-arrival time over all jobs at load 1, seconds;
            the gap between sessions is set to give it. 30 s: half the real machine's
            60 s (issue 10), because the papers call Eurora's workload heavy and at 60 s
            few generated jobs wait.
        users: number of users (chosen).
        user_zipf: users submit new profiles with Zipf weights 1/rank^s (chosen: a few
            users submit most jobs).
        groups: number of groups (projects); users are spread over them at random (chosen).
        new_profile: share of sessions that start a new profile; the others repeat a
            recent profile of the same queue, class and request kind (chosen).
        reuse_lag_mean: the profile repeated is that of the k-th last session of the
            same kind, k geometric with this mean (chosen: recent profiles come back).
        shift: share of a profile's later sessions whose duration level shifts to a new
            draw (001 section 3: durations "stable for long periods", then a new set of
            values).
        rename_on_shift: share of shifts that also bump the number of the job name
            (``run_a1`` -> ``run_a2``; 001: "job1", "job2") (chosen).
        resize_on_shift: share of shifts that also redraw the request's size within its
            shape (cores of a one-node job; chunks and cores of a multi-node job; the
            memory with them): 001's predictor allows "resources used to differ" for the
            same name, queue and wall-time (its rule 3) (chosen).
        request_shape: shares of jobs asking for one core, one node with several
            cores, and several nodes (chunks): 62 / 33 / 5 % (issue 10: 95 % one node,
            62 % one core).
        request_shape_longer: the same shares within the classes 1-5 h, 5-12 h and
            12-24 h (chosen: longer jobs ask for more, so that medium jobs carry most of
            the CPU time, 001, and the machine fills); short jobs get the shares that
            make the overall ones :attr:`request_shape` (:meth:`shape_mix`).
        accelerator: shares asking for no accelerator, GPUs, MICs: 84.4 / 15 / 0.6 %
            (issue 10: about 15 % GPUs, under 1 % MICs).
        cores_choices, cores_weights: cores of a one-node multi-core job (chosen).
        node_cores_choices, node_cores_weights: cores per chunk of a multi-node job (chosen).
        chunks_choices, chunks_weights: chunks of a multi-node job (chosen; at most 8 so
            GPU and MIC jobs fit their 32 nodes).
        accelerators_two: share of GPU/MIC chunks asking for both of a node's 2 (chosen).
        mem_per_core_gb: mean memory per core in GB (a node's 16 GB / 16 cores).
        mem_sigma: log-normal noise of memory per chunk; rounded up to whole GB and
            kept within [1, 16] (issue 10: "proportional to cores with noise").
        default_walltime: share of profiles asking for the queue's maximum wall-time,
            the Eurora default (002: users "tend to use the maximum wall-time"; chosen
            together with the factors below to give wall-time's large MAE, 001: 225 min).
        walltime_factor: a profile that sets its own wall-time asks for its first
            level times a factor uniform in this range, rounded up to 15 min and capped by
            the queue's maximum (chosen).
    """

    queues: tuple[str, ...] = ("debug", "parallel", "reservation", "np_longpar", "longpar")
    queue_shares: tuple[float, ...] = (0.498, 0.41, 0.06, 0.03, 0.002)
    class_mix: tuple[tuple[float, ...], ...] = (
        (1.0, 0.0, 0.0, 0.0),
        (0.8888, 0.1112, 0.0, 0.0),
        (0.8483, 0.10, 0.05, 0.0017),
        (0.5733, 0.30, 0.1267, 0.0),
        (0.50, 0.20, 0.20, 0.10),
    )
    class_bounds_s: tuple[tuple[int, int], ...] = ((1, 3599), (3600, 17999), (18000, 43200), (43201, 86400))
    level_alpha: tuple[float, ...] = (0.3, 0.5, 1.0, 1.0)
    short_level_min_s: float = 5.0
    noise_sigma: float = 0.2
    session_mean_jobs: tuple[float, ...] = (6.0, 2.0, 1.5, 1.0)
    same_second: float = 0.8
    session_gap_s: float = 20.0
    mean_interarrival_s: float = 30.0
    users: int = 120
    user_zipf: float = 1.0
    groups: int = 25
    new_profile: float = 0.15
    reuse_lag_mean: float = 3.0
    shift: float = 0.15
    rename_on_shift: float = 0.5
    resize_on_shift: float = 0.3
    request_shape: tuple[float, ...] = (0.62, 0.33, 0.05)
    request_shape_longer: tuple[tuple[float, ...], ...] = (
        (0.05, 0.35, 0.60),
        (0.05, 0.35, 0.60),
        (0.3, 0.5, 0.2),
    )
    accelerator: tuple[float, ...] = (0.844, 0.15, 0.006)
    cores_choices: tuple[int, ...] = (2, 4, 8, 16)
    cores_weights: tuple[float, ...] = (0.3, 0.25, 0.25, 0.2)
    node_cores_choices: tuple[int, ...] = (4, 8, 16)
    node_cores_weights: tuple[float, ...] = (0.2, 0.3, 0.5)
    chunks_choices: tuple[int, ...] = (2, 3, 4, 6, 8)
    chunks_weights: tuple[float, ...] = (0.4, 0.15, 0.25, 0.05, 0.15)
    accelerators_two: float = 0.5
    mem_per_core_gb: float = 1.0
    mem_sigma: float = 0.5
    default_walltime: float = 0.95
    walltime_factor: tuple[float, float] = (1.5, 4.0)

    def __post_init__(self) -> None:
        nq = len(self.queues)
        if nq == 0 or len(set(self.queues)) != nq:
            raise InvalidConfigError(f"EuroraParams.queues must name distinct queues, got {self.queues!r}")
        _shares(self.queue_shares, "queue_shares", nq)
        if len(self.class_mix) != nq:
            raise InvalidConfigError(f"EuroraParams.class_mix must have one row per queue ({nq})")
        for q, row in zip(self.queues, self.class_mix, strict=True):
            _shares(row, f"class_mix[{q}]", len(CLASS_NAMES))
        if len(self.class_bounds_s) != len(CLASS_NAMES) or any(
            not (1 <= lo <= hi) for lo, hi in self.class_bounds_s
        ):
            raise InvalidConfigError(
                f"EuroraParams.class_bounds_s must be {len(CLASS_NAMES)} (lo, hi) pairs with 1 <= lo <= hi"
            )
        for name in ("level_alpha", "session_mean_jobs"):
            values = _tuple(getattr(self, name), name, len(CLASS_NAMES))
            if any(v <= 0 for v in values) or (name == "session_mean_jobs" and min(values) < 1):
                raise InvalidConfigError(f"EuroraParams.{name} must be positive (session means >= 1)")
        for name in ("short_level_min_s", "session_gap_s", "mean_interarrival_s", "mem_per_core_gb"):
            v = getattr(self, name)
            if not (math.isfinite(_real(v)) and _real(v) > 0):
                raise InvalidConfigError(f"EuroraParams.{name} must be a positive number, got {v!r}")
        for name in ("noise_sigma", "mem_sigma"):
            v = getattr(self, name)
            if not (math.isfinite(_real(v)) and _real(v) >= 0):
                raise InvalidConfigError(f"EuroraParams.{name} must be a number >= 0, got {v!r}")
        for name in (
            "same_second",
            "new_profile",
            "shift",
            "rename_on_shift",
            "resize_on_shift",
            "accelerators_two",
            "default_walltime",
        ):
            v = getattr(self, name)
            if not 0 <= _real(v) <= 1:
                raise InvalidConfigError(f"EuroraParams.{name} must be a share in [0, 1], got {v!r}")
        for name in ("users", "groups"):
            v = getattr(self, name)
            if (_whole(v) or 0) < 1:
                raise InvalidConfigError(f"EuroraParams.{name} must be a whole number >= 1, got {v!r}")
        if not _real(self.user_zipf) >= 0:
            raise InvalidConfigError(f"EuroraParams.user_zipf must be >= 0, got {self.user_zipf!r}")
        if not _real(self.reuse_lag_mean) >= 1:
            raise InvalidConfigError(f"EuroraParams.reuse_lag_mean must be >= 1, got {self.reuse_lag_mean!r}")
        _shares(self.request_shape, "request_shape", 3)
        if len(self.request_shape_longer) != len(CLASS_NAMES) - 1:
            raise InvalidConfigError(
                "EuroraParams.request_shape_longer must have one row per class but short "
                f"({len(CLASS_NAMES) - 1})"
            )
        for c, row in zip(CLASS_NAMES[1:], self.request_shape_longer, strict=True):
            _shares(row, f"request_shape_longer[{c}]", 3)
        short = self.shape_mix()[0]
        if (short < -1e-9).any():
            raise InvalidConfigError(
                "EuroraParams.request_shape_longer: longer jobs take more of a request shape than "
                f"request_shape allows overall (short jobs would get {short.round(4).tolist()})"
            )
        _shares(self.accelerator, "accelerator", 3)
        for choices, weights in (
            ("cores_choices", "cores_weights"),
            ("node_cores_choices", "node_cores_weights"),
            ("chunks_choices", "chunks_weights"),
        ):
            c = getattr(self, choices)
            _shares(getattr(self, weights), weights, len(c))
            if not c or any((_whole(x) or 0) < 1 for x in c):
                raise InvalidConfigError(f"EuroraParams.{choices} must be whole numbers >= 1, got {c!r}")
        if min(self.chunks_choices) < 2:
            raise InvalidConfigError("EuroraParams.chunks_choices: a multi-node job has at least 2 chunks")
        lo, hi = _tuple(self.walltime_factor, "walltime_factor", 2)
        if not 1 <= lo <= hi:
            raise InvalidConfigError(
                "EuroraParams.walltime_factor must be (lo, hi) with 1 <= lo <= hi, "
                f"got {self.walltime_factor!r}"
            )

    def shape_mix(self) -> np.ndarray:
        """``(classes, 3)``: shares of one core, one node, several nodes within each class.

        The rows of the longer classes are :attr:`request_shape_longer`; the short row is
        what makes the overall shares :attr:`request_shape`.
        """
        cls = self.class_shares()
        longer = np.asarray(self.request_shape_longer, dtype=np.float64)
        short = (np.asarray(self.request_shape) - cls[1:] @ longer) / cls[0]
        return np.vstack([short, longer])  # type: ignore[no-any-return]

    def class_shares(self) -> np.ndarray:
        """Expected share of jobs in each class of :data:`CLASS_NAMES`."""
        return np.asarray(self.queue_shares) @ np.asarray(self.class_mix)  # type: ignore[no-any-return]


def _check_machine(m: Machine, p: EuroraParams) -> np.ndarray:
    """The maximum wall-time of each of ``p.queues`` on ``m``; requests must fit its nodes."""
    missing = [q for q in p.queues if q not in m.queues]
    if missing:
        raise InvalidConfigError(
            f"EuroraParams.queues: {', '.join(missing)} not a queue of machine {m.name!r} "
            f"({', '.join(m.queues)})"
        )
    for r in RESOURCES:
        if r not in m.resources:
            raise InvalidConfigError(
                f"machine {m.name!r} has no resource {r!r}; the generator asks for {RESOURCES}"
            )
    qmax = np.array([m.queues[q][0] for q in p.queues], dtype=np.float64)
    for q, row, limit in zip(p.queues, p.class_mix, qmax, strict=True):
        for c, share, (lo, _) in zip(CLASS_NAMES, row, p.class_bounds_s, strict=True):
            if share > 0 and lo > limit:
                raise InvalidConfigError(
                    f"EuroraParams.class_mix[{q}]: class {c} runs at least {lo} s, longer than queue "
                    f"{q}'s maximum wall-time on machine {m.name!r} ({limit:g} s); give it share 0"
                )
    cap = np.asarray(m.capacity)[:, [m.resources.index(r) for r in RESOURCES]]
    most = max(max(p.cores_choices), max(p.node_cores_choices))
    if most > cap[:, 0].max():
        raise InvalidConfigError(f"EuroraParams: {most} cores per chunk exceed machine {m.name!r}'s nodes")
    return qmax


def _group_starts(keys: np.ndarray) -> np.ndarray:
    """For sorted ``keys``: whether each entry starts a new run of equal keys."""
    start = np.ones(len(keys), dtype=bool)
    start[1:] = keys[1:] != keys[:-1]
    return start


def _run_index(start: np.ndarray) -> np.ndarray:
    """For runs marked by ``start``: the index of each entry's run start."""
    return np.maximum.accumulate(np.where(start, np.arange(len(start)), 0))


def _pareto(rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Truncated Pareto draws on ``[lo, hi]`` (inverse CDF), element-wise."""
    u = rng.random(len(lo))
    tail = 1.0 - (lo / hi) ** alpha
    return lo * (1.0 - u * tail) ** (-1.0 / alpha)  # type: ignore[no-any-return]


def _codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``keys`` in order of first appearance (as the job-table reader gives names),
    and the key of each code."""
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    return rank[inverse.reshape(-1)], uniq[order]


def _letters(k: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa, ... (a profile's tag within its user)."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


NAME_WORDS = ("run", "sim", "job", "test", "md", "cfd", "train", "post", "bench", "qe")
"""Job-name prefixes' words; a profile's prefix is a word and a letter tag, e.g. ``run_a``."""


EURORA_MAX_JOBS = 10_000_000
"""The most jobs :func:`eurora` generates at once (about 2 GB of columns; the largest logs of
the Parallel Workloads Archive hold a few million jobs)."""


def _check_args(n_jobs: object, seed: object, load: object) -> tuple[int, int | None, float]:
    n = _whole(n_jobs)
    if n is None or n < 1:
        raise InvalidConfigError(f"n_jobs must be a whole number >= 1, got {n_jobs!r}")
    if n > EURORA_MAX_JOBS:
        raise InvalidConfigError(f"n_jobs must be at most {EURORA_MAX_JOBS:,}, got {n:,}")
    s = _whole(seed)
    if seed is not None and (s is None or s < 0):
        raise InvalidConfigError(f"seed must be a whole number >= 0 or None, got {seed!r}")
    f = _real(load)
    if not (math.isfinite(f) and f > 0):
        raise InvalidConfigError(f"load must be a positive number, got {load!r}")
    return n, s, f


def eurora(
    n_jobs: int,
    seed: int | None = 0,
    load: float = 1.0,
    params: EuroraParams | None = None,
) -> Workload:
    """``n_jobs`` synthetic Eurora jobs, a workload for the Eurora machine preset.

    The jobs are what :func:`hpcgym.workloads.read_jobs` gives for the job table
    :func:`hpcgym.workloads.write_jobs` writes of them (names coded in order of first
    appearance, every wall-time given, the machine attached): generating and writing,
    then reading the file back, gives the same jobs.

    How (module docstring and :class:`EuroraParams` for the figures): sessions are drawn
    with a (queue, class, request shape, accelerator) kind each, so that jobs have the
    configured shares; a session repeats a recent profile of its kind or starts a new one
    (a new profile gets a user, a name prefix, a request and a wall-time); a profile's
    duration level is drawn when it starts and redrawn at each shift; each job runs its
    session's level times log-normal noise, kept within its class and wall-time. Jobs
    are in submission order; their ids are 1..n. Submit times and run times are whole
    seconds (PBS logs them so), the first job is submitted at 0, and submit times are
    rounded down after ``load`` divides the gaps. The first ``n`` jobs of a larger
    workload of the same seed are not the ``n`` jobs of ``eurora(n, seed)``: the draws
    are made for whole sessions, in batches sized by ``n_jobs``.

    Args:
        n_jobs: how many jobs.
        seed: seed of :func:`numpy.random.default_rng`; the same seed gives the same jobs.
            None draws fresh entropy.
        load: offered-load factor: every inter-arrival time is divided by it (004
            section 3.4), so ``load=2`` offers twice the load.
        params: the generator's parameters (default :class:`EuroraParams`).

    Returns:
        The workload, named ``eurora-synthetic``; ``workload.machine`` is the Eurora
        preset and ``workload.header`` says how it was generated.

    Raises:
        InvalidConfigError: a bad argument or parameter, named.

    >>> w = eurora(1000, seed=1)
    >>> len(w), w.machine.name, w.names["queue"][w.queue[0]]
    (1000, 'eurora', 'parallel')
    >>> bool((w.runtime <= w.estimate).all()), eurora(1000, seed=1).submit.tolist() == w.submit.tolist()
    (True, True)
    """
    n, seed, load = _check_args(n_jobs, seed, load)
    p = params if params is not None else EuroraParams()
    if not isinstance(p, EuroraParams):
        raise InvalidConfigError(f"params must be EuroraParams, got {type(p).__name__}")
    m = make_machine("eurora")
    qmax = _check_machine(m, p)
    rng = np.random.default_rng(seed)
    nc = len(CLASS_NAMES)

    # kinds: (queue, class, shape, accelerator); session weights so that *jobs* get the shares
    mean_size = np.asarray(p.session_mean_jobs, dtype=np.float64)
    job_share = (
        (np.asarray(p.queue_shares)[:, None] * np.asarray(p.class_mix))[:, :, None, None]
        * np.clip(p.shape_mix(), 0.0, None)[None, :, :, None]
        * np.asarray(p.accelerator)[None, None, None, :]
    )
    # a kind's number is ((queue * classes + class) * shapes + shape) * accelerators + accelerator
    n_shapes, n_acc = job_share.shape[2:]
    per_class = n_shapes * n_acc
    sess_w = (job_share / mean_size[None, :, None, None]).reshape(-1)
    expected_size = 1.0 / sess_w.sum()
    sess_p = sess_w / sess_w.sum()

    # sessions until there are n jobs
    kinds: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    total = 0
    while total < n:
        batch = int((n - total) / expected_size * 1.1) + 16
        k = rng.choice(len(sess_p), size=batch, p=sess_p)
        s = rng.geometric(1.0 / mean_size[(k // per_class) % nc])
        kinds.append(k)
        sizes.append(s)
        total += int(s.sum())
    kind = np.concatenate(kinds)
    size = np.concatenate(sizes)
    ns = int(np.searchsorted(np.cumsum(size), n)) + 1
    kind, size = kind[:ns], size[:ns].copy()
    size[-1] -= int(size.sum()) - n
    q_of, c_of = kind // (nc * per_class), (kind // per_class) % nc
    shape_of, accel_of = (kind // n_acc) % n_shapes, kind % n_acc

    # profiles: a session repeats the profile of a recent session of its kind, or starts one
    by_kind = np.argsort(kind, kind="stable")
    kstart = _group_starts(kind[by_kind])
    first_of_kind = _run_index(kstart)
    new = rng.random(ns) < p.new_profile
    new[kstart] = True
    lag = rng.geometric(1.0 / p.reuse_lag_mean, ns)
    pos = np.arange(ns)
    ptr = np.where(new, pos, np.maximum(pos - lag, first_of_kind))
    while True:  # pointer jumping to the session that started the profile
        nxt = ptr[ptr]
        if np.array_equal(nxt, ptr):
            break
        ptr = nxt
    root = np.empty(ns, dtype=np.int64)
    root[by_kind] = by_kind[ptr]  # the session (in time order) that started each session's profile
    roots, profile = np.unique(root, return_inverse=True)  # profiles numbered in creation order
    profile = profile.reshape(-1)
    npf = len(roots)

    # profile attributes: user, group, name prefix, request, first level, wall-time
    pq, pc = q_of[roots], c_of[roots]
    ranks = np.arange(1, p.users + 1, dtype=np.float64) ** -p.user_zipf
    user_of = rng.choice(p.users, size=npf, p=ranks / ranks.sum())
    group_of_user = rng.integers(0, p.groups, p.users)
    word = rng.integers(0, len(NAME_WORDS), npf)
    by_user = np.lexsort((np.arange(npf), user_of))
    tag = np.empty(npf, dtype=np.int64)
    ustart = _group_starts(user_of[by_user])
    tag[by_user] = np.arange(npf) - _run_index(ustart)

    shape, accel = shape_of[roots], accel_of[roots]

    def requests(shape: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chunks, cores per chunk and memory per chunk for request shapes ``shape``."""
        k = len(shape)
        chunks = np.ones(k, dtype=np.int64)
        cores = np.ones(k, dtype=np.int64)
        multi = shape == 1
        cores[multi] = rng.choice(p.cores_choices, size=int(multi.sum()), p=p.cores_weights)
        nodes = shape == 2
        chunks[nodes] = rng.choice(p.chunks_choices, size=int(nodes.sum()), p=p.chunks_weights)
        cores[nodes] = rng.choice(p.node_cores_choices, size=int(nodes.sum()), p=p.node_cores_weights)
        mem = np.ceil(cores * p.mem_per_core_gb * rng.lognormal(0.0, p.mem_sigma, k))
        return chunks, cores, np.clip(mem, 1, 16).astype(np.int64)

    chunks, cores, mem = requests(shape)
    amount = np.where(rng.random(npf) < p.accelerators_two, 2, 1)
    gpus = np.where(accel == 1, amount, 0)
    mics = np.where(accel == 2, amount, 0)

    bounds = np.asarray(p.class_bounds_s, dtype=np.float64)
    lo_c, hi_c = bounds[:, 0], bounds[:, 1]
    alpha = np.asarray(p.level_alpha, dtype=np.float64)
    level_lo_c = lo_c.copy()
    level_lo_c[0] = max(lo_c[0], min(p.short_level_min_s, hi_c[0]))

    def levels(q: np.ndarray, c: np.ndarray) -> np.ndarray:
        hi = np.minimum(hi_c[c], qmax[q])
        lo = np.minimum(level_lo_c[c], hi)
        return _pareto(rng, lo, np.maximum(hi, lo), alpha[c])

    first_level = levels(pq, pc)
    own = rng.random(npf) >= p.default_walltime
    factor = rng.uniform(p.walltime_factor[0], p.walltime_factor[1], npf)
    asked = np.ceil(first_level * factor / 900.0) * 900.0
    walltime = np.where(own, np.clip(asked, lo_c[pc], qmax[pq]), qmax[pq])

    # phases: a profile's later sessions shift its level now and then; renames go with some
    by_prof = np.lexsort((np.arange(ns), profile))
    pstart = _group_starts(profile[by_prof])
    shift = (rng.random(ns) < p.shift) & ~pstart
    rename = shift & (rng.random(ns) < p.rename_on_shift)
    level_sorted = np.where(pstart, first_level[profile[by_prof]], levels(q_of[by_prof], c_of[by_prof]))
    phase_start = pstart | shift
    level_sorted = level_sorted[_run_index(phase_start)]
    renames = np.cumsum(rename)
    number_sorted = 1 + renames - renames[_run_index(pstart)]
    level = np.empty(ns)
    level[by_prof] = level_sorted
    number = np.empty(ns, dtype=np.int64)
    number[by_prof] = number_sorted
    # some shifts come with another size of the same shape (rule 3 of 001's predictor)
    resize = shift & (rng.random(ns) < p.resize_on_shift)
    spf = profile[by_prof]
    new_chunks, new_cores, new_mem = requests(shape[spf])
    since = _run_index(pstart | resize)
    s_chunks, s_cores, s_mem = (np.empty(ns, dtype=np.int64) for _ in range(3))
    s_chunks[by_prof] = np.where(pstart, chunks[spf], new_chunks)[since]
    s_cores[by_prof] = np.where(pstart, cores[spf], new_cores)[since]
    s_mem[by_prof] = np.where(pstart, mem[spf], new_mem)[since]

    # jobs
    js = np.repeat(np.arange(ns), size)
    jp = profile[js]
    jq, jc = q_of[js], c_of[js]
    cap = np.minimum(hi_c[jc], walltime[jp])
    runtime = np.rint(level[js] * rng.lognormal(0.0, p.noise_sigma, n))
    runtime = np.clip(runtime, lo_c[jc], cap)

    first_job = np.zeros(n, dtype=bool)
    first_job[np.cumsum(size)[:-1]] = True
    first_job[0] = True
    within = (expected_size - 1) * (1 - p.same_second) * p.session_gap_s
    between = max(p.mean_interarrival_s * expected_size - within, 1.0)
    gap = np.where(
        first_job,
        rng.exponential(between, n),
        np.where(rng.random(n) < p.same_second, 0.0, rng.exponential(p.session_gap_s, n)),
    )
    gap[0] = 0.0
    submit = np.floor(np.cumsum(gap / load))

    # identifiers, coded as the job-table reader codes names
    user_codes, user_ids = _codes(user_of[jp])
    group_codes, group_ids = _codes(group_of_user[user_of[jp]])
    queue_codes, queue_ids = _codes(jq)
    name_key = jp * (int(number.max()) + 1) + number[js]
    name_codes, name_keys = _codes(name_key)
    width = int(number.max()) + 1
    # users name jobs alike (two users may both run "sim_a1"): one code per distinct name
    code_of: dict[str, int] = {}
    remap = np.array(
        [
            code_of.setdefault(
                f"{NAME_WORDS[word[k // width]]}_{_letters(int(tag[k // width]))}{k % width}", len(code_of)
            )
            for k in name_keys.tolist()
        ],
        dtype=np.int64,
    )
    name_codes = remap[name_codes]
    job_names = tuple(code_of)
    names = {
        "user": tuple(f"u{u + 1:03d}" for u in user_ids.tolist()),
        "group": tuple(f"prj{g + 1:02d}" for g in group_ids.tolist()),
        "job_name": job_names,
        "queue": tuple(p.queues[q] for q in queue_ids.tolist()),
    }

    per_chunk = np.column_stack([s_cores[js], gpus[jp], mics[jp], s_mem[js]]).astype(np.int64)
    job_chunks = s_chunks[js]
    estimate = walltime[jp].astype(np.float64)
    job_id = np.arange(1, n + 1, dtype=np.int64)
    procs = int(np.asarray(m.capacity)[:, m.resources.index("cores")].sum())
    size_req = job_chunks * per_chunk[:, 0]
    status = np.ones(n, dtype=np.int64)
    partition = np.full(n, -1, dtype=np.int64)
    columns = (user_codes, group_codes, name_codes, queue_codes, partition)
    raw = np.full((n, 18), -1.0)
    raw[:, 0] = job_id
    raw[:, 1] = submit
    raw[:, 3] = runtime
    raw[:, 4] = size_req
    raw[:, 7] = size_req
    raw[:, 8] = estimate
    raw[:, 10] = status
    for field_no, col in zip((11, 12, 13, 14, 15), columns, strict=True):
        raw[:, field_no] = col
    generator = f"hpcgym eurora generator: {n} jobs, seed {seed}, load {load:g}"
    if p != EuroraParams():
        generator += " (custom parameters)"
    header = {"Generator": generator, "Machine": m.name, "MaxProcs": str(procs)}
    report = LoadReport(
        path=f"eurora(n_jobs={n}, seed={seed}, load={load:g})",
        job_lines=n,
        jobs_kept=n,
        dropped={},
        default_estimates=0,
        procs=procs,
        procs_source=f"machine {m.name!r}",
        load_factor=load,
        notes=("synthetic jobs: job classes of 001 and 002, other shares assumed (hpcgym.workloads.eurora)",),
    )
    return Workload(
        name="eurora-synthetic",
        procs=procs,
        job_id=job_id,
        submit=submit,
        runtime=runtime,
        procs_req=size_req,
        estimate=estimate,
        user=user_codes,
        group=group_codes,
        executable=name_codes,
        queue=queue_codes,
        partition=partition,
        status=status,
        requested_memory=np.full(n, -1.0),
        log_wait=np.full(n, -1.0),
        raw=raw,
        header=header,
        report=report,
        chunks=job_chunks,
        per_chunk=per_chunk,
        resources=RESOURCES,
        machine=m,
        names=names,
    )


# ------------------------------------------------------------------ measuring
def job_class(workload: Workload, params: EuroraParams | None = None) -> np.ndarray:
    """Each job's class (index into :data:`CLASS_NAMES`) by its run time."""
    p = params if params is not None else EuroraParams()
    edges = np.array([hi for _, hi in p.class_bounds_s[:-1]], dtype=np.float64)
    return np.searchsorted(edges, np.asarray(workload.runtime), side="left")  # type: ignore[no-any-return]


def shares(workload: Workload) -> dict[str, float]:
    """The published figures measured on a workload: shares of jobs (fractions), and more.

    Keys: ``short``, ``medium`` (1-12 h) and ``long`` (> 12 h) as in 001; ``medium_1_5h``
    and ``over_5h`` as in 002; ``queue:<name>`` for each queue; ``one_node`` (one
    chunk), ``one_core`` (one chunk of one core), ``gpu`` and ``mic`` (asking for any);
    ``cpu_time:short|medium|long`` (shares of cores x run time, 001); ``max_runtime_s``;
    ``median_interarrival_s`` and ``mean_interarrival_s``.
    """
    w = workload
    rt = np.asarray(w.runtime, dtype=np.float64)
    n = len(rt)
    out: dict[str, float] = {
        "short": float((rt < 3600).mean()),
        "medium": float(((rt >= 3600) & (rt <= 43200)).mean()),
        "long": float((rt > 43200).mean()),
        "medium_1_5h": float(((rt >= 3600) & (rt < 18000)).mean()),
        "over_5h": float((rt >= 18000).mean()),
    }
    queue_names = w.names.get("queue")
    if queue_names is not None:
        for code, q in enumerate(queue_names):
            out[f"queue:{q}"] = float((w.queue == code).mean())
    per = np.asarray(w.per_chunk)
    col = {r: per[:, w.resources.index(r)] for r in RESOURCES if r in w.resources}
    chunks = np.asarray(w.chunks)
    zero = np.zeros(n, dtype=np.int64)
    out["one_node"] = float((chunks == 1).mean())
    out["one_core"] = float(((chunks == 1) & (col.get("cores", zero) == 1)).mean())
    out["gpu"] = float((col.get("gpus", zero) > 0).mean())
    out["mic"] = float((col.get("mics", zero) > 0).mean())
    cpu = rt * chunks * col.get("cores", zero)
    total = cpu.sum() or 1.0
    out["cpu_time:short"] = float(cpu[rt < 3600].sum() / total)
    out["cpu_time:medium"] = float(cpu[(rt >= 3600) & (rt <= 43200)].sum() / total)
    out["cpu_time:long"] = float(cpu[rt > 43200].sum() / total)
    out["max_runtime_s"] = float(rt.max())
    gaps = np.diff(np.asarray(w.submit, dtype=np.float64))
    out["median_interarrival_s"] = float(np.median(gaps)) if len(gaps) else 0.0
    out["mean_interarrival_s"] = float(gaps.mean()) if len(gaps) else 0.0
    return out


__all__: Sequence[str] = (
    "CLASS_NAMES",
    "EuroraParams",
    "eurora",
    "job_class",
    "shares",
)
