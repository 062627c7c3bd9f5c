"""Compiled results keep NumPy's memory order (pyfront/layout.py).

NumPy lays out elementwise results like their operands (order='K'): results
whose order layout.py infers are laid out so on the host; calls with a result
whose order it cannot tell run in the interpreter. tests/differential.py
compares the C/F-contiguity flags of every array.
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


def softmax(x):  # "Deep Learning from Scratch" (Saito): the classes as rows, then back
    if x.ndim == 2:
        x = x.T
        x = x - np.max(x, axis=0)
        y = np.exp(x) / np.sum(np.exp(x), axis=0)
        return y.T
    x = x - np.max(x)
    return np.exp(x) / np.sum(np.exp(x))


def stored_softmax(layer, x):
    layer.y = softmax(x)
    return layer.y.sum()


class Layer:
    pass


def columns_by_index(x, idx):
    return x[:, idx] * 1.0, x[idx] + 0.0  # NumPy's advanced indexing puts the index dim first, then transposes


@pytest.mark.parametrize("fn", [transposed_times_two, tanh_of_transposed, transposed_back_and_forth, softmax])
def test_results_of_transposes_keep_numpys_order(fn):
    compiled = check(fn, [(X,), (X + 1,), (X + 2,)])
    assert pyfront.explain(compiled).compiled_calls > 0


def test_a_stored_result_keeps_numpys_order():
    compiled = check(stored_softmax, [(Layer(), X * k) for k in range(4)])
    assert pyfront.explain(compiled).compiled_calls > 0
    layer = Layer()
    compiled(layer, X)
    assert layer.y.flags.c_contiguous and layer.y.base is not None  # a view of an F-ordered array, as in NumPy


def test_advanced_indexing_keeps_numpys_order():
    compiled = check(columns_by_index, [(X, np.array([2, 0])), (X + 1, np.array([1, 1]))] * 2)
    assert pyfront.explain(compiled).compiled_calls > 0


def summed_transposed_cube(x):
    return np.transpose(x, (2, 0, 1)).sum(axis=0)  # NumPy's reduction keeps the operand's order: unknown here


def test_a_result_whose_order_is_unknown_runs_in_the_interpreter():
    compiled = check(summed_transposed_cube, [(np.ones((2, 3, 4)),)] * 3)
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


class Holder:
    def __init__(self, n: int):
        self.w = np.arange(2.0 * n).reshape(2, n)


def flattened_gather(box):
    """`w[:, idx]` is F-ordered in NumPy, so reshaping it copies (fuzzer seed 7): the result's own
    value comes back, not a replay on the gather (which the host would have in C order)."""
    return box.w[:, [0, -1]].reshape(1, -1).T


def flattened_transpose(x):
    t = np.exp(x.T)
    flat = t.reshape(-1)
    return flat, flat.reshape(2, 3)


def reshaped_keeping_axes(x):
    return np.exp(x.T).reshape(2, 3, 1)  # NumPy makes an F-ordered view: laid out so on the host


def written_through_a_reshape(x):
    t = np.exp(x.T)
    t.reshape(-1)[0] = 5.0  # NumPy writes t only if the reshape is a view: runs in the interpreter
    return t.sum()


def written_under_a_reshape(x):
    t = np.exp(x.T)
    flat = t.reshape(-1)
    t[0, 0] = 5.0  # flat sees it only if the reshape is a view: runs in the interpreter
    return flat


@pytest.mark.parametrize("fn, args", [(flattened_gather, (Holder(3),)), (flattened_transpose, (X.T.copy(),))])
def test_a_reshape_numpy_may_copy_of_the_calls_own_array_compiles(fn, args):
    compiled = check(fn, [args] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > report.verified_calls, str(report)


def test_a_reshape_numpy_makes_a_view_keeps_its_order():
    compiled = check(reshaped_keeping_axes, [(X.T.copy(),)] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0


def batched_products(x, w):
    return x.transpose(1, 0, 2, 3) @ w, x.transpose(0, 1, 3, 2) @ w.T, (x @ w).transpose(0, 2, 1, 3).reshape(2, 4, 12)


def test_a_batched_matrix_product_orders_its_batch_dims_as_numpy():
    compiled = check(batched_products, [(np.ones((2, 3, 4, 5)) * k, np.ones((5, 4))) for k in range(3)])
    assert pyfront.explain(compiled).compiled_calls > 0


@pytest.mark.parametrize("fn, reason", [(written_through_a_reshape, "a reshape may be a copy"),
                                        (written_under_a_reshape, "a reshape NumPy may copy")])
def test_where_a_reshape_copies_or_not_shows_the_call_runs_in_the_interpreter(fn, reason):
    compiled = check(fn, [(X.T.copy(),)] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and reason in str(report), str(report)
