"""``hpcgym study``: see HELP.

Reads the workload the arguments name (synthetic Eurora jobs, a job table or an SWF
window), runs the study of :data:`hpcgym.studies.registry.STUDIES` on it, writes its
files and prints its table or JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.report import to_json
from hpcgym.studies.eurora_runs import CP_DELTA, public
from hpcgym.studies.galleguillos2017 import CP_DISPATCHERS, DISPATCHERS
from hpcgym.studies.registry import STUDIES
from hpcgym.studies.seeds import render_over_seeds, run_over_seeds
from hpcgym.workloads import Workload, eurora, fit_workload, read_jobs, read_swf

HELP = "run a paper's study end to end: runs, figures, table, findings (galleguillos2017, galleguillos2019)"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("study", help=f"which study: {', '.join(STUDIES)}")
    p.add_argument("--jobs", type=int, default=100_000, help="synthetic Eurora jobs (default 100,000)")
    p.add_argument(
        "--seed", type=int, default=None, help="seed of the generator and the bootstrap (default 0)"
    )
    p.add_argument(
        "--seeds",
        type=_seed_list,
        default=None,
        metavar="S,S,...",
        help="run the study on the generated jobs of each of these seeds and report every finding as "
        "'holds in k of n seeds' with each seed's interval (writes seed-S/ and seeds.json)",
    )
    p.add_argument(
        "--load",
        type=float,
        default=1.0,
        help="load factor: the generator's, or inter-arrival times / F for --workload and --trace "
        "(default 1.0)",
    )
    p.add_argument(
        "--workload", type=Path, default=None, metavar="FILE", help="a job table instead of generated jobs"
    )
    p.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="SWF",
        help="an SWF trace instead of generated jobs, on its processor machine (with --offset and --jobs)",
    )
    p.add_argument("--offset", type=int, default=0, help="with --trace: skip this many jobs first")
    p.add_argument("--machine", default="eurora", help="machine preset or TOML file (default: eurora)")
    p.add_argument(
        "--dispatchers",
        default=None,
        help="comma-separated dispatcher names (galleguillos2017 default: "
        f"{','.join(DISPATCHERS + CP_DISPATCHERS)}, "
        "cph only with OR-Tools installed, and much slower than the others; galleguillos2019 default: "
        "hcp0,hcp1,hcp2,hcp3,pcp1,pcp2,pcp3,prb,easy with 002's predictions each)",
    )
    p.add_argument(
        "--cp-delta",
        type=float,
        default=CP_DELTA,
        metavar="SECONDS",
        help=f"time limit of the CP dispatchers' first solve, deterministic seconds (default {CP_DELTA}; "
        "delta_max is 16 times it; 002 used 1)",
    )
    p.add_argument(
        "--predictions",
        default=None,
        help="galleguillos2019: comma-separated predictions to keep, of W, D, R (default: all)",
    )
    p.add_argument("--processes", type=int, default=None, help="parallel runs (default: one per core)")
    p.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        help="output folder (default: study-NAME); its runs/ keeps every finished run, so running "
        "the same command again resumes an interrupted study",
    )
    p.add_argument("--no-plots", action="store_true", help="write JSON and CSV only")
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")


def run(args: argparse.Namespace) -> int:
    from hpcgym.baselines._compile import announce_compilation

    announce_compilation()  # the first run on a fresh install compiles kernels: say so
    study = STUDIES.get(args.study.lower())
    if study is None:
        raise UnknownNameError(f"unknown study {args.study!r}; known: {', '.join(STUDIES)}")
    if args.jobs < 1:
        raise InvalidConfigError(f"--jobs must be at least 1, got {args.jobs}")
    if args.offset < 0:
        raise InvalidConfigError(f"--offset must be at least 0, got {args.offset}")
    if not args.cp_delta > 0:
        raise InvalidConfigError(f"--cp-delta must be a positive number of seconds, got {args.cp_delta}")
    if args.processes is not None and args.processes < 1:
        raise InvalidConfigError(f"--processes must be at least 1, got {args.processes}")

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    predictions = None
    if args.predictions is not None:
        predictions = [p.upper() for p in _names(args.predictions)]
    out = args.out if args.out is not None else Path(f"study-{study.name}")
    if args.seeds is not None:
        if args.workload is not None or args.trace is not None or args.seed is not None:
            raise InvalidConfigError(
                "--seeds generates the jobs of each seed: not with --seed, --workload or --trace"
            )
        summary = run_over_seeds(
            study,
            args.seeds,
            jobs=args.jobs,
            machine=args.machine,
            load=args.load,
            out=out,
            plots=not args.no_plots,
            progress=log,
            dispatchers=None if args.dispatchers is None else _names(args.dispatchers),
            predictions=predictions,
            cp_delta=args.cp_delta,
            processes=args.processes,
        )
        print(f"wrote {out}/seeds.json and {out}/seed-S/ for each seed", file=sys.stderr)
        print(to_json(summary) if args.json else render_over_seeds(summary))
        return 0
    args.seed = 0 if args.seed is None else args.seed
    workload, machine = _workload(args)

    log(f"study {study.name}: {len(workload):,} jobs on {machine}")
    result = study.run(
        workload,
        dispatchers=None if args.dispatchers is None else _names(args.dispatchers),
        predictions=predictions,
        cp_delta=args.cp_delta,
        processes=args.processes,
        progress=log,
        seed=args.seed,
        runs_dir=out / "runs",
    )
    for path in study.write(result, out, plots=not args.no_plots):
        print(f"wrote {path}", file=sys.stderr)
    print(to_json(public(result)) if args.json else study.render(result))
    return 0


def _workload(args: argparse.Namespace) -> tuple[Workload, str]:
    """The workload of ``--workload``, ``--trace`` or the generator, and its machine's description."""
    machine = args.machine
    if args.workload is not None:
        workload = read_jobs(args.workload, args.machine)
    elif args.trace is not None:
        workload = read_swf(args.trace).window(args.jobs, args.offset)
        machine = f"{workload.procs} processors"
    else:
        workload = fit_workload(eurora(args.jobs, seed=args.seed, load=args.load), args.machine)
    if args.load != 1.0 and (args.workload is not None or args.trace is not None):
        workload = workload.scale_load(args.load)
    return workload, machine


def _seed_list(text: str) -> list[int]:
    """``--seeds``' value: distinct whole numbers >= 0, comma-separated."""
    parts = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() for t in parts) or len(set(parts)) != len(parts):
        raise argparse.ArgumentTypeError(f"{text!r}: give whole numbers >= 0, comma-separated, each once")
    return [int(t) for t in parts]


def _names(text: str) -> list[str]:
    """A comma-separated list (``--dispatchers``, ``--predictions``) as its non-empty items."""
    return [item.strip() for item in text.split(",") if item.strip()]
