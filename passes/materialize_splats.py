"""materialize-splats: values IREE would prove constant become splat constants first.

Why: IREE 3.13 miscompiles two patterns it creates itself from a
`linalg.generic` it proves constant (tests/iree_repro/README.md): it raises
the generic to `linalg.fill`, folds the fill into a reduction that reads it,
and vectorizes that reduction with one combine per vector tile instead of one
per element (`(x == x).sum()` on ints gave 1); and a 0-d function result it
proves constant got the bits of a later dispatch's result (`np.where(b > -0.25,
2, b)` stored as exp(2)'s bits). IREE computes both right when the value is
an `arith.constant` splat tensor instead (measured: `splat_sum` over
`dense<2>` gives 10; `mB.mlir` with the constant gives 2).

What: the *candidates* are the results of elementwise `linalg.generic` and
`linalg.fill` ops that a reduction (a generic with a reduction iterator) reads
or that the function returns (and, probed after them, the elementwise values a
candidate not proven constant is made of: one read elsewhere too is not fused
on the copy, but IREE fuses it). On a copy of the module, each candidate gets an
opaque use (so it is not fused away), and upstream elementwise fusion,
canonicalization and CSE run: what those prove constant (`x == x` on ints,
`x * 0 + 3`, `uitofp(b) > -0.25` once fused with its producer) is what IREE's
own pipeline proves constant, as far as upstream folding goes. A candidate
whose copy is then a constant splat (an `arith.constant`, a `linalg.fill` of
one, or a generic that yields one) is replaced, in the real module, by an
`arith.constant` splat of its type; dead producers are left to `canonicalize`.

Assumes: runs after lower-to-linalg (linalg on tensors), in the JIT pipeline
before `canonicalize`. Guarantees: values only change into the constants they
are; a reduction never reads a candidate proven constant with a dynamic shape
(no splat constant can stand for it: `Unsupported`, the call runs in the
interpreter). Not guaranteed: IREE's integer range analysis proves more than
upstream folding; the verified first call (runtime/verify.py) is the backstop.
"""

from __future__ import annotations

import re

from pyfront.dialects.mlir import arith, ir, passmanager
from pyfront.errors import Unsupported
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

# Two rounds: a producer that folds to a constant in the first is fused into its consumer in the second
# (`x == x` then its astype, measured); IREE runs more, so some constants may stay unseen (see above).
_PROBE = "builtin.module(" + ", ".join(["func.func(linalg-fuse-elementwise-ops), canonicalize, cse"] * 2) + ")"
_SINK = "pyfront_probe.sink"  # the copy's opaque use of a candidate (never in the real module)


@register_pass("materialize-splats",
               "Replace values that reductions read or functions return, when folding proves them "
               "constant, by splat constants (IREE 3.13 miscompiles them otherwise).")
def materialize_splats(module: ir.Operation) -> None:
    candidates = [v for fn in functions(module) for v in _candidates(fn.operation)]
    if not candidates:
        return
    found = list(zip(candidates, _probe(module, candidates)))
    # A candidate not proven constant may be made of one that is, read elsewhere too (`v = x * 0 + 3;
    # v.astype(int64).sum()` and `v[0]`): not fused into it on the copy, but IREE fuses it. Those are
    # probed on their own (a probe's opaque use would keep them from fusing into the first candidates).
    producers = _producers([v for v, splat in found if splat is None], set(candidates))
    if producers:
        found += zip(producers, _probe(module, producers))
    for value, splat in found:
        if splat is None:
            continue
        shaped = ir.RankedTensorType(value.type)
        if not shaped.has_static_shape:
            reductions = [use.owner for use in value.uses if _is_reduction(use.owner)]
            if reductions:
                raise _unsupported_at(reductions[0], "a reduction over a value that is constant, with a "
                                      "dynamic shape (IREE 3.13 miscompiles it: tests/iree_repro/README.md)")
            continue
        owner = value.owner.operation
        with ir.InsertionPoint(owner), owner.location:
            constant = arith.ConstantOp(shaped, ir.DenseElementsAttr.get_splat(shaped, splat)).result
        value.replace_all_uses_with(constant)


