"""Indexing primitives beyond boxes: gather, scatter, scatter_add, compress, expand, flip, dynamic_slice, ...

NumPy's advanced indexing reduced to one form (pyfront/indexing.py does the
reduction: basic parts sliced first, advanced axes moved to the front,
index arrays broadcast, wrapped and range-guarded):
- `gather(x, i_0, ..., i_{k-1}; axes)`: the k index operands are int64
  arrays of one shape B indexing x's dims `axes` (sorted); result[b, r...] =
  x at i_j[b] on axes[j] and r on the other dims, shape B + the other dims
  (NumPy's `x[i_0, ..., i_{k-1}]` when the axes lead). No transpose is
  needed around it, so NumPy's memory order of the result is what
  pyfront/layout.py sees.
- `scatter(x, v, i_0, ...; axes)`: x with those positions set to v[b] for
  every b, v shaped like gather's result; where several b name one
  position, the last b in C order wins (what NumPy's `x[i] = v` does).
- `scatter_add(x, v, i_0, ...)`: x with v[b] added at each position, repeated
  positions accumulating (`np.add.at`); numbers only (not bool).
Indices are in range (0 <= i < dim): the front end guards that, so that the
interpreter raises NumPy's IndexError. The lowerings clamp them anyway, for
memory safety only (a guard's failure is acted on after the call).

- `compress(x, mask)`: NumPy's `x[mask]` for a bool mask over x's leading
  dims: a dynamic first dim, the mask's count (the front end guards it >= 2,
  the runtime's invariant for dynamic dims); `expand(ct, mask)` is its
  gradient (`out[mask] = ct` into zeros). Both count the mask with a prefix
  sum written as a masked reduction (quadratic in the mask's size: the
  front end bounds it).
- `flip(x, axes)`: `x[::-1]` along `axes` (static dims), NumPy's negative
  steps being a positive-step slice flipped.
- `dynamic_slice(x, o_0, ..., o_{n-1})` / `dynamic_update_slice(x, v, o_0, ...)`:
  `slice` / `update_slice` (shape.py) whose offsets are 0-d int64 operands,
  one per dim, computed at run time (`X[i*B:(i+1)*B]`); the sizes stay static.
  The front end guards that the box is in range (NumPy would clamp it
  shorter); the lowerings clamp the offsets into range (memory safety).

Lowerings: gather is a `linalg.generic` over the result reading `x` with
`tensor.extract`; scatter_add a generic over x's positions (parallel) and
B (reduction) that adds the hits (sums start from -0.0,
so x + sums keeps x's -0.0 where nothing is added); scatter first finds, per position, the last b that
writes it (a max-reduction over B: order-independent), then picks v's row
there or keeps x. Their cost is |x's indexed positions| * |B|, fine for
the index sizes of minibatch code; an index that is a constant
`np.arange` along a dim of B (`d[np.arange(n), y] -= 1`, the cross-entropy
gradient) is merged into x's loop instead of searched (`_iota_dims`). Float sums of repeated indices may be
added in another order than NumPy's (a few ulps; as sums elsewhere).

VJPs: gather's is scatter_add into zeros; scatter_add's passes the
cotangent to x and gathers it for v; scatter's zeroes the overwritten
positions for x and gives v[b] the cotangent only where b was the last
writer; flip is its own VJP; the dynamic slices are each other's.
"""

from __future__ import annotations

import functools

import numpy as np
from pyfront.dialects.mlir import arith, ir, linalg, tensor
from pyfront.dialects.opdef import Attr
from pyfront.dialects.primitives import bind, emit
from pyfront.dialects.primitives.base import fp_events, primitive, same_dtype, unify_dims
from pyfront.dialects.primitives.bind import apply
from pyfront.dialects.types import element_type, shape_of, tensor_dtype

I64 = np.dtype(np.int64)
INDEX_ERROR = "index operands must be int64"


def _amap(n_dims: int, exprs) -> ir.AffineMapAttr:
    return ir.AffineMapAttr.get(ir.AffineMap.get(n_dims, 0, list(exprs)))


def _d(i: int) -> ir.AffineExpr:
    return ir.AffineDimExpr.get(i)


def _loop_index(dim: int) -> ir.Value:
    return linalg.IndexOp(dim).result


def _clamped(i64: ir.Value, size: emit.Size) -> ir.Value:
    """An i64 scalar as an `index` clamped into [0, size) (memory safety; the front end guards the range)."""
    i = arith.index_cast(ir.IndexType.get(), i64)
    top = arith.subi(emit.as_index(size), emit.index(1))
    return arith.maxsi(arith.minsi(i, top), emit.index(0))


