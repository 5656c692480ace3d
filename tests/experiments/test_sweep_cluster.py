"""Sweeps on a two-node Ray cluster on this host that loses its worker node mid-way (issue 27, point 9).

The cluster is started here as a user would (docs/SCALING.md): ``ray start --head --port
P --num-cpus 1`` and a second node ``ray start --address 127.0.0.1:P --num-cpus 1``, both
with ``RAY_AUTH_MODE=token`` (Ray 2.5x and later start clusters with token authentication).
With one CPU a node, two runs at a time means one on each node; once the first results
are in, the worker node's raylet and every process under it are killed (SIGKILL, a node
lost without notice). Then:

* a simulation sweep (``hpcgym sweep --backend ray --address 127.0.0.1:P --json``) ends
  with exit code 0, its stdout parses as JSON, and its table holds every run exactly once,
  equal (timing columns aside) to the table of the same sweep run in one local process;
* a training sweep (4 tiny Ray Tune trials, after a new worker node is started) ends with
  exit code 0 and its table holds every trial's rows exactly once: the trial on the lost
  node is run again from its start (``TRIAL_RETRIES``);
* before that, ``--dry-run`` counts the cluster's two CPUs, and a driver without
  ``RAY_AUTH_MODE=token`` gets an error naming it (exit code 2, no traceback).

Every process of the cluster is ended in the fixture's teardown (found by the cluster's
temporary folder and port in its command line, and their children); nothing else on the
machine is touched (no ``ray stop``, which would end every Ray on the host). About 5 minutes
on 2 busy cores; marked ``expensive`` (``make bench``).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray.tune", reason="Ray Tune is not installed (pip install 'hpcgym[ray]')")
pytest.importorskip("sb3_contrib", reason="the rl extra is not installed (pip install 'hpcgym[rl]')")

from hpcgym.experiments.sweep import TIMING_COLUMNS, SweepSpec, read_results, run_sweep

pytestmark = pytest.mark.expensive

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"
LOADS = [round(0.5 + 0.01 * i, 2) for i in range(101)]
SIMULATION = ["--dispatchers", "easy,fcfs,sjf", "--loads", ",".join(map(str, LOADS)), "--trace", "bundled"]
SIMULATION += ["--jobs", "3000"]
"""303 runs of a few milliseconds each (the compiled loop): enough that the worker node is
killed while it still has runs to do, however fast a run is."""
RUNS = 3 * len(LOADS)
TRAINING = [
    "--train",
    "maskable-ppo",
    "--seeds",
    "1,2",
    "--train-arg",
    "total_timesteps=1024",
    "--train-arg",
    "window_jobs=64",
    "--train-arg",
    "window_size=8",
    "--train-arg",
    "eval_windows=1",
    "--train-arg",
    "n_steps=128",
    "--train-arg",
    "batch_size=64",
    "--train-grid",
    "learning_rate=[3e-4,1e-3]",
]
"""Four tiny trials (two seeds x two learning rates)."""


def _processes() -> dict[int, tuple[int, str]]:
    """Every process of this host: pid -> (parent pid, command line)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        out[int(entry.name)] = (ppid, cmd)
    return out


