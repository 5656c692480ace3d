"""The training scripts (``hpcgym train``): smoke runs with tiny budgets, saved models, metadata."""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sb3_contrib")
pytest.importorskip("tyro")

from hpcgym.agents import models, train_maskable_ppo, train_ppo
from hpcgym.agents.run import TrainResult
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.evaluate import evaluate

TINY = [
    "--total-timesteps", "128", "--n-steps", "32", "--batch-size", "32", "--n-epochs", "1",
    "--window-jobs", "40", "--window-size", "8", "--eval-windows", "2", "--eval-freq", "64",
    "--net-arch", "16", "--no-progress-bar",
]  # fmt: skip


@pytest.fixture(scope="module")
def maskable_run(tmp_path_factory: pytest.TempPathFactory) -> TrainResult:
    out = tmp_path_factory.mktemp("maskable") / "run"
    return train_maskable_ppo.main([*TINY, "--out", str(out), "--checkpoint-freq", "64"])


def test_a_maskable_ppo_run_writes_its_models_checkpoints_and_summary(maskable_run) -> None:
    run = maskable_run
    assert run.vec_env == "NativeVecEnv"  # --vec auto: the configuration runs compiled
    assert run.steps == 128 and run.invalid_steps == 0  # masked: never an invalid action
    assert sorted(p.name for p in (run.out / "checkpoints").iterdir()) == [
        "model_128_steps.zip",
        "model_64_steps.zip",
    ]
    assert run.final_model.is_file() and run.best_model is not None and run.best_model.is_file()
    # validated at 64 and 128 steps (the end), on the same two non-overlapping validation windows
    assert [v["timesteps"] for v in run.validations] == [64, 128]
    offsets = run.validations[0]["offsets"]
    assert len(offsets) == 2 and offsets[1] - offsets[0] >= 40
    assert all(v["offsets"] == offsets for v in run.validations)
    summary = json.loads((run.out / "training.json").read_text())
    assert summary["best_validation"]["mean_bsld"] == min(v["mean_bsld"] for v in run.validations)
    assert summary["easy_validation_mean_bsld"] == pytest.approx(run.easy_mean_bsld)


def test_the_validation_windows_lie_in_the_validation_split(maskable_run) -> None:
    from hpcgym.env import split_range
    from hpcgym.workloads import load_default

    lo, hi = split_range(len(load_default()), "validation", (0.7, 0.15, 0.15))
    for offset in maskable_run.validations[0]["offsets"]:
        assert lo <= offset and offset + 40 <= hi


def test_every_saved_model_carries_the_metadata_and_it_round_trips(maskable_run) -> None:
    run = maskable_run
    for path in [run.final_model, run.best_model, *(run.out / "checkpoints").iterdir()]:
        assert models.read_metadata(path) == run.metadata
    meta = run.metadata
    assert meta["algorithm"] == "maskable-ppo" and meta["hpcgym_version"]
    assert meta["env"]["env_id"] == "hpcgym/Dispatch-v1" and meta["env"]["trace"] is None
    assert meta["training"]["seed"] == 1 and meta["training"]["net_arch"] == [16]
    kwargs = models.evaluation_env_kwargs(meta)
    assert kwargs["window_size"] == 8 and kwargs["backfill"] == "none"
    assert kwargs["observations"] == ("histograms", "jobs", "system")
    assert not set(kwargs) & set(models.EVALUATION_OWNS)
    # the rebuilt environment is the one the model was trained on
    from hpcgym.env import DispatchEnv, FlattenDispatchObservation

    env = FlattenDispatchObservation(DispatchEnv(split="test", window_jobs=40, **kwargs))
    assert env.observation_space == run.model.observation_space
    assert env.action_space == run.model.action_space
    # plain stable-baselines3 loads the file as before
    from sb3_contrib import MaskablePPO

    MaskablePPO.load(run.final_model, device="cpu")
    with zipfile.ZipFile(run.final_model) as z:
        assert models.METADATA_MEMBER in z.namelist()


