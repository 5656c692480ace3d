"""Evaluation protocols: how the episodes of training and testing are drawn from a trace.

A :class:`Protocol` names the job range a study uses, the size of its training
windows, how its test windows are chosen, its metric and the heuristics it compares
(with and without backfilling). ``hpcgym evaluate --protocol NAME`` and
:func:`hpcgym.experiments.evaluate.evaluate` (``protocol=...``) run every policy on the protocol's
test windows. Two are registered (:data:`PROTOCOLS`):

``held-out`` (the default of ``hpcgym evaluate``)
    the trace split by time into train / validation / test (70 / 15 / 15 % of the
    jobs); as many non-overlapping 1,024-job windows as the test split holds, evenly
    spaced (:func:`evaluation_offsets`); training windows of 256 jobs from the train split.
    A held-out evaluation.

``rlscheduler``
    RLScheduler's protocol (Zhang et al., SC'20; the authors' ``compare-make-table.py``
    and ``make_table_script.py``): the first 10,000 jobs of the trace; training on
    256-job windows with a random start; 10 test windows of 1,024 jobs drawn with seed 1
    exactly as RLScheduler draws them (:func:`rlscheduler_offsets`); mean bounded
    slowdown; every heuristic of its table (FCFS, WFP3, UNICEP, SJF, F1) with and without
    backfilling. **Its test windows lie inside the range the agent trains on: it is not
    a held-out evaluation**, and its windows may overlap one another.

How RLScheduler draws its windows (what :func:`rlscheduler_offsets` reproduces):
``env.seed(1)`` seeds the environment with Gym's legacy seeding (``gym.utils.seeding``
before Gym 0.22: the seed's SHA-512 hash, first 8 bytes, as the 32-bit words of a
``numpy.random.RandomState`` seed, :func:`legacy_gym_random_state`); each of the 10
test iterations then draws its first job as ``randint(L, S - L - 1)`` with ``L`` =
1,024 jobs per window and ``S`` = 10,000 jobs, so the windows start between job 1,024
and job 8,974 and never reach past job 9,997. Training starts are drawn the same way
with ``L`` = 256: job 256 to 9,742, which :meth:`Protocol.train_range` gives as the
range ``[256, 9998)``.

Where hpcgym's reading of a trace differs from RLScheduler's, the windows hold other
jobs even though their indices are the same (see ``docs/EVALUATION.md``): RLScheduler
keeps cancelled jobs (run time -1) as 10-second jobs and drops zero-length ones;
hpcgym drops the former and keeps the latter, so on SDSC-SP2 RLScheduler's first
10,000 jobs are the trace's first 10,000 lines (1,057 of them cancelled jobs) and
hpcgym's are its first 11,088 lines. On HPC2N the first 10,000 jobs are the same.

>>> p = make_protocol("rlscheduler")
>>> p.test_offsets(54044)[1][:3], p.train_range(54044), p.held_out
([1981, 2756, 4299], (256, 9998), False)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.registry import Registry
from hpcgym.env import episodes
from hpcgym.workloads import READINGS, Workload

WINDOW_DRAWS = ("evenly", "rlscheduler")
"""How a protocol places its test windows: evenly spaced and never overlapping
(:func:`hpcgym.env.episodes.evaluation_windows`), or drawn at random as RLScheduler does
(:func:`rlscheduler_offsets`)."""


def legacy_gym_random_state(seed: int) -> np.random.RandomState:
    """The generator ``gym.utils.seeding.np_random(seed)`` returned before Gym 0.22.

    RLScheduler's environment is seeded this way (``env.seed(seed)``): the seed, taken
    modulo 2**64, is hashed with SHA-512; the hash's first 8 bytes, read as a
    little-endian integer, are split into 32-bit words (least significant first) that
    seed a :class:`numpy.random.RandomState`.

    Raises:
        InvalidConfigError: a negative seed.
    """
    if seed < 0:
        raise InvalidConfigError(f"seed: must be >= 0, got {seed}")
    digest = hashlib.sha512(str(seed % 2**64).encode("utf8")).digest()
    big = int.from_bytes(digest[:8], "little")
    words = []
    while big > 0:
        big, word = divmod(big, 2**32)
        words.append(word)
    return np.random.RandomState(words or [0])


def rlscheduler_offsets(seed: int, count: int, window_jobs: int, range_jobs: int) -> list[int]:
    """First jobs of the ``count`` test windows RLScheduler draws with ``seed``.

    Each is ``randint(window_jobs, range_jobs - window_jobs - 1)`` (upper bound
    excluded) from :func:`legacy_gym_random_state`, in order; so every window lies in
    ``[window_jobs, range_jobs - 1)``. The windows are independent draws and may overlap.

    Raises:
        InvalidConfigError: ``count`` below 1, or a range too short for such a window.

    >>> rlscheduler_offsets(1, 3, 1024, 10000)
    [1981, 2756, 4299]
    """
    if count < 1:
        raise InvalidConfigError(f"windows: the number of test windows must be >= 1, got {count}")
    if range_jobs - window_jobs - 1 <= window_jobs:
        raise InvalidConfigError(
            f"window_jobs: RLScheduler's draw needs more than {2 * window_jobs + 1} jobs for windows of "
            f"{window_jobs} jobs; the protocol's range has {range_jobs}"
        )
    rng = legacy_gym_random_state(seed)
    return [int(rng.randint(window_jobs, range_jobs - window_jobs - 1)) for _ in range(count)]


WINDOW_JOBS = 1024
"""Jobs per evaluation window by default, when the split holds :data:`MIN_WINDOWS` of them."""
MIN_WINDOWS = 20
"""Windows an evaluation takes by default at least: below 20 paired differences a 95 %
interval's coverage falls short (a BCa bootstrap over 7 covered 80-88 %, issue 24)."""
MIN_WINDOW_JOBS = 128
"""The shortest default window: a shorter split gets fewer than 20 windows (and says so)."""


