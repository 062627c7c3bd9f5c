"""NumPy indexing on front-end values: `x[key]` reads, `x[key] = v` writes, `np.add.at`.

Arrays are SSA values, so a write is a new value: `setitem(x, key, v)` is
the array `x` would hold after `x[key] = v`, same shape and dtype. Whose
name or buffer then holds that value (a local, or an argument the caller
sees) is the graph generator's business, not this module's.

Keys are Python keys as `as_key` makes them from what the graph generator
evaluated: ints, slices, None, Ellipsis, lists and arrays known when
compiling, and computed values (`Tensor`s: int scalars, int arrays, bool
arrays; slices whose bounds are Tensors), alone or in a tuple.

How each kind of key is computed (NumPy's rules, reproduced here):
- basic keys (ints, slices, None, Ellipsis, computed int scalars, slices
  with computed bounds) select a strided box (`_Box`): a read is `slice`
  (or `dynamic_slice` when an offset is computed), a write `update_slice`
  (`dynamic_update_slice`); a negative step is the box with positive step,
  flipped (`flip`). A read is a view of `x` (`View`; one whose offset is
  computed has no host replay), unless every dim is picked by an int (a
  scalar copy).
- A computed int index wraps when negative; a range guard deopts where
  NumPy raises IndexError (the interpreter then raises it). A slice with
  computed bounds keeps a static length, the one profiling saw at the site
  (reads), the value's (writes), or the constant its stop minus its start
  folds to (`_linear`): a guard deopts when the clamped slice is not that
  long.
- Integer-array indices (lists, arrays, computed int arrays; ints join them
  when an array is present) are advanced indexing: the basic parts are
  sliced first, the advanced axes moved to the front, the index arrays
  broadcast, wrapped and range-guarded, and `gather` picks the elements; the
  broadcast index dims go where the first advanced index was when the
  advanced indices are adjacent in the key, else first (NumPy's rule). A
  copy, never a view. Writes `scatter` (repeated indices: the last wins, as
  NumPy), `add_at` accumulates (`scatter_add`).
- A bool array known when compiling is its `nonzero()` int arrays. A
  computed bool mask over x's leading dims: a read is `compress` (a copy
  whose first dim, the mask's count, is dynamic: guarded >= 2, the runtime's
  invariant for dynamic dims; masks of at most MAX_MASK elements), a write
  a `where` (of one row for all, of `expand`ed rows, or of y for `x[m] = y[m]`).
- The value of a write broadcasts to the selection's shape (leading 1s
  dropped) and is cast to `x`'s dtype with NumPy's unsafe casting (Python
  scalars that do not fit the dtype raise OverflowError: refused).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import semantics as S
from pyfront.dialects.mlir import arith, ir
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives import by_op_name, get
from pyfront.errors import Unsupported
from pyfront.values import BoundedInt, Known, Seq, Tensor

INT64 = np.dtype(np.int64)


@dataclass(frozen=True, eq=False)
class ComputedSlice:
    """What the graph generator makes of `a:b:c` with a computed bound (a Tensor or a Known each)."""

    start: Any
    stop: Any
    step: Any


def as_key(v: Any) -> Any:
    """A key as the graph generator evaluated it (Known, Tensor, Seq, ComputedSlice) as a Python key."""
    if isinstance(v, Known):
        return v.value
    if isinstance(v, Tensor):
        return v
    if isinstance(v, ComputedSlice):
        return slice(*(as_key(p) for p in (v.start, v.stop, v.step)))
    if isinstance(v, Seq) and v.kind is tuple:
        return tuple(as_key(i) for i in v.items)
    if isinstance(v, Seq) and v.kind is list:  # `x[:, perm]`: the array NumPy makes of the list
        return [i.value for i in v.items] if all(isinstance(i, Known) for i in v.items) else S.array_from_sequence(v)
    raise Unsupported(f"indexing with {S.describe(v)} is not supported yet")


# Parsing -------------------------------------------------------------------------


def _part(k: Any) -> Any:
    """One part of a key, normalized: ints for NumPy ints, arrays for lists; Tensors checked."""
    if isinstance(k, Known):
        k = k.value
    if k is None or k is Ellipsis or type(k) is int:
        return k
    if isinstance(k, (bool, np.bool_)):
        raise Unsupported("indexing with a bool scalar is not supported yet")
    if isinstance(k, np.integer):
        return int(k)
    if isinstance(k, slice):
        bounds = [_slice_bound(p) for p in (k.start, k.stop, k.step)]
        return slice(*bounds)
    if isinstance(k, (list, tuple, range)):  # sequences inside a key are index arrays (`x[range(n), y]`)
        k = np.asarray(k) if len(k) else np.zeros(0, np.intp)
    if isinstance(k, np.ndarray):
        _check_index_dtype(k.dtype, k.ndim, "")
        if k.ndim == 0 and k.dtype.kind == "b":
            raise Unsupported("indexing with a 0-d bool array is not supported yet")
        return int(k) if k.ndim == 0 else k
    if isinstance(k, Tensor):
        _check_index_dtype(k.dtype, k.ndim, "computed ")
        if k.dtype.kind == "b" and k.ndim == 0:
            raise Unsupported("indexing with a computed bool scalar is not supported yet")
        return k
    what = f"a {type(k).__name__}" if k.__class__.__module__ == "builtins" else "this kind of value"
    raise Unsupported(f"indexing with {what} is not supported")


def _check_index_dtype(dtype: np.dtype, ndim: int, what: str) -> None:
    if dtype.kind not in "iub":
        kind = "value" if ndim == 0 else "array"
        raise Unsupported(f"indexing with a {what}{dtype} {kind} raises IndexError in NumPy")
    if dtype == np.uint64 and ndim == 0:  # NumPy converts it to a Python int: past int64 it raises
        raise Unsupported(f"indexing with a {what}uint64 scalar is not supported yet")


def _slice_bound(p: Any) -> Any:
    if isinstance(p, Known):
        p = p.value
    if p is None or type(p) is int:
        return p
    if isinstance(p, np.integer):
        return int(p)
    if isinstance(p, Tensor) and p.ndim == 0 and p.dtype.kind in "iu" and p.dtype != np.uint64:
        return p
    raise Unsupported(f"a slice bound of {S.describe(p) if isinstance(p, Tensor) else type(p).__name__} is not "
                      "supported (slice indices must be integers)")


def _is_array(p: Any) -> bool:
    return isinstance(p, np.ndarray) or isinstance(p, Tensor) and p.ndim > 0


def _is_computed_slice(p: Any) -> bool:
    return isinstance(p, slice) and any(isinstance(b, Tensor) for b in (p.start, p.stop, p.step))


def _parts(shape: tuple, key: Any) -> list:
    """The key's parts, one per dim of `x` (bool arrays: one per dim they cover) plus the Nones."""
    keys = key if isinstance(key, tuple) else (key,)
    parts = [_part(k) for k in keys]
    if sum(p is Ellipsis for p in parts) > 1:
        raise Unsupported("an index can only have a single ellipsis ('...') (IndexError)")
    used = sum(p.ndim if _is_mask(p) else 1 for p in parts if p is not None and p is not Ellipsis)
    if used > len(shape):
        raise Unsupported(f"too many indices for array: array is {len(shape)}-dimensional, but {used} were "
                          "indexed (IndexError)")
    fill = [slice(None)] * (len(shape) - used)
    if any(p is Ellipsis for p in parts):
        i = next(i for i, p in enumerate(parts) if p is Ellipsis)
        return parts[:i] + fill + parts[i + 1:]
    return parts + fill


