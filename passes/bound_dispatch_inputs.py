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

IREE also puts *unrelated* single-element ops into one dispatch
(FormScalarDispatches: from the last such op of the function's block it
walks back over the block, taking every single-element linalg or tensor op
until it meets one that defines an operand of an op it did not take):
`sum(float(x.max()) for x in xs)` over 40 arrays made one dispatch of the 40
floating-point checks of the maxima and the running sum, 42 buffers. So the
single-element ops of the entry block are counted in order, as one group, by
the tensors they read from outside the group and those they give to other
ops; where the next op would take the group past `GROUP_LIMIT`, every value of
the group that a later op uses goes through a barrier placed there, which
ends IREE's walk at the group's last op (a use by a barrier is a use by an
op it does not take).

Assumes: linalg on tensors (after lower-to-linalg), IREE's
`util.optimization_barrier` available to the compiler the module goes to.
Guarantees: values are unchanged (a barrier is the identity); a module that
needs no cut is unchanged. Not guaranteed: an op with more than `LIMIT`
operands of its own (each its own dispatch input) keeps them (lower-guards
gathers its flags in groups for that reason). If IREE still forms a dispatch
its runtime refuses, the JIT refuses the module naming the limit
(runtime/jit.py) and the call runs in the interpreter.
"""

from __future__ import annotations

import math

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.types import is_tensor
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

# Half of IREE's 32: a fused dispatch also binds its outputs, and a root it fuses into (a
# reduction, a matmul) its own inputs.
LIMIT = 16
# A group of single-element ops is counted as the very dispatch IREE forms of it, inputs and
# outputs alike: IREE's 32 less a margin (a larger group than this one was never seen to load).
GROUP_LIMIT = 28
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
        _bound_single_element_groups(fn.body.blocks[0])


def _single_element(op: ir.Operation) -> bool:
    """An op IREE's FormScalarDispatches may take: a linalg or tensor compute op whose operands and
    results are scalars or static tensors of at most one element."""
    if not op.name.startswith(("linalg.", "tensor.")) or op.name in _RESHAPES | _READS_NOTHING | {"tensor.cast"}:
        return False
    for v in (*op.operands, *op.results):
        if is_tensor(v.type):
            shaped = ir.RankedTensorType(v.type)
            if not shaped.has_static_shape or math.prod(shaped.shape) > 1:
                return False
    return True


def _bound_single_element_groups(block: ir.Block) -> None:
    ops = [op.operation for op in block.operations]
    # Found first, made after: the bindings' Operation hashes do not survive operand updates.
    position = {op: i for i, op in enumerate(ops)}
    taken = {op for op in ops if _single_element(op)}
    cuts, group, inner, reads, gives = [], [], set(), set(), set()
    for op in ops:
        if op not in taken:
            continue
        new_reads = {v for v in op.operands if _binds(v) and v not in inner}
        new_gives = {r for r in op.results if any(use.owner.operation not in taken for use in r.uses)}
        if group and len(reads | new_reads) + len(gives | new_gives) > GROUP_LIMIT:
            at = position[op]
            cuts.append((at, [(r, [(use.owner.operation, use.operand_number) for use in r.uses
                                   if _position_in(block, use.owner.operation, position) >= at])
                              for member in group for r in member.results]))
            group, inner, reads, gives = [], set(), set(), set()
            new_reads = {v for v in op.operands if _binds(v)}
        group.append(op)
        inner.update(op.results)
        reads |= new_reads
        gives |= new_gives
    for at, values in cuts:
        _cut(ops, at, values)


def _position_in(block: ir.Block, op: ir.Operation, position: dict) -> int:
    """The position of `op`, or of the op of `block` it is nested in (a use inside an scf.if)."""
    while op not in position:
        op = op.parent
    return position[op]


def _binds(v: ir.Value) -> bool:
    """A tensor a dispatch reading it binds (not one made in it: an empty, a constant, a fill)."""
    return is_tensor(v.type) and (isinstance(v.owner, ir.Block) or v.owner.operation.name not in _READS_NOTHING)


def _cut(ops: list, at: int, values: list) -> None:
    """Each value, where ops at or after `ops[at]` (or in their regions) use it ((op, operand number)
    pairs), read through a barrier placed before `ops[at]`."""
    before = ops[at]
    for value, uses in values:
        if not uses:
            continue
        with ir.InsertionPoint(before), before.location:
            cut = ir.Operation.create(BARRIER, results=[value.type], operands=[value]).result
        for user, operand in uses:
            user.operands[operand] = cut


def _barrier(op: ir.Operation, value: ir.Value) -> None:
    """Make `op` read `value` through an optimization barrier."""
    with ir.InsertionPoint(op), op.location:
        cut = ir.Operation.create(BARRIER, results=[value.type], operands=[value]).result
    for i, operand in enumerate(op.operands):
        if operand == value:
            op.operands[i] = cut
