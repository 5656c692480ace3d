"""Record what every ``hpcgym`` command prints and writes, to prove a refactoring changed none of it.

Issue 22 ("Behaviour must not change"): before the modules move, every command runs once on
the bundled trace (or a small generated workload, or the Eurora sample) and its ``--json``
output, its CSV/JSON files and its ``--help`` text are kept; after the change the same run
must give the same files. Timing fields (seconds, rates, dates) differ from run to run and
are removed before comparing: a JSON key that names a time measurement is dropped, and in
text the figures after such a word are masked (:data:`TIMING_KEYS`, :func:`normalize_text`).

Usage::

    python tests/golden/record_cli.py -o tests/golden/cli            # record
    python tests/golden/record_cli.py --check tests/golden/cli       # compare, exit 1 on a change
    python tests/golden/record_cli.py --check tests/golden/cli --only simulate-easy

A case is one command line; its files are ``CASE.out`` (stdout, normalized) and one file per
output it writes (``CASE.FILE``). ``--check`` runs every case again in a temporary folder and
prints a unified diff of each file that differs.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SAMPLE = "SAMPLE"  # replaced by the Eurora job-table sample's path
MODEL = "MODEL"  # replaced by the shipped SDSC-SP2 model's path
SP2 = "SP2"  # replaced by the full SDSC-SP2 log of ../shared/traces (the model's trace)

# (case name, argv after ``hpcgym``, files the command writes into its working folder)
CASES: list[tuple[str, list[str], list[str]]] = [
    ("help", ["--help"], []),
    *[
        (f"help-{c}", [c, "--help"], [])
        for c in (
            "simulate policies predictors machines demo convert compare reproduce generate study "
            "evaluate train sweep waitpred predict-eval mold"
        ).split()
    ],
    ("help-train-maskable-ppo", ["train", "maskable-ppo", "--help"], []),
    ("policies", ["policies"], []),
    ("predictors", ["predictors"], []),
    ("machines", ["machines"], []),
    ("demo", ["demo"], []),
    ("simulate-easy", ["simulate", "--jobs", "3000", "--policy", "easy", "--json"], []),
    ("simulate-easypp", ["simulate", "--jobs", "3000", "--policy", "easy++", "--json"], []),
    ("simulate-sjf-table", ["simulate", "--jobs", "3000", "--policy", "sjf", "--predictor", "real"], []),
    (
        "simulate-via-env",
        ["simulate", "--jobs", "1500", "--policy", "easy", "--via-env", "--extra", "all", "--json"],
        [],
    ),
    (
        "simulate-schedule",
        ["simulate", "--jobs", "800", "--policy", "fcfs", "--schedule-out", "sched.swf", "--json"],
        ["sched.swf"],
    ),
    (
        "simulate-eurora-prb",
        ["simulate", "--machine", "eurora", "--workload", SAMPLE, "--policy", "prb", "--json"],
        [],
    ),
    (
        "simulate-eurora-hcp",
        [
            "simulate",
            "--machine",
            "eurora",
            "--workload",
            SAMPLE,
            "--jobs",
            "60",
            "--policy",
            "hcp3",
            "--json",
        ],
        [],
    ),
    ("simulate-replay", ["simulate", "--jobs", "2000", "--policy", "replay", "--json"], []),
    ("convert", ["convert", "BUNDLED", "t.csv"], ["t.csv"]),
    ("convert-table", ["convert", SAMPLE, "t.csv", "--machine", "eurora"], ["t.csv"]),
    (
        "compare",
        [
            "compare",
            "--jobs",
            "2000",
            "--policies",
            "fcfs,easy,sjf",
            "--predictors",
            "walltime,real",
            "--json",
            "--csv",
            "c.csv",
        ],
        ["c.csv"],
    ),
    (
        "reproduce-tsafrir2007",
        ["reproduce", "tsafrir2007", "--trace", "BUNDLED", "--jobs", "2000", "--json"],
        [],
    ),
    ("generate", ["generate", "eurora", "--jobs", "400", "--seed", "3", "-o", "g.csv", "--stats"], ["g.csv"]),
    (
        "study-galleguillos2017",
        ["study", "galleguillos2017", "--jobs", "300", "--no-plots", "--json", "-o", "s17"],
        ["s17/galleguillos2017.json"],
    ),
    (
        "study-galleguillos2019",
        ["study", "galleguillos2019", "--workload", SAMPLE, "--no-plots", "--json", "-o", "s19"],
        [],
    ),
    (
        "evaluate",
        [
            "evaluate",
            "--policies",
            "easy,sjf,f1-bf",
            "--window-jobs",
            "256",
            "--windows",
            "4",
            "--json",
            "--no-progress",
        ],
        [],
    ),
    (
        "evaluate-model",
        [
            "evaluate",
            "--model",
            MODEL,
            "--trace",
            "SP2",
            "--policies",
            "easy,f2-bf",
            "--reference",
            "f2-bf",
            "--windows",
            "3",
            "--json",
            "--no-progress",
        ],
        [],
    ),
    (
        "evaluate-model-hpc2n",
        [
            "evaluate",
            "--model",
            "MODEL_HPC2N",
            "--trace",
            "HPC2N",
            "--policies",
            "easy,saf-bf",
            "--windows",
            "3",
            "--json",
            "--no-progress",
        ],
        [],
    ),
    (
        "train",
        [
            "train",
            "maskable-ppo",
            "--total-timesteps",
            "256",
            "--n-steps",
            "128",
            "--batch-size",
            "64",
            "--window-jobs",
            "64",
            "--out",
            "run",
            "--no-progress-bar",
        ],
        [],
    ),
    (
        "sweep",
        [
            "sweep",
            "--dispatchers",
            "easy,fcfs",
            "--predictors",
            "preset,real",
            "--trace",
            "BUNDLED",
            "--jobs",
            "1000",
            "--processes",
            "1",
            "--json",
            "--no-progress",
            "-o",
            "sw",
        ],
        ["sw/results.csv"],
    ),
    ("sweep-dry-run", ["sweep", "--preset", "tsafrir-load", "--dry-run"], []),
    (
        "waitpred",
        [
            "waitpred",
            "--method",
            "ibl,qbets",
            "--no-tune",
            "--history-first",
            "1",
            "--validation-first",
            "2001",
            "--validation-jobs",
            "300",
            "--test-first",
            "2301",
            "--test-last",
            "2800",
            "--json",
            "w.json",
            "--csv",
            "w.csv",
            "--no-progress",
        ],
        ["w.json", "w.csv"],
    ),
    (
        "predict-eval",
        ["predict-eval", "--test-from", "3001", "--test-jobs", "500", "--json", "--no-progress"],
        [],
    ),
    (
        "mold",
        ["mold", "--history", "2000", "--jobs", "400", "--json", "m.json", "--out", "mo", "--no-progress"],
        ["m.json", "mo/jobs.csv"],
    ),
    (
        "mold-delay",
        [
            "mold",
            "--mode",
            "delay",
            "--history",
            "2000",
            "--jobs",
            "300",
            "--json",
            "d.json",
            "--no-progress",
        ],
        ["d.json"],
    ),
]

BUNDLED_DATA = ("REPO/hpcgym/workloads/data/", "REPO/hpcgym/data/examples/", "REPO/hpcgym/data/")
"""The bundled data's folders, before and after issue 22's layered packages."""

TIMING_KEYS = re.compile(
    r"(^|_)(seconds?|secs?|per_second|per_s|elapsed|wall|wallclock|duration_s|runtime_s|steps_per_s"
    r"|time_s|timestamp|started|finished|date|created|fps|decision_time\w*|sim_seconds|jobs_per_second"
    r"|time_elapsed|total_time|cpu_s|python|platform|host|commit|git\w*|\w*ms)$"
)
"""JSON keys whose values are measurements of time or of the machine, not results."""

_TEXT_TIMING = re.compile(
    r"(\d[\d,.]*\s*(s|ms|CPU-µs|µs|sec|seconds|core-minutes|min|jobs/s|steps/s|decisions/s)\b)"
    r"|(in \d[\d.]*\s*s)|(\d\d:\d\d:\d\d)"
)


def normalize_json(value: Any) -> Any:
    """``value`` without the keys :data:`TIMING_KEYS` matches, at any depth.

    A finding decided on timings (a ``holds`` beside a timing key, e.g. 002's "v1 much
    faster than v0" on dispatch milliseconds) loses its verdict too: it is the machine's.
    """
    if isinstance(value, dict):
        timed = any(TIMING_KEYS.search(str(k)) for k in value)
        return {
            k: normalize_json(v)
            for k, v in value.items()
            if not TIMING_KEYS.search(str(k)) and not (timed and k == "holds")
        }
    if isinstance(value, list):
        return [normalize_json(v) for v in value]
    return value


def normalize_text(text: str, workdir: str) -> str:
    """``text`` as JSON without timing keys if it is JSON, else with timings masked."""
    text = text.replace(workdir, "WORKDIR").replace(str(REPO), "REPO")
    for data in BUNDLED_DATA:  # where the bundled files live is not behaviour
        text = text.replace(data, "DATA/")
    try:
        return json.dumps(normalize_json(json.loads(text)), indent=1, sort_keys=True) + "\n"
    except ValueError:
        pass
    lines = []
    timed_table = False  # the report table's last two columns are sim [s] and jobs/s
    for line in text.splitlines():
        stripped = line.strip()
        if re.search(r"sim \[s\]\s+jobs/s$", stripped):  # the columns widen with the figures
            timed_table = True
        elif not stripped:
            timed_table = False
        if timed_table:
            line = " ".join(line.split()[:-2])
        if stripped.startswith(("{", "[")):
            try:
                line = json.dumps(normalize_json(json.loads(stripped)), sort_keys=True)
            except ValueError:
                pass
        lines.append(_TEXT_TIMING.sub("<T>", line))
    return "\n".join(lines) + "\n"


def normalize_csv(text: str, workdir: str) -> str:
    """A CSV without the columns :data:`TIMING_KEYS` matches."""
    rows = text.replace(workdir, "WORKDIR").splitlines()
    if not rows:
        return ""
    head = rows[0].split(",")
    keep = [i for i, name in enumerate(head) if not TIMING_KEYS.search(name)]
    if len(keep) == len(head):
        return text.replace(workdir, "WORKDIR")
    out = []
    for row in rows:  # no quoted commas in the recorded CSVs' timing columns; good enough here
        cells = row.split(",")
        out.append(",".join(cells[i] for i in keep if i < len(cells)))
    return "\n".join(out) + "\n"


def substitute(argv: list[str]) -> list[str]:
    bundled = REPO / "hpcgym"
    sample = next(bundled.rglob("eurora-sample.csv"))
    trace = next(bundled.rglob("SDSC-SP2-1998-4.2-cln-first10k.swf.gz"))
    table = {
        SAMPLE: str(sample),
        MODEL: str(REPO / "models" / "sdsc-sp2-policy.zip"),
        "BUNDLED": str(trace),
        SP2: str(REPO.parent / "shared" / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"),
        "MODEL_HPC2N": str(REPO / "models" / "hpc2n-policy.zip"),
        "HPC2N": str(REPO.parent / "shared" / "traces" / "HPC2N-2002-2.2-cln.swf.gz"),
    }
    return [table.get(a, a) for a in argv]


def run_case(name: str, argv: list[str], files: list[str]) -> dict[str, str]:
    """Run one case in a fresh folder: ``{file name: normalized content}``."""
    workdir = tempfile.mkdtemp(prefix=f"cli-{name}-")
    try:
        env = dict(os.environ, COLUMNS="100", NO_COLOR="1", PYTHONHASHSEED="0")
        proc = subprocess.run(
            [sys.executable, "-m", "hpcgym", *substitute(argv)],
            cwd=workdir,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        out = {f"{name}.out": normalize_text(proc.stdout, workdir) + f"exit {proc.returncode}\n"}
        if proc.returncode != 0:
            out[f"{name}.err"] = proc.stderr[-4000:]
        for f in files:
            path = Path(workdir) / f
            text = path.read_text() if path.is_file() else "(missing)\n"
            key = f"{name}.{f.replace('/', '_')}"
            text = (
                normalize_csv(text, workdir)
                if f.endswith(".csv")
                else normalize_text(text, workdir)
                if f.endswith(".json")
                else text
            )
            if len(text) > 65536:  # a big file is kept as its hash
                text = f"{len(text.splitlines())} lines, sha256 {hashlib.sha256(text.encode()).hexdigest()}\n"
            out[key] = text
        return out
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("-o", "--out", type=Path, help="record into this folder")
    g.add_argument("--check", type=Path, help="compare with the recording in this folder")
    ap.add_argument("--only", nargs="*", help="only these cases")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.only or c[0] in args.only]
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda c: (c[0], run_case(*c)), cases))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, files in results:
            for fname, text in files.items():
                (args.out / fname).write_text(text)
            print(f"{name}: {', '.join(files)}")
        return 0
    changed = 0
    for name, files in results:
        case_changed = 0
        for fname, text in files.items():
            if fname.endswith(".err"):
                print(f"{name}: failed\n{text}")
                case_changed += 1
                continue
            path = args.check / fname
            old = path.read_text() if path.is_file() else ""
            if old != text:
                case_changed += 1
                diff = difflib.unified_diff(old.splitlines(), text.splitlines(), "was", "now", lineterm="")
                print("\n".join(list(diff)[:60]))
        print(f"{name}: {'CHANGED' if case_changed else 'ok'}")
        changed += case_changed
    print(f"{len(results)} cases, {changed} files changed")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
