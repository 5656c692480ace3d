"""What 003's resource manager does (:class:`MoldingConfig`): its mode, jobs, seed and predictors.

The manager itself is :mod:`hpcgym.baselines.molding`, whose module docstring says what
the paper leaves open and what hpcgym chooses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import APQConfig, IBLConfig, QBETSConfig, RangeSetConfig

__all__ = ["DEFAULT_JOBS", "MODES", "RUNTIME_MODELS", "WAIT_PREDICTORS", "MoldingConfig"]

MODES = ("molding", "delay")
WAIT_PREDICTORS = ("apq", "ibl", "qbets")
RUNTIME_MODELS = ("003", "amdahl")
"""How a molded job's run time is modelled: 003 V-C's roulette wheel over the user's earlier
jobs of the new size, or the job's own run time scaled by Amdahl's law (work conserved
when the serial fraction is 0); :mod:`hpcgym.baselines.molding` says more."""
DEFAULT_JOBS = {"molding": 20_000, "delay": 6_000}
"""Managed jobs by mode (003 V: molding on 20,000 jobs, delayed submission on 6,000)."""


@dataclass(frozen=True)
class MoldingConfig:
    """What the resource manager does (003 IV, V-C, V-D; defaults are the paper's).

    Attributes:
        mode: ``"molding"`` (IV-A) or ``"delay"`` (IV-B: molding plus the hold queue).
        history: jobs at the trace's start run unmanaged, as the predictors' history.
        jobs: managed jobs after them; None: 20,000 for molding, 6,000 for delay.
        seed: seed of the roulette wheel drawing molded run times.
        wait_predictor: ``"apq"``, ``"ibl"`` or ``"qbets"`` (:mod:`hpcgym.predict.waitpred`).
        wait_config: that predictor's config (its defaults when None).
        rangeset: the rangeSet predictor's config.
        threshold: hold a job if its predicted response at the future time is below
            ``(1 - threshold)`` times the one now (delay).
        settle: the future time moves on to the next predicted end of a running job
            while it comes within this share of the time from now (delay).
        block: consecutive managed jobs per block of the paired confidence interval.
        score_own: a job is molded only if its own size can be scored too (False: the
            best of whichever sizes can be scored, the own size or not).
        runtime_model: ``"003"`` (the paper's rule: a molded run time drawn from the
            user's earlier jobs at the new size, and 003 V-C's estimate) or ``"amdahl"``
            (the job's own run time and estimate scaled by Amdahl's law,
            :func:`~hpcgym.baselines.molding_choice.amdahl_factor`).
        serial_fraction: Amdahl's serial fraction ``f`` in [0, 1] (``"amdahl"`` only): 0
            is linear speedup, every molded job keeps its processor-seconds exactly; with
            ``f > 0`` an expanded job costs more processor-seconds and a shrunk one fewer.
    """

    mode: str = "molding"
    history: int = 10_000
    jobs: int | None = None
    seed: int = 0
    wait_predictor: str = "apq"
    wait_config: APQConfig | IBLConfig | QBETSConfig | None = None
    rangeset: RangeSetConfig = field(default_factory=RangeSetConfig)
    threshold: float = 0.3
    settle: float = 0.05
    block: int = 1000
    score_own: bool = True
    runtime_model: str = "003"
    serial_fraction: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        for name, low in (("history", 0), ("seed", 0), ("block", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise InvalidConfigError(f"{name} must be a whole number >= {low}, got {v!r}")
        if self.jobs is not None and (
            isinstance(self.jobs, bool) or not isinstance(self.jobs, (int, np.integer)) or self.jobs < 1
        ):
            raise InvalidConfigError(f"jobs must be a whole number >= 1 (managed jobs), got {self.jobs!r}")
        if self.wait_predictor not in WAIT_PREDICTORS:
            raise InvalidConfigError(
                f"wait_predictor must be one of {', '.join(WAIT_PREDICTORS)}, got {self.wait_predictor!r}"
            )
        expected = {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}[self.wait_predictor]
        if self.wait_config is not None and not isinstance(self.wait_config, expected):
            raise InvalidConfigError(
                f"wait_config must be a {expected.__name__} for {self.wait_predictor}, "
                f"got {type(self.wait_config).__name__}"
            )
        if not isinstance(self.rangeset, RangeSetConfig):
            raise InvalidConfigError(f"rangeset must be a RangeSetConfig, got {type(self.rangeset).__name__}")
        if not isinstance(self.score_own, bool):
            raise InvalidConfigError(f"score_own must be True or False, got {self.score_own!r}")
        if self.runtime_model not in RUNTIME_MODELS:
            raise InvalidConfigError(
                f"runtime_model must be one of {', '.join(RUNTIME_MODELS)}, got {self.runtime_model!r}"
            )
        f = self.serial_fraction
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f <= 1.0:
            raise InvalidConfigError(f"serial_fraction must be a number in [0, 1], got {f!r}")
        if f != 0.0 and self.runtime_model != "amdahl":
            raise InvalidConfigError(
                f"serial_fraction={f!r} is Amdahl's; it needs runtime_model='amdahl' "
                f"(got {self.runtime_model!r})"
            )
        for name in ("threshold", "settle"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v < 1.0:
                raise InvalidConfigError(f"{name} must be a number in [0, 1), got {v!r}")

    @property
    def managed(self) -> int:
        """Managed jobs (the mode's default when ``jobs`` is None)."""
        return self.jobs if self.jobs is not None else DEFAULT_JOBS[self.mode]

    @property
    def wait(self) -> APQConfig | IBLConfig | QBETSConfig:
        """The queue-wait predictor's config."""
        if self.wait_config is not None:
            return self.wait_config
        return {"apq": APQConfig, "ibl": IBLConfig, "qbets": QBETSConfig}[self.wait_predictor]()
