"""Behaviour cloning before PPO (``--bc-policy``, hpcgym.agents.bc)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tyro")

from hpcgym.agents import bc, train_maskable_ppo, train_ppo
from hpcgym.agents.common import make_env
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError

TINY = [
    "--total-timesteps", "64", "--n-steps", "32", "--batch-size", "32", "--n-epochs", "1",
    "--window-jobs", "60", "--window-size", "8", "--eval-windows", "2", "--eval-freq", "0",
    "--net-arch", "32", "--no-progress-bar", "--bc-steps", "400", "--bc-epochs", "5",
]  # fmt: skip


def test_policy_mode_clones_the_validation_best_dispatcher_exactly(tmp_path: Path) -> None:
    flags = ["--env-id", "hpcgym/DispatchPolicy-v1", "--policies", "fcfs", "easy", "f2-bf"]
    run = train_maskable_ppo.main([*TINY, *flags, "--bc-policy", "best", "--out", str(tmp_path / "r")])
    cloned = run.behaviour_cloning
    assert cloned is not None
    scores = cloned["validation_scores"]
    assert set(scores) == {"fcfs", "easy", "f2-bf"}
    assert cloned["policy"] == min(scores, key=scores.__getitem__)
    assert cloned["train_accuracy"] == 1.0  # one action to learn
    # a clone that always picks the dispatcher scores exactly as the dispatcher
    first = run.validations[0]
    assert first["timesteps"] == 0
    assert first["mean_bsld"] == pytest.approx(scores[cloned["policy"]], abs=1e-12)
    summary = json.loads((run.out / "training.json").read_text())
    assert summary["behaviour_cloning"]["policy"] == cloned["policy"]
    assert (run.out / "learning_curve.png").stat().st_size > 0
    assert "behaviour cloning of" in run.report()


def test_best_plays_easy_once_for_the_choice_and_the_validation_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpcgym.agents import callbacks

    played: list[str] = []
    real = callbacks.heuristic_window_bsld

    def counting(env, offsets, policy):  # type: ignore[no-untyped-def]
        played.append(policy)
        return real(env, offsets, policy)

    monkeypatch.setattr(callbacks, "heuristic_window_bsld", counting)
    flags = ["--env-id", "hpcgym/DispatchPolicy-v1", "--policies", "fcfs", "easy"]
    run = train_maskable_ppo.main([*TINY, *flags, "--bc-policy", "best", "--out", str(tmp_path / "r")])
    assert sorted(played) == ["easy", "fcfs"]  # EASY's windows are not played a second time
    assert run.behaviour_cloning is not None
    assert run.easy_mean_bsld == run.behaviour_cloning["validation_scores"]["easy"]


def test_job_mode_pretraining_learns_the_dispatchers_choices(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    args = train_maskable_ppo.Args(window_jobs=80, window_size=16, net_arch=(64, 64), progress_bar=False)
    demos = bc.collect(lambda: make_env(args, "train"), "f2-bf", 1500, seed=3, gamma=0.99)
    assert len(demos) >= 1500 and demos.masks[np.arange(len(demos)), demos.actions].all()
    assert (np.diff(demos.episode) >= 0).all() and demos.episode[-1] >= 1
    env = make_env(args, "train")
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=0, device="cpu")
    idx = np.arange(len(demos))
    before = bc.accuracy(model.policy, demos, idx, masked=True)
    summary = bc.pretrain(model, demos, epochs=15, batch_size=128, learning_rate=1e-3, seed=0, masked=True)
    after = bc.accuracy(model.policy, demos, idx, masked=True)
    assert after > before + 0.2 and summary["train_accuracy"] > 0.8
    assert summary["held_out_accuracy"] is not None and summary["held_out_episodes"] >= 1


def test_ppo_without_masks_clones_too(tmp_path: Path) -> None:
    run = train_ppo.main([*TINY, "--bc-policy", "easy", "--out", str(tmp_path / "p")])
    assert run.behaviour_cloning is not None and run.behaviour_cloning["policy"] == "easy"
    assert run.validations[0]["timesteps"] == 0 and run.best_model is not None


def test_returns_are_the_discounted_rest_of_each_episode() -> None:
    args = train_maskable_ppo.Args(window_jobs=30, window_size=8, progress_bar=False)
    demos = bc.collect(lambda: make_env(args, "train"), "easy", 10, seed=1, gamma=0.5)
    first = demos.episode == 0
    g, r = demos.returns[first].astype(float), demos.rewards[first].astype(float)
    assert len(g) >= 2 and (r <= 0).all()  # bsld costs
    np.testing.assert_allclose(g[:-1], r[:-1] + 0.5 * g[1:], rtol=1e-5)
    assert g[-1] == pytest.approx(r[-1])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--bc-policy", "no-such"], "--bc-policy"),
        (["--bc-candidates", "easy", "nope"], "--bc-candidates"),
        (["--bc-steps", "0"], "--bc-steps: must be"),
        (
            ["--env-id", "hpcgym/DispatchPolicy-v1", "--policies", "easy", "--bc-policy", "f2-bf"],
            "--bc-policy: in policy mode",
        ),
    ],
)
def test_bad_behaviour_cloning_flags_name_the_flag(flags: list[str], message: str, capsys) -> None:
    with pytest.raises((SystemExit, InvalidConfigError)) as info:
        cli_main(["train", "maskable-ppo", *flags])
    text = str(info.value) + " ".join(capsys.readouterr().err.split())
    assert message in text