def _is_mask(p: Any) -> bool:
    return _is_array(p) and p.dtype.kind == "b" or isinstance(p, np.ndarray) and p.dtype == np.bool_


def _known_masks_as_indices(shape: tuple, parts: list) -> list:
    """Bool arrays known when compiling as their `nonzero()` int arrays (NumPy's definition)."""
    out, dim = [], 0
    for p in parts:
        if isinstance(p, np.ndarray) and p.dtype == np.bool_:
            covered = shape[dim:dim + p.ndim]
            if p.shape != covered:
                raise Unsupported(f"boolean index of shape {p.shape} does not match the indexed dims {covered} "
                                  "(IndexError)")
            out += list(p.nonzero())
            dim += p.ndim
            continue
        out.append(p)
        dim += p is not None
    return out


# Basic keys: boxes ------------------------------------------------------------------


@dataclass(frozen=True)
class _Box:
    """A basic index as a strided box of `x`: per dim, offset (int or 0-d int64 Tensor), size, positive stride."""

    offsets: tuple
    sizes: tuple[int, ...]  # -1: to the end of a dynamic dim
    strides: tuple[int, ...]
    flips: tuple[int, ...]  # dims of x reversed first (negative steps); their offsets count from the end
    shape: tuple[int | None, ...]  # the result: ints dropped, None (newaxis) inserted as 1
    scalar: bool  # every dim picked by an int: NumPy returns a scalar copy

    @property
    def dynamic(self) -> bool:
        return any(isinstance(o, Tensor) for o in self.offsets)


def _box(shape: tuple, parts: list, computed_sizes: list[int]) -> _Box:
    """The box of basic `parts`; `computed_sizes` gives the length of each computed slice, in order."""
    offsets, sizes, strides, flips, out_shape = [], [], [], [], []
    sizes_left = list(computed_sizes)
    dim = 0
    for k in parts:
        if k is None:
            out_shape.append(1)
            continue
        d = shape[dim]
        if isinstance(k, Tensor):
            if d is None:
                raise Unsupported("a computed index into a dimension of varying size is not supported yet")
            offsets.append(_checked_index(k, d, dim)), sizes.append(1), strides.append(1)
        elif d is None:  # a relaxed dim: known to be >= 2 at run time
            if type(k) is int and k in (0, 1):
                offsets.append(k), sizes.append(1), strides.append(1)
            elif k == slice(None):
                offsets.append(0), sizes.append(-1), strides.append(1)
                out_shape.append(None)
            else:
                raise Unsupported(f"index {k!r} on a dimension of varying size is not supported yet")
        elif type(k) is int:
            if not -d <= k < d:
                raise Unsupported(f"index {k} is out of bounds for axis {dim} with size {d} (IndexError)")
            offsets.append(k % d), sizes.append(1), strides.append(1)
        elif _is_computed_slice(k):
            n = sizes_left.pop(0) if sizes_left else None
            if n is None:
                n = _symbolic_length(k, d)
            offsets.append(_computed_slice_offset(k, d, n)), sizes.append(n), strides.append(k.step or 1)
            out_shape.append(n)
        else:
            start, stop, step = k.indices(d)
            n = len(range(start, stop, step))
            if step < 0 and n > 1:  # x reversed along this dim, then a positive step
                flips.append(len(sizes))
                start = d - 1 - start
            offsets.append(start if n else 0), sizes.append(n), strides.append(abs(step))
            out_shape.append(n)
        dim += 1
    scalar = not out_shape and all(type(k) is int or isinstance(k, Tensor) for k in parts)
    return _Box(tuple(offsets), tuple(sizes), tuple(strides), tuple(flips), tuple(out_shape), scalar)


