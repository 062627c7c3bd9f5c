"""Elementwise primitives: NumPy ufuncs on operands that already share one dtype.

Each table row names the primitive, its ufunc (the NumPy implementation and,
in the front end, the source of dtype resolution), its scalar body per
dtype kind ('f' float, 'i' signed int, 'u' unsigned int, 'b' bool, 'h'
float16 where NumPy's half loop is not its float loop; a kind with no body is
rejected by the op's operand rule, as NumPy has no loop for it here) and its
VJP. Float bodies give NumPy's signs of zero exactly (sin, tanh, expm1 and
log1p map +-0 to itself; arctan2 has the sign of y), where IREE's own
expansions would give +0.0.

float16: NumPy's half loops convert each operand to float32, run the float32
loop and round the result to float16, and so do the bodies here
(`_in_float32`), which makes `+ - * / // % sqrt` and the comparisons
bit-exact (float32's results are correctly rounded, and float32 is wide
enough that rounding twice is innocuous). Transcendental functions are not
compiled for float16 (`NO_FLOAT16`): rounded to float16, IREE's float32
approximations can land on a neighbour of NumPy's (libm) float16 result.

VJPs: a rule gives each operand its cotangent at the result's shape; the
table's wrapper sums it back to the operand's shape (broadcasting) and gives
None for int and bool operands. Where the derivative is not unique the rule
picks, exactly:
- maximum/minimum send the cotangent to the operand NumPy returned: `a`
  where `a > b` (`<`) or `a` is NaN, else `b` (ties go to `b`, so
  `np.maximum(x, 0)` has gradient 0 at x == 0);
- absolute uses sign(x), 0 at x == 0;
- sign, floor, ceil and floor_divide are piecewise constant: zero cotangents
  (their derivative wherever it exists); remainder is `a - floor(a / b) * b`;
- power's cotangent for the exponent is `out * log(a)`, taken as 0 at a == 0.
Bitwise and logical ops (int and bool operands only) and comparisons (bool
results) are not differentiable (`bind.NotDifferentiable`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import bind, emit, subnormal, trig
from pyfront.dialects.primitives.base import FpEvents, broadcast_shapes, fp_events, primitive, same_dtype
from pyfront.dialects.primitives.bind import NotDifferentiable, apply, constant
from pyfront.dialects.types import dtype_of, isa, shape_of, tensor_dtype

Body = Callable[..., ir.Value]
F, I, U, B, H = "f", "i", "u", "b", "h"

BOOL = np.dtype(np.bool_)
FLOAT16, FLOAT32 = np.dtype(np.float16), np.dtype(np.float32)


def _kind(dtype: np.dtype) -> str:
    return B if dtype == BOOL else dtype.kind


def _ints(body: Body) -> dict[str, Body]:
    """`body` for signed and unsigned ints: two's complement ops that ignore the sign (add, xor, ...)."""
    return {I: body, U: body}


def _body(bodies: dict[str, Body], dtype: np.dtype, result_bool: bool) -> Body:
    """The scalar body for operands of `dtype`; float16 runs the float32 body unless it has its own."""
    if dtype == FLOAT16 and H not in bodies:
        return _in_float32(bodies[F], result_bool)
    return bodies[H if dtype == FLOAT16 else _kind(dtype)]


def _in_float32(body: Body, result_bool: bool) -> Body:
    """NumPy's float16 loop: the float32 loop on the widened operands, its result rounded to float16."""
    def widened(*operands: ir.Value) -> ir.Value:
        result = body(*(emit.convert(x, FLOAT16, FLOAT32) for x in operands))
        return result if result_bool else emit.convert(result, FLOAT32, FLOAT16)
    return widened


def _exactly_in_float64(body: Body, result_bool: bool) -> Body:
    """NumPy's float32 loop, subnormals included: `body` on the operands read exactly as float64,
    its result rounded once to float32 in software (subnormal.py `EXACT`).

    Equal to float32's own result for the ops of `EXACT_IN_FLOAT64`: + - * / and sqrt
    of float32 operands rounded to float64 (53 bits >= 2 * 24 + 2) and then to float32
    round as float32 does at once (Figueroa, 1995); the others are exact in float64.
    """
    def exact(*operands: ir.Value) -> ir.Value:
        result = body(*(subnormal.widened(x) for x in operands))
        return result if result_bool else subnormal.rounded_to_float32(result)
    return exact


