"""Machines, presets, TOML files, PBS select requests and aligning requests to a machine."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from checks import jobs_on, machines_and_workloads, replay_capacity, run_cli
from conftest import quick
from hypothesis import given, settings

from hpcgym.baselines import EasyBackfilling, make_policy, policy_specs, preset_predictor
from hpcgym.common.errors import InvalidConfigError, InvalidDecisionError, UnknownNameError
from hpcgym.machine import Machine, align_requests, machine_specs, make_machine, parse_select, unique_rows
from hpcgym.predict import make_predictor
from hpcgym.sim import Decision, DispatcherBase, Simulator, as_dispatcher
from hpcgym.workloads import DROP_NO_RESOURCE, DROP_TOO_LARGE, Workload, fit_workload, load_default

EURORA_TOML = Path(__file__).resolve().parents[2] / "hpcgym" / "machine" / "presets" / "eurora.toml"


# ------------------------------------------------------------- machines
def test_processors_machine_is_one_node_of_n_processors():
    m = Machine.processors(128)
    assert (m.n_nodes, m.resources, m.capacity.tolist(), m.exclusive) == (1, ("procs",), [[128]], False)
    assert m.total.tolist() == [128]


def test_node_size_gives_exclusive_nodes():
    m = Machine.processors(128, node_size=8)
    assert (m.n_nodes, m.exclusive) == (16, True)
    assert (m.capacity == 8).all()


@pytest.mark.parametrize(
    ("procs", "node_size", "what"), [(0, None, "procs"), (100, 7, "node_size"), (8, 0, "node_size")]
)
def test_bad_processor_machines_name_the_parameter(procs, node_size, what):
    with pytest.raises(InvalidConfigError, match=what):
        Machine.processors(procs, node_size=node_size)


def test_eurora_preset():
    m = make_machine("eurora")
    assert m.name == "eurora" and m.n_nodes == 64
    assert m.resources == ("cores", "gpus", "mics", "mem_gb")
    gpu, mic = m.groups["gpu"], m.groups["mic"]
    assert len(gpu) == len(mic) == 32 and not set(gpu.tolist()) & set(mic.tolist())
    assert (m.capacity[gpu] == [16, 2, 0, 16]).all() and (m.capacity[mic] == [16, 0, 2, 16]).all()
    hours = {q: (w / 3600, e / 3600) for q, (w, e) in m.queues.items()}
    assert hours == {
        "debug": (0.5, 1.0),
        "parallel": (4.0, 6.0),
        "np_longpar": (8.0, 24.0),
        "longpar": (24.0, 24.0),
        "reservation": (24.0, 0.5),
    }
    assert not m.exclusive and m.allocation == "first-fit"
    assert "eurora" in machine_specs() and make_machine("EURORA").n_nodes == 64


def test_a_machine_is_frozen_and_pickles():
    m = make_machine("eurora")
    with pytest.raises(ValueError, match="read-only"):
        m.capacity[0, 0] = 99
    m.nodes  # noqa: B018 - the cached bundle is not pickled but rebuilt
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.capacity, m.capacity)
    assert back.nodes.policy == m.nodes.policy and back.groups.keys() == m.groups.keys()


def test_from_dict_round_trips_through_to_dict():
    m = make_machine("eurora")
    back = Machine.from_dict(m.to_dict())
    np.testing.assert_array_equal(back.capacity, m.capacity)
    assert back.queues == m.queues and back.resources == m.resources
    assert {g: v.tolist() for g, v in back.groups.items()} == {g: v.tolist() for g, v in m.groups.items()}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"resources": []}, "at least one resource"),
        ({"resources": ["cores", "cores"]}, "duplicate"),
        ({"nodes": [{"count": 2, "cores": -1}]}, r"nodes\[0\].cores: must be a non-negative integer"),
        ({"nodes": [{"count": 2, "cpus": 4}]}, r"nodes\[0\]: unknown key 'cpus'"),
        ({"nodes": [{"count": 0, "cores": 4}]}, r"nodes\[0\].count: must be a positive integer"),
        ({"nodes": []}, "nodes must be a non-empty list"),
        ({"node": []}, "unknown key 'node'; did you mean 'nodes'"),
        ({"queues": {"debug": {"max_walltime_s": -5}}}, r"queues.debug: max_walltime_s must be > 0"),
        ({"queues": {"debug": {"max_wall": 5}}}, r"queues.debug: unknown key 'max_wall'"),
        ({"allocation": "worst-fit"}, "allocation must be one of first-fit, best-fit"),
        ({"exclusive": "yes"}, "exclusive must be true or false"),
        ({"groups": {"x": [0, 99]}}, r"groups.x: node indices must lie in \[0, 2\)"),
        ({"nodes": [{"count": 2}]}, "node 0 has no resources"),
    ],
)
def test_from_dict_errors_name_the_key(change, message):
    d = {"name": "m", "resources": ["cores", "gpus"], "nodes": [{"count": 2, "cores": 4}], **change}
    with pytest.raises(InvalidConfigError, match=message):
        Machine.from_dict(d)


def test_from_file_reads_toml(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(
        'resources = ["cores", "gpus"]\nallocation = "best-fit"\n'
        '[[nodes]]\ncount = 2\ngroup = "cpu"\ncores = 8\n'
        '[[nodes]]\ngroup = ["gpu", "big"]\ncores = 16\ngpus = 4\n'
        "[queues.q]\nmax_walltime_s = 3600\n"
    )
    m = make_machine(path)
    assert m.name == "tiny" and m.allocation == "best-fit"
    assert m.capacity.tolist() == [[8, 0], [8, 0], [16, 4]]
    assert {g: v.tolist() for g, v in m.groups.items()} == {"cpu": [0, 1], "gpu": [2], "big": [2]}
    assert m.queues == {"q": (3600.0, 0.0)}
    assert make_machine(str(path)).n_nodes == 3


@pytest.mark.parametrize("name", sorted(machine_specs()))
def test_every_preset_builds_and_is_described(name):
    m = make_machine(name)
    assert m.name == name and machine_specs()[name].description == m.description


def test_the_preset_file_is_what_make_machine_builds():
    np.testing.assert_array_equal(Machine.from_file(EURORA_TOML).capacity, make_machine("eurora").capacity)


def test_bad_files_give_clear_errors(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("resources = [cores\n")
    with pytest.raises(InvalidConfigError, match=r"bad.toml: not valid TOML"):
        Machine.from_file(bad)
    with pytest.raises(FileNotFoundError, match=r"missing\.toml"):
        make_machine(tmp_path / "missing.toml")
    with pytest.raises(UnknownNameError, match=r"unknown machine 'nowhere'; known machines: eurora"):
        make_machine("nowhere")
    yml = tmp_path / "m.yaml"
    yml.write_text("resources: [cores]\nnodes:\n  - {count: 2, cores: 4}\n")
    import builtins

    real_import = builtins.__import__

    def no_yaml(name, *args, **kwargs):
        if name == "yaml":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_yaml)
    with pytest.raises(InvalidConfigError, match="reading a YAML machine needs PyYAML"):
        Machine.from_file(yml)


def test_yaml_files_when_pyyaml_is_installed(tmp_path):
    pytest.importorskip("yaml")
    yml = tmp_path / "m.yaml"
    yml.write_text("resources: [cores]\nnodes:\n  - {count: 2, cores: 4}\n")
    assert Machine.from_file(yml).capacity.tolist() == [[4], [4]]


# ------------------------------------------------------------ requests
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2:ncpus=8:ngpus=2:mem=8gb", (2, {"cores": 8, "gpus": 2, "mem_gb": 8})),
        ("select=1:ncpus=16:nmics=2", (1, {"cores": 16, "mics": 2})),
        ("ncpus=4", (1, {"cores": 4})),
        ("1:ncpus=1:mem=1mb", (1, {"cores": 1, "mem_gb": 1})),  # rounded up to a whole GB
        ("1:ncpus=1:mem=1024mb", (1, {"cores": 1, "mem_gb": 1})),
        ("1:ncpus=1:mem=1025MB", (1, {"cores": 1, "mem_gb": 2})),
        ("1:ncpus=1:mem=2tb", (1, {"cores": 1, "mem_gb": 2048})),
        ("1:ncpus=1:mem=3000000", (1, {"cores": 1, "mem_gb": 1})),  # bytes
        ("3:foo=2", (3, {"foo": 2})),
    ],
)
def test_parse_select(text, expected):
    assert parse_select(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected"),
        ("0:ncpus=1", "chunk count '0'"),
        ("x:ncpus=1", "chunk count 'x'"),
        ("2", "no resources"),
        ("1:ncpus", "'ncpus' is not name=value"),
        ("1:ncpus=two", "ncpus='two'"),
        ("1:mem=8 gigabytes", "is not a size"),
        ("1:ncpus=1+2:ncpus=4", "different shapes"),
        ("1:ncpus=1:ncpus=2", "given twice"),
        ("1:ncpus=1::mem=1gb", "expected"),
    ],
)
def test_parse_select_errors_name_the_part(text, message):
    with pytest.raises(InvalidConfigError, match=message):
        parse_select(text)


def hetero(rows, resources=("cores", "gpus"), chunks=None) -> Workload:
    n = len(rows)
    return Workload.from_columns(
        np.arange(n, dtype=float),
        np.full(n, 10.0),
        None,
        np.full(n, 20.0),
        chunks=chunks if chunks is not None else np.ones(n, dtype=np.int64),
        per_chunk=rows,
        resources=resources,
        procs=16,
    )


def test_align_requests_by_name_with_the_procs_cores_alias():
    m = Machine.from_dict({"resources": ["gpus", "cores"], "nodes": [{"count": 2, "cores": 8, "gpus": 1}]})
    chunks, per, reason = align_requests(m, ("procs", "gpus"), np.array([2, 1]), np.array([[4, 1], [3, 0]]))
    assert chunks.tolist() == [2, 1] and per.tolist() == [[1, 4], [0, 3]] and reason.tolist() == [0, 0]


def test_align_requests_says_why_a_job_can_never_run():
    m = make_machine("eurora")
    w = hetero(
        [[1, 0, 0, 0, 1], [1, 3, 0, 0, 0], [16, 2, 0, 0, 0], [1, 0, 0, 1, 0]],
        resources=("cores", "gpus", "mics", "mem_gb", "fpgas"),
        chunks=np.array([1, 1, 33, 1]),
    )
    _, _, reason = align_requests(m, w.resources, w.chunks, w.per_chunk)
    # an FPGA, 3 GPUs in one chunk, 33 full GPU nodes; the last job is fine
    assert reason.tolist() == [1, 2, 3, 0]


def test_exclusive_nodes_split_a_large_job_into_whole_nodes():
    m = Machine.processors(32, node_size=8)
    chunks, per, reason = align_requests(
        m, ("procs",), np.ones(5, dtype=np.int64), np.array([[1], [8], [9], [20], [32]])
    )
    assert chunks.tolist() == [1, 1, 2, 3, 4]  # ceil(p / 8) nodes
    assert (per[:, 0] <= 8).all() and (chunks * per[:, 0] >= [1, 8, 9, 20, 32]).all()
    assert reason.tolist() == [0] * 5
    _, _, reason = align_requests(m, ("procs",), np.ones(1, dtype=np.int64), np.array([[33]]))
    assert reason.tolist() == [3]


def test_fit_workload_drops_and_counts_what_the_machine_cannot_run():
    w = load_default().window(2000)
    m = Machine.processors(64)
    fitted = fit_workload(w, m)
    too_large = int((w.procs_req > 64).sum())
    assert too_large > 0 and len(fitted) == len(w) - too_large
    assert fitted.report.dropped[DROP_TOO_LARGE] == too_large
    assert fitted.machine is m and (fitted.procs_req <= 64).all()
    gpus = fit_workload(hetero([[1, 0], [1, 1]]), Machine.processors(16))
    assert len(gpus) == 1 and gpus.machine.name == "procs16"
    assert gpus.report is None  # a hand-made workload has no load report to count in


def test_fit_workload_counts_missing_resources(tmp_path):
    from hpcgym.workloads import write_swf

    w = hetero([[1, 0], [1, 1], [2, 0]])
    path = tmp_path / "w.swf"
    write_swf(path, w)
    from hpcgym.workloads import read_swf

    swf = read_swf(path)
    m = Machine.from_dict({"resources": ["gpus"], "nodes": [{"gpus": 2}]})
    fitted = fit_workload(swf, m)
    assert len(fitted) == 0 and fitted.report.dropped == {DROP_NO_RESOURCE: 3}


# ------------------------------------------------------ workload columns
def test_swf_jobs_are_one_chunk_of_their_processors():
    w = load_default().window(50)
    assert w.resources == ("procs",)
    np.testing.assert_array_equal(w.chunks, 1)
    np.testing.assert_array_equal(w.per_chunk[:, 0], w.procs_req)
    assert not w.per_chunk.flags.writeable


def test_request_columns_follow_windows_and_copies():
    w = hetero([[1, 0], [2, 1], [3, 0]], chunks=np.array([1, 2, 3]))
    assert int(w.procs_req[2]) == 9  # chunks x cores
    part = w.window(2, 1)
    assert part.chunks.tolist() == [2, 3] and part.per_chunk.tolist() == [[2, 1], [3, 0]]
    assert part.resources == ("cores", "gpus")
    assert w.public.per_chunk.tolist() == w.per_chunk.tolist()
    back = pickle.loads(pickle.dumps(w))
    assert back.per_chunk.tolist() == w.per_chunk.tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunks": [0], "per_chunk": [[1]], "resources": ("cores",)}, "chunks: job 0 asks for 0 chunks"),
        (
            {"chunks": [1], "per_chunk": [[-1]], "resources": ("cores",)},
            "per_chunk: job 0 asks for -1 of cores",
        ),
        ({"chunks": [1], "per_chunk": [[0]], "resources": ("cores",)}, "job 0 asks for no resource"),
        ({"chunks": [1], "per_chunk": [[1, 2]], "resources": ("cores",)}, "one column per resource"),
        (
            {"chunks": [1.5], "per_chunk": [[1]], "resources": ("cores",)},
            "chunks: entry 0 is not a whole number",
        ),
        ({"chunks": [1], "per_chunk": [[1]]}, "must be given together"),
        ({"chunks": [1], "per_chunk": [[1, 1]], "resources": ("a", "a")}, "distinct names"),
    ],
)
def test_bad_request_columns_name_the_column_and_job(kwargs, message):
    with pytest.raises(InvalidConfigError, match=message):
        Workload.from_columns([0.0], [1.0], None, [1.0], procs=4, **kwargs)


# ------------------------------------------------- simulating on machines
def cores_machine(capacity, *, allocation="first-fit", exclusive=False) -> Machine:
    cap = np.asarray(capacity)
    resources = ("cores", "gpus", "mics", "mem_gb")[: cap.shape[1]]
    return Machine("m", resources, cap, allocation=allocation, exclusive=exclusive)


def test_best_fit_and_first_fit_choose_different_nodes():
    # node 0 has 8 cores, node 1 has 4. Job 0 (4 cores) goes to node 0 under first fit,
    # to node 1 (nothing left over) under best fit. Job 1 (8 cores, at t=1) then fits
    # only under best fit; under first fit it waits for job 0 to end at t=10.
    rows = [(0, 10, 10, 1, [4]), (1, 5, 5, 1, [8])]
    first = Simulator(jobs_on(cores_machine([[8], [4]]), rows)).run(make_policy("fcfs"))
    best = Simulator(jobs_on(cores_machine([[8], [4]], allocation="best-fit"), rows)).run(make_policy("fcfs"))
    assert first.placement(0).tolist() == [0] and best.placement(0).tolist() == [1]
    np.testing.assert_array_equal(first.start, [0, 10])
    np.testing.assert_array_equal(best.start, [0, 1])
    assert best.placement(1).tolist() == [0]


def test_a_gpu_job_waits_while_cpu_jobs_backfill_on_mic_nodes():
    eurora = make_machine("eurora")
    gpu, mic = set(eurora.groups["gpu"].tolist()), set(eurora.groups["mic"].tolist())
    rows = [
        (0, 100, 100, 32, [1, 2, 0, 1]),  # every GPU of the machine for 100 s
        (1, 50, 60, 1, [1, 1, 0, 1]),  # a GPU job: waits for the first, reserved for t=100
        (2, 500, 1000, 1, [16, 0, 0, 4]),  # CPU-only and long: only MIC nodes have 16 free cores
        (2, 500, 1000, 1, [16, 0, 0, 4]),
        (3, 500, 1000, 1, [8, 0, 0, 2]),  # long, fits next to the reservation on a GPU node
    ]
    w = jobs_on(eurora, rows)
    easy = EasyBackfilling(record_reservations=True)
    s = Simulator(w).run(easy)
    np.testing.assert_array_equal(s.start, [0, 100, 2, 2, 3])
    assert s.extras["first_reservation"][1] == 100  # and it starts exactly then
    assert set(s.placement(1).tolist()) <= gpu
    assert set(s.placement(2).tolist()) | set(s.placement(3).tolist()) <= mic
    assert s.placement(2).tolist() != s.placement(3).tolist()
    assert set(s.placement(4).tolist()) <= gpu | mic


def test_a_job_asking_for_more_gpus_than_any_node_is_rejected_at_load():
    eurora = make_machine("eurora")
    w = jobs_on(eurora, [(0, 10, 10, 1, [1, 0, 0, 1]), (1, 10, 10, 1, [2, 3, 0, 1])])
    with pytest.raises(
        InvalidConfigError, match=r"job 1 \(id 2\) asks for 1 x \(cores=2, gpus=3, mem_gb=1\).*gpus=2"
    ):
        Simulator(w)
    fitted = fit_workload(w, eurora)
    assert len(fitted) == 1
    assert Simulator(fitted).run(make_policy("easy")).start.tolist() == [0.0]


def test_exclusive_nodes_hold_one_job_each():
    m = Machine.processors(8, node_size=4)
    w = Workload.from_columns([0, 0, 0, 1], [10, 10, 10, 10], [1, 1, 1, 5], [10, 10, 10, 10], machine=m)
    s = Simulator(w).run(make_policy("fcfs"))
    # two 1-processor jobs take both nodes; the third waits for one; the 5-processor job
    # needs both nodes (ceil(5/4) = 2 chunks) and waits for them
    np.testing.assert_array_equal(s.start, [0, 0, 10, 20])
    assert [s.placement(j).tolist() for j in range(4)] == [[0], [1], [0], [0, 1]]


def test_the_engine_checks_a_given_placement():
    m = cores_machine([[4], [4]])
    w = jobs_on(m, [(0, 10, 10, 2, [2]), (0, 10, 10, 1, [4])])
    sim = Simulator(w)
    assert sim.advance()
    with pytest.raises(
        InvalidDecisionError, match="placement: 1 node indices given for 1 jobs with 2 chunks"
    ):
        sim.start(Decision([0], [0]))
    with pytest.raises(InvalidDecisionError, match=r"job 0 cannot start .* on nodes \[0, 7\]"):
        sim.start(Decision([0], [0, 7]))
    sim.start(Decision([0], [0, 0]))  # two chunks of 2 on node 0
    with pytest.raises(InvalidDecisionError, match=r"job 1 cannot start .* on nodes \[0\]: .*over-used"):
        sim.start(Decision([1], [0]))
    sim.start(Decision([1], [1]))
    assert sim.view.free.tolist() == [[0], [0]]
    assert sim.view.placement(0).tolist() == [0, 0] and sim.view.placement(1).tolist() == [1]


def test_dispatchers_returning_plain_job_lists_are_placed_by_the_machine_policy():
    m = cores_machine([[4], [2]], allocation="best-fit")
    w = jobs_on(m, [(0, 10, 10, 1, [2]), (0, 10, 10, 1, [2])])
    s = Simulator(w).run(lambda view: list(view.queue))
    assert [s.placement(j).tolist() for j in range(2)] == [[1], [0]]


def test_utilization_per_resource_type_and_node_group():
    from hpcgym.sim import compute_metrics

    m = Machine("m", ("cores", "gpus"), np.array([[4, 2], [4, 0]]), groups={"a": [0], "b": [1]})
    w = jobs_on(m, [(0, 10, 10, 1, [2, 1]), (0, 4, 4, 1, [4, 0])])
    s = Simulator(w).run(make_policy("fcfs"))
    assert [s.placement(j).tolist() for j in range(2)] == [[0], [1]]
    u = compute_metrics(s, include_all=True)
    # makespan 10 s; cores held 2 x 10 + 4 x 4 = 36 of 8 x 10; GPU 1 x 10 of 2 x 10
    assert u["utilization_by_resource"] == pytest.approx({"cores": 0.45, "gpus": 0.5})
    groups = u["utilization_by_group"]
    assert groups.keys() == {"a", "b"}
    assert groups["a"] == pytest.approx({"cores": 0.5, "gpus": 0.5}) and groups["b"] == pytest.approx(
        {"cores": 0.4}
    )
    # an exclusive machine's jobs hold whole nodes: one processor asked, four held
    x = Machine.processors(8, node_size=4)
    s = Simulator(Workload.from_columns([0], [10], [1], [10], machine=x)).run(make_policy("fcfs"))
    u = compute_metrics(s, include_all=True)
    assert u["utilization"] == pytest.approx(1 / 8) and u["utilization_by_resource"] == {"procs": 0.5}


# ---------------------------------------- properties on random machines
POLICY_NAMES = [quick(p) for p in sorted(policy_specs())]


@pytest.mark.parametrize("policy", POLICY_NAMES)
@settings(max_examples=25)
@given(case=machines_and_workloads())
def test_every_dispatcher_on_random_machines_keeps_capacity_and_requests(policy, case):
    machine, w = case
    dispatcher = as_dispatcher(make_policy(policy))
    started: list[int] = []

    class Counting(DispatcherBase):
        name = policy

        @property
        def every_event(self):
            return dispatcher.every_event

        def reset(self, view):
            dispatcher.reset(view)

        def __call__(self, view):
            decision = dispatcher(view)
            started.extend(int(j) for j in decision)
            return decision

    s = Simulator(w, predictor=preset_predictor(policy)).run(Counting())
    assert sorted(started) == list(range(len(w))), "every job starts exactly once"
    assert np.isfinite(s.start).all() and np.isfinite(s.end).all()
    assert (s.start >= w.submit).all()
    np.testing.assert_array_equal(s.end, s.start + w.runtime)
    replay_capacity(machine, w, s)


@pytest.mark.parametrize("predictor", ["walltime", "real"])
@pytest.mark.parametrize("sjbf", [False, True], ids=["easy", "easy-sjbf"])
@pytest.mark.parametrize("extra", ["classic", "all"])
@settings(max_examples=40)
@given(case=machines_and_workloads(max_jobs=12))
def test_easy_keeps_every_reservation_on_random_machines(predictor, sjbf, extra, case):
    """Predictions never below the run time (runtime <= estimate): no head job starts late."""
    machine, w = case
    easy = EasyBackfilling(sjbf=sjbf, extra=extra, record_reservations=True)
    s = Simulator(w, predictor=make_predictor(predictor)).run(easy)
    replay_capacity(machine, w, s)
    reserved = s.extras["first_reservation"]
    has = ~np.isnan(reserved)
    late = has & (s.start > reserved)
    assert not late.any(), f"jobs {np.flatnonzero(late)} started after their reservation"


def test_the_reservation_property_is_not_vacuous_on_machines():
    # two nodes of 4 cores. Job 0 holds 2 cores of node 0 until 10, job 1 all of node 1
    # until 20; job 2 (4 cores) is reserved node 0 at t=10. Job 3 (2 cores, long) would
    # fit node 0 now but would delay job 2: it waits. Job 4 (2 cores, ends by 10)
    # backfills on node 0 at once.
    m = cores_machine([[4], [4]])
    rows = [
        (0, 10, 10, 1, [2]),
        (0, 20, 20, 1, [4]),
        (1, 5, 5, 1, [4]),
        (2, 50, 50, 1, [2]),
        (2, 5, 5, 1, [2]),
    ]
    easy = EasyBackfilling(record_reservations=True)
    s = Simulator(jobs_on(m, rows), predictor=make_predictor("real")).run(easy)
    assert s.extras["first_reservation"][2] == 10
    np.testing.assert_array_equal(s.start, [0, 0, 10, 15, 2])
    assert [s.placement(j).tolist() for j in range(5)] == [[0], [1], [0], [0], [0]]


# --------------------------------------------------------------- the CLI
def test_cli_simulate_on_a_machine_preset_and_with_node_size(tmp_path):
    import json

    code, out, _ = run_cli("simulate", "--machine", "eurora", "--jobs", "500", "--policy", "easy", "--json")
    row = json.loads(out)
    assert code == 0 and row["procs"] == 1024
    assert set(row["utilization_by_resource"]) == {"cores", "gpus", "mics", "mem_gb"}
    assert set(row["utilization_by_group"]) == {"gpu", "mic"}
    # SWF jobs wider than a 16-core node cannot run on Eurora: dropped and counted
    assert row["dropped_by_reason"]["size > machine"] > 0
    path = tmp_path / "s.csv"
    code, out, _ = run_cli(
        "simulate", "--node-size", "8", "--jobs", "300", "--schedule-out", str(path), "--json"
    )
    assert code == 0
    lines = path.read_text().splitlines()
    assert lines[0].split(",")[-1] == "nodes"
    import csv

    records = list(csv.DictReader(lines))
    for r in records:
        nodes = [int(x) for x in r["nodes"].split(";")]
        assert len(nodes) == -(-int(r["procs"]) // 8) and all(0 <= x < 16 for x in nodes)


def test_cli_machine_errors_and_listing(tmp_path):
    code, _, err = run_cli("simulate", "--machine", "eurora", "--node-size", "8", "--jobs", "10")
    assert code == 2 and "--node-size 8" in err and "give one of them" in err
    code, _, err = run_cli("simulate", "--node-size", "7", "--jobs", "10")
    assert code == 2 and "node_size: 7 does not divide the machine's 128 processors" in err
    code, _, err = run_cli("simulate", "--machine", "nowhere", "--jobs", "10")
    assert code == 2 and "unknown machine 'nowhere'" in err
    code, out, _ = run_cli("machines")
    assert code == 0 and out.startswith("eurora:") and "queue reservation: max wall-time 24 h" in out
    code, out, _ = run_cli("machines", "--json")
    import json

    assert json.loads(out)["eurora"]["resources"] == ["cores", "gpus", "mics", "mem_gb"]


@pytest.mark.parametrize(
    "rows",
    [
        np.array([[1, 8], [2, 1], [1, 8], [1, 2]]),
        np.random.default_rng(0).integers(0, 7, size=(500, 4)),  # few possible rows: marked in a table
        np.random.default_rng(2).integers(0, 10**6, size=(300, 3)),  # many: sorted as numbers
        np.random.default_rng(1).integers(-3, 3, size=(200, 2)),  # negative: numpy's own way
        np.array([[2**40, 1, 2**30], [0, 0, 0], [2**40, 1, 2**30]]),  # ranges too wide for one number
        np.array([[5]]),
        np.zeros((0, 3), dtype=np.int64),
    ],
)
def test_unique_rows_is_numpys_unique_over_rows(rows):
    shapes, inverse = unique_rows(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(shapes, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))
    assert shapes.dtype == np.int64 and inverse.ndim == 1
