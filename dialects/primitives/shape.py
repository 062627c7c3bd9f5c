"""Shape primitives: reshape, transpose, broadcast_to, concatenate, slice, update_slice, take, and their gradients;
`dim`, a dynamic dim's size as a value (`len(x)`, `x.shape[0]`).

`slice` is NumPy basic slicing along every dimension with positive steps
(offsets, sizes and strides already normalized by the front end); integer
indices are a size-1 slice followed by a reshape.

Dynamic dims (None; >= 2 at call time, see base.py) and how the params
encode them, -1 marking a size known only at run time:
- reshape `shape`: at most one -1, NumPy's "the rest". With a static operand
  the rule resolves it; with a dynamic one it is the result's one dynamic dim
  (the count divided at run time), and the target's static sizes must divide
  the operand's static ones, so the division is exact.
- broadcast_to `shape`: -1 keeps the operand's dim at that place, so a
  dynamic dim stays dynamic (one is never created, nor broadcast).
- concatenate: the other dims are unified as in broadcasting; the axis is
  dynamic if any operand is dynamic there.
- slice `sizes`: -1 means "to the end", ceil((dim - offset) / stride), at
  run time on a dynamic dim (so `:` keeps the dim dynamic). A static size on
  a dynamic dim is assumed in bounds; the front end guards it.

VJPs (float operands; None for int and bool, and for take's index):
transpose and broadcast_to undo themselves (broadcast_to sums); the other
rules use the gradient primitives below, which take the forward operand
whose (run-time) shape the cotangent must have as an operand, so every
dynamic dim is handled: reshape's cotangent is `reshape_as` the operand,
slice's is `slice_grad` (zeros with the cotangent inserted), and
concatenate's are `concatenate_grad` (the part each operand contributed, at
a run-time offset when an earlier operand is dynamic along the axis). take
puts the cotangent in row i of zeros; from a dynamic first dim it raises
`bind.NoVJP` (the AD on the IR refuses the call as `Unsupported`).
"""

from __future__ import annotations

from functools import reduce

import numpy as np
from pyfront.dialects.mlir import arith, ir, linalg, tensor
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import bind, emit
from pyfront.dialects.primitives.base import (
    broadcast_shapes,
    operands_agree,
    primitive,
    same_dtype,
    unify_dims,
)
from pyfront.dialects.primitives.bind import NotDifferentiable, apply, constant
from pyfront.dialects.types import shape_of, tensor_dtype, tensor_type


def _param_dims(shape) -> list[int]:
    return [-1 if d is None else d for d in shape]


def _float_only(rule):
    """The rule on float operands; None for each operand otherwise."""
    def vjp(ct, out, *operands, **params):
        if not bind.is_differentiable(out):
            return (None,) * len(operands)
        return rule(ct, out, *operands, **params)
    return vjp


def _reshape_shape(s, shape):
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    static = int(np.prod([d for d in s if d is not None], dtype=np.int64))
    if list(shape).count(-1) > 1 or min(shape, default=0) < -1:
        raise ValueError(f"reshape: bad target shape {tuple(shape)}")
    if None in s and -1 not in shape:
        raise ValueError(f"reshape of dynamic shape {tuple(s)} needs one -1 in the target")
    if (known == 0 or static % known) if -1 in shape else static != known:
        raise ValueError(f"cannot reshape array of shape {tuple(s)} into shape {tuple(shape)}")
    rest = None if None in s else static // known
    return tuple(rest if d == -1 else d for d in shape)


def _lower_reshape(view, x):
    shape = shape_of(view.result.type)
    if None not in shape:
        return emit.reshape(x, shape)
    known = emit.index(emit.product([d for d in shape if d is not None]))
    rest = arith.divui(emit.product(emit.dims(x)), known)
    return emit.reshape(x, [rest if d is None else d for d in shape])


@_float_only
def _reshape_vjp(ct, out, x, shape):
    return (apply("reshape_as", ct, x),)


