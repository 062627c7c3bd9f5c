"""Floating-point and integer results where IREE's code computes differently from NumPy.

Each case is differential (tests/differential.py): compiled code must give
NumPy's answer, or deopt to the interpreter, which does.

- float32 `sum`/`mean`: IREE adds in loop order (10**6 times 0.1 was 0.96%
  off); the lowering accumulates in float64 (reduction.py `_float32_sum`).
- float32 `sin`/`cos`: IREE reduced the argument in float32 (sin(1e10) was
  -6e21, 8.8e-5 off at |x| ~ 3e3, 1.5e-4 relative at 1e-3); trig.py reduces
  in float64 and deopts past 2**22.
- subnormals: IREE's CPU runtime sets FTZ and DAZ, so a subnormal input read
  as 0 and a subnormal result became 0; inputs are guarded
  (passes/guard_subnormal_inputs.py; small float32 values are computed
  exactly instead: test_exact_subnormals.py), flushed results of `* / + - exp`,
  narrowing casts and float32 sum/mean are NaN-marked so the call deopts
  (dialects/primitives/subnormal.py), subnormal constants are refused.
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


@pytest.mark.parametrize("n", [3, 128], ids=["short rows", "rows summed in lanes"])
def test_float32_sum_deopts_where_numpys_partial_sums_could_overflow(n):
    ok = np.ones((2, n), np.float32)
    # NumPy adds 3e38 + 3e38 first: inf and an overflow warning, which -3e38 does not undo.
    overflows = np.zeros((2, n), np.float32)
    overflows[0, :3], overflows[1, :3] = [3e38, 3e38, -3e38], [1, 2, 3]
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


def to_bool(x):
    return x.astype(bool)


def sign(x):
    return np.sign(x)


def argmin(x):
    return np.argmin(x)


def product_positive(a, b):
    return (a * b) > 0


def quotient_positive(a, b):
    return (a / b) > 0


def difference_positive(a, b):
    return (a - b) > 0


def sum_positive(a, b):
    return (a + b) > 0


def exp_positive(x):
    return np.exp(x) > 0


def narrowed_positive(x):
    return x.astype(np.float32) > 0


def total_positive(x):
    return np.sum(x) > 0


def mean_positive(x):
    return np.mean(x) > 0


def f64(*values):
    return np.array(values, np.float64)


def f32(*values):
    return np.array(values, np.float32)


TINY64, TINY32 = float(np.finfo(np.float64).smallest_normal), float(np.finfo(np.float32).smallest_normal)

# (function, arguments NumPy computes without subnormals, arguments with one): the second call deopts.
SUBNORMAL_CASES = {
    "astype(bool) of a subnormal input": (to_bool, (f64(1.0, 0.0),), (f64(5e-324, 0.0),)),
    "sign of a subnormal input": (sign, (f64(1.0, -2.0),), (f64(5e-324, -2.0),)),
    "argmin over subnormal inputs": (argmin, (f64(2.0, 0.0, 1.0),), (f64(1e-320, 0.0, 5e-324),)),
    "product": (product_positive, (f64(1e-100, 1.0), f64(1e-100, 2.0)), (f64(1e-160, 1.0), f64(1e-160, 2.0))),
    "quotient": (quotient_positive, (f64(1e-300, 1.0), f64(1e5, 2.0)), (f64(1e-300, 1.0), f64(1e10, 2.0))),
    "difference": (difference_positive, (f64(4 * TINY64, 1.0), f64(2 * TINY64, 0.5)),
                   (f64(1.5 * TINY64, 1.0), f64(TINY64, 0.5))),
    "sum": (sum_positive, (f64(4 * TINY64, 1.0), f64(-2 * TINY64, 0.5)), (f64(1.5 * TINY64, 1.0), f64(-TINY64, 0.5))),
    "exp": (exp_positive, (f64(-700.0, 1.0),), (f64(-720.0, 1.0),)),
    "float32 exp": (exp_positive, (f32(-80.0, 1.0),), (f32(-95.0, 1.0),)),
    "float64 -> float32 cast": (narrowed_positive, (f64(1e-30, 1.0),), (f64(1e-40, 1.0),)),
    "float32 sum": (total_positive, (f32(4 * TINY32, -2 * TINY32),), (f32(1.5 * TINY32, -TINY32),)),
    "float32 mean": (mean_positive, (f32(8 * TINY32, 0, 0, 0),), (f32(2 * TINY32, 0, 0, 0),)),
}


@pytest.mark.parametrize("fn, ok, subnormal", SUBNORMAL_CASES.values(), ids=SUBNORMAL_CASES.keys())
def test_subnormals_are_numpys(fn, ok, subnormal):
    with np.errstate(all="ignore"):
        compiled = check(fn, [ok, ok, subnormal, ok])
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and report.compiled_calls == 2, str(report)


def times_smallest_subnormal(x):
    return x * 5e-324 > 0


def test_subnormal_constant_runs_in_the_interpreter():
    compiled = check(times_smallest_subnormal, [(f64(1.0, 0.0),)] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and "subnormal" in str(report), str(report)


def product(a, b):
    return a * b


def test_product_underflowing_to_zero_in_numpy_too_runs_compiled():
    # 1e-200 * 1e-200 is 0 in NumPy as well: no subnormal, no deopt.
    calls = [(f64(1e-200, 1.0), f64(1e-200, 2.0))] * 3
    compiled = check(product, calls)
    assert pyfront.explain(compiled).compiled_calls == 2


class Moments:
    """Adam's bias-correction power, as optimizers keep it: beta1**t, updated in place each step
    (float64: small float32 values are computed exactly, test_exact_subnormals.py)."""

    def __init__(self):
        self.b1_power = np.ones(1, np.float64)


def bias_correction(m):
    m.b1_power *= np.float64(0.5)
    return 1 / (1 - m.b1_power)


def test_a_variant_whose_guard_fails_on_passing_data_is_suspended_then_runs_again():
    """0.5**t is subnormal in float64 for t = 1023..1074, then exactly 0: the calls of that window
    deopt (8), run in the interpreter while the variant is suspended (64 calls), then compiled
    again; every call and the state equal the interpreter's."""
    compiled = check(bias_correction, [(Moments(),)])
    model, plain = Moments(), Moments()
    for t in range(1, 1117):
        assert np.array_equal(compiled(model), bias_correction(plain)), t
        assert np.array_equal(model.b1_power, plain.b1_power), t
    report = pyfront.explain(compiled)
    suspended = [r for r in report.interpreter_reasons if r.startswith("compiled code suspended for 64 calls")]
    assert suspended and report.interpreter_reasons[suspended[0]] == 64, str(report)
    # t = 1023 makes the first subnormal from a normal input: a NaN-marked result that the deferred
    # floating-point checks deopt for once (a one-off: nothing is recompiled); t = 1024..1030 deopt at
    # the input guard, t = 1031..1094 are suspended, t = 1095.. run compiled (0.5**t is 0 from 1075).
    assert report.deopts == 8 and report.compilations == 1, str(report)
    assert report.compiled_calls == report.calls - 1 - 8 - 64, str(report)  # 1: check's call, profiled
