"""Reduction primitives over a static set of axes (`axes`, `keepdims` attributes).

Reduced axes may be dynamic: a dynamic dim is >= 2 at call time (see
base.py), so it is never empty; `mean` divides by the count at run time.

The front end normalizes NumPy's `axis` argument (None, negative, tuple) to a
sorted tuple of non-negative axes and casts the operand to the accumulation
dtype NumPy uses (e.g. int32 sums accumulate in int64), so each reduction here
accumulates in its operand dtype.

VJPs (float operands; None for int and bool): sum broadcasts the cotangent
back; mean also divides by the count; prod gives each element the product of
the others (exact with zeros: where a reduced slice holds one zero, only that
element gets a cotangent; with two or more, none does); max and min share
the cotangent equally among the elements equal to the result (NaN elements
when the result is NaN). argmax/argmin have int64 results: not differentiable.

Signed zeros in max/min: where a float slice's extreme is zero and the slice
holds both +0.0 and -0.0, NumPy's sign depends on element order and its SIMD
lanes, which compiled code does not reproduce. `zero_signs_agree` is the
check the front end guards on (pyfront/semantics.py `reduce`): false exactly
when some slice is such a tie. It ORs a per-element code over each slice in a
reduction of its own: sharing max's reduction (a two-result generic merged by
CSE) measured slower on softmax (+10-12% vs +7-8% for 256x1000 float32), as
the two-result reduction no longer fuses with max's elementwise readers.
"""

from __future__ import annotations

import functools

import numpy as np
from pyfront.dialects.mlir import arith, ir, linalg, math
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import bind, emit, subnormal
from pyfront.dialects.primitives.base import float16_accumulation, fp_events, primitive, same_dtype
from pyfront.dialects.primitives.bind import NotDifferentiable, apply, constant
from pyfront.dialects.types import element_type, shape_of, tensor_dtype

PARAMS = (
    Attr("axes", "i64s", "reduced axes, sorted and non-negative"),
    Attr("keepdims", "bool", "keep reduced axes with size 1"),
)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
FLOAT32 = np.dtype(np.float32)


