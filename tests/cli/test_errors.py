"""Every bad input a newcomer tried: a clear error from the ``HpcGymError`` hierarchy, never a traceback.

Each case below was reproduced as a crash or a silent wrong result. On the command line
the error exits with status 2, prints ``hpcgym: error: ...`` naming the file and line or
the parameter and what it accepts, and no traceback; in the Python API it is one
exception type per failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import hpcgym
import hpcgym.cli.policies
from hpcgym import cli
from hpcgym.baselines import make_policy, run_policy
from hpcgym.baselines._compile import cold_kernels
from hpcgym.common.errors import (
    EmptyWorkloadError,
    HpcGymError,
    InvalidConfigError,
    MissingExtraError,
    TraceFormatError,
    UnknownNameError,
)
from hpcgym.common.extras import EXTRAS, require
from hpcgym.env import argument_names, make_config, run_via_env
from hpcgym.predict import make_predictor
from hpcgym.workloads import Workload, load_default

GOOD = "1 0 5 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1"
CANCELLED = "2 3 -1 -1 2 -1 -1 2 20 -1 5 1 1 1 1 1 -1 -1"


def line_with(field: int, token: str, base: str = GOOD) -> str:
    tokens = base.split()
    tokens[field - 1] = token
    return " ".join(tokens)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- trace files
TRACE_CASES = {
    # name: (file text, where the error points, what it must say)
    "empty": ("", None, ["no jobs to simulate", "the file has no job lines (it is empty)"]),
    "header-only": ("; MaxProcs: 8\n; Note: x\n", None, ["no jobs to simulate", "header lines only"]),
    "all-cancelled": (
        f"; MaxProcs: 8\n{CANCELLED}\n{CANCELLED}\n",
        None,
        ["all 2 job lines were dropped: 2 runtime < 0 (cancelled before start)"],
    ),
    "maxprocs-1e12": (
        f"; MaxProcs: 1e12\n{GOOD}\n",
        1,
        ["header MaxProcs: '1e12' is not a machine size", "from 1 to 1,000,000,000", "--procs"],
    ),
    "bad-default-estimate": (
        f"; MaxProcs: 8\n; DefaultEstimate: soon\n{GOOD}\n",
        2,
        ["header DefaultEstimate: 'soon' is not a positive number of seconds", "--default-estimate"],
    ),
    "fractional-user": (
        f"; MaxProcs: 8\n{GOOD}\n{line_with(12, '3.7')}\n",
        3,
        ["field 12 (user) is not a whole number: 3.7"],
    ),
    "negative-runtime": (f"; MaxProcs: 8\n{line_with(4, '-3')}\n", 2, ["field 4 (runtime) is below -1"]),
    "wrong-field-count": (f"; MaxProcs: 8\n{GOOD} 7\n", 2, ["expected 18 fields, found 19"]),
}


@pytest.mark.parametrize("case", sorted(TRACE_CASES))
def test_a_bad_trace_exits_2_naming_the_file_and_line(capsys, tmp_path, case):
    text, line, phrases = TRACE_CASES[case]
    path = tmp_path / f"{case}.swf"
    path.write_text(text)
    code, out, err = run_cli(capsys, "simulate", "--trace", str(path), "--no-progress")
    assert code == 2 and out == ""
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert err.startswith(f"hpcgym: error: {where}"), err
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    assert "Traceback" not in err


@pytest.mark.parametrize("case", ["empty", "all-cancelled", "maxprocs-1e12"])
def test_bad_traces_raise_one_error_type_each_in_the_api(tmp_path, case):
    text, line, _ = TRACE_CASES[case]
    path = tmp_path / f"{case}.swf"
    path.write_text(text)
    expected = TraceFormatError if line is not None else EmptyWorkloadError
    with pytest.raises(expected) as info:
        hpcgym.read_swf(path)
    assert isinstance(info.value, HpcGymError) and isinstance(info.value, ValueError)


def test_an_odd_status_in_an_archive_trace_is_a_warning_not_a_rejection(capsys, tmp_path):
    path = tmp_path / "status.swf"
    path.write_text(f"; MaxProcs: 8\n{GOOD}\n{line_with(1, '2', line_with(11, '-4'))}\n")
    code, out, err = run_cli(capsys, "simulate", "--trace", str(path), "--no-progress")
    assert code == 0 and "easy" in out
    assert "warning: 1 job line with field 11 (status) below -1 (first: line 3)" in err
    assert "2 jobs kept" in err


def test_a_huge_request_is_dropped_as_too_large(capsys, tmp_path):
    path = tmp_path / "huge.swf"
    path.write_text(f"; MaxProcs: 8\n{GOOD}\n{line_with(1, '2', line_with(8, '1e20'))}\n")
    code, _, err = run_cli(capsys, "simulate", "--trace", str(path), "--no-progress")
    assert code == 0 and "dropped 1: size > machine" in err


# ----------------------------------------------------------------- arguments
ARGUMENT_CASES = [
    (["simulate", "--procs", str(10**30)], ["procs must be at most 1,000,000,000", "whole number"]),
    (["simulate", "--procs", "-4"], ["procs must be positive"]),
    (["simulate", "--predictor", "user-avg:k=abc"], ["'user-avg:k=abc'", "k must be a positive integer"]),
    (["simulate", "--predictor", "user-avg:depth=3"], ["unknown parameter 'depth'", "takes k, window"]),
    (["simulate", "--predictor", "user-avg:k=0"], ["k must be a positive integer"]),
    (["simulate", "--predictor", "user-avg:window=some"], ["window must be 'all' or 'immediate'"]),
    (["simulate", "--predictor", "walltime:k=2"], ["walltime takes no parameters"]),
    (["simulate", "--predictor", "user-avg+x0"], ["modifier 'x0'", "positive factor"]),
    (["simulate", "--predictor", "nope"], ["unknown predictor 'nope'", "known predictors:"]),
    (["simulate", "--policy", "nope"], ["unknown policy 'nope'", "known policies:"]),
    (["simulate", "--schedule-out", "x.png"], ["--schedule-out x.png: unknown file type", ".csv, .json"]),
    (["simulate", "--default-estimate", "0"], ["default_estimate must be a positive number of seconds"]),
    (["simulate", "--partition", "1;2"], ["--partition: '1;2' is not a partition number"]),
    (["simulate", "--jobs", "0"], ["jobs must be > 0"]),
    (["simulate", "--offset", str(10**9)], ["offset 1000000000 is past the last"]),
    (["simulate", "--load", "nan"], ["load factor must be a positive number"]),
    (["demo", "--procs", "1.5e3"], None),  # argparse's own: "invalid int value"
]  # fmt: skip


@pytest.mark.parametrize(("args", "phrases"), ARGUMENT_CASES, ids=[" ".join(a) for a, _ in ARGUMENT_CASES])
def test_a_bad_argument_exits_2_naming_the_parameter_and_accepted_values(capsys, args, phrases):
    if phrases is None:  # argparse's usage errors exit 2 by themselves
        with pytest.raises(SystemExit) as info:
            cli.main([*args, "--jobs", "20"])
        assert info.value.code == 2
        assert "invalid int value" in capsys.readouterr().err
        return
    code, out, err = run_cli(capsys, *args, "--no-progress")
    assert code == 2 and out == ""
    assert err.startswith("hpcgym: error: "), err
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    assert "Traceback" not in err


def test_the_installed_command_prints_no_traceback(tmp_path):
    empty = tmp_path / "empty.swf"
    empty.write_text("")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    for args, phrase in [
        (["simulate", "--trace", str(empty)], f"{empty}: no jobs to simulate"),
        (["simulate", "--procs", str(10**30)], "procs must be at most"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "hpcgym", *args], capture_output=True, text=True, env=env, check=False
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("hpcgym: error: ") or "\nhpcgym: error: " in proc.stderr
        assert phrase in proc.stderr and "Traceback" not in proc.stderr


def test_main_does_not_hide_bugs(monkeypatch):
    # only anticipated errors become exit 2; anything else keeps its traceback
    def broken(args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(hpcgym.cli.policies, "run", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["policies"])


def test_an_interrupt_exits_130_without_a_traceback(monkeypatch, capsys):
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(hpcgym.cli.policies, "run", interrupted)
    assert cli.main(["policies"]) == 130
    assert capsys.readouterr().err == "hpcgym: interrupted\n"


# --------------------------------------------------------------- the Python API
def test_run_policy_takes_a_dispatcher_callable():
    w = load_default().window(300)
    preset = run_policy(w, "fcfs")
    obj = run_policy(w, make_policy("fcfs"))  # was AttributeError: 'FCFS' object has no attribute 'lower'
    assert obj.row["policy"] == "fcfs" and obj.row["predictor"] == "walltime"
    np.testing.assert_array_equal(obj.schedule.start, preset.schedule.start)

    inner = make_policy("easy")

    def my_policy(view):  # a plain function: reported by its __name__
        return inner(view)

    fn = run_policy(w, my_policy, "real")
    assert (fn.row["policy"], fn.row["predictor"]) == ("my_policy", "real")
    np.testing.assert_array_equal(fn.schedule.start, run_policy(w, "easy", "real").schedule.start)


def test_run_policy_rejects_what_it_cannot_run():
    w = load_default().window(50)
    with pytest.raises(InvalidConfigError, match=r"policy must be a preset name .* or a dispatcher callable"):
        run_policy(w, 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError, match="via: only a preset name runs another way"):
        run_policy(w, make_policy("fcfs"), via=run_via_env)
    with pytest.raises(UnknownNameError, match="unknown policy"):
        run_policy(w, "nope")
    empty = Workload.from_columns([], [], [], [], procs=4, name="nothing")
    with pytest.raises(EmptyWorkloadError, match="workload 'nothing' has no jobs to simulate"):
        run_policy(empty, "easy")


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("user-avg:k=abc", "k must be a positive integer (1, 2, ...), got 'abc'"),
        ("user-avg:k=-1", "k must be a positive integer"),
        ("user-avg:k=1.5", "k must be a positive integer"),
        ("user-avg:k=true", "k must be a positive integer"),
        ("user-avg:k=2,k=3", "parameter 'k' is given twice"),
        ("user-avg:full=maybe", "full must be true or false"),
        ("user-avg:order=random", "order must be 'submit' or 'end'"),
        ("user-avg:j=1", "unknown parameter 'j' (user-avg takes k, window, full, order)"),
        ("user-avg-imm:window=x", "window must be 'all' or 'immediate'"),
        ("profile:name_prefix=3", "name_prefix must be a function"),
        ("real:x=1", "real takes no parameters"),
        ("user-avg:k", "parameter 'k' is not key=value"),
        ("user-avg+xabc", "modifier 'xabc' is not x<factor>"),
        ("user-avg+xinf", "modifier 'xinf'"),
        ("user-avg+y", "unknown modifier 'y'"),
    ],
)
def test_bad_predictor_arguments_are_invalid_config_naming_predictor_and_argument(name, phrase):
    with pytest.raises(InvalidConfigError) as info:
        make_predictor(name)
    assert str(info.value).startswith(f"predictor {name!r}: ")
    assert phrase in str(info.value)


def test_predictor_arguments_that_are_valid_still_work():
    assert make_predictor("user-avg:k=3,window=immediate,full=true,order=end").k == 3
    assert make_predictor("user-avg-imm:k=4").window == "immediate"
    assert make_predictor("user-avg:k=2.0").k == 2


# ------------------------------------------------------------ the environment
BAD_VALUES = {
    # field: values that are not of its type or not finite
    "procs": ["8", 1.5, True, 10**30, float("nan")],
    "load_factor": ["2", float("nan"), float("inf"), True, 0, 10**400],
    "window_jobs": ["x", 2.5, True, 0],
    "split_fractions": [(0.5, "a", 0.5), (0.5, float("nan"), 0.5), "0.7,0.15,0.15", (10**400, 0, 0)],
    "job_range": [(0, "x"), (0.5, 10), (5, 2)],
    "window_size": [2.5, "8", False],
    "histogram_bins": [True, 1.0, "16"],
    "max_time_s": [float("nan"), float("inf"), "1e5"],
    "reward_scale": ["x", float("nan"), -1.0, 10**400],
    "invalid_penalty": ["x", float("nan"), float("inf"), -0.5, None],
    "warm_start": ["yes", 1],
    "kill_at_estimate": ["no"],
    "oracle": [0],
    "every_event": ["true"],
    "include_all": [None],
    "observations": ["jobs", [1, 2]],
    "policies": ["easy"],
}


@pytest.mark.parametrize(
    ("field", "value"), [(f, v) for f, values in BAD_VALUES.items() for v in values], ids=repr
)
def test_every_env_config_field_rejects_wrong_types_and_non_finite_values(field, value):
    # invalid_penalty="x" used to raise TypeError from math.isfinite
    assert field in argument_names()
    with pytest.raises(InvalidConfigError) as info:
        make_config(**{field: value})
    assert field in str(info.value) and "must be" in str(info.value)


def test_gymnasium_make_raises_the_same_clear_error():
    with pytest.raises(InvalidConfigError, match="invalid_penalty: must be a number >= 0, got 'x'"):
        gym.make("hpcgym/Dispatch-v1", invalid_penalty="x")


def test_valid_env_config_values_are_normalised():
    cfg = make_config(window_jobs=np.int64(64), invalid_penalty=np.float32(0.5), procs=128.0, load_factor=2)
    assert type(cfg.episode.window_jobs) is int and cfg.episode.window_jobs == 64
    assert type(cfg.scoring.invalid_penalty) is float and cfg.episode.procs == 128
    assert type(cfg.episode.load_factor) is float


# ------------------------------------------------------------------- extras
def test_a_missing_extra_names_the_pip_install_that_adds_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(MissingExtraError) as info:
        require("plot", what="--plot")
    assert str(info.value) == "--plot needs matplotlib, which is not installed: pip install 'hpcgym[plot]'"
    assert isinstance(info.value, ImportError) and isinstance(info.value, HpcGymError)
    known = "plot, rl, cp, ray, learn, stats"
    with pytest.raises(InvalidConfigError, match=f"unknown extra 'plots'; known: {known}"):
        require("plots", what="x")
    assert set(EXTRAS) == {"plot", "rl", "cp", "ray", "learn", "stats"}


def test_the_training_script_checks_its_extra_before_any_work(monkeypatch):
    pytest.importorskip("gymnasium")
    from hpcgym.agents import train_maskable_ppo

    monkeypatch.setitem(sys.modules, "sb3_contrib", None)

    def no_training(args: object) -> None:
        raise AssertionError("trained without checking the rl extra first")

    monkeypatch.setattr(train_maskable_ppo, "train", no_training)
    with pytest.raises(
        MissingExtraError, match=r"sb3_contrib, which is not installed: pip install 'hpcgym\[rl\]'"
    ):
        train_maskable_ppo.main(["--total-timesteps", "8"])


# -------------------------------------------------------------- numba's cache
def test_a_cold_kernel_cache_is_detected_and_a_warm_one_is_not(tmp_path):
    module = tmp_path / "tiny_kernels.py"
    module.write_text(
        textwrap.dedent(
            """
            from numba import njit

            @njit(cache=True)
            def plus_one(x):
                return x + 1
            """
        )
    )
    root = Path(__file__).resolve().parents[2]
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(tmp_path)!r}, {str(root)!r}]
        import tiny_kernels
        from hpcgym.baselines._compile import cold_kernels
        before = cold_kernels([tiny_kernels.plus_one])
        tiny_kernels.plus_one(1)
        print(before, cold_kernels([tiny_kernels.plus_one]))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def run() -> str:
        proc = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return proc.stdout.strip()

    assert run() == "['plus_one'] []"  # nothing on disk: cold; compiled in-process: warm
    assert run() == "[] []"  # a new process finds the on-disk cache
    module.write_text(module.read_text() + "\n# changed\n")  # numba's stamp (mtime, size) changes
    assert run() == "['plus_one'] []"
    assert cold_kernels([object()]) == []  # not a numba dispatcher: nothing to announce
