"""lower-guards: turn in-graph `pyfront.guard` ops into one extra function result.

Assumes: guards sit in the function's entry block (straight-line code).
Guarantees: no `pyfront.guard` remains. A function with N guards returns one
more value, a `tensor<Nxi8>` (nonzero = held) of the guard conditions in program
order, with output path `guards`; `pyfront.guards` on the function lists each
guard as [kind, site, reason]. The runtime commits state and returns results
only when every flag is true; otherwise it re-runs the call in the
interpreter and blames the guards whose flags are false.

The flags are gathered by `linalg.generic`s over the 0-d condition
tensors (an i1 condition, computed on the host from sizes, becomes one
first), so they stay where they were computed and the runtime reads them all
at once after the call. (Extracting each condition to a scalar made IREE read
it back to the host in the middle of the call: a wait per guard.) One
generic gathers at most `bound_dispatch_inputs.LIMIT` of them, each its own
dispatch input, and `tensor.concat` joins the groups: IREE 3.13's runtime
refuses a dispatch with more than 32 inputs (81 guards made one of 61).
A condition that is a 0-d integer tensor cast to bool (the checks of
guard-fp-events and guard-subnormal-inputs reduce to i8) is gathered as the
integer itself, nonzero meaning held as the cast does: IREE 3.13 gives each
such 0-d cast a dispatch of its own (model_gan: 30 of its 136 dispatches).
"""

from __future__ import annotations

import numpy as np

from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir, linalg, tensor, walk
from pyfront.dialects.primitives import emit
from pyfront.dialects.primitives.elementwise import ASTYPE
from pyfront.dialects.types import is_tensor
from pyfront.passes.bound_dispatch_inputs import LIMIT
from pyfront.passes.funcs import functions, output_paths, return_op, set_results
from pyfront.passes.registry import register_pass


@register_pass("lower-guards", "Collect in-graph guard conditions into a tensor<Nxi8> result.")
def lower_guards(module: ir.Operation) -> None:
    for fn in functions(module):
        guards = [op for op in fn.body.blocks[0].operations if op.name == GUARD.name]
        nested = _nested_guards(fn.operation)
        if nested:
            raise ValueError(f"lower-guards: guard inside a region at {nested[0].location} is not supported yet")
        if not guards:
            continue
        ret = return_op(fn)
        conds = [GUARD.view(g).cond for g in guards]
        with ir.InsertionPoint(ret), ret.location:
            flags = _flags(conds)
        fn.attributes["pyfront.guards"] = ir.ArrayAttr.get([
            ir.ArrayAttr.get([ir.StringAttr.get(getattr(GUARD.view(g), a)) for a in ("kind", "site", "reason")])
            for g in guards
        ])
        set_results(fn, list(ret.operands) + [flags], output_paths(fn) + ["guards"])
        for g in guards:
            g.erase()
        for cond in dict.fromkeys(conds):  # the casts gathered as their integers, if nothing else reads them
            if _uncast(cond) is not cond and not list(cond.uses):
                cond.owner.erase()


def _flags(conds: list[ir.Value]) -> ir.Value:
    """tensor<Nxi8>: element k is nonzero where condition k (a 0-d tensor<i1> or an i1) holds."""
    i8 = ir.IntegerType.get_signless(8)
    # (An i1 goes in as an i8: IREE mishandles i1 in tensor.from_elements.)
    tensors = [_uncast(c) if is_tensor(c.type) else
               tensor.from_elements(ir.RankedTensorType.get([], i8), [arith.extui(i8, c)]) for c in conds]

    def pick(args: list[ir.Value]) -> ir.Value:
        k = linalg.IndexOp(0).result
        flags = [_as_i8(f) for f in args[:-1]]
        value = flags[-1]
        for i in range(len(flags) - 2, -1, -1):
            value = arith.select(arith.cmpi(arith.CmpIPredicate.eq, k, emit.index(i)), flags[i], value)
        return value

    def gather(group: list[ir.Value]) -> ir.Value:
        (flags,) = emit.generic(group, [emit.scalar_map(1)] * len(group), [emit.empty([len(group)], np.int8)],
                                [emit.projection_map(1, [0])], [emit.PARALLEL], pick)
        return flags

    groups = [gather(tensors[i:i + LIMIT]) for i in range(0, len(tensors), LIMIT)]
    if len(groups) == 1:
        return groups[0]
    return tensor.concat(ir.RankedTensorType.get([len(conds)], i8), 0, groups)


def _uncast(cond: ir.Value) -> ir.Value:
    """A 0-d tensor<i1> condition, or the 0-d integer tensor it is `astype(bool)` of."""
    owner = cond.owner
    if isinstance(owner, ir.Block) or owner.name != ASTYPE.op_name:
        return cond
    source = ir.RankedTensorType(owner.operands[0].type)
    return owner.operands[0] if source.rank == 0 and isinstance(source.element_type, ir.IntegerType) else cond


def _as_i8(flag: ir.Value) -> ir.Value:
    """An integer scalar as an i8 that is nonzero exactly where it is."""
    i8, width = ir.IntegerType.get_signless(8), ir.IntegerType(flag.type).width
    if width == 8:
        return flag
    if width == 1:
        return arith.extui(i8, flag)
    return arith.extui(i8, arith.cmpi(arith.CmpIPredicate.ne, flag, arith.constant(flag.type, 0)))


def _nested_guards(fn: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == GUARD.name and op.parent.name != "func.func":
            found.append(op)
        return ir.WalkResult.ADVANCE

    walk(fn, visit)
    return found
