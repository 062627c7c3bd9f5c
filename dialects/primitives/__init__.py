"""The primitive table: NumPy-level array ops, each with impl, shape/dtype rules and lowering."""

from pyfront.dialects.primitives import contraction, elementwise, gather, nn, reduction, shape  # noqa: F401
from pyfront.dialects.primitives.base import (
    Primitive,
    all_primitives,
    approximate_dtype,
    by_op_name,
    get,
)

__all__ = ["Primitive", "all_primitives", "approximate_dtype", "by_op_name", "get"]
