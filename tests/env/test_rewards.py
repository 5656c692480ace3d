"""The dense rewards' compiled sums against their numpy definitions (``value``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.env import BsldDense, WaitDense, _kernels
from hpcgym.sim import TAU

times = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@pytest.mark.parametrize("term", [BsldDense, WaitDense])
@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(min_value=0, max_value=40))
def test_accrued_sum_matches_value(term: type, data: st.DataObject, n: int) -> None:
    submit = np.sort(np.array(data.draw(st.lists(times, min_size=n, max_size=n)), dtype=np.float64))
    runtime = np.array(data.draw(st.lists(times, min_size=n, max_size=n)), dtype=np.float64)
    waited = np.array(data.draw(st.lists(times, min_size=n, max_size=n)), dtype=np.float64)
    started = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    counted = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    now = float(submit.max() + data.draw(times)) if n else 0.0
    start = np.where(started, submit + waited, np.nan)
    lo = data.draw(st.integers(min_value=0, max_value=n))
    hi = data.draw(st.integers(min_value=lo, max_value=n))
    assert term.kernel != 0
    got = _kernels.accrued_sum(start, submit, runtime, counted, lo, hi, now, term.kernel, TAU)
    wait = np.where(np.isnan(start), now, start)[lo:hi] - submit[lo:hi]
    want = float(np.dot(term().value(wait, runtime[lo:hi]), counted[lo:hi]))
    assert got == pytest.approx(want, rel=1e-12, abs=1e-9)
