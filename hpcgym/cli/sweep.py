"""``hpcgym sweep``: see HELP; a simulation sweep (:mod:`hpcgym.experiments.sweep`) or a training sweep.

The arguments become a :class:`~hpcgym.experiments.sweep.spec.SweepSpec` or, with
``--train``/``--train-arg``/``--train-grid`` or a spec with a ``[train]`` table, a
:class:`~hpcgym.experiments.sweep.train_spec.TrainSweepSpec`: the file's or preset's keys,
replaced by the flags given.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.extras import require
from hpcgym.common.files import atomic_path, read_toml_or_yaml
from hpcgym.common.report import format_table, to_json
from hpcgym.common.signals import TERMINATED_EXIT_CODE, terminate_as_interrupt, was_terminated
from hpcgym.experiments.evaluate.results import vs_reference
from hpcgym.experiments.sweep.backends import BACKENDS, cluster_cpus
from hpcgym.experiments.sweep.figures import load_figure, write_figures
from hpcgym.experiments.sweep.running import estimate, run_sweep
from hpcgym.experiments.sweep.spec import PRESETS, SPEC_KEYS, SweepSpec, preset_path
from hpcgym.experiments.sweep.table import read_results, write_parquet
from hpcgym.experiments.sweep.train_runs import estimate as estimate_training
from hpcgym.experiments.sweep.train_runs import run_train_sweep
from hpcgym.experiments.sweep.train_spec import TRAIN_KEYS, TrainSweepSpec, is_training_spec
from hpcgym.experiments.sweep.train_spec import columns as train_columns

HELP = "run a grid or sample of simulations (dispatchers x predictors x traces x loads x seeds)"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", type=Path, default=None, help="the sweep's TOML (or YAML) file")
    p.add_argument("--preset", default=None, help=f"a shipped spec instead of a file: {', '.join(PRESETS)}")
    grid = p.add_argument_group(
        "axes and options (set or replace the spec's keys; without a spec they describe the whole sweep)"
    )
    grid.add_argument("--dispatchers", default=None, metavar="A,B", help="dispatcher presets")
    grid.add_argument(
        "--predictors", default=None, metavar="A,B", help='predictor strings; "preset": the own'
    )
    grid.add_argument(
        "--trace", action="append", default=None, metavar="SWF", help="a trace (repeat for several)"
    )
    grid.add_argument("--loads", default=None, metavar="F,G", help="offered-load factors")
    grid.add_argument(
        "--offered-loads", default=None, metavar="X,Y", help="target offered loads (0.8 = 80 %%)"
    )
    grid.add_argument(
        "--seeds",
        default=None,
        metavar="S,T",
        help="seeds (for seeded dispatchers/predictors; a training sweep's training seeds)",
    )
    grid.add_argument("--jobs", type=int, default=None, help="only this many jobs of each trace")
    grid.add_argument("--offset", type=int, default=None, help="skip this many jobs of each trace first")
    grid.add_argument("--procs", type=int, default=None, help="machine size for every trace")
    grid.add_argument("--sample", type=int, default=None, help="a random sample of this many runs")
    grid.add_argument("--sample-seed", type=int, default=None, help="seed of the sample")
    grid.add_argument(
        "--predictor-sample",
        type=int,
        default=None,
        help="a random sample of this many predictor strings, each on every trace",
    )
    train = p.add_argument_group(
        "training sweeps (a [train] table in the spec, or these flags): each trial trains an agent "
        "(hpcgym train) and evaluates it beside baselines on the test split (hpcgym evaluate)"
    )
    train.add_argument(
        "--train",
        default=None,
        metavar="ALGORITHM",
        help="sweep trainings of this algorithm (maskable-ppo, ppo) over --seeds and --train-grid",
    )
    train.add_argument(
        "--train-arg",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a fixed training argument as TOML (total_timesteps=20000, net_arch=[64,64]); repeatable",
    )
    train.add_argument(
        "--train-grid",
        action="append",
        default=None,
        metavar="KEY=[V,W]",
        help="a training argument's values as a TOML list (learning_rate=[3e-4,1e-4]); repeatable",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local process pool or Ray (tasks; Ray Tune trials for training sweeps) (default local)",
    )
    p.add_argument(
        "--address",
        default=None,
        help="with --backend ray: the cluster, as its head's HOST:PORT (ray start --head --port), "
        "'auto' (this node's cluster) or ray://HOST:10001 (Ray Client); a cluster with token "
        "authentication needs RAY_AUTH_MODE=token (default: start a local Ray on this machine's cores)",
    )
    p.add_argument("--processes", type=int, default=None, help="local workers (default: one per core)")
    p.add_argument("--max-runs", type=int, default=None, help="stop after this many new runs (resume later)")
    p.add_argument("-o", "--out", type=Path, default=None, help="output folder (default: sweep-NAME)")
    p.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="FILE.png",
        help="also write the wait and bounded slowdown against offered load figure to this file",
    )
    p.add_argument(
        "--parquet",
        action="store_true",
        help="also write the table as OUT/results.parquet at the end (needs pyarrow)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the run count and an estimated time")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.epilog = (
        "spec keys: "
        + "; ".join(f"{k}: {v}" for k, v in SPEC_KEYS.items())
        + ". A training sweep's spec has name and a [train] table instead, with: "
        + "; ".join(f"{k}: {v}" for k, v in TRAIN_KEYS.items())
    )


def _split(text: str, key: str, kind: Callable[[str], Any] = str) -> list[Any]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    try:
        return [kind(t) for t in items]
    except ValueError:
        raise InvalidConfigError(
            f"--{key.replace('_', '-')}: {text!r} is not a comma-separated list"
        ) from None


def _spec_from_args(args: argparse.Namespace) -> SweepSpec:
    """The spec of ``hpcgym sweep``'s arguments: the file or preset, with the flags' keys replaced."""
    overrides: dict[str, Any] = {}
    for key, kind in (
        ("dispatchers", str),
        ("predictors", str),
        ("loads", float),
        ("offered_loads", float),
        ("seeds", int),
    ):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = _split(value, key, kind)
    if args.offered_loads is not None and args.loads is None:
        overrides["loads"] = []
    if args.loads is not None and args.offered_loads is None:
        overrides["offered_loads"] = []
    if args.trace is not None:
        overrides["traces"] = [str(t) for t in args.trace]
    for key in ("jobs", "offset", "procs", "sample", "sample_seed", "predictor_sample"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    path = _spec_file(args)
    if path is not None:
        return SweepSpec.from_file(path, **overrides)
    return SweepSpec.from_mapping(overrides, source="flags")


def _outputs(args: argparse.Namespace, name: str) -> tuple[Path, Path, int]:
    """``(folder, results table, workers)`` of a sweep command; checks ``--parquet`` before any run.

    Workers: ``--processes`` or this machine's cores; a dry run on Ray counts the CPUs of
    the cluster of ``--address`` (connecting to it once)."""
    if args.parquet:
        from hpcgym.common.extras import _pyarrow_parquet

        _pyarrow_parquet("--parquet")  # before any run, not after them
    out = args.out if args.out is not None else Path(f"sweep-{name}")
    if args.dry_run and args.backend == "ray":  # a cluster's CPUs, not this machine's cores
        return out, out / "results.csv", cluster_cpus(args.address, args.processes)
    return out, out / "results.csv", args.processes or os.cpu_count() or 1


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend, its workers, ``--max-runs`` and the progress bar, as a sweep's keyword arguments."""
    return {
        "backend": args.backend,
        "address": args.address,
        "processes": args.processes,
        "max_runs": args.max_runs,
        "progress": False if args.no_progress else None,
    }


