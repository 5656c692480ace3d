"""Queue-wait prediction: APQ, IBL and QBETS predictions per second over 003's test set.

The test set of 003 section V on HPC2N (jobs 20,001-60,000: 40,000 jobs), 003's
largest history (6,000 jobs) and the default parameters (no tuning).
``features_seconds`` is the one sweep over the log that builds every job's Table I
histograms and Table II features; the predictions per second exclude it. On a shared
machine the CPU time (``predictions_per_cpu_second``) is the steadier figure.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench_engine import present_traces  # the same trace lookup as the engine figures

from hpcgym.predict import APQConfig, IBLConfig, LogState, Protocol, QBETSConfig, predict_waits

TRACES = ("HPC2N-2002-2.2-cln.swf.gz",)
CONFIGS = {"apq": APQConfig(), "ibl": IBLConfig(), "qbets": QBETSConfig()}


def run(traces: Path) -> list[dict]:
    rows: list[dict] = []
    for w in present_traces(traces, TRACES):
        state = LogState.from_workload(w)
        _, test, _ = Protocol().ranges(len(state), state.name)
        t0 = time.perf_counter()
        state.features(int(test[-1]) + 1, APQConfig().bins, APQConfig().max_time_s)
        features = time.perf_counter() - t0
        for method, cfg in CONFIGS.items():
            t0, c0 = time.perf_counter(), time.process_time()
            p = predict_waits(state, method, config=cfg, tune_on_validation=False)
            secs = time.perf_counter() - t0  # the features are kept in ``state``: not built again
            cpu = time.process_time() - c0
            rows.append(
                {
                    "what": f"{method} predictions per second (history {cfg.history})",
                    "trace": state.name,
                    "jobs": len(p.jobs),
                    "features_seconds": features,
                    "seconds": secs,
                    "cpu_seconds": cpu,
                    "predictions_per_second": len(p.jobs) / secs,
                    "predictions_per_cpu_second": len(p.jobs) / cpu,
                    "aae_hours": p.aae_hours,
                }
            )
    return rows
