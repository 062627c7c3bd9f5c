"""Mapping between NumPy dtypes/shapes and MLIR types, and pyfront's own types.

Python objects referenced by identity have the opaque type `!pyfront.object`.
Booleans are `i1` in the IR; they cross the host boundary as `i8` (see
runtime/marshal.py) because that is how IREE stores them.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import ir


def isa(cls: type, t: ir.Type) -> bool:
    """Whether MLIR type `t` is an instance of the bindings' type class `cls`."""
    return t.typeid == cls.static_typeid


SUPPORTED_DTYPES = tuple(
    np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "float32", "float64")
)


def element_type(dtype: np.dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtype.kind == "i":
        return ir.IntegerType.get_signless(8 * dtype.itemsize)
    if dtype == np.float32:
        return ir.F32Type.get()
    if dtype == np.float64:
        return ir.F64Type.get()
    raise TypeError(f"dtype {dtype} has no pyfront element type")


def dtype_of(elt: ir.Type) -> np.dtype:
    if isa(ir.F32Type, elt):
        return np.dtype(np.float32)
    if isa(ir.F64Type, elt):
        return np.dtype(np.float64)
    if isa(ir.IntegerType, elt):
        width = ir.IntegerType(elt).width
        return np.dtype(np.bool_) if width == 1 else np.dtype(f"int{width}")
    raise TypeError(f"no NumPy dtype for MLIR type {elt}")


def tensor_type(shape: tuple[int | None, ...], dtype: np.dtype) -> ir.RankedTensorType:
    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in shape]
    return ir.RankedTensorType.get(dims, element_type(dtype))


def shape_of(t: ir.Type) -> tuple[int | None, ...]:
    st = ir.RankedTensorType(t)
    return tuple(None if st.is_dynamic_dim(i) else st.get_dim_size(i) for i in range(st.rank))


def tensor_dtype(t: ir.Type) -> np.dtype:
    return dtype_of(ir.RankedTensorType(t).element_type)


def is_tensor(t: ir.Type) -> bool:
    return isa(ir.RankedTensorType, t)


def object_type() -> ir.Type:
    return ir.OpaqueType.get("pyfront", "object")


def is_object(t: ir.Type) -> bool:
    return isa(ir.OpaqueType, t) and ir.OpaqueType(t).dialect_namespace == "pyfront"
