"""Golden schedules: every recorded schedule comes out bit for bit the same (issue 9).

``tests/golden/schedules.json`` holds, for every preset x predictor (and four EASY
variants), the sha256 of the start and end times on the bundled trace and on the first
20,000 jobs of every development trace, recorded by ``tests/golden/record.py`` at the
commit it names, before the machine model was rewritten. The fast tests replay the
bundled trace; the expensive test (``make bench``) replays every development trace,
one test per trace.

A mismatch names the trace, the policy, the predictor, the first job whose start (or
end, or first reservation) moved and both values: for the bundled trace from the arrays
stored beside the fixture, for the other traces by replaying the recorded commit.

A change that is meant to move schedules re-records the fixture
(``python tests/golden/record.py``) and says why in its commit message.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def _load_record() -> ModuleType:
    spec = importlib.util.spec_from_file_location("golden_record", GOLDEN / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


record = _load_record()
FIXTURE: dict[str, Any] = json.loads((GOLDEN / "schedules.json").read_text())
JOBS: int = FIXTURE["jobs"]


def label(key: str) -> str:
    """``policy P, predictor Q`` (with the EASY variant, if any) for a combination key."""
    c = record.Combo.from_key(key)
    policy = f"{c.policy} ({c.variant})" if c.variant else c.policy
    return f"policy {policy}, predictor {c.predictor}"


def differences(
    expected: dict[str, str],
    arrays: dict[str, np.ndarray],
    known: dict[str, np.ndarray] | None = None,
    job_id: np.ndarray | None = None,
) -> list[str]:
    """What differs between a replay's arrays and the recorded hashes (empty when nothing).

    Args:
        expected: the recorded sha256 of each checked array.
        arrays: the replay's arrays.
        known: recorded arrays by their sha256, where known: a difference from one of
            them names the first job that moved and both values.
        job_id: SWF job ids, to name jobs by.
    """
    out = []
    for name, digest in expected.items():
        if name not in arrays:
            out.append(f"{name}: recorded, but the run no longer produces it")
            continue
        now = record.sha256(arrays[name])
        if now == digest:
            continue
        if known is not None and digest in known:
            out.append(record.describe_difference(name, known[digest], arrays[name], job_id))
        else:
            out.append(f"{name}: sha256 {now[:16]}..., recorded {digest[:16]}...")
    return out


def by_hash(per_combo: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Recorded arrays keyed by their sha256."""
    return {record.sha256(a): a for arrays in per_combo.values() for a in arrays.values()}


def check_workload(trace: str, entry: dict[str, Any], workload: Any) -> None:
    """Fail unless ``workload`` is the one recorded: else the reader changed, not the engine."""
    now = record.workload_fingerprint(workload)
    if now != entry["workload"]:
        pytest.fail(
            f"{trace}: the workload reads differently from when the golden schedules were recorded "
            f"(recorded {entry['workload']}, now {now}); the trace reader changed, so the schedules "
            "cannot be compared"
        )


# ------------------------------------------------------------------ bundled trace
@functools.cache
def bundled() -> tuple[Any, dict[str, dict[str, np.ndarray]]]:
    """The bundled trace as recorded, and the recorded arrays of every combination on it."""
    entry = FIXTURE["bundled"]
    workload = record.load_trace(record.BUNDLED, JOBS)
    check_workload("bundled trace", entry, workload)
    arrays = record.unpack_arrays((GOLDEN / entry["arrays"]["file"]).read_bytes(), entry)
    return workload, arrays


@pytest.mark.parametrize("key", FIXTURE["combos"])
def test_bundled_trace_schedule_is_unchanged(key: str) -> None:
    workload, reference = bundled()
    expected = record.expected_hashes(FIXTURE["bundled"])[key]
    arrays = record.schedule_arrays(record.run_combo(workload, record.Combo.from_key(key)))
    problems = differences(expected, arrays, by_hash({key: reference[key]}), workload.job_id)
    if problems:
        pytest.fail(f"bundled trace ({len(workload)} jobs), {label(key)}: " + "; ".join(problems))


def test_stored_arrays_are_the_recorded_schedules() -> None:
    """The arrays that explain a mismatch hash to the fixture's values (else they would mislead)."""
    _, reference = bundled()
    hashes = record.expected_hashes(FIXTURE["bundled"])
    assert set(reference) == set(hashes) == set(FIXTURE["combos"])
    for key, expected in hashes.items():
        assert differences(expected, reference[key]) == [], key