def _symbolic_length(k: slice, d: int) -> int:
    """The length of slice `k` with computed bounds when its stop minus its start folds to a constant
    (`X[i*B:(i+1)*B]`, `x[i:i+3]`), clamped as NumPy would if the start were 0 (a guess: the offset's guard
    checks the real length at run time)."""
    step = k.step if k.step is not None else 1
    start, stop = ((({}, default) if b is None else _linear(b)) for b, default in ((k.start, 0), (k.stop, d)))
    leaves = start[0].keys() | stop[0].keys()
    if isinstance(step, Tensor) or step <= 0 or any(stop[0].get(v, 0) != start[0].get(v, 0) for v in leaves):
        raise Unsupported("a slice with computed bounds needs a length known when compiling (from profiling, "
                          "the shape of the value written, or bounds that differ by a constant)")
    return len(range(0, min(max(stop[1] - start[1], 0), d), step))


def _linear(b: Any, depth: int = 8) -> tuple[dict, int]:
    """A slice bound as {leaf IR value: coefficient} + a constant, through the additions, subtractions,
    negations, integer casts and multiplications by constants it was computed with (leaves: anything else)."""
    if type(b) is int:
        return {}, b
    value = b.value if isinstance(b, Tensor) else b
    owner = value.owner if isinstance(value, ir.OpResult) else None
    name = owner.name if owner is not None and depth else ""
    if name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, ir.DenseIntElementsAttr) and attr.is_splat:
            return {}, int(ir.IntegerAttr(attr.get_splat_value()).value)
    elif name in ("pyfront.add", "pyfront.subtract"):
        (ta, ca), (tb, cb) = (_linear(o, depth - 1) for o in owner.operands)
        sign = -1 if name == "pyfront.subtract" else 1
        return {v: ta.get(v, 0) + sign * tb.get(v, 0) for v in ta.keys() | tb.keys()}, ca + sign * cb
    elif name == "pyfront.multiply":
        (ta, ca), (tb, cb) = (_linear(o, depth - 1) for o in owner.operands)
        if not ta or not tb:  # a constant factor
            terms, const, scale = (tb, cb, ca) if not ta else (ta, ca, cb)
            return {v: c * scale for v, c in terms.items()}, const * scale
    elif name in ("pyfront.astype", "pyfront.negative") and Tensor(owner.operands[0], np.ndarray).dtype.kind in "iu":
        terms, const = _linear(owner.operands[0], depth - 1)
        sign = -1 if name == "pyfront.negative" else 1
        return {v: sign * c for v, c in terms.items()}, sign * const
    return {value: 1}, 0


def _computed_slice_sizes(parts: list, result_shape: tuple | None) -> list[int]:
    """The lengths of the computed slices among basic `parts`, read off the result's shape."""
    if result_shape is None:
        return []
    out, pos = [], 0
    for k in parts:
        if k is None or isinstance(k, slice):
            if _is_computed_slice(k):
                if pos >= len(result_shape) or result_shape[pos] is None:
                    return []
                out.append(result_shape[pos])
            pos += 1
    return out


def _int64(v: Any) -> Tensor:
    return S.astype(v, INT64, np.int64) if isinstance(v, Tensor) else S.constant(np.int64(v))


def _checked_index(i: Tensor, d: int, axis: int) -> Tensor:
    """A computed index, guarded -d <= i < d (NumPy raises IndexError otherwise) and wrapped.

    A loop counter needs no guard: its range is known."""
    if isinstance(i, BoundedInt):
        if i.lower < 0 or i.upper > d:
            raise Unsupported(f"index {i.upper - 1 if i.upper > d else i.lower} is out of bounds for axis {axis} "
                              f"with size {d} (IndexError)")
        return _int64(i)
    index = _int64(i)
    in_range = S.ufunc(np.logical_and, S.ufunc(np.greater_equal, index, Known(-d)), S.ufunc(np.less, index, Known(d)))
    if index.ndim:
        in_range = Tensor(S.reduce_all(in_range.value), np.bool_)
    S.guard(in_range.value, "value", f"the computed index is within bounds for axis {axis} with size {d}")
    return S.where(S.ufunc(np.less, index, Known(0)), S.ufunc(np.add, index, Known(d)), index)


def _clamp_bound(b: Any, d: int, default: int) -> Tensor:
    """A slice bound as NumPy clamps it for a positive step: None -> default, negative + d, into [0, d]."""
    if b is None:
        return S.constant(np.int64(default))
    v = _int64(b)
    shifted = S.where(S.ufunc(np.less, v, Known(0)), S.ufunc(np.add, v, Known(d)), v)
    return S.ufunc(np.minimum, S.ufunc(np.maximum, shifted, Known(0)), Known(d))


