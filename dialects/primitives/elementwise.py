"""Elementwise primitives: NumPy ufuncs on operands that already share one dtype.

Each table row names the primitive, its ufunc (the NumPy implementation and,
in the front end, the source of dtype resolution) and its scalar body per
dtype kind: 'f' float, 'i' signed int, 'b' bool. A kind with no body is
rejected by the op's operand rule, as NumPy has no loop for it here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.base import broadcast_shapes, primitive, same_dtype
from pyfront.dialects.types import isa, shape_of, tensor_dtype

Body = Callable[..., ir.Value]
F, I, B = "f", "i", "b"

BOOL = np.dtype(np.bool_)


def _kind(dtype: np.dtype) -> str:
    return B if dtype == BOOL else dtype.kind


def _c(x: ir.Value, value) -> ir.Value:
    """A scalar constant of x's type."""
    t = x.type
    if isa(ir.F32Type, t) or isa(ir.F64Type, t):
        return arith.constant(t, float(value))
    return arith.constant(t, int(value))


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


def _float_extremum(pred: str) -> Body:
    # NumPy's maximum/minimum: `a if (a > b or isnan(a)) else b` (`<` for minimum).
    # NaN propagates from either side and ties give b, so maximum(0.0, -0.0) is
    # -0.0 (IEEE maximumf would give +0.0).
    def body(a: ir.Value, b: ir.Value) -> ir.Value:
        take_a = arith.ori(arith.cmpf(getattr(arith.CmpFPredicate, pred), a, b),
                           arith.cmpf(arith.CmpFPredicate.UNO, a, a))
        return arith.select(take_a, a, b)
    return body


def _safe_divisor(b: ir.Value) -> tuple[ir.Value, ir.Value]:
    # NumPy yields 0 for integer division by zero (with a warning the front end
    # turns into a guard); the divisor is made nonzero so no trap can happen.
    is_zero = arith.cmpi(arith.CmpIPredicate.eq, b, _c(b, 0))
    return is_zero, arith.select(is_zero, _c(b, 1), b)


def _int_floordiv(a: ir.Value, b: ir.Value) -> ir.Value:
    is_zero, safe = _safe_divisor(b)
    return arith.select(is_zero, _c(a, 0), arith.floordivsi(a, safe))


def _int_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    is_zero, safe = _safe_divisor(b)
    rem = arith.remsi(a, safe)
    zero = _c(a, 0)
    adjust = arith.andi(
        arith.cmpi(arith.CmpIPredicate.ne, rem, zero),
        arith.xori(arith.cmpi(arith.CmpIPredicate.slt, rem, zero), arith.cmpi(arith.CmpIPredicate.slt, safe, zero)),
    )
    rem = arith.select(adjust, arith.addi(rem, safe), rem)
    return arith.select(is_zero, zero, rem)


def _tanh(a: ir.Value) -> ir.Value:
    if not isa(ir.F64Type, a.type):
        return math.tanh(a)
    # IREE's CPU backend has no f64 tanh; expm1 keeps this accurate near 0, and
    # past |x| = 20 tanh is +-1 in double precision.
    e = math.expm1(arith.mulf(_c(a, 2.0), a))
    t = arith.divf(e, arith.addf(e, _c(a, 2.0)))
    big = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(a), _c(a, 20.0))
    return arith.select(big, math.copysign(_c(a, 1.0), a), t)


