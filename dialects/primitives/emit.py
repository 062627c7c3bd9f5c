"""Builders for the linalg/tensor/arith/math IR that primitives lower to.

Each helper builds at the current insertion point and location. Element types
are described by NumPy dtypes so that semantics (signed ints, bool as i1,
NaN-propagating max) are decided in one place.

Dynamic dims. A result size is a `Size`: a Python int for a static dim, or an
`index` value (from `tensor.dim` of an operand, or computed from such) for a
dynamic one; helpers that make tensors (`empty`, `fill`, `elementwise`,
`reshape`) take lists of sizes. The runtime guarantees every dynamic dim is
>= 2 at call time (sizes 0 and 1 get static variants of their own), so a
dynamic dim is never broadcast and never empty: `elementwise` takes the size
of a dynamic result dim from any operand that is dynamic there. Dynamic dims
that meet (broadcasting, contraction, concatenation) are assumed equal; the
front end guards that with `dims_equal`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce

import numpy as np
from pyfront.dialects.mlir import arith, ir, linalg, math, tensor
from pyfront.dialects.types import as_signless_int, element_type, shape_of, signed_twin, tensor_dtype, tensor_type

PARALLEL = "#linalg.iterator_type<parallel>"
REDUCTION = "#linalg.iterator_type<reduction>"

ScalarBody = Callable[[list[ir.Value]], ir.Value | list[ir.Value]]
Size = int | ir.Value  # a static size, or an `index` value for a dynamic dim


def as_value(x) -> ir.Value:
    """The single result of what a bindings builder returned (a value, an op or a result list)."""
    if isinstance(x, ir.Value):
        return x
    results = list(x) if isinstance(x, ir.OpResultList) else list(x.results)
    (value,) = results
    return value


def _map(n_dims: int, exprs: Sequence[ir.AffineExpr]) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(n_dims, 0, list(exprs)))


# Sizes -----------------------------------------------------------------------


def index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def dim(x: ir.Value, i: int) -> Size:
    """Size of dim `i` of tensor `x`: an int if static, else a `tensor.dim`."""
    shape = shape_of(x.type)
    return tensor.dim(x, index(i % len(shape))) if shape[i] is None else shape[i]


def dims(x: ir.Value) -> list[Size]:
    return [dim(x, i) for i in range(len(shape_of(x.type)))]


def static_shape(sizes: Sequence[Size]) -> tuple[int | None, ...]:
    """The type-level shape of `sizes`: None where the size is a runtime value."""
    return tuple(None if isinstance(s, ir.Value) else int(s) for s in sizes)


def as_index(size: Size) -> ir.Value:
    return size if isinstance(size, ir.Value) else index(size)


def product(sizes: Sequence[Size]) -> Size:
    """The product of `sizes`: an int when all are static."""
    static = int(np.prod([s for s in sizes if not isinstance(s, ir.Value)], dtype=np.int64))
    dynamic = [s for s in sizes if isinstance(s, ir.Value)]
    return reduce(arith.muli, dynamic, index(static)) if dynamic else static


def mixed(sizes: Sequence[Size]) -> tuple[list[ir.Value], list[int]]:
    """`sizes` as MLIR's mixed sizes: the runtime values, and static sizes with dynamic markers."""
    dynamic = ir.ShapedType.get_dynamic_size()
    static = [dynamic if d is None else d for d in static_shape(sizes)]
    return [s for s in sizes if isinstance(s, ir.Value)], static


def broadcast_sizes(
    operands: Sequence[ir.Value], shape: Sequence[Size | None], core: int = 0
) -> list[Size]:
    """`shape`, each None (a dynamic dim of the broadcast) replaced by an operand's size there.

    The operands' last `core` dims are not broadcast (matmul's matrices); `shape` leaves them out.
    """
    sizes: list[Size] = []
    for i, d in enumerate(shape):
        if d is None:
            sources = [
                (v, j)
                for v in operands
                if (j := i - len(shape) + len(shape_of(v.type)) - core) >= 0
                and shape_of(v.type)[j] is None
            ]
            if not sources:
                raise ValueError(f"dynamic dim {i} of the result is dynamic in no operand")
            d = dim(*sources[0])
        sizes.append(d)
    return sizes


def size_as(size: Size, dtype: np.dtype) -> ir.Value:
    """`size` as a scalar of `dtype` (a constant when static)."""
    if not isinstance(size, ir.Value):
        return scalar_constant(size, dtype)
    i64 = np.dtype(np.int64)
    return convert(arith.index_cast(element_type(i64), size), i64, dtype)


def dims_equal(a: ir.Value, dim_a: int, b: ir.Value, dim_b: int) -> ir.Value:
    """An i1: whether dim `dim_a` of tensor `a` equals dim `dim_b` of `b` at run time (guards)."""
    size_a, size_b = tensor.dim(a, index(dim_a)), tensor.dim(b, index(dim_b))
    return arith.cmpi(arith.CmpIPredicate.eq, size_a, size_b)


def dim_is(a: ir.Value, dim_a: int, size: int) -> ir.Value:
    """An i1: whether dim `dim_a` of tensor `a` is `size` at run time (guards)."""
    return arith.cmpi(arith.CmpIPredicate.eq, tensor.dim(a, index(dim_a)), index(size))


