"""refine-static-dims: a dynamic input dim that an entry guard pins to a constant becomes static.

When a relaxed (dynamic) dim meets a static one, the front end guards that
they agree (`emit.dim_is`), e.g. `x.shape[1] == 12` for `x @ W` with `W` of
shape (12, 3), or `x.shape[0] == 4` for `x + y` with a static `y`.
`hoist-entry-guards` moves such a guard on an input to the host-side entry
check, so the compiled code never runs unless it holds: inside it, that dim
is the constant. This pass gives the primitive ops the static shape, so the
lowering (and IREE) sees static sizes where the fact allows.

Where it runs: right after `hoist-entry-guards`, because it reads the facts
from the hoisted guards (`pyfront.entry_guards`), never from in-graph guards:
an in-graph guard is checked only after the compiled code ran, and a cast to
a static shape the value does not have is undefined inside IREE. The export
pipeline hoists nothing, so there this pass finds no facts and changes
nothing.

Assumes: the entry-guard expressions of hoist_entry_guards.py (`["dim", arg,
axis]` is dim `axis` of block argument `arg`); primitive ops whose result
type their rules derive (`Primitive.infer`). Two dynamic dims guarded equal
(`emit.dims_equal`) are not constants and are left dynamic.

Guarantees: for each conjunct `dim(arg, axis) == C` (C >= 2: dynamic dims are
>= 2 at call time, so a smaller C could never hold) of an entry guard, with
that dim dynamic in the argument's type, a `tensor.cast` of the argument to
the type with those dims static is inserted at the function's start. Then,
in program order, each primitive op reading a refined value reads the refined
value instead, and its result type is re-derived from its rules with the
refined operand types; a result that became more static is refined too (its
other users read a `tensor.cast` back to the old type, so ops that are not
primitives, e.g. `return`, region ops and the `linalg.generic`s of
`guard-fp-events`, see the type they were built for; canonicalize folds the
casts). An op whose rules reject the refined operands keeps its old ones. The
function's signature, results and values are unchanged.
"""

from __future__ import annotations

import json

from pyfront.dialects.mlir import func, ir, tensor, walk
from pyfront.dialects.primitives import by_op_name
from pyfront.dialects.types import shape_of, tensor_dtype, tensor_type
from pyfront.passes.dead_code import erase_dead_ops
from pyfront.passes.funcs import functions
from pyfront.passes.hoist_entry_guards import ENTRY_GUARDS
from pyfront.passes.registry import register_pass


@register_pass("refine-static-dims",
               "Make input dims that a hoisted entry guard pins to a constant static for the ops after it.")
def refine_static_dims(module: ir.Operation) -> None:
    for fn in functions(module):
        facts = _static_facts(fn)
        if facts:
            _refine(fn, facts)
            erase_dead_ops(fn.operation)


def _static_facts(fn: func.FuncOp) -> dict[int, dict[int, int]]:
    """{argument: {axis: size}} for each `dim == constant` conjunct of the hoisted guards."""
    facts: dict[int, dict[int, int]] = {}
    if ENTRY_GUARDS not in fn.attributes:
        return facts
    inputs = list(fn.type.inputs)
    for guard in ir.ArrayAttr(fn.attributes[ENTRY_GUARDS]):
        expr = json.loads(ir.StringAttr(ir.ArrayAttr(guard)[3]).value)  # [kind, site, reason, expression]
        for arg, axis, size in _dim_constants(expr):
            if size >= 2 and shape_of(inputs[arg])[axis] is None:
                facts.setdefault(arg, {})[axis] = size
    return facts


def _dim_constants(expr: list) -> list[tuple[int, int, int]]:
    """(arg, axis, size) for each conjunct of `expr` that says dim(arg, axis) == size."""
    if expr[0] == "and":
        return _dim_constants(expr[1]) + _dim_constants(expr[2])
    if expr[0] == "eq":
        sides = {side[0]: side for side in expr[1:]}
        if set(sides) == {"dim", "const"}:
            _, arg, axis = sides["dim"]
            return [(arg, axis, sides["const"][1])]
    return []


def _refine(fn: func.FuncOp, facts: dict[int, dict[int, int]]) -> None:
    entry = fn.body.blocks[0]
    refined: dict[ir.Value, ir.Value] = {}  # a value -> the same data with a more static type
    with ir.InsertionPoint.at_block_begin(entry), fn.location:
        for arg, sizes in facts.items():
            value = entry.arguments[arg]
            shape = tuple(sizes.get(i, d) for i, d in enumerate(shape_of(value.type)))
            refined[value] = tensor.cast(tensor_type(shape, tensor_dtype(value.type)), value)

    ops: list[ir.Operation] = []

    def collect(op):
        if by_op_name(op.name) is not None:
            ops.append(op)
        return ir.WalkResult.ADVANCE

    walk(fn.operation, collect)  # pre-order: producers before their consumers
    for op in ops:
        _refine_op(op, refined)


def _refine_op(op: ir.Operation, refined: dict[ir.Value, ir.Value]) -> None:
    operands = [refined.get(v, v) for v in op.operands]
    if all(new is old for new, old in zip(operands, op.operands)):
        return
    prim = by_op_name(op.name)
    try:
        shape, dtype = prim.infer([shape_of(v.type) for v in operands],
                                  [tensor_dtype(v.type) for v in operands], prim.opdef.view(op).params)
    except (TypeError, ValueError):
        return  # the rules reject the refined operands: keep the op as it was
    result = op.results[0]
    old_type = result.type
    with op.location:
        new_type = tensor_type(shape, dtype)
    for i, value in enumerate(operands):
        op.operands[i] = value
    if new_type == old_type:
        return
    result.set_type(new_type)
    with ir.InsertionPoint.after(op), op.location:
        back = tensor.cast(old_type, result)
    result.replace_all_uses_except(back, back.owner.operation)
    refined[back] = result
