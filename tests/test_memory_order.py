"""Compiled results keep NumPy's memory order (pyfront/layout.py).

NumPy lays out elementwise results like their operands (order='K'): calls
whose results NumPy would not lay out in C order run in the interpreter.
tests/differential.py compares the C/F-contiguity flags of every array.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import assert_same, check

import pyfront

pytestmark = pytest.mark.iree

X = np.arange(6.0).reshape(2, 3)


def transposed_times_two(x):
    return x.T * 2.0


def tanh_of_transposed(x):
    return np.tanh(x.T) + 1.0


def scaled(x):
    return x * 2.0


def transposed_back_and_forth(x):
    y = x
    for _ in range(3):
        y = y.T * 1.0
    return y


def layouts_that_stay_c(x, w):
    return x.T @ w, x.T.sum(axis=1), (x * 2).T, x[:, ::2] * 2.0, x.T


W = np.asfortranarray(np.ones((3, 3)))


def scaled_by_global(x):
    return W * x


@pytest.mark.parametrize("fn", [transposed_times_two, tanh_of_transposed, transposed_back_and_forth])
def test_results_of_transposes_keep_numpys_order(fn):
    compiled = check(fn, [(X,), (X + 1,), (X + 2,)])
    assert "another memory order" in str(pyfront.explain(compiled))


def test_f_ordered_and_strided_arguments():
    check(scaled, [(X,), (X + 1,), (X.T,), (np.asfortranarray(X),), (X[:, ::-1],), (X + 3,)])


def test_layouts_numpy_keeps_in_c_order_still_compile():
    compiled = check(layouts_that_stay_c, [(X, np.ones((2, 2)))] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0


def test_f_ordered_state_arrays():
    global W
    compiled = check(scaled_by_global, [(np.ones((3, 3)),)] * 3)
    assert "not C-ordered" in str(pyfront.explain(compiled))
    W = np.ascontiguousarray(W)  # a C-ordered global compiles
    compiled = check(scaled_by_global, [(np.ones((3, 3)),)] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0
    W = np.asfortranarray(W)  # and the state guard sees a later F-ordered one
    assert_same(scaled_by_global(np.ones((3, 3))), compiled(np.ones((3, 3))))


def constant_views(x):
    return np.arange(2)[::-1], np.zeros((2, 3))[:, ::2], np.ones((2, 3)).T, np.arange(2)[::-1].T, x + 1


def test_returned_constant_views_keep_their_strides():
    """A view of a constant array (folded at compile time) is returned as a view, with its strides,
    of a fresh copy of its base, as each interpreted call makes one (the fuzzer's np.arange(2)[::-1])."""
    compiled = check(constant_views, [(X,), (X,), (X + 1,)])
    assert pyfront.explain(compiled).compiled_calls > 0


def col2im_like(cols, n):
    """A loop that adds a transposed array's slices into a C-ordered one: NumPy keeps the carried
    array C-ordered, so the loop's result compiles although the loop reads a reordered value."""
    col = cols.reshape(2, 3, 4).transpose(1, 0, 2)
    img = np.zeros((3, 2, 4 + n))
    for k in range(n):
        img[:, :, k:k + 4] += col
    return img


def test_a_loop_result_keeps_its_own_layout_not_that_of_what_the_loop_reads():
    rng = np.random.default_rng(2)
    compiled = check(col2im_like, [(rng.normal(size=(6, 4)), 40)] * 3, profile_calls=1)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > report.verified_calls, str(report)
