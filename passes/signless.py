"""Erase integer signedness once pyfront ops are lowered: `ui8`..`ui64` become `i8`..`i64`.

Why: in the pyfront dialect an unsigned NumPy dtype is an unsigned MLIR
integer type (dialects/types.py), so lowering rules choose unsigned
operations (divui, cmpi ult, maxui, extui, uitofp, fptoui) from the types
they see. arith and linalg verify only signless integers, so the lowered IR
must not keep them.

Assumes: every pyfront array op is lowered (called at the end of
lower-to-linalg, before anything verifies the module). Guarantees: no value
inside a function, no function type and no attribute has an unsigned integer
type, except the signatures of public functions: IREE's ABI passes their
`ui` arguments and results as NumPy's unsigned dtypes (a `tensor<4xui8>`
result comes back as a uint8 array), so each such argument is bitcast to its
signless twin at entry, and each such result back before the return. The
bitcast is IREE's `flow.tensor.bitcast`: IREE 3.13 cannot bufferize an
upstream `tensor.bitcast` of a 0-d tensor ("op was not bufferized"). Bits never
change: the erasure is a relabeling.
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.mlir import func, ir, tensor, walk
from pyfront.dialects.primitives import emit
from pyfront.dialects.types import as_signless_int, isa, shape_of
from pyfront.passes.funcs import functions


def signless(t: ir.Type) -> ir.Type:
    """`t` with every unsigned integer type in it made signless."""
    if isa(ir.IntegerType, t) and ir.IntegerType(t).is_unsigned:
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    if isa(ir.RankedTensorType, t):
        ranked = ir.RankedTensorType(t)
        element = signless(ranked.element_type)
        if element != ranked.element_type:
            return ir.RankedTensorType.get(ranked.shape, element, ranked.encoding, loc=ir.Location.unknown())
    if isa(ir.FunctionType, t):
        ft = ir.FunctionType(t)
        return ir.FunctionType.get([signless(i) for i in ft.inputs], [signless(r) for r in ft.results])
    return t


def erase_signedness(module: ir.Operation) -> None:
    for fn in functions(module):
        visibility = fn.attributes["sym_visibility"] if "sym_visibility" in fn.attributes else None
        public = visibility is None or ir.StringAttr(visibility).value == "public"
        walk(fn.operation, _relabel)
        _drop_identity_bitcasts(fn.operation)
        if not fn.body.blocks:
            continue
        entry = fn.body.blocks[0]
        if public:
            _bitcast_arguments(entry)
            walk(fn.operation, lambda op: _bitcast_results(op, fn))
        else:
            for arg in entry.arguments:
                arg.set_type(signless(arg.type))
            fn.attributes["function_type"] = ir.TypeAttr.get(signless(fn.type))


def _relabel(op: ir.Operation) -> ir.WalkResult:
    """Make `op`'s results, its regions' block arguments and its attributes signless.

    A function's own entry arguments are its signature: erase_signedness decides those."""
    for result in op.results:
        result.set_type(signless(result.type))
    for region in op.regions:
        for block in region.blocks:
            if op.name == "func.func" and block == region.blocks[0]:
                continue
            for arg in block.arguments:
                arg.set_type(signless(arg.type))
    if op.name != "func.func":
        for name in list(op.attributes):
            attr = _signless_attribute(op.attributes[name])
            if attr is not None:
                op.attributes[name] = attr
    return ir.WalkResult.ADVANCE


def _drop_identity_bitcasts(root: ir.Operation) -> None:
    """Unsigned constants were signless ones bitcast to `ui` (emit.dense): now bitcasts to themselves,
    which IREE's bufferization does not take."""
    found = []

    def find(op: ir.Operation) -> ir.WalkResult:
        if op.name == "tensor.bitcast" and op.operands[0].type == op.results[0].type:
            found.append(op)
        return ir.WalkResult.ADVANCE

    walk(root, find)
    for op in found:
        op.results[0].replace_all_uses_with(op.operands[0])
        op.erase()


def _signless_attribute(attr: ir.Attribute) -> ir.Attribute | None:
    """`attr` relabeled, or None where it holds no unsigned type. (Unsigned constant tensors are
    signless already: emit.dense bitcasts them, as arith.constant verifies only signless ints.)"""
    if isinstance(attr, ir.TypeAttr):
        t = attr.value
        return ir.TypeAttr.get(signless(t)) if signless(t) != t else None
    if isinstance(attr, ir.IntegerAttr) and signless(attr.type) != attr.type:
        t = signless(attr.type)
        return ir.IntegerAttr.get(t, as_signless_int(attr.value, np.dtype(f"uint{ir.IntegerType(t).width}")))
    return None


def _bitcast_arguments(entry: ir.Block) -> None:
    """Public arguments keep their `ui` types; their users read a signless bitcast of them."""
    for arg in entry.arguments:
        t = signless(arg.type)
        if t == arg.type:
            continue
        _require_tensor(arg.type)
        with ir.InsertionPoint.at_block_begin(entry), arg.location:
            cast = _bitcast(arg, t)
        bitcast = cast.owner.operation
        sizes = [v.owner.operation for v in list(bitcast.operands)[1:]]  # the `tensor.dim`s of its dynamic sizes
        arg.replace_all_uses_except(cast, [bitcast, *sizes])


def _bitcast_results(op: ir.Operation, fn: func.FuncOp) -> ir.WalkResult:
    """A public function's `ui` results: the returned signless values bitcast back."""
    if op.name == "func.return" and op.parent.name == "func.func":
        for i, want in enumerate(fn.type.results):
            value = op.operands[i]
            if value.type == want:
                continue
            _require_tensor(want)
            with ir.InsertionPoint(op), op.location:
                op.operands[i] = _bitcast(value, want)
    return ir.WalkResult.ADVANCE


def _bitcast(value: ir.Value, t: ir.Type) -> ir.Value:
    """`value` as tensor type `t` of the same shape and element width (IREE's flow.tensor.bitcast)."""
    dynamic = [tensor.dim(value, emit.index(i)) for i, d in enumerate(shape_of(value.type)) if d is None]
    return ir.Operation.create(
        "flow.tensor.bitcast", results=[t], operands=[value, *dynamic, *dynamic],
        attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(dynamic), len(dynamic)])}).result


def _require_tensor(t: ir.Type) -> None:
    if not isa(ir.RankedTensorType, t):
        raise RuntimeError(f"an unsigned {t} in a public function's signature must be a tensor")