def _computed_slice_offset(k: slice, d: int, n: int) -> Tensor:
    """The start of slice `k` on a dim of size `d`, guarded to select exactly `n` >= 1 elements."""
    step = k.step if k.step is not None else 1
    if isinstance(step, Tensor) or step <= 0:
        raise Unsupported("a slice with computed bounds needs a positive step known when compiling")
    if n < 1:
        raise Unsupported("an empty slice with computed bounds is not supported yet")
    if _selects_exactly(k, d, n, step):
        return _int64(k.start)
    start, stop = _clamp_bound(k.start, d, 0), _clamp_bound(k.stop, d, d)
    span = S.ufunc(np.subtract, stop, start)
    exact = S.ufunc(np.logical_and, S.ufunc(np.greater, span, Known((n - 1) * step)),
                    S.ufunc(np.less_equal, span, Known(n * step)))
    S.guard(exact.value, "value", f"the slice with computed bounds selects {n} elements, as when profiled")
    return start


def _selects_exactly(k: slice, d: int, n: int, step: int) -> bool:
    """Whether slice `k` provably selects `n` elements of a dim of size `d`: its bounds are a loop
    counter's arithmetic (`x[i * s:i * s + w]`), whose ranges keep them in [0, d], and they differ by
    a constant. Inside a compiled loop, where no guard can go, this is what lets such a slice compile."""
    if not (isinstance(k.start, BoundedInt) and isinstance(k.stop, BoundedInt)):
        return False
    (start_terms, start), (stop_terms, stop) = _linear(k.start), _linear(k.stop)
    return (start_terms == stop_terms and k.start.lower >= 0 and k.stop.upper - 1 <= d
            and (n - 1) * step < stop - start <= n * step)


def _read_box(x: Tensor, box: _Box) -> Any:
    """The box of `x` (not yet reshaped to the result's shape)."""
    if box.flips:
        x = Tensor(S.build("flip", [x.value], axes=box.flips), np.ndarray)
    if box.dynamic:
        if None in x.shape:
            raise Unsupported("a computed index into an array whose shape varies is not supported yet")
        offsets = [_int64(o).value for o in box.offsets]
        value = get("dynamic_slice").build([x.value, *offsets], sizes=box.sizes, strides=box.strides)
    else:
        value = get("slice").build([x.value], offsets=box.offsets, sizes=box.sizes, strides=box.strides)
    return value


def _write_box(x: Tensor, box: _Box, region: Any) -> Tensor:
    """`x` with its box (as `_read_box` reads it) replaced by `region` (shaped like the box)."""
    target = S.build("flip", [x.value], axes=box.flips) if box.flips else x.value
    if box.dynamic:
        offsets = [_int64(o).value for o in box.offsets]
        updated = get("dynamic_update_slice").build([target, region, *offsets], strides=box.strides)
    elif all(o == 0 for o in box.offsets) and box.sizes == x.shape and all(st == 1 for st in box.strides):
        updated = region  # the whole array
    else:
        updated = get("update_slice").build([target, region], offsets=box.offsets, strides=box.strides)
    if box.flips:
        updated = S.build("flip", [updated], axes=box.flips)
    return Tensor(updated, np.ndarray)


def _basic_read(x: Tensor, parts: list, key: Any, result_shape: tuple | None) -> Tensor:
    box = _box(x.shape, parts, _computed_slice_sizes(parts, result_shape))
    result = S._reshape_value(_read_box(x, box), box.shape)
    has_ellipsis = any(k is Ellipsis for k in (key if isinstance(key, tuple) else (key,)))
    if box.scalar and not has_ellipsis:  # (x[1, 2, ...] is a 0-d view)
        return Tensor(result, x.dtype.type)  # a scalar copy, not a view
    redo = lambda b: getitem(b, key, result_shape)  # noqa: E731
    write_back = lambda b, v: setitem(b, key, v)  # noqa: E731
    # The host cannot replay a view whose offset was computed (replay None).
    return S.view_of(x, result, None if box.dynamic else lambda a: a[key], redo, write_back)


# Advanced keys: gathers --------------------------------------------------------------


@dataclass(frozen=True)
class _Advanced:
    """An advanced key: the basic key to slice first, then index arrays on some dims of that box."""

    box_parts: list  # basic parts, one per dim of x (advanced dims: `:`)
    index_dims: list[int]  # dims of the box the index arrays index, in key order
    indices: list[Tensor]  # int64, wrapped, range-guarded, broadcast to one shape
    layout: list  # per result dim: ("one",), ("index", j) for dim j of the broadcast shape, ("box", dim)


