"""`matmul`: NumPy's `@` / `np.matmul`, including 1-D operands and broadcast batch dims.

Lowers to `linalg.matmul` (2-D) or `linalg.batch_matmul` (batched, with batch
dims broadcast then collapsed to one). Bool matmul (or-of-ands) has no linalg
named op and is rejected.

Batch, M, N and K may be dynamic (>= 2 at call time, see base.py): a
dynamic K is assumed equal to the other operand's K (the front end guards
it), and a dynamic batch dim comes from the operand that has it.

float16 is NumPy's half matmul loop: each output element is a float32 sum,
in k order from 0, of the (exact) products of the float16 operands, rounded
to float16 once. The lowering widens the operands to float32, multiplies in
float32 and rounds the result; IREE's CPU code accumulates each element in k
order, so the results are NumPy's bit for bit (tests/test_small_dtypes.py
checks shapes from 3 to 1000 terms). Other float16 sums stay interpreted
(base.py `float16_accumulation`).

VJP (float operands): with 1-D operands promoted to matrices as NumPy does,
`ct @ b^T` and `a^T @ ct`, summed over the batch dims each operand was
broadcast along, reshaped back to the operand.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import linalg
from pyfront.dialects.primitives import bind, emit
from pyfront.dialects.primitives.base import broadcast_shapes, fp_events, primitive, same_dtype, unify_dims
from pyfront.dialects.primitives.bind import apply
from pyfront.dialects.types import shape_of, tensor_dtype

FLOAT16, FLOAT32 = np.dtype(np.float16), np.dtype(np.float32)


def matmul_shape(a, b):
    if len(a) == 0 or len(b) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    try:
        unify_dims(a2[-1], b2[-2])
    except ValueError:
        raise ValueError(f"matmul: mismatch in core dimension ({a2[-1]} vs {b2[-2]})") from None
    batch = broadcast_shapes(a2[:-2], b2[:-2])
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
    if tensor_dtype(a.type) == FLOAT16:
        wide = [emit.elementwise([x], emit.dims(x), FLOAT32, lambda v: emit.convert(v[0], FLOAT16, FLOAT32))
                for x in (a, b)]
        out = _lower(view, *wide)
        return emit.elementwise([out], emit.dims(out), FLOAT16, lambda v: emit.convert(v[0], FLOAT32, FLOAT16))
    dtype = tensor_dtype(a.type)
    a_vector, b_vector = len(shape_of(a.type)) == 1, len(shape_of(b.type)) == 1
    a2 = emit.reshape(a, [1, *emit.dims(a)]) if a_vector else a
    b2 = emit.reshape(b, [*emit.dims(b), 1]) if b_vector else b
    m, k, n = emit.dim(a2, -2), emit.dim(a2, -1), emit.dim(b2, -1)
    batch_shape = broadcast_shapes(shape_of(a2.type)[:-2], shape_of(b2.type)[:-2])
    batch = emit.broadcast_sizes([a2, b2], batch_shape, core=2)
    if not batch:
        out = linalg.matmul(a2, b2, outs=[emit.fill(0, (m, n), dtype)])
    else:
        nb = emit.product(batch)
        a3 = emit.reshape(_broadcast(a2, [*batch, m, k]), (nb, m, k))
        b3 = emit.reshape(_broadcast(b2, [*batch, k, n]), (nb, k, n))
        out = linalg.batch_matmul(a3, b3, outs=[emit.fill(0, (nb, m, n), dtype)])
        out = emit.reshape(out, [*batch, m, n])
    if not (a_vector or b_vector):
        return out
    return emit.reshape(out, batch + [m] * (not a_vector) + [n] * (not b_vector))


def _broadcast(x, sizes):
    if emit.static_shape(sizes) == shape_of(x.type):  # (dynamic dims are never broadcast)
        return x
    return emit.elementwise([x], sizes, tensor_dtype(x.type), lambda v: v[0])


def _swap_last(x):
    rank = len(bind.shape(x))
    return apply("transpose", x, perm=[*range(rank - 2), rank - 1, rank - 2])


def _vjp(ct, out, a, b):
    if not bind.is_differentiable(out):
        return None, None
    a_vector, b_vector = len(bind.shape(a)) == 1, len(bind.shape(b)) == 1
    a2 = bind.expand_dims(a, [0]) if a_vector else a
    b2 = bind.expand_dims(b, [1]) if b_vector else b
    ct2 = bind.expand_dims(ct, [len(bind.shape(ct))]) if b_vector else ct
    ct2 = bind.expand_dims(ct2, [len(bind.shape(ct2)) - 1]) if a_vector else ct2
    ct_a = bind.unbroadcast(apply("matmul", ct2, _swap_last(b2)), bind.shape(a2))
    ct_b = bind.unbroadcast(apply("matmul", _swap_last(a2), ct2), bind.shape(b2))
    ct_a = apply("reshape", ct_a, shape=[-1 if d is None else d for d in bind.shape(a)]) if a_vector else ct_a
    ct_b = apply("reshape", ct_b, shape=[-1 if d is None else d for d in bind.shape(b)]) if b_vector else ct_b
    return ct_a, ct_b


MATMUL = primitive(
    "matmul",
    "NumPy `a @ b` / `np.matmul(a, b)`.",
    impl=np.matmul,
    shape_rule=matmul_shape,
    dtype_rule=same_dtype,
    lower=_lower,
    arity=2,
    operand_rule=_operand_rule,
    vjp=_vjp,
    fp_events=fp_events("nonfinite", "overflow", "invalid"),  # sums of products, in IREE's order
    keeps_nonfinite=True,  # a NaN or inf factor makes NaN or inf sums (inf * 0 is NaN)
    approximate=True,
)