def default_window_jobs(
    n_jobs: int,
    split: str = "test",
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15),
    windows: int | None = None,
) -> int:
    """Jobs per window when none are given: 1,024, or shorter so the split holds enough windows.

    Enough is ``windows`` when given, else :data:`MIN_WINDOWS` (20): the window is
    ``min(1024, split jobs // enough)``, never under :data:`MIN_WINDOW_JOBS` (128) jobs
    (nor over the split). SDSC-SP2's test split (8,107 jobs) gets 20 windows of 405 jobs,
    HPC2N's (30,431) 29 of 1,024.

    >>> default_window_jobs(54044), default_window_jobs(202871), default_window_jobs(54044, windows=3)
    (405, 1024, 1024)
    """
    lo, hi = episodes.split_range(n_jobs, split, split_fractions)
    enough = MIN_WINDOWS if windows is None else max(1, int(windows))
    return min(hi - lo, max(MIN_WINDOW_JOBS, min(WINDOW_JOBS, (hi - lo) // enough)))


def evaluation_offsets(
    n_jobs: int,
    window_jobs: int,
    windows: int | None = None,
    split: str = "test",
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15),
) -> tuple[tuple[int, int], list[int]]:
    """The split's job range and the first job of each evaluation window (the ``held-out`` protocol's).

    ``windows=None`` takes as many non-overlapping windows as the split holds.

    Raises:
        InvalidConfigError: the window does not fit the split, or ``windows`` < 1.
    """
    job_range = episodes.split_range(n_jobs, split, split_fractions)
    lo, hi = job_range
    if windows is None:
        if window_jobs > hi - lo:
            raise InvalidConfigError(
                f"window_jobs: {window_jobs} jobs do not fit the {split!r} split [{lo}, {hi}) of "
                f"{hi - lo} jobs; give --window-jobs {hi - lo} or less"
            )
        windows = (hi - lo) // window_jobs
    return job_range, episodes.evaluation_windows(job_range, window_jobs, windows)


@dataclass(frozen=True)
class Protocol:
    """How a study draws its training and test episodes from a trace.

    Args:
        name: the protocol's name (``--protocol``).
        description: one line for listings.
        range_jobs: use only the trace's first ``range_jobs`` jobs (hpcgym's job
            indices, after the reader's drops); None: the whole trace, split by time.
        split_fractions: train / validation / test fractions when ``range_jobs`` is None.
        train_window_jobs: jobs per training episode.
        test_window_jobs: jobs per test window.
        test_windows: test windows; None: as many non-overlapping ones as the test split holds.
        window_draw: one of :data:`WINDOW_DRAWS`.
        seed: seed of the test-window draw (``rlscheduler``).
        metric: the figure the study reports (``bsld``: mean bounded slowdown, tau 10 s).
        policies: the heuristics it compares, without and with backfilling.
        held_out: whether the test windows are kept out of training.
        reading: how the study read an SWF trace's lines into jobs
            (:data:`hpcgym.workloads.READINGS`); a trace file evaluated under the
            protocol is read this way.
        published: published figures, per trace key (:func:`trace_key`) and column
            (``"<heuristic> <no-bf|bf>"``).

    Raises:
        InvalidConfigError: a field out of range.
    """

    name: str
    description: str
    range_jobs: int | None = None
    split_fractions: tuple[float, float, float] = (0.7, 0.15, 0.15)
    train_window_jobs: int = 256
    test_window_jobs: int = 1024
    test_windows: int | None = None
    window_draw: str = "evenly"
    seed: int = 0
    metric: str = "bsld"
    policies: tuple[str, ...] = ()
    held_out: bool = True
    reading: str = "hpcgym"
    published: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.window_draw not in WINDOW_DRAWS:
            raise InvalidConfigError(
                f"protocol {self.name!r}: window_draw must be one of {', '.join(WINDOW_DRAWS)}, "
                f"got {self.window_draw!r}"
            )
        for key in ("train_window_jobs", "test_window_jobs"):
            if getattr(self, key) < 1:
                raise InvalidConfigError(
                    f"protocol {self.name!r}: {key} must be >= 1, got {getattr(self, key)}"
                )
        if self.range_jobs is not None and self.range_jobs < self.test_window_jobs:
            raise InvalidConfigError(
                f"protocol {self.name!r}: range_jobs {self.range_jobs} is smaller than a test window"
            )
        if self.test_windows is not None and self.test_windows < 1:
            raise InvalidConfigError(
                f"protocol {self.name!r}: test_windows must be >= 1, got {self.test_windows}"
            )
        if self.window_draw == "rlscheduler" and self.range_jobs is None:
            raise InvalidConfigError(f"protocol {self.name!r}: the rlscheduler draw needs range_jobs")
        if self.reading not in READINGS:
            raise InvalidConfigError(
                f"protocol {self.name!r}: reading must be one of {', '.join(READINGS)}, got {self.reading!r}"
            )
        if self.metric != "bsld":
            raise InvalidConfigError(f"protocol {self.name!r}: metric must be 'bsld', got {self.metric!r}")

    def _range(self, n_jobs: int) -> int:
        assert self.range_jobs is not None
        return min(self.range_jobs, n_jobs)

    def test_offsets(
        self, n_jobs: int, window_jobs: int | None = None, windows: int | None = None
    ) -> tuple[tuple[int, int], list[int]]:
        """The job range agents are played in and the first job of each test window.

        Args:
            n_jobs: jobs of the trace.
            window_jobs: override the protocol's jobs per test window.
            windows: override the protocol's number of test windows.

        Raises:
            InvalidConfigError: the windows do not fit the trace.
        """
        wj = self.test_window_jobs if window_jobs is None else int(window_jobs)
        count = self.test_windows if windows is None else int(windows)
        if self.range_jobs is None:
            return evaluation_offsets(n_jobs, wj, count, "test", self.split_fractions)
        stop = self._range(n_jobs)
        if self.window_draw == "rlscheduler":
            return (0, stop), rlscheduler_offsets(self.seed, count or 1, wj, stop)
        return (0, stop), episodes.evaluation_windows((0, stop), wj, count or stop // wj)

    def train_range(self, n_jobs: int) -> tuple[int, int]:
        """The job range training episodes (``train_window_jobs`` jobs) are drawn from.

        ``held-out``: the train split. ``rlscheduler``: ``[L, S - 2)`` with ``L`` the
        training window and ``S`` the range, so a uniform start falls in RLScheduler's
        ``randint(L, S - L - 1)``.

        Raises:
            InvalidConfigError: the range does not hold a training window.
        """
        if self.range_jobs is None:
            return episodes.split_range(n_jobs, "train", self.split_fractions)
        stop = self._range(n_jobs)
        lo, hi = self.train_window_jobs, stop - 2
        if hi - lo < self.train_window_jobs:
            raise InvalidConfigError(
                f"protocol {self.name!r}: {stop} jobs do not hold training windows of "
                f"{self.train_window_jobs}"
            )
        return lo, hi

    def env_kwargs(self, n_jobs: int) -> dict[str, Any]:
        """:class:`~hpcgym.env.DispatchEnv` arguments of the protocol's training episodes."""
        return {"window_jobs": self.train_window_jobs, "job_range": self.train_range(n_jobs)}


# ----------------------------------------------------------------------------- RLScheduler's figures
RLSCHEDULER_HEURISTICS = {
    "FCFS": ("fcfs", "easy"),
    "WFP3": ("wfp3", "wfp3-bf"),
    "UNI": ("unicep", "unicep-bf"),
    "SJF": ("sjf-est", "sjf"),
    "F1": ("f1", "f1-bf"),
}
"""RLScheduler's table columns and the hpcgym presets that play them, without and with backfilling."""

RLSCHEDULER_RULES = {
    "FCFS": ("rls-fcfs", "rls-fcfs-bf"),
    "WFP3": ("rls-wfp3", "rls-wfp3-bf"),
    "UNI": ("rls-unicep", "rls-unicep-bf"),
    "SJF": ("rls-sjf", "rls-sjf-bf"),
    "F1": ("rls-f1", "rls-f1-bf"),
}
"""The same columns under RLScheduler's own simulator rules (:mod:`hpcgym.baselines.rlscheduler`)."""

RLSCHEDULER_PUBLISHED: dict[str, dict[str, float]] = {
    "SDSC-SP2": {
        "FCFS no-bf": 1727.54, "WFP3 no-bf": 3000.88, "UNI no-bf": 1848.45, "SJF no-bf": 2680.55,
        "F1 no-bf": 1232.06, "RL no-bf": 466.44,
        "FCFS bf": 1595.12, "WFP3 bf": 1083.12, "UNI bf": 548.01, "SJF bf": 2167.84,
        "F1 bf": 1098.22, "RL bf": 397.82,
    },
    "HPC2N": {
        "FCFS no-bf": 297.18, "WFP3 no-bf": 426.99, "UNI no-bf": 609.77, "SJF no-bf": 157.71,
        "F1 no-bf": 118.01, "RL no-bf": 117.01,
        "FCFS bf": 127.38, "WFP3 bf": 97.39, "UNI bf": 175.12, "SJF bf": 122.04,
        "F1 bf": 71.95, "RL bf": 86.14,
    },
}  # fmt: skip
"""Mean bounded slowdown published by RLScheduler (SC'20, the bsld table of its
evaluation, as the authors' repository README reprints it: "Results of Scheduling
Towards average bounded slowdown"), per trace and ``"<column> <no-bf|bf>"``. The
paper's Lublin-1 and Lublin-2 rows are not included: they used the whole synthetic
trace, not its first 10,000 jobs."""


def trace_key(name: str) -> str | None:
    """The key of :data:`RLSCHEDULER_PUBLISHED` a trace name belongs to, or None.

    >>> trace_key("SDSC-SP2-1998-4.2-cln-first10k"), trace_key("HPC2N-2002-2.2-cln"), trace_key("CTC")
    ('SDSC-SP2', 'HPC2N', None)
    """
    for key in RLSCHEDULER_PUBLISHED:
        if name.upper().startswith(key):
            return key
    return None


PROTOCOLS: Registry[Protocol] = Registry("protocol")
"""Registered protocols by name (``--protocol``)."""

HELD_OUT = Protocol(
    name="held-out",
    description="test split by time (last 15 %), as many non-overlapping 1,024-job windows as it holds",
)
RLSCHEDULER = Protocol(
    name="rlscheduler",
    description="RLScheduler (SC'20): first 10,000 jobs, 10 random 1,024-job windows (seed 1), "
    "256-job training windows; tests on the training range",
    range_jobs=10_000,
    train_window_jobs=256,
    test_window_jobs=1024,
    test_windows=10,
    window_draw="rlscheduler",
    seed=1,
    policies=tuple(
        p
        for table in (RLSCHEDULER_HEURISTICS, RLSCHEDULER_RULES)
        for pair in zip(*table.values(), strict=True)
        for p in pair
    ),
    held_out=False,
    reading="rlscheduler",
    published=RLSCHEDULER_PUBLISHED,
)


def _constant(protocol: Protocol) -> Callable[[], Protocol]:
    return lambda: protocol


for _p in (HELD_OUT, RLSCHEDULER):
    PROTOCOLS.register(_p.name, _constant(_p), description=_p.description)


def reading_of(w: Workload) -> str:
    """How ``w`` was read (:data:`hpcgym.workloads.READINGS`), from its load report."""
    notes = w.report.notes if w.report is not None else ()
    return "rlscheduler" if any(n.startswith("RLScheduler's reading") for n in notes) else "hpcgym"


def make_protocol(protocol: str | Protocol) -> Protocol:
    """The protocol ``protocol`` names (or ``protocol`` itself).

    Raises:
        UnknownNameError: an unknown name; the message lists the known protocols.
    """
    if isinstance(protocol, Protocol):
        return protocol
    return PROTOCOLS.make(protocol)


def published_comparison(
    protocol: Protocol, trace_name: str, summary: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Rows of measured mean bsld beside the protocol's published figures for this trace.

    One row per column of RLScheduler's table (and RL); the measured figures are the
    ``mean_bsld`` in ``summary`` of hpcgym's preset (``measured_*``) and of the preset
    under RLScheduler's rules (``rules_*``), None when it was not run or for RL, which
    hpcgym cannot name. Empty when the protocol publishes nothing for the trace.
    """
    key = trace_key(trace_name)
    pub = protocol.published.get(key, {}) if key is not None else {}
    if not pub:
        return []
    measured = {r["policy"]: r["mean_bsld"] for r in summary}
    rows = []
    for column, (no_bf, bf) in (*RLSCHEDULER_HEURISTICS.items(), ("RL", ("", ""))):
        rules_no_bf, rules_bf = RLSCHEDULER_RULES.get(column, ("", ""))
        rows.append(
            {
                "heuristic": column,
                "presets": f"{no_bf} / {bf}" if no_bf else "(agent)",
                "measured_no_bf": measured.get(no_bf),
                "rules_no_bf": measured.get(rules_no_bf),
                "published_no_bf": pub.get(f"{column} no-bf"),
                "measured_bf": measured.get(bf),
                "rules_bf": measured.get(rules_bf),
                "published_bf": pub.get(f"{column} bf"),
            }
        )
    return rows


PUBLISHED_COLUMNS = [
    ("heuristic", "RLScheduler column", ""),
    ("presets", "hpcgym presets", ""),
    ("measured_no_bf", "no backfill: hpcgym", ".2f"),
    ("rules_no_bf", "rls-*", ".2f"),
    ("published_no_bf", "published", ".2f"),
    ("measured_bf", "backfill: hpcgym", ".2f"),
    ("rules_bf", "rls-*-bf", ".2f"),
    ("published_bf", "published", ".2f"),
]
"""``(key, header, format)`` of :func:`published_comparison`'s printed table."""

__all__ = [
    "HELD_OUT",
    "MIN_WINDOWS",
    "MIN_WINDOW_JOBS",
    "PROTOCOLS",
    "PUBLISHED_COLUMNS",
    "RLSCHEDULER",
    "RLSCHEDULER_HEURISTICS",
    "RLSCHEDULER_PUBLISHED",
    "RLSCHEDULER_RULES",
    "WINDOW_DRAWS",
    "WINDOW_JOBS",
    "Protocol",
    "default_window_jobs",
    "evaluation_offsets",
    "legacy_gym_random_state",
    "make_protocol",
    "published_comparison",
    "rlscheduler_offsets",
    "trace_key",
]
