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
    if any(map(is_ir, operands)):
        return prim.build(list(operands), **params)
    return np.asarray(prim.impl(*operands, **params))


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
    return shape_of(x.type) if is_ir(x) else np.shape(x)


def dtype(x: Operand) -> np.dtype:
    return tensor_dtype(x.type) if is_ir(x) else np.asarray(x).dtype


def constant(value: Any, like: Operand) -> Operand:
    """A rank-0 constant of `like`'s dtype, in `like`'s world (it broadcasts in elementwise ops)."""
    dt = dtype(like)
    if is_ir(like):
        return emit.splat(value, (), dt)
    return np.asarray(value, dtype=dt)


def unbroadcast(ct: Operand, target: Shape) -> Operand:
    """Sum `ct` (the cotangent of a broadcast result) back to an operand of shape `target`."""
    ct_shape = shape(ct)
    lead = len(ct_shape) - len(target)
    axes = [i for i, d in enumerate(ct_shape) if i < lead or (target[i - lead] == 1 and d != 1)]
    if not axes:
        return ct
    summed = apply("sum", ct, axes=axes, keepdims=True)
    return apply("reshape", summed, shape=[-1 if d is None else d for d in target]) if lead else summed


def is_differentiable(x: Operand) -> bool:
    return dtype(x).kind == "f"