def _indices_shape(indices) -> tuple:
    """The common shape B of the index operands (they must agree; dynamic dims unified)."""
    if not indices:
        raise ValueError("at least one index operand is needed")
    if any(len(s) != len(indices[0]) for s in indices):
        raise ValueError("index operands must have one shape")
    return tuple(unify_dims(*ds) for ds in zip(*indices))


def _index_dtypes(*dtypes) -> str | None:
    return None if all(d == I64 for d in dtypes) else INDEX_ERROR


# gather ---------------------------------------------------------------------------
#
# `axes` (sorted) are the dims of x the index operands index, in order; the
# other dims ("rest") follow the index dims B in the result, in x's order;
# gather's `at` puts B after the first `at` of them instead (np.take's
# layout, which NumPy allocates in C order: no transpose for layout.py).

AXES = Attr("axes", "i64s", "the dims of x indexed by the index operands, sorted")
AT = Attr("at", "int", "gather: how many of the other dims precede the index dims in the result")


def _rest(rank: int, axes) -> list[int]:
    return [d for d in range(rank) if d not in axes]


def _check_axes(rank: int, axes, k: int) -> None:
    if len(axes) != k or list(axes) != sorted(set(axes)) or any(not 0 <= a < rank for a in axes):
        raise ValueError(f"gather: axes {tuple(axes)} for {k} index operands and an array of rank {rank}")


def _gather_shape(x, *indices, axes, at):
    _check_axes(len(x), axes, len(indices))
    rest = tuple(x[d] for d in _rest(len(x), axes))
    if not 0 <= at <= len(rest):
        raise ValueError(f"gather: at={at} for {len(rest)} other dims")
    return rest[:at] + _indices_shape(indices) + rest[at:]


def _front(x, axes):
    """x with the indexed axes moved to the front (a view)."""
    return np.moveaxis(x, list(axes), list(range(len(axes))))


def _gather_impl(x, *indices, axes, at):
    picked = _front(x, axes)[tuple(indices)]
    b_rank = np.ndim(indices[0])
    return np.moveaxis(picked, list(range(b_rank)), list(range(at, at + b_rank)))


def _coords(indices_args, axes, x_dims, loop_of_rest) -> list[ir.Value]:
    """x's coordinates: the (clamped) index values on `axes`, the loop's dims elsewhere."""
    picked = dict(zip(axes, indices_args))
    rest = iter(loop_of_rest)
    return [_clamped(picked[d], x_dims[d]) if d in picked else _loop_index(next(rest)) for d in range(len(x_dims))]


def _lower_gather(view, x, *indices):
    axes, at = list(view.axes), view.at
    k, b_rank = len(indices), len(shape_of(indices[0].type))
    x_dims = emit.dims(x)
    rest = _rest(len(x_dims), axes)
    rank = b_rank + len(rest)
    rest_sizes = [x_dims[d] for d in rest]
    sizes = [*rest_sizes[:at], *emit.dims(indices[0]), *rest_sizes[at:]]
    idx_map = _amap(rank, [_d(at + i) for i in range(b_rank)])
    out_map = _amap(rank, [_d(i) for i in range(rank)])
    rest_loops = [*range(at), *range(at + b_rank, rank)]

    def body(a):
        return tensor.extract(x, _coords(a[:k], axes, x_dims, rest_loops))

    (out,) = emit.generic(list(indices), [idx_map] * k, [emit.empty(sizes, tensor_dtype(x.type))], [out_map],
                          [emit.PARALLEL] * rank, body)
    return out


def _gather_vjp(ct, out, x, *indices, axes, at):
    if not bind.is_differentiable(x):
        return (None,) * (1 + len(indices))
    b_rank = len(bind.shape(indices[0]))
    if at:  # back to scatter_add's layout: the index dims first
        rank = len(bind.shape(ct))
        ct = apply("transpose", ct, perm=[*range(at, at + b_rank), *range(at), *range(at + b_rank, rank)])
    return (apply("scatter_add", bind.zeros_like(x), ct, *indices, axes=axes), *(None for _ in indices))


GATHER = primitive(
    "gather",
    "NumPy advanced indexing: x indexed on `axes` by int64 index arrays of one shape B (in range), `:` on the "
    "other dims: shape B + the other dims (`np.moveaxis(x, axes, front)[i_0, ..., i_{k-1}]`), B after the "
    "first `at` other dims.",
    impl=_gather_impl,
    shape_rule=_gather_shape,
    dtype_rule=same_dtype,
    lower=_lower_gather,
    arity=None,
    params=(AXES, AT),
    operand_rule=lambda x, *indices, **_: _index_dtypes(*indices),
    vjp=_gather_vjp,
)


# scatter and scatter_add --------------------------------------------------------------