RESHAPE = primitive(
    "reshape",
    "NumPy `x.reshape(shape)` in C order.",
    impl=lambda x, shape: np.reshape(x, tuple(shape)),
    shape_rule=_reshape_shape,
    dtype_rule=same_dtype,
    lower=_lower_reshape,
    arity=1,
    params=(Attr("shape", "i64s", "result shape; one -1 for the rest"),),
    vjp=_reshape_vjp,
    keeps_nonfinite=True,  # moves elements, drops none
)


def _transpose_shape(s, perm):
    if sorted(perm) != list(range(len(s))):
        raise ValueError(f"axes {tuple(perm)} don't match array of rank {len(s)}")
    return tuple(s[p] for p in perm)


def _lower_transpose(view, x):
    out = emit.empty([emit.dim(x, p) for p in view.perm], tensor_dtype(x.type))
    return linalg.transpose(x, outs=[out], permutation=list(view.perm))


@_float_only
def _transpose_vjp(ct, out, x, perm):
    return (apply("transpose", ct, perm=[int(i) for i in np.argsort(perm)]),)


TRANSPOSE = primitive(
    "transpose",
    "NumPy `np.transpose(x, axes)`.",
    impl=lambda x, perm: np.transpose(x, tuple(perm)),
    shape_rule=_transpose_shape,
    dtype_rule=same_dtype,
    lower=_lower_transpose,
    arity=1,
    params=(Attr("perm", "i64s", "permutation of the axes"),),
    vjp=_transpose_vjp,
    keeps_nonfinite=True,  # moves elements, drops none
)


def _broadcast_to_target(s, shape):
    """`shape` with each -1 replaced by the operand's dim there."""
    lead = len(shape) - len(s)
    if lead < 0 or any(d == -1 for d in shape[:lead]):
        raise ValueError(f"broadcast_to: -1 in {tuple(shape)} must face a dim of {tuple(s)}")
    return tuple(s[i - lead] if d == -1 else d for i, d in enumerate(shape))


def _broadcast_to_shape(s, shape):
    target = _broadcast_to_target(s, shape)
    if broadcast_shapes(s, target) != target:
        raise ValueError(f"operands could not be broadcast to shape {tuple(shape)}")
    return target


@_float_only
def _broadcast_to_vjp(ct, out, x, shape):
    return (bind.unbroadcast(ct, bind.shape(x)),)


BROADCAST_TO = primitive(
    "broadcast_to",
    "NumPy `np.broadcast_to(x, shape)` (materialized).",
    impl=lambda x, shape: np.broadcast_to(x, _broadcast_to_target(np.shape(x), shape)),
    shape_rule=_broadcast_to_shape,
    dtype_rule=same_dtype,
    lower=lambda view, x: emit.elementwise(
        [x], shape_of(view.result.type), tensor_dtype(x.type), lambda a: a[0]
    ),
    arity=1,
    params=(Attr("shape", "i64s", "result shape; -1 keeps the operand's dim"),),
    vjp=_broadcast_to_vjp,
    keeps_nonfinite=True,  # moves elements, drops none
)


def _concat_shape(*shapes, axis):
    first = shapes[0]
    if not 0 <= axis < len(first):
        raise ValueError(f"axis {axis} is out of bounds for rank {len(first)}")
    if any(len(s) != len(first) for s in shapes):
        raise ValueError("all the input arrays must have the same number of dimensions")
    try:
        return tuple(
            (None if None in ds else sum(ds)) if i == axis else unify_dims(*ds)
            for i, ds in enumerate(zip(*shapes))
        )
    except ValueError:
        msg = "all the input array dimensions except for the concatenation axis must match"
        raise ValueError(msg) from None


@_float_only
def _concatenate_vjp(ct, out, *xs, axis):
    return tuple(apply("concatenate_grad", ct, *xs, axis=axis, index=k) for k in range(len(xs)))


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
    vjp=_concatenate_vjp,
    keeps_nonfinite=True,  # moves elements, drops none
)