# Structured ops ----------------------------------------------------------------


def projection_map(rank: int, dims: Sequence[int]) -> ir.AffineMapAttr:
    """The indexing map reading loop dims `dims` of a rank-`rank` loop nest (e.g. a reduction's output)."""
    return _map(rank, [ir.AffineDimExpr.get(d) for d in dims])


def scalar_map(rank: int) -> ir.AffineMapAttr:
    """The indexing map of a 0-d operand (e.g. a full reduction's accumulator) in a rank-`rank` loop nest."""
    return _map(rank, [])


def broadcast_map(
    operand_shape: tuple[int | None, ...], out_shape: tuple[int | None, ...]
) -> ir.AffineMapAttr:
    """NumPy broadcasting as an indexing map: dims align right; a size-1 dim against a larger one reads index 0."""
    lead = len(out_shape) - len(operand_shape)
    exprs = []
    for i, d in enumerate(operand_shape):
        if d == 1 and out_shape[lead + i] != 1:
            exprs.append(ir.AffineConstantExpr.get(0))
        else:
            exprs.append(ir.AffineDimExpr.get(lead + i))
    return _map(len(out_shape), exprs)


def generic(
    inputs: Sequence[ir.Value],
    input_maps: Sequence[ir.AffineMapAttr],
    inits: Sequence[ir.Value],
    init_maps: Sequence[ir.AffineMapAttr],
    iterators: Sequence[str],
    body: ScalarBody,
) -> list[ir.Value]:
    """A linalg.generic; `body(block_args)` builds the scalar computation and returns the yielded values."""
    op = linalg.GenericOp(
        [v.type for v in inits],
        list(inputs),
        list(inits),
        ir.ArrayAttr.get(list(input_maps) + list(init_maps)),
        ir.ArrayAttr.get([ir.Attribute.parse(it) for it in iterators]),
    )
    elt_types = [ir.RankedTensorType(v.type).element_type for v in list(inputs) + list(inits)]
    block = op.regions[0].blocks.append(*elt_types)
    with ir.InsertionPoint(block):
        out = body(list(block.arguments))
        linalg.YieldOp(out if isinstance(out, list) else [out])
    return list(op.results)


def empty(sizes: Sequence[Size], dtype: np.dtype) -> ir.Value:
    return tensor.empty(list(sizes), element_type(dtype))


def scalar_constant(value, dtype: np.dtype) -> ir.Value:
    dtype = np.dtype(dtype)
    t = element_type(dtype)
    if dtype.kind == "f":
        return arith.constant(t, float(value))
    return arith.constant(t, int(bool(value)) if dtype == np.bool_ else as_signless_int(value, dtype))


