"""Small float32 values are computed exactly, subnormals included (passes/guard_subnormal_inputs.py).

IREE's CPU code reads a subnormal as zero and flushes a subnormal result to
zero; pyfront computes the elementwise ops of float32 values of at most 16
elements through float64 with their bits read and rounded in software
(dialects/primitives/subnormal.py `EXACT`), so such calls run compiled and
give NumPy's bits. A subnormal that reaches an op computed the ordinary way
deopts. Comparisons here are bitwise: tests/differential.py compares floats
to a few ulps, and a flushed subnormal is one ulp from zero. Elementwise
IEEE float32 results are correctly rounded on every x86 host, so the bits do
not depend on the CPU (AVX2 or AVX-512).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import pyfront

pytestmark = pytest.mark.iree

TINY32 = np.float32(np.finfo(np.float32).smallest_normal)


def same_bits(expected, got) -> bool:
    """Equal dtype, shape and bits (NaNs equal whatever their payload)."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.dtype != got.dtype or expected.shape != got.shape:
        return False
    if expected.dtype.kind == "f":
        nan = np.isnan(expected)
        if not np.array_equal(nan, np.isnan(got)):
            return False
        expected, got = np.where(nan, 0, expected), np.where(nan, 0, got)
    return np.array_equal(expected.view(np.uint8), got.view(np.uint8))


def elementwise(a, b):
    return (a * b, a / b, a + b, a - b, np.sqrt(np.abs(a)), -a, np.abs(b), np.maximum(a, b), np.minimum(a, b),
            a < b, a == b, a * 0.9, 1 - a, np.square(a), a > 0)


def float32_bits(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32s around the subnormal range: subnormals, the smallest normals, values whose products
    underflow, and any finite bits below 2 in magnitude."""
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    kind = rng.integers(0, 4, n)
    choices = [bits & np.uint32(0x807FFFFF), (bits & np.uint32(0x80FFFFFF)) | np.uint32(0x00800000),
               (bits & np.uint32(0x807FFFFF)) | np.uint32(0x0C000000), bits & np.uint32(0xBFFFFFFF)]
    return np.choose(kind, choices).view(np.float32)


def test_small_float32_ops_give_numpys_bits_compiled():
    compiled = pyfront.compile(elementwise, wait_for_compile="always")
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):  # (a / subnormal overflows)
        for i in range(40):
            a, b = float32_bits(rng, 8), float32_bits(rng, 8)
            for k, (want, got) in enumerate(zip(elementwise(a, b), compiled(a, b))):
                assert same_bits(want, got), (i, k, a, b, want, got)
    report = pyfront.explain(compiled)
    assert report.deopts == 0 and report.compiled_calls == 40 - compiled.config.profile_calls, str(report)


class Adam:
    """Adam with its bias-correction powers kept as float32 state (examples/models/optim.py)."""

    def __init__(self, n: int, b1: float):
        self.b1, self.b2 = b1, 0.999
        self.p = np.linspace(-1, 1, n, dtype=np.float32)
        self.m, self.v = np.zeros(n, np.float32), np.zeros(n, np.float32)
        self.b1_power, self.b2_power = np.ones(1, np.float32), np.ones(1, np.float32)


def adam_step(opt, g):
    opt.b1_power = opt.b1_power * opt.b1
    opt.b2_power = opt.b2_power * opt.b2
    step_size = 0.01 * np.sqrt(1 - opt.b2_power) / (1 - opt.b1_power)
    opt.m = opt.b1 * opt.m + (1 - opt.b1) * g
    opt.v = opt.b2 * opt.v + (1 - opt.b2) * (g * g)
    opt.p = opt.p - step_size * opt.m / (np.sqrt(opt.v) + 1e-8)
    return opt.p


@pytest.mark.parametrize("b1, steps", [(0.9, 900), (0.5, 200)])
def test_adam_stays_compiled_when_its_power_turns_subnormal(b1, steps):
    """b1**t is subnormal in float32 from step ~830 (b1 = 0.9; NumPy then keeps it at a
    subnormal for good) or 127 (b1 = 0.5; 0 from step 150): every step runs compiled and
    leaves NumPy's bits in the state."""
    g = np.linspace(0.5, 1.5, 64, dtype=np.float32)  # 64 elements: the update's ops are ordinary
    compiled_opt, plain_opt = Adam(64, b1), Adam(64, b1)
    compiled = pyfront.compile(adam_step, wait_for_compile="always")
    for t in range(1, steps + 1):
        assert same_bits(adam_step(plain_opt, g), compiled(compiled_opt, g)), t
    for name in ("p", "m", "v", "b1_power", "b2_power"):
        assert same_bits(getattr(plain_opt, name), getattr(compiled_opt, name)), name
    assert plain_opt.b1_power[0] < TINY32  # the window this test is about was reached
    report = pyfront.explain(compiled)
    assert report.deopts == 0 and report.compiled_calls == steps - compiled.config.profile_calls, str(report)


def scaled(x, s):
    return x * s


def test_small_subnormal_read_by_an_ordinary_op_deopts():
    """`s` (one element) is computed exactly, `x * s` (64 elements) is not: a subnormal `s` deopts."""
    compiled = pyfront.compile(scaled, wait_for_compile="always")
    x = np.ones(64, np.float32)
    calls = [(x, np.float32([0.5]))] * 3 + [(x, np.float32([TINY32 / 4]))] + [(x, np.float32([2.0]))]
    for args in calls:
        assert same_bits(scaled(*copy.deepcopy(args)), compiled(*args))
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and "no subnormal float in arg1" in str(report), str(report)


def bias_step(opt):
    opt.b1_power = opt.b1_power * opt.b1
    return np.ones(64, np.float32) * opt.b1_power


def test_subnormal_result_read_by_an_ordinary_op_deopts():
    """An exactly computed result that a 64-element op reads is checked where it is made."""
    compiled = pyfront.compile(bias_step, wait_for_compile="always")
    compiled_opt, plain_opt = Adam(1, 0.5), Adam(1, 0.5)
    for t in range(1, 141):
        assert same_bits(bias_step(plain_opt), compiled(compiled_opt)), t
        assert same_bits(plain_opt.b1_power, compiled_opt.b1_power), t
    report = pyfront.explain(compiled)
    assert report.deopts >= 1 and "no subnormal float in the result of pyfront.multiply" in str(report), str(report)