def _scatter_shape(x, v, *indices, axes):
    want = _gather_shape(x, *indices, axes=axes, at=0)
    if len(v) != len(want):
        raise ValueError(f"scatter: values of shape {tuple(v)} for a selection of shape {want}")
    for a, b in zip(v, want):
        unify_dims(a, b)
    return tuple(x)


def _scatter_operands(x, v, *indices, **_):
    return f"operand dtypes differ: {x}, {v}" if x != v else _index_dtypes(*indices)


def _scatter_impl(x, v, *indices, axes):
    out = np.array(x, copy=True)
    _front(out, axes)[tuple(indices)] = v
    return out


def _scatter_add_impl(x, v, *indices, axes):
    out = np.array(x, copy=True)
    np.add.at(_front(out, axes), tuple(indices), v)
    return out


def _hit(indices_args, axes, x_dims, loop_dims) -> ir.Value | None:
    """i1: every index (clamped) equals the loop's position on its axis (axes[j] at loop dim loop_dims[j]);
    None when there is nothing to compare (every index merged into the loop, see `_iota_dims`)."""
    flag = None
    for a, i64, loop_dim in zip(axes, indices_args, loop_dims):
        eq = arith.cmpi(arith.CmpIPredicate.eq, _clamped(i64, x_dims[a]), _loop_index(loop_dim))
        flag = eq if flag is None else arith.andi(flag, eq)
    return flag


def _iota_dims(indices, axes, x_dims) -> dict[int, int]:
    """{j: t} for index operands j that are constants equal to their position along dim t of B (the
    `np.arange(n)` of `p[np.arange(n), y]`) where x's axis has B's size there: such an index names, for each
    b, the position b[t] itself, so the writes loop over that axis instead of searching it (linear, not
    quadratic, in n)."""
    merged: dict[int, int] = {}
    b_shape = shape_of(indices[0].type)
    for j, value in enumerate(indices):
        if not isinstance(value, ir.OpResult) or value.owner.name != "arith.constant" or None in b_shape:
            continue
        try:
            attr = ir.DenseIntElementsAttr(value.owner.attributes["value"])
        except (ValueError, KeyError):
            continue
        if attr.is_splat:
            continue
        array = np.array(attr).reshape(b_shape)
        for t, n in enumerate(b_shape):
            positions = np.arange(n).reshape([-1 if i == t else 1 for i in range(len(b_shape))])
            if n == x_dims[axes[j]] and t not in merged.values() and (array == positions).all():
                merged[j] = t
                break
    return merged


def _lower_scatter_add(view, x, v, *indices):
    """out = x + the sum, per position p, of v[b, rest(p)] over the b whose indices name p.

    The sums reduce into a fresh fill of the additive identity (-0.0 for floats: x + -0.0 is x, also for
    x = -0.0), then one elementwise add: a reduction whose init is another op's result (x) broke IREE's
    dispatch formation ("operand does not dominate this use") when two such writes follow each other."""
    axes = list(view.axes)
    k, b_rank = len(indices), len(shape_of(indices[0].type))
    x_dims = emit.dims(x)
    rank = len(x_dims)
    rest = _rest(rank, axes)
    merged = _iota_dims(indices, axes, x_dims)
    # Loop dims: x's dims (parallel), then B's dims not merged into one of x's (reduction).
    searched = [t for t in range(b_rank) if t not in merged.values()]
    b_loop = {t: axes[j] for j, t in merged.items()} | {t: rank + i for i, t in enumerate(searched)}
    n = rank + len(searched)
    idx_map = _amap(n, [_d(b_loop[t]) for t in range(b_rank)])
    v_map = _amap(n, [*(_d(b_loop[t]) for t in range(b_rank)), *(_d(d) for d in rest)])
    out_map = _amap(n, [_d(i) for i in range(rank)])
    dtype = tensor_dtype(x.type)
    add = arith.addf if dtype.kind == "f" else arith.addi
    compared = [j for j in range(k) if j not in merged]

    def body(a):
        *idx, value, acc = a
        hit = _hit([idx[j] for j in compared], [axes[j] for j in compared], x_dims, [axes[j] for j in compared])
        return add(acc, value) if hit is None else arith.select(hit, add(acc, value), acc)

    identity = emit.fill(-0.0 if dtype.kind == "f" else 0, x_dims, dtype)
    (sums,) = emit.generic([*indices, v], [idx_map] * k + [v_map], [identity], [out_map],
                           [emit.PARALLEL] * rank + [emit.REDUCTION] * len(searched), body)
    return emit.elementwise([x, sums], shape_of(x.type), dtype, lambda a: add(a[0], a[1]))