def _advanced(x_shape: tuple, parts: list) -> _Advanced:
    box_parts, index_dims, raw, positions = [], [], [], []
    dim = 0
    for pos, k in enumerate(parts):
        if k is None:
            continue
        if _is_array(k) or type(k) is int or isinstance(k, Tensor):
            box_parts.append(slice(None))
            index_dims.append(dim), raw.append(k), positions.append(pos)
        else:
            if _is_computed_slice(k):
                raise Unsupported("a slice with computed bounds next to index arrays is not supported yet")
            box_parts.append(k)
        dim += 1
    box = _box(x_shape, box_parts, [])
    sizes = [d if n == -1 else n for d, n in zip(x_shape, box.sizes)]  # the box's, per dim of x
    indices = [_index_array(k, sizes[d], d) for k, d in zip(raw, index_dims)]
    shapes = [t.shape for t in indices]
    if any(None in s for s in shapes) and len(indices) > 1:
        raise Unsupported("several index arrays, one of a shape that varies between calls, are not supported yet")
    try:
        b_shape = shapes[0] if len(indices) == 1 else np.broadcast_shapes(*shapes)
    except ValueError:
        raise Unsupported("shape mismatch: indexing arrays could not be broadcast together (IndexError)") from None
    indices = [t if t.shape == b_shape else S.broadcast_to(t, b_shape) for t in indices]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    b_dims = [("index", j) for j in range(len(b_shape))]
    layout = [] if adjacent else list(b_dims)
    dim = 0
    for pos, k in enumerate(parts):
        if k is None:
            layout.append(("one",))
            continue
        if dim in index_dims:
            if adjacent and pos == positions[0]:
                layout += b_dims
        else:
            layout.append(("box", dim))
        dim += 1
    return _Advanced(box_parts, index_dims, indices, layout)


def _index_array(k: Any, d: int | None, axis: int) -> Tensor:
    """An int index (array, list, int or computed) as int64, wrapped; out of range: refused or guarded."""
    if d is None:
        raise Unsupported("index arrays into a dimension of varying size are not supported yet")
    if isinstance(k, Tensor):
        return _checked_index(k, d, axis)
    a = np.asarray(k)
    a = a.astype(np.int64) if a.dtype == np.uint64 else a  # wraps (2**64 - 1 is -1), as NumPy's cast to intp
    bad = (a < -d) | (a >= d)
    if bad.any():
        raise Unsupported(f"index {a[bad].flat[0]} is out of bounds for axis {axis} with size {d} (IndexError)")
    return S.constant(np.where(a < 0, a + d, a).astype(np.int64))


def _gathered_order(adv: _Advanced, b_rank: int) -> list:
    """The dims of `gather`'s result: the broadcast index dims, then the box's other dims in order."""
    others = [("box", d) for d in range(len(adv.box_parts)) if d not in adv.index_dims]
    return [("index", j) for j in range(b_rank)] + others


def _advanced_read(x: Tensor, parts: list) -> Tensor:
    adv = _advanced(x.shape, parts)
    box = _box(x.shape, adv.box_parts, [])
    boxed = _read_box(x, box)
    gathered = S.build("gather", [boxed] + [t.value for t in adv.indices], axes=adv.index_dims, at=0)
    order = _gathered_order(adv, adv.indices[0].ndim)
    kept = [entry for entry in adv.layout if entry != ("one",)]
    perm = [order.index(entry) for entry in kept]
    if perm != list(range(len(perm))):
        gathered = get("transpose").build([gathered], perm=perm)
    shape = tuple(1 if e == ("one",) else Tensor(gathered, np.ndarray).shape[kept.index(e)] for e in adv.layout)
    result = S._reshape_value(gathered, shape)
    if not shape:
        return Tensor(result, x.dtype.type)  # every index 0-d: NumPy returns a scalar
    return Tensor(result, np.ndarray)  # a copy


def _check_shape(x: Tensor, parts: list, got: tuple) -> None:
    """NumPy's result shape for `parts` on an array shaped like `x` (computed parts as zeros) must be `got`."""
    if None in x.shape or any(isinstance(p, Tensor) and None in p.shape for p in parts):
        return  # (the rules checked what they can of a shape that varies)
    dummy = np.broadcast_to(np.zeros((), np.int8), x.shape)
    key = []
    for p in parts:
        if isinstance(p, Tensor):
            key.append(np.zeros(p.shape, np.int64) if p.dtype.kind != "b" else np.ones(p.shape, bool))
        elif _is_computed_slice(p):
            key.append(slice(None))
        else:
            key.append(p)
    try:
        want = dummy[tuple(key)].shape
    except IndexError:
        return
    if not any(_is_computed_slice(p) for p in parts) and want != got:  # a bug here: refuse, never a wrong shape
        raise Unsupported(f"internal: indexing computed a result of shape {got}, NumPy's is {want}")


# The API -----------------------------------------------------------------------------------


def getitem(x: Tensor, key: Any, result_shape: tuple | None = None) -> Tensor:
    """`x[key]`; `result_shape`, the shape profiling saw, fixes the length of slices with computed bounds."""
    if x.pytype is not np.ndarray:
        raise Unsupported(f"indexing a {S.describe(x)} is not supported")
    parts = _known_masks_as_indices(x.shape, _parts(x.shape, key))
    if any(_is_mask(p) for p in parts):
        return _masked_read(x, parts)
    if any(_is_array(p) for p in parts):
        result = _advanced_read(x, parts)
    else:
        result = _basic_read(x, parts, key, result_shape)
        if isinstance(result, Tensor) and _has_0d_index_array(key):
            result = Tensor(result.value, result.pytype)  # indexing by a 0-d array copies, as an int would not
    _check_shape(x, parts, result.shape)
    return result


