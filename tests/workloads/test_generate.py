"""The synthetic Eurora generator: published shares, seeding, job-table round trips, CLI."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.cli import main
from hpcgym.common.errors import InvalidConfigError
from hpcgym.machine import align_requests, make_machine
from hpcgym.predict import ProfilePredictor, name_prefix, offline_predictions, prediction_mae_minutes
from hpcgym.workloads import CLASS_NAMES, EuroraParams, eurora, job_class, read_jobs, shares, write_jobs

try:
    import pyarrow  # noqa: F401

    HAS_PYARROW = True
except ImportError:
    HAS_PYARROW = False

DOCS = Path(__file__).resolve().parents[2] / "docs" / "WORKLOADS.md"
N = 100_000

# Published figure -> (target, absolute tolerance), as fractions of jobs. The tolerances
# are several standard deviations of the share over 100,000 generated jobs (sessions of
# several jobs share a kind, which widens them beyond a binomial's): computing shares()
# of eurora(100_000, seed) for seeds 0-19 put every share within 0.56 of its tolerance.
TARGETS = {
    "short": (0.9315, 0.01),  # 001: 93.15 %
    "medium": (0.0682, 0.008),  # 001: 6.82 % (1-12 h)
    "medium_1_5h": (0.0610, 0.008),  # 002: 6.10 % (1-5 h)
    "over_5h": (0.0075, 0.0025),  # 002: 0.75 % (> 5 h)
    "queue:debug": (0.50, 0.02),
    "queue:parallel": (0.41, 0.02),
    "queue:reservation": (0.06, 0.01),
    "queue:np_longpar": (0.03, 0.007),
    "one_node": (0.95, 0.015),
    "one_core": (0.62, 0.02),
    "gpu": (0.15, 0.02),
}


@pytest.fixture(scope="module", params=[0, 7])
def big(request):
    return eurora(N, seed=request.param)


def test_published_shares_hold_over_100000_jobs(big):
    s = shares(big)
    for key, (target, tol) in TARGETS.items():
        assert abs(s[key] - target) <= tol, (key, s[key], target)
    assert 0.0001 <= s["long"] <= 0.0006  # 001: 0.03 % long (> 12 h)
    assert 0.0 < s["queue:longpar"] <= 0.01  # "a few longpar"
    assert 0.002 <= s["mic"] < 0.01  # under 1 % ask for MICs
    assert 43200 < s["max_runtime_s"] <= 86400  # 001: maximum 24 h, and long jobs exist
    assert s["median_interarrival_s"] == 0.0  # bursty
    assert abs(s["mean_interarrival_s"] - EuroraParams().mean_interarrival_s) < 3.0
    # 001: medium jobs take most of the CPU time
    assert s["cpu_time:medium"] > 0.8 > s["cpu_time:short"] > s["cpu_time:long"]


def test_class_shares_match_both_papers_by_construction():
    p = EuroraParams()
    short, m1, m2, long = p.class_shares()
    assert short == pytest.approx(0.9315, abs=1e-4)
    assert m1 + m2 == pytest.approx(0.0682, abs=1e-4)  # 001's medium
    assert long == pytest.approx(0.0003, abs=1e-5)  # 001's long
    assert m1 == pytest.approx(0.0610, abs=1e-4)  # 002's medium
    assert m2 + long == pytest.approx(0.0075, abs=1e-4)  # 002's long
    mix = p.shape_mix()
    assert (mix >= 0).all() and np.allclose(mix.sum(axis=1), 1.0)
    assert np.allclose(p.class_shares() @ mix, p.request_shape)


def test_every_job_fits_eurora_and_its_queue(big):
    w = big
    m = make_machine("eurora")
    assert w.machine is not None and w.machine.name == "eurora"
    _, _, code = align_requests(m, w.resources, w.chunks, w.per_chunk)
    assert (code == 0).all()
    per = {r: w.per_chunk[:, k] for k, r in enumerate(w.resources)}
    assert per["cores"].min() >= 1 and per["cores"].max() <= 16
    assert per["mem_gb"].min() >= 1 and per["mem_gb"].max() <= 16
    assert per["gpus"].max() <= 2 and per["mics"].max() <= 2
    assert not ((per["gpus"] > 0) & (per["mics"] > 0)).any()  # never both in a chunk
    qmax = np.array([m.queues[w.names["queue"][q]][0] for q in w.queue])
    assert (w.estimate <= qmax).all() and (w.estimate > 0).all()
    assert (w.runtime <= w.estimate).all() and (w.runtime >= 1).all()
    assert (w.runtime == np.floor(w.runtime)).all() and (np.diff(w.submit) >= 0).all()
    assert w.submit[0] == 0 and (w.submit == np.floor(w.submit)).all()
    # the queue default (its maximum) is what most jobs ask for
    assert np.mean(w.estimate == qmax) > 0.8
    # medium and long jobs only where the queue allows them
    debug = w.queue == w.names["queue"].index("debug")
    assert (job_class(w)[debug] == 0).all()


def check_invariants(w) -> None:
    """What every generated workload satisfies, whatever its size, seed, load or parameters."""
    m = make_machine("eurora")
    n = len(w)
    assert w.job_id.tolist() == list(range(1, n + 1))
    _, _, code = align_requests(m, w.resources, w.chunks, w.per_chunk)
    assert (code == 0).all()
    per = w.per_chunk
    assert not ((per[:, 1] > 0) & (per[:, 2] > 0)).any()
    assert (per[:, 3] >= 1).all() and (per[:, 3] <= 16).all()
    qmax = np.array([m.queues[w.names["queue"][q]][0] for q in w.queue])
    assert (w.estimate <= qmax).all()
    assert (w.runtime >= 1).all() and (w.runtime <= w.estimate).all() and (w.runtime <= 86400).all()
    assert w.submit[0] == 0 and (np.diff(w.submit) >= 0).all()
    assert all(len(w.names[c]) == len(set(w.names[c])) for c in w.names)
    for attr, column in (("user", "user"), ("executable", "job_name"), ("queue", "queue")):
        codes = getattr(w, attr)
        first = np.unique(codes, return_index=True)[1]
        assert np.array_equal(np.argsort(first, kind="stable"), np.arange(len(first)))  # first-seen order
        assert codes.max() == len(w.names[column]) - 1


@settings(max_examples=examples(25))
@given(
    n=st.integers(1, 600),
    seed=st.integers(0, 2**32 - 1),
    load=st.floats(0.05, 20.0),
    shift=st.floats(0.0, 1.0),
    new_profile=st.floats(0.0, 1.0),
    same_second=st.floats(0.0, 1.0),
)
def test_any_size_seed_load_and_locality_give_valid_jobs(n, seed, load, shift, new_profile, same_second):
    p = dataclasses.replace(EuroraParams(), shift=shift, new_profile=new_profile, same_second=same_second)
    w = eurora(n, seed=seed, load=load, params=p)
    assert len(w) == n
    check_invariants(w)


def test_memory_grows_with_cores(big):
    per = big.per_chunk
    cores, mem = per[:, 0], per[:, 3]
    assert np.mean(mem[cores == 16]) > 4 * np.mean(mem[cores == 1])
    assert len(np.unique(mem[cores == 4])) > 3  # noise, not a fixed ratio


def test_the_same_seed_writes_the_same_file_and_another_seed_another(tmp_path):
    paths = []
    for i, seed in enumerate((5, 5, 6)):
        path = tmp_path / f"jobs{i}.csv"
        write_jobs(eurora(3000, seed=seed), path)
        paths.append(path.read_bytes())
    assert paths[0] == paths[1]
    assert paths[0] != paths[2]


def test_the_generated_jobs_are_what_the_reader_gives_back(tmp_path):
    w = eurora(5000, seed=3)
    path = tmp_path / "jobs.csv"
    write_jobs(w, path)
    back = read_jobs(path)
    assert back.report is not None
    assert back.report.jobs_dropped == 0 and back.report.default_estimates == 0
    assert not back.report.warnings
    for c in (*COLUMNS_OF_WORKLOAD, "raw"):
        assert np.array_equal(getattr(w, c), getattr(back, c)), c
    assert dict(w.names) == dict(back.names)
    assert w.resources == back.resources and w.procs == back.procs
    assert dict(w.header) == dict(back.header)
    assert back.machine is not None and back.machine.name == "eurora"


COLUMNS_OF_WORKLOAD = (
    "job_id",
    "submit",
    "runtime",
    "estimate",
    "procs_req",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "status",
    "chunks",
    "per_chunk",
)


def test_load_divides_inter_arrival_times_and_changes_nothing_else():
    base, heavy = eurora(4000, seed=2), eurora(4000, seed=2, load=2.0)
    # submit = floor(cumsum(gaps / load)): within a second of half the unscaled times
    assert np.all(np.abs(heavy.submit - base.submit / 2) <= 1)
    assert heavy.submit[-1] < 0.51 * base.submit[-1]
    for c in ("runtime", "estimate", "per_chunk", "chunks", "user", "queue", "executable"):
        assert np.array_equal(getattr(base, c), getattr(heavy, c)), c


def test_profiles_give_temporal_locality_the_profile_predictor_exploits():
    w = eurora(N, seed=11)
    d = prediction_mae_minutes(w, "D")
    wall = prediction_mae_minutes(w, "W")
    # 001: 38.9 min (D) vs 225.1 min (W); here the queue maxima bound W's error
    assert wall > 150.0
    assert d < 60.0
    assert d < 0.3 * wall
    pred = offline_predictions(w, "D")
    ratio = w.runtime / np.maximum(pred, 1.0)
    within = np.mean((ratio >= 0.75) & (ratio <= 1.25))
    assert 0.35 < within < 0.65  # 002: about half the jobs within 25 % with the heuristic
    under = np.mean(pred < w.runtime)
    assert 0.15 < under < 0.35  # 002: 25.8 % underestimated


def test_name_prefixes_let_the_profile_predictor_bridge_renames():
    w = eurora(30_000, seed=12)
    plain, prefixed = ProfilePredictor(name_prefix=None), ProfilePredictor()
    mae_plain = prediction_mae_minutes(w, plain)
    mae_prefixed = prediction_mae_minutes(w, prefixed)
    # rule 2 (same prefix, queue, wall-time, resources) answers for renamed profiles
    assert (prefixed.rule == 2).sum() > 0 and (plain.rule == 2).sum() == 0
    assert (plain.rule == 3).sum() > 0  # same name, queue and wall-time; another size
    assert (prefixed.rule == 7).sum() < (plain.rule == 7).sum()
    assert mae_prefixed < mae_plain
    prefix = name_prefix(w)
    assert [prefix(c) for c in range(3)] == [re.sub(r"\d+$", "", n) for n in w.names["job_name"][:3]]
    assert prefix(-1) == ""  # a job without a name


def test_names_share_prefixes_and_shift_with_numbers():
    w = eurora(20_000, seed=4)
    names = w.names["job_name"]
    pattern = re.compile(r"^([a-z]+_[a-z]+)(\d+)$")
    assert all(pattern.match(n) for n in names)
    prefixes = {pattern.match(n).group(1) for n in names}  # type: ignore[union-attr]
    assert len(prefixes) < len(names)  # some prefixes carry several numbers: run_a1, run_a2
    # a user's job name keeps its queue, wall-time and kind of request (one core, one
    # node, several nodes; GPUs, MICs), while its size may change (001's rule 3)
    per = w.per_chunk
    kind = np.column_stack([w.chunks == 1, per[:, 0] == 1, per[:, 1], per[:, 2]])
    key = np.column_stack([w.user, w.executable, w.queue, w.estimate, kind])
    assert len(np.unique(key, axis=0)) == len(np.unique(key[:, :2], axis=0))
    assert len(np.unique(key[:, :2], axis=0)) > len(names)  # users name jobs alike
    sized = np.column_stack([key, w.chunks, per[:, 0]])
    assert len(np.unique(sized, axis=0)) > len(np.unique(key, axis=0))
    # users submit unevenly
    counts = np.bincount(w.user)
    assert counts.max() > 10 * np.median(counts)


def test_queues_form_under_easy_by_default():
    from hpcgym.baselines import run_policy

    w = eurora(5000, seed=0)
    s = run_policy(w, "easy", None, progress=False).schedule
    wait = s.start - w.submit
    assert np.mean(wait > 0) > 0.02
    assert wait.max() > 3600


@pytest.mark.parametrize("policy", ["fcfs", "sjf-list", "ljf-list", "easy", "easy++"])
@pytest.mark.parametrize("predictor", ["walltime", "profile", "real"])
def test_every_job_runs_under_the_papers_dispatchers(policy, predictor):
    from hpcgym.baselines import run_policy

    w = eurora(1500, seed=5).window(1200, 100).scale_load(1.5)
    s = run_policy(w, policy, predictor, progress=False).schedule
    assert np.isfinite(s.end).all() and (s.start >= w.submit).all()
    assert np.allclose(s.end - s.start, w.runtime)


def test_cli_generates_a_table_that_simulates(tmp_path, capsys):
    path = tmp_path / "jobs.csv"
    assert main(["generate", "eurora", "--jobs", "2000", "--seed", "3", "-o", str(path)]) == 0
    err = capsys.readouterr().err
    assert "wrote 2000 jobs" in err and "one core" in err
    w = read_jobs(path)
    assert len(w) == 2000 and w.header["Machine"] == "eurora"
    assert (
        main(
            [
                "simulate",
                "--machine",
                "eurora",
                "--workload",
                str(path),
                "--policy",
                "easy",
                "--json",
                "--no-progress",
            ]
        )
        == 0
    )
    row = json.loads(capsys.readouterr().out)
    assert row["jobs_simulated"] == 2000 and row["jobs_dropped"] == 0
    again = tmp_path / "again.csv"
    assert main(["generate", "eurora", "--jobs", "2000", "--seed", "3", "-o", str(again), "--quiet"]) == 0
    assert again.read_bytes() == path.read_bytes()


def test_cli_stats_are_the_shares_and_the_maes(tmp_path, capsys):
    path = tmp_path / "jobs.csv.gz"
    assert (
        main(["generate", "eurora", "--jobs", "3000", "--seed", "9", "-o", str(path), "--stats", "--quiet"])
        == 0
    )
    out = capsys.readouterr()
    stats = json.loads(out.out)
    assert out.err == ""
    w = eurora(3000, seed=9)
    expected = shares(w)
    assert stats["jobs"] == 3000
    for key, value in expected.items():
        assert stats[key] == pytest.approx(value, abs=1e-6), key
    assert stats["mae_min:W"] == pytest.approx(prediction_mae_minutes(w, "W"), abs=1e-6)
    assert stats["mae_min:D"] == pytest.approx(prediction_mae_minutes(w, "D"), abs=1e-6)
    assert len(read_jobs(path)) == 3000


@pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow not installed")
def test_cli_writes_parquet(tmp_path):
    path = tmp_path / "jobs.parquet"
    assert main(["generate", "eurora", "--jobs", "500", "--seed", "1", "-o", str(path), "--quiet"]) == 0
    w, back = eurora(500, seed=1), read_jobs(path)
    for c in COLUMNS_OF_WORKLOAD:
        assert np.array_equal(getattr(w, c), getattr(back, c)), c


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--jobs", "0"], "--jobs"),
        (["--jobs", "10", "--seed", "-1"], "--seed"),
        (["--jobs", "10", "--load", "0"], "--load"),
        (["--jobs", "10", "--load", "nan"], "--load"),
    ],
)
def test_cli_names_the_bad_flag(tmp_path, capsys, argv, flag):
    assert main(["generate", "eurora", *argv, "-o", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hpcgym: error: ") and flag in err
    assert not (tmp_path / "x.csv").exists()


def test_cli_names_a_bad_output(tmp_path, capsys):
    assert main(["generate", "eurora", "--jobs", "10", "-o", str(tmp_path / "x.txt")]) == 2
    assert "--output" in capsys.readouterr().err
    assert main(["generate", "eurora", "--jobs", "10", "-o", str(tmp_path / "no" / "x.csv")]) == 2
    assert "no such directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"queue_shares": (0.5, 0.5, 0.5, 0.0, 0.0)}, "queue_shares"),
        ({"queues": ("debug", "parallel", "reservation", "np_longpar", "nosuch")}, "queues"),
        ({"class_mix": ((1.0, 0.0, 0.0, 0.0),)}, "class_mix"),
        ({"noise_sigma": -1.0}, "noise_sigma"),
        ({"shift": 1.5}, "shift"),
        ({"users": 0}, "users"),
        ({"request_shape": (0.5, 0.2, 0.2)}, "request_shape"),
        (
            {"request_shape_longer": ((0, 0, 1.0),) * 3, "request_shape": (0.62, 0.37, 0.01)},
            "request_shape_longer",
        ),
        ({"chunks_choices": (1, 2, 3, 4, 5)}, "chunks_choices"),
        ({"walltime_factor": (0.5, 2.0)}, "walltime_factor"),
        ({"mean_interarrival_s": 0}, "mean_interarrival_s"),
        # 5-12 h jobs in debug, whose maximum wall-time is 30 min
        ({"class_mix": ((0.999, 0.0, 0.001, 0.0), *EuroraParams().class_mix[1:])}, r"class_mix\[debug\]"),
    ],
)
def test_bad_parameters_are_named(change, field):
    with pytest.raises(InvalidConfigError, match=field):
        eurora(100, params=dataclasses.replace(EuroraParams(), **change))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_jobs": 0}, "n_jobs"),
        ({"n_jobs": 5, "seed": -3}, "seed"),
        ({"n_jobs": 5, "load": -1.0}, "load"),
        ({"n_jobs": 2.5}, "n_jobs"),
    ],
)
def test_bad_arguments_are_named(kwargs, name):
    with pytest.raises(InvalidConfigError, match=name):
        eurora(**kwargs)


def test_small_workloads_have_exactly_the_jobs_asked_for():
    for n in (1, 2, 17, 999):
        w = eurora(n, seed=n)
        assert len(w) == n and w.job_id.tolist() == list(range(1, n + 1))


def test_every_parameter_is_documented_in_the_docstring_and_the_docs():
    doc = EuroraParams.__doc__ or ""
    text = DOCS.read_text(encoding="utf-8")
    for f in dataclasses.fields(EuroraParams):
        assert re.search(rf"\b{f.name}\b", doc), f.name
        assert f"`{f.name}`" in text, f.name
    assert "## Synthetic Eurora" in text
    assert len(CLASS_NAMES) == len(EuroraParams().class_bounds_s)
