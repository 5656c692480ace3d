"""The SB3 adapter of the native vector environment gives what DummyVecEnv of single environments gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tyro")

from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv

from hpcgym.agents import train_maskable_ppo
from hpcgym.agents.common import TrainArgs, vec_kind
from hpcgym.agents.vec_env import NativeVecEnv
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import FlattenDispatchObservation

KW = {"window_jobs": 20, "window_size": 8, "split": "train"}


def _same_info(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if k == "episode":
            assert (a[k]["r"], a[k]["l"]) == (b[k]["r"], b[k]["l"])
        elif isinstance(a[k], dict):
            _same_info(a[k], b[k])
        elif isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        elif isinstance(a[k], float) and np.isnan(a[k]):
            assert np.isnan(b[k])
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("env_id", ["hpcgym/Dispatch-v1", "hpcgym/DispatchBackfill-v1"])
def test_native_vec_env_steps_as_dummy_vec_env(env_id: str) -> None:
    n = 3
    native = NativeVecEnv(env_id, n, KW)
    dummy = make_vec_env(env_id, n_envs=n, seed=5, env_kwargs=KW, wrapper_class=FlattenDispatchObservation)
    assert isinstance(dummy, DummyVecEnv)
    native.seed(5)
    assert native.observation_space == dummy.observation_space
    assert native.action_space == dummy.action_space
    np.testing.assert_array_equal(native.reset(), dummy.reset())
    assert is_masking_supported(native)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(120):
        masks = get_action_masks(native)
        np.testing.assert_array_equal(masks, get_action_masks(dummy))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        got, want = native.step(actions), dummy.step(actions)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1].dtype == want[1].dtype and np.array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[2], want[2])
        for a, b in zip(got[3], want[3], strict=True):
            _same_info(a, b)
        ends += int(got[2].sum())
    assert ends >= 2
    assert native.compiled == (env_id == "hpcgym/Dispatch-v1")
    native.close()


def test_native_vec_env_attributes_and_methods() -> None:
    venv = NativeVecEnv("hpcgym/Dispatch-v1", 2, KW)
    venv.reset()
    assert venv.get_attr("window_size") == [8, 8]
    assert venv.env_is_wrapped(FlattenDispatchObservation) == [False, False]
    assert len(venv.env_method("window_offsets", 2, indices=[1])) == 1
    assert venv.env_method("action_masks", indices=0)[0].shape == (9,)
    dict_obs = NativeVecEnv("hpcgym/Dispatch-v1", 2, KW, flatten=False).reset()
    assert dict_obs["jobs"].shape == (2, 8, 11)


def test_vec_auto_picks_native_when_it_compiles() -> None:
    assert vec_kind(TrainArgs(n_envs=4)) == "native"
    assert vec_kind(TrainArgs(n_envs=4, env_id="hpcgym/DispatchPolicy-v1")) == "subproc"
    assert vec_kind(TrainArgs(n_envs=1, backfill="easy")) == "dummy"
    assert vec_kind(TrainArgs(vec="dummy")) == "dummy"
    with pytest.raises(InvalidConfigError, match="--vec"):
        TrainArgs(vec="threads")  # type: ignore[arg-type]


TINY = [
    "--total-timesteps", "64", "--n-steps", "16", "--batch-size", "16", "--n-epochs", "1", "--n-envs", "2",
    "--window-jobs", "20", "--window-size", "8", "--eval-windows", "1", "--eval-freq", "0",
    "--net-arch", "8", "--no-progress-bar",
]  # fmt: skip


def test_training_on_the_native_vec_env_gives_the_model_dummy_vec_env_gives(tmp_path: Path) -> None:
    native = train_maskable_ppo.main([*TINY, "--vec", "native", "--out", str(tmp_path / "native")])
    dummy = train_maskable_ppo.main([*TINY, "--vec", "dummy", "--out", str(tmp_path / "dummy")])
    assert native.vec_env == "NativeVecEnv" and dummy.vec_env == "DummyVecEnv"
    assert native.validations == dummy.validations
    for a, b in zip(native.model.policy.parameters(), dummy.model.policy.parameters(), strict=True):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