def splat(value, shape: tuple[int, ...], dtype: np.dtype) -> ir.Value:
    """A constant tensor with every element `value` (already representable in `dtype`)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        return _unsigned(splat(as_signless_int(value, dtype), shape, signed_twin(dtype)), dtype)
    return arith.constant(tensor_type(shape, dtype), _dense_splat(value, dtype, shape))


def _unsigned(signless: ir.Value, dtype: np.dtype) -> ir.Value:
    """A signless constant tensor as unsigned `dtype`: arith.constant verifies only signless
    integers, and the pyfront dialect types unsigned values `ui` (dialects/types.py)."""
    return tensor.bitcast(tensor_type(shape_of(signless.type), dtype), signless)


def _dense_splat(value, dtype: np.dtype, shape: tuple[int, ...]) -> ir.Attribute:
    t = tensor_type(shape, dtype)
    elt = element_type(dtype)
    if dtype.kind == "f":
        scalar = ir.FloatAttr.get(elt, float(value))
    else:
        scalar = ir.IntegerAttr.get(elt, int(bool(value)) if dtype == np.bool_ else as_signless_int(value, dtype))
    return ir.DenseElementsAttr.get_splat(t, scalar)


def dense(array: np.ndarray) -> ir.Value:
    """A constant tensor holding `array` (any supported dtype)."""
    array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    if array.dtype.kind == "u":
        return _unsigned(dense(array.view(signed_twin(array.dtype))), array.dtype)
    t = tensor_type(array.shape, array.dtype)
    if array.size and (array == array.flat[0]).all():
        return arith.constant(t, _dense_splat(array.flat[0], array.dtype, array.shape))
    # Bool arrays go in unpacked: the bindings pack them to i1 themselves.
    attr = ir.DenseElementsAttr.get(array, type=t.element_type, shape=list(array.shape))
    return arith.constant(t, attr)


def fill(value, sizes: Sequence[Size], dtype: np.dtype) -> ir.Value:
    """A tensor filled with `value` by linalg.fill (an init operand for reductions and contractions)."""
    return linalg.fill(scalar_constant(value, dtype), outs=[empty(sizes, dtype)])


def elementwise(
    operands: Sequence[ir.Value],
    out_sizes: Sequence[Size | None],
    out_dtype: np.dtype,
    body: ScalarBody,
) -> ir.Value:
    """`body` applied elementwise over the broadcast of `operands` (NumPy broadcasting).

    A None in `out_sizes` (a result shape) is a dynamic dim sized like an operand there.
    """
    sizes = broadcast_sizes(operands, out_sizes)
    out_shape = static_shape(sizes)
    maps = [broadcast_map(shape_of(v.type), out_shape) for v in operands]
    init = empty(sizes, out_dtype)
    ident = _map(len(out_shape), [ir.AffineDimExpr.get(i) for i in range(len(out_shape))])
    return generic(operands, maps, [init], [ident], [PARALLEL] * len(out_shape),
                   lambda args: body(args[: len(operands)]))[0]


def reduction(
    operand: ir.Value,
    axes: Sequence[int],
    inits: Sequence[ir.Value],
    body: ScalarBody,
) -> list[ir.Value]:
    """Reduce `operand` over `axes` into `inits` (shaped like the operand without those axes)."""
    rank = len(shape_of(operand.type))
    axes = set(axes)
    in_map = _map(rank, [ir.AffineDimExpr.get(i) for i in range(rank)])
    out_map = _map(rank, [ir.AffineDimExpr.get(i) for i in range(rank) if i not in axes])
    iters = [REDUCTION if i in axes else PARALLEL for i in range(rank)]
    return generic([operand], [in_map], inits, [out_map] * len(inits), iters, body)


def reshape(value: ir.Value, sizes: Sequence[Size]) -> ir.Value:
    """Row-major reshape to `sizes` (same element count): collapse to 1-D (or 0-D), then expand."""
    old, new = shape_of(value.type), static_shape(sizes)
    dtype = tensor_dtype(value.type)
    if old == new and old.count(None) <= 1:  # equal element counts fix the one dynamic dim
        return value
    flat_shape = ((None if None in old else product(old)),) if (old and new) else ()
    flat = value
    if old != flat_shape:
        groups = [list(range(len(old)))] if flat_shape else []
        flat = tensor.collapse_shape(tensor_type(flat_shape, dtype), value, _reassoc(groups))
    if new == flat_shape:
        return flat
    groups = [list(range(len(new)))] if flat_shape else []
    dynamic, static = mixed(sizes)
    return tensor.expand_shape(tensor_type(new, dtype), flat, _reassoc(groups), dynamic, static)


def _reassoc(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups]
    )


def convert(x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """Scalar conversion with NumPy's astype semantics (bool is `!= 0`; float to int truncates;
    ints wrap). Unsigned operands extend with zeros and convert as unsigned; float-to-int casts
    out of the target's range are guarded by the front end (passes/guard_fp_events.py)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    t = element_type(dst)
    if dst == np.bool_:
        if src.kind == "f":
            return arith.cmpf(arith.CmpFPredicate.UNE, x, scalar_constant(0.0, src))
        return arith.cmpi(arith.CmpIPredicate.ne, x, scalar_constant(0, src))
    if src == np.bool_:
        return arith.uitofp(t, x) if dst.kind == "f" else arith.extui(t, x)
    if src == np.float64 and dst == np.float16:
        return arith.truncf(t, _float32_rounded_to_odd(x))
    if src.kind == "f" and dst.kind == "f":
        return arith.extf(t, x) if dst.itemsize > src.itemsize else arith.truncf(t, x)
    if src.kind in "iu" and dst.kind in "iu":
        if dst.itemsize > src.itemsize:  # NumPy extends by the source's sign
            return arith.extui(t, x) if src.kind == "u" else arith.extsi(t, x)
        return arith.trunci(t, x) if dst.itemsize < src.itemsize else arith.bitcast(t, x)
    if src.kind in "iu":
        return arith.uitofp(t, x) if src.kind == "u" else arith.sitofp(t, x)
    return arith.fptoui(t, x) if dst.kind == "u" else arith.fptosi(t, x)


def _float32_rounded_to_odd(x: ir.Value) -> ir.Value:
    """float64 `x` rounded to float32 with round-to-odd: of the two float32s around an inexact
    x, the one with an odd last bit. Rounded on to float16 this gives float16's correctly rounded
    value, NumPy's (npy_double_to_half); IREE's own float64-to-float16 truncation rounds twice
    (1 + 2**-11 + 2**-30 became 1.0, not 1.0009765625)."""
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)
    nearest = arith.truncf(f32, x)
    bits = arith.bitcast(i32, nearest)
    one = arith.constant(i32, 1)
    exact = arith.cmpf(arith.CmpFPredicate.OEQ, arith.extf(x.type, nearest), x)
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(bits, one), arith.constant(i32, 0))
    # The other neighbour is one step of the magnitude toward x.
    overshoots = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(arith.extf(x.type, nearest)), math.absf(x))
    other = arith.bitcast(f32, arith.select(overshoots, arith.subi(bits, one), arith.addi(bits, one)))
    keep = arith.ori(arith.ori(exact, odd), arith.cmpf(arith.CmpFPredicate.UNO, x, x))
    return arith.select(keep, nearest, other)


def math_unary(name: str) -> Callable[[ir.Value], ir.Value]:
    return getattr(math, name)
