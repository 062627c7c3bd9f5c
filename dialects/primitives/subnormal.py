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
- x + y, x - y: the result is 0 but x != -y (x != y) and |x| < 2**(emin +
  nmant + 1) (2**-102 for float32): the exact sum of two normal floats, when
  subnormal, is representable, so NumPy's is not 0; and it is a multiple of
  the smaller ulp of x and y, which from that magnitude on is at least the
  smallest normal, so a larger x never flushes. (The bound matters where IREE
  reassociates: it computed `a @ b + c` as the matmul accumulated onto c while
  the check read a @ b, a 0 with a @ b != -c, LeNet's `conv + bias`.)
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

Small float32 values are computed exactly instead (`EXACT`, an op attribute
that passes/guard_subnormal_inputs.py sets): the op reads its operands as
float64 through their bits (`widened`: no DAZ), computes in float64 and
rounds the result to float32 in software (`rounded_to_float32`: no FTZ), so
subnormal operands and results are NumPy's, bit for bit. (The model
programs' Adam keeps `b1 ** t` as float32 state, which NumPy takes to a
subnormal after ~830 steps and keeps there.)
"""

from __future__ import annotations

from math import log

import numpy as np
from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.types import dtype_of

SCALE = 2.0**64
# An op with this unit attribute computes float32 exactly, subnormals included (see the docstring).
EXACT = "pyfront.exact_subnormals"


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


def _may_flush_a_sum(a: ir.Value) -> ir.Value:
    """|a| < 2**(emin + nmant + 1): below it a sum a + b can be a nonzero subnormal (see the docstring)."""
    info = _float_info(a.type)
    return _cmp("OLT", math.absf(a), _c(a, float(info.smallest_normal) * 2.0 ** (info.nmant + 1)))


def sum_of(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    flushed = arith.andi(_zero(result), _cmp("UNE", a, arith.negf(b)))
    return _nan_where(arith.andi(flushed, _may_flush_a_sum(a)), result)


def difference(result: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    flushed = arith.andi(_zero(result), _cmp("UNE", a, b))
    return _nan_where(arith.andi(flushed, _may_flush_a_sum(a)), result)


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


def widened(x: ir.Value) -> ir.Value:
    """float32 scalar `x` as a float64, exactly: a subnormal too (`arith.extf` reads it as zero under DAZ)."""
    f64, i32 = ir.F64Type.get(), ir.IntegerType.get_signless(32)
    bits = arith.bitcast(i32, x)
    exponent_zero = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(bits, arith.constant(i32, 0x7F800000)),
                               arith.constant(i32, 0))
    # A subnormal is its 23-bit mantissa times 2**-149: an integer and a power of two, both exact in float64.
    magnitude = arith.mulf(arith.sitofp(f64, arith.andi(bits, arith.constant(i32, 0x7FFFFF))),
                           arith.constant(f64, 2.0**-149))
    signed = arith.select(arith.cmpi(arith.CmpIPredicate.slt, bits, arith.constant(i32, 0)),
                          arith.negf(magnitude), magnitude)
    return arith.select(exponent_zero, signed, arith.extf(f64, x))


def rounded_to_float32(wide: ir.Value) -> ir.Value:
    """float64 scalar `wide` rounded to float32 as NumPy rounds (to nearest, ties to even), subnormals included.

    Below the smallest normal, the result is a multiple of 2**-149: the rounded
    count of those (an exact float64 integer of at most 2**23) is the float32's
    bits, with the sign bit set from `wide`'s; elsewhere `arith.truncf`, whose
    result is normal, infinite or NaN there (no FTZ).
    """
    f32, i32, i64 = ir.F32Type.get(), ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    magnitude = math.absf(wide)
    tiny = _cmp("OLT", magnitude, _c(wide, 2.0**-126))  # False for NaN
    units = arith.fptosi(i32, math.roundeven(arith.mulf(magnitude, _c(wide, 2.0**149))))
    negative = arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(i64, wide), arith.constant(i64, 0))
    bits = arith.select(negative, arith.ori(units, arith.constant(i32, -2**31)), units)
    return arith.select(tiny, arith.bitcast(f32, bits), arith.truncf(f32, wide))