def _c(x: ir.Value, value) -> ir.Value:
    """A scalar constant of x's type."""
    return emit.scalar_constant(value, dtype_of(x.type))


# Float division helpers with NumPy's exact definitions (npy_divmod) -------------


def _float_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    mod = arith.remf(a, b)
    zero = _c(a, 0.0)
    nonzero = arith.cmpf(arith.CmpFPredicate.UNE, mod, zero)
    sign_differs = arith.xori(
        arith.cmpf(arith.CmpFPredicate.OLT, b, zero), arith.cmpf(arith.CmpFPredicate.OLT, mod, zero)
    )
    adjusted = arith.select(arith.andi(nonzero, sign_differs), arith.addf(mod, b), mod)
    signed_zero = math.copysign(zero, b)
    return arith.select(nonzero, adjusted, signed_zero)


def _float_floordiv(a: ir.Value, b: ir.Value) -> ir.Value:
    zero = _c(a, 0.0)
    mod = arith.remf(a, b)
    div = arith.divf(arith.subf(a, mod), b)
    nonzero = arith.cmpf(arith.CmpFPredicate.UNE, mod, zero)
    sign_differs = arith.xori(
        arith.cmpf(arith.CmpFPredicate.OLT, b, zero), arith.cmpf(arith.CmpFPredicate.OLT, mod, zero)
    )
    div = arith.select(arith.andi(nonzero, sign_differs), arith.subf(div, _c(a, 1.0)), div)
    floordiv = math.floor(div)
    round_up = arith.cmpf(arith.CmpFPredicate.OGT, arith.subf(div, floordiv), _c(a, 0.5))
    floordiv = arith.select(round_up, arith.addf(floordiv, _c(a, 1.0)), floordiv)
    div_is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, div, zero)
    floordiv = arith.select(div_is_zero, math.copysign(zero, arith.divf(a, b)), floordiv)
    b_is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, b, zero)
    return arith.select(b_is_zero, arith.divf(a, b), floordiv)


def _marks_flushed(op: Body, rule: Callable[..., ir.Value]) -> Body:
    """`op`'s result, NaN where IREE flushed NumPy's subnormal result to zero (subnormal.py)."""
    return lambda *operands: rule(op(*operands), *operands)


def _float_extremum(pred: str) -> Body:
    # NumPy's maximum/minimum: `a if (a > b or isnan(a)) else b` (`<` for minimum).
    # NaN propagates from either side and ties give b, so maximum(0.0, -0.0) is
    # -0.0 (IEEE maximumf would give +0.0).
    def body(a: ir.Value, b: ir.Value) -> ir.Value:
        take_a = arith.ori(arith.cmpf(getattr(arith.CmpFPredicate, pred), a, b),
                           arith.cmpf(arith.CmpFPredicate.UNO, a, a))
        return arith.select(take_a, a, b)
    return body


def _safe_divisor(b: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(b == 0, b == -1, b with 0 and -1 replaced by 1): a divisor no division can trap on.

    NumPy yields 0 for integer division by zero and MIN for MIN // -1 (with
    warnings the front end turns into guards); x86's idiv traps on both, and
    LLVM's sdiv/srem are undefined there. x % -1 is 0 like x % 1, and x // -1
    is -x (wrapping, as NumPy's MIN // -1 is MIN).
    """
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, _c(b, 0))
    is_minus_one = arith.cmpi(arith.CmpIPredicate.eq, b, _c(b, -1))
    return is_zero, is_minus_one, arith.select(arith.ori(is_zero, is_minus_one), _c(b, 1), b)


def _int_floordiv(a: ir.Value, b: ir.Value) -> ir.Value:
    is_zero, is_minus_one, safe = _safe_divisor(b)
    quotient = arith.select(is_minus_one, arith.subi(_c(a, 0), a), arith.floordivsi(a, safe))
    return arith.select(is_zero, _c(a, 0), quotient)


def _int_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    is_zero, _, safe = _safe_divisor(b)
    rem = arith.remsi(a, safe)
    zero = _c(a, 0)
    adjust = arith.andi(
        arith.cmpi(arith.CmpIPredicate.ne, rem, zero),
        arith.xori(arith.cmpi(arith.CmpIPredicate.slt, rem, zero), arith.cmpi(arith.CmpIPredicate.slt, safe, zero)),
    )
    rem = arith.select(adjust, arith.addi(rem, safe), rem)
    return arith.select(is_zero, zero, rem)


def _uint_floordiv(a: ir.Value, b: ir.Value) -> ir.Value:
    # NumPy gives 0 for division by zero (with a warning the front end guards).
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, _c(b, 0))
    return arith.select(is_zero, _c(a, 0), arith.divui(a, arith.select(is_zero, _c(b, 1), b)))


def _uint_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, _c(b, 0))
    return arith.select(is_zero, _c(a, 0), arith.remui(a, arith.select(is_zero, _c(b, 1), b)))


def _shift(op: Callable[..., ir.Value], beyond: Callable[[ir.Value], ir.Value]) -> Body:
    """NumPy's npy_lshift/npy_rshift: `a op b` for 0 <= b < bits; otherwise (b read as unsigned,
    so negative amounts too) `beyond(a)`, where LLVM's shifts would be poison."""
    def body(a: ir.Value, b: ir.Value) -> ir.Value:
        bits = ir.IntegerType(a.type).width
        within = arith.cmpi(arith.CmpIPredicate.ult, b, _c(b, bits))
        return arith.select(within, op(a, arith.select(within, b, _c(b, 0))), beyond(a))
    return body


