"""003's molding with a work-conserving run time model (issue 24, point 6): Amdahl beside 003's rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import build_workload

from hpcgym.baselines import MoldingConfig, amdahl_factor, run_managed
from hpcgym.common.errors import InvalidConfigError
from hpcgym.workloads import load_default

SMALL = {"history": 1500, "jobs": 250, "wait_predictor": "qbets"}


@pytest.fixture(scope="module")
def slice_1750():
    return load_default().window(1750)


def _tiny():
    """User 1 alternates size 1 (10 s) and size 4 (1000 s); the managed job is a size-4 job of 1000 s."""
    jobs = []
    t = 0.0
    for _ in range(12):
        jobs += [(t, 10.0, 1, 20.0, 1), (t + 1, 1000.0, 4, 2000.0, 1)]
        t += 2000.0
    jobs.append((t, 1000.0, 4, 2000.0, 1))
    return build_workload(jobs, 4), len(jobs) - 1


def test_amdahl_factor_by_hand():
    assert amdahl_factor(4, 1, 0.0) == 4.0 and amdahl_factor(1, 4, 0.0) == 0.25
    # f = 0.5: T(n) = 0.5 + 0.5 / n; T(1) / T(4) = 1 / 0.625
    assert amdahl_factor(4, 1, 0.5) == pytest.approx(1.6)
    assert amdahl_factor(7, 7, 0.3) == 1.0


def test_amdahl_keeps_the_molded_jobs_work_where_003s_rule_removes_it():
    w, history = _tiny()
    paper = run_managed(w, MoldingConfig(history=history, jobs=1, wait_predictor="qbets"))
    assert paper.size.tolist() == [1] and paper.runtime.tolist() == [10.0]  # a size-1 job's run time
    assert paper.cpu_hours["managed"] == pytest.approx(10.0 / 3600)
    assert paper.cpu_hours["baseline"] == pytest.approx(4000.0 / 3600)
    kept = run_managed(
        w, MoldingConfig(history=history, jobs=1, wait_predictor="qbets", runtime_model="amdahl")
    )
    # the same choice (the manager's beliefs do not change), now 4 x 1000 s on one processor
    assert kept.size.tolist() == [1] and kept.runtime.tolist() == [4000.0]
    assert kept.cpu_hours["managed"] == pytest.approx(kept.cpu_hours["baseline"])
    assert kept.schedule is not None and kept.schedule.workload.estimate[-1] == 8000.0  # scaled alike
    s = kept.summary()
    assert s["runtime_model"] == "amdahl f=0" and s["cpu_hours"] == pytest.approx(4000.0 / 3600)
    # alone on the machine, the job keeps 1 of 4 processors busy from its submission to its end
    assert s["period_utilization"] == pytest.approx(0.25) and s["baseline_period_utilization"] == 1.0


def test_amdahl_with_a_serial_fraction_charges_the_lost_speedup(slice_1750):
    r = run_managed(slice_1750, MoldingConfig(runtime_model="amdahl", serial_fraction=0.2, **SMALL))
    f = 0.2
    moved = r.size != r.original_size
    assert moved.sum() > 20
    expect = r.baseline_runtime * (f + (1 - f) / r.size) / (f + (1 - f) / r.original_size)
    np.testing.assert_allclose(r.runtime[moved], expect[moved])
    work, work0 = r.size * r.runtime, r.original_size * r.baseline_runtime
    grown, shrunk = r.size > r.original_size, r.size < r.original_size
    assert (work[grown] >= work0[grown] - 1e-6).all() and (work[shrunk] <= work0[shrunk] + 1e-6).all()
    np.testing.assert_array_equal(r.runtime[~moved], r.baseline_runtime[~moved])


def test_linear_amdahl_conserves_every_jobs_work(slice_1750):
    r = run_managed(slice_1750, MoldingConfig(runtime_model="amdahl", **SMALL))
    assert r.molded > 20
    np.testing.assert_allclose(r.size * r.runtime, r.original_size * r.baseline_runtime)
    assert r.cpu_hours["managed"] == pytest.approx(r.cpu_hours["baseline"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"runtime_model": "downey"}, "runtime_model"),
        ({"runtime_model": "amdahl", "serial_fraction": 1.5}, "serial_fraction"),
        ({"serial_fraction": 0.1}, "needs runtime_model='amdahl'"),
    ],
)
def test_bad_runtime_model_config(kwargs, match):
    with pytest.raises(InvalidConfigError, match=match):
        MoldingConfig(**kwargs)


def test_cli_runtime_model_and_work_columns(tmp_path, capsys):
    from hpcgym.cli import main

    argv = ["mold", "--no-progress", "--history", "1500", "--jobs", "150", "--wait-predictor", "qbets"]
    assert (
        main([*argv, "--runtime-model", "amdahl", "--serial-fraction", "0.1", "--json", str(tmp_path / "a")])
        == 0
    )
    out = capsys.readouterr().out
    assert "EASY CPU-h" in out and "managed CPU-h" in out and "amdahl f=0.1" in out
    data = json.loads((tmp_path / "a").read_text())
    assert data["config"]["runtime_model"] == "amdahl" and data["config"]["serial_fraction"] == 0.1
    assert data["cpu_hours"] > 0 and 0 < data["period_utilization"] <= 1
    assert main([*argv, "--serial-fraction", "0.1"]) == 2
    assert "--runtime-model amdahl" in capsys.readouterr().err
