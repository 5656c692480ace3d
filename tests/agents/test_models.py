"""The agents shipped in ``models/``: small, self-describing, and playable by ``hpcgym evaluate``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from hpcgym.agents.models import read_metadata
from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.evaluate import evaluate
from hpcgym.workloads import load_default

MODELS = Path(__file__).resolve().parents[2] / "models"
SHIPPED = {"sdsc-sp2-policy.zip": "SDSC-SP2-1998-4.2-cln", "hpc2n-policy.zip": "HPC2N-2002-2.2-cln"}
ON_THE_BUNDLED_SLICE = {"sdsc-sp2-policy.zip": "train", "hpc2n-policy.zip": "transfer"}
"""Where the bundled slice's windows lie for each model: SDSC-SP2's first jobs are its training jobs."""


def test_every_shipped_model_is_listed_and_small() -> None:
    assert sorted(p.name for p in MODELS.glob("*.zip")) == sorted(SHIPPED)
    for name in SHIPPED:
        assert (MODELS / name).stat().st_size < 1_000_000


@pytest.mark.parametrize(("name", "trace"), SHIPPED.items())
def test_a_shipped_model_says_how_it_was_made_and_where_windows_lie_for_it(name: str, trace: str) -> None:
    meta = read_metadata(MODELS / name)
    assert meta is not None and meta["algorithm"] == "maskable-ppo" and meta["git_dirty"] is False
    env = meta["env"]
    assert env["trace_name"] == trace and env["kwargs"]["mode"] == "policy"
    assert meta["training"]["seed"] == 1 and meta["training"]["total_timesteps"] == 100_000
    # issue 24.1: its trace's content hash and split ranges (models/add_trace_provenance.py)
    assert len(env["trace_sha256"]) == 64 and env["splits"]["test"]["jobs"][1] == env["trace_jobs"]
    # the bundled slice, not the model's trace: the test needs no trace file. Its first jobs are
    # SDSC-SP2's training jobs: a test split there is an error for that model, --split train is labelled
    slice_ = load_default().window(3000)
    if ON_THE_BUNDLED_SLICE[name] == "train":
        with pytest.raises(InvalidConfigError, match="test windows hold jobs it was trained or validated on"):
            evaluate([str(MODELS / name)], slice_, window_jobs=200, n_resamples=99)
    ev = evaluate([str(MODELS / name)], slice_, split="train", window_jobs=200, windows=2, n_resamples=99)
    assert ev.config["model_windows"][Path(name).stem]["relation"] == ON_THE_BUNDLED_SLICE[name]
    assert ev.config["held_out"] is False
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["invalid_rate"] == 0 and agent["windows"] == 2
    policies = env["kwargs"]["policies"]
    assert sum(n.startswith(f"{Path(name).stem} (policy mode) picked") for n in ev.notes) == 1
    assert all(sum(r["picks"].values()) == r["steps"] and set(r["picks"]) == set(policies)
               for r in ev.per_window[Path(name).stem])  # fmt: skip
