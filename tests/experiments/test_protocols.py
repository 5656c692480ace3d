"""Evaluation protocols (issue 12 item 4): RLScheduler's windows, the preset, the CLI flag."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy, rlscheduler_score
from hpcgym.cli import main as cli_main
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.experiments.evaluate import evaluate
from hpcgym.experiments.protocols import (
    PROTOCOLS,
    RLSCHEDULER_PUBLISHED,
    Protocol,
    evaluation_offsets,
    legacy_gym_random_state,
    make_protocol,
    published_comparison,
    reading_of,
    rlscheduler_offsets,
)
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, load_default, read_swf


def gym_legacy_words(seed: int) -> list[int]:
    """Gym < 0.22's seeding.np_random seed words, step by step as Gym wrote them (struct, sums)."""
    h = hashlib.sha512(str(seed % 2**64).encode("utf8")).digest()[:8]
    h += b"\0" * (4 - len(h) % 4)
    unpacked = struct.unpack(f"<{len(h) // 4}I", h)
    big = sum(2 ** (32 * i) * v for i, v in enumerate(unpacked))
    words = []
    while big > 0:
        big, mod = divmod(big, 2**32)
        words.append(mod)
    return words or [0]


@pytest.mark.parametrize("seed", [0, 1, 7, 2**40 + 3])
def test_legacy_gym_seeding_matches_gyms_procedure(seed: int) -> None:
    ours = legacy_gym_random_state(seed).randint(0, 10**9, size=5)
    theirs = np.random.RandomState(gym_legacy_words(seed)).randint(0, 10**9, size=5)
    assert ours.tolist() == theirs.tolist()


def test_rlscheduler_windows_are_what_the_definition_says() -> None:
    p = make_protocol("rlscheduler")
    assert (p.range_jobs, p.test_window_jobs, p.test_windows, p.seed, p.metric) == (
        10_000,
        1024,
        10,
        1,
        "bsld",
    )
    assert not p.held_out and p.train_window_jobs == 256
    job_range, offsets = p.test_offsets(54_044)
    assert job_range == (0, 10_000) and len(offsets) == 10
    # RLScheduler's draw: randint(1024, 10000 - 1024 - 1) per window, from gym's seed-1 generator
    rng = np.random.RandomState(gym_legacy_words(1))
    assert offsets == [int(rng.randint(1024, 8975)) for _ in range(10)]
    assert all(1024 <= o and o + 1024 <= 10_000 for o in offsets)
    assert offsets == p.test_offsets(54_044)[1]  # deterministic
    assert offsets != rlscheduler_offsets(2, 10, 1024, 10_000)  # the seed matters
    assert offsets[:3] == p.test_offsets(54_044, windows=3)[1]  # a smaller count is a prefix
    # a trace shorter than 10,000 jobs: its own length is the range
    assert p.test_offsets(8943)[0] == (0, 8943)
    assert p.test_offsets(8943)[1] == rlscheduler_offsets(1, 10, 1024, 8943)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    window=st.integers(1, 500),
    extra=st.integers(2, 3000),
    count=st.integers(1, 12),
)
def test_rlscheduler_windows_stay_inside_the_range(seed: int, window: int, extra: int, count: int) -> None:
    stop = 2 * window + extra
    offs = rlscheduler_offsets(seed, count, window, stop)
    assert len(offs) == count and offs == rlscheduler_offsets(seed, count, window, stop)
    assert all(window <= o and o + window <= stop - 1 for o in offs)


def test_training_range_and_env_arguments() -> None:
    p = make_protocol("rlscheduler")
    lo, hi = p.train_range(54_044)
    # uniform starts in [lo, hi - 256] are RLScheduler's randint(256, 10000 - 256 - 1)
    assert (lo, hi - 256) == (256, 10_000 - 256 - 2)
    assert p.env_kwargs(54_044) == {"window_jobs": 256, "job_range": (256, 9998)}
    held = make_protocol("held-out")
    assert held.held_out and held.train_range(1000) == (0, 700)
    assert held.test_offsets(20_000) == evaluation_offsets(20_000, 1024)


def test_bad_protocols_are_refused() -> None:
    with pytest.raises(UnknownNameError, match="known protocols: held-out, rlscheduler"):
        make_protocol("rlschedular")
    with pytest.raises(InvalidConfigError, match="window_draw"):
        Protocol("x", "", window_draw="random")
    with pytest.raises(InvalidConfigError, match="needs range_jobs"):
        Protocol("x", "", window_draw="rlscheduler")
    with pytest.raises(InvalidConfigError, match="test_window_jobs must be >= 1"):
        Protocol("x", "", test_window_jobs=0)
    with pytest.raises(InvalidConfigError, match="metric"):
        Protocol("x", "", metric="wait")
    with pytest.raises(InvalidConfigError, match="needs more than 2049 jobs"):
        rlscheduler_offsets(1, 10, 1024, 2000)
    with pytest.raises(InvalidConfigError, match="seed"):
        legacy_gym_random_state(-1)
    assert set(PROTOCOLS.names()) == {"held-out", "rlscheduler"}


