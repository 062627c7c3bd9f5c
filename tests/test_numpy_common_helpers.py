"""NumPy helpers common in training code (pyfront/numpy_api.py): rounding, closeness tests,
counting, axis swaps and compile-time ranges, compared with the interpreter by `differential.check`."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree

RNG = np.random.default_rng(4)
A = RNG.standard_normal((4, 5))
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 2.5, 3.5, -0.5])


def rounded(x):
    return np.round(x, 2), np.round(x), x.round(1), np.around(x * 1000, -2), np.round(x.astype(np.float32), 3)


def ties(x):
    return np.round(x), np.round(x * 0.1, 1), np.rint(x)


def rounded_ints(y):
    return np.round(y)  # a new array (differential.check: not the argument itself)


def closeness(x, y):
    return np.isclose(x, y), np.isclose(x, y, equal_nan=True), np.isclose(x[0], 1.0), np.allclose(x, x + 1e-9)


def counts_and_axes(x):
    return np.count_nonzero(x > 0), np.count_nonzero(x, axis=0), np.swapaxes(x, 0, 1).sum(axis=1), x.swapaxes(-1, 0)


def scaled_by_a_ramp(x):
    return x * np.linspace(0, 1, 5)


def copies_by_keyword(dA, Z):
    dZ = np.array(dA, copy=True)  # deeplearning.ai's relu_backward
    dZ[Z <= 0] = 0
    return dZ, np.array(dZ, copy=None), np.array(Z, dtype=np.float32, copy=None), np.array(dA, copy=False)


def softmax_jacobian(p):
    s = p.reshape(-1, 1)
    return np.diagflat(s) - np.dot(s, s.T), np.diagflat(p[:3], -1), np.diagonal(np.outer(p, p), 1), p[:4].reshape(2, 2).trace()


def reshaping_helpers(x, i):
    return (np.atleast_2d(x[0]) * 1, np.atleast_1d(x.sum()), np.atleast_3d(x).shape, np.moveaxis(x[None], 0, -1) + 0,
            np.moveaxis(x.reshape(2, 2, 5), [0, 1], [-1, 0]).sum(axis=(0, 1)), np.tensordot(x, x, axes=([1], [1])),
            np.tensordot(x.reshape(2, 2, 5), x.reshape(5, 4), 1), np.tensordot(x, x, 2), np.append(x[0], i),
            np.append(x, x, axis=0), np.array_equal(x, x), np.array_equal(x, x[:2]), np.array_equal(i, [1, 2]),
            np.ptp(x, axis=1), np.ptp(i), np.average(x, axis=0), np.average(i))


@pytest.mark.parametrize("fn, args", [
    (rounded, (A * 10,)),
    (ties, (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.25, 0.35]),)),
    (rounded_ints, (np.array([1, 2, 3]),)),
    (closeness, (SPECIAL, SPECIAL[::-1].copy())),
    (counts_and_axes, (A,)),
    (scaled_by_a_ramp, (A,)),
    (copies_by_keyword, (A, A[::-1] - 0.5)),
    (softmax_jacobian, (np.array([0.1, 0.2, 0.3, 0.4]),)),
    (reshaping_helpers, (A, np.array([1, 2]))),
])
def test_common_helpers_compile(fn, args):
    # 4 calls: inf and NaN inputs fail the deferred floating-point checks twice before the exact ones run.
    report = pyfront.explain(check(fn, [args] * 4))
    assert report.compiled_calls > 0, str(report)


def test_np_array_copy_keyword_keeps_the_array_itself_where_numpy_does():
    compiled = pyfront.compile(copies_by_keyword)
    for _ in range(3):
        dA = A.copy()
        dZ, same, narrowed, itself = compiled(dA, A)
    assert same is dZ and itself is dA and narrowed.dtype == np.float32
    assert pyfront.explain(compiled).compiled_calls > 0


def array_without_copy(x):
    return np.array(x, copy=False)


def test_np_array_copy_false_of_a_list_raises_numpys_error():
    check(array_without_copy, [([1.0, 2.0],)] * 3)