def test_evaluate_rebuilds_the_environment_from_the_model(maskable_run) -> None:
    ev = evaluate([str(maskable_run.best_model)], window_jobs=40, windows=2, n_resamples=99)
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["windows"] == 2 and agent["invalid_rate"] == 0.0
    assert ev.config["agent_env"]["best_model"]["window_size"] == 8
    with pytest.raises(InvalidConfigError, match=r"window_size .*contradicts the model 'best_model'"):
        evaluate([str(maskable_run.best_model)], window_jobs=40, windows=2, env_kwargs={"window_size": 16})
    with pytest.raises(InvalidConfigError, match="split fractions"):
        evaluate([str(maskable_run.best_model)], window_jobs=40, windows=2, split_fractions=(0.5, 0.25, 0.25))
    # an override that does not change what the model sees is taken
    ev = evaluate([str(maskable_run.best_model)], window_jobs=40, windows=2, env_kwargs={"window_size": 8})
    assert ev.config["agent_env"]["best_model"]["window_size"] == 8


def test_evaluate_cli_takes_the_model_trace_and_env(maskable_run, capsys) -> None:
    argv = ["evaluate", "--model", str(maskable_run.best_model), "--policies", "easy"]
    argv += ["--window-jobs", "40", "--windows", "2", "--resamples", "99", "--json", "--no-progress"]
    assert cli_main(argv) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert "trace of the model: the bundled trace" in out.err
    assert result["config"]["agent_env"]["best_model"]["window_size"] == 8
    assert cli_main([*argv, "--backfill", "easy"]) == 2
    assert "backfill (--backfill): 'easy' contradicts the model" in capsys.readouterr().err


def test_the_same_seed_trains_the_same_model(maskable_run, tmp_path: Path) -> None:
    again = train_maskable_ppo.main([*TINY, "--out", str(tmp_path / "again")])
    assert again.validations == maskable_run.validations
    for a, b in zip(again.model.policy.parameters(), maskable_run.model.policy.parameters(), strict=True):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())


def test_ppo_counts_its_invalid_actions_with_two_subprocess_envs_and_logs_them(tmp_path: Path) -> None:
    tb = tmp_path / "tb"
    run = train_ppo.main(
        [
            *TINY,
            "--out",
            str(tmp_path / "ppo"),
            "--n-envs",
            "2",
            "--vec",
            "subproc",
            "--tensorboard-log",
            str(tb),
        ]
    )
    assert run.vec_env == "SubprocVecEnv"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    (events,) = (tb / "ppo_1").iterdir()
    board = EventAccumulator(str(events)).Reload()
    logged = board.Tags()["scalars"]
    assert {"train/invalid_action_rate", "eval/mean_bsld", "eval/easy_mean_bsld"} <= set(logged)
    # every validation at its own step, the last (at the end of training) too, as training.json has them
    shown = [(e.step, pytest.approx(e.value)) for e in board.Scalars("eval/mean_bsld")]
    assert shown == [(v["timesteps"], v["mean_bsld"]) for v in run.validations]
    assert [v["timesteps"] for v in run.validations] == [64, 128]
    assert run.steps == 128
    # an untrained unmasked policy over 8 slots + advance often picks an empty slot
    assert 0 < run.invalid_steps <= run.steps
    summary = json.loads((tmp_path / "ppo" / "training.json").read_text())
    assert summary["invalid_steps"] == run.invalid_steps
    assert summary["invalid_rate"] == pytest.approx(run.invalid_steps / 128)
    assert all(0 <= v["invalid_rate"] <= 1 for v in run.validations)
    assert run.metadata["algorithm"] == "ppo"
    ev = evaluate([str(run.final_model)], window_jobs=40, windows=2, n_resamples=99)
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["invalid_rate"] is not None


