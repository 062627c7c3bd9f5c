"""Results IREE's CPU code flushes to zero where NumPy gives a subnormal: made NaN, so the call deopts.

IREE's CPU runtime sets the x86 FTZ and DAZ bits (MXCSR |= 0x8040) around
every dispatch, with no flag to turn that off (IREE 3.13, both `local-sync`
and `local-task`): an arithmetic result in the subnormal range becomes +-0,
and a subnormal operand reads as zero. NumPy keeps subnormals. Inputs are
guarded by `guard-subnormal-inputs` (no subnormal reaches an op); for the
ops below a flushed result is told apart from a true zero by their
operands, and made NaN there, which guard-fp-events sees as an invalid value
(it needs no check of its own: a NaN is carried to the checks that exist),
so the call re-runs in the interpreter. Each rule is exact or errs towards
deopting:

- x * y, x / y: the result is 0 but x * 2**64 * y (x * 2**64 / y) exceeds
  2**64 times half the smallest subnormal (scaling by a power of two is
  exact, and the scaled product cannot underflow there);
- x + y, x - y: the result is 0 but x != -y (x != y): the exact sum of two
  normal floats, when subnormal, is representable, so NumPy's is not 0;
- exp(x): x between log of half the smallest subnormal and log of twice
  the smallest normal (where NumPy's result is subnormal);
- float64 -> float32 casts and the rounding of float32 sums (accumulated in
  float64): a value whose magnitude lies between half float32's smallest
  subnormal and its smallest normal.

Cost: the rules add 5-7 scalar ops to each such op's body (fused, no extra
dispatch); the input guards are one check per float input, which measured
no slower. Measured (2-core AMD EPYC, cpu-sync, float32, medians of a noisy
shared machine): gelu+layernorm 256x1024 0.71-0.80 ms -> 1.39-1.70 ms, and
16x256 36 -> 45-65 us; softmax 256x1000 0.63-0.65 -> 0.73-0.83 ms; softmax
32x10 unchanged (24 us).

Not covered (IREE still flushes there): float64 sums and means, `prod`,
matmul, convolutions, `power`, `arctan2`, float32 `%` and `//`.
"""

from __future__ import annotations

from math import log

import numpy as np
from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.types import dtype_of

SCALE = 2.0**64


def _float_info(t: ir.Type) -> np.finfo:
    return np.finfo(dtype_of(t))


def _c(x: ir.Value, value: float) -> ir.Value:
    return arith.constant(x.type, value)


def _cmp(pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.cmpf(getattr(arith.CmpFPredicate, pred), a, b)


def _nan_where(flushed: ir.Value, result: ir.Value) -> ir.Value:
    return arith.select(flushed, _c(result, float("nan")), result)


def _zero(result: ir.Value) -> ir.Value:
    return _cmp("OEQ", result, _c(result, 0.0))


def _scaled_exceeds_underflow(scaled: ir.Value) -> ir.Value:
    """|scaled| > SCALE * half the smallest subnormal: unscaled, NumPy's result would not be 0."""
    # Scaled first: half of float64's smallest subnormal is 0.0 as a float.
    threshold = float(_float_info(scaled.type).smallest_subnormal) * SCALE / 2
    return _cmp("OGT", math.absf(scaled), _c(scaled, threshold))


def product(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    scaled = arith.mulf(arith.mulf(a, _c(a, SCALE)), b)
    return _nan_where(arith.andi(_zero(result), _scaled_exceeds_underflow(scaled)), result)


def quotient(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    scaled = arith.divf(arith.mulf(a, _c(a, SCALE)), b)
    return _nan_where(arith.andi(_zero(result), _scaled_exceeds_underflow(scaled)), result)


def sum_of(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return _nan_where(arith.andi(_zero(result), _cmp("UNE", a, arith.negf(b))), result)


def difference(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return _nan_where(arith.andi(_zero(result), _cmp("UNE", a, b)), result)


def exp(result: ir.Value, x: ir.Value) -> ir.Value:
    info = _float_info(x.type)
    # (Half of float64's smallest subnormal is 0.0 as a float: its log is taken as a difference.)
    low, high = log(float(info.smallest_subnormal)) - log(2.0), log(float(info.smallest_normal) * 2)
    subnormal = arith.andi(_cmp("OGT", x, _c(x, low)), _cmp("OLT", x, _c(x, high)))
    return _nan_where(subnormal, result)


def narrowed(result: ir.Value, wide: ir.Value) -> ir.Value:
    """`result`, `wide` rounded to a narrower float type: NaN where that is subnormal."""
    info = _float_info(result.type)
    magnitude = math.absf(wide)
    # `result` is float32 (float64 has no narrower type here): half its smallest subnormal is a float.
    subnormal = arith.andi(_cmp("OGT", magnitude, _c(wide, float(info.smallest_subnormal) / 2)),
                           _cmp("OLT", magnitude, _c(wide, float(info.smallest_normal))))
    return _nan_where(subnormal, result)