def _lower_scatter(view, x, v, *indices):
    """Per indexed position, the last b (C order) naming it (-1: none); then v's element there, or x's."""
    axes = list(view.axes)
    k, b_rank = len(indices), len(shape_of(indices[0].type))
    x_dims = emit.dims(x)
    b_dims = emit.dims(indices[0])
    rank = len(x_dims)
    rest = _rest(rank, axes)
    i64 = element_type(I64)

    # The first generic's loop dims: the indexed axes (parallel), then B's dims not merged into one (reduction).
    merged = _iota_dims(indices, axes, x_dims)
    searched = [t for t in range(b_rank) if t not in merged.values()]
    b_loop = {t: j for j, t in merged.items()} | {t: k + i for i, t in enumerate(searched)}
    n = k + len(searched)
    idx_map = _amap(n, [_d(b_loop[t]) for t in range(b_rank)])
    compared = [j for j in range(k) if j not in merged]

    def last_body(a):
        *idx, acc = a
        flat = emit.index(0)
        for t in range(b_rank):
            flat = arith.addi(arith.muli(flat, emit.as_index(b_dims[t])), _loop_index(b_loop[t]))
        written = arith.maxsi(acc, arith.index_cast(i64, flat))
        hit = _hit([idx[j] for j in compared], [axes[j] for j in compared], x_dims, compared)
        return written if hit is None else arith.select(hit, written, acc)

    (last,) = emit.generic(list(indices), [idx_map] * k, [emit.fill(-1, [x_dims[a] for a in axes], I64)],
                           [_amap(n, [_d(j) for j in range(k)])],
                           [emit.PARALLEL] * k + [emit.REDUCTION] * len(searched), last_body)
    last = _barrier(last)

    rows = emit.product(b_dims)
    flat_v = emit.reshape(v, [rows, *(x_dims[d] for d in rest)])
    ident = _amap(rank, [_d(i) for i in range(rank)])
    last_map = _amap(rank, [_d(a) for a in axes])

    def pick_body(a):
        old, writer, _ = a
        new = tensor.extract(flat_v, [_clamped(writer, rows), *(_loop_index(d) for d in rest)])
        return arith.select(arith.cmpi(arith.CmpIPredicate.sge, writer, emit.scalar_constant(0, I64)), new, old)

    (out,) = emit.generic([x, last], [ident, last_map], [emit.empty(x_dims, tensor_dtype(x.type))], [ident],
                          [emit.PARALLEL] * rank, pick_body)
    return out


def _barrier(value: ir.Value) -> ir.Value:
    """`value` behind a `util.optimization_barrier`, where its shape is static.

    IREE 3.13 miscompiles a scatter's `last` read along another dim by a later scatter with the
    same index (`b[idx] = 1.5; c = b * 1; c[:, idx] = 2`: CSE makes one `last` for both): it fuses
    the reduction into both pickers and computes garbage (tests/iree_repro/scatter_two_axes.mlir).
    A dynamic shape keeps no barrier: IREE cannot resolve `tensor.dim` through one."""
    if None in shape_of(value.type):
        return value
    return ir.Operation.create("util.optimization_barrier", results=[value.type], operands=[value]).result


def _scatter_add_vjp(ct, out, x, v, *indices, axes):
    if not bind.is_differentiable(x):
        return (None,) * (2 + len(indices))
    return (ct, apply("gather", ct, *indices, axes=axes, at=0), *(None for _ in indices))


def _scatter_vjp(ct, out, x, v, *indices, axes):
    if not bind.is_differentiable(x):
        return (None,) * (2 + len(indices))
    b_shape = bind.shape(indices[0])
    x_shape = bind.shape(x)
    if None in b_shape or None in x_shape:
        raise bind.NoVJP("the VJP of an indexed write into an array or with index arrays whose size varies "
                         "between calls is not supported yet")
    # Which b wrote each position (the last one), read back at every b: b is the writer iff it reads itself.
    order = bind.array(np.arange(int(np.prod(b_shape, dtype=np.int64))).reshape(b_shape), I64, ct)
    nobody = bind.array(np.full([x_shape[a] for a in axes], -1), I64, ct)
    front = list(range(len(axes)))
    winner = apply("equal", apply("gather", apply("scatter", nobody, order, *indices, axes=front), *indices,
                                  axes=front, at=0), order)
    picked = apply("gather", ct, *indices, axes=axes, at=0)
    mask = bind.expand_dims(winner, range(len(b_shape), len(bind.shape(picked))))
    dv = apply("where", mask, picked, bind.constant(0, ct))
    return (apply("scatter", ct, bind.zeros_like(v), *indices, axes=axes), dv, *(None for _ in indices))


