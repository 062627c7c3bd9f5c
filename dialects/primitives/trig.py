"""float32 sin and cos with the argument reduced in float64 (the `sin`/`cos` bodies of elementwise.py).

IREE's float32 `math.sin`/`math.cos` reduce the argument by pi/2 in float32:
their absolute error grows like 2.8e-8 * |x| (measured against NumPy over a
log-spaced sweep: 9.5e-7 at |x| ~ 30, 8.8e-5 at 3e3, 0.28 at 1e7; sin(1e10)
gave -6e21, and inf from |x| ~ 1e11). NumPy's are within a few ulp at any x.

Here x is reduced in float64: k = round(x * 2/pi) and r = x - k * pi/2 with
pi/2 split in three parts (Cody-Waite; the first two have 30 significant bits,
so k * part is exact for k < 2**23), then sin and cos of r (|r| <= pi/4) by
their Taylor series in float64, picked and negated by k mod 4, and rounded
once to float32. (IREE's float32 sin has an absolute error of ~1.8e-7 even
for small x: 1.5e-4 relative at x = 1e-3.) Measured against float64 sin/cos
over 4e5 log-spaced |x| in [1e-6, 4.1e6] and near multiples of pi/2: at most
0.5 ulp of the result (NumPy: 1.4 ulp), and 3.5 ms for sin and cos of those
4e5 values (NumPy 5 ms). For |x| >= LIMIT = 2**22 the result is NaN, which
guard-fp-events reports as an invalid value, so the call deopts to NumPy
(as it does for +-inf, whose sin NumPy also reports invalid).
float64 sin/cos do not reach here: IREE's CPU backend cannot link them
(elementwise.py NO_FLOAT64).
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial, frexp

from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.types import isa

# pi to 50 digits (~166 bits): enough for three float64 parts of pi/2.
_PI = Fraction("3.14159265358979323846264338327950288419716939937510")
LIMIT = 2.0**22


def _split(value: Fraction, parts: int, bits: int) -> list[float]:
    """`value` as a sum of floats, each but the last rounded down to `bits` significant bits."""
    out = []
    for _ in range(parts - 1):
        scale = Fraction(2) ** (bits - frexp(float(value))[1])
        head = Fraction(int(value * scale)) / scale  # truncated: `bits` bits, exact in a float
        out.append(float(head))
        value -= head
    return out + [float(value)]


_HALF_PI = _split(_PI / 2, 3, 30)
_TWO_OVER_PI = float(2 / _PI)


def _f64(x: ir.Value, value: float) -> ir.Value:
    return arith.constant(x.type, value)


# Taylor coefficients in r**2 of sin(r)/r and cos(r), to r**14 and r**16: for |r| <= pi/4
# the truncation errors are below 3e-14 and 2e-15, far below float32's rounding.
_SIN = [(-1) ** n / factorial(2 * n + 1) for n in range(8)]
_COS = [(-1) ** n / factorial(2 * n) for n in range(9)]


def _series(r2: ir.Value, coefficients: list[float]) -> ir.Value:
    """sum(c * r2**n): Horner's rule in float64."""
    acc = _f64(r2, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = arith.addf(arith.mulf(acc, r2), _f64(r2, c))
    return acc


def _reduced(x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """For a float32 x: (r in float64, the quadrant k mod 4 as float64, |x| < LIMIT)."""
    f64 = ir.F64Type.get()
    wide = arith.extf(f64, x)
    k = math.floor(arith.addf(arith.mulf(wide, _f64(wide, _TWO_OVER_PI)), _f64(wide, 0.5)))
    r = wide
    for part in _HALF_PI:
        r = arith.subf(r, arith.mulf(k, _f64(wide, part)))
    quarter = math.floor(arith.mulf(k, _f64(wide, 0.25)))
    quadrant = arith.subf(k, arith.mulf(quarter, _f64(wide, 4.0)))  # 0, 1, 2 or 3, exactly
    in_range = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(wide), _f64(wide, LIMIT))
    return r, quadrant, in_range


def _quadrant_is(quadrant: ir.Value, *values: float) -> ir.Value:
    hits = [arith.cmpf(arith.CmpFPredicate.OEQ, quadrant, _f64(quadrant, v)) for v in values]
    return hits[0] if len(hits) == 1 else arith.ori(*hits)


def _trig(x: ir.Value, cosine: bool) -> ir.Value:
    if not isa(ir.F32Type, x.type):
        raise TypeError(f"float32 sin/cos only, not {x.type}")
    r, quadrant, in_range = _reduced(x)
    r2 = arith.mulf(r, r)
    s, c = arith.mulf(r, _series(r2, _SIN)), _series(r2, _COS)
    odd = _quadrant_is(quadrant, 1.0, 3.0)
    # sin(x) is sin r, cos r, -sin r, -cos r in quadrants 0..3; cos(x) is cos r, -sin r, -cos r, sin r.
    value = arith.select(odd, s, c) if cosine else arith.select(odd, c, s)
    negative = _quadrant_is(quadrant, 1.0, 2.0) if cosine else _quadrant_is(quadrant, 2.0, 3.0)
    value = arith.select(negative, arith.negf(value), value)
    # NaN and +-inf operands fail `in_range` and give NaN, as in NumPy.
    return arith.truncf(x.type, arith.select(in_range, value, _f64(value, float("nan"))))


def sin(x: ir.Value) -> ir.Value:
    return _trig(x, cosine=False)


def cos(x: ir.Value) -> ir.Value:
    return _trig(x, cosine=True)