def _sign_fill(a: ir.Value) -> ir.Value:
    """A signed right shift by the width or more: -1 for negative a, else 0."""
    return arith.shrsi(a, _c(a, ir.IntegerType(a.type).width - 1))


def _absi(a: ir.Value) -> ir.Value:
    """|a|, wrapping at the minimum as NumPy does; not `math.absi`, which IREE 3.13's SPIR-V
    conversion fails on for int64 ("failed to legalize ... from ('i64') to ('vector<2xi32>')")."""
    return arith.select(arith.cmpi(arith.CmpIPredicate.slt, a, _c(a, 0)), arith.subi(_c(a, 0), a), a)


def _tanh(a: ir.Value) -> ir.Value:
    if not isa(ir.F64Type, a.type):
        return math.tanh(a)
    # IREE's CPU backend has no f64 tanh; expm1 keeps this accurate near 0, and
    # past |x| = 20 tanh is +-1 in double precision.
    e = math.expm1(arith.mulf(_c(a, 2.0), a))
    t = arith.divf(e, arith.addf(e, _c(a, 2.0)))
    big = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(a), _c(a, 20.0))
    return arith.select(big, math.copysign(_c(a, 1.0), a), t)


def _odd_at_zero(f: Body) -> Body:
    """`f` for a function with f(+-0) = +-0 (NumPy keeps the sign of zero).

    IREE's polynomial expansions of these (and the f64 tanh above) compute
    -0.0 as +0.0; returning the operand itself at zero is exact and costs one
    compare and select in the same elementwise body.
    """
    def body(a: ir.Value) -> ir.Value:
        return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, a, _c(a, 0.0)), a, f(a))
    return body


def _atan2(y: ir.Value, x: ir.Value) -> ir.Value:
    # IREE's atan2 gives NaN for (+-0, +-0) and (+-inf, +-inf), and +pi for
    # (-0, x < 0) and (y < 0, -inf). Those pairs have the angles of (+-0, +-1)
    # and (+-1, +-1); and atan2 always has the sign of y, so copysign restores it.
    one = _c(x, 1.0)
    inf = _c(x, float("inf"))
    both_zero = arith.andi(arith.cmpf(arith.CmpFPredicate.OEQ, y, _c(y, 0.0)),
                           arith.cmpf(arith.CmpFPredicate.OEQ, x, _c(x, 0.0)))
    both_inf = arith.andi(arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(y), inf),
                          arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(x), inf))
    x = arith.select(arith.ori(both_zero, both_inf), math.copysign(one, x), x)
    y = arith.select(both_inf, math.copysign(one, y), y)
    return math.copysign(math.atan2(y, x), y)


def _cmp(fpred: str, ipred: str, upred: str) -> dict[str, Body]:
    """Comparison bodies; bools compare as unsigned ints (False < True)."""
    unsigned = lambda a, b: arith.cmpi(getattr(arith.CmpIPredicate, upred), a, b)  # noqa: E731
    return {
        F: lambda a, b: arith.cmpf(getattr(arith.CmpFPredicate, fpred), a, b),
        I: lambda a, b: arith.cmpi(getattr(arith.CmpIPredicate, ipred), a, b),
        U: unsigned,
        B: unsigned,
    }


