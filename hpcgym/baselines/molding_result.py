"""What a run of 003's resource manager gives: :class:`MoldingResult`, the paper's rows and the comparison.

:func:`over_seeds` pairs the managed and the baseline mean responses over blocks of
consecutive jobs (a BCa interval), over one run or runs that differ only in the seed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpcgym.baselines.molding_config import MoldingConfig
from hpcgym.common.errors import InvalidConfigError
from hpcgym.sim import Schedule

__all__ = ["PAPER", "MoldingResult", "over_seeds"]

PAPER = {
    "molding": {  # 003 Table VIII, minutes: baseline wait, exec, response; molding wait, exec, response
        "CEA-Curie": (15, 95, 110, 8, 64, 72),
        "HPC2N": (72, 289, 361, 50, 210, 260),
        "SDSC-Par": (102, 79, 181, 76, 51, 127),
        "SDSC-SP2": (198, 133, 331, 147, 98, 245),
    },
    "delay": {  # 003 Table IX
        "CEA-Curie": (11, 84, 95, 5, 50, 55),
        "HPC2N": (68, 265, 333, 47, 180, 227),
        "SDSC-Par": (114, 89, 203, 71, 42, 113),
        "SDSC-SP2": (200, 142, 342, 153, 79, 232),
    },
}
"""003 Tables VIII (molding) and IX (delayed submission) by trace-name prefix, minutes."""


@dataclass
class MoldingResult:
    """The managed run and the baseline on the same jobs.

    Attributes:
        trace, mode: names.
        config: the manager's config.
        jobs: the managed jobs (indices into the simulated window).
        baseline_wait, baseline_runtime: plain EASY, s (wait from the submission).
        wait, runtime: the managed run, s (wait from the submission to the manager,
            any hold included).
        original_size, size: the logged and the submitted request sizes.
        hold: seconds each managed job was held (0 unless delayed).
        molded, expanded, shrunk, delayed, no_candidate: counts over the managed jobs.
        jobs_dropped: jobs the trace reader dropped (load report), never simulated.
        simulated: jobs simulated (history + managed).
        decisions, decide_seconds: the manager's decisions and the time spent on them.
        sim_seconds: wall-clock seconds of the managed and baseline simulations.
        utilization: busy processor-seconds over capacity x makespan, managed and baseline
            (the whole simulated window, history included).
        cpu_hours: processor-hours (size x run time) of the managed jobs, managed and
            baseline: what the run time model leaves of their work.
        period_utilization: 003's utilization (III-A's load, Fig. 6: CPU-hours used for
            executions over CPU-hours available) from the first managed job's submission
            to the run's last end, managed and baseline.
        schedule: the managed run's schedule (its workload holds the submitted jobs:
            molded sizes, run times and estimates, held jobs' submit times).
    """

    trace: str
    mode: str
    config: MoldingConfig
    jobs: np.ndarray
    baseline_wait: np.ndarray
    baseline_runtime: np.ndarray
    wait: np.ndarray
    runtime: np.ndarray
    original_size: np.ndarray
    size: np.ndarray
    hold: np.ndarray
    molded: int
    expanded: int
    shrunk: int
    delayed: int
    no_candidate: int
    jobs_dropped: int
    simulated: int
    decisions: int
    decide_seconds: float
    sim_seconds: dict[str, float]
    utilization: dict[str, float]
    cpu_hours: dict[str, float] = field(default_factory=dict)
    period_utilization: dict[str, float] = field(default_factory=dict)
    schedule: Schedule | None = field(default=None, repr=False)

    def block_means(self) -> tuple[np.ndarray, np.ndarray]:
        """``(managed, baseline)`` mean response (min) of each block of ``config.block`` consecutive jobs."""
        blocks = max(1, len(self.jobs) // self.config.block)
        man = [b.mean() / 60 for b in np.array_split(self.wait + self.runtime, blocks)]
        base = [b.mean() / 60 for b in np.array_split(self.baseline_wait + self.baseline_runtime, blocks)]
        return np.array(man), np.array(base)

    def comparison(self) -> dict[str, Any]:
        """Managed minus baseline mean response (min), paired over blocks of consecutive jobs, 95 % CI."""
        return over_seeds([self])

    def paper(self) -> tuple[int, ...] | None:
        """003's Table VIII or IX row for this trace, or None."""
        for prefix, row in PAPER[self.mode].items():
            if self.trace.lower().startswith(prefix.lower()):
                return row
        return None

    def runtime_model(self) -> str:
        """The molded run times' model as shown: ``003`` or ``amdahl f=F``."""
        if self.config.runtime_model == "amdahl":
            return f"amdahl f={self.config.serial_fraction:g}"
        return self.config.runtime_model

    def summary(self) -> dict[str, Any]:
        """Means in minutes, the counts and the paper's row."""
        bw, br = self.baseline_wait.mean() / 60, self.baseline_runtime.mean() / 60
        mw, mr = self.wait.mean() / 60, self.runtime.mean() / 60
        row: dict[str, Any] = {
            "trace": self.trace,
            "mode": self.mode,
            "jobs": len(self.jobs),
            "first_job": int(self.jobs[0]) + 1 if len(self.jobs) else None,
            "baseline_wait_min": bw,
            "baseline_exec_min": br,
            "baseline_response_min": bw + br,
            "wait_min": mw,
            "exec_min": mr,
            "response_min": mw + mr,
            "reduction_pct": 100.0 * (1.0 - (mw + mr) / (bw + br)) if bw + br > 0 else float("nan"),
            "molded": self.molded,
            "expanded": self.expanded,
            "shrunk": self.shrunk,
            "delayed": self.delayed,
            "no_candidate": self.no_candidate,
            "jobs_dropped": self.jobs_dropped,
            "mean_hold_min": float(self.hold.mean() / 60) if len(self.hold) else 0.0,
            "utilization": self.utilization,
            "runtime_model": self.runtime_model(),
            "baseline_cpu_hours": self.cpu_hours.get("baseline", float("nan")),
            "cpu_hours": self.cpu_hours.get("managed", float("nan")),
            "baseline_period_utilization": self.period_utilization.get("baseline", float("nan")),
            "period_utilization": self.period_utilization.get("managed", float("nan")),
            "decisions_per_second": self.decisions / self.decide_seconds if self.decide_seconds > 0 else None,
        }
        p = self.paper()
        if p is not None:
            row["paper_baseline_response_min"], row["paper_response_min"] = p[2], p[5]
        return row

    def to_dict(self) -> dict[str, Any]:
        """Everything JSON-ready: the summary, the config, the timings and the paired comparison."""
        out = self.summary()
        out["config"] = dataclasses.asdict(self.config)
        out["simulated"] = self.simulated
        out["decisions"] = self.decisions
        out["decide_seconds"] = self.decide_seconds
        out["sim_seconds"] = self.sim_seconds
        try:
            out["comparison"] = self.comparison()
        except ImportError:
            out["comparison"] = None
        return out

    def table(self) -> dict[str, np.ndarray]:
        """One row per managed job, for CSV."""
        return {
            "job": self.jobs + 1,
            "original_size": self.original_size,
            "size": self.size,
            "hold_s": self.hold,
            "baseline_wait_s": self.baseline_wait,
            "baseline_runtime_s": self.baseline_runtime,
            "wait_s": self.wait,
            "runtime_s": self.runtime,
        }


