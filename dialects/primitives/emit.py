"""Builders for the linalg/tensor/arith/math IR that primitives lower to.

Everything here works on static shapes (the graph generator specializes
shapes); each helper builds at the current insertion point and location.
Element types are described by NumPy dtypes so that semantics (signed ints,
bool as i1, NaN-propagating max) are decided in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from pyfront.dialects.mlir import arith, ir, linalg, math, tensor
from pyfront.dialects.types import element_type, shape_of, tensor_dtype, tensor_type

PARALLEL = "#linalg.iterator_type<parallel>"
REDUCTION = "#linalg.iterator_type<reduction>"

ScalarBody = Callable[[list[ir.Value]], ir.Value | list[ir.Value]]


def as_value(x) -> ir.Value:
    """The single result of what a bindings builder returned (a value, an op or a result list)."""
    if isinstance(x, ir.Value):
        return x
    results = list(x) if isinstance(x, ir.OpResultList) else list(x.results)
    (value,) = results
    return value


def _map(n_dims: int, exprs: Sequence[ir.AffineExpr]) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(n_dims, 0, list(exprs)))


def broadcast_map(operand_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> ir.AffineMapAttr:
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


def empty(shape: tuple[int, ...], dtype: np.dtype) -> ir.Value:
    return tensor.empty(list(shape), element_type(dtype))


def scalar_constant(value, dtype: np.dtype) -> ir.Value:
    dtype = np.dtype(dtype)
    t = element_type(dtype)
    if dtype.kind == "f":
        return arith.constant(t, float(value))
    return arith.constant(t, int(bool(value)) if dtype == np.bool_ else int(value))


def splat(value, shape: tuple[int, ...], dtype: np.dtype) -> ir.Value:
    """A constant tensor with every element `value` (already representable in `dtype`)."""
    dtype = np.dtype(dtype)
    return arith.constant(tensor_type(shape, dtype), _dense_splat(value, dtype, shape))


def _dense_splat(value, dtype: np.dtype, shape: tuple[int, ...]) -> ir.Attribute:
    t = tensor_type(shape, dtype)
    elt = element_type(dtype)
    if dtype.kind == "f":
        scalar = ir.FloatAttr.get(elt, float(value))
    else:
        scalar = ir.IntegerAttr.get(elt, int(bool(value)) if dtype == np.bool_ else int(value))
    return ir.DenseElementsAttr.get_splat(t, scalar)


def dense(array: np.ndarray) -> ir.Value:
    """A constant tensor holding `array` (any supported dtype)."""
    array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    t = tensor_type(array.shape, array.dtype)
    if array.size and (array == array.flat[0]).all():
        return arith.constant(t, _dense_splat(array.flat[0], array.dtype, array.shape))
    if array.dtype == np.bool_:
        attr = ir.DenseElementsAttr.get(np.packbits(array, bitorder="little"), type=t.element_type, shape=list(array.shape))
    else:
        attr = ir.DenseElementsAttr.get(array, type=t.element_type, shape=list(array.shape))
    return arith.constant(t, attr)


def fill(value, shape: tuple[int, ...], dtype: np.dtype) -> ir.Value:
    """A tensor filled with `value` by linalg.fill (an init operand for reductions and contractions)."""
    return linalg.fill(scalar_constant(value, dtype), outs=[empty(shape, dtype)])


def elementwise(
    operands: Sequence[ir.Value], out_shape: tuple[int, ...], out_dtype: np.dtype, body: ScalarBody
) -> ir.Value:
    """`body` applied elementwise over the broadcast of `operands` (NumPy broadcasting)."""
    maps = [broadcast_map(shape_of(v.type), out_shape) for v in operands]
    init = empty(out_shape, out_dtype)
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


def reshape(value: ir.Value, new_shape: tuple[int, ...]) -> ir.Value:
    """Static reshape in row-major order: collapse to 1-D (or 0-D), then expand."""
    old = shape_of(value.type)
    dtype = tensor_dtype(value.type)
    if tuple(old) == tuple(new_shape):
        return value
    size = int(np.prod(old, dtype=np.int64))
    flat_shape = (size,) if (old and new_shape) else ()
    flat = value
    if tuple(old) != flat_shape:
        groups = [list(range(len(old)))] if flat_shape else []
        flat = tensor.collapse_shape(tensor_type(flat_shape, dtype), value, _reassoc(groups))
    if tuple(new_shape) == flat_shape:
        return flat
    groups = [list(range(len(new_shape)))] if flat_shape else []
    return tensor.expand_shape(tensor_type(new_shape, dtype), flat, _reassoc(groups), [], list(new_shape))


def _reassoc(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups]
    )


def convert(x: ir.Value, src: np.dtype, dst: np.dtype) -> ir.Value:
    """Scalar conversion with NumPy's astype semantics (bool is `!= 0`; float to int truncates)."""
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
    if src.kind == "f" and dst.kind == "f":
        return arith.extf(t, x) if dst.itemsize > src.itemsize else arith.truncf(t, x)
    if src.kind == "i" and dst.kind == "i":
        return arith.extsi(t, x) if dst.itemsize > src.itemsize else arith.trunci(t, x)
    if src.kind == "i":
        return arith.sitofp(t, x)
    return arith.fptosi(t, x)


def math_unary(name: str) -> Callable[[ir.Value], ir.Value]:
    return getattr(math, name)
