"""specialize: fold what the variant's assumptions made constant, drop redundant guards.

The graph generator already resolves Python values it knows (JANUS's
type/shape/value specialization happens while lowering the AST); what is left
for this pass is what only shows up in the graph, e.g. after `unroll` gave
loop counters constant values, or after guards were repeated by inlined code.

Assumes: guards sit in the function's entry block (before `lower-guards`);
constants are `arith.constant` with dense elements. Guarantees:
- constant folding: a `pyfront.<primitive>` op whose operands are all
  constants, with a static result of at most MAX_FOLD_ELEMENTS elements, is
  replaced by the constant its NumPy `impl` computes, which is the value the
  interpreter computes, bit for bit. It is folded only when the impl's
  result has exactly the op's result dtype and shape; a boolean result is
  folded only when all its elements are equal (dense i1 constants of mixed
  values cannot be built reliably through the bindings);
- guard simplification: a guard whose condition is the constant true is
  erased; so is a guard every conjunct of which (`arith.andi` operands) is a
  conjunct of an earlier guard, compared structurally (same op, attributes
  and operands), since all guards are checked together (`lower-guards`);
  a guard on a constant false stays (the variant then always deopts);
- dead code: ops left unused are erased (dead_code.erase_dead_ops).
Guards whose conditions depend only on the inputs' shapes are hoisted to the
host by `hoist-entry-guards` (hoist_entry_guards.py), the other half of
specialization.
"""

from __future__ import annotations


import numpy as np
from pyfront.compile_warnings import warnings_as
from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives import by_op_name
from pyfront.dialects.primitives.emit import dense
from pyfront.dialects.types import is_tensor, isa, shape_of, tensor_dtype
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.passes.dead_code import erase_dead_ops
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

MAX_FOLD_ELEMENTS = 1 << 16


@register_pass("specialize", "Fold constant primitive ops, drop guards implied by others or by constants, erase dead code.")
def specialize(module: ir.Operation) -> None:
    _fold_constants(module)
    for fn in functions(module):
        _simplify_guards(fn)
    erase_dead_ops(module)


# Constant folding ---------------------------------------------------------------


def constant_array(value: ir.Value) -> np.ndarray | None:
    """The value as a NumPy array if an `arith.constant` defines it, else None."""
    owner = _defining_op(value)
    if owner is None or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if not is_tensor(value.type):
        elt = value.type
        if isa(ir.IntegerType, elt) and ir.IntegerType(elt).width == 1:
            return np.array(bool(ir.IntegerAttr(attr).value))
        return None  # index and other scalar constants are not primitive operands
    dtype, shape = tensor_dtype(value.type), shape_of(value.type)
    try:
        dense_attr = ir.DenseElementsAttr(attr)
    except ValueError:  # e.g. a dense resource
        return None
    if dense_attr.is_splat:
        splat = dense_attr.get_splat_value()
        scalar = ir.FloatAttr(splat).value if dtype.kind == "f" else ir.IntegerAttr(splat).value
        return np.full(shape, scalar, dtype=dtype)
    if dtype == np.bool_:
        return None
    array = np.array(dense_attr)
    return array.astype(dtype, copy=False).reshape(shape) if array.dtype == dtype else None


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def _fold_constants(module: ir.Operation) -> None:
    ops: list[ir.Operation] = []

    def collect(op):
        if by_op_name(op.name) is not None:
            ops.append(op)
        return ir.WalkResult.ADVANCE

    walk(module, collect)  # pre-order: producers before their consumers
    for op in ops:
        folded = _fold(op)
        if folded is not None:
            with ir.InsertionPoint(op), op.location:
                value = dense(folded)
            op.results[0].replace_all_uses_with(value)
            op.erase()


def _fold(op: ir.Operation) -> np.ndarray | None:
    result_type = op.results[0].type
    shape = shape_of(result_type)
    if None in shape or int(np.prod(shape)) > MAX_FOLD_ELEMENTS:
        return None
    operands = [constant_array(v) for v in op.operands]
    if any(a is None for a in operands):
        return None
    prim = by_op_name(op.name)
    view = prim.opdef.view(op)
    with warnings_as("ignore"), np.errstate(all="ignore"):
        # NumPy's runtime warnings are the interpreter's business, not the compiler's.
        try:
            result = np.asarray(prim.impl(*operands, **view.params))
        except Exception as e:  # noqa: BLE001 - an op NumPy rejects is left for run time, unfolded
            reraise_if_asynchronous(e)
            return None
    if result.dtype != tensor_dtype(result_type) or result.shape != shape:
        return None
    if result.dtype == np.bool_ and result.size and not (result == result.flat[0]).all():
        return None
    if has_subnormal(result):
        return None  # IREE's CPU code would read the constant as zero (guard-subnormal-inputs)
    return result


def has_subnormal(array: np.ndarray) -> bool:
    """A float array holds a nonzero value below the smallest normal in magnitude."""
    if array.dtype.kind != "f":
        return False
    magnitude = np.abs(array)
    return bool(((magnitude > 0) & (magnitude < np.finfo(array.dtype).smallest_normal)).any())


# Guards ------------------------------------------------------------------------


def _simplify_guards(fn) -> None:
    seen: set = set()
    keys_of: dict = {}  # shared by all guards: conditions share their subexpressions
    for op in list(fn.body.blocks[0].operations):
        if op.operation.name != GUARD.name:
            continue
        cond = GUARD.view(op).cond
        conjuncts = [c for c in _conjuncts(cond) if not _is_true(c)]
        keys = [structural_key(c, keys_of) for c in conjuncts]
        if all(k in seen for k in keys):
            op.operation.erase()
        else:
            seen.update(keys)


def _conjuncts(value: ir.Value) -> list[ir.Value]:
    owner = _defining_op(value)
    if owner is not None and owner.name == "arith.andi":
        return _conjuncts(owner.operands[0]) + _conjuncts(owner.operands[1])
    return [value]


def _is_true(value: ir.Value) -> bool:
    array = constant_array(value)
    return array is not None and array.dtype == np.bool_ and array.size == 1 and bool(array.flat[0])


def structural_key(value: ir.Value, keys_of: dict) -> int:
    """Equal keys for values computed by the same ops from the same block arguments.

    Keys are ints interned in `keys_of` (which also memoizes values): a
    condition's expression is a DAG, and nested-tuple keys would take time
    exponential in its depth to build and hash.
    """
    key = keys_of.get(value)
    if key is not None:
        return key
    owner = _defining_op(value)
    if owner is None:
        parts = ("arg", value)
    elif len(owner.regions):
        parts = ("value", value)
    else:
        named = (owner.attributes[i] for i in range(len(owner.attributes)))
        attrs = tuple(sorted((a.name, str(a.attr)) for a in named))
        index = list(owner.results).index(value) if len(owner.results) > 1 else 0
        parts = (owner.name, attrs, index, tuple(structural_key(o, keys_of) for o in owner.operands))
    key = keys_of[value] = keys_of.setdefault(("parts", parts), len(keys_of))
    return key