def test_a_moved_start_time_names_the_job_and_both_times() -> None:
    workload, reference = bundled()
    key = "easy|walltime"
    moved = {name: a.copy() for name, a in reference[key].items()}
    moved["start"][4321] += 0.5
    expected = record.expected_hashes(FIXTURE["bundled"])[key]
    problems = differences(expected, moved, by_hash({key: reference[key]}), workload.job_id)
    recorded = float(reference[key]["start"][4321])
    assert problems == [
        f"start differs for 1 of {len(workload)} jobs; first job 4321 (SWF id {int(workload.job_id[4321])}): "
        f"recorded {recorded!r}, now {recorded + 0.5!r}"
    ]


def test_a_missing_array_is_a_difference() -> None:
    _, reference = bundled()
    key = "easy/record_reservations|walltime"
    arrays = {k: v for k, v in reference[key].items() if k != "first_reservation"}
    assert differences(record.expected_hashes(FIXTURE["bundled"])[key], arrays) == [
        "first_reservation: recorded, but the run no longer produces it"
    ]


def test_packed_arrays_round_trip_bit_for_bit() -> None:
    start = np.array([0.0, 1.5, 3.0, 7.25])
    end = start + np.array([2.0, 0.0, 1e9, 0.5])
    first = np.array([np.nan, 2.0, np.nan, 9.0])
    arrays = {
        "a|w": {"start": start, "end": end, "first_reservation": first},
        "b|w": {"start": start, "end": end},
    }
    groups = record.group_schedules(
        {k: (_FakeSchedule(a["start"]), a) for k, a in arrays.items()}  # type: ignore[misc]
    )
    data, index = record.pack_arrays(groups, arrays)
    back = record.unpack_arrays(data, {"arrays": index, "schedules": groups, "workload": {"jobs": 4}})
    for key, a in arrays.items():
        assert set(back[key]) == set(a)
        for name in a:
            assert back[key][name].tobytes() == record.f8(a[name]).tobytes(), (key, name)
    with pytest.raises(ValueError, match="not the file"):
        record.unpack_arrays(data + b"x", {"arrays": index, "schedules": groups, "workload": {"jobs": 4}})


class _FakeSchedule:
    """Just what :func:`record.group_schedules` reads of a schedule."""

    def __init__(self, start: np.ndarray) -> None:
        self.start = start
        self.workload = type("W", (), {"submit": np.zeros_like(start)})()
        self.killed = np.zeros(len(start), dtype=bool)
        self.decisions = 1


def test_combination_keys_round_trip() -> None:
    for combo in record.combos():
        assert record.Combo.from_key(combo.key) == combo
    with pytest.raises(ValueError, match="not a combination key"):
        record.Combo.from_key("easy/no-such-variant|walltime")


def test_fixture_names_its_commit_and_every_trace_entry_is_complete() -> None:
    assert len(FIXTURE["commit"]) == 40 and not FIXTURE["dirty"]
    for name, entry in FIXTURE["traces"].items():
        assert set(record.expected_hashes(entry)) == set(FIXTURE["combos"]), name


