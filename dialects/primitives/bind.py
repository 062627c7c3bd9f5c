"""Apply primitives to NumPy arrays or to IR values with one call.

VJP rules are written once, with `apply` and the helpers below, and run in two
places: on the interpreter's tape the operands are NumPy arrays and `apply`
runs each primitive's `impl`; in the AD transformation on the IR they are
`ir.Value`s and `apply` emits `pyfront.<name>` ops at the current insertion
point. Because dynamic dims are never broadcast (base.py), which dims a
cotangent must be summed over is known statically in both worlds.

A VJP rule has the signature

    vjp(ct, out, *operands, **params) -> tuple[cotangent | None, ...]

`ct` is the cotangent of the result (same shape and dtype as `out`), and the
rule returns one cotangent per operand, with that operand's shape and dtype,
or None where the operand is not differentiable (integer and bool operands,
conditions, indices).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pyfront.dialects.mlir import ir
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.base import Shape, get
from pyfront.dialects.types import shape_of, tensor_dtype

Operand = Any  # np.ndarray or ir.Value, never mixed within one call


def is_ir(x: Operand) -> bool:
    return isinstance(x, ir.Value)


def apply(name: str, *operands: Operand, **params: Any) -> Operand:
    """Primitive `name` on `operands`: its NumPy impl on arrays, its op on IR values."""
    prim = get(name)
    for operand in operands:  # (a loop, not any(): this runs for every op of the tape's backward)
        if isinstance(operand, ir.Value):
            return prim.build(list(operands), **params)
    out = prim.impl(*operands, **params)
    return out if type(out) is np.ndarray else np.asarray(out)


# Tracers (e.g. the interpreter's gradient tape) register the type of their
# boxed values here, so a user-level call of a primitive (pyfront.nn) with a
# boxed operand is recorded by the tracer instead of running the impl.
_TRACERS: list[tuple[type, Callable[..., Any]]] = []


def register_tracer(box_type: type, handler: Callable[..., Any]) -> None:
    """`handler(name, operands, params)` handles `call`s with a `box_type` operand."""
    _TRACERS.append((box_type, handler))


def call(name: str, *operands: Any, **params: Any) -> Any:
    """A user-level call of primitive `name` (how pyfront.nn functions run outside compiled code)."""
    for box_type, handler in _TRACERS:
        if any(isinstance(o, box_type) for o in operands):
            return handler(name, operands, params)
    return apply(name, *map(np.asarray, operands), **params)


def shape(x: Operand) -> Shape:
    if type(x) is np.ndarray:
        return x.shape
    return shape_of(x.type) if is_ir(x) else np.shape(x)


def dtype(x: Operand) -> np.dtype:
    if type(x) is np.ndarray:
        return x.dtype
    return tensor_dtype(x.type) if is_ir(x) else np.asarray(x).dtype


def constant(value: Any, like: Operand) -> Operand:
    """A rank-0 constant of `like`'s dtype, in `like`'s world (it broadcasts in elementwise ops)."""
    dt = dtype(like)
    if is_ir(like):
        return emit.splat(value, (), dt)
    return np.asarray(value, dtype=dt)


def unbroadcast(ct: Operand, target: Shape) -> Operand:
    """Sum `ct` (the cotangent of a broadcast result) back to an operand of shape `target`.

    One sum over every broadcast axis, then a reshape dropping the leading
    ones; a reshape names at most one dynamic dim, so with several dynamic
    dims in `target` the leading axes are summed away first instead (another
    summation order: kept for that case only, so float results elsewhere do
    not change).
    """
    ct_shape = shape(ct)
    lead = len(ct_shape) - len(target)
    if lead and target.count(None) > 1:
        ct, ct_shape, lead = apply("sum", ct, axes=list(range(lead)), keepdims=False), ct_shape[lead:], 0
    axes = [i for i, d in enumerate(ct_shape) if i < lead or (target[i - lead] == 1 and d != 1)]
    if not axes:
        return ct
    summed = apply("sum", ct, axes=axes, keepdims=True)
    return apply("reshape", summed, shape=[_param_dim(d) for d in target]) if lead else summed


class NoVJP(NotImplementedError):
    """Raised by a VJP rule for a case it cannot differentiate (named in the message).

    The AD on the IR turns it into `Unsupported` at the op's source line, so
    the call runs in the interpreter (whose arrays have no dynamic dims).
    """


def is_differentiable(x: Operand) -> bool:
    return dtype(x).kind == "f"


class NotDifferentiable:
    """The `vjp` of a primitive with no derivative to propagate; `reason` says why.

    Called like a rule, it gives every operand None: no cotangent flows back
    through the primitive (its result is bool or integer, or it only reads
    integer and bool operands).
    """

    def __init__(self, reason: str):
        self.reason = reason

    def __call__(self, ct: Operand, out: Operand, *operands: Operand, **params: Any) -> tuple[None, ...]:
        return (None,) * len(operands)

    def __repr__(self) -> str:
        return f"NotDifferentiable({self.reason!r})"


def array(values: Any, dtype: Any, like: Operand) -> Operand:
    """A constant array of static shape in `like`'s world (a NumPy array or a dense IR constant)."""
    values = np.asarray(values, dtype=dtype)
    return emit.dense(values) if is_ir(like) else values


