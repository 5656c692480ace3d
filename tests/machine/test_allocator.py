"""The one allocator: hand-checked placements, and properties against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.machine import (
    BEST_FIT,
    FIRST_FIT,
    Nodes,
    allocate,
    any_fits,
    best_fit_weights,
    fits,
    give,
    place,
    take,
    take_checked,
)
from hpcgym.machine.allocator import stable_argsort


def nodes(capacity, *, policy=FIRST_FIT, exclusive=False) -> Nodes:
    cap = np.asarray(capacity, dtype=np.int64)
    return Nodes(cap, best_fit_weights(cap), exclusive, policy)


def placed(m: Nodes, free, chunks: int, v) -> list[int] | None:
    out = allocate(m, np.asarray(free, dtype=np.int64), chunks, np.asarray(v, dtype=np.int64))
    return None if out is None else out.tolist()


# --------------------------------------------------------------- by hand
def test_first_fit_fills_nodes_in_order_several_chunks_per_node():
    m = nodes([[8], [8], [8]])
    assert placed(m, [[3], [8], [8]], 3, [2]) == [0, 1, 1]  # node 0 holds one chunk of 2, node 1 two more
    assert placed(m, [[3], [8], [8]], 1, [4]) == [1]


def test_best_fit_takes_the_node_left_with_the_fewest_free_resources():
    # cores, gpus: node 0 is entirely free, node 1 has 2 cores left, node 2 has 5 cores and a GPU
    m_first = nodes([[8, 1], [8, 1], [8, 1]])
    m_best = nodes([[8, 1], [8, 1], [8, 1]], policy=BEST_FIT)
    free = [[8, 1], [2, 0], [5, 1]]
    assert placed(m_first, free, 1, [2, 0]) == [0]
    assert placed(m_best, free, 1, [2, 0]) == [1]  # leaves 0 cores, 0 GPUs
    # a GPU job: node 1 has none; best fit picks node 2 (5 - 2 cores, 0 GPU left)
    assert placed(m_best, free, 1, [2, 1]) == [2]
    assert placed(m_first, free, 1, [2, 1]) == [0]


def test_best_fit_weighs_each_type_as_a_share_of_the_largest_node():
    # weights: cores / 16, gpus / 2 -> integers 1 and 8. Node 0 would keep 8 cores (8),
    # node 1 would keep 1 core and 1 GPU (1 + 8 = 9): node 0 is the better fit.
    m = nodes([[16, 2], [16, 2]], policy=BEST_FIT)
    assert best_fit_weights(m.capacity).tolist() == [1, 8]
    assert placed(m, [[9, 0], [2, 1]], 1, [1, 0]) == [0]


def test_best_fit_ties_keep_node_order_and_fill_the_best_node_first():
    m = nodes([[4], [4], [4]], policy=BEST_FIT)
    assert placed(m, [[4], [4], [4]], 3, [2]) == [0, 0, 1]
    assert placed(m, [[4], [2], [4]], 3, [2]) == [1, 0, 0]


def test_a_request_that_does_not_fit_gets_none():
    m = nodes([[4, 0], [4, 2]])
    assert placed(m, [[4, 0], [4, 2]], 1, [1, 3]) is None  # 3 GPUs per chunk: no node
    assert placed(m, [[4, 0], [4, 2]], 3, [2, 1]) is None  # only two GPU chunks fit
    assert placed(m, [[4, 0], [4, 2]], 2, [2, 1]) == [1, 1]


def test_exclusive_nodes_take_one_chunk_each_and_only_when_entirely_free():
    m = nodes([[4], [4], [8]], exclusive=True)
    assert placed(m, [[4], [4], [8]], 2, [1]) == [0, 1]
    assert placed(m, [[3], [4], [8]], 2, [1]) == [1, 2]  # node 0 is partly used
    assert placed(m, [[4], [4], [8]], 1, [6]) == [2]
    assert placed(m, [[4], [4], [8]], 4, [1]) is None
    free = np.array([[4], [4], [8]])
    assert take(m, free, np.array([1]), np.array([2])) == 8  # the whole node is taken
    assert free.tolist() == [[4], [4], [0]]
    give(m, free, np.array([1]), np.array([2]))
    assert free.tolist() == [[4], [4], [8]]


def test_take_checked_refuses_over_use_and_leaves_free_unchanged():
    m = nodes([[4], [4]])
    free = np.array([[4], [1]])
    assert take_checked(m, free, np.array([2]), np.array([0, 0])) == 0
    assert free.tolist() == [[0], [1]]
    free = np.array([[4], [1]])
    assert take_checked(m, free, np.array([2]), np.array([0, 0, 0])) == -3  # the third chunk
    assert take_checked(m, free, np.array([2]), np.array([0, 1])) == -2
    assert take_checked(m, free, np.array([2]), np.array([5])) == -1  # no node 5
    assert take_checked(m, free, np.array([2]), np.array([-1])) == -1
    assert free.tolist() == [[4], [1]]
    ex = nodes([[4], [4]], exclusive=True)
    free = np.array([[4], [4]])
    assert take_checked(ex, free, np.array([1]), np.array([1, 1])) == -2  # one chunk per node
    assert free.tolist() == [[4], [4]]


def test_weights_are_exact_for_a_common_multiple_and_rounded_beyond():
    assert best_fit_weights(np.array([[16, 2, 0, 16]])).tolist() == [1, 8, 0, 1]
    big = best_fit_weights(np.array([[1_000_003, 999_983, 7]]))
    assert big.tolist() == [round(2**40 / 1_000_003), round(2**40 / 999_983), round(2**40 / 7)]


# ---------------------------------------------------------- properties
@st.composite
def cases(draw):
    n_nodes = draw(st.integers(1, 5))
    n_res = draw(st.integers(1, 3))
    cap = np.array([[draw(st.integers(0, 6)) for _ in range(n_res)] for _ in range(n_nodes)], dtype=np.int64)
    cap[:, 0] = np.maximum(cap[:, 0], 1)
    free = np.array([[draw(st.integers(0, c)) for c in row] for row in cap], dtype=np.int64)
    v = np.array([draw(st.integers(0, 4)) for _ in range(n_res)], dtype=np.int64)
    v[draw(st.integers(0, n_res - 1))] = draw(st.integers(1, 4))
    chunks = draw(st.integers(1, 6))
    exclusive = draw(st.booleans())
    return cap, free, v, chunks, exclusive


def brute_force_fits(cap, free, v, chunks, exclusive) -> bool:
    """Try every assignment of chunks to nodes."""
    for assignment in itertools.product(range(len(cap)), repeat=chunks):
        use = np.zeros_like(free)
        ok = True
        for i in assignment:
            if exclusive:
                ok &= bool((free[i] == cap[i]).all() and (cap[i] >= v).all() and not use[i].any())
                use[i] = cap[i]
            else:
                use[i] += v
        if ok and (exclusive or (use <= free).all()):
            return True
    return False


@settings(max_examples=300)
@given(case=cases())
def test_fits_and_place_agree_with_brute_force_for_both_policies(case):
    cap, free, v, chunks, exclusive = case
    expected = brute_force_fits(cap, free, v, chunks, exclusive)
    for policy in (FIRST_FIT, BEST_FIT):
        m = nodes(cap, policy=policy, exclusive=exclusive)
        assert fits(m, free, chunks, v) == expected
        out = np.empty(chunks, dtype=np.int64)
        assert place(m, free, chunks, v, out, 0) == expected
        if not expected:
            continue
        f = free.copy()
        assert take_checked(m, f, v, out) == 0, "the allocator chose an impossible placement"
        assert (f >= 0).all()
        give(m, f, v, out)
        np.testing.assert_array_equal(f, free)  # give undoes take


@settings(max_examples=200)
@given(case=cases())
def test_first_fit_is_node_order_and_best_fit_orders_by_score(case):
    cap, free, v, chunks, exclusive = case
    ff = nodes(cap, policy=FIRST_FIT, exclusive=exclusive)
    bf = nodes(cap, policy=BEST_FIT, exclusive=exclusive)
    out = np.empty(chunks, dtype=np.int64)
    if not place(ff, free, chunks, v, out, 0):
        return
    assert (np.diff(out) >= 0).all(), "first fit goes through the nodes in order"
    place(bf, free, chunks, v, out, 0)
    w = best_fit_weights(cap)
    score = ((free - v) * w).sum(axis=1)
    used = list(dict.fromkeys(out.tolist()))  # nodes in the order best fit filled them
    assert [score[i] for i in used] == sorted(score[i] for i in used)
    # and an unused node that could take a chunk does not come before the last one used
    last = used[-1]
    for i in set(range(len(cap))) - set(used):
        if exclusive:
            can_take = (free[i] == cap[i]).all() and (cap[i] >= v).all()
        else:
            can_take = (free[i] >= v).all()
        if can_take:
            assert (score[i], i) > (score[last], last)


@settings(max_examples=200)
@given(case=cases(), counts=st.lists(st.integers(0, 2), min_size=3, max_size=3))
def test_any_fits_is_any_shape_with_waiting_jobs_that_fits(case, counts):
    cap, free, v, chunks, exclusive = case
    m = nodes(cap, exclusive=exclusive)
    shapes_chunks = np.array([chunks, 1, chunks + 1], dtype=np.int64)
    shapes_v = np.array([v, v, v], dtype=np.int64)
    count = np.array(counts, dtype=np.int64)
    expected = any(c > 0 and fits(m, free, k, v) for c, k in zip(count, shapes_chunks, strict=True))
    assert any_fits(m, free, shapes_chunks, shapes_v, np.flatnonzero(count > 0)) == expected


def test_plain_tuples_and_named_bundles_give_the_same_answer():
    m = nodes([[4, 1], [4, 0]], policy=BEST_FIT)
    free = np.array([[4, 1], [4, 0]])
    v = np.array([2, 0])
    a = np.empty(2, dtype=np.int64)
    b = np.empty(2, dtype=np.int64)
    assert place(m, free, 2, v, a, 0) and place(tuple(m), free, 2, v, b, 0)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("policy", [FIRST_FIT, BEST_FIT])
def test_one_node_one_type_is_plain_processor_counting(policy):
    m = nodes([[128]], policy=policy)
    for need in (1, 64, 128, 129):
        for free in (0, 63, 64, 128):
            assert fits(m, np.array([[free]]), 1, np.array([need])) == (need <= free)


# --------------------------------------------------------------- the stable sort
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, np.inf, -np.inf, np.nan]), max_size=80),
)
def test_stable_argsort_is_numpys_stable_argsort_with_ties_and_nans(values):
    keys = np.array(values, dtype=np.float64)
    assert stable_argsort(keys).tolist() == np.argsort(keys, kind="stable").tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=300))
def test_stable_argsort_of_integers_keeps_ties_in_index_order(values):
    keys = np.array(values, dtype=np.int64)
    assert stable_argsort(keys).tolist() == np.argsort(keys, kind="stable").tolist()


# ------------------------------------------- edges that mutation testing found unchecked
def test_weights_take_the_largest_capacity_over_all_nodes():
    # the largest cores are on node 1, the only GPU on node 0: weights 8/8 and 8/1
    assert best_fit_weights(np.array([[4, 1], [8, 0]])).tolist() == [1, 8]


def test_a_type_no_node_has_weighs_nothing_beyond_the_exact_limit():
    a, b = 2**20 + 7, 2**20 + 9  # coprime: their least common multiple exceeds 2**40
    weights = best_fit_weights(np.array([[a, b, 0]]))
    assert weights.tolist() == [round(2**40 / a), round(2**40 / b), 0]


@pytest.mark.parametrize("policy", [FIRST_FIT, BEST_FIT])
def test_a_request_of_nothing_is_placed(policy):
    m = nodes([[4, 1], [8, 0]], policy=policy)
    free = np.array([[0, 0], [8, 0]], dtype=np.int64)
    out = placed(m, free, 2, [0, 0])
    assert out is not None and len(out) == 2 and all(0 <= i < 2 for i in out)
    assert free.tolist() == [[0, 0], [8, 0]]


def test_take_checked_refuses_the_node_index_one_past_the_last():
    m = nodes([[4], [4]])
    free = np.array([[4], [4]], dtype=np.int64)
    assert take_checked(m, free, np.array([1]), np.array([0, 2])) == -2
    assert take_checked(m, free, np.array([1]), np.array([2])) == -1
    assert free.tolist() == [[4], [4]]


def test_best_fit_orders_a_machine_of_two_nodes():
    m = nodes([[8], [8]], policy=BEST_FIT)
    assert placed(m, [[8], [4]], 1, [4]) == [1]  # node 1 is left with nothing: the best fit
    assert placed(nodes([[8], [8]]), [[8], [4]], 1, [4]) == [0]