def _sign_float(a: ir.Value) -> ir.Value:
    zero = _c(a, 0.0)
    pos = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, a, zero), _c(a, 1.0), zero)
    sign = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, zero), _c(a, -1.0), pos)
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, a, a), a, sign)


def _sign_int(a: ir.Value) -> ir.Value:
    zero = _c(a, 0)
    pos = arith.select(arith.cmpi(arith.CmpIPredicate.sgt, a, zero), _c(a, 1), zero)
    return arith.select(arith.cmpi(arith.CmpIPredicate.slt, a, zero), _c(a, -1), pos)


def _sign_uint(a: ir.Value) -> ir.Value:
    return arith.extui(a.type, arith.cmpi(arith.CmpIPredicate.ne, a, _c(a, 0)))


# VJP rules (see the module docstring): cotangents at the result's shape ------


def _differentiable(full: Callable[..., tuple]) -> Callable[..., tuple]:
    """The table's VJP from `full` (cotangents at the result's shape): unbroadcast; None for non-floats."""
    def vjp(ct, out, *operands, **_):
        if not bind.is_differentiable(out):
            return (None,) * len(operands)
        return tuple(bind.unbroadcast(g, bind.shape(x)) for g, x in zip(full(ct, out, *operands), operands))
    return vjp


def _piecewise_constant(ct, out, *operands, **_):
    if not bind.is_differentiable(out):
        return (None,) * len(operands)
    return tuple(bind.zeros_like(x) for x in operands)


def _mul(*xs):
    result = xs[0]
    for x in xs[1:]:
        result = apply("multiply", result, x)
    return result


def _neg(x):
    return apply("negative", x)


def _div(a, b):
    return apply("true_divide", a, b)


def _route(take_a):
    """Cotangents of an elementwise selection: to `a` where `take_a`, else to `b`."""
    def full(ct, out, a, b):
        mask = apply("logical_or", apply(take_a, a, b), apply("not_equal", a, a))
        zero = constant(0, ct)
        return apply("where", mask, ct, zero), apply("where", mask, zero, ct)
    return _differentiable(full)


@_differentiable
def _add(ct, out, a, b):
    return ct, ct


@_differentiable
def _subtract(ct, out, a, b):
    return ct, _neg(ct)


@_differentiable
def _multiply(ct, out, a, b):
    return _mul(ct, b), _mul(ct, a)


@_differentiable
def _true_divide(ct, out, a, b):
    return _div(ct, b), _neg(_div(_mul(ct, out), b))


@_differentiable
def _remainder(ct, out, a, b):
    return ct, _neg(_mul(ct, apply("floor_divide", a, b)))


@_differentiable
def _power(ct, out, a, b):
    one = constant(1, a)
    safe_base = apply("where", apply("equal", a, constant(0, a)), one, a)  # log(a) taken as 0 at a == 0
    return (_mul(ct, b, apply("power", a, apply("subtract", b, one))),
            _mul(ct, out, apply("log", safe_base)))


@_differentiable
def _arctan2(ct, out, a, b):
    norm = apply("add", _mul(a, a), _mul(b, b))
    return _div(_mul(ct, b), norm), _neg(_div(_mul(ct, a), norm))


@_differentiable
def _negative(ct, out, a):
    return (_neg(ct),)


@_differentiable
def _absolute(ct, out, a):
    return (_mul(ct, apply("sign", a)),)


@_differentiable
def _square(ct, out, a):
    return (_mul(ct, a, constant(2, a)),)


@_differentiable
def _exp(ct, out, a):
    return (_mul(ct, out),)


@_differentiable
def _expm1(ct, out, a):
    return (_mul(ct, apply("add", out, constant(1, out))),)


@_differentiable
def _log(ct, out, a):
    return (_div(ct, a),)


@_differentiable
def _log1p(ct, out, a):
    return (_div(ct, apply("add", a, constant(1, a))),)


@_differentiable
def _sqrt(ct, out, a):
    return (_div(ct, _mul(out, constant(2, out))),)


