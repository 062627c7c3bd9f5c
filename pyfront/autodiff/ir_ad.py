"""Reverse-mode AD as a transformation on the pyfront IR.

`backward(forward_ops, output, wrt)` takes the ops that compute the scalar
`output` (in program order, all in one block) and emits, at the current
insertion point, the ops computing d output / d w for each value w in `wrt`.
Each primitive's `vjp` rule (dialects/primitives, signature in bind.py) is
called on `ir.Value`s, so it emits `pyfront.<prim>` ops; the interpreter's
tape runs the very same rules on NumPy arrays.

Assumes: the forward ops are straight-line (the front end speculates branches
into guards and unrolls loops); values used by them but defined elsewhere are
constants of the differentiation unless they are in `wrt`; each `wrt` value
is used only as the differentiated variable (the front end passes a fresh
copy of each one).

Guarantees:
- only active ops are differentiated: ops with a float result that depends on
  a `wrt` value and that `output` depends on (dead-cotangent pruning), so a
  constant (`arith.constant`), an integer or bool result (comparisons, argmax)
  and anything `output` does not use cost nothing and need no rule;
- cotangents of a value used several times are added;
- an active op without a VJP rule, an active op with regions (scf.if/for/while),
  a case its rule cannot differentiate (`bind.NoVJP`, e.g. take from a dynamic
  first dim) and a state write of a differentiated value raise `Unsupported` naming the
  op and the user's file:line (ops carry it as their location), so the call
  runs in the interpreter;
- every emitted op carries the location of the forward op it differentiates;
- emitted ops whose results end up unused (cotangents of constants) are erased.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyfront.dialects.core import STATE_STORES
from pyfront.dialects.mlir import ir
from pyfront.dialects.primitives import bind, by_op_name
from pyfront.dialects.types import is_tensor, tensor_dtype
from pyfront.errors import Unsupported

CONTROL_FLOW = ("scf.if", "scf.for", "scf.while")


def backward(
    forward_ops: Sequence[ir.Operation], output: ir.Value, wrt: Sequence[ir.Value], seed: ir.Value | None = None
) -> list[ir.Value | None]:
    """Cotangents of `wrt` for `output` (seeded with `seed`, default 1), None where it does not depend on them.

    The backward ops are emitted at the current insertion point, which must
    follow the forward ops.
    """
    ops = [op.operation if hasattr(op, "operation") else op for op in forward_ops]
    varied = _varied(ops, wrt)
    if output not in varied:
        return [None] * len(wrt)
    active = _active(ops, output, varied)
    block = ir.InsertionPoint.current.block
    existing = {op.operation for op in block.operations}
    cotangents: dict[ir.Value, ir.Value] = {output: seed if seed is not None else bind.constant(1.0, like=output)}
    for op in reversed(active):
        result = op.results[0]
        ct = cotangents.pop(result, None)
        if ct is None:
            continue  # every use of the result contributed no cotangent (e.g. a `where` condition)
        prim = by_op_name(op.name)
        with op.location:
            try:
                operand_cts = prim.vjp(ct, result, *op.operands, **prim.opdef.view(op).params)
            except bind.NoVJP as e:
                raise _unsupported(op, str(e)) from None
        if len(operand_cts) != len(op.operands):
            raise ValueError(f"the VJP rule of {op.name} returned {len(operand_cts)} cotangents "
                             f"for {len(op.operands)} operands")
        for operand, g in zip(op.operands, operand_cts):
            if g is not None and operand in varied:
                _accumulate(cotangents, operand, g, op.location)
    result = [cotangents.get(w) for w in wrt]
    _erase_unused([op.operation for op in block.operations if op.operation not in existing],
                  {ct for ct in result if ct is not None})
    return result


def _varied(ops: list[ir.Operation], wrt: Sequence[ir.Value]) -> set[ir.Value]:
    """Float values that depend on a `wrt` value (forward reachability)."""
    varied = {w for w in wrt if _is_float(w)}
    for op in ops:
        if any(v in varied for v in _used_values(op)):
            varied.update(r for r in op.results if _is_float(r))
            if op.name in STATE_STORES:
                raise _unsupported(op, "writes a value that depends on the differentiated arguments to Python "
                                       "state inside the differentiated function")
    return varied


def _active(ops: list[ir.Operation], output: ir.Value, varied: set[ir.Value]) -> list[ir.Operation]:
    """The ops on a path from the varied values to `output`, in program order; checks each has a rule."""
    useful = {output}
    active = []
    for op in reversed(ops):
        if not any(r in useful for r in op.results):
            continue
        useful.update(_used_values(op))
        if any(r in varied and r in useful for r in op.results):
            _check_differentiable(op)
            active.append(op)
    active.reverse()
    return active


def _check_differentiable(op: ir.Operation) -> None:
    if op.name in CONTROL_FLOW:
        raise _unsupported(op, f"{op.name} (control flow on computed values) is on the differentiated path; "
                               "only speculated branches and unrolled loops are differentiated")
    if len(op.regions) or len(op.results) != 1:
        raise _unsupported(op, f"{op.name} is on the differentiated path and cannot be differentiated")
    prim = by_op_name(op.name)
    if prim is None:
        raise _unsupported(op, f"{op.name} is on the differentiated path and has no VJP rule")
    if prim.vjp is None:
        raise _unsupported(op, f"the primitive {prim.name} has no VJP rule")


def _used_values(op: ir.Operation) -> list[ir.Value]:
    """Operands of `op` and of the ops nested in its regions (what its results can depend on)."""
    used = list(op.operands)
    for region in op.regions:
        for block in region.blocks:
            for nested in block.operations:
                used.extend(_used_values(nested.operation))
    return used


def _accumulate(cotangents: dict[ir.Value, ir.Value], value: ir.Value, g: ir.Value, loc: ir.Location) -> None:
    previous = cotangents.get(value)
    if previous is None:
        cotangents[value] = g
        return
    with loc:
        cotangents[value] = bind.apply("add", previous, g)


def _erase_unused(emitted: list[ir.Operation], kept: set[ir.Value]) -> None:
    """Erase emitted ops whose results neither `kept` nor other ops use: rules compute every operand's
    cotangent, also those of constants (e.g. the input of `x @ w` when only `w` is differentiated)."""
    for op in reversed(emitted):
        results = list(op.results)
        if results and not len(op.regions) and not any(r in kept or list(r.uses) for r in results):
            op.erase()


def _is_float(v: ir.Value) -> bool:
    return is_tensor(v.type) and tensor_dtype(v.type).kind == "f"


_FILE_LOC = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+)')


def _unsupported(op: ir.Operation, reason: str) -> Unsupported:
    """An `Unsupported` at the user's file:line that `op` carries as its location."""
    error = Unsupported(f"gradient: {reason}")
    m = _FILE_LOC.search(str(op.location))
    if m:
        error.filename, error.lineno = m["file"], int(m["line"])
    return error
