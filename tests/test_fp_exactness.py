"""Floating-point and integer results where IREE's code computes differently from NumPy.

Each case is differential (tests/differential.py): compiled code must give
NumPy's answer, or deopt to the interpreter, which does.

- float32 `sum`/`mean`: IREE adds in loop order (10**6 times 0.1 was 0.96%
  off); the lowering accumulates in float64 (reduction.py `_float32_sum`).
- float32 `sin`/`cos`: IREE reduced the argument in float32 (sin(1e10) was
  -6e21, 8.8e-5 off at |x| ~ 3e3, 1.5e-4 relative at 1e-3); trig.py reduces
  in float64 and deopts past 2**22.
- `MIN // -1` overflows with NumPy's RuntimeWarning (a guard deopts), and
  `%` by -1 is 0 (IREE's int16 remainder gave -1).
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree

INTS = [np.int8, np.int16, np.int32, np.int64]


def total(x):
    return np.sum(x)


def row_means(x):
    return x.mean(axis=-1)


def row_sums(x):
    return np.sum(x, axis=-1)


def test_float32_sum_of_a_million_tenths_is_numpys():
    x = np.full(10**6, 0.1, np.float32)
    compiled = check(total, [(x,)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2


def test_float32_mean_of_long_rows_is_numpys():
    x = np.full((2, 300_000), 0.1, np.float32)
    x[1] = 3.3
    compiled = check(row_means, [(x,)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2


def test_float32_sum_deopts_where_numpys_partial_sums_could_overflow():
    ok = np.ones((2, 3), np.float32)
    # NumPy adds 3e38 + 3e38 first: inf and an overflow warning, which -3e38 does not undo.
    overflows = np.array([[3e38, 3e38, -3e38], [1, 2, 3]], np.float32)
    with np.errstate(all="warn", under="ignore"):
        compiled = check(row_sums, [(ok,), (ok,), (overflows,), (ok,)])
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and report.compiled_calls == 2, str(report)


def floor_divide(a, b):
    return a // b


def remainder(a, b):
    return a % b


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: t.__name__)
def test_min_floor_divide_minus_one_warns_overflow(dtype):
    ok = (np.array([7, 5], dtype), np.array([-1, 2], dtype))
    overflow = (np.array([np.iinfo(dtype).min, 5], dtype), np.array([-1, 2], dtype))
    compiled = check(floor_divide, [ok, ok, overflow, ok])
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and report.compiled_calls == 2, str(report)


@pytest.mark.parametrize("dtype", INTS, ids=lambda t: t.__name__)
def test_min_remainder_minus_one_is_zero_without_a_warning(dtype):
    calls = [(np.array([np.iinfo(dtype).min, 7, -7], dtype), np.array([-1, -1, 2], dtype))] * 3
    compiled = check(remainder, calls)
    assert pyfront.explain(compiled).compiled_calls == 2


def sin_cos(x):
    return np.sin(x), np.cos(x)


def test_float32_sin_cos_of_large_arguments_are_numpys():
    x = np.array([1000.5, -12345.678, 3e6, 4e6, 1e-3, -2.5e-5, np.pi / 2 * 1001], np.float32)
    compiled = check(sin_cos, [(x,)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2


def test_float32_sin_cos_within_two_ulp_of_numpy():
    # Both are within 1.4 ulp of the exact value (trig.py): never more than 2 apart.
    x = np.geomspace(1e-6, 4e6, 20001, dtype=np.float32)
    x = np.concatenate([x, -x, np.float32(np.pi / 2) * np.arange(-3000, 3000, dtype=np.float32)])
    compiled = pyfront.compile(sin_cos, profile_calls=1)
    compiled(x)
    got = compiled(x)
    assert pyfront.explain(compiled).compiled_calls == 1
    for value, expected in zip(got, sin_cos(x)):
        ulps = np.abs(value.astype(np.float64) - expected) / np.spacing(np.abs(expected))
        assert ulps.max() <= 2, (x[ulps.argmax()], value[ulps.argmax()], expected[ulps.argmax()])


def test_float32_sin_past_the_reduction_limit_deopts():
    ok = np.array([1.0, 2.0], np.float32)
    far = np.array([1e10, 2.0], np.float32)
    compiled = check(sin_cos, [(ok,), (ok,), (far,), (ok,)])
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and report.compiled_calls == 2, str(report)