def _interrupted(table: Path, unit: str, err: KeyboardInterrupt) -> int:
    """Ctrl-C or SIGTERM in a sweep: say where the finished ``unit`` are and how to resume;
    exit code 130 (Ctrl-C) or 143 (SIGTERM)."""
    terminated = was_terminated(err)
    print(
        f"hpcgym: {'terminated' if terminated else 'interrupted'}; finished {unit} are in {table}: "
        "run the same command to resume",
        file=sys.stderr,
    )
    return TERMINATED_EXIT_CODE if terminated else 130


def _report_finished(
    args: argparse.Namespace, name: str, unit: str, result: Any, table: Path, written: Sequence[Path]
) -> bool:
    """Print the files ``written`` (stderr) and the count of ``unit`` run, skipped and left:
    as JSON with ``--json`` (then False), else one line (then True: the caller prints its table)."""
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    left = result.total - result.skipped - result.ran
    if args.json:
        summary = {"name": name, unit: result.total, "skipped": result.skipped, "ran": result.ran}
        print(to_json({**summary, "left": left, "seconds": result.seconds, "table": str(table)}))
        return False
    print(
        f"{name}: {result.total} {unit}; {result.skipped} already done, {result.ran} run now"
        f"{f', {left} left (run again to resume)' if left else ''} in {result.seconds:.1f} s"
    )
    return True


