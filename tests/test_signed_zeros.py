"""The sign of zero: compiled code returns NumPy's -0.0 and +0.0 exactly.

`differential.check` compares floats to a few ulps but the signs of zeros
exactly. These tests feed -0.0 and +0.0 to every unary float ufunc of the
primitive table (generated from `elementwise.UNARY`, through
`pyfront.compile`, float32 and float64 where the backend has a loop), and to
the binary operations, reductions, contractions and casts whose zero sign
NumPy fixes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from differential import check
from pyfront.dialects.primitives import elementwise, get

import pyfront

pytestmark = pytest.mark.iree

FLOATS = [np.dtype("float32"), np.dtype("float64")]
CANDIDATES = [-0.0, 0.0, 1.0, -0.5, 0.25, 2.0, -3.0]


def _quiet(ufunc: np.ufunc, value: float, dtype: np.dtype) -> bool:
    """Whether NumPy computes `ufunc(value)` without a floating-point warning (a guard would deopt)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            ufunc(np.asarray(value, dtype))
        except RuntimeWarning:
            return False
    return True


def _accepts(name: str, dtype: np.dtype) -> bool:
    try:
        get(name).infer([(2,)], [dtype], {})
    except TypeError:
        return False
    return True


UNARY_FLOAT = [
    pytest.param(ufunc, dtype, id=f"{name}-{dtype}")
    for name, (ufunc, bodies, *_) in elementwise.UNARY.items()
    if elementwise.F in bodies
    for dtype in FLOATS
    if _accepts(name, dtype)
]


def _applying(ufunc: np.ufunc):
    def apply(x):
        return ufunc(x)
    return apply