def reduced_shape(shape, *, axes, keepdims, nonempty: bool = False):
    if any(not 0 <= a < len(shape) for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"axes {tuple(axes)} out of range for rank {len(shape)}")
    if nonempty and any(shape[a] == 0 for a in axes):
        raise ValueError("zero-size array to reduction operation which has no identity")
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _identity(kind: str, dtype: np.dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype == BOOL:
        return kind == "min"
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _combine(kind: str, dtype: np.dtype):
    f = dtype.kind == "f"
    if dtype == BOOL:
        return {"sum": arith.ori, "prod": arith.andi, "max": arith.ori, "min": arith.andi}[kind]
    return {
        "sum": arith.addf if f else arith.addi,
        "prod": arith.mulf if f else arith.muli,
        "max": arith.maximumf if f else arith.maxui if dtype.kind == "u" else arith.maxsi,
        "min": arith.minimumf if f else arith.minui if dtype.kind == "u" else arith.minsi,
    }[kind]


def _reduce(x: ir.Value, kind: str, axes, keepdims: bool) -> ir.Value:
    dtype = tensor_dtype(x.type)
    out_sizes = reduced_shape(emit.dims(x), axes=axes, keepdims=False)
    if kind == "sum" and dtype == FLOAT32:
        out = _float32_sum(x, axes, out_sizes)
    else:
        combine = _combine(kind, dtype)
        fold = lambda a: combine(a[0], a[1])  # (element or lane, accumulator)
        (out,) = _reduced(x, axes, out_sizes, [(_identity(kind, dtype), dtype)], fold, fold)
    return _keepdims(out, x, axes) if keepdims else out


def _float32_sum(x: ir.Value, axes, out_sizes) -> ir.Value:
    """A float32 sum accumulated in float64 and rounded once; +inf where NumPy's could overflow.

    IREE reduces in loop order, one float32 addition after another: 10**6
    times 0.1 came out 0.96% off. NumPy sums pairwise (blocks of 128 in 8
    lanes): relative error at most ~(16 + log2(n / 128)) ulp, measured
    1.2e-7 for 10**3..10**7 times 0.1. Accumulated in float64, the error of n
    float32 terms is below n * 2**-53 before the final rounding, so the result
    is float32's correctly rounded sum for n up to ~2**29: measured error 0
    (NumPy: 1.2e-7) for 10**3..10**7 times 0.1, and 0 for 10**6 uniform
    [0, 1) values (NumPy 0; loop order 4.3e-6).

    Speed (2-core AMD EPYC, cpu-sync, medians, noisy shared machine): float32
    sum of 10**6 values 1.4-1.45 ms -> 1.5-1.75 ms (NumPy 0.15 ms); softmax
    256x1000 0.44-0.46 -> 0.63-0.65 ms; gelu+layernorm 256x1024 0.52-0.58 ->
    0.71-0.80 ms. IREE keeps each reduction a sequential chain (hence 0.96%),
    now in float64. Long rows of a matrix are summed in lanes (`_reduced`:
    256x1024 GELU + layer norm 1.5-1.9 -> 1.1-1.3 ms on an Intel host); a whole
    array split the same way, (n/8, 8) reduced over its first axis, took 8.5 ms
    for 10**6 values, so full sums stay one chain. Checking each term for
    overflow instead of accumulating sum |x| was no faster.

    Overflow: NumPy's float32 partial sums can overflow (a RuntimeWarning and
    an inf) where float64's cannot, and later terms can cancel it. A partial
    sum of NumPy's is at most the sum of |x| (times 1 + 1e-5), so where that
    exceeds half float32's max (and the terms are finite) the result is +inf:
    guard-fp-events sees an overflow and the call deopts to NumPy (needlessly,
    at worst). A sum that rounds to a float32 subnormal is NaN (subnormal.py:
    IREE would flush it to zero).
    """
    f64 = np.dtype(np.float64)
    t64 = element_type(f64)

    def accumulate(a):
        value, total, magnitude = a
        wide = arith.extf(t64, value)
        return [arith.addf(total, wide), arith.addf(magnitude, math.absf(wide))]

    total, magnitude = _reduced(x, axes, out_sizes, [(0, f64), (0, f64)], accumulate,
                                lambda a: [arith.addf(a[2], a[0]), arith.addf(a[3], a[1])])
    limit = float(np.finfo(np.float32).max) / 2

    def rounded(a):
        total, magnitude = a
        # Non-finite terms make `total` inf or NaN themselves (as in NumPy): left as they are.
        finite = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(total), arith.constant(t64, np.inf))
        may_overflow = arith.andi(finite, arith.cmpf(arith.CmpFPredicate.OGT, magnitude, arith.constant(t64, limit)))
        return arith.select(may_overflow, arith.constant(t64, np.inf), total)

    def body(a):
        wide = rounded(a)
        return subnormal.narrowed(arith.truncf(element_type(FLOAT32), wide), wide)

    return emit.elementwise([total, magnitude], emit.static_shape(out_sizes), FLOAT32, body)


# A reduction of long rows (the last axis only, at least SPLIT_MIN elements, static) is made
# in lanes: the row viewed as (n / lanes, lanes) with `lanes` the first of LANES dividing n,
# reduced over the n / lanes into `lanes` partial results, which are then reduced. IREE keeps
# a reduction one chain of dependent operations in loop order (a 256x1024 float32 row sum
# took ~230 us, a 256x1000 row max ~90 us); in lanes each step combines a contiguous vector.
# The order changes only what is rounded: sums and products are approximate primitives,
# max/min/or/and and integer arithmetic are exact in any order.
LANES = (16, 8)
SPLIT_MIN = 128


def _lanes(x: ir.Value, axes) -> int | None:
    """The lanes in which to reduce `x` over `axes`, or None: not a long static row."""
    shape = shape_of(x.type)
    n = shape[-1] if shape else None
    if len(shape) < 2 or tuple(axes) != (len(shape) - 1,) or n is None or n < SPLIT_MIN:
        return None
    return next((lanes for lanes in LANES if n % lanes == 0), None)