SCATTER = primitive(
    "scatter",
    "NumPy `x[...] = v` through int64 index arrays of one shape B on `axes` (in range), `:` elsewhere, as a "
    "value; v is shaped like gather's result. Where indices repeat, the last in C order wins.",
    impl=_scatter_impl,
    shape_rule=_scatter_shape,
    dtype_rule=same_dtype,
    lower=_lower_scatter,
    arity=None,
    params=(AXES,),
    operand_rule=_scatter_operands,
    vjp=_scatter_vjp,
)

SCATTER_ADD = primitive(
    "scatter_add",
    "NumPy `np.add.at(x, index, v)` as a value, index arrays on `axes` as in scatter: repeated indices "
    "accumulate (numbers, not bool).",
    impl=_scatter_add_impl,
    shape_rule=_scatter_shape,
    dtype_rule=same_dtype,
    lower=_lower_scatter_add,
    arity=None,
    params=(AXES,),
    operand_rule=lambda x, v, *ix, **_: "scatter_add adds numbers, not bool" if x == np.bool_
    else _scatter_operands(x, v, *ix),
    vjp=_scatter_add_vjp,
    fp_events=fp_events("nonfinite", "overflow", "invalid"),  # sums, as embedding_grad
    approximate=True,
)


# flip --------------------------------------------------------------------------------


def _flip_shape(s, axes):
    if sorted(set(axes)) != list(axes) or any(not 0 <= a < len(s) for a in axes):
        raise ValueError(f"flip: axes {tuple(axes)} must be sorted, distinct and within rank {len(s)}")
    if any(s[a] is None for a in axes):
        raise ValueError("flip: a flipped dim must have a static size")
    return tuple(s)


def _lower_flip(view, x):
    """A generic over the result reading x at n-1-i along the flipped axes (`tensor.extract`: an affine map
    `n-1-d` is rejected by linalg's static shape check)."""
    shape = shape_of(x.type)
    rank = len(shape)
    ident = _amap(rank, [_d(i) for i in range(rank)])

    def body(a):
        coords = [arith.subi(emit.index(shape[i] - 1), _loop_index(i)) if i in view.axes else _loop_index(i)
                  for i in range(rank)]
        return tensor.extract(x, coords)

    (out,) = emit.generic([], [], [emit.empty(emit.dims(x), tensor_dtype(x.type))], [ident],
                          [emit.PARALLEL] * rank, body)
    return out


def _flip_vjp(ct, out, x, axes):
    return (apply("flip", ct, axes=axes) if bind.is_differentiable(x) else None,)


FLIP = primitive(
    "flip",
    "NumPy `np.flip(x, axes)`: x reversed along `axes` (sorted, static dims).",
    impl=lambda x, axes: np.flip(x, tuple(axes)) if len(axes) else np.asarray(x),
    shape_rule=_flip_shape,
    dtype_rule=same_dtype,
    lower=_lower_flip,
    arity=1,
    params=(Attr("axes", "i64s", "flipped axes, sorted"),),
    vjp=_flip_vjp,
    keeps_nonfinite=True,  # moves elements, drops none
)


# dynamic_slice and dynamic_update_slice ------------------------------------------------


def _check_box(x, sizes, strides, offsets) -> None:
    if not len(x) == len(sizes) == len(strides) == len(offsets):
        raise ValueError("one offset, size and stride per dimension is needed")
    if any(len(o) for o in offsets):
        raise ValueError("offsets must be 0-d")
    for d, n, st in zip(x, sizes, strides):
        if n is None or n < 0 or st <= 0 or (d is not None and n > 0 and (n - 1) * st >= d):
            raise ValueError(f"a box of {n} elements with stride {st} does not fit in dim {d}")


def _dynamic_slice_shape(x, *offsets, sizes, strides):
    _check_box(x, sizes, strides, offsets)
    return tuple(sizes)


def _box_index(x_offsets, sizes, strides):
    return tuple(slice(int(o), int(o) + n * st, st) for o, n, st in zip(x_offsets, sizes, strides))


def _offsets(x: ir.Value, offsets, sizes, strides) -> list[ir.Value]:
    """The offsets as `index` values, clamped so the box fits (memory safety; the front end guards)."""
    out = []
    for i, (o, n, st) in enumerate(zip(offsets, sizes, strides)):
        last = arith.subi(emit.as_index(emit.dim(x, i)), emit.index(max(n - 1, 0) * st + 1))
        out.append(arith.maxsi(arith.minsi(arith.index_cast(ir.IndexType.get(), tensor.extract(o, [])), last),
                               emit.index(0)))
    return out


def _dynamic(n: int) -> list[int]:
    return [ir.ShapedType.get_dynamic_stride_or_offset()] * n


def _lower_dynamic_slice(view, x, *offsets):
    sizes, strides = list(view.sizes), list(view.strides)
    return tensor.extract_slice(view.result.type, x, _offsets(x, offsets, sizes, strides), [], [],
                                _dynamic(len(sizes)), sizes, strides)