def run(args: argparse.Namespace) -> int:
    if _wants_training(args):
        return _run_training(args)
    spec = _spec_from_args(args)
    out, table, workers = _outputs(args, spec.name)
    if args.plot is not None:
        require("plot", what="--plot")
        if not args.plot.parent.is_dir() and str(args.plot.parent):
            raise InvalidConfigError(f"--plot {args.plot}: no such directory: {args.plot.parent}")
    if args.dry_run:
        est = estimate(spec, table, workers=workers)
        if args.json:
            print(to_json(est))
        else:
            print(
                f"{est['name']}: {est['runs']} runs, {est['done']} already in {table}, "
                f"{est['pending']} to run; "
                f"about {est['core_seconds'] / 60:.1f} core-minutes, {est['wall_seconds'] / 60:.1f} min "
                f"on {workers} workers (one run timed: {est['seconds_per_job'] * 1e6:.1f} CPU-µs per job)"
            )
        return 0
    try:
        with terminate_as_interrupt():
            result = run_sweep(spec, table, **_run_options(args))
    except KeyboardInterrupt as err:
        return _interrupted(table, "runs", err)
    written = [table, *write_figures(spec, result.rows, out)]
    if args.parquet:
        write_parquet(read_results(table), out / "results.parquet")
        written.append(out / "results.parquet")
    if args.plot is not None and result.rows:
        title = f"{spec.name}: wait and bounded slowdown against offered load"
        fig = load_figure(result.rows, title=title)
        with atomic_path(args.plot) as tmp:
            fig.savefig(tmp, dpi=100)
        written.append(args.plot)
    if _report_finished(args, spec.name, "runs", result, table, written):
        _print_table(result.rows)
    return 0


def _print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    columns = [
        ("trace", "trace", ""),
        ("policy", "policy", ""),
        ("predictor", "predictor", ""),
        ("predictor_used", "used", ""),
        ("load", "load", ".3g"),
        ("offered_pct", "offered [%]", ".1f"),
        ("wait_min", "wait [min]", ".1f"),
        ("mean_bsld", "bsld", ".2f"),
        ("utilization", "util", ".3f"),
        ("run_seconds", "run [s]", ".2f"),
    ]
    shown = [
        dict(
            r,
            offered_pct=100 * r["offered_load"] if r["offered_load"] is not None else None,
            wait_min=r["mean_wait_s"] / 60 if r["mean_wait_s"] is not None else None,
        )
        for r in rows
    ]
    print(format_table(shown, columns))


# ----------------------------------------------------------------------- training sweeps
SIMULATION_FLAGS = {
    "dispatchers": "--dispatchers",
    "predictors": "--predictors",
    "trace": "--trace (give the trace as --train-arg trace=...)",
    "loads": "--loads",
    "offered_loads": "--offered-loads",
    "jobs": "--jobs",
    "offset": "--offset",
    "procs": "--procs (give it as --train-arg procs=...)",
    "predictor_sample": "--predictor-sample",
    "plot": "--plot",
}
"""Flags of simulation sweeps that a training sweep refuses (rather than ignores)."""


def _spec_file(args: argparse.Namespace) -> Path | None:
    """The spec file of ``--preset`` or of the positional argument; None when the flags are the whole spec."""
    if args.spec is not None and args.preset is not None:
        raise InvalidConfigError(f"give a spec file ({args.spec}) or --preset {args.preset}, not both")
    if args.preset is not None:
        return preset_path(args.preset)
    return args.spec


def _wants_training(args: argparse.Namespace) -> bool:
    """Whether ``hpcgym sweep``'s arguments describe a training sweep (flags or a ``[train]`` table)."""
    if args.train is not None or args.train_arg or args.train_grid:
        return True
    path = _spec_file(args)
    if path is None or not Path(path).is_file():
        return False
    return is_training_spec(read_toml_or_yaml(Path(path), "sweep spec"))


