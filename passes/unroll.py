"""unroll: fully unroll `scf.for` loops with a constant trip count, within a budget.

Assumes: loop bounds and step that are `arith.constant` index values (the
front end emits them for `for i in range(...)`, whose bounds the variant's
key fixes; see pyfront/loops.py). Loops with other bounds (e.g. a `tensor.dim`
of a dynamic dim) are left alone.

Guarantees: a loop is replaced by `trip count` copies of its body, in order,
the induction variable of copy k being the constant `lower + k * step` and
the iteration arguments of copy k the yielded values of copy k-1; the loop's
results become the last copy's yields (the initial values for zero
iterations). Semantics are unchanged: copies run in the loop's order.

Budget: a loop is unrolled only if trip count <= MAX_TRIP_COUNT (256) and
trip count x ops in its body (nested ops included) fits in what is left of
the module's budget, by default 16384 ops, set by the environment variable
PYFRONT_UNROLL_BUDGET (passes/settings.py; 0 disables unrolling).
The budget covers all loops of the module together (each unrolled loop
spends trip count x its body's size), so the ops unrolling adds to a module
never exceed it, however many loops it has. Inner loops are unrolled first,
so an outer loop's size counts its inner loops already unrolled: nested
loops spend the product of their trip counts.

A second budget bounds IREE's compile time: every contraction, reduction,
gather or scatter becomes a kernel of its own that IREE compiles separately
(~50 ms each), so a loop is unrolled only if trip count x such ops in its
body fits in what is left of MAX_KERNELS (64) for the module. A 200-step logistic-regression training
loop stays a loop (unrolled, it did not compile in 300 s); an 8-step LSTM is
unrolled.
"""

from __future__ import annotations

from pyfront.dialects.mlir import arith, ir, walk
from pyfront.dialects.primitives.base import by_op_name
from pyfront.passes import settings
from pyfront.passes.registry import register_pass

MAX_TRIP_COUNT = 256
MAX_KERNELS = 64


def _is_kernel(op: ir.Operation) -> bool:
    """A contraction or reduction (its float results may hold NaN from anywhere: "nonfinite"), an
    op over `axes` that reads other elements than its own position (gathers, scatters, argmax), or
    a slice at offsets computed at run time, which unrolling bakes into a kernel per copy."""
    prim = by_op_name(op.name)
    if prim is None:
        return False
    reduces = prim.fp_events is not None and prim.fp_events.detect == "nonfinite"
    return (reduces or any(a.name == "axes" for a in prim.params) and prim.name != "flip"
            or prim.name in ("dynamic_slice", "dynamic_update_slice"))


@register_pass("unroll", "Unroll scf.for loops with a constant trip count (budget: PYFRONT_UNROLL_BUDGET ops).")
def unroll(module: ir.Operation) -> None:
    limit = settings.integer("PYFRONT_UNROLL_BUDGET")
    loops: list[ir.Operation] = []

    def collect(op):
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    walk(module, collect, ir.WalkOrder.POST_ORDER)  # inner loops first
    left, kernels_left = limit, MAX_KERNELS
    for loop in loops:
        trip = _trip_count(loop)
        if trip is None or trip > MAX_TRIP_COUNT:
            continue
        size, made = _size(loop)
        size -= 1  # the loop itself is not in its body
        if trip * size <= left and trip * made <= kernels_left:
            _unroll(loop, trip)
            left -= trip * size
            kernels_left -= trip * made


def _constant_index(value: ir.Value) -> int | None:
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _trip_count(loop: ir.Operation) -> int | None:
    lower, upper, step = (_constant_index(loop.operands[i]) for i in range(3))
    if None in (lower, upper, step) or step <= 0:
        return None
    return max(0, -(-(upper - lower) // step))


def _size(op: ir.Operation) -> tuple[int, int]:
    """The ops in `op` and nested in it, and how many of them are kernels."""
    ops = kernels = 0

    def visit(nested):
        nonlocal ops, kernels
        ops += 1
        kernels += _is_kernel(nested.operation)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    return ops, kernels


def kernels(op: ir.Operation) -> int:
    """How many of `op` and the ops nested in it become IREE kernels of their own (see MAX_KERNELS)."""
    return _size(op)[1]


def _unroll(loop: ir.Operation, trip: int) -> None:
    body = loop.regions[0].blocks[0]
    induction, iter_args = body.arguments[0], list(body.arguments)[1:]
    lower, step = _constant_index(loop.operands[0]), _constant_index(loop.operands[2])
    *ops, terminator = list(body.operations)
    current = list(loop.operands)[3:]
    index = ir.IndexType.get()
    for k in range(trip):
        with ir.InsertionPoint(loop), loop.location:
            mapping = {induction: arith.constant(index, lower + k * step)}
            mapping.update(zip(iter_args, current))
            for op in ops:
                clone = op.operation.clone(ip=ir.InsertionPoint(loop))
                _remap(clone, mapping)
                mapping.update(zip(op.results, clone.results))
        current = [mapping.get(v, v) for v in terminator.operands]
    for result, value in zip(loop.results, current):
        result.replace_all_uses_with(value)
    loop.erase()


def _remap(clone: ir.Operation, mapping: dict) -> None:
    """Point the clone's operands (and those of ops nested in it) at this copy's values."""

    def visit(op):
        for i, operand in enumerate(op.operands):
            new = mapping.get(operand)
            if new is not None:
                op.operands[i] = new
        return ir.WalkResult.ADVANCE

    walk(clone, visit)
