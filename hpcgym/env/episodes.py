"""Episodes: which jobs of a trace an episode replays, how it starts, and its fallback.

The Gymnasium environment (:class:`hpcgym.env.DispatchEnv`) and the evaluators (the
training scripts of :mod:`hpcgym.agents`) share these rules, so an agent is trained
and evaluated on the same splits and windows the environment samples from:

* :func:`split_range` -- the chronological train / validation / test split of a trace;
* :func:`sample_offset` -- a random window inside a job range (the env's generator);
* :func:`evaluation_windows` -- evenly spaced, non-overlapping windows inside a range;
* :class:`WarmStart` -- the running and waiting jobs a full replay had when a window's
  first job arrived;
* :func:`episode_workload` -- the episode's jobs as a workload;
* :func:`fallback_job` -- the FCFS fallback when nothing else can happen;
* :func:`as_action` -- an action as the integer the environment reads.

Nothing here imports gymnasium: the module sits beside the engine.

>>> split_range(1000, "test", (0.7, 0.15, 0.15))
(850, 1000)
>>> evaluation_windows((850, 1000), window_jobs=50, count=3)
[850, 900, 950]
"""

from __future__ import annotations

import functools
import operator
import os
from dataclasses import dataclass

import numpy as np

from hpcgym.baselines import make_policy, preset_predictor, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import Machine, make_machine
from hpcgym.predict import Predictor, make_predictor
from hpcgym.sim import SystemView
from hpcgym.workloads import Workload, default_trace_path, fit_workload, read_swf

SPLITS = ("train", "validation", "test", "all")
"""Accepted split names; ``all`` is the whole trace."""


@functools.lru_cache(maxsize=8)
def _read_trace(
    path: str, procs: int | None, machine: str | Machine | None, reading: str = "hpcgym"
) -> Workload:
    # Workload columns are read-only, so envs of one process can share a trace.
    from hpcgym.workloads import is_job_table, read_jobs

    machine = resolve_machine(machine)
    if is_job_table(path):
        if reading != "hpcgym":
            raise InvalidConfigError(f"reading: {reading!r} applies to SWF traces, not the job table {path}")
        return read_jobs(path, machine, procs=procs)
    w = read_swf(path, procs=procs, reading=reading)
    return w if machine is None else fit_workload(w, machine)


def resolve_machine(machine: str | os.PathLike[str] | Machine | None) -> Machine | None:
    """The machine ``machine`` names (a preset, a file, or as given); None stays None.

    Raises:
        UnknownNameError: neither a preset name nor an existing file.
        InvalidConfigError: a machine file that does not exist or is malformed.
    """
    if machine is None:
        return None
    try:
        return make_machine(machine)
    except FileNotFoundError as err:
        raise InvalidConfigError(f"machine: {err}") from err


def load_trace(
    trace: Workload | str | os.PathLike[str] | None,
    procs: int | None = None,
    load_factor: float = 1.0,
    machine: str | os.PathLike[str] | Machine | None = None,
    reading: str = "hpcgym",
) -> Workload:
    """The workload ``trace`` names (None: the bundled trace), for ``machine``, load-scaled.

    Args:
        trace: an SWF file, a job table (``.csv``, ``.csv.gz``, ``.parquet``), a
            loaded workload, or None for the bundled SDSC-SP2 slice.
        procs: machine size in processors (SWF files, job tables without a machine,
            or a workload to resize); not together with ``machine``.
        load_factor: multiply the offered load.
        machine: a preset name, machine file or :class:`~hpcgym.machine.Machine`; jobs
            it can never run are dropped and counted
            (:func:`~hpcgym.workloads.fit_workload`). None: the workload's own machine
            (a job table's ``Machine`` header), else one node of ``procs`` processors.
        reading: how an SWF file's lines become jobs (:data:`hpcgym.workloads.READINGS`);
            a loaded workload is taken as it is.

    Raises:
        InvalidConfigError: the trace has no jobs, or both ``procs`` and ``machine``.
    """
    if procs is not None and machine is not None:
        raise InvalidConfigError(f"procs: {procs} processors and machine {machine!r}: give one")
    if isinstance(machine, os.PathLike):
        machine = os.fspath(machine)
    if isinstance(trace, Workload):
        w = trace if procs is None else trace.with_procs(int(procs))
        m = resolve_machine(machine)
        if m is not None and w.machine is not m:
            w = fit_workload(w, m)
    else:
        path = str(default_trace_path()) if trace is None else os.fspath(trace)
        w = _read_trace(path, None if procs is None else int(procs), machine, reading)
    if len(w) == 0:
        raise InvalidConfigError("trace: the trace has no jobs")
    return w.scale_load(load_factor) if load_factor != 1.0 else w


def build_predictor(predictor: str | None = None, predictor_of: str | None = None) -> Predictor:
    """The predictor an episode plans with: a preset's (through ``preset_predictor``) or by name."""
    if predictor_of is not None:
        return preset_predictor(predictor_of, predictor)
    return make_predictor(predictor if predictor is not None else "walltime")