def _with_descendants(roots: set[int], procs: dict[int, tuple[int, str]]) -> set[int]:
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, (ppid, _) in procs.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _kill(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


class Cluster:
    """A Ray head and worker node on this host, each with one CPU, token authentication on."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.temp_dir = tempfile.mkdtemp(prefix="hgray", dir="/tmp")  # short: Ray's socket paths
        self.env = {
            **os.environ,
            "RAY_AUTH_MODE": "token",
            "RAY_USAGE_STATS_ENABLED": "0",
            "PYTHONPATH": str(ROOT),  # the workers import this checkout's hpcgym
        }
        self.worker: set[int] = set()

    def mine(self) -> set[int]:
        """Every process of the cluster, with their children."""
        procs = _processes()
        roots = {pid for pid, (_, cmd) in procs.items() if self.temp_dir in cmd or f":{self.port} " in cmd}
        roots.discard(os.getpid())
        return _with_descendants(roots, procs)

    def _ray(self, *args: str) -> None:
        subprocess.run([str(RAY), *args], env=self.env, check=True, timeout=300, capture_output=True)

    def start_head(self) -> None:
        self._ray(
            "start", "--head", "--port", str(self.port), "--num-cpus", "1", "--include-dashboard=false",
            "--disable-usage-stats", "--temp-dir", self.temp_dir, "--node-ip-address", "127.0.0.1",
        )  # fmt: skip

    def start_worker(self) -> None:
        before = self.mine()
        self._ray(
            "start", "--address", self.address, "--num-cpus", "1", "--disable-usage-stats",
            "--node-ip-address", "127.0.0.1",
        )  # fmt: skip
        self.worker = self.mine() - before

    def kill_worker(self) -> None:
        """The worker node lost without notice: its raylet and everything under it, SIGKILL."""
        procs = _processes()
        _kill(_with_descendants(self.worker & set(procs), procs), signal.SIGKILL)
        self.worker = set()

    def stop(self) -> None:
        pids = self.mine()
        _kill(pids, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.mine():
            time.sleep(0.5)
        _kill(self.mine(), signal.SIGKILL)
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if not RAY.exists():
        pytest.skip("the ray command is not installed")
    c = Cluster()
    try:
        c.start_head()
        c.start_worker()
        yield c
    finally:
        c.stop()
        time.sleep(1)
        assert not c.mine(), "a process of the test cluster outlived it"


def _sweep(
    cluster: Cluster, args: list[str], out: Path, env: dict[str, str] | None = None
) -> subprocess.Popen:
    command = [sys.executable, "-m", "hpcgym", "sweep", *args, "--backend", "ray"]
    command += ["--address", cluster.address, "--json", "--no-progress", "-o", str(out)]
    return subprocess.Popen(
        command, cwd=ROOT, env=env or cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _kill_worker_once(cluster: Cluster, proc: subprocess.Popen, started: Any) -> None:
    """Kill the worker node as soon as ``started()`` is true (two runs at once: one on each node)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if started():
            cluster.kill_worker()
            return
        time.sleep(0.2)
    pytest.fail("the sweep ended (or hung) before the worker node could be killed")


def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


def test_the_cluster_is_counted_and_a_missing_token_is_named(cluster: Cluster, tmp_path: Path) -> None:
    dry = _sweep(cluster, [*SIMULATION, "--dry-run"], tmp_path / "dry")
    out, err = dry.communicate(timeout=600)
    assert dry.returncode == 0, err
    assert json.loads(out)["workers"] == 2  # the cluster's CPUs, not this host's cores
    env = {k: v for k, v in cluster.env.items() if k != "RAY_AUTH_MODE"}
    bare = _sweep(cluster, SIMULATION, tmp_path / "bare", env=env)
    out, err = bare.communicate(timeout=600)
    assert bare.returncode == 2 and out == ""
    assert "RAY_AUTH_MODE=token" in err and "Traceback" not in err


def test_a_simulation_sweep_survives_the_loss_of_a_node(cluster: Cluster, tmp_path: Path) -> None:
    table = tmp_path / "sim" / "results.csv"
    proc = _sweep(cluster, SIMULATION, tmp_path / "sim")
    _kill_worker_once(cluster, proc, lambda: table.exists() and len(table.read_text().splitlines()) >= 2)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    summary = json.loads(out)  # Ray's messages about the lost node went to stderr:
    assert "retries remaining, so the task will be retried" in err  # the task lost with the node
    assert (summary["runs"], summary["skipped"] + summary["ran"], summary["left"]) == (RUNS, RUNS, 0)
    rows = read_results(table)
    assert len(rows) == RUNS and len({r["key"] for r in rows}) == RUNS  # every run exactly once
    grid = {"dispatchers": ["easy", "fcfs", "sjf"], "loads": LOADS, "traces": ["bundled"]}
    spec = SweepSpec.from_mapping({**grid, "jobs": 3000})
    local = run_sweep(spec, tmp_path / "local.csv", processes=1, progress=False).rows
    by_key = {r["key"]: r for r in rows}
    assert without_timing([by_key[r["key"]] for r in local]) == without_timing(local)


def test_a_training_sweep_retries_the_trial_of_a_lost_node(cluster: Cluster, tmp_path: Path) -> None:
    cluster.start_worker()
    runs = tmp_path / "train" / "runs"
    proc = _sweep(cluster, TRAINING, tmp_path / "train")
    _kill_worker_once(cluster, proc, lambda: runs.is_dir() and len(list(runs.iterdir())) >= 2)
    out, err = proc.communicate(timeout=1200)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert (summary["trials"], summary["ran"], summary["left"]) == (4, 4, 0)
    # Tune's record: the trial that was on the lost node failed once and was run again
    (state,) = (tmp_path / "train" / "tune").glob("*/experiment_state-*.json")
    failures = [int(n) for n in re.findall(r'num_failures\\?"\s*:\s*(\d+)', state.read_text())]
    assert len(failures) == 4 and sum(failures) >= 1
    with open(tmp_path / "train" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    per_trial: dict[str, list[str]] = {}
    for r in rows:
        per_trial.setdefault(r["key"], []).append(r["policy"])
    assert len(per_trial) == 4
    policies = next(iter(per_trial.values()))
    assert all(sorted(p) == sorted(policies) and len(set(p)) == len(p) for p in per_trial.values())
