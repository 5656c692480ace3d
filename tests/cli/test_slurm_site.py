"""A Slurm site end to end: its machine from ``from-slurm``, its log converted for it, every preset run
on the pair, ``replay`` keeping the logged starts, and the schedule drawn (docs/WORKLOADS.md, "The
sample log and its site, end to end")."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from checks import run_cli
from conftest import CP_PRESETS, quick

from hpcgym.baselines import policy_specs
from hpcgym.machine import Machine
from hpcgym.sim import read_schedule
from hpcgym.workloads import Workload, read_jobs

ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "hpcgym" / "machine" / "data" / "slurm-nodes.txt"
PARTITIONS = ROOT / "hpcgym" / "machine" / "data" / "slurm-partitions.txt"
LOG = ROOT / "hpcgym" / "workloads" / "data" / "slurm-sample.sacct"
TABLE = ".parquet" if importlib.util.find_spec("pyarrow") is not None else ".csv"


def build_site(folder: Path, nodes: Path = NODES) -> tuple[Path, Path]:
    """``from-slurm`` then ``convert --from sacct`` into ``folder``: (machine file, job table)."""
    machine, jobs = folder / "site.toml", folder / f"site-jobs{TABLE}"
    argv = ["machines", "from-slurm", str(nodes), "--partitions", str(PARTITIONS), "-o", str(machine)]
    code, _, err = run_cli(*argv)
    assert code == 0, err
    argv = ["convert", "--from", "sacct", str(LOG), str(jobs), "--machine", str(machine)]
    code, out, err = run_cli(*argv, "--timezone", "Europe/Berlin")
    assert code == 0, err
    assert "wrote 30 jobs" in out and "queue not on the machine" not in err
    return machine, jobs


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    return build_site(tmp_path_factory.mktemp("site"))


def simulate(machine: Path, jobs: Path, policy: str, *extra: str) -> dict:
    argv = ["simulate", "--machine", str(machine), "--workload", str(jobs), "--policy", policy]
    code, out, err = run_cli(*argv, "--json", "--no-progress", *extra)
    assert code == 0, err
    assert "Traceback" not in err
    return json.loads(out)


def logged_starts_with_room(w: Workload, m: Machine) -> int:
    """How many jobs fit the machine's nodes at their logged start, the log's jobs placed as logged.

    Independent of the engine and its allocator: the jobs' logged intervals in time order (ends
    before starts at one instant), each chunk first-fit on the nodes' free resources. A job
    that does not fit is counted out and not placed.
    """
    none = np.zeros(m.n_nodes, dtype=np.int64)  # a resource of the table the machine lacks (mics)
    free = np.column_stack(
        [m.capacity[:, m.resources.index(r)] if r in m.resources else none for r in w.resources]
    ).astype(np.int64)
    start = w.submit + w.log_wait
    events = sorted(
        [(float(start[j] + w.runtime[j]), 0, j) for j in range(len(w))]
        + [(float(start[j]), 1, j) for j in range(len(w))]
    )
    held: dict[int, list[int]] = {}
    fits = 0
    for _, is_start, j in events:
        if not is_start:
            for node in held.pop(j, []):
                free[node] += w.per_chunk[j]
            continue
        nodes = []
        for _ in range(int(w.chunks[j])):
            room = np.flatnonzero((free >= w.per_chunk[j]).all(axis=1))
            if not len(room):
                break
            free[room[0]] -= w.per_chunk[j]
            nodes.append(int(room[0]))
        if len(nodes) == w.chunks[j]:
            held[j], fits = nodes, fits + 1
        else:
            for node in nodes:
                free[node] += w.per_chunk[j]
    return fits


@pytest.mark.parametrize("policy", list(policy_specs()))
def test_every_preset_runs_on_the_site(site, policy):
    if policy in CP_PRESETS and importlib.util.find_spec("ortools") is None:
        pytest.skip("the CP presets need ortools (pip install 'hpcgym[cp]')")
    row = simulate(*site, quick(policy))
    assert row["jobs_read"] == row["jobs_simulated"] == 30 and row["procs"] == 1472
    assert row["jobs_dropped"] == 0 and np.isfinite(row["mean_wait_s"])


def test_replay_keeps_every_logged_start_the_site_has_room_for(site, tmp_path):
    machine, jobs = site
    out = tmp_path / "replay.csv"
    r = simulate(machine, jobs, "replay", "--schedule-out", str(out))["replay"]
    m = Machine.from_file(machine)
    w = read_jobs(jobs, m)
    room = logged_starts_with_room(w, m)
    assert room == len(w) == 30  # a consistent log: the site holds all of it
    assert r["jobs"] == 30 and r["exact_jobs"] == room and r["delayed_jobs"] == 0
    schedule = read_schedule(out)
    logged = dict(zip(w.job_id.tolist(), (w.submit + w.log_wait).tolist(), strict=True))
    assert [logged[j] for j in schedule.job_id.tolist()] == schedule.start.tolist()
    argv = ["simulate", "--machine", str(machine), "--workload", str(jobs), "--policy", "replay"]
    code, text, _ = run_cli(*argv, "--no-progress")
    assert code == 0 and "replay: 30 of 30 jobs (100.00 %) started at their logged start" in text


def test_replay_on_a_smaller_site_counts_what_it_could_not_keep(tmp_path):
    lines = [
        line
        for line in NODES.read_text().splitlines()
        if line.split()[0]
        in {"NodeName=cn001", "NodeName=cn002", "NodeName=gpu01", "NodeName=gpu02", "NodeName=fat1"}
    ]
    small = tmp_path / "small-nodes.txt"
    small.write_text("\n".join(lines) + "\n")
    machine, jobs = build_site(tmp_path, small)
    r = simulate(machine, jobs, "replay")["replay"]
    m = Machine.from_file(machine)
    room = logged_starts_with_room(read_jobs(jobs, m), m)
    assert r["exact_jobs"] + r["delayed_jobs"] == r["jobs"] == 30
    assert 0 < r["delayed_jobs"] and r["exact_jobs"] <= room < 30  # 27 and 28: a delay holds nodes longer


def test_the_easy_schedule_is_drawn_by_user(site, tmp_path):
    pytest.importorskip("matplotlib")
    machine, jobs = site
    schedule = tmp_path / "easy.csv"
    simulate(machine, jobs, "easy", "--schedule-out", str(schedule))
    picture = tmp_path / "easy.png"
    argv = ["plot", str(schedule), "--workload", str(jobs), "--machine", str(machine), "--color-by", "user"]
    code, _, err = run_cli(*argv, "-o", str(picture))
    assert code == 0 and f"wrote {picture}" in err and "Traceback" not in err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