@_differentiable
def _tanh_vjp(ct, out, a):
    return (_mul(ct, apply("subtract", constant(1, out), _mul(out, out))),)


@_differentiable
def _sin(ct, out, a):
    return (_mul(ct, apply("cos", a)),)


@_differentiable
def _cos(ct, out, a):
    return (_neg(_mul(ct, apply("sin", a))),)


# IEEE events each ufunc can raise on float operands (NumPy's RuntimeWarning or FloatingPointError).
OVERFLOW = fp_events("elementwise", "overflow")
INVALID = fp_events("elementwise", "invalid")
OV_INV = fp_events("elementwise", "overflow", "invalid")
DIV_INV = fp_events("elementwise", "divide", "invalid")
ALL3 = fp_events("elementwise", "divide", "overflow", "invalid")

# A NaN or inf operand always gives a NaN or inf result (inf * 0 is NaN), so
# guard-fp-events may check a later value for these instead of their own.
KEEPS_NONFINITE = {"add", "subtract", "multiply", "negative", "absolute", "square", "log", "log1p", "sqrt",
                   "sin", "cos", "floor", "ceil"}

INT_OR_BOOL_ONLY = NotDifferentiable("int and bool operands only")
BOOL_RESULT = NotDifferentiable("bool result")


Rule = Callable[..., tuple]

BINARY: dict[str, tuple[np.ufunc, dict[str, Body], Rule, FpEvents | None]] = {
    "add": (np.add, {F: _marks_flushed(arith.addf, subnormal.sum_of), **_ints(arith.addi), B: arith.ori}, _add, OV_INV),
    "subtract": (np.subtract, {F: _marks_flushed(arith.subf, subnormal.difference), **_ints(arith.subi)},
                 _subtract, OV_INV),
    "multiply": (np.multiply, {F: _marks_flushed(arith.mulf, subnormal.product), **_ints(arith.muli), B: arith.andi},
                 _multiply, OV_INV),
    "true_divide": (np.true_divide, {F: _marks_flushed(arith.divf, subnormal.quotient)}, _true_divide, ALL3),
    "floor_divide": (np.floor_divide, {F: _float_floordiv, I: _int_floordiv, U: _uint_floordiv}, _piecewise_constant,
                     ALL3),
    "remainder": (np.remainder, {F: _float_mod, I: _int_mod, U: _uint_mod}, _remainder, DIV_INV),
    "power": (np.power, {F: math.powf}, _power, ALL3),
    # NumPy's half loops keep `a` on ties (`a >= b`), its float loops give `b`.
    "maximum": (np.maximum, {F: _float_extremum("OGT"), H: _float_extremum("OGE"), I: arith.maxsi, U: arith.maxui,
                             B: arith.ori}, _route("greater"), None),
    "minimum": (np.minimum, {F: _float_extremum("OLT"), H: _float_extremum("OLE"), I: arith.minsi, U: arith.minui,
                             B: arith.andi}, _route("less"), None),
    "arctan2": (np.arctan2, {F: _atan2}, _arctan2, None),
    "bitwise_and": (np.bitwise_and, {**_ints(arith.andi), B: arith.andi}, INT_OR_BOOL_ONLY, None),
    "bitwise_or": (np.bitwise_or, {**_ints(arith.ori), B: arith.ori}, INT_OR_BOOL_ONLY, None),
    "bitwise_xor": (np.bitwise_xor, {**_ints(arith.xori), B: arith.xori}, INT_OR_BOOL_ONLY, None),
    "left_shift": (np.left_shift, _ints(_shift(arith.shli, lambda a: _c(a, 0))), INT_OR_BOOL_ONLY, None),
    "right_shift": (np.right_shift, {I: _shift(arith.shrsi, _sign_fill), U: _shift(arith.shrui, lambda a: _c(a, 0))},
                    INT_OR_BOOL_ONLY, None),
    "logical_and": (np.logical_and, {B: arith.andi}, INT_OR_BOOL_ONLY, None),
    "logical_or": (np.logical_or, {B: arith.ori}, INT_OR_BOOL_ONLY, None),
    "logical_xor": (np.logical_xor, {B: arith.xori}, INT_OR_BOOL_ONLY, None),
}

