"""Queue-order heuristics (issue 12 item 1): every score hand-checked on a 5-job queue."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hpcgym.baselines import QueueOrder, heuristic_score, make_policy, policy_specs, preset_predictor
from hpcgym.common.errors import InvalidConfigError
from hpcgym.sim import Simulator
from hpcgym.workloads import Workload, load_default

# The queue: job 0 (16 processors, 9000 -> 11000) holds the 16-processor machine while
# jobs 1-5 arrive; at 11000 it ends and they wait, w = 11000 - s.
#   job   s      r     n   w
#   1   10000   100    4  1000
#   2   10100    10   12   900
#   3   10200   400    1   800
#   4   10500  3000    2   500
#   5   10900    10    8   100
S = np.array([10000, 10100, 10200, 10500, 10900.0])
R = np.array([100, 10, 400, 3000, 10.0])
N = np.array([4, 12, 1, 2, 8])
NOW = 11000.0
L = [math.log10(x) for x in S]  # 4, 4.00432, 4.00860, 4.02119, 4.03743

# score name -> (each job's score computed by hand, the resulting order of jobs 1-5)
HAND = {
    # r; 2 and 5 tie at 10, arrival breaks it
    "sjf": ([100, 10, 400, 3000, 10], [2, 5, 1, 3, 4]),
    # r*n: 400, 120, 400, 6000, 80; 1 and 3 tie at 400, arrival breaks it
    "saf": ([400, 120, 400, 6000, 80], [5, 2, 1, 3, 4]),
    # log10(r)*n + 870*log10(s): 2*4 + 3480 = 3488; 1*12 + 870*4.00432 = 3495.76;
    # 2.60206 + 3487.48 = 3490.08; 2*3.47712 + 3498.43 = 3505.39; 8 + 3512.56 = 3520.56
    "f1": ([3488.0, 3495.7596, 3490.0842, 3505.3889, 3520.5611], [1, 3, 2, 4, 5]),
    # -(w/r)^3*n: -(10)^3*4 = -4000; -(90)^3*12 = -8748000; -(2)^3*1 = -8;
    # -(1/6)^3*2 = -0.00926; -(10)^3*8 = -8000
    "wfp3": ([-4000, -8748000, -8, -1 / 108, -8000], [2, 5, 1, 3, 4]),
    # -w/(log2(n)*r): -1000/(2*100) = -5; -900/(3.584963*10) = -25.104865; job 3 has n=1,
    # taken as n=2: -800/(1*400) = -2; -500/(1*3000) = -0.16667; -100/(3*10) = -3.3333
    "unicep": ([-5, -25.104865, -2, -1 / 6, -10 / 3], [2, 1, 5, 3, 4]),
}

# With every job submitted at s = 10000 the aging term is one constant, 10000's log10 = 4:
# the F scores then order by their size terms.
HAND_SAME_SUBMIT = {
    # log10(r)*n + 3480: 8, 12, 2.60206, 6.95424, 8 -> 1 and 5 tie, arrival
    "f1": ([3488, 3492, 3482.60206, 3486.95424, 3488], [3, 4, 1, 5, 2]),
    # sqrt(r)*n + 102400: 40, 37.947, 20, 109.545, 25.298
    "f2": ([102440, 102437.94733, 102420, 102509.54451, 102425.29822], [3, 5, 2, 1, 4]),
    # r*n + 27440000: 400, 120, 400, 6000, 80
    "f3": ([27440400, 27440120, 27440400, 27446000, 27440080], [5, 2, 1, 3, 4]),
    # r*sqrt(n) + 2120000: 200, 34.641, 400, 4242.641, 28.284
    "f4": ([2120200, 2120034.64102, 2120400, 2124242.64069, 2120028.28427], [5, 2, 1, 3, 4]),
}


def order_of(values: list[float]) -> list[int]:
    return (np.argsort(np.asarray(values, dtype=float), kind="stable") + 1).tolist()


@pytest.mark.parametrize("score", sorted(HAND))
def test_each_score_and_its_order_by_hand(score: str) -> None:
    expected, order = HAND[score]
    got = heuristic_score(score, NOW, S, R, N)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert order_of(got) == order


@pytest.mark.parametrize("score", sorted(HAND_SAME_SUBMIT))
def test_f_scores_by_hand_with_one_submit_time(score: str) -> None:
    expected, order = HAND_SAME_SUBMIT[score]
    got = heuristic_score(score, NOW, np.full(5, 10000.0), R, N)
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    assert order_of(got) == order


def test_f2_f3_f4_by_hand_on_the_queue() -> None:
    # the spread of submit times outweighs the size terms: arrival order
    f2 = [10 * 4 + 25600 * L[0], math.sqrt(10) * 12 + 25600 * L[1], 20 + 25600 * L[2]]
    np.testing.assert_allclose(heuristic_score("f2", NOW, S, R, N)[:3], f2)
    f3 = [400 + 6860000 * L[0], 120 + 6860000 * L[1], 400 + 6860000 * L[2]]
    np.testing.assert_allclose(heuristic_score("f3", NOW, S, R, N)[:3], f3)
    f4 = [200 + 530000 * L[0], 10 * math.sqrt(12) + 530000 * L[1], 400 + 530000 * L[2]]
    np.testing.assert_allclose(heuristic_score("f4", NOW, S, R, N)[:3], f4)
    for score in ("f2", "f3", "f4"):
        assert order_of(heuristic_score(score, NOW, S, R, N)) == [1, 2, 3, 4, 5]


def test_guards_submit_zero_estimate_zero_and_one_processor() -> None:
    # log10(max(s, 1)): a job submitted at 0 has aging term 0, like one submitted at 1
    f1 = heuristic_score("f1", 5.0, np.array([0.0, 1.0, 10.0]), np.array([10.0] * 3), np.array([1, 1, 1]))
    np.testing.assert_allclose(f1, [1.0, 1.0, 871.0])
    # max(r, 1): a zero estimate counts as 1 s
    np.testing.assert_allclose(
        heuristic_score("sjf", 0, np.zeros(2), np.array([0.0, 1.0]), np.ones(2)), [1, 1]
    )
    assert np.isfinite(heuristic_score("f1", 0, np.zeros(1), np.zeros(1), np.ones(1))).all()
    # log2(max(n, 2)): one processor scores as two
    u = heuristic_score("unicep", 10.0, np.zeros(2), np.array([5.0, 5.0]), np.array([1, 2]))
    np.testing.assert_allclose(u, [-2.0, -2.0])


def test_wait_based_scores_change_with_time() -> None:
    s, r, n = np.array([0.0, 50.0]), np.array([100.0, 10.0]), np.array([1, 1])
    # at 60 job 0 has waited 60 s of 100, job 1 10 s of 10: job 1 first; at 1000 job 0
    assert order_of(heuristic_score("wfp3", 60.0, s, r, n)) == [2, 1]
    np.testing.assert_allclose(heuristic_score("wfp3", 60.0, s, r, n), [-0.216, -1.0])
    assert order_of(heuristic_score("wfp3", 1000.0, s, r, n)) == [2, 1]
    np.testing.assert_allclose(heuristic_score("wfp3", 1000.0, s, r, n), [-1000.0, -857375.0])
    np.testing.assert_allclose(heuristic_score("unicep", 60.0, s, r, n), [-0.6, -1.0])


def queue_workload() -> Workload:
    submit = np.concatenate([[9000.0], S])
    est = np.concatenate([[2000.0], R])
    procs = np.concatenate([[16], N])
    return Workload.from_columns(submit, est, procs, est, procs=16)


def view_at_11000(policy: QueueOrder) -> Simulator:
    sim = Simulator(queue_workload())
    policy.reset(sim.view)
    sim.advance()  # 9000: job 0
    sim.start([0])
    while sim.view.now < NOW:
        sim.advance()
    assert sim.view.now == NOW
    np.testing.assert_array_equal(sim.view.queue, [1, 2, 3, 4, 5])
    return sim


@pytest.mark.parametrize("score", sorted(HAND))
def test_the_dispatcher_orders_the_live_queue_as_by_hand(score: str) -> None:
    sim = view_at_11000(QueueOrder(score=score))
    policy = QueueOrder(score=score)
    assert policy.order(sim.view).tolist() == HAND[score][1]


def test_decisions_without_and_with_backfilling_by_hand() -> None:
    # smallest area: 5 (8 procs), 2 (12), 1 (4), 3 (1), 4 (2). 16 processors free.
    # Without backfilling 5 starts and 2 (12 > 8 free) blocks the rest.
    plain = QueueOrder(score="saf")
    sim = view_at_11000(plain)
    assert plain(sim.view).jobs.tolist() == [5]
    # With it, 2 gets the reservation at 11010 (when 5 is predicted to end), 16 - 12 = 4
    # extra processors: 1 (4 procs, ends 11100) fits them and starts; then none are
    # left for 3 or 4, which end after 11010.
    bf = QueueOrder(score="saf", backfill=True)
    sim = view_at_11000(bf)
    assert bf(sim.view).jobs.tolist() == [5, 1]
    assert bf.reservation.tolist() == [2, 11010.0, 11010.0]
    # random-fit starts every job that fits in its random order: 16 processors for
    # jobs of 4, 12, 1, 2, 8 -- whatever the order, the started ones fill what they can
    rnd = QueueOrder(score="random", seed=3)
    sim = view_at_11000(rnd)
    started = rnd(sim.view).jobs.tolist()
    assert sum(int(N[j - 1]) for j in started) <= 16
    left = 16 - sum(int(N[j - 1]) for j in started)
    assert all(int(N[j - 1]) > left for j in range(1, 6) if j not in started)


def test_whole_schedules_by_hand() -> None:
    w = queue_workload()
    # saf without backfilling: 5 at 11000 (to 11010); at 11010 the order is 2, 1, 3, 4:
    # 2 (12) and 1 (4) fill the 16 processors; at 11020 2 ends and 3, 4 start
    s = Simulator(w).run(make_policy("saf"))
    np.testing.assert_array_equal(s.start, [9000, 11010, 11010, 11020, 11020, 11000])
    # with backfilling 1 starts at 11000 beside 5; 2 at 11010 needs 12 of the 12 free;
    # 3 and 4 wait for 2 to end at 11020
    s = Simulator(w).run(make_policy("saf-bf"))
    np.testing.assert_array_equal(s.start, [9000, 11000, 11010, 11020, 11020, 11000])


def test_sjf_queue_order_with_backfilling_is_the_sjf_preset() -> None:
    w = load_default().window(1500)
    ref = Simulator(w, predictor=preset_predictor("sjf")).run(make_policy("sjf"))
    ours = Simulator(w, predictor=preset_predictor("sjf")).run(QueueOrder(score="sjf", backfill=True))
    np.testing.assert_array_equal(ours.start, ref.start)
    assert make_policy("sjf-bf").name == "sjf"
    assert make_policy("fcfs-bf").name == "easy"


def test_random_fit_is_seeded() -> None:
    w = load_default().window(800)

    def run(name: str) -> np.ndarray:
        return Simulator(w).run(make_policy(name)).start

    np.testing.assert_array_equal(run("random-fit:seed=1"), run("random-fit:seed=1"))
    np.testing.assert_array_equal(run("random-fit"), run("random-fit:seed=0"))
    assert not np.array_equal(run("random-fit:seed=1"), run("random-fit:seed=2"))
    assert not np.array_equal(run("random-fit-bf:seed=1"), run("random-fit-bf:seed=2"))
    # the generator restarts with each run: one dispatcher, two runs, one schedule
    d = make_policy("random-fit-bf:seed=4")
    np.testing.assert_array_equal(Simulator(w).run(d).start, Simulator(w).run(d).start)


def test_every_heuristic_is_registered_with_and_without_backfilling() -> None:
    names = set(policy_specs())
    for base in ("saf", "f1", "f2", "f3", "f4", "wfp3", "unicep", "random-fit"):
        assert {base, f"{base}-bf"} <= names
    assert "sjf-est" in names and "sjf" in names
    for base in ("saf", "f1", "wfp3", "unicep"):
        assert make_policy(base).name == base and make_policy(f"{base}-bf").name == f"{base}-bf"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"score": "nope"}, "score must be one of"),
        ({"seed": -1}, "seed must be"),
        ({"seed": 1.5}, "seed must be"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidConfigError, match=message):
        QueueOrder(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError, match="score must be one of"):
        heuristic_score("nope", 0.0, S, R, N)


def test_n_is_the_first_resource_type_every_node_counted() -> None:
    from hpcgym.machine import Machine

    # two nodes of 4 cores and 2 GPUs; job 0 holds every core until 100. Job 1 asks 2 chunks
    # of 2 cores + 2 GPUs (n = 4 cores, r = 10: area 40), job 2 one chunk of 3 cores (n = 3,
    # r = 20: area 60), job 3 one chunk of 1 core + 1 GPU (n = 1, r = 50: area 50). GPUs do
    # not count: smallest area is 1, 3, 2.
    m = Machine.from_dict(
        {"name": "duo", "resources": ["cores", "gpus"], "nodes": [{"count": 2, "cores": 4, "gpus": 2}]}
    )
    w = Workload.from_columns(
        [0, 1, 2, 3],
        [100, 10, 20, 50],
        None,
        [100, 10, 20, 50],
        chunks=[2, 2, 1, 1],
        per_chunk=[[4, 0], [2, 2], [3, 0], [1, 1]],
        resources=["cores", "gpus"],
        machine=m,
    )
    policy = QueueOrder(score="saf")
    sim = Simulator(w)
    policy.reset(sim.view)
    sim.advance()
    sim.start([0])
    while sim.view.queue_length < 3:
        sim.advance()
    np.testing.assert_array_equal(sim.view.procs[1:], [4, 3, 1])
    assert policy.order(sim.view).tolist() == [1, 3, 2]
    # at 100 job 1 takes 2 cores and both GPUs of each node: job 3 (a GPU) waits with the
    # reservation for 110, and job 2 (3 cores in one chunk) fits no node; both start at 110
    s = Simulator(w).run(make_policy("saf-bf"))
    np.testing.assert_array_equal(s.start, [0, 100, 110, 110])
