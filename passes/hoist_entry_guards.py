"""hoist-entry-guards: move guards that only read the inputs' shapes to the host.

With a relaxed (dynamic) dim, the front end guards that sizes NumPy needs
equal are equal (`emit.dims_equal` / `emit.dim_is`, e.g. `x.shape[0] ==
h.shape[0]` for `x + h`). Such a condition depends on nothing but the
function's inputs, so the runtime can check it before the call, with NumPy's
`.shape`, instead of running the compiled code and discarding its work.

Assumes: guards in the function's entry block (before `lower-guards`) and
input-path attributes final (after `lower-deferred-state`: block argument i
is the runtime's input i). Guarantees: a guard whose condition is built only
from `tensor.dim` of a function argument at a constant axis, integer
constants, `arith.cmpi` (eq, ne, slt, sle, sgt, sge) and `arith.andi` is
erased and appended to the function's `pyfront.entry_guards` attribute as
[kind, site, reason, expression], the expression in JSON as evaluated by
pyfront.guards.evaluate_shape_expr. The runtime checks these on the host
after reading the inputs and before the call; a failure deopts with the
guard's kind, site and reason, exactly as the in-graph guard would. Other
guards are left in place.
"""

from __future__ import annotations

import json

from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir
from pyfront.guards import SHAPE_PREDICATES
from pyfront.passes.dead_code import erase_dead_ops
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass
from pyfront.passes.specialize import _defining_op

ENTRY_GUARDS = "pyfront.entry_guards"
_PREDICATES = {int(getattr(arith.CmpIPredicate, name)): name for name in SHAPE_PREDICATES}


class _NotShapeOnly(Exception):
    pass


@register_pass("hoist-entry-guards", "Move guards that only read the inputs' shapes into the host-side entry check.")
def hoist_entry_guards(module: ir.Operation) -> None:
    for fn in functions(module):
        block = fn.body.blocks[0]
        hoisted = []
        for op in list(block.operations):
            if op.operation.name != GUARD.name:
                continue
            view = GUARD.view(op)
            try:
                expr = _expression(view.cond, block)
            except _NotShapeOnly:
                continue
            hoisted.append([view.kind, view.site, view.reason, json.dumps(expr)])
            op.operation.erase()
        if hoisted:
            old = [[ir.StringAttr(s).value for s in ir.ArrayAttr(g)]
                   for g in (ir.ArrayAttr(fn.attributes[ENTRY_GUARDS]) if ENTRY_GUARDS in fn.attributes else [])]
            fn.attributes[ENTRY_GUARDS] = ir.ArrayAttr.get([
                ir.ArrayAttr.get([ir.StringAttr.get(s) for s in g]) for g in old + hoisted])
            erase_dead_ops(fn.operation)


def _expression(value: ir.Value, entry: ir.Block) -> list:
    op = _defining_op(value)
    if op is None:
        raise _NotShapeOnly
    if op.name == "arith.constant":
        if not _is_int_type(value.type):
            raise _NotShapeOnly
        return ["const", ir.IntegerAttr(op.attributes["value"]).value]
    if op.name == "arith.andi":
        return ["and", _expression(op.operands[0], entry), _expression(op.operands[1], entry)]
    if op.name == "arith.cmpi":
        predicate = _PREDICATES.get(ir.IntegerAttr(op.attributes["predicate"]).value)
        if predicate is None:
            raise _NotShapeOnly
        return [predicate, _expression(op.operands[0], entry), _expression(op.operands[1], entry)]
    if op.name == "tensor.dim":
        source, axis = op.operands[0], _expression(op.operands[1], entry)
        if not isinstance(source.owner, ir.Block) or source.owner != entry or axis[0] != "const":
            raise _NotShapeOnly
        return ["dim", ir.BlockArgument(source).arg_number, axis[1]]
    raise _NotShapeOnly


def _is_int_type(t: ir.Type) -> bool:
    return t.typeid in (ir.IndexType.static_typeid, ir.IntegerType.static_typeid)
