"""PRB (Galleguillos et al. 2017 section 4; 2019 section 2.2): hand-checked cases and properties."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest
from checks import machines_and_workloads, replay_capacity, run_cli
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import (
    PriorityRuleBased,
    make_policy,
    parse_ewt,
    policy_parameters,
    policy_spec,
    preset_predictor,
    resolve_policy_name,
)
from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.machine import BEST_FIT, Machine, Nodes, allocate
from hpcgym.predict import make_predictor
from hpcgym.sim import DispatcherBase, Simulator
from hpcgym.workloads import Workload, load_default, read_jobs

QUEUES = {
    "debug": {"max_walltime_s": 3600, "ewt_s": 3600},
    "parallel": {"max_walltime_s": 36000, "ewt_s": 21600},
}


def tiny_machine(nodes=None, queues=None, allocation="first-fit") -> Machine:
    return Machine.from_dict(
        {
            "name": "tiny",
            "resources": ["cores", "gpus"],
            "nodes": nodes or [{"count": 1, "cores": 4, "gpus": 2}],
            "queues": QUEUES if queues is None else queues,
            "allocation": allocation,
        }
    )


def jobs_csv(tmp_path, machine: Machine, rows: list[tuple]) -> Workload:
    """``rows``: (submit, runtime, walltime, queue, cores, gpus), read as a job table."""
    path = tmp_path / "jobs.csv"
    lines = ["submit,runtime,walltime,queue,cores,gpus"]
    lines += [",".join(str(x) for x in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return read_jobs(path, machine=machine)


# --------------------------------------------------------------- hand-checked cases
def test_priority_is_wait_over_the_queues_expected_wait(tmp_path):
    # one node of 4 cores. Job 0 (debug) holds it until t=100. By then job 1 (parallel,
    # submitted at 10) has waited 90 s, job 2 (parallel, at 40) 60 s, job 3 (debug, at 70)
    # 30 s. max ewt = 6 h, so debug's weight is 6 h / 1 h = 6 and parallel's is 1:
    # priorities 90, 60, 180. Job 3 starts at 100 and takes the node; at 150 job 1
    # (140) goes before job 2 (110), which starts when job 1 ends at 200.
    m = tiny_machine()
    rows = [
        (0, 100, 100, "debug", 4, 0),
        (10, 50, 50, "parallel", 4, 0),
        (40, 30, 30, "parallel", 2, 0),
        (70, 50, 50, "debug", 4, 0),
    ]
    w = jobs_csv(tmp_path, m, rows)
    assert [w.names["queue"][q] for q in w.queue] == ["debug", "parallel", "parallel", "debug"]
    sim = Simulator(w)
    prb = PriorityRuleBased()
    prb.reset(sim.view)
    sim.advance()  # t=0: job 0
    sim.start(prb(sim.view))
    sim.advance()  # t=100: job 0 ended
    assert sim.view.now == 100
    np.testing.assert_array_equal(sim.view.queue, [1, 2, 3])
    np.testing.assert_allclose(prb.priority(sim.view), [90, 60, 180])
    assert prb(sim.view).jobs.tolist() == [3]

    s = Simulator(w).run(make_policy("prb"))
    np.testing.assert_array_equal(s.start, [0, 150, 200, 100])
    assert s.extras["prb_ewt_source"] == "machine tiny"
    assert s.extras["prb_ewt_s"] == {"debug": 3600, "parallel": 21600}
    assert s.extras["prb_jobs_unknown_queue"] == 0
    # all ewt equal: priority is the wait. At 100 job 1 (90) starts; at 150 job 2 (110)
    # goes before job 3 (80) and, 2 cores, leaves too few for job 3 until it ends at 180
    uniform = Simulator(w).run(make_policy("prb:ewt=uniform"))
    np.testing.assert_array_equal(uniform.start, [0, 100, 150, 180])
    assert uniform.extras["prb_ewt_source"] == "uniform"
    # which is arrival order here, as FCFS has it
    assert Simulator(w).run(make_policy("fcfs")).start.tolist() == [0, 100, 150, 180]


def test_ties_are_broken_by_demand_with_every_resource_type_counted(tmp_path):
    # jobs 1 and 2 arrive together in one queue: equal priority at t=100. Demand is
    # sum_r request_r / total_r x predicted duration on a node of 4 cores and 2 GPUs:
    #   job 1: 4/4 x 100 = 100 (W and R alike);
    #   job 2: (1/4 + 2/2) x 90 = 112.5 with W, x 60 = 75 with R.
    # With W job 1 goes first and takes every core: job 2 waits for it (t=200). With R
    # job 2 goes first; job 1 then lacks a core until job 2 ends at 160. (Counting
    # cores alone, job 2's W demand would be 22.5: the GPUs decide here.)
    m = tiny_machine()
    rows = [
        (0, 100, 100, "debug", 4, 0),
        (10, 100, 100, "parallel", 4, 0),
        (10, 60, 90, "parallel", 1, 2),
    ]
    w = jobs_csv(tmp_path, m, rows)
    walltime = Simulator(w, predictor=make_predictor("walltime")).run(make_policy("prb"))
    real = Simulator(w, predictor=make_predictor("real")).run(make_policy("prb"))
    np.testing.assert_array_equal(walltime.start, [0, 100, 200])
    np.testing.assert_array_equal(real.start, [0, 160, 100])

    sim = Simulator(w)
    prb = PriorityRuleBased()
    while sim.view.now < 100:
        sim.advance()
        if sim.view.now < 100:
            sim.start(prb(sim.view))
    np.testing.assert_allclose(prb.priority(sim.view), [90, 90])
    np.testing.assert_allclose(prb.demand(sim.view), [100, 112.5])


def test_equal_priority_and_demand_keep_arrival_order():
    # an SWF machine without queues: priority is the wait; jobs 1 and 2 are the same
    w = Workload.from_columns([0, 5, 5], [10, 10, 10], [4, 4, 4], [10, 10, 10], procs=4)
    s = Simulator(w).run(make_policy("prb"))
    np.testing.assert_array_equal(s.start, [0, 10, 20])
    assert s.extras["prb_ewt_source"] == "machine procs4"
    assert s.extras["prb_ewt_s"] == {} and s.extras["prb_unknown_ewt_s"] == 1.0
    assert s.extras["prb_jobs_unknown_queue"] == 3


def test_a_job_that_cannot_be_placed_waits_and_later_ones_start():
    # job 0 holds 2 of 4 processors until 100. Job 1 (4) comes first by priority but
    # does not fit; job 2 (2) is tried next and starts at once. There is no reservation:
    # job 1 waits until job 2 ends, as 001/002's PRB does.
    w = Workload.from_columns([0, 1, 2], [100, 10, 500], [2, 4, 2], [100, 10, 500], procs=4)
    s = Simulator(w).run(make_policy("prb"))
    np.testing.assert_array_equal(s.start, [0, 502, 2])
    # EASY would reserve t=100 for job 1 and keep job 2 waiting
    assert Simulator(w).run(make_policy("easy")).start.tolist() == [0, 100, 110]


def test_best_fit_is_used_whatever_the_machines_allocation():
    # node 0 has 8 cores, node 1 has 4, the machine says first-fit. PRB puts job 0
    # (4 cores) on node 1, leaving node 0 whole for job 1 (8 cores) at t=1; first-fit
    # puts job 0 on node 0 and job 1 waits for it.
    m = Machine("two", ("cores",), np.array([[8], [4]]), allocation="first-fit")
    w = Workload.from_columns(
        [0, 1], [10, 5], None, [10, 5], chunks=[1, 1], per_chunk=[[4], [8]], resources=("cores",), machine=m
    )
    best = Simulator(w).run(make_policy("prb"))
    assert best.placement(0).tolist() == [1] and best.placement(1).tolist() == [0]
    np.testing.assert_array_equal(best.start, [0, 1])
    for name in ("prb:allocation=first-fit", "prb:allocation=machine"):
        first = Simulator(w).run(make_policy(name))
        assert first.placement(0).tolist() == [0]
        np.testing.assert_array_equal(first.start, [0, 10])


def test_jobs_without_a_known_queue_get_the_unknown_expected_wait(tmp_path):
    # a queue whose ewt_s is 0 (not given) is not in the table, nor is a blank queue
    queues = {**QUEUES, "spare": {"max_walltime_s": 3600}}
    m = tiny_machine(queues=queues)
    rows = [
        (0, 100, 100, "debug", 4, 0),
        (10, 10, 10, "debug", 4, 0),
        (10, 10, 10, "spare", 4, 0),
        (10, 10, 10, "", 4, 0),
    ]
    w = jobs_csv(tmp_path, m, rows)
    for name, unknown, weights in [
        ("prb", 21600, [6, 1, 1]),  # default: the largest ewt, as patient as parallel
        ("prb:unknown=3600", 3600, [6, 6, 6]),  # as urgent as debug
        ("prb:unknown=60", 60, [6, 360, 360]),  # max ewt counts the unknown value too
    ]:
        sim = Simulator(w)
        prb = make_policy(name)
        sim.advance()
        sim.start(prb(sim.view))
        sim.advance()
        assert sim.view.now == 100
        np.testing.assert_allclose(prb.priority(sim.view), np.multiply(weights, 90))
        assert prb.extras()["prb_unknown_ewt_s"] == unknown
        assert prb.extras()["prb_jobs_unknown_queue"] == 2
    # a given table replaces the machine's
    prb = make_policy("prb:ewt=debug=600/spare=60")
    s = Simulator(w).run(prb)
    assert s.extras["prb_ewt_source"] == "given"
    assert s.extras["prb_ewt_s"] == {"debug": 600, "spare": 60}
    assert s.extras["prb_jobs_unknown_queue"] == 1
    np.testing.assert_array_equal(s.start, [0, 110, 100, 120])  # spare first (weight 10)


def test_swf_queue_numbers_match_as_text():
    m = Machine.from_dict(
        {
            "name": "swfq",
            "resources": ["procs"],
            "nodes": [{"count": 1, "procs": 4}],
            "queues": {
                "1": {"max_walltime_s": 100, "ewt_s": 10},
                "2": {"max_walltime_s": 100, "ewt_s": 1000},
            },
        }
    )
    w = Workload.from_columns([0, 1, 2], [50, 10, 10], [4, 4, 4], [50, 10, 10], queue=[2, 2, 1], machine=m)
    s = Simulator(w).run(make_policy("prb"))
    np.testing.assert_array_equal(s.start, [0, 60, 50])  # queue 1 is 100 times as urgent
    assert s.extras["prb_jobs_unknown_queue"] == 0


# --------------------------------------------------------------- configuration
def test_policy_parameters_and_canonical_names():
    assert policy_parameters("prb") == ("ewt", "unknown", "allocation")
    assert resolve_policy_name(" PRB : ewt = uniform ") == "prb:ewt=uniform"
    assert resolve_policy_name("prb") == "prb"
    assert policy_spec("prb:ewt=uniform").name == "prb"
    assert preset_predictor("prb:ewt=uniform").name == "walltime"
    prb = make_policy("prb:ewt=debug=3600/parallel=21600,unknown=60,allocation=first-fit")
    assert isinstance(prb, PriorityRuleBased)
    assert (prb.unknown, prb.allocation) == (60, "first-fit")
    assert parse_ewt("a=1/b=2.5") == {"a": 1.0, "b": 2.5}
    assert PriorityRuleBased(ewt={"debug": 60}).extras() == {}  # nothing recorded before a run
    w = Workload.from_columns([0], [1], [1], [1], procs=1)
    assert Simulator(w).run(PriorityRuleBased(ewt=" uniform ")).extras["prb_ewt_source"] == "uniform"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("prb:ewt=bogus", "ewt must be 'machine', 'uniform'"),
        ("prb:ewt=debug=-5", "queue 'debug': expected wait must be a positive"),
        ("prb:ewt=debug=1/debug=2", "'debug' is given twice"),
        ("prb:ewt=debug=x", "'x' is not a number of seconds"),
        ("prb:ewt=debug=1/=2", "is not QUEUE=SECONDS"),
        ("prb:unknown=0", "unknown: expected wait must be a positive"),
        ("prb:allocation=worst-fit", "allocation must be one of best-fit, first-fit, machine"),
        ("prb:foo=1", "unknown parameter 'foo' (prb takes ewt, unknown, allocation)"),
        ("prb:ewt", "parameter 'ewt' is not key=value"),
        ("prb:unknown=1,unknown=2", "parameter 'unknown' is given twice"),
        ("easy:sjbf=true", "unknown parameter 'sjbf' (easy takes no parameters)"),
    ],
)
def test_bad_parameters_name_what_is_wrong(name, message):
    with pytest.raises(InvalidConfigError, match="policy") as err:
        resolve_policy_name(name)
    assert message in str(err.value)
    with pytest.raises(InvalidConfigError):
        make_policy(name)


def test_unknown_policy_with_parameters_is_an_unknown_name():
    with pytest.raises(UnknownNameError, match="did you mean 'prb'"):
        resolve_policy_name("pbr:ewt=uniform")
    with pytest.raises(InvalidConfigError, match="empty"):
        PriorityRuleBased(ewt={})
    with pytest.raises(InvalidConfigError, match="mapping"):
        PriorityRuleBased(ewt=5)  # type: ignore[arg-type]


def test_copies_and_pickles_give_the_same_schedule():
    w = load_default().window(400)
    prb = make_policy("prb")
    first = Simulator(w).run(prb)
    for other in (copy.deepcopy(prb), pickle.loads(pickle.dumps(prb))):
        again = Simulator(w).run(other)
        np.testing.assert_array_equal(again.start, first.start)
    # the same dispatcher on another workload rebuilds its tables
    w2 = load_default().window(200, offset=1000)
    np.testing.assert_array_equal(Simulator(w2).run(prb).start, Simulator(w2).run(make_policy("prb")).start)


# --------------------------------------------------------------- properties
class CheckedPRB(DispatcherBase):
    """PRB checked at every decision against an independent Python re-implementation."""

    def __init__(self, inner: PriorityRuleBased):
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def reset(self, view):
        self.inner.reset(view)

    def __call__(self, view):
        m = view.machine
        table = {q: e for q, (_, e) in m.queues.items() if e > 0}
        if isinstance(self.inner.ewt, dict):
            table = dict(self.inner.ewt)
        unknown = max(table.values(), default=1.0)
        top = max([*table.values(), unknown])
        names = view.jobs.names.get("queue")
        total = m.total
        free = view.free.copy()
        nodes = Nodes(m.capacity, m.nodes.weight, m.exclusive, BEST_FIT)
        keys = []
        for arrival, j in enumerate(view.queue.tolist()):
            code = int(view.jobs.queue[j])
            qname = None if code < 0 else (names[code] if names is not None else str(code))
            ewt = table.get(qname, unknown) if qname is not None else unknown
            prio = top / ewt * (view.now - view.submit[j])
            size = sum(view.request[j, r] / total[r] for r in range(len(total)) if total[r] > 0)
            keys.append((-prio, size * view.prediction[j], arrival, j))
        expected_jobs, expected_nodes = [], []
        for *_, j in sorted(keys):
            placed = allocate(tuple(nodes), free, view.chunks[j], view.per_chunk[j])
            if placed is None:
                continue
            for i in placed:  # a chunk per node entry (exclusive: the whole node)
                free[i] = 0 if m.exclusive else free[i] - view.per_chunk[j]
            expected_jobs.append(j)
            expected_nodes.extend(placed.tolist())
        decision = self.inner(view)
        assert decision.jobs.tolist() == expected_jobs
        assert decision.nodes.tolist() == expected_nodes
        # nothing left waiting fits what is left
        for j in view.queue.tolist():
            if j not in expected_jobs:
                assert allocate(tuple(nodes), free, view.chunks[j], view.per_chunk[j]) is None
        self.decisions += 1
        return decision


@st.composite
def with_queues(draw):
    machine, w = draw(machines_and_workloads(max_jobs=12))
    codes = draw(st.lists(st.integers(-1, 3), min_size=len(w), max_size=len(w)))
    ewts = draw(st.lists(st.integers(1, 5000), min_size=3, max_size=3))
    table = {str(q): float(e) for q, e in enumerate(ewts)}  # queue 3 is not in the table
    use_table = draw(st.booleans())
    raw = w.raw.copy()
    raw[:, 14] = codes
    import dataclasses

    w = dataclasses.replace(w, queue=np.array(codes, dtype=np.int64), raw=raw)
    return machine, w, table if use_table else None


@settings(max_examples=examples(60))
@given(case=with_queues(), predictor=st.sampled_from(["walltime", "real", "user-avg"]))
def test_prb_never_over_allocates_and_follows_its_rule(case, predictor):
    machine, w, table = case
    prb = PriorityRuleBased(ewt=table) if table is not None else PriorityRuleBased()
    checked = CheckedPRB(prb)
    s = Simulator(w, predictor=make_predictor(predictor)).run(checked)
    assert checked.decisions > 0
    replay_capacity(machine, w, s)
    assert np.isfinite(s.start).all() and (s.start >= w.submit).all()
    np.testing.assert_array_equal(s.end, s.start + w.runtime)


def test_the_checked_property_sees_every_kind_of_decision():
    # the independent checker is not vacuous: a decision that skips a job, or starts
    # the right jobs in another order, is caught
    class SkipsLast(PriorityRuleBased):
        def __call__(self, view):
            d = super().__call__(view)
            if len(d) < 2:
                return d
            return type(d)(d.jobs[:-1], d.nodes[: len(d.nodes) - int(view.chunks[d.jobs[-1]])])

    class Reversed(PriorityRuleBased):
        def __call__(self, view):
            d = super().__call__(view)
            return type(d)(d.jobs[::-1].copy(), d.nodes[::-1].copy())

    w = Workload.from_columns([0, 0], [10, 10], [2, 1], [10, 10], procs=4)
    for wrong in (SkipsLast(), Reversed()):
        with pytest.raises(AssertionError):
            Simulator(w).run(CheckedPRB(wrong))
    Simulator(w).run(CheckedPRB(PriorityRuleBased()))


# --------------------------------------------------------------- the CLI
def test_cli_simulates_prb_on_eurora_jobs_and_on_swf():
    code, out, _ = run_cli(
        "simulate",
        "--machine",
        "eurora",
        "--workload",
        "hpcgym/workloads/data/eurora-sample.csv",
        "--policy",
        "prb",
        "--json",
    )
    row = json.loads(out)
    assert code == 0 and row["policy"] == "prb" and row["jobs_simulated"] > 0
    code, out, _ = run_cli(
        "simulate", "--jobs", "300", "--policy", "prb:ewt=uniform", "--predictor", "R", "--json"
    )
    row = json.loads(out)
    assert code == 0 and row["policy"] == "prb:ewt=uniform" and row["predictor"] == "real"
    code, _, err = run_cli("simulate", "--jobs", "50", "--policy", "prb:ewt=debug=-1")
    assert code == 2 and err.startswith("hpcgym: error: policy 'prb:ewt=debug=-1'")
    code, out, _ = run_cli("policies")
    assert code == 0 and "prb" in out and "ewt=machine|uniform" in out


def test_prb_runs_through_the_environment_the_same():
    from hpcgym.env import run_via_env

    w = Workload.from_columns([0, 1, 2, 2], [100, 10, 500, 5], [2, 4, 2, 1], [100, 10, 500, 5], procs=4)
    direct = Simulator(w, predictor=preset_predictor("prb")).run(make_policy("prb"))
    via_env = run_via_env(w, "prb", None)
    np.testing.assert_array_equal(direct.start, via_env.start)
    assert via_env.extras["prb_ewt_source"] == "machine procs4"