COMPARE: dict[str, tuple[np.ufunc, dict[str, Body], Rule, FpEvents | None]] = {
    "equal": (np.equal, _cmp("OEQ", "eq", "eq"), BOOL_RESULT, None),
    "not_equal": (np.not_equal, _cmp("UNE", "ne", "ne"), BOOL_RESULT, None),
    "less": (np.less, _cmp("OLT", "slt", "ult"), BOOL_RESULT, None),
    "less_equal": (np.less_equal, _cmp("OLE", "sle", "ule"), BOOL_RESULT, None),
    "greater": (np.greater, _cmp("OGT", "sgt", "ugt"), BOOL_RESULT, None),
    "greater_equal": (np.greater_equal, _cmp("OGE", "sge", "uge"), BOOL_RESULT, None),
}

UNARY: dict[str, tuple[np.ufunc, dict[str, Body], Rule, FpEvents | None]] = {
    "negative": (np.negative, {F: arith.negf, **_ints(lambda a: arith.subi(_c(a, 0), a))}, _negative, None),
    "absolute": (np.absolute, {F: math.absf, I: _absi, U: lambda a: a, B: lambda a: a}, _absolute, None),
    # No bool loop: np.square(bool) computes in int8.
    "square": (np.square, {F: lambda a: subnormal.product(arith.mulf(a, a), a, a), **_ints(lambda a: arith.muli(a, a))},
               _square, OVERFLOW),
    "sign": (np.sign, {F: _sign_float, I: _sign_int, U: _sign_uint}, _piecewise_constant, None),
    "exp": (np.exp, {F: _marks_flushed(math.exp, subnormal.exp)}, _exp, OVERFLOW),
    "expm1": (np.expm1, {F: _odd_at_zero(math.expm1)}, _expm1, OVERFLOW),
    "log": (np.log, {F: math.log}, _log, DIV_INV),
    "log1p": (np.log1p, {F: _odd_at_zero(math.log1p)}, _log1p, DIV_INV),
    "sqrt": (np.sqrt, {F: math.sqrt}, _sqrt, INVALID),
    "tanh": (np.tanh, {F: _odd_at_zero(_tanh)}, _tanh_vjp, None),
    "sin": (np.sin, {F: _odd_at_zero(trig.sin)}, _sin, INVALID),
    "cos": (np.cos, {F: trig.cos}, _cos, INVALID),
    "floor": (np.floor, {F: math.floor, **_ints(lambda a: a)}, _piecewise_constant, None),
    "ceil": (np.ceil, {F: math.ceil, **_ints(lambda a: a)}, _piecewise_constant, None),
    "rint": (np.rint, {F: math.roundeven}, _piecewise_constant, None),  # round half to even, as C's rint
    "logical_not": (np.logical_not, {B: lambda a: arith.xori(a, _c(a, 1))}, INT_OR_BOOL_ONLY, None),
    "invert": (
        np.invert,
        {**_ints(lambda a: arith.xori(a, _c(a, -1))), B: lambda a: arith.xori(a, _c(a, 1))},
        INT_OR_BOOL_ONLY,
        None,
    ),
}


# The float32 ops `_exactly_in_float64` computes as NumPy does (subnormal.EXACT).
EXACT_IN_FLOAT64 = frozenset({"add", "subtract", "multiply", "true_divide", "sqrt", "square", "negative", "absolute",
                              "maximum", "minimum", *COMPARE})

# IREE's CPU backend cannot link these float64 libm functions.
NO_FLOAT64 = {"sin", "cos", "arctan2", "floor_divide", "remainder"}
# IREE approximates these (a few ulps from NumPy's own approximations); the others round exactly.
APPROXIMATE = {"exp", "expm1", "log", "log1p", "tanh", "sin", "cos", "arctan2", "power"}
# float16 results of IREE's float32 approximations (see the module docstring).
NO_FLOAT16 = APPROXIMATE


def _kinds_rule(name: str, bodies: dict[str, Body]) -> Callable[..., str | None]:
    def rule(*dtypes: np.dtype, **_) -> str | None:
        if len(set(dtypes)) > 1:
            return f"operand dtypes differ: {', '.join(map(str, dtypes))}"
        if _kind(dtypes[0]) not in bodies:
            return f"no loop for dtype {dtypes[0]}"
        if name in NO_FLOAT64 and dtypes[0] == np.float64:
            return "float64 needs a libm function IREE's CPU backend cannot link"
        if name in NO_FLOAT16 and dtypes[0] == FLOAT16:
            return ("float16 results of IREE's float32 approximation can differ from NumPy's "
                    "(libm's float32 result rounded to float16) in the last place")
        return None
    return rule


