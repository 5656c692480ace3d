"""One agent trained on several traces (``hpcgym train --traces``), evaluated on each and on others."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tyro")

from hpcgym.agents import train_maskable_ppo
from hpcgym.agents.common import make_vec_env
from hpcgym.agents.models import MULTI_FORMAT, model_logs, read_metadata
from hpcgym.agents.run import TrainResult
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.evaluate import evaluate
from hpcgym.workloads import default_trace_path, load_default, read_swf, write_swf

TINY = [
    "--total-timesteps", "128", "--n-steps", "32", "--batch-size", "32", "--n-epochs", "1",
    "--window-jobs", "40", "--window-size", "8", "--eval-windows", "2", "--eval-freq", "64",
    "--net-arch", "16", "--no-progress-bar",
]  # fmt: skip
BUNDLED = str(default_trace_path())


def _slice(traces_dir: Path, name: str, out: Path, jobs: int = 2000) -> str:
    """The first ``jobs`` jobs of a development trace, as an SWF file of its own (its own name)."""
    path = out / f"{name}-first{jobs}.swf.gz"
    write_swf(path, read_swf(traces_dir / f"{name}.swf.gz").window(jobs))
    return str(path)


@pytest.fixture(scope="module")
def slices(traces_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A 240-processor slice of HPC2N (trained on) and a 512-processor slice of CTC-SP2 (never seen)."""
    out = tmp_path_factory.mktemp("slices")
    return {
        "hpc2n": _slice(traces_dir, "HPC2N-2002-2.2-cln", out),
        "ctc": _slice(traces_dir, "CTC-SP2-1996-3.1-cln", out),
    }