def test_published_figures_sit_beside_the_measured_ones() -> None:
    p = make_protocol("rlscheduler")
    summary = [{"policy": "easy", "mean_bsld": 10.0}, {"policy": "f1", "mean_bsld": 7.5}]
    rows = published_comparison(p, "HPC2N-2002-2.2-cln", summary)
    by = {r["heuristic"]: r for r in rows}
    assert list(by) == ["FCFS", "WFP3", "UNI", "SJF", "F1", "RL"]
    assert by["FCFS"]["measured_bf"] == 10.0 and by["FCFS"]["published_bf"] == 127.38
    assert by["F1"]["measured_no_bf"] == 7.5 and by["F1"]["published_bf"] == 71.95
    assert by["RL"]["measured_bf"] is None and by["RL"]["published_bf"] == 86.14
    assert by["FCFS"]["rules_no_bf"] is None  # rls-fcfs was not run
    assert RLSCHEDULER_PUBLISHED["SDSC-SP2"]["FCFS bf"] == 1595.12
    assert published_comparison(p, "CTC-SP2-1996-3.1-cln", summary) == []
    assert published_comparison(make_protocol("held-out"), "HPC2N-2002-2.2-cln", summary) == []


def test_evaluate_with_the_protocol_uses_its_windows() -> None:
    trace = load_default()
    ev = evaluate(
        ["fcfs", "f1-bf"], trace, protocol="rlscheduler", windows=2, window_jobs=300, n_resamples=200
    )
    assert [w["offset"] for w in ev.windows] == rlscheduler_offsets(1, 2, 300, len(trace))
    assert ev.config["protocol"] == "rlscheduler" and ev.config["held_out"] is False
    assert ev.config["window_jobs"] == 300 and ev.config["split_range"] == [0, len(trace)]
    assert any("NOT a held-out evaluation" in n for n in ev.notes)
    assert "published" in ev.table() and ev.published[0]["published_bf"] == 1595.12
    again = evaluate(
        ["fcfs", "f1-bf"], trace, protocol="rlscheduler", windows=2, window_jobs=300, n_resamples=200
    )
    assert again.to_json() == ev.to_json()