def test_replaying_an_unknown_commit_says_so(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot extract commit 000000000000"):
        record.reference_arrays("0" * 40, record.BUNDLED, JOBS, ["easy|walltime"], tmp_path)


@pytest.mark.expensive
def test_the_recorded_commit_replays_to_the_recorded_schedules(tmp_path: Path) -> None:
    """What explains a mismatch on a full trace: the recorded commit, replayed, gives the recorded hashes."""
    keys = ["easy|walltime", "easy/record_reservations|walltime"]
    replayed = record.reference_arrays(FIXTURE["commit"], record.BUNDLED, JOBS, keys, tmp_path)
    hashes = record.expected_hashes(FIXTURE["bundled"])
    for key in keys:
        assert differences(hashes[key], replayed[key]) == [], key


# ------------------------------------------------------------------ development traces
@pytest.mark.expensive
@pytest.mark.parametrize("trace", sorted(FIXTURE["traces"]))
def test_trace_schedules_are_unchanged(trace: str, traces_dir: Path, tmp_path: Path) -> None:
    path = traces_dir / trace
    if not path.is_file():
        pytest.skip(f"{trace} is not in {traces_dir}: no golden check for it here")
    entry = FIXTURE["traces"][trace]
    digest = record.file_sha256(path)
    if digest != entry["file_sha256"]:
        pytest.fail(f"{path} is not the file the golden schedules were recorded from (sha256 {digest})")
    # the recorded machine size, whatever read_swf's default is now (CTC-SP2 reads as 512 since)
    workload = record.load_trace(str(path), JOBS, procs=entry["workload"]["procs"])
    check_workload(trace, entry, workload)
    hashes = record.expected_hashes(entry)
    found: dict[str, dict[str, np.ndarray]] = {}
    for key in FIXTURE["combos"]:
        arrays = record.schedule_arrays(record.run_combo(workload, record.Combo.from_key(key)))
        if differences(hashes[key], arrays):
            found[key] = arrays
    if not found:
        return
    # replay the recorded commit, once per recorded outcome, to name the jobs that moved
    outcomes = {tuple(sorted(hashes[key].items())): key for key in reversed(found)}
    explained = sorted(outcomes.values(), key=list(found).index)
    try:
        known = by_hash(record.reference_arrays(FIXTURE["commit"], str(path), JOBS, explained, tmp_path))
        note = ""
    except RuntimeError as err:
        known, note = {}, f" (could not replay the recorded commit to name the jobs: {err})"
    lines = [
        f"  {label(key)}: " + "; ".join(differences(hashes[key], arrays, known, workload.job_id))
        for key, arrays in found.items()
    ]
    pytest.fail(
        f"{trace} (first {len(workload):,} jobs): {len(found)} of {len(hashes)} schedules changed{note}\n"
        + "\n".join(lines)
    )


# ------------------------------------------------------------------ benchmarks/ab.py
def _load_ab() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "ab.py"
    spec = importlib.util.spec_from_file_location("benchmarks_ab", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("figure", "head_value", "check", "status", "too_slow"),
    [
        ("easy_sdsc_sp2_s", 1.09, True, 0, False),  # 9 % slower: within 10 %
        ("easy_sdsc_sp2_s", 1.12, True, 1, True),  # 12 % slower
        ("easy_sdsc_sp2_s", 1.12, False, 0, True),  # as slow, but no --check: reported only
        ("env_easy_steps_per_s", 920.0, True, 0, False),  # 8.7 % slower
        ("env_none_steps_per_s", 880.0, True, 1, True),  # 13.6 % slower
        ("env_none_steps_per_s", 1300.0, True, 0, False),  # faster
        ("easypp_sdsc_sp2_s", 1.15, True, 1, True),  # the revising predictor's path, 15 % slower
        ("sweep_config_s", 1.11, True, 1, True),  # a sweep configuration, 11 % slower
        ("sweep_config_s", 0.6, True, 0, False),  # faster
    ],
)
def test_ab_fails_only_with_check_and_only_beyond_the_tolerance(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    figure: str,
    head_value: float,
    check: bool,
    status: int,
    too_slow: bool,
) -> None:
    ab = _load_ab()
    (tmp_path / ab.SDSC_SP2).write_bytes(b"")
    base = {f.key: 1000.0 if f.higher_is_better else 1.0 for f in ab.FIGURES}  # every figure the bench has

    def run_side(tree: Path, trace: Path, env_steps: int, seed: int, clock: str) -> dict[str, Any]:
        values = dict(base)
        if tree == ab.REPO:  # head: this working tree
            values[figure] = head_value
        hashes = {"easy_start_sha256": "same", "easypp_start_sha256": "same"}
        return {**values, **hashes, "easy_jobs": 3, "env_id": "hpcgym/Dispatch-v1"}

    class NoWorktrees:
        def __enter__(self) -> NoWorktrees:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def add(self, commit: str, name: str) -> Path:
            return tmp_path / name

    monkeypatch.setattr(ab, "run_side", run_side)
    monkeypatch.setattr(ab, "Worktrees", NoWorktrees)
    argv = ["--base", "HEAD", "--traces", str(tmp_path), "--repeat", "3", *(["--check"] if check else [])]
    assert ab.main(argv) == status
    out = capsys.readouterr()
    assert out.out.count("identical on both sides") == 2  # EASY and EASY++
    assert ("slower than base on: " + figure in out.err) == too_slow