def test_the_train_command_routes_to_the_script(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli"
    argv = ["train", "maskable-ppo", *TINY, "--total-timesteps", "64", "--eval-freq", "0", "--out", str(out)]
    assert cli_main(argv) == 0
    text = capsys.readouterr().out
    assert "maskable-ppo: 64 steps" in text and f"hpcgym evaluate --model {out / 'best_model.zip'}" in text
    assert (out / "final_model.zip").is_file()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--total-timestep", "5"], "--total-timesteps"),
        (["--window-size", "0"], "--window-size: must be"),
        (["--n-envs", "0"], "--n-envs: must be"),
        (["--backfill", "later"], "invalid choice 'later' for argument '--backfill'"),
    ],
)
def test_a_bad_flag_is_a_clear_error(flags: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli_main(["train", "ppo", *flags])
    assert info.value.code == 2
    assert message in " ".join(capsys.readouterr().err.split())  # tyro wraps its box to the terminal


def test_an_unknown_algorithm_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit):
        cli_main(["train", "a2c"])
    assert "invalid choice: 'a2c'" in capsys.readouterr().err


def test_flags_come_from_the_dataclass() -> None:
    import tyro

    args = tyro.cli(
        train_ppo.Args, args=["--total-timesteps", "2048", "--backfill", "easy", "--net-arch", "8", "8"]
    )
    assert args.total_timesteps == 2048 and args.backfill == "easy" and args.net_arch == (8, 8)
    assert tyro.cli(train_ppo.Args, args=[]) == train_ppo.Args()
    with pytest.raises(InvalidConfigError, match="--eval-windows: must be an integer >= 1"):
        train_ppo.Args(eval_windows=0)
    from hpcgym.agents.train import train

    with pytest.raises(InvalidConfigError, match="did you mean 'total_timesteps'"):
        train("ppo", total_timestep=10)


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
    text = (Path(__file__).resolve().parents[2] / "docs" / "ENV.md").read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 10
    exec(compile(example, "docs/ENV.md", "exec"), {})
    assert "mean bounded slowdown on a test window" in capsys.readouterr().out


def test_maskable_ppo_trains_on_the_eurora_sample(tmp_path: Path) -> None:
    from importlib import resources

    sample = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))
    run = train_maskable_ppo.main(
        [*TINY, "--machine", "eurora", "--trace", sample, "--out", str(tmp_path / "eurora")]
    )
    env = run.metadata["env"]
    assert env["kwargs"]["machine"] == "eurora" and env["trace"] == sample
    assert "resources" in env["kwargs"]["observations"]  # the flattened Box includes them


def test_policy_mode_trains_over_the_given_dispatchers_and_evaluate_plays_them(tmp_path: Path) -> None:
    chosen = ("saf-bf", "easy")
    run = train_maskable_ppo.main(
        [*TINY, "--env-id", "hpcgym/DispatchPolicy-v1", "--policies", *chosen, "--out", str(tmp_path / "p")]
    )
    kwargs = run.metadata["env"]["kwargs"]
    assert kwargs["mode"] == "policy" and tuple(kwargs["policies"]) == chosen
    ev = evaluate([str(run.best_model), "saf-bf"], window_jobs=40, windows=2, n_resamples=99)
    rows = {r["policy"]: r for r in ev.summary}
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["invalid_rate"] == 0  # each action is one of the two dispatchers' decisions
    assert set(rows) >= {"saf-bf", "easy"}
    with pytest.raises(InvalidConfigError, match="policies"):
        train_maskable_ppo.Args(env_id="hpcgym/DispatchPolicy-v1", policies=("no-such-dispatcher",))


