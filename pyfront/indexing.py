"""NumPy indexing on front-end values: `x[key]` reads and `x[key] = v` writes.

Arrays are SSA values, so a write is a new value: `setitem(x, key, v)` is
the array `x` would hold after `x[key] = v`, same shape and dtype. Whose
name or buffer then holds that value (a local, or an argument the caller
sees) is the graph generator's business, not this module's.

Basic keys (ints, slices, None, Ellipsis) select a strided box of `x`
(`_BasicKey`): a read is the `slice` primitive, a write `update_slice`.
NumPy's rules, reproduced here: ints drop their dim and wrap when negative,
out-of-range ints raise IndexError (refused: the interpreter raises it),
slices clamp, the value broadcasts to the selection's shape and is cast to
`x`'s dtype with NumPy's unsafe casting (Python scalars that do not fit the
dtype raise OverflowError: refused).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import semantics as S
from pyfront.dialects.primitives import get
from pyfront.errors import Unsupported
from pyfront.values import Known, Tensor, View


@dataclass(frozen=True)
class _BasicKey:
    """A basic index as a strided box: per dim of `x`, offset, size and stride; and the result's shape."""

    offsets: tuple[int, ...]
    sizes: tuple[int, ...]  # -1: to the end of a dynamic dim
    strides: tuple[int, ...]
    shape: tuple[int | None, ...]  # ints dropped, None (newaxis) inserted as 1
    scalar: bool  # every dim picked by an int: NumPy returns a scalar copy


def is_basic(key: Any) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, slice) or type(k) is int for k in keys)


def _basic_key(shape: tuple[int | None, ...], key: Any) -> _BasicKey:
    keys = key if isinstance(key, tuple) else (key,)
    if not is_basic(key):
        raise Unsupported(f"indexing with {key!r} is not supported yet (only ints, slices, None, ...)")
    n_index = sum(1 for k in keys if k is not None and k is not Ellipsis)
    if keys.count(Ellipsis) > 1:
        raise Unsupported("an index can only have a single ellipsis")
    if n_index > len(shape):
        raise Unsupported(f"too many indices for array: array is {len(shape)}-dimensional")
    if Ellipsis in keys:
        i = keys.index(Ellipsis)
        keys = keys[:i] + (slice(None),) * (len(shape) - n_index) + keys[i + 1:]
    else:
        keys = keys + (slice(None),) * (len(shape) - n_index)
    offsets, sizes, strides, out_shape = [], [], [], []
    dim = 0
    for k in keys:
        if k is None:
            out_shape.append(1)
            continue
        d = shape[dim]
        if d is None:  # a relaxed dim: known to be >= 2 at run time
            if type(k) is int and k in (0, 1):
                offsets.append(k), sizes.append(1), strides.append(1)
            elif k == slice(None):
                offsets.append(0), sizes.append(-1), strides.append(1)
                out_shape.append(None)
            else:
                raise Unsupported(f"index {k!r} on a dimension of varying size is not supported yet")
        elif type(k) is int:
            if not -d <= k < d:
                raise Unsupported(f"index {k} is out of bounds for axis {dim} with size {d}")
            offsets.append(k % d), sizes.append(1), strides.append(1)
        else:
            start, stop, step = k.indices(d)
            if step <= 0:
                raise Unsupported("slices with negative steps are not supported yet")
            n = len(range(start, stop, step))
            offsets.append(start if n else 0), sizes.append(n), strides.append(step)
            out_shape.append(n)
        dim += 1
    scalar = not out_shape and all(type(k) is int for k in keys)
    return _BasicKey(tuple(offsets), tuple(sizes), tuple(strides), tuple(out_shape), scalar)


def getitem(x: Tensor, key: Any) -> Tensor:
    """`x[key]` for a compile-time basic key; a view of `x` unless every dim is picked by an int."""
    box = _basic_key(x.shape, key)
    sliced = get("slice").build([x.value], offsets=box.offsets, sizes=box.sizes, strides=box.strides)
    result = S._reshape_value(sliced, box.shape)
    if box.scalar:
        return Tensor(result, x.dtype.type)  # a scalar copy, not a view
    return S.view_of(x, result, lambda a: a[key])


def setitem(x: Tensor, key: Any, value: Any) -> Tensor:
    """The value of `x` after `x[key] = value`: the same shape and dtype as `x`."""
    if x.pytype is not np.ndarray:
        raise Unsupported(f"assigning into a {S.describe(x)} (NumPy scalars are immutable)")
    if None in x.shape:
        raise Unsupported("writing into an array whose shape varies between calls is not supported yet")
    box = _basic_key(x.shape, key)
    v = _cast_for_store(value, x.dtype)
    target = box.shape
    if v.ndim > len(target):  # NumPy drops leading 1s of the value to fit
        extra = v.shape[:v.ndim - len(target)]
        if any(d != 1 for d in extra):
            raise Unsupported(f"could not broadcast input array from shape {v.shape} into shape {target}")
        v = Tensor(S._reshape_value(v.value, v.shape[len(extra):]), np.ndarray)
    if v.shape != target:
        v = S.broadcast_to(v, target)
    if 0 in box.sizes:
        return x  # nothing selected (the value still had to broadcast)
    region = S._reshape_value(v.value, box.sizes)
    updated = get("update_slice").build([x.value, region], offsets=box.offsets, strides=box.strides)
    return Tensor(updated, np.ndarray)


def _cast_for_store(value: Any, dtype: np.dtype) -> Tensor:
    """`value` as NumPy stores it into an array of `dtype` (unsafe casting)."""
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


def index_dynamic(x: Tensor, i: Tensor) -> Tensor:
    """`x[i]` for a computed integer index `i` (a NumPy int, or a 0-d int array).

    A bounds guard (-n <= i < n) holds where NumPy would not raise IndexError
    (when it fails, the interpreter re-runs the call and raises); a negative
    index wraps as in NumPy; then the `take` primitive picks the row. A row of a
    2-d or higher array is a NumPy view whose index the host cannot replay:
    returning, printing or storing it is refused (`View.replay` is None)."""
    if x.pytype is not np.ndarray or x.ndim == 0:
        raise Unsupported(f"indexing a {S.describe(x)} with a computed index is not supported")
    if i.ndim != 0 or i.dtype.kind not in "iu" or i.dtype == np.uint64:
        raise Unsupported(f"indexing with a computed {i.dtype} {'array' if i.ndim else 'scalar'} "
                          "(only integer scalars) is not supported yet")
    n = x.shape[0]
    if n is None:
        raise Unsupported("a computed index into a dimension of varying size is not supported yet")
    index = S.astype(i, np.dtype(np.int64), np.int64)
    in_range = S.ufunc(np.logical_and, S.ufunc(np.greater_equal, index, Known(-n)), S.ufunc(np.less, index, Known(n)))
    S.guard(in_range.value, "value", f"the computed index is within bounds for axis 0 with size {n}")
    wrapped = S.where(S.ufunc(np.less, index, Known(0)), S.ufunc(np.add, index, Known(n)), index)
    row = S.build("take", [x.value, wrapped.value])
    if x.ndim == 1:
        return Tensor(row, x.dtype.type)  # a scalar copy
    return Tensor(row, np.ndarray, View(x.view.base if x.view else x, None))
