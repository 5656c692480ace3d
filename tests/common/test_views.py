"""The compiled views of hpcgym.common._views against numpy's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from hpcgym.common._views import borrowed, matrix


@njit(cache=True)
def _matrix_copy(buffer: np.ndarray, start: int, rows: int, cols: int) -> np.ndarray:
    return matrix(buffer, start, rows, cols).copy()


@njit(cache=True)
def _write_through(a: np.ndarray, start: int, rows: int, cols: int) -> float:
    b = borrowed(a)
    m = matrix(b, start, rows, cols)
    total = 0.0
    for i in range(rows):
        for j in range(cols):
            m[i, j] += 1
            total += m[i, j]
    return total


@given(st.integers(0, 5), st.integers(0, 4), st.integers(0, 4), st.integers(0, 3))
def test_matrix_is_the_reshaped_slice(start: int, rows: int, cols: int, spare: int) -> None:
    buffer = np.arange(start + rows * cols + spare, dtype=np.int64) * 7 - 3
    got = _matrix_copy(buffer, start, rows, cols)
    want = buffer[start : start + rows * cols].reshape(rows, cols)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_a_borrowed_array_is_the_same_memory() -> None:
    a = np.arange(12, dtype=np.float64)
    total = _write_through(a, 2, 3, 3)
    np.testing.assert_array_equal(a, np.r_[0, 1, np.arange(3, 12), 11])
    assert total == a[2:11].sum()