def _has_0d_index_array(key: Any) -> bool:
    """A 0-d int array in the key (not a NumPy int): NumPy indexes by it as by an int, but it is an
    advanced index, so the result is a copy (`a[np.array(1)]` shares no memory with `a`)."""
    def is_0d_array(k):
        if isinstance(k, Known):
            return isinstance(k.value, np.ndarray) and k.value.ndim == 0
        return isinstance(k, Tensor) and k.pytype is np.ndarray and k.ndim == 0
    return any(is_0d_array(k) for k in (key if isinstance(key, tuple) else (key,)))


def setitem(x: Tensor, key: Any, value: Any) -> Tensor:
    """The value of `x` after `x[key] = value`: the same shape and dtype as `x`."""
    if x.pytype is not np.ndarray:
        raise Unsupported(f"assigning into a {S.describe(x)} (NumPy scalars are immutable)")
    if None in x.shape:
        raise Unsupported("writing into an array whose shape varies between calls is not supported yet")
    parts = _known_masks_as_indices(x.shape, _parts(x.shape, key))
    v = _cast_for_store(value, x.dtype)
    if any(_is_mask(p) for p in parts):
        return _masked_write(x, parts, v, lambda old, new: new)
    if any(_is_array(p) for p in parts):
        return _advanced_write(x, parts, v, "scatter")
    return _basic_write(x, parts, v)


def take(x: Tensor, indices: Any, axis: int) -> Tensor:
    """`np.take(x, indices, axis)` (mode 'raise'): x[..., indices, ...] at `axis`, a C-ordered copy."""
    part = _part(indices)
    if type(part) is int or isinstance(part, Tensor) and part.ndim == 0 or not _is_array(part) or _is_mask(part):
        picked = getitem(x, (slice(None),) * axis + (indices,))
        return Tensor(picked.value, picked.pytype) if isinstance(picked, Tensor) else picked  # a copy, never a view
    index = _index_array(part, x.shape[axis], axis)
    return Tensor(S.build("gather", [x.value, index.value], axes=[axis], at=axis), np.ndarray)


def add_at(x: Tensor, key: Any, value: Any, ufunc: np.ufunc) -> Tensor:
    """The value of `x` after `ufunc.at(x, key, value)` for np.add / np.subtract: repeated indices accumulate."""
    if ufunc not in (np.add, np.subtract):
        raise Unsupported(f"np.{ufunc.__name__}.at is not supported yet (only np.add.at and np.subtract.at)")
    if x.pytype is not np.ndarray or None in x.shape:
        raise Unsupported(f"np.{ufunc.__name__}.at on a {S.describe(x)} is not supported yet")
    if x.dtype == np.bool_:
        raise Unsupported(f"np.{ufunc.__name__}.at on a bool array is not supported yet")
    dtype = _ufunc_at_dtype(x, value)
    if dtype != x.dtype:
        raise Unsupported(f"np.{ufunc.__name__}.at with a {dtype} result into a {x.dtype} array is not "
                          "supported yet (NumPy casts or raises)")
    v = _cast_for_store(value, x.dtype)
    if ufunc is np.subtract:  # x - v == x + (-v) exactly, also for wrapping ints
        v = S.ufunc(np.negative, v)
    parts = _known_masks_as_indices(x.shape, _parts(x.shape, key))
    if any(_is_mask(p) for p in parts):
        return _masked_write(x, parts, v, lambda old, new: S.ufunc(np.add, old, new))
    if any(_is_array(p) for p in parts):
        return _advanced_write(x, parts, v, "scatter_add")
    current = _basic_read(x, parts, key, None)
    selected = current.shape
    return _basic_write(x, parts, S.ufunc(np.add, current, S.broadcast_to(_fit(v, selected), selected)))


def _ufunc_at_dtype(x: Tensor, value: Any) -> np.dtype:
    """The dtype of `x[i] + value` as the ufunc computes it (Python scalars are weak)."""
    if isinstance(value, Known):
        operand = value.value if type(value.value) in (int, float, bool) else np.asarray(value.value)
    elif isinstance(value, Tensor):
        operand = value.pytype(0) if value.is_python_scalar else np.zeros((), value.dtype)
    else:
        raise Unsupported(f"ufunc.at with {S.describe(value)} is not supported yet")
    try:
        return np.result_type(x.dtype, operand)
    except TypeError as e:
        raise Unsupported(f"ufunc.at: {e}") from None


def _fit(v: Tensor, target: tuple) -> Tensor:
    """`v` shaped to broadcast to `target` as NumPy's assignment does (leading 1s dropped)."""
    if v.ndim > len(target):
        extra = v.shape[:v.ndim - len(target)]
        if any(d != 1 for d in extra):
            raise Unsupported(f"could not broadcast input array from shape {v.shape} into shape {target} "
                              "(ValueError)")
        v = Tensor(S._reshape_value(v.value, v.shape[len(extra):]), np.ndarray)
    try:
        np.broadcast_shapes(v.shape, target)
        if np.broadcast_shapes(v.shape, target) != tuple(target):
            raise ValueError
    except ValueError:
        raise Unsupported(f"could not broadcast input array from shape {v.shape} into shape {target} "
                          "(ValueError)") from None
    return v