def _dynamic_slice_vjp(ct, out, x, *offsets, sizes, strides):
    if not bind.is_differentiable(x):
        return (None,) * (1 + len(offsets))
    return (apply("dynamic_update_slice", bind.zeros_like(x), ct, *offsets, strides=strides),
            *(None for _ in offsets))


DYNAMIC_SLICE = primitive(
    "dynamic_slice",
    "NumPy `x[o0:o0+n0*s0:s0, ...]` with offsets computed at run time (0-d int64 operands, the box in range) "
    "and static sizes and positive strides.",
    impl=lambda x, *offsets, sizes, strides: np.array(x[_box_index(offsets, sizes, strides)]),
    shape_rule=_dynamic_slice_shape,
    dtype_rule=lambda x, *offsets, **_: x,
    lower=_lower_dynamic_slice,
    arity=None,
    operand_rule=lambda x, *offsets, **_: _index_dtypes(*offsets),
    params=(
        Attr("sizes", "i64s", "result size per dimension"),
        Attr("strides", "i64s", "positive step per dimension"),
    ),
    vjp=_dynamic_slice_vjp,
)


def _dynamic_update_slice_shape(x, v, *offsets, strides):
    if any(d is None for d in v):
        raise ValueError("dynamic_update_slice: the update must have a static shape")
    _check_box(x, v, strides, offsets)
    return tuple(x)


def _dynamic_update_slice_impl(x, v, *offsets, strides):
    out = np.array(x, copy=True)
    out[_box_index(offsets, np.shape(v), strides)] = v
    return out


def _lower_dynamic_update_slice(view, x, v, *offsets):
    sizes, strides = list(shape_of(v.type)), list(view.strides)
    at = _offsets(x, offsets, sizes, strides)
    if len(sizes) > 1 and all(n == 1 for n in sizes) and not _in_loop(view.op):
        # One element of a 2-d or larger x (`dx[i, r, c] = g` at computed r, c): IREE 3.13 fails to
        # compile the insert_slice of the reshaped value ("expected rank to be smaller or equal to
        # the other rank") and miscompiles a tensor.insert into a constant; a select over x is
        # right. (Not in loops: x's size per iteration, and IREE's stream partitioning refuses it.)
        value, rank = tensor.extract(v, [emit.index(0)] * len(sizes)), len(sizes)
        ident = _amap(rank, [_d(i) for i in range(rank)])

        def body(a):
            hits = [arith.cmpi(arith.CmpIPredicate.eq, _loop_index(i), at[i]) for i in range(rank)]
            return arith.select(functools.reduce(arith.andi, hits), value, a[0])

        (out,) = emit.generic([x], [ident], [emit.empty(emit.dims(x), tensor_dtype(x.type))], [ident],
                              [emit.PARALLEL] * rank, body)
        return out
    return tensor.insert_slice(v, x, at, [], [], _dynamic(len(sizes)), sizes, strides)


