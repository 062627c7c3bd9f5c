"""lower-guards: turn in-graph `pyfront.guard` ops into one extra function result.

Assumes: guards sit in the function's entry block (straight-line code).
Guarantees: no `pyfront.guard` remains. A function with N guards returns one
more value, a `tensor<Nxi8>` (1 = held; i8 because IREE mishandles i1 in
`tensor.from_elements`) of the guard conditions in program order, with
output path `guards`; `pyfront.guards` on the function lists each guard as
[kind, site, reason]. The runtime commits state and returns results only when
every flag is true; otherwise it re-runs the call in the interpreter and
blames the guards whose flags are false.
"""

from __future__ import annotations

from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir, tensor, walk
from pyfront.dialects.types import is_tensor
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
        i8 = ir.IntegerType.get_signless(8)
        conds = []
        with ir.InsertionPoint(ret), ret.location:
            for g in guards:
                c = GUARD.view(g).cond
                c = tensor.extract(c, []) if is_tensor(c.type) else c
                conds.append(arith.extui(i8, c))
            flags = tensor.from_elements(ir.RankedTensorType.get([len(conds)], i8), conds)
        fn.attributes["pyfront.guards"] = ir.ArrayAttr.get([
            ir.ArrayAttr.get([ir.StringAttr.get(getattr(GUARD.view(g), a)) for a in ("kind", "site", "reason")])
            for g in guards
        ])
        set_results(fn, list(ret.operands) + [flags], output_paths(fn) + ["guards"])
        for g in guards:
            g.erase()


def _nested_guards(fn: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == GUARD.name and op.parent.name != "func.func":
            found.append(op)
        return ir.WalkResult.ADVANCE

    walk(fn, visit)
    return found