@pytest.mark.parametrize("ufunc, dtype", UNARY_FLOAT)
def test_unary_keeps_numpys_sign_of_zero(ufunc, dtype):
    x = np.array([v for v in CANDIDATES if _quiet(ufunc, v, dtype)], dtype)
    assert np.signbit(x).any() or ufunc is np.log, "inputs must include -0.0"
    compiled = check(_applying(ufunc), [(x,), (x,), (x[::-1].copy(),)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, str(report)


def test_the_check_sees_the_sign_of_zero():
    """A lost sign of zero fails `check`, so the tests above can fail."""
    from differential import assert_same

    with pytest.raises(AssertionError, match="sign of zero"):
        assert_same(np.array([-0.0, 1.0]), np.array([0.0, 1.0]))
    with pytest.raises(AssertionError, match="sign of zero"):
        assert_same(-0.0, 0.0)
    assert_same(np.array([np.nan, 1e-300]), np.array([np.nan, -1e-300]))  # nonzero signs: allclose only


# Binary operations, reductions, contractions and casts -----------------------


def times_negative_zero(x):
    return x * -0.0


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def maximum(a, b):
    return np.maximum(a, b)


def minimum(a, b):
    return np.minimum(a, b)


def where(c, a, b):
    return np.where(c, a, b)


def matmul(a, b):
    return a @ b


def means(x):
    return x.mean(), x.mean(axis=0), x.mean(axis=1)


def sums(x):
    return x.sum(), x.sum(axis=0), x.sum(axis=1, keepdims=True)


def products(x):
    return x.prod(), x.prod(axis=0)


def to_other_float(x):
    return x.astype(np.float64 if x.dtype == np.float32 else np.float32)


def _zeros(dtype, *signs) -> np.ndarray:
    return np.array([-0.0 if s == "-" else 0.0 for s in signs], dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_binary_ops_on_zeros(dtype):
    neg, pos = _zeros(dtype, "-", "-", "+", "+"), _zeros(dtype, "-", "+", "-", "+")
    mixed = np.array([-0.0, 0.0, 2.0, -2.0], dtype)
    for fn, calls in [
        (times_negative_zero, [(mixed,)]),
        (add, [(neg, pos)]),
        (subtract, [(neg, pos)]),
        (maximum, [(neg, pos), (pos, neg)]),  # ties give the second operand
        (minimum, [(neg, pos), (pos, neg)]),
        (where, [(np.array([True, False, True, False]), neg, pos)]),
    ]:
        compiled = check(fn, [*calls, *calls])
        assert pyfront.explain(compiled).compiled_calls > 0, fn.__name__


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_reductions_contractions_and_casts_of_zeros(dtype):
    zeros = np.full((3, 4), -0.0, dtype)
    ones = np.ones((4, 2), dtype)
    for fn, args in [
        (sums, (zeros,)),  # NumPy starts from its identity +0.0: +0.0 + -0.0 is +0.0
        (means, (zeros,)),
        (products, (zeros[:, :3].copy(),)),  # (-0)^3 is -0.0
        (matmul, (zeros, ones)),
        (matmul, (-ones.T.copy(), np.zeros((4, 3), dtype))),
        (to_other_float, (zeros,)),
    ]:
        compiled = check(fn, [args, args])
        assert pyfront.explain(compiled).compiled_calls > 0, fn.__name__


def arctan2(y, x):
    return np.arctan2(y, x)


def test_arctan2_of_zeros_and_infinities():
    """atan2 has y's sign; (+-0, +-0) and (+-inf, +-inf) have exact angles (IREE's atan2 gives NaN)."""
    edges = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -2.5], np.float32)
    y, x = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    compiled = check(arctan2, [(y, x), (y, x), (x, y)])
    assert pyfront.explain(compiled).compiled_calls > 0


# max/min over slices holding both zeros -------------------------------------
# NumPy's sign for such a zero depends on element order and SIMD lanes, so
# compiled code guards against it (`zero_signs_agree`) and the interpreter answers.


def extrema(x):
    return (x.max(), x.min(), np.max(x, axis=0), np.amin(x, axis=1, keepdims=True),
            np.amax(x, axis=(0, 1), keepdims=True), x.min(axis=-1))


def _mixed_zero_slices(dtype: np.dtype) -> list[np.ndarray]:
    """Arrays where some slice of `extrema` has a zero extreme and holds +0.0 and -0.0."""
    pz, nz = 0.0, -0.0
    return [np.array(rows, dtype) for rows in (
        [[pz, nz], [nz, pz]],                # every reduction ties
        [[nz, pz], [-1.0, -2.0]],            # only row 0 (and the full max) ties on max
        [[1.0, 2.0], [nz, pz]],              # only row 1 ties on min
        [[-1.0, pz], [-3.0, nz]],            # axis-0 max of column 1 ties
    )]


def _agreeing_zero_slices(dtype: np.dtype) -> list[np.ndarray]:
    """Arrays whose zeros never tie at an extreme: one sign per slice, or a nonzero extreme (or NaN)."""
    pz, nz = 0.0, -0.0
    return [np.array(rows, dtype) for rows in (
        [[nz, nz], [nz, nz]],                # all -0.0
        [[pz, pz], [pz, pz]],                # all +0.0
        [[nz, 5.0], [-5.0, pz]],             # both zeros only where the extreme is +-5
        [[1.0, 2.0], [3.0, 4.0]],
    )]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("index", range(4))
def test_extrema_over_mixed_zeros_deopt_to_numpys_answer(dtype, index):
    plain = np.array([[1.0, 2.0], [3.0, 4.0]], dtype)
    mixed = _mixed_zero_slices(dtype)[index]
    compiled = check(extrema, [(plain,), (plain,), (mixed,), (plain,)])
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and report.compiled_calls == 2
    assert "holding both +0.0 and -0.0" in str(report)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_extrema_without_mixed_zero_ties_run_compiled(dtype):
    calls = [(x,) for x in _agreeing_zero_slices(dtype)]
    compiled = check(extrema, [calls[0], *calls])
    report = pyfront.explain(compiled)
    assert report.deopts == 0 and report.compiled_calls == len(calls)


def extremum_beyond_zero(x):
    return x.max(axis=1), x.min(axis=1)


def test_zeros_of_both_signs_below_the_max_or_next_to_nan_run_compiled():
    """Both zeros in a slice are fine where the extreme is not zero (a positive max, a NaN)."""
    x = np.array([[0.0, -0.0, 1.0, -1.0], [-0.0, np.nan, 0.0, 2.0], [0.0, -0.0, 3.0, -4.0]], np.float32)
    compiled = check(extremum_beyond_zero, [(x,), (x,)])
    report = pyfront.explain(compiled)
    assert report.deopts == 0 and report.compiled_calls == 1


def test_int_extrema_need_no_zero_sign_guard():
    x = np.array([[0, -1], [2, 0]], np.int32)
    compiled = check(extrema, [(x,), (x,)])
    assert pyfront.explain(compiled).compiled_calls == 1
    assert "+0.0" not in str(pyfront.explain(compiled))


def extrema_in_a_loop(x, n):
    """A tensor-only range loop: its body is a region, where the tie becomes a NaN that guard-fp-events checks."""
    acc = x[0]
    for _ in range(n):
        acc = np.maximum(acc, x.max(axis=0)) + np.minimum(acc, x.min(axis=0))
    return acc


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_extrema_over_mixed_zeros_inside_a_loop_deopt(dtype):
    plain = np.array([[0.5, 1.0], [-0.0, 2.0]], dtype)
    tie = np.array([[0.0, 1.0], [-0.0, 2.0]], dtype)
    compiled = check(extrema_in_a_loop, [(plain, 2), (plain, 2), (tie, 2), (plain, 2), (tie, 2), (plain, 2)])
    report = pyfront.explain(compiled)
    assert report.deopts == 2 and report.compiled_calls == 3


def clip_at_the_bounds(x, lo):
    return np.clip(-x, lo, 2), np.clip(x, -0.0, 1.0), np.clip(x, -1.0, -0.0), np.clip(x, np.float32(0.0), 1.0)


def clip_by_arrays(x, lo):
    return np.clip(x, lo, 1.0)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_clip_with_scalar_bounds_keeps_a_zero_equal_to_a_bound(dtype):
    """NumPy's clip loop for scalar bounds keeps x where it equals a bound (np.clip(-0.0, 0, 2)
    is -0.0, np.maximum(-0.0, 0) is 0.0), also with a runtime int bound (the fuzzer's case)."""
    x = np.array([0.0, -0.0, 0.5, -1.5], dtype)
    compiled = check(clip_at_the_bounds, [(x + 1, 0), (x + 1, 0), (x, 1), (x, 0), (np.float32(0.0), 0)])
    assert pyfront.explain(compiled).compiled_calls > 0


def test_clip_with_array_bounds_gives_the_bound_as_numpy():
    """With array bounds NumPy's loop takes the bound on a tie, as np.maximum does."""
    x = np.array([0.0, -0.0, 0.0], np.float32)
    compiled = check(clip_by_arrays, [(x, -x), (x, -x), (-x, x)])
    assert pyfront.explain(compiled).compiled_calls > 0