def _broadcast_value(v: Tensor, target: tuple) -> Tensor:
    v = _fit(v, target)
    return v if v.shape == tuple(target) else S.broadcast_to(v, target)


def _basic_write(x: Tensor, parts: list, v: Tensor) -> Tensor:
    computed = [k for k in parts if _is_computed_slice(k)]
    sizes = _value_sizes_for_slices(parts, v) if computed else []
    box = _box(x.shape, parts, sizes)
    v = _broadcast_value(v, box.shape)
    if 0 in box.sizes:
        return x  # nothing selected (the value still had to broadcast)
    return _write_box(x, box, S._reshape_value(v.value, box.sizes))


def _value_sizes_for_slices(parts: list, v: Tensor) -> list[int]:
    """The lengths of the computed slices of a write, from the value's shape (aligned to the selection's end)."""
    result_parts = [k for k in parts if k is None or isinstance(k, slice)]
    lead = v.ndim - len(result_parts)
    sizes = []
    for pos, k in enumerate(result_parts):
        if _is_computed_slice(k):
            i = pos + lead
            sizes.append(None if i < 0 or v.shape[i] in (None, 1) else v.shape[i])  # None: `_symbolic_length`
    return sizes


def _advanced_write(x: Tensor, parts: list, v: Tensor, kind: str) -> Tensor:
    adv = _advanced(x.shape, parts)
    box = _box(x.shape, adv.box_parts, [])
    region = _read_box(x, box)
    b_shape = adv.indices[0].shape
    order = _gathered_order(adv, len(b_shape))
    region_shape = Tensor(region, np.ndarray).shape
    sizes = dict(zip(order, b_shape + tuple(d for i, d in enumerate(region_shape) if i not in adv.index_dims)))
    selection = tuple(1 if e == ("one",) else sizes[e] for e in adv.layout)
    v = _broadcast_value(v, selection)
    if 0 in selection:
        return x  # nothing selected (the value still had to broadcast)
    kept = [e for e in adv.layout if e != ("one",)]
    values = S._reshape_value(v.value, tuple(sizes[e] for e in kept))
    perm = [kept.index(e) for e in order]
    if perm != list(range(len(perm))):
        values = get("transpose").build([values], perm=perm)
    written = S.build(kind, [region, values] + [t.value for t in adv.indices], axes=adv.index_dims)
    return _write_box(x, box, written)


MAX_MASK = 4096  # elements of a computed mask read: the compaction costs (elements)^2 (gather.py `compress`)


def _mask_part(x: Tensor, parts: list) -> Tensor:
    """The computed bool mask of `parts`, which must be `(mask, :, ...)` over x's leading dims."""
    (mask_pos,) = [i for i, p in enumerate(parts) if _is_mask(p)] or [None]
    mask = parts[mask_pos]
    if mask_pos != 0 or not all(isinstance(p, slice) and p == slice(None) for p in parts[1:]):
        raise Unsupported("a computed bool mask with other indices is not supported yet (only x[mask] and "
                          "x[mask, ...])")
    indexed = x.shape[:mask.ndim]
    if len(indexed) < mask.ndim or any(a is not None and b is not None and a != b for a, b in zip(mask.shape, indexed)):
        raise Unsupported(f"boolean index of shape {mask.shape} does not match the indexed dims {indexed} (IndexError)")
    S.guard_same_sizes([((mask.value, i), (x.value, i, b)) for i, (a, b) in enumerate(zip(mask.shape, indexed))
                        if a is None or b is None], "a boolean index and the dims it indexes")
    return mask


def _masked_read(x: Tensor, parts: list) -> Tensor:
    """`x[mask]`: a first dim as long as the mask's count, which must be >= 2 (dynamic dims are; else deopt)."""
    mask = _mask_part(x, parts)
    too_large = (f"reading through a computed bool mask of more than {MAX_MASK} elements is not supported yet "
                 "(the compiled compaction is quadratic)")
    if None in mask.shape:
        S.guard(arith.cmpi(arith.CmpIPredicate.ule, emit.as_index(emit.product(emit.dims(mask.value))),
                           emit.index(MAX_MASK)), "value", too_large)
    elif int(np.prod(mask.shape, dtype=np.int64)) > MAX_MASK:
        raise Unsupported(too_large)
    count = S.reduce("sum", mask)
    S.guard(S.ufunc(np.greater_equal, count, Known(2)).value, "value",
            "the bool mask selects at least 2 elements (a dynamic dim's size)")
    return Tensor(S.build("compress", [x.value, mask.value]), np.ndarray)  # a copy


def nonzero(a: Any) -> Seq:
    """`np.nonzero(a)`: per axis, the indices of a's nonzero elements in C order, read as
    `indices[mask]` over the flattened array (so a count below 2 deopts, as mask reads do).
    Like NumPy's, the arrays of a 2-d or larger `a` are the columns of one (count, a.ndim) array."""
    a = S.to_tensor(S.array_operand(a))
    if a.ndim == 0:
        raise Unsupported("np.nonzero of a 0-d array (NumPy raises ValueError)")
    if None in a.shape:
        raise Unsupported("np.nonzero of an array whose dims vary between calls is not supported yet")
    mask = S.reshape(S.ufunc(np.not_equal, a, Known(0)), (-1,))
    grid = np.indices(a.shape).reshape(a.ndim, -1).T  # (elements, ndim): row i is element i's index
    return last_axis_views(_masked_read(S.constant(np.ascontiguousarray(grid)), [mask]))