def test_cli_protocol_on_the_bundled_slice(capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["evaluate", "--protocol", "rlscheduler", "--windows", "2", "--resamples", "200", "--json",
            "--no-progress"]  # fmt: skip
    assert cli_main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    # the protocol reads the bundled slice (10,000 SWF lines) as RLScheduler does: 10,000 jobs
    assert data["config"]["jobs"] == 10_000
    assert [w["offset"] for w in data["windows"]] == rlscheduler_offsets(1, 2, 1024, 10_000)
    assert all(w["stop"] - w["offset"] == 1024 for w in data["windows"])
    policies = [r["policy"] for r in data["summary"]]
    assert policies == list(make_protocol("rlscheduler").policies)
    assert policies[:5] == ["fcfs", "wfp3", "unicep", "sjf-est", "f1"] and policies[10] == "rls-fcfs"
    assert data["config"]["protocol"] == "rlscheduler"
    assert [r["heuristic"] for r in data["published"]] == ["FCFS", "WFP3", "UNI", "SJF", "F1", "RL"]
    assert cli_main(["evaluate", "--protocol", "nope", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown protocol 'nope'" in err and "held-out, rlscheduler" in err and "Traceback" not in err
    assert cli_main([*argv, "--reading", "hpcgym", "--policies", "fcfs"]) == 0
    data = json.loads(capsys.readouterr().out)
    n = len(load_default())  # hpcgym's reading drops the slice's 1,057 cancelled jobs
    assert data["config"]["jobs"] == n < 10_000
    assert [w["offset"] for w in data["windows"]] == rlscheduler_offsets(1, 2, 1024, n)


SWF_LINES = [
    "; MaxProcs: 8",
    # id submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue part prec think
    "1 0 0 100 2 -1 -1 4 300 -1 1 1 1 1 1 1 -1 -1",
    "2 5 0 -1 -1 -1 -1 2 600 -1 5 1 1 1 1 1 -1 -1",
    "3 6 0 0 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1",
    "4 7 0 50 3 -1 -1 -1 -1 -1 1 1 1 1 1 1 -1 -1",
    "5 9 0 40 6 -1 -1 2 100 -1 1 1 1 1 1 1 -1 -1",
]


def test_rlscheduler_reading_of_an_swf_file(tmp_path, write_swf_text) -> None:  # type: ignore[no-untyped-def]
    path = write_swf_text(tmp_path / "t.swf", "\n".join(SWF_LINES) + "\n")
    ours = read_swf(path)
    assert ours.job_id.tolist() == [1, 3, 4, 5]  # the cancelled job is dropped, the 0-s one kept
    assert ours.procs_req.tolist() == [4, 1, 3, 2] and ours.estimate[2] == 300  # default: the largest kept
    theirs = read_swf(path, reading="rlscheduler")
    assert theirs.job_id.tolist() == [1, 2, 4, 5]  # cancelled kept as a 10-s job, the 0-s one dropped
    assert theirs.runtime.tolist() == [100, 10, 50, 40]
    assert theirs.procs_req.tolist() == [4, 2, 3, 6]  # max(allocated, requested)
    assert theirs.estimate.tolist() == [300, 600, 50, 100]  # no estimate: the run time
    assert theirs.report.dropped == {"runtime = 0 (RLScheduler's reading)": 1}
    assert "1 jobs with run time < 0 kept as 10-s jobs, 1 sized by field 5" in theirs.report.notes[0]
    assert reading_of(theirs) == "rlscheduler" and reading_of(ours) == "hpcgym"
    with pytest.raises(InvalidConfigError, match="reading: must be one of hpcgym, rlscheduler"):
        read_swf(path, reading="gym")


def test_a_loaded_workload_keeps_its_reading_and_says_so() -> None:
    ev = evaluate(
        ["fcfs"], load_default(), protocol="rlscheduler", windows=2, window_jobs=300, n_resamples=200
    )
    assert ev.config["jobs"] == len(load_default())
    assert any("read with hpcgym's rules, not the protocol's" in n for n in ev.notes)


def starts(
    policy: str, submit: list[float], runtime: list[float], procs: list[int], est: list[float]
) -> list[float]:
    w = Workload.from_columns(submit, runtime, procs, est, procs=4)
    return Simulator(w).run(make_policy(policy), progress=False).start.tolist()  # type: ignore[no-any-return]


def test_rlscheduler_rules_commit_the_head() -> None:
    # A fills the machine; B (4 procs, long) arrives first, C (1 proc, short) next
    args = ([0, 1, 2], [10, 100, 5], [4, 4, 1], [10, 100, 5])
    assert starts("rls-sjf", *args) == [0, 10, 110]  # B was chosen alone at t=1 and keeps its place
    assert starts("sjf-est", *args) == [0, 15, 10]  # hpcgym re-sorts at t=10: C first, B after it
    assert starts("rls-fcfs", *args) == starts("fcfs", *args) == [0, 10, 110]


def test_rlscheduler_backfilling_is_fcfs_and_strictly_before_the_earliest_start() -> None:
    # A (3 of 4 procs, estimate 10); B needs 4: its earliest start is 10
    args = ([0, 1, 2, 3], [10, 100, 20, 5], [3, 4, 1, 1], [10, 100, 20, 5])
    assert starts("rls-fcfs-bf", *args) == [0, 10, 110, 3]  # D (3 + 5 < 10) backfills, C (22) does not
    late = ([0, 1, 2, 3], [10, 100, 20, 7], [3, 4, 1, 1], [10, 100, 20, 7])
    assert starts("rls-fcfs-bf", *late) == [0, 10, 110, 110]  # D would end at 10: not strictly before
    # no extra-processor rule: B (3 procs) leaves 1 of 4 free at its earliest start 10; C (1 proc,
    # ending at 52) would use only that, so EASY backfills it, RLScheduler's rules do not
    extra = ([0, 1, 2], [10, 100, 50], [2, 3, 1], [10, 100, 50])
    assert starts("rls-fcfs-bf", *extra) == [0, 10, 10]
    assert starts("easy", *extra) == [0, 10, 2]


def test_rlscheduler_scores_as_coded() -> None:
    s, r, n = np.array([0.0, 99.0]), np.array([10.0, 10.0]), np.array([1, 4])
    assert rlscheduler_score("fcfs", s, r, n).tolist() == [0.0, 99.0]
    np.testing.assert_allclose(rlscheduler_score("f1", s, r, n), [1 + 870 * -1, 4 + 870 * np.log10(99)])
    np.testing.assert_allclose(rlscheduler_score("wfp3", s, r, n), [(1 / 10) ** 3, 4 * (100 / 10) ** 3])
    uni = rlscheduler_score("unicep", s, r, n)
    assert uni[0] > 1e12 and uni[1] == pytest.approx(100 / (2 * 10))  # 1-proc jobs go last
    with pytest.raises(InvalidConfigError, match="score must be one of"):
        rlscheduler_score("saf", s, r, n)
