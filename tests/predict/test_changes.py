"""The revision log (ChangeLog): tuples to read, arrays inside; and the compiled loop's window ids."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.baselines import make_policy, preset_predictor
from hpcgym.predict import ChangeLog, change_rows
from hpcgym.predict.loop import _group_ids
from hpcgym.sim import Simulator
from hpcgym.workloads import load_default

changes = st.lists(
    st.tuples(st.floats(0, 1e6, allow_nan=False), st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False)),
    max_size=20,
)


@given(parts=st.lists(st.tuples(st.booleans(), changes), max_size=5))
@settings(max_examples=100, deadline=None)
def test_a_log_reads_as_the_list_of_its_tuples_in_the_order_they_were_logged(parts):
    """Tuples appended and rows added, in any mix: iteration, indexing, len, rows, == agree with a list."""
    log, expected = ChangeLog(), []
    for as_rows, part in parts:
        if as_rows:
            log.add_rows(np.array(part, dtype=np.float64).reshape(-1, 3))
        else:
            log.extend(part)
        expected.extend(part)
    assert list(log) == expected and log == expected and len(log) == len(expected)
    assert [log[i] for i in range(-len(expected), len(expected))] == expected + expected
    assert log[1:3] == expected[1:3]
    np.testing.assert_array_equal(log.rows(), np.array(expected, dtype=np.float64).reshape(-1, 3))
    assert list(log) == expected  # reading the rows joined the blocks, and changed nothing
    assert pickle.loads(pickle.dumps(log)) == expected
    assert ChangeLog(log) == log and change_rows(expected).shape == (len(expected), 3)


def test_a_log_reads_jobs_as_ints_and_refuses_what_is_not_a_row():
    log = ChangeLog()
    log.add_rows(np.array([[5.0, 3.0, 7.5]]))
    t, j, p = log[0]
    assert (t, j, p) == (5.0, 3, 7.5) and type(j) is int
    assert log != [(5.0, 3, 7.0)] and log != "text"
    assert repr(log) == "ChangeLog([(5.0, 3, 7.5)])"
    with pytest.raises(IndexError):
        log[1]
    with pytest.raises(ValueError, match="shape"):
        log.add_rows(np.zeros((2, 2)))
    with pytest.raises(TypeError):
        hash(log)


def test_a_compiled_run_hands_its_log_over_as_rows_and_a_window_renumbers_them():
    """EASY++ on the bundled trace: the compiled loop's log equals the Python loop's, and
    jobs_slice keeps the later jobs' revisions renumbered from 0."""
    w = load_default().window(300)

    def run(compiled: bool):
        sim = Simulator(w, predictor=preset_predictor("easy++"))
        return sim.run(make_policy("easy++"), compiled=compiled)

    fast, slow = run(True), run(False)
    assert isinstance(fast.prediction_changes, ChangeLog) and len(fast.prediction_changes) > 20
    assert fast.prediction_changes == slow.prediction_changes
    later = fast.jobs_slice(100).prediction_changes
    assert list(later) == [(t, j - 100, p) for t, j, p in slow.prediction_changes if j >= 100]


@given(
    users=st.lists(st.one_of(st.integers(-3, 5), st.integers(0, 10**6)), min_size=1, max_size=60),
    estimates=st.lists(st.sampled_from([0.0, 60.0, 3600.0, 90.5]), min_size=60, max_size=60),
)
@settings(max_examples=100, deadline=None)
def test_window_ids_number_the_distinct_rows_as_numpy_unique_does(users, estimates):
    user = np.array(users, dtype=np.int64)
    est = np.array(estimates[: len(users)])
    _, expected = np.unique(user, return_inverse=True)
    np.testing.assert_array_equal(_group_ids(user), expected.reshape(-1))
    _, expected = np.unique(np.column_stack([user.astype(np.float64), est]), axis=0, return_inverse=True)
    np.testing.assert_array_equal(_group_ids(user, est), expected.reshape(-1))


def test_a_compiled_runs_predictor_state_is_made_when_read_copied_or_pickled():
    """The compiled loop defers a user history's windows and the correction counters; reading
    any of them, a deep copy or a pickle gives what the Python loop leaves; a reset drops them
    and defers only the per-job lists."""
    w = load_default().window(300)
    fast, slow = preset_predictor("easy++"), preset_predictor("easy++")
    Simulator(w, predictor=fast).run(make_policy("easy++"))
    Simulator(w, predictor=slow).run(make_policy("easy++"), compiled=False)

    def state(p):  # type: ignore[no-untyped-def]
        h = p.inner
        return h._windows, h._ratio, h._ends, h._waiting, p._steps._count, p._steps._beyond

    assert "_deferred" in fast.inner.__dict__ and "_deferred" in fast._steps.__dict__
    copied = copy.deepcopy(fast)
    assert "_deferred" not in fast.inner.__dict__ and "_deferred" not in fast._steps.__dict__
    assert state(fast) == state(slow) == state(copied) == state(pickle.loads(pickle.dumps(fast)))
    assert len(fast.inner._windows) > 5 and fast._steps._count
    again = preset_predictor("easy++")
    Simulator(w, predictor=again).run(make_policy("easy++"))
    again.reset(w)  # the run's state is dropped; the per-job lists wait for the Python loop
    pending = {name for names, _, _ in again.inner.__dict__["_deferred"] for name in names}
    assert pending == {"_user", "_est"} and again.inner._windows == {}
    assert again.inner._user == np.asarray(w.user).tolist() and "_deferred" not in again.inner.__dict__
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        again.inner.missing  # noqa: B018
