"""``hpcgym evaluate``: see HELP; the evaluation itself is :func:`hpcgym.experiments.evaluate.evaluate`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpcgym.baselines import resolve_policy_name
from hpcgym.cli._common import add_trace_arguments, load_trace
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import episodes
from hpcgym.experiments.evaluate.policies import BASELINES
from hpcgym.experiments.evaluate.run import evaluate
from hpcgym.experiments.protocols import make_protocol
from hpcgym.workloads import READINGS

HELP = (
    "dispatchers and agents on the same held-out, non-overlapping windows, with paired confidence intervals"
)


def configure(p: argparse.ArgumentParser) -> None:
    add_trace_arguments(p)
    p.add_argument(
        "--policies",
        default=None,
        help="comma-separated presets (default: every heuristic baseline with and without backfilling, "
        "and easy++; with --protocol, the heuristics of its table)",
    )
    p.add_argument(
        "--protocol",
        default=None,
        help="draw the windows as a study did: held-out (the default windows) or rlscheduler (first "
        "10,000 jobs, 10 random 1,024-job windows, seed 1; NOT held out), printed beside its "
        "published figures; --window-jobs and --windows override its sizes",
    )
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PATH",
        help="a saved stable-baselines3 model (.zip; MaskablePPO if trained with masks, else PPO); "
        "repeatable (named by the file's stem, or folder/stem where stems repeat). A model of "
        "`hpcgym train` brings its environment configuration and, without --trace/--workload, its trace",
    )
    p.add_argument(
        "--split", default="test", choices=episodes.SPLITS, help="split of the windows (default test)"
    )
    p.add_argument(
        "--reading",
        default=None,
        choices=READINGS,
        help="how SWF lines become jobs: hpcgym's rules or RLScheduler's (cancelled jobs kept as 10-s "
        "jobs, ...; see docs/EVALUATION.md) (default: the protocol's, else hpcgym)",
    )
    p.add_argument(
        "--window-jobs",
        type=int,
        default=None,
        help="jobs per window (default 1024, shorter where the split would hold fewer than 20 windows, "
        "not under 128; or the protocol's)",
    )
    p.add_argument(
        "--windows",
        type=int,
        default=None,
        help="number of windows (default: as many as the split holds; below 20 the intervals are "
        "reported as approximate)",
    )
    p.add_argument("--warm-start", action="store_true", help="start each window in a full replay's state")
    p.add_argument("--warm-policy", default="easy", help="preset of the warm-start replay (default easy)")
    p.add_argument("--predictor", default=None, help="plan with this predictor instead of each preset's own")
    p.add_argument(
        "--reference",
        default="easy",
        help="preset of the paired differences, or best: the --policies heuristic with the lowest mean "
        "bsld on the validation split (the best on the evaluated windows is shown beside it) (default easy)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    p.add_argument(
        "--window-size",
        type=int,
        default=None,
        help="models: K, waiting jobs the agent sees (default: the model's, else 64)",
    )
    p.add_argument(
        "--backfill",
        default=None,
        choices=("none", "easy"),
        help="models: the env's backfill mode (default: the model's, else none)",
    )
    p.add_argument("--out", type=Path, default=None, help="write JSON, CSVs and the two PNG plots here")
    p.add_argument("--no-plots", action="store_true", help="with --out: no PNG files")
    p.add_argument("--json", action="store_true", help="print the whole evaluation as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def run(args: argparse.Namespace) -> int:
    if args.window_jobs is not None and args.window_jobs < 1:
        raise InvalidConfigError(f"--window-jobs: must be >= 1, got {args.window_jobs}")
    if args.windows is not None and args.windows < 1:
        raise InvalidConfigError(f"--windows: must be >= 1, got {args.windows}")
    if args.out is not None and not args.no_plots:
        from hpcgym.common.extras import require

        require("plot", what="the plots of --out (or give --no-plots)")
    proto = None if args.protocol is None else make_protocol(args.protocol)
    if args.reading is None:
        args.reading = proto.reading if proto is not None else "hpcgym"
    names = args.policies
    if names is None:
        names = ",".join(proto.policies if proto is not None and proto.policies else BASELINES)
    policies: dict[str, Any] = {}
    for p in (x.strip() for x in names.split(",")):
        if p:
            policies[resolve_policy_name(p)] = p
    for name, path in _model_names(args.model).items():
        if name in policies:
            raise InvalidConfigError(f"--model {path}: its name {name!r} is also a policy of --policies")
        policies[name] = Path(path)  # a path object: always read as a model file
    env_kwargs = {
        k: v for k, v in (("window_size", args.window_size), ("backfill", args.backfill)) if v is not None
    }
    _trace_from_models(args)
    w = load_trace(args)
    print(w.report, file=sys.stderr)
    ev = evaluate(
        policies,
        w,
        split=args.split,
        window_jobs=args.window_jobs,
        windows=args.windows,
        protocol=proto,
        warm_start=args.warm_start,
        warm_policy=args.warm_policy,
        predictor=args.predictor,
        reference=args.reference,
        seed=args.seed,
        confidence=args.confidence,
        n_resamples=args.resamples,
        env_kwargs=env_kwargs,
        progress=not args.no_progress,
    )
    if args.out is not None:
        for f in ev.write(args.out, plots=not args.no_plots):
            print(f"wrote {f}", file=sys.stderr)
    if args.json:
        print(ev.to_json())
    else:
        print(ev.table())
    return 0


def _model_names(paths: Sequence[str | os.PathLike[str]]) -> dict[str, str]:
    """The table names of ``--model`` files: each file's stem, or ``folder/stem`` where stems repeat.

    ``runs/a/best_model.zip`` and ``runs/b/best_model.zip`` are ``a/best_model`` and
    ``b/best_model``; a lone ``runs/a/best_model.zip`` is ``best_model``.

    Raises:
        InvalidConfigError: two files would still get the same name.
    """
    stems = [Path(p).stem for p in paths]
    out: dict[str, str] = {}
    for p, stem in zip(paths, stems, strict=True):
        name = stem if stems.count(stem) == 1 else f"{Path(p).parent.name}/{stem}"
        if name in out:
            raise InvalidConfigError(f"--model {p}: another model is named {name!r} too; rename one file")
        out[name] = os.fspath(p)
    return out


def _trace_from_models(args: argparse.Namespace) -> None:
    """Without ``--trace``/``--workload``: the trace (and machine) the ``--model`` files were trained on.

    Raises:
        InvalidConfigError: the models were trained on different traces, or one on several
            (``hpcgym train --traces``): which one to evaluate on is the user's choice.
    """
    if not args.model or args.trace is not None or args.workload is not None:
        return
    from hpcgym.agents.models import read_metadata
    from hpcgym.workloads import is_job_table

    seen = {}
    for path in args.model:
        meta = read_metadata(path) if Path(path).is_file() else None
        if meta is not None:
            env = meta["env"]
            if "traces" in env:
                raise InvalidConfigError(
                    f"--model {path}: trained on {len(env['traces'])} traces; give the one to evaluate on "
                    "with --trace (one of its own: its test split; any other: a transfer run): "
                    + ", ".join(str(t["trace"]) for t in env["traces"])
                )
            seen[path] = (env["trace"], env["kwargs"].get("machine"), env["kwargs"].get("procs"))
    if len(set(seen.values())) > 1:
        raise InvalidConfigError(
            "--model: the models were trained on different traces ("
            + "; ".join(f"{p}: {t[0] or 'the bundled trace'}" for p, t in seen.items())
            + "); give --trace or --workload"
        )
    if not seen:
        return
    recorded, machine, procs = next(iter(seen.values()))
    trace = recorded if recorded is None else _here_or_catalogue(recorded)
    if trace is not None:
        if is_job_table(trace):
            args.workload = Path(trace)
        else:
            args.trace = Path(trace)
    if args.machine is None and args.procs is None:
        args.machine, args.procs = machine, procs
    instead = f" (not here: the catalogue's {trace} instead)" if trace != recorded else ""
    print(f"trace of the model: {recorded or 'the bundled trace'}{instead}", file=sys.stderr)


def _here_or_catalogue(trace: str) -> str:
    """A model's trace: its recorded path if that file is here, else the catalogue log of the
    same file name (``../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz`` from a fresh clone is
    ``SDSC-SP2-1998-4.2-cln``, read from the trace folder once ``hpcgym traces fetch`` has
    downloaded it), else the recorded path (whose absence the reader reports)."""
    from hpcgym.workloads import load_catalogue

    if Path(trace).exists():
        return trace
    log = load_catalogue().find(Path(trace).name)
    return trace if log is None else log.name
