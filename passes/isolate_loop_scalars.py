"""isolate-loop-scalars: keep IREE from grouping a loop's single-element values into a cycle.

Why: IREE 3.13's FormScalarDispatches puts the single-element ops of a block
into one dispatch (see bound_dispatch_inputs.py). In the body of a real loop
that carries a single-element value (an int counter `correct += int(...)`, a
guard's "held so far" flag) beside other values, the group it forms from the
ops reading the carried value and the ops the rest of the body computes made
IREE's stream partitioning fail with "circular dependency: input operation
uses partition output": the function did not compile (the call ran in the
interpreter), e.g. `c = c + labels[i]; t = t + x[i]` over 300 rows.

What: every single-element tensor an scf.for body receives (its iteration
arguments), but bools, is
read through a `util.optimization_barrier` at the start of the region, which
IREE does not fuse across, so the carried value enters the body as the result
of an op IREE does not take into its scalar group. (A bool read through such
a barrier came out wrong: a carried guard flag `held and now` was false with
every condition true. Barriers on the other scalars alone were enough for the
failures above. scf.while loops are left alone: they compiled without, and
barriers in them made the Vulkan runtime fail, "queue_dealloca buffer was not
returned by queue_alloca".)

Assumes: linalg on tensors (after lower-to-linalg), IREE's
`util.optimization_barrier` available to the compiler the module goes to.
Guarantees: values are unchanged (a barrier is the identity); a module with
no such loop is unchanged.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.types import is_tensor
from pyfront.passes.bound_dispatch_inputs import BARRIER
from pyfront.passes.registry import register_pass

def _single_element(t: ir.Type) -> bool:
    """A single-element tensor, of another element type than i1: IREE 3.13 computed a carried i1 read
    through a barrier wrong (a guard's "held so far" flag came out false: tests/iree_repro)."""
    if not is_tensor(t):
        return False
    tensor = ir.RankedTensorType(t)
    return all(d == 1 for d in tensor.shape) and str(tensor.element_type) != "i1"


@register_pass("isolate-loop-scalars",
               "Read the single-element values a loop carries through an optimization barrier at the start "
               "of its body (IREE 3.13 otherwise forms a scalar dispatch that depends on itself).")
def isolate_loop_scalars(module: ir.Operation) -> None:
    blocks: list[ir.Block] = []

    def collect(op):
        if op.name == "scf.for":
            blocks.append(op.regions[0].blocks[0])
        return ir.WalkResult.ADVANCE

    walk(module, collect)
    for block in blocks:
        first = list(block.operations)[0]
        for arg in block.arguments:
            uses = [(use.owner, use.operand_number) for use in arg.uses]
            if not _single_element(arg.type) or not uses:
                continue
            with ir.InsertionPoint(first), first.location:
                cut = ir.Operation.create(BARRIER, results=[arg.type], operands=[arg]).result
            for user, operand in uses:
                user.operands[operand] = cut