def _in_loop(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name in ("scf.for", "scf.while"):
            return True
        parent = parent.parent
    return False


def _dynamic_update_slice_vjp(ct, out, x, v, *offsets, strides):
    if not bind.is_differentiable(x):
        return (None,) * (2 + len(offsets))
    return (apply("dynamic_update_slice", ct, bind.zeros_like(v), *offsets, strides=strides),
            apply("dynamic_slice", ct, *offsets, sizes=list(bind.shape(v)), strides=strides),
            *(None for _ in offsets))


DYNAMIC_UPDATE_SLICE = primitive(
    "dynamic_update_slice",
    "NumPy `x[o0:o0+n0*s0:s0, ...] = v` as a value, offsets computed at run time (0-d int64 operands, the box "
    "in range), v of static shape (n0, ...).",
    impl=_dynamic_update_slice_impl,
    shape_rule=_dynamic_update_slice_shape,
    dtype_rule=lambda x, v, *offsets, **_: x,
    lower=_lower_dynamic_update_slice,
    arity=None,
    operand_rule=lambda x, v, *offsets, **_: f"operand dtypes differ: {x}, {v}" if x != v
    else _index_dtypes(*offsets),
    params=(Attr("strides", "i64s", "positive step per dimension"),),
    vjp=_dynamic_update_slice_vjp,
    keeps_nonfinite=(1,),  # writes all of v (the box is in range); x's elements under it are dropped
)


# compress ----------------------------------------------------------------------------


def _compress_shape(x, mask):
    m = len(mask)
    if m == 0 or m > len(x) or any(a is not None and b is not None and a != b for a, b in zip(mask, x)):
        raise ValueError(f"compress: a mask of shape {tuple(mask)} must match the leading dims of {tuple(x)}")
    return (None,) + tuple(x[m:])


def _prefix_counts(flat_mask: ir.Value, total: int) -> ir.Value:
    """int64 (total,): how many of flat_mask[0..p] hold, per p (a masked reduction: total^2)."""
    one, zero = emit.scalar_constant(1, I64), emit.scalar_constant(0, I64)

    def body(a):  # loop dims: p (parallel), q (reduction)
        flag, acc = a
        counted = arith.andi(flag, arith.cmpi(arith.CmpIPredicate.ule, _loop_index(1), _loop_index(0)))
        return arith.addi(acc, arith.select(counted, one, zero))

    (prefix,) = emit.generic([flat_mask], [_amap(2, [_d(1)])], [emit.fill(0, [total], I64)], [_amap(2, [_d(0)])],
                             [emit.PARALLEL, emit.REDUCTION], body)
    return prefix


def _lower_compress(view, x, mask):
    """The elements (rows) of x where mask holds, in C order: prefix counts of the mask, then per result row j
    the position p with mask[p] and prefix[p] == j + 1, then those rows. Costs M^2 + count * M for M mask
    elements (the front end bounds M)."""
    m_rank = len(shape_of(mask.type))
    total = emit.product(emit.dims(mask))  # (a mask's dims equal x's leading ones: the front end guards it)
    rest = emit.dims(x)[m_rank:]
    flat_mask = emit.reshape(mask, [total])
    flat_x = emit.reshape(x, [total, *rest])
    i64 = element_type(I64)
    one, zero = emit.scalar_constant(1, I64), emit.scalar_constant(0, I64)
    prefix = _prefix_counts(flat_mask, total)
    last = arith.subi(emit.as_index(total), emit.index(1))
    count = arith.index_cast(ir.IndexType.get(), tensor.extract(prefix, [last]))

    def source_body(a):  # loop dims: j (parallel), p (reduction); the one matching p, max-reduced
        flag, before, acc = a
        j1 = arith.addi(arith.index_cast(i64, _loop_index(0)), one)
        hit = arith.andi(flag, arith.cmpi(arith.CmpIPredicate.eq, before, j1))
        return arith.maxsi(acc, arith.select(hit, arith.index_cast(i64, _loop_index(1)), zero))

    (source,) = emit.generic([flat_mask, prefix], [_amap(2, [_d(1)])] * 2, [emit.fill(0, [count], I64)],
                             [_amap(2, [_d(0)])], [emit.PARALLEL, emit.REDUCTION], source_body)
    rank = 1 + len(rest)
    ident = _amap(rank, [_d(i) for i in range(rank)])

    def pick_body(a):
        return tensor.extract(flat_x, [_clamped(a[0], total), *(_loop_index(1 + r) for r in range(len(rest)))])

    (out,) = emit.generic([source], [_amap(rank, [_d(0)])], [emit.empty([count, *rest], tensor_dtype(x.type))],
                          [ident], [emit.PARALLEL] * rank, pick_body)
    return out


def _compress_vjp(ct, out, x, mask):
    if not bind.is_differentiable(x):
        return None, None
    return apply("expand", ct, mask), None


COMPRESS = primitive(
    "compress",
    "NumPy `x[mask]` for a bool mask over x's leading dims (of equal sizes): the selected elements (rows) in C "
    "order, a first dim as long as the mask's count of True (dynamic).",
    impl=lambda x, mask: x[mask],
    shape_rule=_compress_shape,
    dtype_rule=lambda x, mask: x,
    lower=_lower_compress,
    arity=2,
    operand_rule=lambda x, mask, **_: None if mask == np.bool_ else "the mask must be bool",
    vjp=_compress_vjp,
)


# bincount ----------------------------------------------------------------------------------


def _bincount_shape(x, *weights, minlength):
    if len(x) != 1 or weights and (len(weights[0]) != 1 or unify_dims(x[0], weights[0][0]) is None):
        raise ValueError(f"bincount: a 1-d array (and weights of its length), not {tuple(x)}")
    return (None,)


def _bincount_dtype(x, *weights, minlength):
    return np.dtype(np.float64) if weights else I64


def _lower_bincount(view, x, *weights):
    """max(x) + 1 entries (at least minlength: a dynamic dim), entry j the count of x equal to j
    (the sum of their weights): a reduction over x per entry, len(x) * count."""
    i64 = element_type(I64)
    (top,) = emit.generic([x], [_amap(1, [_d(0)])], [emit.fill(-1, [], I64)], [_amap(1, [])], [emit.REDUCTION],
                          lambda a: arith.maxsi(a[0], a[1]))
    size = arith.addi(arith.index_cast(ir.IndexType.get(), tensor.extract(top, [])), emit.index(1))
    count = arith.maxsi(size, emit.index(view.minlength))
    dtype = tensor_dtype(view.result.type)
    zero = emit.scalar_constant(0, dtype)
    one = emit.scalar_constant(1, dtype)

    def body(a):  # loop dims: j (parallel), i (reduction)
        hit = arith.cmpi(arith.CmpIPredicate.eq, a[0], arith.index_cast(i64, _loop_index(0)))
        term = a[1] if weights else one
        return (arith.addf if dtype.kind == "f" else arith.addi)(a[-1], arith.select(hit, term, zero))

    (out,) = emit.generic([x, *weights], [_amap(2, [_d(1)])] * (1 + len(weights)), [emit.fill(0, [count], dtype)],
                          [_amap(2, [_d(0)])], [emit.PARALLEL, emit.REDUCTION], body)
    return out


BINCOUNT = primitive(
    "bincount",
    "NumPy `np.bincount(x, weights, minlength)` of non-negative int64 x (the front end guards them): "
    "a dynamic dim of max(x) + 1 entries, at least minlength.",
    impl=lambda x, *weights, minlength: np.bincount(x, *weights, minlength=minlength),
    shape_rule=_bincount_shape,
    dtype_rule=_bincount_dtype,
    lower=_lower_bincount,
    arity=None,
    params=(Attr("minlength", "int", "the least number of entries"),),
    operand_rule=lambda x, *weights, **_: None if x == I64 and all(w == np.float64 for w in weights)
    else "bincount counts int64 values, with float64 weights",
    vjp=bind.NotDifferentiable("counts"),
    approximate=True,  # weighted sums, in another order than NumPy's
)


def _expand_shape(ct, mask):
    if not ct or None in mask or None in ct[1:] or len(mask) == 0:
        raise ValueError(f"expand: rows {tuple(ct)} into a static mask of shape {tuple(mask)}")
    return tuple(mask) + tuple(ct[1:])


def _expand_impl(ct, mask):
    out = np.zeros(np.shape(mask) + np.shape(ct)[1:], np.asarray(ct).dtype)
    out[mask] = ct
    return out


def _lower_expand(view, ct, mask):
    """Zeros with ct's rows where mask holds, in order: row p reads ct[prefix[p] - 1], or a zero row appended
    to ct (so an empty ct is never read)."""
    m_shape = shape_of(mask.type)
    total = int(np.prod(m_shape, dtype=np.int64))
    dtype = tensor_dtype(ct.type)
    ct_dims = emit.dims(ct)
    rest = ct_dims[1:]
    rows = emit.as_index(ct_dims[0])
    padded = tensor.insert_slice(ct, emit.fill(0, [arith.addi(rows, emit.index(1)), *rest], dtype),
                                 [], emit.mixed(ct_dims)[0], [], [0] * len(ct_dims), emit.mixed(ct_dims)[1],
                                 [1] * len(ct_dims))
    flat_mask = emit.reshape(mask, [total])
    prefix = _prefix_counts(flat_mask, total)
    rank = 1 + len(rest)
    ident = _amap(rank, [_d(i) for i in range(rank)])
    one = emit.scalar_constant(1, I64)
    rows_i64 = arith.index_cast(element_type(I64), rows)

    def body(a):
        flag, before, _ = a
        # (clamped: where the front end's guard that ct has the mask's count of rows fails, this still runs)
        row = arith.minsi(arith.select(flag, arith.subi(before, one), rows_i64), rows_i64)
        coord = arith.index_cast(ir.IndexType.get(), row)
        return tensor.extract(padded, [coord, *(_loop_index(1 + r) for r in range(len(rest)))])

    (flat,) = emit.generic([flat_mask, prefix], [_amap(rank, [_d(0)])] * 2, [emit.empty([total, *rest], dtype)],
                           [ident], [emit.PARALLEL] * rank, body)
    return emit.reshape(flat, [*m_shape, *rest])


def _expand_vjp(g, out, ct, mask):
    if not bind.is_differentiable(ct):
        return None, None
    rows = apply("compress", g, mask)  # a dynamic first dim: back to ct's type where that is static
    return (rows if bind.shape(rows) == bind.shape(ct) else apply("reshape_as", rows, ct)), None


EXPAND = primitive(
    "expand",
    "The gradient of compress: zeros shaped mask.shape + ct.shape[1:] with ct's rows, in order, where the "
    "mask holds (NumPy `out[mask] = ct`); ct has as many rows as the mask has True.",
    impl=_expand_impl,
    shape_rule=_expand_shape,
    dtype_rule=lambda ct, mask: ct,
    lower=_lower_expand,
    arity=2,
    operand_rule=lambda ct, mask, **_: None if mask == np.bool_ else "the mask must be bool",
    vjp=_expand_vjp,
)