def _reduced(x: ir.Value, axes, out_sizes, identities, accumulate, merge) -> list[ir.Value]:
    """`x` reduced over `axes` into one result per (identity, dtype) of `identities`, each element
    folded in by `accumulate(element, *accumulators)`; in lanes where `_lanes` says so, the lanes'
    results then folded by `merge(*lane results, *accumulators)`."""
    lanes = _lanes(x, axes)
    if lanes is None:
        return emit.reduction(x, axes, _inits(identities, out_sizes), accumulate)
    *rows, n = emit.dims(x)
    split = emit.reshape(x, [*rows, n // lanes, lanes])
    partial = emit.reduction(split, [len(rows)], _inits(identities, [*out_sizes, lanes]), accumulate)
    rank = len(rows) + 1
    lane_map, row_map = emit.projection_map(rank, range(rank)), emit.projection_map(rank, range(rank - 1))
    return emit.generic(partial, [lane_map] * len(partial), _inits(identities, out_sizes), [row_map] * len(partial),
                        [emit.PARALLEL] * (rank - 1) + [emit.REDUCTION], merge)


def _inits(identities, sizes) -> list[ir.Value]:
    """A filled tensor of `sizes` per (identity, dtype); equal ones are one tensor."""
    made = {}
    for value, dtype in identities:
        if (value, dtype) not in made:
            made[value, dtype] = emit.fill(value, sizes, dtype)
    return [made[value, dtype] for value, dtype in identities]


def _keepdims(out: ir.Value, x: ir.Value, axes) -> ir.Value:
    """`out`, reduced from `x` over `axes`, reshaped to keep those axes with size 1."""
    return emit.reshape(out, reduced_shape(emit.dims(x), axes=axes, keepdims=True))


def _kept(ct, axes, keepdims: bool):
    """A reduction's cotangent (or result) with the reduced axes kept as size 1."""
    return ct if keepdims else bind.expand_dims(ct, axes)


def _float_only(rule):
    def vjp(ct, out, x, *, axes, keepdims):
        return (rule(ct, out, x, axes, keepdims) if bind.is_differentiable(x) else None,)
    return vjp


@_float_only
def _sum_vjp(ct, out, x, axes, keepdims):
    return bind.broadcast_like(_kept(ct, axes, keepdims), x)


@_float_only
def _prod_vjp(ct, out, x, axes, keepdims):
    zero = constant(0, x)
    is_zero = apply("equal", x, zero)
    nonzero = apply("where", is_zero, constant(1, x), x)
    prod_nonzero = apply("prod", nonzero, axes=axes, keepdims=True)
    zeros = apply("sum", apply("astype", is_zero, dtype=str(bind.dtype(x))), axes=axes, keepdims=True)
    others = apply(
        "where",
        is_zero,
        apply("where", apply("equal", zeros, constant(1, x)), prod_nonzero, zero),
        apply("where", apply("equal", zeros, zero), apply("true_divide", prod_nonzero, nonzero), zero),
    )
    return apply("multiply", _kept(ct, axes, keepdims), others)


@_float_only
def _extremum_vjp(ct, out, x, axes, keepdims):
    hit = apply("logical_or", apply("equal", x, _kept(out, axes, keepdims)), apply("not_equal", x, x))
    count = apply("sum", apply("astype", hit, dtype=str(bind.dtype(x))), axes=axes, keepdims=True)
    share = apply("true_divide", _kept(ct, axes, keepdims), count)
    return apply("where", hit, share, constant(0, x))


# sum/prod/mean overflow (or meet inf - inf, 0 * inf); max/min only propagate NaN.
ACCUMULATES = fp_events("nonfinite", "overflow", "invalid")


def _define(kind: str, impl, nonempty: bool, vjp, events=None) -> None:
    primitive(
        kind,
        f"NumPy `np.{kind}(x, axis, keepdims=...)` accumulating in the operand dtype.",
        impl=lambda x, axes, keepdims: impl(x, axis=tuple(axes), keepdims=keepdims),
        shape_rule=lambda s, axes, keepdims: reduced_shape(s, axes=axes, keepdims=keepdims, nonempty=nonempty),
        dtype_rule=same_dtype,
        lower=lambda view, x: _reduce(x, kind, view.axes, view.keepdims),
        arity=1,
        params=PARAMS,
        operand_rule=float16_accumulation if kind in ("sum", "prod") else None,
        vjp=vjp,
        fp_events=events,
        keeps_nonfinite=events is not None,  # a NaN or inf term makes a NaN or inf sum/product
        approximate=events is not None,  # sums and products, accumulated in another order than NumPy's
    )


# NumPy would accumulate small ints and bools in int64; here the operand dtype is the accumulator.
_define("sum", lambda x, **kw: np.sum(x, dtype=np.asarray(x).dtype, **kw), nonempty=False, vjp=_sum_vjp,
        events=ACCUMULATES)
_define("prod", lambda x, **kw: np.prod(x, dtype=np.asarray(x).dtype, **kw), nonempty=False, vjp=_prod_vjp,
        events=ACCUMULATES)
_define("max", np.max, nonempty=True, vjp=_extremum_vjp)
_define("min", np.min, nonempty=True, vjp=_extremum_vjp)


def _zero_signs_agree(x: np.ndarray, kind: str, axes) -> np.ndarray:
    """NumPy reference: no slice over `axes` has a zero extreme while holding both +0.0 and -0.0."""
    x = np.asarray(x)
    axes = tuple(axes)
    zero = x == 0
    negative = (zero & np.signbit(x)).any(axis=axes)
    positive = (zero & ~np.signbit(x)).any(axis=axes)
    extreme_is_zero = getattr(np, kind)(x, axis=axes) == 0
    return np.asarray(not (extreme_is_zero & negative & positive).any())


def _scalar_check_shape(shape, *, kind, axes):
    reduced_shape(shape, axes=axes, keepdims=False, nonempty=True)  # raises where max/min would
    return ()


# Bits of the per-element code `zero_signs_agree` ORs over each slice. A slice's
# max is a zero holding both signs iff its code is exactly both zero bits: no
# element beyond zero (above it for max, below for min) and no NaN.
NEGATIVE_ZERO, POSITIVE_ZERO, BEYOND_ZERO = 1, 2, 4
TIE = NEGATIVE_ZERO | POSITIVE_ZERO


def _lower_zero_signs_agree(view, x: ir.Value) -> ir.Value:
    # 32-bit codes and no bitcast: IREE's SPIR-V (Vulkan) target cannot bitcast f64 to i64.
    bits, code_dtype = ir.IntegerType.get_signless(32), np.dtype(np.int32)
    out_sizes = reduced_shape(emit.dims(x), axes=view.axes, keepdims=False)
    beyond = arith.CmpFPredicate.UGT if view.kind == "max" else arith.CmpFPredicate.ULT  # U: NaN counts

    def code(a):
        value, seen = a
        c = functools.partial(arith.constant, bits)
        zero = arith.constant(value.type, 0.0)
        # The sign of a zero: 1 / -0.0 is -inf. Only read where value == 0.
        negative = arith.cmpf(arith.CmpFPredicate.OLT, arith.divf(arith.constant(value.type, 1.0), value), zero)
        zero_code = arith.select(negative, c(NEGATIVE_ZERO), c(POSITIVE_ZERO))
        other = arith.select(arith.cmpf(beyond, value, zero), c(BEYOND_ZERO), c(0))
        this = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, value, zero), zero_code, other)
        return arith.ori(this, seen)

    (codes,) = _reduced(x, view.axes, out_sizes, [(0, code_dtype)], code, lambda a: arith.ori(a[0], a[1]))
    rank = len(out_sizes)

    def agree(a):
        slice_code, held = a
        return arith.andi(held, arith.cmpi(arith.CmpIPredicate.ne, slice_code, arith.constant(bits, TIE)))

    (held,) = emit.generic([codes], [emit.projection_map(rank, range(rank))], [emit.fill(True, [], BOOL)],
                           [emit.scalar_map(rank)], [emit.REDUCTION] * rank, agree)
    return held


