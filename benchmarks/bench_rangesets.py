"""RangeSets (003 section III): predictions per second over 40,000 test jobs.

The rangeSet predictor is fed each trace's logged schedule from its first job on
(:func:`hpcgym.predict.evaluate_runtime_predictor`, 003's protocol: history from the
start, test jobs 20,001 to 60,000); the figure is test jobs per wall-clock second of
the test period (every event of that period, load bookkeeping and refits included).
SR, C and AAE come with it, so a speed-up that changes the predictions shows.
"""

from __future__ import annotations

from pathlib import Path

from bench_engine import present_traces  # the same trace lookup as the engine figures

from hpcgym.predict import evaluate_runtime_predictor

TRACES = ("SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz")


def run(traces: Path) -> list[dict]:
    rows: list[dict] = []
    for w in present_traces(traces, TRACES):
        ev = evaluate_runtime_predictor(w, "rangeset", 20_000, 40_000)
        m = ev.metrics()
        rows.append(
            {
                "what": "rangeset predictions",
                "trace": w.name,
                "test_jobs": m["test_jobs"],
                "seconds": ev.test_seconds,
                "predictions_per_second": m["test_jobs"] / ev.test_seconds,
                "SR": m["SR"],
                "C": m["C"],
                "AAE_min": m["AAE_min"],
            }
        )
    return rows