def last_axis_views(found: Tensor) -> Seq:
    """`found[..., k]` for each k, views of `found`: how NumPy returns the index arrays of nonzero
    and unravel_index (their strides show it)."""
    return Seq(tuple(getitem(found, (Ellipsis, k)) for k in range(found.shape[-1])), tuple)


def _masked_write(x: Tensor, parts: list, v: Tensor, combine) -> Tensor:
    """`x[mask] = v` (or add_at's accumulation) for a computed bool mask over x's leading dims.

    v broadcasts to the selection (count, *rest): one row for every selected row (a `where`), one row per
    selected row in order (`expand`), their number guarded to be the mask's count, or v read through an
    equal mask (`x[m] = y[m]`: a `where` of y and x)."""
    if None in x.shape:
        raise Unsupported("writing through a computed bool mask into an array whose size varies between calls "
                          "is not supported yet")
    mask = _mask_part(x, parts)
    rest = x.shape[mask.ndim:]
    lead = v.shape[:max(v.ndim - len(rest) - 1, 0)]
    if any(d != 1 for d in lead):
        raise Unsupported(f"could not broadcast input array from shape {v.shape} into the selection (ValueError)")
    v = Tensor(S._reshape_value(v.value, v.shape[len(lead):]), np.ndarray) if lead else v
    tail = v.shape[1:] if v.ndim > len(rest) else v.shape
    if None in tail or np.broadcast_shapes(tail, rest) != rest:
        raise Unsupported(f"could not broadcast input array from shape {v.shape} into the selection (ValueError)")
    wide = Tensor(S._reshape_value(mask.value, mask.shape + (1,) * len(rest)), np.ndarray)
    if v.ndim <= len(rest) or v.shape[0] == 1:
        row = Tensor(S._reshape_value(v.value, tail), np.ndarray) if v.ndim > len(rest) else v
        return S.where(wide, combine(x, S.broadcast_to(row, x.shape)), x)
    rows = v if tail == rest else Tensor(get("broadcast_to").build(
        [v.value], shape=[-1 if v.shape[0] is None else v.shape[0], *rest]), np.ndarray)
    if v.shape[0] is None:
        source = _read_through(v.value, mask.value)
        if source is None or Tensor(source, np.ndarray).shape != x.shape:
            raise Unsupported("assigning rows of a length that varies through a computed bool mask is not "
                              "supported yet (only values read through the same mask: x[m] = y[m])")
        # x[m] = y[m]: y's rows where m holds, x's elsewhere (no compaction needed).
        return S.where(wide, combine(x, S.astype(Tensor(source, np.ndarray), x.dtype)), x)
    count = S.reduce("sum", mask)
    S.guard(S.ufunc(np.equal, count, Known(v.shape[0])).value, "value",
            f"the bool mask selects {v.shape[0]} elements, as many as the values assigned")
    spread = Tensor(S.build("expand", [rows.value, mask.value]), np.ndarray)
    return S.where(wide, combine(x, spread), x)


def _read_through(value: Any, mask: Any) -> Any:
    """y where `value` is `y[mask]` (`compress`, maybe cast), for a mask equal to `mask`; else None."""
    if isinstance(value, ir.OpResult) and value.owner.name == "pyfront.astype":
        value = value.owner.operands[0]
    if isinstance(value, ir.OpResult) and value.owner.name == "pyfront.compress" \
            and _same_value(value.owner.operands[1], mask):
        return value.owner.operands[0]
    return None


def _same_value(a: Any, b: Any, depth: int = 6) -> bool:
    """Whether two IR values are equal by construction: one value, or one primitive (pure) on equal operands."""
    if a == b:
        return True
    if depth == 0 or not isinstance(a, ir.OpResult) or not isinstance(b, ir.OpResult):
        return False
    op_a, op_b = a.owner, b.owner
    if op_a.name != op_b.name or by_op_name(op_a.name) is None or a.result_number != b.result_number:
        return False
    if len(op_a.operands) != len(op_b.operands) or str(op_a.attributes) != str(op_b.attributes):
        return False
    return all(_same_value(x, y, depth - 1) for x, y in zip(op_a.operands, op_b.operands))


def _cast_for_store(value: Any, dtype: np.dtype) -> Tensor:
    """`value` as NumPy stores it into an array of `dtype` (unsafe casting)."""
    if isinstance(value, Known) and isinstance(value.value, (list, tuple)):
        value = Known(np.asarray(value.value))
    if isinstance(value, Known) and np.ndim(value.value):
        value = S.constant(np.asarray(value.value))
    if isinstance(value, Known):
        tmp = np.zeros((), dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                tmp[()] = value.value
        except Exception as e:  # noqa: BLE001 - OverflowError, ValueError, a cast warning: NumPy's to raise
            raise Unsupported(f"storing {value.value!r} into a {dtype} array raises or warns in NumPy "
                              f"({type(e).__name__})") from None
        return S.constant(tmp)
    if not isinstance(value, Tensor):
        raise Unsupported(f"storing {S.describe(value)} into an array is not supported yet")
    return S.astype(value, dtype) if value.dtype != dtype else value
