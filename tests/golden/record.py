"""Record the golden schedules: every dispatcher x predictor on the first jobs of every trace.

Issue 9 ("No regression"): before the machine model is rewritten, the per-job start
times of every registered preset x every registered predictor on the first 20,000 jobs
of every shared SWF trace are recorded as hashes; afterwards they must be bit-identical.
``tests/test_golden.py`` replays the grid and compares.

Usage::

    python tests/golden/record.py [--traces FILE_OR_DIR ...] [--jobs 20000] [--workers 2] \\
        -o tests/golden/schedules.json

Per trace it records a fingerprint of the workload as read (jobs, machine size, a hash of
the columns; so a changed reader is told apart from a changed engine) and, per
combination, the sha256 of ``schedule.start`` and ``schedule.end`` (float64,
little-endian bytes) plus numbers to check by eye (mean wait, decisions, jobs killed).
The combinations are every preset of :func:`hpcgym.baselines.policy_specs` with every
base predictor of :func:`hpcgym.predict.predictor_names` (built with
``preset_predictor``, so a preset's doubling and correction apply), and four variants of
EASY: ``extra="all"`` with W and R, ``record_reservations=True`` (its
``first_reservation`` hashed too) and ``kill_at_estimate=True`` with W. Combinations
with the same outcome share one entry of the fixture.

The bundled trace (:func:`hpcgym.workloads.load_default`) is recorded too, for the fast
test, together with its arrays themselves (start times, run lengths ``end - start``,
first reservations; each distinct array once, xz-compressed) so that a mismatch names the
first job that moved and both of its start times. For the full grid the test finds those
by replaying the recorded commit (``--dump``, below).

The recording names the git commit and the tree of ``hpcgym/`` it was made from, and
refuses to run when ``hpcgym/`` has uncommitted changes (the commit would not reproduce
it) unless ``--allow-dirty`` is given. The library is the one in this tree, whatever is
installed.

``--dump TRACE --combo KEY ... --dump-out FILE.npz`` writes the arrays of the named
combinations instead (``TRACE`` a file or ``bundled``); the golden test runs it at the
recorded commit to explain a mismatch on the full grid.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if (REPO / "hpcgym" / "__init__.py").is_file() and str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # record this tree's library, not whatever is installed

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs, preset_predictor  # noqa: E402
from hpcgym.predict.runtime import predictor_names  # noqa: E402
from hpcgym.sim.engine import Schedule, Simulator  # noqa: E402
from hpcgym.workloads.swf import Workload, load_default, read_swf  # noqa: E402

FORMAT = 1
DEFAULT_JOBS = 20_000
DEFAULT_TRACES = REPO.parent / "shared" / "traces"
DEFAULT_OUT = HERE / "schedules.json"
BUNDLED = "bundled"
"""Name of the bundled trace (``load_default()``) in the fixture and on the command line."""
ARRAYS_FILE = "bundled_arrays.xz"
CHECKED = ("start", "end", "first_reservation")
"""The hashed arrays a replay must reproduce bit for bit; every other number is for people."""

VARIANTS = ("", "extra=all", "record_reservations", "kill_at_estimate")


@dataclass(frozen=True)
class Combo:
    """One recorded run: a preset, a base predictor and a variant of EASY (or none)."""

    policy: str
    predictor: str
    variant: str = ""

    @property
    def key(self) -> str:
        """``policy|predictor``, or ``policy/variant|predictor`` (the fixture's key)."""
        policy = f"{self.policy}/{self.variant}" if self.variant else self.policy
        return f"{policy}|{self.predictor}"

    @classmethod
    def from_key(cls, key: str) -> Combo:
        policy, sep, predictor = key.partition("|")
        name, _, variant = policy.partition("/")
        if not sep or variant not in VARIANTS:
            raise ValueError(f"not a combination key: {key!r} (policy[/variant]|predictor)")
        return cls(name, predictor, variant)


def combos() -> list[Combo]:
    """Every registered preset x every registered predictor, then the EASY variants."""
    grid = [Combo(p, q) for p in policy_specs() for q in predictor_names()]
    return [
        *grid,
        Combo("easy", "walltime", "extra=all"),
        Combo("easy", "real", "extra=all"),
        Combo("easy", "walltime", "record_reservations"),
        Combo("easy", "walltime", "kill_at_estimate"),
    ]


def run_combo(workload: Workload, combo: Combo) -> Schedule:
    """Simulate ``workload`` with the combination's dispatcher and predictor."""
    predictor = preset_predictor(combo.policy, combo.predictor)
    kill = False
    if combo.variant == "":
        policy = make_policy(combo.policy)
    elif combo.variant == "extra=all":
        policy = EasyBackfilling(extra="all")
    elif combo.variant == "record_reservations":
        policy = EasyBackfilling(record_reservations=True)
    else:
        policy = make_policy(combo.policy)
        kill = True
    return Simulator(workload, predictor=predictor, kill_at_estimate=kill).run(policy, progress=False)


def schedule_arrays(schedule: Schedule) -> dict[str, np.ndarray]:
    """The arrays a replay must reproduce: start, end and, if recorded, first reservations."""
    out = {"start": schedule.start, "end": schedule.end}
    if "first_reservation" in schedule.extras:
        out["first_reservation"] = np.asarray(schedule.extras["first_reservation"])
    return out


def f8(a: np.ndarray) -> np.ndarray:
    """``a`` as contiguous little-endian float64 (the byte order the hashes are of)."""
    return np.ascontiguousarray(a, dtype="<f8")


def sha256(a: np.ndarray) -> str:
    """sha256 of ``a`` as little-endian float64 bytes."""
    return hashlib.sha256(f8(a).tobytes()).hexdigest()


def workload_fingerprint(w: Workload) -> dict[str, Any]:
    """Jobs, machine size and a hash of the columns the engine reads."""
    h = hashlib.sha256()
    for col in (w.submit, w.runtime, w.estimate):
        h.update(f8(col).tobytes())
    h.update(np.ascontiguousarray(w.procs_req, dtype="<i8").tobytes())
    return {"jobs": len(w), "procs": int(w.procs), "columns_sha256": h.hexdigest()}


def group_schedules(runs: dict[str, tuple[Schedule, dict[str, np.ndarray]]]) -> list[dict[str, Any]]:
    """The fixture's ``schedules`` of one trace: combinations with the same outcome share an entry.

    Each entry holds the hashes of the arrays (:data:`CHECKED`), the mean wait (s, over
    all jobs), the jobs killed (if any) and ``combos``: every combination that gave
    this outcome, with its number of decisions. Entries come in the order of their
    first combination.
    """
    groups: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    for key, (schedule, arrays) in runs.items():
        hashes = {name: sha256(a) for name, a in arrays.items()}
        ident = tuple(sorted(hashes.items()))
        if ident not in groups:
            wait = schedule.start - schedule.workload.submit
            entry: dict[str, Any] = dict(hashes)
            entry["mean_wait_s"] = round(float(wait.mean()), 3) if len(wait) else 0.0
            if schedule.killed.any():
                entry["killed"] = int(schedule.killed.sum())
            entry["combos"] = {}
            groups[ident] = entry
        groups[ident]["combos"][key] = int(schedule.decisions)
    return list(groups.values())


def expected_hashes(entry: dict[str, Any]) -> dict[str, dict[str, str]]:
    """``{combo key: {array name: sha256}}`` of a trace's fixture entry."""
    out = {}
    for group in entry["schedules"]:
        hashes = {name: group[name] for name in CHECKED if name in group}
        for key in group["combos"]:
            out[key] = hashes
    return out


def load_trace(trace: str, jobs: int, procs: int | None = None) -> Workload:
    """The first ``jobs`` jobs of ``trace`` (a file, or :data:`BUNDLED`); machine size ``procs``,
    by default as :func:`read_swf` gives it (for the recording: the header's)."""
    w = load_default() if trace == BUNDLED else read_swf(trace, procs=procs)
    return w.window(jobs)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record_trace(trace: str, jobs: int, keep_arrays: bool = False) -> dict[str, Any]:
    """Run every combination on one trace.

    Returns:
        ``{"entry": the trace's fixture entry, "arrays": packed arrays or None}``; with
        ``keep_arrays`` the arrays are packed (:func:`pack_arrays`) and each
        ``schedules`` entry names its run lengths' hash as ``length``.
    """
    t_all, cpu_all = time.perf_counter(), time.process_time()
    w = load_trace(trace, jobs)
    entry: dict[str, Any] = {}
    if trace != BUNDLED:
        entry["file_sha256"] = file_sha256(Path(trace))
    entry["workload"] = workload_fingerprint(w)
    runs: dict[str, tuple[Schedule, dict[str, np.ndarray]]] = {}
    secs: dict[str, float] = {}
    for combo in combos():
        t0 = time.perf_counter()
        s = run_combo(w, combo)
        secs[combo.key] = time.perf_counter() - t0
        runs[combo.key] = (s, schedule_arrays(s))
    entry["schedules"] = group_schedules(runs)
    packed = None
    if keep_arrays:
        packed = pack_arrays(entry["schedules"], {k: a for k, (_, a) in runs.items()})
    entry["seconds"] = round(time.perf_counter() - t_all, 1)
    entry["cpu_seconds"] = round(time.process_time() - cpu_all, 1)
    slowest = sorted(secs.items(), key=lambda kv: -kv[1])[:3]
    entry["slowest_combos_s"] = {k: round(v, 1) for k, v in slowest}
    return {"entry": entry, "arrays": packed}


# ------------------------------------------------------------------ bundled arrays
def pack_arrays(
    groups: list[dict[str, Any]], arrays: dict[str, dict[str, np.ndarray]]
) -> tuple[bytes, dict[str, Any]]:
    """The arrays of one trace, each distinct one once, as one xz stream, and its index.

    Start times and first reservations are stored as they are (found by the hash the
    fixture already gives them); end times as run lengths ``end - start`` (mostly one
    array for every combination), checked to give the end times back bit for bit, whose
    hash is added to each entry of ``groups`` as ``length``.
    """
    order: list[str] = []
    blobs: list[bytes] = []
    for group in groups:
        a = arrays[next(iter(group["combos"]))]
        start, end = f8(a["start"]), f8(a["end"])
        length = f8(end - start)
        if not np.array_equal((start + length).view("<u8"), end.view("<u8")):
            raise AssertionError("start + (end - start) does not give the end times back")
        group["length"] = sha256(length)
        group["combos"] = group.pop("combos")  # keep the long list last on the line
        stored = [start, length]
        if "first_reservation" in a:
            stored.append(f8(a["first_reservation"]))
        for x in stored:
            digest = sha256(x)
            if digest not in order:
                order.append(digest)
                blobs.append(x.tobytes())
    data = lzma.compress(b"".join(blobs), preset=9 | lzma.PRESET_EXTREME)
    return data, {"file": ARRAYS_FILE, "sha256": hashlib.sha256(data).hexdigest(), "order": order}


def unpack_arrays(data: bytes, entry: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Inverse of :func:`pack_arrays`: ``{combo key: {"start", "end"[, "first_reservation"]}}``.

    Args:
        data: the xz file's bytes.
        entry: the trace's fixture entry (``arrays`` index, ``schedules``, ``workload``).
    """
    index = entry["arrays"]
    if hashlib.sha256(data).hexdigest() != index["sha256"]:
        raise ValueError(f"{index['file']} is not the file the fixture was recorded with (sha256 differs)")
    flat = np.frombuffer(lzma.decompress(data), dtype="<f8")
    table = flat.reshape(len(index["order"]), entry["workload"]["jobs"])
    by_hash = dict(zip(index["order"], table, strict=True))
    out: dict[str, dict[str, np.ndarray]] = {}
    for group in entry["schedules"]:
        start = by_hash[group["start"]]
        arrays = {"start": start, "end": start + by_hash[group["length"]]}
        if "first_reservation" in group:
            arrays["first_reservation"] = by_hash[group["first_reservation"]]
        for key in group["combos"]:
            out[key] = arrays
    return out


# ------------------------------------------------------------------ diagnostics
def first_difference(expected: np.ndarray, actual: np.ndarray) -> tuple[int, int] | None:
    """``(first index, number of indices)`` where the two differ bit for bit; None if equal."""
    e, a = f8(expected), f8(actual)
    if e.shape != a.shape:
        return (min(len(e), len(a)), abs(len(e) - len(a)))
    diff = np.flatnonzero(e.view("<u8") != a.view("<u8"))
    if not len(diff):
        return None
    return int(diff[0]), len(diff)


def describe_difference(
    what: str, expected: np.ndarray, actual: np.ndarray, job_id: np.ndarray | None = None
) -> str:
    """One line naming the first job whose ``what`` (start, end ...) moved and both values."""
    found = first_difference(expected, actual)
    if found is None:
        return f"{what}: identical"
    j, count = found
    if len(expected) != len(actual):
        return f"{what}: {len(expected)} jobs recorded, {len(actual)} now"
    swf = f" (SWF id {int(job_id[j])})" if job_id is not None else ""
    return (
        f"{what} differs for {count} of {len(expected)} jobs; first job {j}{swf}: "
        f"recorded {float(expected[j])!r}, now {float(actual[j])!r}"
    )


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def reference_arrays(
    commit: str, trace: str, jobs: int, keys: list[str], workdir: Path, repo: Path = REPO
) -> dict[str, dict[str, np.ndarray]]:
    """The arrays of ``keys`` as the library at ``commit`` computes them (for diagnostics).

    Extracts ``hpcgym/`` and this script at ``commit`` into ``workdir`` (``git archive``)
    and runs the script there in ``--dump`` mode.

    Raises:
        RuntimeError: git, the commit or the replay failed; the message says which.
    """
    import io
    import tarfile

    try:
        tar = subprocess.run(
            ["git", "archive", "--format=tar", commit, "hpcgym", "tests/golden/record.py"],
            cwd=repo,
            check=True,
            capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        detail = getattr(err, "stderr", b"") or b""
        raise RuntimeError(f"cannot extract commit {commit[:12]}: {err} {detail.decode().strip()}") from err
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        if hasattr(tarfile, "data_filter"):
            tf.extractall(workdir, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            tf.extractall(workdir)
    out = workdir / "reference.npz"
    cmd = [sys.executable, str(workdir / "tests" / "golden" / "record.py"), "--dump", trace]
    cmd += ["--jobs", str(jobs), "--dump-out", str(out)]
    for key in keys:
        cmd += ["--combo", key]
    env = dict(os.environ, PYTHONPATH=str(workdir))
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"replaying commit {commit[:12]} failed: {proc.stderr.strip()[-2000:]}")
    result: dict[str, dict[str, np.ndarray]] = {}
    with np.load(out) as data:
        for name in data.files:
            key, _, what = name.rpartition(":")
            result.setdefault(key, {})[what] = data[name]
    return result


def dump(trace: str, jobs: int, keys: list[str], out: Path) -> None:
    """Write the arrays of ``keys`` on ``trace`` to ``out`` (``.npz``, names ``key:array``)."""
    w = load_trace(trace, jobs)
    arrays = {}
    for key in keys:
        for name, a in schedule_arrays(run_combo(w, Combo.from_key(key))).items():
            arrays[f"{key}:{name}"] = a
    np.savez(out, **arrays)  # type: ignore[arg-type]


# ------------------------------------------------------------------ recording
def find_traces(args: list[Path]) -> list[Path]:
    found: list[Path] = []
    for p in args:
        found.extend(sorted(p.glob("*.swf.gz")) if p.is_dir() else [p])
    return found


def library_commit(allow_dirty: bool) -> dict[str, Any]:
    """The commit and ``hpcgym/`` tree this recording is made from."""
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--", "hpcgym"))
    if dirty and not allow_dirty:
        raise SystemExit(
            "record.py: hpcgym/ has uncommitted changes, so no commit reproduces this recording; "
            "commit them first (or pass --allow-dirty for a scratch recording)"
        )
    return {"commit": commit, "library_tree": git("rev-parse", "HEAD:hpcgym"), "dirty": dirty}


def _flat(obj: Any) -> bool:
    """Scalars, or a dict of scalars or of dicts of scalars (no lists): one line of JSON."""
    if isinstance(obj, list):
        return False
    if isinstance(obj, dict):
        return all(
            not isinstance(v, (dict, list)) or (isinstance(v, dict) and _flat_leaf(v)) for v in obj.values()
        )
    return True


def _flat_leaf(obj: dict[str, Any]) -> bool:
    return all(not isinstance(v, (dict, list)) for v in obj.values())


def fixture_text(obj: Any, indent: str = "") -> str:
    """Indented JSON with every schedule entry on one line, to keep the fixture small."""
    inner = indent + " "
    if isinstance(obj, dict) and not _flat(obj):
        items = [f"{inner}{json.dumps(k)}: {fixture_text(v, inner)}" for k, v in obj.items()]
        text = "{\n" + ",\n".join(items) + "\n" + indent + "}"
    elif isinstance(obj, list) and (len(json.dumps(obj)) > 100 or not all(map(_flat, obj))):
        text = "[\n" + ",\n".join(inner + fixture_text(v, inner) for v in obj) + "\n" + indent + "]"
    else:
        text = json.dumps(obj)
    return text + ("\n" if not indent else "")


def previous_cpu_seconds(fixture: Path) -> dict[str, float]:
    """CPU seconds per trace of an earlier recording at ``fixture`` (empty if none)."""
    try:
        old = json.loads(fixture.read_text())
        times = {name: e.get("cpu_seconds", e.get("seconds", 0.0)) for name, e in old["traces"].items()}
        if "bundled" in old:
            times[BUNDLED] = old["bundled"].get("cpu_seconds", 0.0)
        return times
    except (OSError, ValueError, KeyError, AttributeError):
        return {}


def versions() -> dict[str, str]:
    import numba

    return {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__}


def record(traces: list[Path], jobs: int, out: Path, workers: int, allow_dirty: bool, bundled: bool) -> None:
    origin = library_commit(allow_dirty)
    tasks = ([BUNDLED] if bundled else []) + [str(p) for p in traces]
    before = previous_cpu_seconds(out)
    tasks.sort(key=lambda t: -before.get(Path(t).name, 0.0))  # longest first, if known
    print(
        f"recording {len(combos())} combinations x {len(tasks)} traces, first {jobs:,} jobs, "
        f"commit {origin['commit'][:12]}, {workers} workers",
        file=sys.stderr,
        flush=True,
    )
    t0 = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(record_trace, t, jobs, t == BUNDLED): t for t in tasks}
        for done, fut in enumerate(as_completed(futures), start=1):
            t = futures[fut]
            results[t] = fut.result()
            e = results[t]["entry"]
            slow = ", ".join(f"{k} {v:.1f} s" for k, v in e["slowest_combos_s"].items())
            print(
                f"[{done}/{len(tasks)}] {Path(t).name}: {e['workload']['jobs']:,} jobs, "
                f"{e['seconds']:.1f} s wall, {e['cpu_seconds']:.1f} s CPU (slowest: {slow})",
                file=sys.stderr,
                flush=True,
            )
    wall = time.perf_counter() - t0
    cpu = {Path(t).name: r["entry"]["cpu_seconds"] for t, r in results.items()}
    slowest = max(cpu, key=cpu.__getitem__)
    fixture: dict[str, Any] = {
        "format": FORMAT,
        "what": (
            "golden schedules (issue 9, no regression): sha256 of schedule.start and schedule.end "
            "(float64 little-endian bytes) of every preset x predictor on the first `jobs` jobs of "
            "each trace; made by tests/golden/record.py, checked by tests/test_golden.py"
        ),
        **origin,
        "jobs": jobs,
        "versions": versions(),
        "checked": list(CHECKED),
        "combos": [c.key for c in combos()],
        "notes": [
            "Each trace's `schedules` lists every distinct outcome once: the sha256 of the arrays "
            "named in `checked`, the mean wait (s, over all jobs), jobs killed (if any) and "
            "`combos`, every combination that gave it with its number of dispatcher decisions.",
            "Checked bit for bit: the workload fingerprint and those hashes. Mean wait, kills and "
            "decisions are for people; seconds, cpu_seconds and slowest_combos_s time this recording.",
            "The bundled trace's entries also name `length`, the hash of end - start; its distinct "
            "start, length and first-reservation arrays are in `arrays.file` (xz, float64 "
            "little-endian, in `arrays.order`), so a mismatch there names the job and both times.",
            "Machine size of each trace: its header, as read_swf gives it (METACENTRUM has no "
            "header: the largest job).",
            f"Grid time: {sum(cpu.values()):.0f} s CPU over all traces, {wall:.0f} s wall with "
            f"{workers} workers. Slowest trace: {slowest}, {cpu[slowest]:.0f} s CPU. Nothing was cut "
            "from the grid: it runs in minutes. seconds / cpu_seconds per trace are wall and CPU "
            "time of this recording (wall time grows when the machine is shared; CPU time hardly).",
        ],
    }
    if bundled:
        b = results.pop(BUNDLED)
        data, index = b["arrays"]
        (out.parent / ARRAYS_FILE).write_bytes(data)
        fixture["bundled"] = {"source": "hpcgym.workloads.load_default()", **b["entry"], "arrays": index}
    fixture["traces"] = {
        Path(t).name: results[t]["entry"] for t in sorted(results, key=lambda t: Path(t).name)
    }
    out.write_text(fixture_text(fixture))
    size = out.stat().st_size + ((out.parent / ARRAYS_FILE).stat().st_size if bundled else 0)
    print(f"wrote {out} ({size / 1e3:.0f} kB with the arrays) in {wall:.0f} s", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=Path, nargs="+", default=[DEFAULT_TRACES], help="SWF files or folders")
    ap.add_argument("--jobs", type=int, default=DEFAULT_JOBS, help="first N jobs of each trace")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes")
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT, help="fixture JSON to write")
    ap.add_argument("--no-bundled", action="store_true", help="leave out the bundled trace")
    ap.add_argument("--allow-dirty", action="store_true", help="record although hpcgym/ has changes")
    ap.add_argument("--dump", metavar="TRACE", help="write the arrays of --combo on TRACE instead")
    ap.add_argument(
        "--combo", action="append", default=[], help="with --dump: a key policy[/variant]|predictor"
    )
    ap.add_argument("--dump-out", type=Path, help="with --dump: the .npz to write")
    args = ap.parse_args(argv)
    if args.jobs <= 0:
        ap.error(f"--jobs must be positive, got {args.jobs}")
    if args.dump:
        if not args.combo or args.dump_out is None:
            ap.error("--dump needs at least one --combo and --dump-out")
        dump(args.dump, args.jobs, args.combo, args.dump_out)
        return 0
    traces = find_traces(args.traces)
    missing = [p for p in traces if not p.is_file()]
    if missing:
        ap.error(f"no such trace file: {missing[0]}")
    if not traces and args.no_bundled:
        ap.error(f"no *.swf.gz traces in {', '.join(map(str, args.traces))}")
    record(traces, args.jobs, args.out, max(1, args.workers), args.allow_dirty, not args.no_bundled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