def test_learned_backfilling_trains_and_evaluate_rebuilds_its_mode_and_order(tmp_path: Path) -> None:
    env_id = "hpcgym/DispatchLearnedBackfill-v1"
    argv = [*TINY, "--env-id", env_id, "--backfill-order", "sjf-bf", "--window-jobs", "120"]
    run = train_maskable_ppo.main([*argv, "--vec", "dummy", "--out", str(tmp_path / "b")])
    assert run.vec_env == "DummyVecEnv" and run.invalid_steps == 0  # not compiled: the Python path
    kwargs = run.metadata["env"]["kwargs"]
    assert kwargs["mode"] == "backfill" and kwargs["order"] == "sjf"  # the canonical name
    ev = evaluate([str(run.best_model), "sjf"], window_jobs=120, windows=2, n_resamples=99)
    agent = next(r for r in ev.summary if r["kind"] == "agent")
    assert agent["invalid_rate"] == 0
    with pytest.raises(InvalidConfigError, match="--backfill-order: only learned-backfilling"):
        train_maskable_ppo.Args(backfill_order="f2-bf")
    with pytest.raises(InvalidConfigError, match="--backfill-order: 'fcfs' makes no EASY reservation"):
        train_maskable_ppo.Args(env_id=env_id, backfill_order="fcfs")


def test_an_unknown_machine_is_a_clean_error_of_the_script(tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = ["--machine", "eurara", "--total-timesteps", "1", "--out", str(tmp_path / "x")]
    p = subprocess.run(
        [sys.executable, "-m", "hpcgym.agents.train_maskable_ppo", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "train_maskable_ppo: error:" in p.stderr and "eurara" in p.stderr
    assert "Traceback" not in p.stderr


def test_validation_windows_that_do_not_fit_the_split_name_the_flag(tmp_path: Path) -> None:
    from importlib import resources

    sample = str(resources.files("hpcgym.workloads.data").joinpath("eurora-sample.csv"))
    args = train_maskable_ppo.Args(machine="eurora", trace=sample, window_jobs=64, out=str(tmp_path / "x"))
    with pytest.raises(InvalidConfigError, match="--eval-window-jobs: validation windows of 64 jobs"):
        train_maskable_ppo.train(args)
    assert not (tmp_path / "x").exists()  # refused before anything was written


@given(
    recorded=st.fixed_dictionaries(
        {"window_size": st.integers(1, 4), "backfill": st.sampled_from(["none", "easy"])}
    ),
    explicit=st.dictionaries(
        st.sampled_from(["window_size", "backfill", "reward", "predictor"]),
        st.sampled_from([1, 2, "none", "easy", "bsld", "wait", "walltime"]),
        max_size=4,
    ),
)
@settings(max_examples=60, deadline=None)
def test_explicit_env_arguments_override_the_model_unless_they_contradict_it(recorded, explicit) -> None:
    from hpcgym.experiments.evaluate import Candidate, agent_env_kwargs

    meta = {
        "env": {
            "kwargs": {
                **recorded,
                "reward": "bsld",
                "predictor": "user-avg",
                "split_fractions": [0.7, 0.15, 0.15],
                "trace": None,
                "window_jobs": 99,
            }
        }
    }
    c = Candidate("m", "agent", metadata=meta)
    clash = [k for k in ("window_size", "backfill") if k in explicit and explicit[k] != recorded[k]]
    if clash:
        with pytest.raises(InvalidConfigError, match="contradicts the model 'm'"):
            agent_env_kwargs(c, explicit, None, (0.7, 0.15, 0.15))
        return
    predictor, kw = agent_env_kwargs(c, explicit, None, (0.7, 0.15, 0.15))
    assert predictor == explicit.get("predictor", "user-avg")
    assert kw["reward"] == explicit.get("reward", "bsld")
    assert {k: kw[k] for k in recorded} == recorded
    assert "window_jobs" not in kw and "split_fractions" not in kw  # the evaluator's to set
    # an explicit predictor argument of evaluate() wins over both
    assert agent_env_kwargs(c, explicit, "real", (0.7, 0.15, 0.15))[0] == "real"