@pytest.fixture(scope="module")
def two_log_run(slices: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> TrainResult:
    out = tmp_path_factory.mktemp("multilog") / "run"
    # HPC2N first: evaluating on the bundled trace must find it second among the model's traces
    return train_maskable_ppo.main(
        [*TINY, "--traces", slices["hpc2n"], BUNDLED, "--n-envs", "2", "--vec", "native", "--out", str(out)]
    )


def _args(traces: tuple[str, ...], **fields: object) -> train_maskable_ppo.Args:
    base = {"window_jobs": 40, "window_size": 8, "progress_bar": False, "traces": traces}
    return train_maskable_ppo.Args(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize("vec", ["native", "dummy"])
def test_environment_i_plays_trace_i_mod_n_on_its_own_machine(slices: dict[str, str], vec: str) -> None:
    venv = make_vec_env(_args((BUNDLED, slices["hpc2n"]), n_envs=3, vec=vec))
    try:
        names = [t.name for t in venv.get_attr("trace")]
        sdsc, hpc2n = "SDSC-SP2-1998-4.2-cln-first10k", "HPC2N-2002-2.2-cln-first2000"
        assert names == [sdsc, hpc2n, sdsc]
        assert [int(t.procs) for t in venv.get_attr("trace")] == [128, 240, 128]
        assert venv.num_envs == 3 and len(venv.reset()) == 3
    finally:
        venv.close()


@pytest.mark.parametrize(("n_envs", "kind"), [(2, "dummy"), (7, "dummy"), (8, "native")])
def test_auto_stacks_native_environments_from_four_per_trace(
    slices: dict[str, str], n_envs: int, kind: str
) -> None:
    from hpcgym.agents.common import vec_kind

    assert vec_kind(_args((BUNDLED, slices["hpc2n"]), n_envs=n_envs)) == kind
    assert vec_kind(_args((BUNDLED,), n_envs=1)) == "native"  # one trace: as with --trace


def test_the_stacked_native_environments_play_what_single_environments_play(slices: dict[str, str]) -> None:
    """Environment i of the stack is the episode environment i of a DummyVecEnv plays (same seed, actions)."""
    args = {"n_envs": 3, "seed": 7}
    native = make_vec_env(_args((BUNDLED, slices["hpc2n"]), vec="native", **args))
    dummy = make_vec_env(_args((BUNDLED, slices["hpc2n"]), vec="dummy", **args))
    assert type(native).__name__ == "StackedVecEnv" and type(dummy).__name__ == "DummyVecEnv"
    try:
        a, b = native.reset(), dummy.reset()
        np.testing.assert_array_equal(a, b)
        for _ in range(60):  # past the ends of some 40-job episodes (auto-reset)
            masks = np.stack(native.env_method("action_masks"))
            np.testing.assert_array_equal(masks, np.stack(dummy.env_method("action_masks")))
            actions = masks.argmax(axis=1)
            oa, ra, da, ia = native.step(actions)
            ob, rb, db, ib = dummy.step(actions)
            np.testing.assert_array_equal(oa, ob)
            np.testing.assert_allclose(ra, rb, rtol=1e-6)
            np.testing.assert_array_equal(da, db)
            for x, y in zip(ia, ib, strict=True):
                assert ("episode" in x) == ("episode" in y)
    finally:
        native.close()
        dummy.close()


def test_a_run_on_two_traces_validates_on_each_and_picks_on_the_mean(two_log_run: TrainResult) -> None:
    run = two_log_run
    assert run.vec_env == "StackedVecEnv of 2 NativeVecEnv"
    names = ["HPC2N-2002-2.2-cln-first2000", "SDSC-SP2-1998-4.2-cln-first10k"]
    summary = json.loads((run.out / "training.json").read_text())
    assert [v["timesteps"] for v in summary["validations"]] == [64, 128]
    for v in summary["validations"]:
        assert list(v["logs"]) == names
        per_log = [v["logs"][n]["mean_bsld"] for n in names]
        assert all(len(v["logs"][n]["window_bsld"]) == 2 for n in names)  # --eval-windows per trace
        assert v["mean_bsld"] == pytest.approx(np.mean(per_log))
        assert v["window_bsld"] == v["logs"][names[0]]["window_bsld"] + v["logs"][names[1]]["window_bsld"]
    best = min(summary["validations"], key=lambda v: v["mean_bsld"])
    assert summary["best_validation"] == best
    easy = [summary["validations"][0]["logs"][n]["easy_mean_bsld"] for n in names]
    assert summary["easy_validation_mean_bsld"] == pytest.approx(np.mean(easy))
    assert easy[0] != easy[1]  # each trace's own windows
    assert "--trace " + BUNDLED in run.report()


def test_a_model_of_two_traces_records_each(two_log_run: TrainResult, slices: dict[str, str]) -> None:
    meta = read_metadata(two_log_run.best_model)
    assert meta == json.loads(json.dumps(two_log_run.metadata))  # round trip through the zip
    assert meta["format"] == MULTI_FORMAT and meta["training"]["traces"] == [slices["hpc2n"], BUNDLED]
    logs = model_logs(meta)
    assert [(r["trace"], r["trace_name"], r["trace_jobs"], r["procs"]) for r in logs] == [
        (slices["hpc2n"], "HPC2N-2002-2.2-cln-first2000", 2000, 240),
        (BUNDLED, "SDSC-SP2-1998-4.2-cln-first10k", len(load_default()), 128),
    ]
    for r in logs:
        assert len(r["trace_sha256"]) == 64 and r["splits"]["test"]["jobs"][1] == r["trace_jobs"]
        assert len(r["fingerprint"]["key"]) == -(-r["trace_jobs"] // r["fingerprint"]["every"])
    assert meta["env"]["kwargs"]["machine"] is None and meta["env"]["kwargs"]["procs"] is None
    assert "trace" not in meta["env"]  # no single trace an older reader could take for the only one


def test_evaluate_on_a_training_trace_uses_its_test_split_and_checks_it(
    two_log_run: TrainResult, slices: dict[str, str]
) -> None:
    model = str(two_log_run.best_model)
    ev = evaluate([model], slices["hpc2n"], window_jobs=40, windows=3, n_resamples=99)
    mw = ev.config["model_windows"]["best_model"]
    assert (mw["match"], mw["relation"], mw["trace"]) == ("identical", "test", "HPC2N-2002-2.2-cln-first2000")
    assert ev.config["held_out"] is True
    # the bundled trace is its second: the same jobs cut short, whose test split holds its training jobs
    with pytest.raises(InvalidConfigError, match="test windows hold jobs it was trained or validated on"):
        evaluate([model], load_default().window(3000), window_jobs=40, windows=3, n_resamples=99)
    ev = evaluate([model], BUNDLED, window_jobs=40, windows=3, n_resamples=99)
    mw = ev.config["model_windows"]["best_model"]
    assert (mw["match"], mw["relation"], mw["trace"]) == (
        "identical",
        "test",
        "SDSC-SP2-1998-4.2-cln-first10k",
    )


def test_evaluate_on_a_trace_it_never_saw_is_a_transfer_run(
    two_log_run: TrainResult, slices: dict[str, str]
) -> None:
    model = str(two_log_run.best_model)
    for split in ("test", "all"):
        ev = evaluate([model], slices["ctc"], split=split, window_jobs=40, windows=3, n_resamples=99)
        mw = ev.config["model_windows"]["best_model"]
        assert mw["match"] == "other trace" and mw["relation"] == "transfer"
        assert any("a transfer run: trained on HPC2N-2002-2.2-cln-first2000, SDSC-SP2" in n for n in ev.notes)
        agent = next(r for r in ev.summary if r["kind"] == "agent")
        assert agent["windows"] == 3 and agent["invalid_rate"] == 0


def test_the_evaluate_command_asks_which_trace(
    two_log_run: TrainResult, slices: dict[str, str], capsys
) -> None:
    model = str(two_log_run.best_model)
    assert cli_main(["evaluate", "--model", model, "--policies", "easy"]) == 2
    err = capsys.readouterr().err
    assert "trained on 2 traces; give the one to evaluate on with --trace" in err and slices["hpc2n"] in err
    argv = [
        "evaluate",
        "--model",
        model,
        "--trace",
        slices["ctc"],
        "--policies",
        "easy",
        "--window-jobs",
        "40",
    ]
    assert cli_main([*argv, "--windows", "2", "--resamples", "99", "--no-progress"]) == 0
    assert "agent: transfer" in capsys.readouterr().out


def test_one_trace_keeps_the_one_trace_metadata(tmp_path: Path) -> None:
    run = train_maskable_ppo.main(
        [*TINY, "--total-timesteps", "32", "--eval-freq", "0", "--out", str(tmp_path)]
    )
    meta = read_metadata(run.final_model)
    assert meta["format"] == "hpcgym-model/1" and meta["env"]["trace"] is None and "traces" not in meta["env"]
    assert "logs" not in run.validations[0]
    assert model_logs(meta)[0]["trace_name"] == "SDSC-SP2-1998-4.2-cln-first10k"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--traces", BUNDLED, "x.swf", "--n-envs", "1"], "--n-envs: 1 training environment(s) for 2 traces"),
        (["--traces", BUNDLED, "x.swf", "--n-envs", "2", "--procs", "64"], "--procs: with several traces"),
        (["--traces", BUNDLED, "x.swf", "--n-envs", "2", "--machine", "eurora"], "--machine: with several"),
        (["--traces", "a.swf", "a.swf", "--n-envs", "2"], "--traces: a.swf given twice"),
        (["--trace", BUNDLED, "--traces", BUNDLED, "x.swf"], "--trace and --traces: give one"),
        (["--trace", BUNDLED, "--trace", "x.swf"], "--trace: given 2 times"),
    ],
)
def test_a_bad_traces_flag_is_a_clear_error(flags: list[str], message: str, capsys) -> None:
    try:
        code = cli_main(["train", "ppo", *flags])
    except SystemExit as info:
        code = info.code
    assert code == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_traces_of_different_observations_are_refused(tmp_path: Path) -> None:
    """One network plays every trace: a trace whose machine adds observation parts is refused."""
    from hpcgym.agents.run import Run
    from hpcgym.machine import make_machine
    from hpcgym.workloads import fit_workload, write_jobs

    table = tmp_path / "eurora-jobs.csv"
    write_jobs(fit_workload(load_default().window(2000), make_machine("eurora")), table)
    args = _args((BUNDLED, str(table)), n_envs=2, out=str(tmp_path / "run"))
    with pytest.raises(InvalidConfigError, match=r"--traces: .* gives observations"):
        Run(args, "maskable-ppo")


def test_the_help_lists_the_traces_flag(capsys) -> None:
    with pytest.raises(SystemExit):
        train_maskable_ppo.main(["--help"])
    out = capsys.readouterr().out
    assert "--traces" in out and "trace i mod n" in " ".join(out.replace("│", " ").split())


def test_behaviour_cloning_over_two_traces_scores_presets_on_both(
    slices: dict[str, str], tmp_path: Path
) -> None:
    run = train_maskable_ppo.main(
        [
            *TINY, "--traces", slices["hpc2n"], BUNDLED, "--n-envs", "2",
            "--env-id", "hpcgym/DispatchPolicy-v1", "--policies", "fcfs", "f2-bf",
            "--bc-policy", "best", "--bc-steps", "200", "--out", str(tmp_path / "r"),
        ]
    )  # fmt: skip
    cloned = run.behaviour_cloning
    assert cloned is not None and set(cloned["validation_scores"]) == {"fcfs", "f2-bf"}
    first = run.validations[0]
    assert first["timesteps"] == 0 and len(first["logs"]) == 2
    # the clone always picks the chosen preset, so it scores exactly the preset's mean over both traces
    assert first["mean_bsld"] == pytest.approx(cloned["validation_scores"][cloned["policy"]], abs=1e-9)
