"""The agents shipped in ``models/``: small, self-describing, and playable by ``hpcgym evaluate``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from hpcgym.agents.models import read_metadata
from hpcgym.experiments.evaluate import evaluate
from hpcgym.workloads import load_default

MODELS = Path(__file__).resolve().parents[2] / "models"
SHIPPED = {"sdsc-sp2-policy.zip": "SDSC-SP2-1998-4.2-cln", "hpc2n-policy.zip": "HPC2N-2002-2.2-cln"}


def test_every_shipped_model_is_listed_and_small() -> None:
    assert sorted(p.name for p in MODELS.glob("*.zip")) == sorted(SHIPPED)
    for name in SHIPPED:
        assert (MODELS / name).stat().st_size < 1_000_000


@pytest.mark.parametrize(("name", "trace"), SHIPPED.items())
def test_a_shipped_model_says_how_it_was_made_and_plays_held_out_windows(name: str, trace: str) -> None:
    meta = read_metadata(MODELS / name)
    assert meta is not None and meta["algorithm"] == "maskable-ppo" and meta["git_dirty"] is False
    env = meta["env"]
    assert env["trace_name"] == trace and env["kwargs"]["mode"] == "policy"
    assert meta["training"]["seed"] == 1 and meta["training"]["total_timesteps"] == 100_000
    # the bundled slice, not the model's trace: the test needs no trace file
    ev = evaluate([str(MODELS / name)], load_default().window(3000), window_jobs=200, n_resamples=99)
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["invalid_rate"] == 0 and agent["windows"] == 2
    policies = env["kwargs"]["policies"]
    assert sum(n.startswith(f"{Path(name).stem} (policy mode) picked") for n in ev.notes) == 1
    assert all(sum(r["picks"].values()) == r["steps"] and set(r["picks"]) == set(policies)
               for r in ev.per_window[Path(name).stem])  # fmt: skip
