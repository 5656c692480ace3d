"""What the commands share: the trace arguments, reading the trace they name, ``--json``.

No command's own options live here; each command is a module of :mod:`hpcgym.cli`.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

from hpcgym.common.errors import InvalidConfigError, TraceWarning

ALLOCATIONS = ("first-fit", "best-fit")
"""``--allocation``'s choices: the allocator's policies (:data:`hpcgym.machine.allocator.POLICIES`,
not imported here so that ``hpcgym --help`` does not load numba)."""


def add_trace_arguments(p: argparse.ArgumentParser, *, repeatable_trace: bool = False) -> None:
    """``--trace --workload --timezone --procs --machine --node-size --allocation --jobs --offset --load
    --default-estimate --partition``, for every trace reader (``--trace`` given once, or as
    often as wanted with ``repeatable_trace``: a list then, None when absent)."""
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        action="append" if repeatable_trace else "store",
        help="SWF file, plain or .gz (default: the bundled slice of SDSC-SP2)",
    )
    p.add_argument(
        "--workload",
        type=Path,
        default=None,
        metavar="FILE",
        help="a job table instead of an SWF trace: .csv, .csv.gz or .parquet, heterogeneous requests "
        "(chunks x cores, GPUs, MICs, memory; see docs/WORKLOADS.md), or a Slurm accounting log (.sacct: "
        "sacct --parsable2 --allocations output)",
    )
    p.add_argument(
        "--timezone",
        default=None,
        metavar="ZONE",
        help="the time zone of a Slurm log's local times, e.g. Europe/Berlin (default: the file's "
        "'# TimeZone:' line, else UTC)",
    )
    p.add_argument(
        "--procs",
        type=int,
        default=None,
        help="machine size in processors (default: the papers' size for a known trace, else the "
        "header's MaxProcs or MaxNodes, else the largest job, with a warning)",
    )
    p.add_argument(
        "--machine",
        default=None,
        metavar="NAME|FILE.toml",
        help="the machine: a preset (see `hpcgym machines`) or a TOML file; jobs it can never run are "
        "dropped and counted (default: one node of --procs processors, or a job table's Machine header)",
    )
    p.add_argument(
        "--node-size",
        type=int,
        default=None,
        metavar="K",
        help="an SWF trace's processors as nodes of K used exclusively: a job of p processors takes "
        "ceil(p/K) whole nodes (K must divide the machine size)",
    )
    p.add_argument(
        "--allocation",
        choices=ALLOCATIONS,
        default=None,
        help="where the engine places a job's chunks when the dispatcher does not, overriding the "
        "machine's own policy: first-fit (nodes in index order) or best-fit (the nodes left with the "
        "fewest free resources first); see docs/MACHINES.md. On one node of --procs processors both "
        "place every job on node 0 (default: the machine's, first-fit unless its file says otherwise)",
    )
    p.add_argument("--jobs", type=int, default=None, help="simulate only this many jobs")
    p.add_argument("--offset", type=int, default=0, help="skip this many jobs first")
    p.add_argument(
        "--load", type=float, default=1.0, help="multiply the offered load (inter-arrival times / F)"
    )
    p.add_argument(
        "--default-estimate",
        type=float,
        default=None,
        metavar="SECONDS",
        help="estimate of jobs without one (default: the header's DefaultEstimate, else the "
        "largest estimate in the trace, else the longest run time; the load report says which)",
    )
    p.add_argument(
        "--partition",
        default=None,
        metavar="N[,M...]",
        help="keep only jobs of these partitions (SWF field 16); the others are dropped and counted",
    )


def parse_partitions(text: str | None) -> tuple[int, ...] | None:
    """``--partition``'s value (``"1"``, ``"1,2"``) as partition numbers.

    >>> parse_partitions("2,1")
    (1, 2)
    """
    if text is None:
        return None
    try:
        parts = tuple(sorted({int(item) for item in text.split(",")}))
    except ValueError:
        raise InvalidConfigError(
            f"--partition: {text!r} is not a partition number or a comma-separated list of them "
            "(SWF field 16, e.g. 1 or 1,2)"
        ) from None
    return parts


def load_trace(args: argparse.Namespace) -> Any:
    """The workload the trace arguments describe.

    Problems the reader warns about (:class:`~hpcgym.common.errors.TraceWarning`: odd values in
    unused fields, a guessed machine size) are in the load report, which every command
    prints on stderr, so they are not printed a second time as Python warnings. It turns on
    the notice that kernels are being compiled (once, when a run needs kernels that have no
    cache yet; see :mod:`hpcgym.baselines._compile`).
    """
    from hpcgym.baselines._compile import announce_compilation
    from hpcgym.workloads import default_trace_path, read_swf

    if getattr(args, "workload", None) is not None:
        w = load_job_table(args)
    else:
        if getattr(args, "timezone", None) is not None:
            raise InvalidConfigError(
                "--timezone sets the time zone of a Slurm log's local times (--workload FILE.sacct)"
            )
        path = args.trace if args.trace is not None else default_trace_path()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TraceWarning)
            w = read_swf(
                path,
                procs=args.procs,
                default_estimate=getattr(args, "default_estimate", None),
                partitions=parse_partitions(getattr(args, "partition", None)),
                reading=getattr(args, "reading", None) or "hpcgym",
            )
        w = _for_machine(w, args)
    allocation = getattr(args, "allocation", None)
    if allocation is not None:
        w = with_allocation(w, allocation)
    if args.offset or args.jobs is not None:
        w = w.window(args.jobs, args.offset)
    if args.load != 1.0:
        w = w.scale_load(args.load)
    announce_compilation()
    return w


def with_allocation(w: Any, allocation: str) -> Any:
    """``w`` on its machine with the allocation policy ``allocation`` (``--allocation``).

    A workload without a machine runs on one node of ``w.procs`` processors
    (:class:`~hpcgym.sim.Simulator`'s default); it gets that machine with ``allocation``,
    which places every job on node 0 under either policy.

    Raises:
        InvalidConfigError: ``allocation`` is not one of :data:`ALLOCATIONS`; the
            message names ``--allocation``.
    """
    import dataclasses

    from hpcgym.machine import Machine

    if allocation not in ALLOCATIONS:
        raise InvalidConfigError(f"--allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}")
    machine = w.machine if w.machine is not None else Machine.processors(w.procs)
    return dataclasses.replace(w, machine=machine.with_allocation(allocation))


def _for_machine(w: Any, args: argparse.Namespace) -> Any:
    """An SWF workload read for ``--machine`` or ``--node-size`` (unplaceable jobs dropped, counted)."""
    from hpcgym.machine import Machine
    from hpcgym.workloads import fit_workload

    machine = getattr(args, "machine", None)
    node_size = getattr(args, "node_size", None)
    if node_size is not None:
        if machine is not None:
            raise InvalidConfigError(
                f"--node-size {node_size} splits an SWF trace's processors into nodes; a --machine "
                "describes its nodes itself: give one of them"
            )
        return fit_workload(w, Machine.processors(w.procs, node_size=node_size))
    if machine is not None:
        return fit_workload(w, machine)
    return w


def load_job_table(args: argparse.Namespace) -> Any:
    """The job table or Slurm log (``.sacct``) of ``--workload``, read for ``--machine`` if given.

    Raises:
        InvalidConfigError: ``--workload`` together with ``--trace`` or ``--partition``
            (which selects partitions of SWF traces).
    """
    from hpcgym.workloads import is_sacct_log, read_jobs, read_sacct

    if getattr(args, "trace", None) is not None:
        raise InvalidConfigError(
            f"--trace {args.trace} and --workload {args.workload}: give one (an SWF trace or a job table)"
        )
    if getattr(args, "partition", None) is not None:
        raise InvalidConfigError(
            "--partition selects partitions of SWF traces (field 16); it does not apply to --workload"
        )
    if getattr(args, "node_size", None) is not None:
        raise InvalidConfigError(
            "--node-size splits an SWF trace's processors into nodes; a job table's machine is its "
            "Machine header or --machine"
        )
    if is_sacct_log(args.workload):
        return read_sacct(
            args.workload,
            getattr(args, "machine", None),
            procs=getattr(args, "procs", None),
            default_estimate=getattr(args, "default_estimate", None),
            tz=getattr(args, "timezone", None),
        )
    if getattr(args, "timezone", None) is not None:
        raise InvalidConfigError(
            "--timezone sets the time zone of a Slurm log's local times (--workload FILE.sacct)"
        )
    return read_jobs(
        args.workload,
        getattr(args, "machine", None),
        procs=getattr(args, "procs", None),
        default_estimate=getattr(args, "default_estimate", None),
    )


EXTRA_RULE_HELP = {
    "classic": "the free processors plus those of running jobs taken in predicted-end order until the "
    "first waiting job fits, minus its need (Lifka's EASY; reproduces Tsafrir et al. 2007). Of running "
    "jobs with the same predicted end only those needed are counted, so the result depends on their order",
    "all": "every processor predicted to be free at the reservation, minus the first waiting job's need",
}
"""EASY's rules for counting extra processors (``EasyBackfilling(extra=...)``), for help texts."""

EXTRA_ARGUMENT_HELP = (
    "how EASY-family presets count the extra processors a long job may backfill onto: "
    "'classic' (every preset's default; reproduces Tsafrir et al. 2007) or 'all' (every processor "
    "predicted free at the reservation); see `hpcgym policies`"
)


def configure_json(p: argparse.ArgumentParser) -> None:
    """``--json`` alone."""
    p.add_argument("--json", action="store_true", help="print JSON")
