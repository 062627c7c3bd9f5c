"""lower-to-linalg: rewrite every pyfront array op into linalg/tensor/arith/math.

Assumes: static shapes; operands already in the op's compute dtype (as the
verifier requires). Guarantees: no `pyfront.<primitive>` op remains and no
unsigned integer type except in public signatures (passes/signless.py); each op
is replaced by its primitive's `lower` rule (dialects/primitives), built at
the op's location so diagnostics still point at the user's line; every
`tensor.dim` that can be computed from the function's arguments is (upstream
`resolve-ranked-shaped-type-result-dims`), so a shape guard reads the sizes
the arguments really have.

Why the last step: a linalg op pairing a dynamic dim with a static one (the
broadcast `np.add` of a `?` and a 4, which the front end guards) lets
`canonicalize` make the dynamic producer static (`tensor.cast` to 4 on its
operand) and then fold the guard's `tensor.dim` of that producer to 4, so the
guard held whatever size the value had (pyfront issue 16, item 4). A block
argument's type never changes, so a size computed from it cannot be folded.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, passmanager, rewrite, walk
from pyfront.dialects.primitives import all_primitives
from pyfront.dialects.primitives.emit import as_value
from pyfront.passes.registry import register_pass
from pyfront.passes.signless import erase_signedness


def _pattern(prim):
    def rewrite_op(op, rewriter) -> bool:
        view = prim.opdef.view(op)
        with rewriter.ip, op.location:
            result = prim.lower(view, *view.operands)
        rewriter.replace_op(op, [as_value(result)])
        return False  # matched

    return rewrite_op


@register_pass("lower-to-linalg", "Lower pyfront array ops to linalg/tensor/arith/math on tensors.")
def lower_to_linalg(module: ir.Operation) -> None:
    patterns = rewrite.RewritePatternSet(module.context)
    for prim in all_primitives():
        patterns.add(prim.op_name, _pattern(prim))
    rewrite.apply_patterns_and_fold_greedily(module, patterns.freeze())
    leftover = []
    names = {p.op_name for p in all_primitives()}

    def find(op):
        if op.name in names:
            leftover.append(op)
        return ir.WalkResult.ADVANCE

    walk(module, find)
    if leftover:
        raise RuntimeError(f"lower-to-linalg left {leftover[0].name} at {leftover[0].location}")
    erase_signedness(module)  # before anything verifies: arith takes no unsigned types
    passmanager.PassManager.parse("builtin.module(resolve-ranked-shaped-type-result-dims)",
                                  module.context).run(module)
