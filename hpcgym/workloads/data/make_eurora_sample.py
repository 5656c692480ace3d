"""Write ``eurora-sample.csv``: an ILLUSTRATIVE job table for the Eurora machine preset.

This is a small, hand-made sample of 400 jobs, seeded and reproducible, shaped after the
workload figures Galleguillos et al. (001) and Borghesi et al. (002) publish for Eurora
(the trace itself is not public): about 93 % short jobs (< 1 h), 6.5 % medium (1-12 h)
and 0.5 % long; about 95 % on one node and 62 % on one core; 15 % asking for GPUs and
under 1 % for MICs; queue shares about 50 % debug, 41 % parallel, 6 % reservation and
3 % np_longpar; bursty arrivals (median inter-arrival 0 s, mean about 60 s). It is NOT a
calibrated generator and its jobs are no measurement: use it to try the job-table
format and the Eurora machine, not to draw conclusions.

Run from the repository root to write the file again (the result is byte-identical)::

    python hpcgym/workloads/data/make_eurora_sample.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from hpcgym.common.files import write_text_atomic

SEED = 395
"""Of the seeds 1-399, the one whose sample comes closest to the published figures."""
JOBS = 400
QUEUES = {"debug": 0.50, "parallel": 0.41, "reservation": 0.06, "np_longpar": 0.03}
MAX_WALLTIME = {"debug": 1800, "parallel": 14400, "reservation": 86400, "np_longpar": 28800}
OUT = Path(__file__).with_name("eurora-sample.csv")


def make_sample(jobs: int = JOBS, seed: int = SEED) -> list[dict[str, object]]:
    """The sample's rows, one dict per job, in submit order."""
    rng = np.random.default_rng(seed)
    # bursts: more than half the jobs arrive in the same second as the one before
    gaps = np.where(rng.random(jobs) < 0.6, 0.0, rng.exponential(60 / 0.4, jobs))
    submit = np.floor(np.cumsum(gaps)).astype(int)
    submit -= submit[0]
    queues = rng.choice(list(QUEUES), size=jobs, p=list(QUEUES.values()))
    users = [f"user{u:02d}" for u in range(1, 25)]
    weights = 1 / np.arange(1, len(users) + 1)  # a few users submit most jobs
    rows = []
    for j in range(jobs):
        queue = str(queues[j])
        limit = MAX_WALLTIME[queue]
        u = int(rng.choice(len(users), p=weights / weights.sum()))
        # run time: short in every queue; medium and long only where the queue allows
        draw = rng.random()
        if queue == "reservation" and draw < 0.08:
            runtime = int(rng.uniform(12, 20) * 3600)  # long
        elif queue != "debug" and draw < 0.15:
            runtime = int(rng.uniform(3600, min(limit, 12 * 3600) * 0.9))  # medium
        else:
            runtime = int(min(rng.lognormal(np.log(240), 1.1), min(limit, 3600) - 60))  # short
        runtime = max(runtime, 1)
        # wall-time: rounded up to 5 minutes with some slack, at most the queue's; 1 in 10 blank
        asked = min(limit, int(np.ceil(runtime * rng.uniform(1.2, 4.0) / 300) * 300))
        walltime: object = "" if rng.random() < 0.1 else asked
        # request: one node for ~95 %, one core for ~62 %
        r = rng.random()
        if r < 0.62:
            chunks, cores = 1, 1
        elif r < 0.95:
            chunks, cores = 1, int(rng.choice([2, 4, 8, 16]))
        else:
            chunks, cores = int(rng.integers(2, 5)), int(rng.choice([8, 16]))
        a = rng.random()
        gpus = int(rng.integers(1, 3)) if a < 0.15 else 0
        mics = int(rng.integers(1, 3)) if 0.15 <= a < 0.157 else 0
        mem_gb = int(min(16, max(1, cores * rng.choice([0.5, 1, 1, 2]))))
        rows.append(
            {
                "job_id": 1000 + j,
                "submit": int(submit[j]),
                "runtime": runtime,
                "walltime": walltime,
                "user": users[u],
                "group": f"project{u % 6 + 1}",
                "job_name": f"{users[u]}-{['sim', 'train', 'post', 'test'][int(rng.integers(0, 4))]}",
                "queue": queue,
                "chunks": chunks,
                "cores": cores,
                "gpus": gpus,
                "mics": mics,
                "mem_gb": mem_gb,
                "status": 1,
            }
        )
    return rows


def write_sample(path: Path = OUT, seed: int = SEED) -> None:
    """Write the sample as a job table with a header naming the machine and what it is."""
    rows = make_sample(seed=seed)
    lines = [
        "# Machine: eurora",
        "# Note: ILLUSTRATIVE sample, not a measurement nor a calibrated generator; "
        f"written by make_eurora_sample.py (seed {SEED})",
        ",".join(rows[0]),
    ]
    lines += [",".join(str(v) for v in row.values()) for row in rows]
    write_text_atomic(path, "\n".join(lines) + "\n")


if __name__ == "__main__":
    write_sample(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
