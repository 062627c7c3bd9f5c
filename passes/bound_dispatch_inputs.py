"""bound-dispatch-inputs: keep IREE from fusing more inputs into one dispatch than its runtime binds.

Why: IREE 3.13's dispatch formation fuses a chain of elementwise ops into
one dispatch whatever the number of distinct tensors the chain reads, but
its runtime refuses a dispatch with more than 32 buffer bindings when it
loads the module ("binding count 41 > 32"). `sum(xs)` over 40 arrays (a
chain of 39 adds) reaches it; the call then ran in the interpreter as an
internal compiler error.

What: each tensor value gets the set of tensors a dispatch computing it
would read if IREE fused everything elementwise into it: a function
argument, or the result of an op IREE does not fuse into its consumers (a
reduction, a matmul, anything but an elementwise `linalg.generic`), is one
tensor; an elementwise generic reads the union of its operands' sets
(constants and `tensor.empty` read nothing). Where an op's operands read
more than `LIMIT` tensors, the operands with the largest sets are passed
through `util.optimization_barrier`, which IREE does not fuse across, until
the op reads at most `LIMIT`.

Assumes: linalg on tensors (after lower-to-linalg), IREE's
`util.optimization_barrier` available to the compiler the module goes to.
Guarantees: values are unchanged (a barrier is the identity); a module that
needs no cut is unchanged. Not guaranteed: an op with more than `LIMIT`
operands of its own (each its own dispatch input) keeps them (lower-guards
gathers its flags in groups for that reason); and IREE also groups unrelated
0-d ops into one dispatch (`sum(float(x.max()) for x in xs)` over 40 float
arrays: the 40 floating-point checks of the maxes and the running sum), which
no cut here prevents. The JIT then refuses the module naming the limit
(runtime/jit.py) and the call runs in the interpreter.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.types import is_tensor
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

# Half of IREE's 32: a fused dispatch also binds its outputs, and a root it fuses into (a
# reduction, a matmul) its own inputs.
LIMIT = 16
BARRIER = "util.optimization_barrier"
_READS_NOTHING = {"arith.constant", "tensor.empty", "linalg.fill"}
_RESHAPES = {"tensor.expand_shape", "tensor.collapse_shape"}  # IREE moves them out of the way of fusion


def _fused_into_consumers(op: ir.Operation) -> bool:
    """An elementwise generic, or a reshape."""
    if op.name in _RESHAPES:
        return True
    if op.name != "linalg.generic":
        return False
    return all(str(t) == "#linalg.iterator_type<parallel>" for t in ir.ArrayAttr(op.attributes["iterator_types"]))


@register_pass("bound-dispatch-inputs",
               f"Put an optimization barrier where IREE would fuse more than {LIMIT} input tensors into one "
               "dispatch (its runtime binds at most 32).")
def bound_dispatch_inputs(module: ir.Operation) -> None:
    for fn in functions(module):
        reads: dict[ir.Value, frozenset] = {}

        def read_by(v: ir.Value) -> frozenset:
            return reads.get(v, frozenset((v,)))

        def visit(op: ir.Operation) -> ir.WalkResult:
            op = op.operation
            operands = [v for v in op.operands if is_tensor(v.type)]
            if op.name in _READS_NOTHING or op.name == BARRIER:
                reads.update((r, frozenset()) for r in op.results)
                return ir.WalkResult.ADVANCE
            total = frozenset().union(*map(read_by, operands))
            if op.name.startswith("linalg."):  # an op a dispatch is formed around
                for v in sorted(set(operands), key=lambda v: len(read_by(v)), reverse=True):
                    if len(total) <= LIMIT or len(read_by(v)) <= 1:
                        break
                    _barrier(op, v)
                    total = frozenset().union(*map(read_by, [w for w in op.operands if is_tensor(w.type)]))
            if _fused_into_consumers(op):
                reads.update((r, total) for r in op.results)
            return ir.WalkResult.ADVANCE

        walk(fn.operation, visit)


def _barrier(op: ir.Operation, value: ir.Value) -> None:
    """Make `op` read `value` through an optimization barrier."""
    with ir.InsertionPoint(op), op.location:
        cut = ir.Operation.create(BARRIER, results=[value.type], operands=[value]).result
    for i, operand in enumerate(op.operands):
        if operand == value:
            op.operands[i] = cut
