"""Writes into arrays (`a[key] = v`): differential tests, each asserting compiled code ran.

This file covers arrays the function created itself; writes the caller can
see (arguments, Python state, views) have tests of their own below.
"""

import numpy as np
import pyfront
import pytest

from tests.differential import check


def _compiled(fn, calls):
    assert pyfront.explain(check(fn, calls)).compiled_calls > 0


X = np.arange(12, dtype=np.float32).reshape(3, 4)


def fill_basic(x):
    a = np.zeros((3, 4), np.float32)
    a[0] = x[1]
    a[1:, ::2] = 2
    a[..., 3] = x[:, 0] * 2
    a[2, 1] = -1.5
    a[-1, -1] = 7
    return a


def fill_cast(x):
    a = np.zeros(4, np.int32)
    a[1:3] = x[0, :2] * 1.7  # float into int: truncated, as NumPy's unsafe casting
    a[0] = 3
    return a


def fill_broadcast(x):
    a = x * 1.0
    a[:, 1:3] = np.ones((1, 2), np.float32) * 4
    a[1] = 0.5
    a[None, 0] = x[2]
    return a


def fill_empty_selection(x):
    a = x + 1
    a[2:2] = 9  # selects nothing
    return a


@pytest.mark.parametrize("fn", [fill_basic, fill_cast, fill_broadcast, fill_empty_selection])
def test_local_array_writes_compile(fn):
    _compiled(fn, [(X.copy(),), (X.copy() * 2,)])


def write_seen_through_view(x):
    a = x * 1
    b = a[:2]
    a[0] = 5  # b is a view of a: NumPy shows the write through it
    return b


def test_write_to_an_array_a_view_shares_matches_numpy():
    check(write_seen_through_view, [(X.copy(),), (X.copy(),)])


def overflowing_store(x):
    a = np.zeros(3, np.int8)
    a[0] = 300  # OverflowError in NumPy 2
    return a


def test_store_numpy_refuses_raises_the_same():
    check(overflowing_store, [(X.copy(),), (X.copy(),)])