def _unsupported_at(op: ir.Operation, reason: str) -> Unsupported:
    """`Unsupported` at the user's file and line that `op`'s location names (if it names one)."""
    where = re.search(r'"([^"]+)":(\d+):\d+', str(op.location))
    error = Unsupported(reason, filename=where[1] if where else None)
    error.lineno = int(where[2]) if where else None
    return error


def _candidates(fn: ir.Operation) -> list[ir.Value]:
    """Elementwise results that a reduction reads or a return returns, each once, in program order."""
    found: dict[ir.Value, None] = {}

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    if child.name == "func.return" or _is_reduction(child):
                        read = child.operands if child.name == "func.return" else child.opview.inputs
                        for v in read:  # a reduction's init (outs) is written, not reduced
                            if _is_elementwise_result(v):
                                found.setdefault(v, None)
                    if child.name != "linalg.generic":  # generic bodies hold scalars only
                        visit(child)

    visit(fn)
    return list(found)


def _producers(values: list[ir.Value], known: set) -> list[ir.Value]:
    """The elementwise values `values` are computed from, transitively, not among `known`."""
    found: dict[ir.Value, None] = {}
    todo = list(values)
    while todo:
        v = todo.pop()
        if v.owner.operation.name == "linalg.generic":
            for operand in v.owner.operation.opview.inputs:
                if _is_elementwise_result(operand) and operand not in known and operand not in found:
                    found[operand] = None
                    todo.append(operand)
    return list(found)


def _probe(module: ir.Operation, candidates: list[ir.Value]) -> list[ir.Attribute | None]:
    """Per candidate, the scalar it is a splat of after fusion and folding (on a copy), or None."""
    context = module.context
    allowed = context.allow_unregistered_dialects
    context.allow_unregistered_dialects = True
    try:
        with context, ir.Location.unknown():
            for k, v in enumerate(candidates):
                with ir.InsertionPoint.at_block_terminator(v.owner.operation.block):
                    ir.Operation.create(_SINK, operands=[v],
                                        attributes={"index": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)})
            copy = module.clone().operation  # (a seventh of printing and parsing it: 9 vs 68 ms on model_gan)
            _erase_sinks(module)
            passmanager.PassManager.parse(_PROBE).run(copy)
            found: list[ir.Attribute | None] = [None] * len(candidates)
            for sink in _sinks(copy):
                found[ir.IntegerAttr(sink.attributes["index"]).value] = _splat_of(sink.operands[0])
            return found
    finally:
        context.allow_unregistered_dialects = allowed


def _sinks(op: ir.Operation) -> list[ir.Operation]:
    out = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                if child.operation.name == _SINK:
                    out.append(child.operation)
                out.extend(_sinks(child.operation))
    return out


def _erase_sinks(module: ir.Operation) -> None:
    for sink in _sinks(module):
        sink.erase()


def _splat_of(value: ir.Value) -> ir.Attribute | None:
    """The scalar attribute `value` is a splat of, if its definition shows one."""
    owner = value.owner
    if isinstance(owner, ir.Block):  # a block argument
        return None
    owner = owner.operation
    if owner.name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
            return attr.get_splat_value()
        return None
    if owner.name == "linalg.fill":
        return _scalar_constant(owner.operands[0])
    if owner.name == "linalg.generic" and not _is_reduction(owner):
        body = owner.regions[0].blocks[0]
        yielded = list(body.operations)[-1].operands
        return _scalar_constant(yielded[ir.OpResult(value).result_number])
    return None


def _scalar_constant(value: ir.Value) -> ir.Attribute | None:
    owner = value.owner
    if not isinstance(owner, ir.Block) and owner.name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
            return attr
    return None


def _is_elementwise_result(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or not isinstance(value.type, ir.RankedTensorType):
        return False
    owner = owner.operation
    return owner.name == "linalg.fill" or (owner.name == "linalg.generic" and not _is_reduction(owner))


def _is_reduction(op: ir.Operation) -> bool:
    return op.name == "linalg.generic" and any(
        "reduction" in str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"]))
