"""guard-subnormal-inputs: deopt when a float input holds a subnormal; refuse subnormal constants;
compute small float32 values exactly instead.

IREE's CPU runtime runs every dispatch with the x86 DAZ and FTZ bits set (no
flag turns them off, IREE 3.13): a subnormal operand reads as zero, so
`x.astype(bool)`, `np.sign(x)`, `x > 0` and `np.argmin(x)` of
`np.array([5e-324])` were False, 0, False and wrong. NumPy keeps subnormals.
Results that IREE flushes are NaN-marked by the primitives
(dialects/primitives/subnormal.py); this pass covers what they cannot see:

- each float argument of a function (the call's inputs, Python state reads
  after `lower-deferred-state`, Python floats passed at run time) that some
  op reads is guarded to hold no subnormal: an element is zero, NaN, or at
  least the smallest normal in magnitude. The arguments are checked in
  groups of one static shape and dtype (at most `MAX_GROUP_VALUES` each; an
  argument of a dynamic shape alone), a layer's weight and its two Adam
  moments together, each group's elements' i8 flags reduced by their min:
  small groups as rows of one table (passes/pooled_checks.py: one dispatch
  for all of them), larger ones by a reduction generic each. A failure
  deopts (kind "value", naming the group's paths; the interpreter answers);
- a float constant holding a subnormal (a literal such as 5e-324) is
  refused with `Unsupported` naming its line: compiled code would read it as
  zero. (`specialize` does not fold a result holding one.)

Small float32 values are computed exactly instead of guarded (not on the
GPU backends, whose code keeps its own rules). For each float32 argument of
at most `SMALL` elements, its closure is the entry block's elementwise ops
that `_exactly_in_float64` computes as NumPy does
(elementwise.EXACT_IN_FLOAT64) on float32 operands, with a static result of
at most `SMALL` elements, reading it or a result of the closure. When every
reader of the argument is such an op, the return or a check that tests it
only for NaN and infinity (guard-fp-events': a subnormal compares with
those constants as zero does; reshapes, concatenations and slice updates copy its bits to
such readers), and at most `MAX_LEAVING` of the closure's
results have another reader, the argument is not guarded, its closure's ops
get the `subnormal.EXACT` attribute (lowered through float64, subnormals
read and made through their bits) and those results are checked at the end
of the block, grouped by static shape as the arguments are ("no subnormal
float in the result of pyfront.multiply at <site>"). Adam's `b1 ** t` kept
as float32 state (subnormal after ~830 steps at b1 = 0.9, then forever)
thus stays compiled: its product and `1 - b1_power` are exact, and the step
size they give, normal, is checked before a weight-sized op reads it. A
small bias that a layer's forward reads (one leaving result per use) is
guarded as before.

float16 values need neither: pyfront computes float16 in float32
(dialects/primitives/elementwise.py), where every float16 subnormal is a
normal number, and x86's conversions between float16 and float32 (F16C) do
not consult DAZ and FTZ (checked by tests/test_small_dtypes.py on float16
subnormals).

Assumes: guards may sit in the entry block (before `lower-guards`); runs after
`lower-deferred-state` and `guard-fp-events` (whose checks it reads), before
`specialize` (whose folding makes constants only: a subnormal one is not
folded) and `lower-to-linalg` (which lowers the attribute). Arguments used
only by the terminator (returned as they are) are not checked: no
arithmetic reads them.
"""

from __future__ import annotations

import functools

import numpy as np
from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir, math, walk
from pyfront.dialects.primitives import emit, subnormal
from pyfront.dialects.primitives.elementwise import EXACT_IN_FLOAT64
from pyfront.dialects.types import dtype_of, is_tensor, shape_of, tensor_dtype
from pyfront.errors import Unsupported
from pyfront.passes.bound_dispatch_inputs import LIMIT
from pyfront.passes.funcs import functions, input_paths
from pyfront.passes.opaque_constants import BACKEND
from pyfront.passes.pooled_checks import group_flags, poolable
from pyfront.passes.registry import register_pass
from pyfront.passes.specialize import constant_array, has_subnormal

I8 = np.dtype(np.int8)
F32 = np.dtype(np.float32)
UNORDERED, ORDERED = int(arith.CmpFPredicate.UNO), int(arith.CmpFPredicate.ORD)
MAX_GROUP_VALUES = LIMIT  # IREE's HAL takes at most 32 buffers per dispatch (as guard-fp-events' groups)
# Elements of a float32 value computed exactly (scalars and small vectors: each element costs ~15 more ops).
SMALL = 16
# Results of an argument's exactly computed ops that other ops read (a check each, one dispatch per shape):
# Adam's powers leave one (the step size); a small bias read by a layer's forward leaves one per use, and is
# guarded instead (exact forward ops and their checks made model_treenn's step 13% slower, measured).
MAX_LEAVING = 2
GPU_BACKENDS = frozenset({"vulkan", "cuda"})
MOVES = frozenset({"pyfront.reshape", "pyfront.concatenate", "pyfront.update_slice"})


