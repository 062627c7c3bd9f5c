"""`matmul`: NumPy's `@` / `np.matmul`, including 1-D operands and broadcast batch dims.

Lowers to `linalg.matmul` (2-D) or `linalg.batch_matmul` (batched, with batch
dims broadcast then collapsed to one). Bool matmul (or-of-ands) has no linalg
named op and is rejected.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import linalg
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.base import primitive, same_dtype
from pyfront.dialects.types import shape_of, tensor_dtype


def matmul_shape(a, b):
    if len(a) == 0 or len(b) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: mismatch in core dimension ({a2[-1]} vs {b2[-2]})")
    batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _operand_rule(a, b, **_):
    if a != b:
        return f"operand dtypes differ: {a}, {b}"
    return "bool matmul is not supported" if a == np.bool_ else None


def _lower(view, a, b):
    dtype = tensor_dtype(a.type)
    sa, sb = shape_of(a.type), shape_of(b.type)
    a2 = emit.reshape(a, (1,) + sa) if len(sa) == 1 else a
    b2 = emit.reshape(b, sb + (1,)) if len(sb) == 1 else b
    sa2, sb2 = shape_of(a2.type), shape_of(b2.type)
    m, k, n = sa2[-2], sa2[-1], sb2[-1]
    batch = tuple(np.broadcast_shapes(sa2[:-2], sb2[:-2]))
    if not batch:
        out = linalg.matmul(a2, b2, outs=[emit.fill(0, (m, n), dtype)])
    else:
        nb = int(np.prod(batch, dtype=np.int64))
        a3 = emit.reshape(_broadcast(a2, batch + (m, k)), (nb, m, k))
        b3 = emit.reshape(_broadcast(b2, batch + (k, n)), (nb, k, n))
        out = emit.reshape(
            linalg.batch_matmul(a3, b3, outs=[emit.fill(0, (nb, m, n), dtype)]), batch + (m, n)
        )
    return emit.reshape(out, shape_of(view.result.type))


def _broadcast(x, shape):
    if shape_of(x.type) == tuple(shape):
        return x
    return emit.elementwise([x], tuple(shape), tensor_dtype(x.type), lambda v: v[0])


MATMUL = primitive(
    "matmul",
    "NumPy `a @ b` / `np.matmul(a, b)`.",
    impl=np.matmul,
    shape_rule=matmul_shape,
    dtype_rule=same_dtype,
    lower=_lower,
    arity=2,
    operand_rule=_operand_rule,
)