def over_seeds(results: Sequence[MoldingResult]) -> dict[str, Any]:
    """Managed minus baseline mean response (min) over runs that differ only in the seed, 95 % CI.

    The roulette wheel's draws move a run's mean response a lot (a few long draws at a
    larger size can fill the machine for days), so one seed is one sample of the
    manager's effect. Each block's managed mean response is averaged over the runs and
    paired with the block's baseline (the same in every run); the interval is the BCa
    bootstrap over the blocks (:func:`hpcgym.sim.metrics.paired_difference_ci`). With one
    run it is that run's :meth:`MoldingResult.comparison`.

    Raises:
        InvalidConfigError: no run, or runs of different jobs, modes or configs other than the seed.
    """
    from hpcgym.common.stats import paired_difference_ci

    if not results:
        raise InvalidConfigError("over_seeds: no run given")
    first = results[0]
    for r in results[1:]:
        if (
            r.trace != first.trace
            or not np.array_equal(r.jobs, first.jobs)
            or dataclasses.replace(r.config, seed=first.config.seed) != first.config
        ):
            raise InvalidConfigError(
                f"over_seeds: the runs must differ only in the seed; {r.trace} {r.mode} (seed "
                f"{r.config.seed}) is not {first.trace} {first.mode} with another seed"
            )
    per_run = [r.block_means() for r in results]
    man = np.mean([m for m, _ in per_run], axis=0)
    mean, low, high = paired_difference_ci(man, per_run[0][1], seed=first.config.seed)
    return {
        "seeds": [r.config.seed for r in results],
        "blocks": len(man),
        "response_difference_min": mean,
        "ci_low": low,
        "ci_high": high,
    }