def _cmp(fpred: str, ipred: str, bpred: str) -> dict[str, Body]:
    return {
        F: lambda a, b: arith.cmpf(getattr(arith.CmpFPredicate, fpred), a, b),
        I: lambda a, b: arith.cmpi(getattr(arith.CmpIPredicate, ipred), a, b),
        B: lambda a, b: arith.cmpi(getattr(arith.CmpIPredicate, bpred), a, b),
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


BINARY: dict[str, tuple[np.ufunc, dict[str, Body]]] = {
    "add": (np.add, {F: arith.addf, I: arith.addi, B: arith.ori}),
    "subtract": (np.subtract, {F: arith.subf, I: arith.subi}),
    "multiply": (np.multiply, {F: arith.mulf, I: arith.muli, B: arith.andi}),
    "true_divide": (np.true_divide, {F: arith.divf}),
    "floor_divide": (np.floor_divide, {F: _float_floordiv, I: _int_floordiv}),
    "remainder": (np.remainder, {F: _float_mod, I: _int_mod}),
    "power": (np.power, {F: math.powf}),
    "maximum": (np.maximum, {F: _float_extremum("OGT"), I: arith.maxsi, B: arith.ori}),
    "minimum": (np.minimum, {F: _float_extremum("OLT"), I: arith.minsi, B: arith.andi}),
    "arctan2": (np.arctan2, {F: math.atan2}),
    "bitwise_and": (np.bitwise_and, {I: arith.andi, B: arith.andi}),
    "bitwise_or": (np.bitwise_or, {I: arith.ori, B: arith.ori}),
    "bitwise_xor": (np.bitwise_xor, {I: arith.xori, B: arith.xori}),
    "logical_and": (np.logical_and, {B: arith.andi}),
    "logical_or": (np.logical_or, {B: arith.ori}),
    "logical_xor": (np.logical_xor, {B: arith.xori}),
}

COMPARE: dict[str, tuple[np.ufunc, dict[str, Body]]] = {
    "equal": (np.equal, _cmp("OEQ", "eq", "eq")),
    "not_equal": (np.not_equal, _cmp("UNE", "ne", "ne")),
    "less": (np.less, _cmp("OLT", "slt", "ult")),
    "less_equal": (np.less_equal, _cmp("OLE", "sle", "ule")),
    "greater": (np.greater, _cmp("OGT", "sgt", "ugt")),
    "greater_equal": (np.greater_equal, _cmp("OGE", "sge", "uge")),
}

UNARY: dict[str, tuple[np.ufunc, dict[str, Body]]] = {
    "negative": (np.negative, {F: arith.negf, I: lambda a: arith.subi(_c(a, 0), a)}),
    "absolute": (np.absolute, {F: math.absf, I: math.absi, B: lambda a: a}),
    # No bool loop: np.square(bool) computes in int8.
    "square": (np.square, {F: lambda a: arith.mulf(a, a), I: lambda a: arith.muli(a, a)}),
    "sign": (np.sign, {F: _sign_float, I: _sign_int}),
    "exp": (np.exp, {F: math.exp}),
    "expm1": (np.expm1, {F: math.expm1}),
    "log": (np.log, {F: math.log}),
    "log1p": (np.log1p, {F: math.log1p}),
    "sqrt": (np.sqrt, {F: math.sqrt}),
    "tanh": (np.tanh, {F: _tanh}),
    "sin": (np.sin, {F: math.sin}),
    "cos": (np.cos, {F: math.cos}),
    "floor": (np.floor, {F: math.floor, I: lambda a: a}),
    "ceil": (np.ceil, {F: math.ceil, I: lambda a: a}),
    "logical_not": (np.logical_not, {B: lambda a: arith.xori(a, _c(a, 1))}),
    "invert": (np.invert, {I: lambda a: arith.xori(a, _c(a, -1)), B: lambda a: arith.xori(a, _c(a, 1))}),
}


# IREE's CPU backend cannot link these float64 libm functions.
NO_FLOAT64 = {"sin", "cos", "arctan2", "floor_divide", "remainder"}


def _kinds_rule(name: str, bodies: dict[str, Body]) -> Callable[..., str | None]:
    def rule(*dtypes: np.dtype, **_) -> str | None:
        if len(set(dtypes)) > 1:
            return f"operand dtypes differ: {', '.join(map(str, dtypes))}"
        if _kind(dtypes[0]) not in bodies:
            return f"no loop for dtype {dtypes[0]}"
        if name in NO_FLOAT64 and dtypes[0] == np.float64:
            return "float64 needs a libm function IREE's CPU backend cannot link"
        return None
    return rule


def _lowering(bodies: dict[str, Body], result_bool: bool):
    def lower(view, *operands: ir.Value) -> ir.Value:
        dtype = tensor_dtype(operands[0].type)
        body = bodies[_kind(dtype)]
        out_dtype = BOOL if result_bool else dtype
        return emit.elementwise(operands, shape_of(view.result.type), out_dtype, lambda args: body(*args))
    return lower


def _define(table, arity: int, result_bool: bool) -> None:
    for name, (ufunc, bodies) in table.items():
        primitive(
            name,
            f"NumPy `np.{ufunc.__name__}`, elementwise with broadcasting.",
            impl=ufunc,
            shape_rule=broadcast_shapes,
            dtype_rule=(lambda *d, **_: BOOL) if result_bool else same_dtype,
            lower=_lowering(bodies, result_bool),
            arity=arity,
            operand_rule=_kinds_rule(name, bodies),
        )


_define(BINARY, 2, result_bool=False)
_define(COMPARE, 2, result_bool=True)
_define(UNARY, 1, result_bool=False)


def _where_rule(cond: np.dtype, x: np.dtype, y: np.dtype, **_) -> str | None:
    if cond != BOOL:
        return "condition must be bool"
    return None if x == y else f"branch dtypes differ: {x}, {y}"


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
)


def _astype_impl(x, dtype: str):
    return np.asarray(x).astype(dtype)


ASTYPE = primitive(
    "astype",
    "NumPy `x.astype(dtype)`: elementwise conversion (bool is `!= 0`, float to int truncates).",
    impl=_astype_impl,
    shape_rule=lambda s, **_: s,
    dtype_rule=lambda d, dtype, **_: np.dtype(dtype),
    lower=lambda view, x: emit.elementwise(
        [x], shape_of(view.result.type), tensor_dtype(view.result.type), lambda args: emit.convert(args[0], tensor_dtype(x.type), tensor_dtype(view.result.type))
    ),
    arity=1,
    params=(Attr("dtype", "str", "target NumPy dtype name"),),
)