def _slice_shape(s, offsets, sizes, strides):
    if not len(s) == len(offsets) == len(sizes) == len(strides):
        raise ValueError("slice needs one offset, size and stride per dimension")
    out = []
    for d, o, n, st in zip(s, offsets, sizes, strides):
        if n == -1 and d is not None:
            n = max(0, -(-(d - o) // st))  # to the end
        if st <= 0 or o < 0 or n < -1 or (d is not None and n > 0 and o + (n - 1) * st >= d):
            raise ValueError(f"slice (offset {o}, size {n}, stride {st}) out of bounds for dim {d}")
        out.append(None if n == -1 else n)
    return tuple(out)


def _slice_impl(x, offsets, sizes, strides):
    ends = [None if n == -1 else o + n * st for o, n, st in zip(offsets, sizes, strides)]
    return x[tuple(map(slice, offsets, ends, strides))]


def _lower_slice(view, x):
    def to_the_end(i: int, offset: int, stride: int):  # max(0, ceil((dim - offset) / stride))
        rest = arith.subi(emit.dim(x, i), emit.index(offset))
        return arith.maxsi(emit.index(0), arith.ceildivsi(rest, emit.index(stride)))

    offsets, strides, result = list(view.offsets), list(view.strides), shape_of(view.result.type)
    sizes = [
        to_the_end(i, o, st) if n is None else n
        for i, (n, o, st) in enumerate(zip(result, offsets, strides))
    ]
    dynamic, static = emit.mixed(sizes)
    return tensor.extract_slice(view.result.type, x, [], dynamic, [], offsets, static, strides)


@_float_only
def _slice_vjp(ct, out, x, offsets, sizes, strides):
    return (apply("slice_grad", ct, x, offsets=offsets, strides=strides),)


SLICE = primitive(
    "slice",
    "NumPy basic slicing `x[o0:o0+n0*s0:s0, ...]` with positive strides.",
    impl=_slice_impl,
    shape_rule=_slice_shape,
    dtype_rule=same_dtype,
    lower=_lower_slice,
    arity=1,
    params=(
        Attr("offsets", "i64s", "start index per dimension"),
        Attr("sizes", "i64s", "result size per dimension; -1: to the end"),
        Attr("strides", "i64s", "positive step per dimension"),
    ),
    vjp=_slice_vjp,
)


def _take_shape(s, i):
    if len(s) < 1 or len(i) != 0:
        raise ValueError("take indexes the first axis of an array with a 0-d index")
    return tuple(s[1:])


def _lower_take(view, x, i):
    """x[i] for a runtime index 0 <= i < len(x) (the front end only emits loop counters)."""
    shape = shape_of(x.type)
    offset = arith.index_cast(ir.IndexType.get(), tensor.extract(i, []))
    rest = emit.dims(x)[1:]
    dynamic_sizes, static_sizes = emit.mixed([1] + rest)
    zeros = [0] * (len(shape) - 1)
    row = tensor.extract_slice(
        tensor_type((1,) + tuple(shape[1:]), tensor_dtype(x.type)), x, [offset], dynamic_sizes, [],
        [ir.ShapedType.get_dynamic_stride_or_offset()] + zeros, static_sizes, [1] * len(shape),
    )
    return emit.reshape(row, rest)


@_float_only
def _take_vjp(ct, out, x, i):
    n, rank = bind.shape(x)[0], len(bind.shape(x))
    if n is None:
        raise bind.NoVJP("the VJP of take from a dynamic first dim (an index into an array whose length "
                         "varies between calls) is not supported yet")
    row = bind.expand_dims(apply("equal", bind.iota(n, ct), i), range(1, rank))
    return apply("where", row, bind.expand_dims(ct, [0]), constant(0, ct)), None


TAKE = primitive(
    "take",
    "NumPy `x[i]` along the first axis for a runtime index `i` (a 0-d int64 tensor) in range.",
    impl=lambda x, i: x[int(i)],
    shape_rule=_take_shape,
    dtype_rule=same_dtype,
    lower=_lower_take,
    arity=2,
    operand_rule=lambda x, i, **_: None if i == np.int64 else "the index must be int64",
    vjp=_take_vjp,
)


def _update_slice_shape(x, v, offsets, strides):
    if not len(x) == len(v) == len(offsets) == len(strides):
        raise ValueError("update_slice needs one offset and stride per dimension of both operands")
    for d, n, o, st in zip(x, v, offsets, strides):
        if n is None or st <= 0 or o < 0 or (d is not None and n > 0 and o + (n - 1) * st >= d):
            raise ValueError(f"update_slice: {n} elements (offset {o}, stride {st}) do not fit in dim {d}")
    return tuple(x)


def _update_slice_impl(x, v, offsets, strides):
    out = np.array(x, copy=True)
    out[tuple(slice(o, o + n * st, st) for o, n, st in zip(offsets, np.shape(v), strides))] = v
    return out


def _lower_update_slice(view, x, v):
    return tensor.insert_slice(v, x, [], [], [], list(view.offsets), list(shape_of(v.type)), list(view.strides))


@_float_only
def _update_slice_vjp(ct, out, x, v, offsets, strides):
    sizes = bind.shape(v)
    return (apply("update_slice", ct, bind.zeros_like(v), offsets=offsets, strides=strides),
            apply("slice", ct, offsets=offsets, sizes=sizes, strides=strides))


UPDATE_SLICE = primitive(
    "update_slice",
    "NumPy `x[o0:o0+n0*s0:s0, ...] = v` as a value: `x` with `v` (shape (n0, ...), static) at `offsets` + "
    "i * `strides`.",
    impl=_update_slice_impl,
    shape_rule=_update_slice_shape,
    dtype_rule=same_dtype,
    lower=_lower_update_slice,
    arity=2,
    operand_rule=operands_agree,
    params=(
        Attr("offsets", "i64s", "start index per dimension"),
        Attr("strides", "i64s", "positive step per dimension"),
    ),
    vjp=_update_slice_vjp,
    keeps_nonfinite=(1,),  # writes all of v; x's elements under it are dropped
)


# Gradient primitives ------------------------------------------------------------------
#
# Each takes, as an operand, the forward value whose shape its result has, so
# a dynamic dim is read at run time instead of being named in a param.


def _reshape_as_shape(s, like):
    if None not in s and None not in like and int(np.prod(s)) != int(np.prod(like)):
        raise ValueError(f"cannot reshape array of shape {tuple(s)} into shape {tuple(like)}")
    return tuple(like)


@_float_only
def _reshape_as_vjp(g, out, x, like):
    return apply("reshape_as", g, x), None


RESHAPE_AS = primitive(
    "reshape_as",
    "NumPy `x.reshape(like.shape)` in C order: `like` gives the (run-time) shape, its element count must be x's.",
    impl=lambda x, like: np.reshape(x, np.shape(like)),
    shape_rule=_reshape_as_shape,
    dtype_rule=lambda x, like: x,
    lower=lambda view, x, like: emit.reshape(x, emit.dims(like)),
    arity=2,
    vjp=_reshape_as_vjp,
)


def _slice_grad_shape(ct, like, offsets, strides):
    if not len(ct) == len(like) == len(offsets) == len(strides):
        raise ValueError("slice_grad needs one offset and stride per dimension of both operands")
    for n, d, o, st in zip(ct, like, offsets, strides):
        if st <= 0 or o < 0 or (n is not None and d is not None and n > 0 and o + (n - 1) * st >= d):
            raise ValueError(f"slice_grad: {n} elements (offset {o}, stride {st}) do not fit in dim {d}")
    return tuple(like)


def _slice_grad_impl(ct, like, offsets, strides):
    grad = np.zeros(np.shape(like), np.asarray(ct).dtype)
    grad[tuple(slice(o, o + n * st, st) for o, n, st in zip(offsets, np.shape(ct), strides))] = ct
    return grad


def _lower_slice_grad(view, ct, like):
    dest = emit.fill(0, emit.dims(like), tensor_dtype(ct.type))
    dynamic, static = emit.mixed(emit.dims(ct))
    return tensor.insert_slice(ct, dest, [], dynamic, [], list(view.offsets), static, list(view.strides))


@_float_only
def _slice_grad_vjp(g, out, ct, like, offsets, strides):
    sizes = _param_dims(bind.shape(ct))  # a dynamic dim of ct runs to the end (it came from a `:` slice)
    return apply("slice", g, offsets=offsets, sizes=sizes, strides=strides), None


SLICE_GRAD = primitive(
    "slice_grad",
    "The gradient of slice: zeros shaped like `like` with `ct` at `offsets` + i * `strides` "
    "(a dynamic dim of `ct` runs to the end of `like`'s).",
    impl=_slice_grad_impl,
    shape_rule=_slice_grad_shape,
    dtype_rule=lambda ct, like, **_: ct,
    lower=_lower_slice_grad,
    arity=2,
    params=(
        Attr("offsets", "i64s", "start index per dimension"),
        Attr("strides", "i64s", "positive step per dimension"),
    ),
    vjp=_slice_grad_vjp,
    keeps_nonfinite=(0,),  # places all of ct; of `like`, only the shape
)


def _concatenate_grad_shape(ct, *xs, axis, index):
    if not 0 <= index < len(xs):
        raise ValueError(f"concatenate_grad: operand {index} of {len(xs)}")
    _concat_shape(*xs, axis=axis)
    if len(ct) != len(xs[index]):
        raise ValueError("concatenate_grad: the cotangent and the operands differ in rank")
    return tuple(xs[index])


def _concatenate_grad_impl(ct, *xs, axis, index):
    start = sum(np.shape(x)[axis] for x in xs[:index])
    return np.take(ct, np.arange(start, start + np.shape(xs[index])[axis]), axis=axis)


def _sum_sizes(sizes):
    """The sum of `sizes` (an int when all are static, else an `index` value)."""
    static = sum(s for s in sizes if not isinstance(s, ir.Value))
    dynamic = [s for s in sizes if isinstance(s, ir.Value)]
    return reduce(arith.addi, dynamic, emit.index(static)) if dynamic else static


def _lower_concatenate_grad(view, ct, *xs):
    axis, index = view.axis, view.index
    start = _sum_sizes([emit.dim(x, axis) for x in xs[:index]])
    rank = len(shape_of(ct.type))
    offsets = [start if i == axis else 0 for i in range(rank)]
    dynamic_offsets = [o for o in offsets if isinstance(o, ir.Value)]
    static_offsets = [ir.ShapedType.get_dynamic_stride_or_offset() if isinstance(o, ir.Value) else o
                      for o in offsets]
    dynamic_sizes, static_sizes = emit.mixed(emit.dims(xs[index]))
    return tensor.extract_slice(view.result.type, ct, dynamic_offsets, dynamic_sizes, [],
                                static_offsets, static_sizes, [1] * rank)


@_float_only
def _concatenate_grad_vjp(g, out, ct, *xs, axis, index):
    parts = [g if k == index else bind.zeros_like(x) for k, x in enumerate(xs)]
    return (apply("concatenate", *parts, axis=axis), *(None for _ in xs))


CONCATENATE_GRAD = primitive(
    "concatenate_grad",
    "The gradient of concatenate for operand `index`: the part of `ct` (shaped like concatenate(xs, axis)) "
    "that xs[index] occupies, shaped like xs[index].",
    impl=_concatenate_grad_impl,
    shape_rule=_concatenate_grad_shape,
    dtype_rule=lambda ct, *xs, **_: ct,
    lower=_lower_concatenate_grad,
    arity=None,
    params=(
        Attr("axis", "int", "concatenation axis, non-negative"),
        Attr("index", "int", "which operand of the concatenation"),
    ),
    vjp=_concatenate_grad_vjp,
)


def _lower_dim(view, x):
    size = arith.index_cast(ir.IntegerType.get_signless(64), tensor.dim(x, emit.index(view.axis)))
    return tensor.from_elements(tensor_type((), np.dtype(np.int64)), [size])


DIM = primitive(
    "dim",
    "The size of dimension `axis` of x, as a 0-d int64 (for a dim known only at run time).",
    impl=lambda x, axis: np.int64(np.shape(x)[axis]),
    shape_rule=lambda x, axis: (),
    dtype_rule=lambda x, axis: np.dtype(np.int64),
    lower=_lower_dim,
    arity=1,
    params=(Attr("axis", "int", "the dimension, non-negative"),),
    vjp=NotDifferentiable("an int result (a size)"),
)