def split_range(
    n_jobs: int,
    split: str,
    fractions: tuple[float, float, float],
    job_range: tuple[int, int] | None = None,
) -> tuple[int, int]:
    """The ``(first, stop)`` job indices of a chronological split of ``n_jobs`` jobs.

    The train, validation and test parts follow each other in that order, sized by
    ``fractions`` (rounded to whole jobs); ``"all"`` is every job. An explicit
    ``job_range`` overrides the split.

    Raises:
        InvalidConfigError: an unknown split, a ``job_range`` past the trace, or an
            empty split.
    """
    if job_range is not None:
        lo, hi = job_range
        if hi > n_jobs:
            raise InvalidConfigError(f"job_range: stop {hi} is past the last of the trace's {n_jobs} jobs")
        return int(lo), int(hi)
    if split not in SPLITS:
        raise InvalidConfigError(f"split: must be one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    if split == "all":
        return 0, n_jobs
    f_train, f_val, _ = fractions
    b1, b2 = round(n_jobs * f_train), round(n_jobs * (f_train + f_val))
    lo, hi = {"train": (0, b1), "validation": (b1, b2), "test": (b2, n_jobs)}[split]
    if hi <= lo:
        raise InvalidConfigError(f"split_fractions: the {split!r} split of {n_jobs} jobs is empty")
    return lo, hi


def _check_window(job_range: tuple[int, int], window_jobs: int) -> tuple[int, int]:
    lo, hi = job_range
    if not 1 <= window_jobs <= hi - lo:
        raise InvalidConfigError(
            f"window_jobs: {window_jobs} jobs do not fit the job range [{lo}, {hi}) of {hi - lo} jobs"
        )
    return lo, hi


def sample_offset(rng: np.random.Generator, job_range: tuple[int, int], window_jobs: int) -> int:
    """A window's first job, drawn uniformly so the whole window lies inside ``job_range``."""
    lo, hi = _check_window(job_range, window_jobs)
    return int(rng.integers(lo, hi - window_jobs + 1))


def evaluation_windows(job_range: tuple[int, int], window_jobs: int, count: int) -> list[int]:
    """First jobs of ``count`` evenly spaced, non-overlapping windows inside ``job_range``.

    The first window starts at the range's first job and the last ends at its stop
    (when more than one fits). At most ``(stop - first) // window_jobs`` windows fit
    without overlapping; a larger ``count`` gives that many. Pass each offset as
    ``env.reset(options={"offset": offset})``.

    Raises:
        InvalidConfigError: ``count`` below 1, or the window does not fit the range.

    >>> evaluation_windows((0, 100), window_jobs=30, count=5)
    [0, 35, 70]
    """
    if count < 1:
        raise InvalidConfigError(f"count: the number of evaluation windows must be >= 1, got {count}")
    lo, hi = _check_window(job_range, window_jobs)
    count = min(int(count), (hi - lo) // window_jobs)
    if count == 1:
        return [lo]
    span = hi - window_jobs - lo
    # integer floor division: consecutive offsets differ by >= span // (count - 1) >= window_jobs
    return [lo + i * span // (count - 1) for i in range(count)]


@dataclass
class WarmStart:
    """The state a full replay of ``trace`` by the preset ``policy`` had at each window.

    The replay (start and end of every trace job) is computed once, at the first
    :meth:`jobs` call of a window that does not start at job 0.

    Args:
        trace: the whole trace.
        policy: the baseline preset of the replay.
        kill_at_estimate: end jobs at their estimate in the replay.
    """

    trace: Workload
    policy: str = "easy"
    kill_at_estimate: bool = False

    def __post_init__(self) -> None:
        self.policy = resolve_policy_name(self.policy)
        self._replay: tuple[np.ndarray, np.ndarray] | None = None

    def replay(self) -> tuple[np.ndarray, np.ndarray]:
        """Start and end times of every trace job in the full replay (cached)."""
        if self._replay is None:
            from hpcgym.sim import Simulator

            sim = Simulator(
                self.trace, predictor=preset_predictor(self.policy), kill_at_estimate=self.kill_at_estimate
            )
            s = sim.run(make_policy(self.policy), progress=False)
            self._replay = (s.start, s.end)
        return self._replay

    def jobs(self, offset: int, window_jobs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Trace indices of the episode's jobs, the running ones among them and their starts.

        The episode's jobs are the context (jobs submitted before ``offset`` that had not
        ended when job ``offset`` arrived), then the window. ``running`` indexes the
        episode's jobs (positions, not trace indices) that were running then.
        """
        window = np.arange(offset, offset + window_jobs)
        if offset == 0:
            return window, np.zeros(0, np.int64), np.zeros(0)
        start, end = self.replay()
        t0 = self.trace.submit[offset]
        context = np.flatnonzero(end[:offset] >= t0)
        running = start[context] < t0
        idx = np.concatenate([context, window])
        return idx, np.flatnonzero(running), start[context[running]]


def episode_workload(trace: Workload, idx: np.ndarray) -> Workload:
    """The jobs ``idx`` (ascending trace indices) of ``trace`` as one workload."""
    if len(idx) == len(trace):
        return trace
    if idx[-1] - idx[0] + 1 == len(idx):
        return trace.window(len(idx), int(idx[0]))
    return trace._take(idx)  # warm start: context jobs, then the window


def fallback_job(view: SystemView) -> int | None:
    """The FCFS fallback: the oldest waiting job that fits now, or None.

    Used when a decision must start something because no event is left to happen
    (the machine is then idle, so the oldest waiting job fits).
    """
    fits = view.queue_fits
    if not fits.any():
        return None
    return int(view.queue[int(np.argmax(fits))])


def as_action(action: object) -> int:
    """An action as an int; anything that is not one integer becomes -1 (invalid).

    >>> as_action(np.int64(3)), as_action(np.array([2])), as_action(1.5), as_action("0")
    (3, 2, -1, -1)
    """
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        pass
    try:
        a = np.asarray(action)
        if a.size == 1 and np.issubdtype(a.dtype, np.integer):
            return int(a.reshape(-1)[0])
    except (TypeError, ValueError):
        pass
    return -1