@register_pass("guard-subnormal-inputs",
               "Guard that float inputs hold no subnormal (IREE's CPU code reads them as zero); refuse subnormal constants; "
               "compute small float32 values exactly instead.")
def guard_subnormal_inputs(module: ir.Operation) -> None:
    walk(module, _refuse_subnormal_constant)
    backend = module.attributes[BACKEND] if BACKEND in module.attributes else None
    exact = backend is None or ir.StringAttr(backend).value not in GPU_BACKENDS
    for fn in functions(module):
        block = fn.body.blocks[0]
        terminator = block.operations[len(block.operations) - 1].operation
        computed = _computed_exactly(block, terminator) if exact else set()
        read = [(arg, path) for arg, path in zip(block.arguments, input_paths(fn))
                if _is_float(arg) and arg not in computed
                and any(use.owner.operation != terminator for use in arg.uses)]
        if not read:
            continue
        with ir.InsertionPoint(block.operations[0]), fn.location:
            groups = _groups(read)
            for group, held in zip(groups, _hold_no_subnormal([[arg for arg, _ in group] for group in groups])):
                paths = ", ".join(path for _, path in group)
                GUARD.build([held], [], kind="value",
                            reason=f"no subnormal float in {paths} (IREE's CPU code reads subnormals as zero)",
                            site=_site(fn.location))


def _computed_exactly(block: ir.Block, terminator: ir.Operation) -> set:
    """Mark `subnormal.EXACT` the ops computing from each small float32 argument that only such ops,
    the return and NaN/inf checks read, where at most `MAX_LEAVING` of their results reach another
    reader; guard those results at the block's end. Returns the arguments so computed (unguarded)."""
    candidates = [op.operation for op in block.operations if _computable_exactly(op.operation)]
    exact, marked, values = set(), [], []
    for arg in block.arguments:
        if not _small_float32(arg):
            continue
        closure, ops = [arg], []
        for op in candidates:
            if any(x in closure for x in op.operands):
                ops.append(op)
                if tensor_dtype(op.results[0].type) == F32:
                    closure.append(op.results[0])
        leaving = [v for v in closure if not all(_reads_exactly(use, terminator, ops) for use in v.uses)]
        if arg not in leaving and len(leaving) <= MAX_LEAVING:
            exact.add(arg)
            marked += [op for op in ops if op not in marked]
            values += [v for v in closure[1:] if v not in values]
    for op in marked:
        op.attributes[subnormal.EXACT] = ir.UnitAttr.get()
    leaving = [(v, f"{v.owner.name} at {_site(v.owner.location)}") for v in values
               if not all(_reads_exactly(use, terminator, marked) for use in v.uses)]
    groups = _groups(leaving)
    with ir.InsertionPoint(terminator), terminator.location:  # at the block's end, where all are defined
        held = _hold_no_subnormal([[v for v, _ in group] for group in groups])
    for group, group_held in zip(groups, held):
        (first, _), names = group[0], ", ".join(name for _, name in group)
        with ir.InsertionPoint(terminator), first.owner.location:
            GUARD.build([group_held], [], kind="value",
                        reason=f"no subnormal float in the result{'s' if len(group) > 1 else ''} of {names} "
                               "(IREE's CPU code reads subnormals as zero)", site=_site(first.owner.location))
    return exact


def _computable_exactly(op: ir.Operation) -> bool:
    return (op.name.startswith("pyfront.") and op.name.removeprefix("pyfront.") in EXACT_IN_FLOAT64
            and all(tensor_dtype(x.type) == F32 for x in op.operands) and _small(op.results[0]))


def _reads_exactly(use: ir.OpOperand, terminator: ir.Operation, exact_ops: list) -> bool:
    """Whether this reader of a float32 value sees a subnormal in it as NumPy would: the return, one of
    `exact_ops`, or a check that tests it only for NaN and infinity."""
    op = use.owner.operation if hasattr(use.owner, "operation") else use.owner
    if op == terminator or op in exact_ops:
        return True
    if op.name in MOVES:  # copies bits: exact where its result is read exactly (pooled_checks' tables)
        return all(_reads_exactly(u, terminator, exact_ops) for u in op.results[0].uses)
    if op.name != "linalg.generic":
        return False
    x = op.regions[0].blocks[0].arguments[use.operand_number]
    return all(_tests_nan_or_inf(u.owner, x) for u in x.uses)


