"""Mapping between NumPy dtypes/shapes and MLIR types, and pyfront's own types.

Python objects referenced by identity have the opaque type `!pyfront.object`.
Booleans are `i1` in the IR; they cross the host boundary as `i8` (see
runtime/marshal.py) because that is how IREE stores them.

Unsigned NumPy dtypes are MLIR's unsigned integer types (`ui8` ... `ui64`) in
the pyfront dialect, so every value's type says its NumPy dtype and lowering
rules pick unsigned operations (divui, cmpi ult, uitofp, ...) from it.
arith and linalg want signless integers: `lower-to-linalg` ends by erasing
the signedness (passes/signless.py), keeping `ui` types only in the public
functions' signatures, which IREE's ABI passes as NumPy's unsigned dtypes.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import ir


def isa(cls: type, t: ir.Type) -> bool:
    """Whether MLIR type `t` is an instance of the bindings' type class `cls`."""
    return t.typeid == cls.static_typeid


SUPPORTED_DTYPES = tuple(
    np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "float16", "float32", "float64")
)


def element_type(dtype: np.dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if dtype.kind == "i":
        return ir.IntegerType.get_signless(8 * dtype.itemsize)
    if dtype.kind == "u":
        return ir.IntegerType.get_unsigned(8 * dtype.itemsize)
    if dtype == np.float16:
        return ir.F16Type.get()
    if dtype == np.float32:
        return ir.F32Type.get()
    if dtype == np.float64:
        return ir.F64Type.get()
    raise TypeError(f"dtype {dtype} has no pyfront element type")


def dtype_of(elt: ir.Type) -> np.dtype:
    if isa(ir.F16Type, elt):
        return np.dtype(np.float16)
    if isa(ir.F32Type, elt):
        return np.dtype(np.float32)
    if isa(ir.F64Type, elt):
        return np.dtype(np.float64)
    if isa(ir.IntegerType, elt):
        integer = ir.IntegerType(elt)
        if integer.width == 1:
            return np.dtype(np.bool_)
        return np.dtype(f"{'u' if integer.is_unsigned else ''}int{integer.width}")
    raise TypeError(f"no NumPy dtype for MLIR type {elt}")


def signed_twin(dtype: np.dtype) -> np.dtype:
    """The signed int dtype of an unsigned one's width (its bits as the signless IR holds them)."""
    return np.dtype(f"int{8 * np.dtype(dtype).itemsize}")


def as_signless_int(value: int, dtype: np.dtype) -> int:
    """An int of unsigned `dtype` as the signed value of the same bits (MLIR attributes take int64)."""
    if np.dtype(dtype).kind != "u":
        return int(value)
    bits = 8 * np.dtype(dtype).itemsize
    wrapped = int(value) % 2 ** bits  # (-1 is all ones, as for the signed types)
    return wrapped - 2 ** bits if wrapped >= 2 ** (bits - 1) else wrapped


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
