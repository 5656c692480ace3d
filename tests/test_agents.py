"""Smoke runs of the training scripts with tiny budgets."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

pytest.importorskip("sb3_contrib")

from hpcgym.agents import train_maskable_ppo

TINY = [
    "--total-timesteps", "128", "--n-steps", "32", "--num-envs", "2", "--batch-size", "32",
    "--n-epochs", "1", "--window-jobs", "40", "--window-size", "8", "--eval-windows", "2",
    "--net-arch", "16", "--json",
]  # fmt: skip


def test_maskable_ppo_smoke_run_is_seeded(capsys: pytest.CaptureFixture[str]) -> None:
    first = train_maskable_ppo.main(TINY)
    out = capsys.readouterr().out
    assert '"summary"' in out
    names = [row["policy"] for row in first["summary"]]
    assert names == ["maskable-ppo", "fcfs", "easy"]
    assert all(row["windows"] == 2 for row in first["summary"])
    second = train_maskable_ppo.main(TINY)
    assert first["windows"] == second["windows"]


def test_flags_come_from_the_dataclass() -> None:
    args = train_maskable_ppo.parse_args(
        ["--total-timesteps", "2048", "--backfill", "easy", "--net-arch", "8", "8"]
    )
    assert args.total_timesteps == 2048 and args.backfill == "easy" and args.net_arch == (8, 8)
    assert train_maskable_ppo.parse_args([]) == train_maskable_ppo.Args()


@pytest.mark.parametrize("env_id", ["hpcgym/Dispatch-v1", "hpcgym/DispatchPolicy-v1"])
def test_maskable_ppo_learns_on_the_dict_observation_without_glue(env_id: str) -> None:
    from sb3_contrib import MaskablePPO

    env = gym.make(env_id, window_jobs=32, window_size=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = MaskablePPO(
            "MultiInputPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu"
        )
        model.learn(64)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
    assert env.unwrapped.action_masks()[int(action)]


def test_the_training_example_of_the_docs_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "ENV.md").read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 10
    exec(compile(example, "docs/ENV.md", "exec"), {})
    assert "mean bounded slowdown on a test window" in capsys.readouterr().out


def test_maskable_ppo_trains_on_the_eurora_sample_from_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from importlib import resources

    sample = str(resources.files("hpcgym.data").joinpath("examples/eurora-sample.csv"))
    argv = [*TINY, "--machine", "eurora", "--trace", sample]
    result = train_maskable_ppo.main(argv)
    assert result["args"]["machine"] == "eurora"
    assert [row["policy"] for row in result["summary"]] == ["maskable-ppo", "fcfs", "easy"]
    env = train_maskable_ppo.make_env(train_maskable_ppo.parse_args(argv), "test")()
    assert env.unwrapped.machine.name == "eurora"
    assert "resources" in env.unwrapped.observation_space.spaces  # the flattened Box includes them


def test_an_unknown_machine_is_a_clean_error_of_the_script() -> None:
    import subprocess
    import sys

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "hpcgym.agents.train_maskable_ppo",
            "--machine",
            "eurara",
            "--total-timesteps",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "train_maskable_ppo: error:" in p.stderr and "eurara" in p.stderr
