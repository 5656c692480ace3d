"""Running a simulation sweep: resume from its table, run what is missing on a backend, count.

:func:`run_sweep` runs every configuration whose run key is not in the table yet and
appends each row as its run finishes; :func:`estimate` times one run to say how long a
sweep would take.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcgym.experiments.sweep.backends import _local, _ray, check_address, check_run_options
from hpcgym.experiments.sweep.runs import _options, expand, load_traces, offered_load, run_one
from hpcgym.experiments.sweep.spec import SweepSpec
from hpcgym.experiments.sweep.table import ResultsTable, read_results
from hpcgym.workloads import Workload


@dataclass
class SweepResult:
    """What :func:`run_sweep` did.

    Attributes:
        path: the results table.
        total: runs in the sweep.
        skipped: runs already in the table before this call.
        ran: runs finished by this call.
        rows: every row of the table for this sweep's runs, in the sweep's order.
        seconds: wall-clock seconds of this call.
    """

    path: Path
    total: int
    skipped: int
    ran: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


def progress_bar(total: int, unit: str, desc: str, progress: bool | None) -> Any:
    """A tqdm bar on stderr; ``progress`` None: shown on a terminal only."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=unit,
        desc=desc,
        disable=(not sys.stderr.isatty()) if progress is None else not progress,
        file=sys.stderr,
    )


def run_sweep(
    spec: SweepSpec,
    out: str | os.PathLike[str],
    *,
    backend: str = "local",
    address: str | None = None,
    processes: int | None = None,
    max_runs: int | None = None,
    progress: bool | None = None,
    traces: Mapping[str, Workload] | None = None,
) -> SweepResult:
    """Run every configuration of ``spec`` not yet in the table ``out``, appending each row as it ends.

    Args:
        spec: the sweep.
        out: the CSV results table (created, or resumed: runs whose key it holds are skipped).
        backend: ``"local"`` (a process pool) or ``"ray"``.
        address: with ``backend="ray"``: a cluster (the head's ``"HOST:PORT"``, ``"auto"``,
            ``"ray://host:10001"``); None starts a local Ray.
        processes: local workers (default: one per core, at most one per run); with a
            local Ray, its CPUs.
        max_runs: stop after this many new runs (the rest is left for the next call).
        progress: a progress bar with ETA on stderr (default: on a terminal).
        traces: the traces already read (:func:`load_traces`), to avoid reading them again.

    Returns:
        The counts and the table's rows of this sweep, in its order.

    Raises:
        InvalidConfigError: an unknown backend, ``address`` without Ray, or a bad count.
        MissingExtraError: ``backend="ray"`` without Ray installed.
        ClusterConnectionError: nothing answers at ``address``, or the cluster refuses this
            process (checked before the table is touched).
        KeyboardInterrupt: Ctrl-C, or SIGTERM within
            :func:`~hpcgym.common.signals.terminate_as_interrupt` (as its subclass
            :class:`~hpcgym.common.signals.Terminated`): the finished runs are in the table,
            the workers are ended.
    """
    check_run_options(backend, address, processes, max_runs)
    if backend == "ray":
        from hpcgym.common.extras import require

        require("ray", what="--backend ray")
        if address is not None:
            check_address(address)  # before any table is written or trace read
    t0 = time.perf_counter()
    loaded = dict(traces) if traces is not None else load_traces(spec)
    runs = expand(spec, {t: offered_load(w) for t, w in loaded.items()})
    options = _options(spec)
    table = ResultsTable(out)
    pending = [cfg for cfg in runs if cfg.key(options) not in table.done]
    skipped = len(runs) - len(pending)
    if max_runs is not None:
        pending = pending[:max_runs]
    from hpcgym.baselines._compile import announce_compilation
    from hpcgym.baselines._kernels import load_kernels

    notice = announce_compilation()
    load_kernels()  # every family, here once (not in each worker at once), before the first clock
    announce_compilation(notice)
    ran = 0
    if pending:
        bar = progress_bar(len(pending), "run", spec.name, progress)
        if backend == "ray":
            rows: Iterable[dict[str, Any]] = _ray(loaded, pending, options, address, processes)
        else:
            procs = min(processes or os.cpu_count() or 1, len(pending))
            rows = _local(loaded, pending, options, procs)
        # Ray prints its messages about lost nodes and retried tasks to stdout, from a thread
        # of its own, until it shuts down: stderr, so that stdout holds only the command's output
        quiet = contextlib.redirect_stdout(sys.stderr) if backend == "ray" else contextlib.nullcontext()
        with quiet:
            try:
                for row in rows:
                    table.append(row)
                    ran += 1
                    bar.update(1)
            finally:
                bar.close()
                close = getattr(rows, "close", None)
                if close is not None:  # now, not when the traceback lets go: the workers end here
                    close()
    wanted = {cfg.key(options): i for i, cfg in enumerate(runs)}
    mine = [r for r in read_results(table.path) if r["key"] in wanted]
    mine.sort(key=lambda r: wanted[r["key"]])
    return SweepResult(table.path, len(runs), skipped, ran, mine, time.perf_counter() - t0)


def estimate(spec: SweepSpec, out: str | os.PathLike[str] | None, *, workers: int) -> dict[str, Any]:
    """Runs, finished runs and an estimated time for ``spec``, from one timed run (nothing written).

    The first pending run (else the first run) is simulated once in this process; its
    CPU seconds per job (``cpu_seconds``: what the run costs a core of its own, even on a
    machine busy with other work) times the jobs of each pending run's trace, summed, is
    the core-seconds estimate; divided by ``workers`` the wall-clock one, for workers
    with a core each. Runs whose dispatcher or predictor costs more per job than the
    timed one (a CP dispatcher, a long predictor window) take longer than estimated.
    """
    traces = load_traces(spec)
    runs = expand(spec, {t: offered_load(w) for t, w in traces.items()})
    options = _options(spec)
    done: set[str] = set()
    if out is not None and Path(out).exists() and Path(out).stat().st_size > 0:
        done = {r["key"] for r in read_results(out)}
    pending = [cfg for cfg in runs if cfg.key(options) not in done]
    from hpcgym.baselines._compile import announce_compilation
    from hpcgym.baselines._kernels import load_kernels

    notice = announce_compilation()
    load_kernels()  # not part of the timed run
    announce_compilation(notice)
    probe = pending[0] if pending else runs[0]
    row = run_one(traces[probe.trace], probe, options)
    per_job = row["cpu_seconds"] / max(1, len(traces[probe.trace]))
    core_seconds = sum(per_job * len(traces[cfg.trace]) for cfg in pending)
    return {
        "name": spec.name,
        "runs": len(runs),
        "done": len(runs) - len(pending),
        "pending": len(pending),
        "timed_run": {
            k: row[k] for k in ("trace", "dispatcher", "predictor", "load", "run_seconds", "cpu_seconds")
        },
        "seconds_per_job": per_job,
        "core_seconds": core_seconds,
        "workers": workers,
        "wall_seconds": core_seconds / max(1, workers),
    }