primitive(
    "zero_signs_agree",
    "Whether no slice of float `np.<kind>(x, axis)` is a zero while holding both +0.0 and -0.0 (a 0-d bool).",
    impl=_zero_signs_agree,
    shape_rule=_scalar_check_shape,
    dtype_rule=lambda d, **_: BOOL,
    lower=_lower_zero_signs_agree,
    arity=1,
    params=(Attr("kind", "str", "max or min"), Attr("axes", "i64s", "reduced axes, sorted and non-negative")),
    operand_rule=lambda d, kind, **_: (None if d.kind == "f" and kind in ("max", "min")
                                       else "zero_signs_agree needs a float operand and kind max or min"),
    vjp=NotDifferentiable("a guard's condition"),
)


def _lower_mean(view, x: ir.Value) -> ir.Value:
    dtype = tensor_dtype(x.type)
    total = _reduce(x, "sum", view.axes, view.keepdims)
    count = emit.size_as(emit.product([emit.dim(x, a) for a in view.axes]), dtype)
    return emit.elementwise([total], shape_of(total.type), dtype,
                            lambda a: subnormal.quotient(arith.divf(a[0], count), a[0], count))


@_float_only
def _mean_vjp(ct, out, x, axes, keepdims):
    sizes = [bind.shape(x)[a] for a in axes]
    if None in sizes:
        count = apply("sum", bind.ones_like(x), axes=axes, keepdims=True)
    else:
        count = constant(np.prod(sizes, dtype=np.int64), x)
    return bind.broadcast_like(apply("true_divide", _kept(ct, axes, keepdims), count), x)