def _tests_nan_or_inf(op: ir.Operation, x: ir.Value) -> bool:
    """`op` (reading `x`) tells a subnormal from zero apart no more than an isnan/isinf/isfinite test:
    `x != x`, `|x|` or `x` compared with a constant no smaller in magnitude than the smallest normal.
    (A subnormal and zero lie on the same side of such a constant.)"""
    op = op.operation if hasattr(op, "operation") else op
    if op.name == "math.absf":
        return all(_tests_nan_or_inf(u.owner, op.results[0]) for u in op.results[0].uses)
    if op.name != "arith.cmpf":
        return False
    a, b = op.operands
    if a == b:
        return ir.IntegerAttr(op.attributes["predicate"]).value in (UNORDERED, ORDERED)
    other = b if a == x else a
    owner = other.owner if isinstance(other, ir.OpResult) else None
    return (owner is not None and owner.name == "arith.constant"
            and abs(ir.FloatAttr(owner.attributes["value"]).value) >= np.finfo(F32).smallest_normal)


def _small(v: ir.Value) -> bool:
    shape = shape_of(v.type)
    return None not in shape and int(np.prod(shape)) <= SMALL


def _small_float32(v: ir.Value) -> bool:
    return is_tensor(v.type) and tensor_dtype(v.type) == F32 and _small(v)


def _groups(read: list[tuple[ir.Value, str]]) -> list[list[tuple[ir.Value, str]]]:
    """`read` in groups checked together: of one static shape and dtype, at most MAX_GROUP_VALUES each."""
    by_shape: dict[tuple, list] = {}
    for arg, path in read:
        shape = shape_of(arg.type)
        key = (shape, tensor_dtype(arg.type)) if None not in shape else ("dynamic", len(by_shape))
        by_shape.setdefault(key, []).append((arg, path))
    return [group[i:i + MAX_GROUP_VALUES] for group in by_shape.values()
            for i in range(0, len(group), MAX_GROUP_VALUES)]


def _refuse_subnormal_constant(op: ir.Operation) -> ir.WalkResult:
    if op.name == "arith.constant" and _is_float(op.results[0]):
        array = constant_array(op.results[0])
        if array is not None and has_subnormal(array):
            raise Unsupported(f"a float constant holds a subnormal value, which IREE's CPU code reads as zero "
                              f"(at {_site(op.location)})")
    return ir.WalkResult.ADVANCE


def _is_float(v: ir.Value) -> bool:
    return is_tensor(v.type) and tensor_dtype(v.type).kind == "f" and tensor_dtype(v.type) != np.float16


def _hold_no_subnormal(groups: list[list[ir.Value]]) -> list[ir.Value]:
    """Per group of float tensors (of one shape), a 0-d tensor<i1>: every element of each is 0, NaN or
    at least the smallest normal. Small groups share one reduction (passes/pooled_checks.py)."""
    return group_flags(groups, list, poolable, _not_subnormal, 0.0, _least)


def _not_subnormal(x: ir.Value) -> ir.Value:
    """An i1: float scalar `x` is 0, NaN or at least the smallest normal of its type."""
    smallest_normal = float(np.finfo(dtype_of(x.type)).smallest_normal)
    zero = arith.cmpf(arith.CmpFPredicate.OEQ, x, arith.constant(x.type, 0.0))
    # UGE: NaN passes too (NumPy and IREE agree on it).
    return arith.ori(zero, arith.cmpf(arith.CmpFPredicate.UGE, math.absf(x), arith.constant(x.type, smallest_normal)))


def _least(xs: list[ir.Value]) -> ir.Value:
    """A 0-d tensor<i8>: 1 iff no element of the float tensors `xs` (of one shape) is subnormal."""
    i8 = ir.IntegerType.get_signless(8)

    def ok(values: list[ir.Value]) -> ir.Value:
        return arith.extui(i8, functools.reduce(arith.andi, map(_not_subnormal, values)))

    rank = len(shape_of(xs[0].type))
    if not rank:
        return emit.elementwise(xs, (), I8, ok)
    every = emit.projection_map(rank, range(rank))  # the predicates and their min in one generic: one dispatch
    (least,) = emit.generic(xs, [every] * len(xs), [emit.fill(1, [], I8)], [emit.scalar_map(rank)],
                            [emit.REDUCTION] * rank, lambda args: arith.minsi(args[-1], ok(args[:-1])))
    return least


def _site(loc: ir.Location) -> str:
    return str(loc).removeprefix("loc(").removesuffix(")").replace('"', "")