def _toml_items(texts: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` flags, each value read as TOML (``3e-4``, ``[64, 64]``, ``"bsld"``, ``true``)."""
    from hpcgym.common.files import _toml_module

    toml = _toml_module()
    out: dict[str, Any] = {}
    for text in texts:
        key, eq, value = text.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise InvalidConfigError(f"{flag} {text!r}: give KEY=VALUE, such as learning_rate=3e-4")
        try:
            out[key] = toml.loads(f"v = {value.strip()}")["v"]
        except toml.TOMLDecodeError:
            out[key] = value.strip()  # a bare word: text (reward=wait)
    return out


def _train_spec_from_args(args: argparse.Namespace) -> TrainSweepSpec:
    """The training sweep of ``hpcgym sweep``'s arguments: the file's ``[train]`` table, flags replacing keys.

    Raises:
        InvalidConfigError: a simulation flag, a malformed ``KEY=VALUE``, or a bad spec.
    """
    given = [flag for key, flag in SIMULATION_FLAGS.items() if getattr(args, key, None) is not None]
    if given:
        raise InvalidConfigError(f"{given[0]}: not an option of a training sweep")
    path = _spec_file(args)
    data: dict[str, Any] = {"name": "train", "train": {}}
    source = "flags"
    if path is not None:
        read = read_toml_or_yaml(Path(path), "sweep spec")
        if not is_training_spec(read):
            raise InvalidConfigError(f"{path}: --train, --train-arg and --train-grid need a [train] table")
        data = {"name": Path(path).stem, **read}
        source = str(path)
    train = dict(data["train"]) if isinstance(data.get("train"), Mapping) else data.get("train")
    if isinstance(train, dict):
        if args.train is not None:
            train["algorithm"] = args.train
        if args.seeds is not None:
            train["seeds"] = _split(args.seeds, "seeds", int)
        for key in ("sample", "sample_seed"):
            if getattr(args, key) is not None:
                train[key] = getattr(args, key)
        for table, flags, flag in (
            ("args", args.train_arg, "--train-arg"),
            ("grid", args.train_grid, "--train-grid"),
        ):
            if flags:
                items = _toml_items(flags, flag)
                base = train.get(table, {})
                train[table] = {**(base if isinstance(base, Mapping) else {}), **items}
                other = "grid" if table == "args" else "args"
                if isinstance(train.get(other), Mapping):  # a flag moves a key between the tables
                    train[other] = {k: v for k, v in train[other].items() if k not in items}
    return TrainSweepSpec.from_mapping({**data, "train": train}, source=source)


def _print_rows(rows: Sequence[Mapping[str, Any]], spec: TrainSweepSpec) -> None:
    cols = [("trial", "trial", ""), ("seed", "seed", "")]
    cols += [(name, name, "") for name in spec.grid]
    cols += [
        ("policy", "policy", ""),
        ("mean_bsld", "mean bsld", ".2f"),
        ("mean_wait_min", "mean wait [min]", ".1f"),
        ("vs_reference", f"bsld - {spec.reference} [95% CI]", ""),
    ]
    shown = []
    for r in rows:
        if r["policy"] == spec.reference:
            vs = "(reference)"
        else:
            vs = vs_reference(r["bsld_diff"], r["bsld_diff_low"], r["bsld_diff_high"])
        shown.append({**r, "vs_reference": vs})
    print(format_table(shown, cols))


def _run_training(args: argparse.Namespace) -> int:
    """``hpcgym sweep`` for a training sweep: dry run, or the trials and the table."""
    spec = _train_spec_from_args(args)
    out, table, workers = _outputs(args, spec.name)
    if args.dry_run:
        est = estimate_training(spec, out, workers=workers)
        if args.json:
            print(to_json(est))
        else:
            for t in est["trials"]:
                print(f"{t['trial']}: {t['parameters']}{' (done)' if t['done'] else ''}")
            print(
                f"{est['name']}: {est['runs']} trials, {est['done']} already in {table}, "
                f"{est['pending']} to run; about {est['core_seconds'] / 60:.1f} core-minutes, "
                f"{est['wall_seconds'] / 60:.1f} min on {workers} workers (a probe of "
                f"{est['probe']['timesteps']} timesteps: {est['probe']['seconds_per_timestep'] * 1e3:.2f} ms "
                f"per timestep, {est['probe']['validation_seconds']:.1f} s per validation, "
                f"{est['probe']['other_seconds']:.1f} s to set up and evaluate)"
            )
        return 0
    try:
        with terminate_as_interrupt():
            result = run_train_sweep(spec, out, **_run_options(args))
    except KeyboardInterrupt as err:
        return _interrupted(table, "trials", err)
    written = [table]
    if args.parquet:
        write_parquet(result.rows, out / "results.parquet", train_columns(spec))
        written.append(out / "results.parquet")
    if _report_finished(args, spec.name, "trials", result, table, written):
        _print_rows(result.rows, spec)
    return 0