def _all_true(x: Operand) -> Operand:
    """A bool array shaped like `x` with every element True (NaN-safe; dynamic dims allowed)."""
    nonzero = apply("astype", x, dtype="bool")
    return apply("logical_or", nonzero, apply("logical_not", nonzero))


def zeros_like(x: Operand) -> Operand:
    """Zeros with `x`'s shape and dtype (a splat constant when the shape is static)."""
    if None not in shape(x):
        return array(np.zeros(shape(x), dtype(x)), dtype(x), x)
    return apply("where", _all_true(x), constant(0, x), constant(0, x))


def broadcast_like(x: Operand, like: Operand) -> Operand:
    """`x` broadcast to `like`'s shape (materialized); `x`'s shape must broadcast to it.

    A dynamic dim of `like` that `x` has as 1 or lacks cannot be named in
    `broadcast_to`'s params, so such a broadcast goes through `where` with an
    all-True mask shaped like `like`.
    """
    src, target = shape(x), shape(like)
    if src == target:
        return x
    lead = len(target) - len(src)
    if all(d is not None or (i >= lead and src[i - lead] is None) for i, d in enumerate(target)):
        return apply("broadcast_to", x, shape=[-1 if d is None else d for d in target])
    return apply("where", _all_true(like), x, x)


def expand_dims(x: Operand, axes: Any) -> Operand:
    """`x` with size-1 axes inserted so that they sit at `axes` of the result (sorted, non-negative)."""
    axes = sorted(axes)
    if not axes:
        return x
    src = shape(x)
    rank = len(src) + len(axes)
    if src.count(None) <= 1:
        rest = iter(src)
        return apply("reshape", x, shape=[1 if i in axes else _param_dim(next(rest)) for i in range(rank)])
    # reshape cannot create several dynamic dims: add leading 1s, then move them into place.
    lifted = apply("broadcast_to", x, shape=[1] * len(axes) + [-1] * len(src))
    kept = iter(range(len(axes), rank))
    return apply("transpose", lifted, perm=[axes.index(i) if i in axes else next(kept) for i in range(rank)])


def _param_dim(d: int | None) -> int:
    return -1 if d is None else d


def iota(n: int, like: Operand) -> Operand:
    """The int64 constant [0, 1, ..., n-1] in `like`'s world."""
    return array(np.arange(n), np.int64, like)


def ones_like(x: Operand) -> Operand:
    """Ones with `x`'s shape and dtype (a splat constant when the shape is static)."""
    if None not in shape(x):
        return array(np.ones(shape(x), dtype(x)), dtype(x), x)
    return apply("where", _all_true(x), constant(1, x), constant(1, x))
