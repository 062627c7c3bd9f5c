"""Shape primitives: reshape, transpose, broadcast_to, concatenate, slice.

All shapes are static. `slice` is NumPy basic slicing along every dimension
with positive steps (offsets, sizes and strides already normalized by the
front end); integer indices are a size-1 slice followed by a reshape.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import linalg, tensor
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.base import operands_agree, primitive, same_dtype
from pyfront.dialects.types import shape_of, tensor_dtype


def _reshape_shape(s, shape):
    if int(np.prod(s, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"cannot reshape array of shape {tuple(s)} into shape {tuple(shape)}")
    return tuple(shape)


RESHAPE = primitive(
    "reshape",
    "NumPy `x.reshape(shape)` in C order (the front end resolves -1).",
    impl=lambda x, shape: np.reshape(x, tuple(shape)),
    shape_rule=_reshape_shape,
    dtype_rule=same_dtype,
    lower=lambda view, x: emit.reshape(x, tuple(view.shape)),
    arity=1,
    params=(Attr("shape", "i64s", "result shape"),),
)


def _transpose_shape(s, perm):
    if sorted(perm) != list(range(len(s))):
        raise ValueError(f"axes {tuple(perm)} don't match array of rank {len(s)}")
    return tuple(s[p] for p in perm)


def _lower_transpose(view, x):
    out = emit.empty(shape_of(view.result.type), tensor_dtype(x.type))
    return linalg.transpose(x, outs=[out], permutation=list(view.perm))


TRANSPOSE = primitive(
    "transpose",
    "NumPy `np.transpose(x, axes)`.",
    impl=lambda x, perm: np.transpose(x, tuple(perm)),
    shape_rule=_transpose_shape,
    dtype_rule=same_dtype,
    lower=_lower_transpose,
    arity=1,
    params=(Attr("perm", "i64s", "permutation of the axes"),),
)


def _broadcast_to_shape(s, shape):
    if tuple(np.broadcast_shapes(tuple(s), tuple(shape))) != tuple(shape):
        raise ValueError(f"operands could not be broadcast to shape {tuple(shape)}")
    return tuple(shape)


BROADCAST_TO = primitive(
    "broadcast_to",
    "NumPy `np.broadcast_to(x, shape)` (materialized).",
    impl=lambda x, shape: np.broadcast_to(x, tuple(shape)),
    shape_rule=_broadcast_to_shape,
    dtype_rule=same_dtype,
    lower=lambda view, x: emit.elementwise(
        [x], shape_of(view.result.type), tensor_dtype(x.type), lambda a: a[0]
    ),
    arity=1,
    params=(Attr("shape", "i64s", "result shape"),),
)


def _concat_shape(*shapes, axis):
    first = shapes[0]
    if not 0 <= axis < len(first):
        raise ValueError(f"axis {axis} is out of bounds for rank {len(first)}")
    for s in shapes[1:]:
        if len(s) != len(first) or any(a != b for i, (a, b) in enumerate(zip(s, first)) if i != axis):
            raise ValueError("all the input array dimensions except for the concatenation axis must match")
    return tuple(sum(s[axis] for s in shapes) if i == axis else d for i, d in enumerate(first))


CONCATENATE = primitive(
    "concatenate",
    "NumPy `np.concatenate(xs, axis)` for operands of one dtype.",
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
    shape_rule=_concat_shape,
    dtype_rule=same_dtype,
    lower=lambda view, *xs: tensor.concat(view.result.type, view.axis, list(xs)),
    arity=None,
    params=(Attr("axis", "int", "concatenation axis, non-negative"),),
    operand_rule=operands_agree,
)


def _slice_shape(s, offsets, sizes, strides):
    if not len(s) == len(offsets) == len(sizes) == len(strides):
        raise ValueError("slice needs one offset, size and stride per dimension")
    for d, o, n, st in zip(s, offsets, sizes, strides):
        if st <= 0 or o < 0 or n < 0 or (n > 0 and o + (n - 1) * st >= d):
            raise ValueError(f"slice (offset {o}, size {n}, stride {st}) out of bounds for dim {d}")
    return tuple(sizes)


def _slice_impl(x, offsets, sizes, strides):
    return x[tuple(slice(o, o + n * st, st) for o, n, st in zip(offsets, sizes, strides))]


SLICE = primitive(
    "slice",
    "NumPy basic slicing `x[o0:o0+n0*s0:s0, ...]` with positive strides.",
    impl=_slice_impl,
    shape_rule=_slice_shape,
    dtype_rule=same_dtype,
    lower=lambda view, x: tensor.extract_slice(
        view.result.type, x, [], [], [], list(view.offsets), list(view.sizes), list(view.strides)
    ),
    arity=1,
    params=(
        Attr("offsets", "i64s", "start index per dimension"),
        Attr("sizes", "i64s", "result size per dimension"),
        Attr("strides", "i64s", "positive step per dimension"),
    ),
)