MEAN = primitive(
    "mean",
    "NumPy `np.mean(x, axis, keepdims=...)` for float operands: the sum divided by the count.",
    impl=lambda x, axes, keepdims: np.mean(x, axis=tuple(axes), keepdims=keepdims),
    shape_rule=lambda s, axes, keepdims: reduced_shape(s, axes=axes, keepdims=keepdims),
    dtype_rule=same_dtype,
    lower=_lower_mean,
    arity=1,
    params=PARAMS,
    operand_rule=lambda d, **_: float16_accumulation(d) if d.kind == "f" else "mean needs a float operand",
    vjp=_mean_vjp,
    fp_events=ACCUMULATES,
    keeps_nonfinite=True,
    approximate=True,
)


def _lower_arg(view, x: ir.Value, kind: str) -> ir.Value:
    """First index of the max (min) along one axis; a NaN wins, as in NumPy."""
    dtype = tensor_dtype(x.type)
    (axis,) = view.axes
    out_shape = reduced_shape(emit.dims(x), axes=(axis,), keepdims=False)
    best = emit.fill(_identity("max" if kind == "argmax" else "min", dtype), out_shape, dtype)
    index = emit.fill(-1, out_shape, INT64)

    def body(a):
        value, best_value, best_index = a
        i = arith.index_cast(ir.IntegerType.get_signless(64), _linalg_index(axis))
        if dtype.kind == "f":
            pred = arith.CmpFPredicate.OGT if kind == "argmax" else arith.CmpFPredicate.OLT
            better = arith.cmpf(pred, value, best_value)
            value_nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
            best_nan = arith.cmpf(arith.CmpFPredicate.UNO, best_value, best_value)
            better = arith.ori(better, arith.andi(value_nan, arith.xori(best_nan, _true())))
        else:
            signed = dtype.kind == "i"
            pred = ("sgt" if signed else "ugt") if kind == "argmax" else ("slt" if signed else "ult")
            better = arith.cmpi(getattr(arith.CmpIPredicate, pred), value, best_value)
        first = arith.cmpi(arith.CmpIPredicate.slt, best_index, arith.constant(best_index.type, 0))
        take = arith.ori(better, first)
        return [arith.select(take, value, best_value), arith.select(take, i, best_index)]

    _, out = emit.reduction(x, (axis,), [best, index], body)
    return _keepdims(out, x, (axis,)) if view.keepdims else out


def _true() -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(1), 1)


def _linalg_index(dim: int) -> ir.Value:
    return linalg.IndexOp(dim).result


def _define_arg(kind: str) -> None:
    primitive(
        kind,
        f"NumPy `np.{kind}(x, axis, keepdims=...)` along exactly one axis; int64 indices.",
        impl=lambda x, axes, keepdims: getattr(np, kind)(x, axis=axes[0], keepdims=keepdims),
        shape_rule=lambda s, axes, keepdims: reduced_shape(s, axes=axes, keepdims=keepdims, nonempty=True),
        dtype_rule=lambda d, **_: INT64,
        lower=lambda view, x: _lower_arg(view, x, kind),
        arity=1,
        params=PARAMS,
        operand_rule=lambda d, axes, **_: None if len(axes) == 1 else f"{kind} reduces exactly one axis",
        vjp=NotDifferentiable("int64 index result"),
    )


_define_arg("argmax")
_define_arg("argmin")