def _lowering(bodies: dict[str, Body], result_bool: bool):
    def lower(view, *operands: ir.Value) -> ir.Value:
        dtype = tensor_dtype(operands[0].type)
        if dtype == FLOAT32 and subnormal.EXACT in view.op.attributes:
            body = _exactly_in_float64(bodies[F], result_bool)
        else:
            body = _body(bodies, dtype, result_bool)
        out_dtype = BOOL if result_bool else dtype
        return emit.elementwise(operands, shape_of(view.result.type), out_dtype, lambda args: body(*args))
    return lower


def _define(table, arity: int, result_bool: bool) -> None:
    for name, (ufunc, bodies, vjp, events) in table.items():
        primitive(
            name,
            f"NumPy `np.{ufunc.__name__}`, elementwise with broadcasting.",
            impl=ufunc,
            shape_rule=broadcast_shapes,
            dtype_rule=(lambda *d, **_: BOOL) if result_bool else same_dtype,
            lower=_lowering(bodies, result_bool),
            arity=arity,
            operand_rule=_kinds_rule(name, bodies),
            vjp=vjp,
            fp_events=events,
            keeps_nonfinite=name in KEEPS_NONFINITE,
            approximate=name in APPROXIMATE,
        )


_define(BINARY, 2, result_bool=False)
_define(COMPARE, 2, result_bool=True)
_define(UNARY, 1, result_bool=False)


def _where_rule(cond: np.dtype, x: np.dtype, y: np.dtype, **_) -> str | None:
    if cond != BOOL:
        return "condition must be bool"
    return None if x == y else f"branch dtypes differ: {x}, {y}"


def _where_vjp(ct, out, cond, x, y):
    """The condition gets None; each branch gets the cotangent where it was chosen."""
    if not bind.is_differentiable(out):
        return None, None, None
    zero = constant(0, ct)
    return (
        None,
        bind.unbroadcast(apply("where", cond, ct, zero), bind.shape(x)),
        bind.unbroadcast(apply("where", cond, zero, ct), bind.shape(y)),
    )


WHERE = primitive(
    "where",
    "NumPy `np.where(cond, x, y)`, elementwise with broadcasting.",
    impl=np.where,
    shape_rule=broadcast_shapes,
    dtype_rule=lambda c, x, y, **_: x,
    lower=lambda view, *ops: emit.elementwise(
        ops, shape_of(view.result.type), tensor_dtype(view.result.type), lambda args: arith.select(*args)
    ),
    arity=3,
    operand_rule=_where_rule,
    vjp=_where_vjp,
)


def _astype_body(x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    converted = emit.convert(x, src, dst)
    if src.kind == "f" and dst == FLOAT32 and dst.itemsize < src.itemsize:
        # IREE flushes what NumPy rounds to a float32 subnormal (float16's conversions do not flush).
        return subnormal.narrowed(converted, x)
    return converted


def _astype_impl(x, dtype: str):
    return np.asarray(x).astype(dtype)


def _astype_vjp(ct, out, x, dtype):
    """A float-to-float cast casts the cotangent back; casts to or from int and bool pass none."""
    if bind.is_differentiable(x) and bind.is_differentiable(out):
        return (apply("astype", ct, dtype=str(bind.dtype(x))),)
    return (None,)


ASTYPE = primitive(
    "astype",
    "NumPy `x.astype(dtype)`: elementwise conversion (bool is `!= 0`, float to int truncates).",
    impl=_astype_impl,
    shape_rule=lambda s, **_: s,
    dtype_rule=lambda d, dtype, **_: np.dtype(dtype),
    lower=lambda view, x: emit.elementwise(
        [x], shape_of(view.result.type), tensor_dtype(view.result.type),
        lambda args: _astype_body(args[0], tensor_dtype(x.type), tensor_dtype(view.result.type))
    ),
    arity=1,
    params=(Attr("dtype", "str", "target NumPy dtype name"),),
    vjp=_astype_vjp,
    fp_events=fp_events("cast", "overflow", "invalid"),  # float to int: invalid; float64 to float32: overflow
    keeps_nonfinite=True,  # float to float (an int result carries no NaN or inf)
)

