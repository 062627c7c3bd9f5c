"""Removal of unused side-effect-free ops, shared by passes that leave them behind.

Upstream canonicalization already erases dead ops it knows to be pure; it
does not know that unregistered `pyfront.<primitive>` ops are, so passes over
the pyfront dialect call `erase_dead_ops`. Erased: primitive ops and ops of
the arith, math and tensor dialects without regions whose results are all
unused. Never erased: guards, state ops, anything with a region or no result.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives.base import by_op_name

_PURE_DIALECTS = ("arith.", "math.", "tensor.")


def is_pure(op: ir.Operation) -> bool:
    if len(op.regions) or not len(op.results):
        return False
    return op.name.startswith(_PURE_DIALECTS) or by_op_name(op.name) is not None


def erase_dead_ops(root: ir.Operation) -> int:
    """Erase dead pure ops under `root` until none is left; returns how many were erased."""
    erased = 0
    while True:
        ops: list[ir.Operation] = []

        def collect(op):
            ops.append(op)
            return ir.WalkResult.ADVANCE

        walk(root, collect)
        dead = [op for op in reversed(ops) if is_pure(op) and all(not list(r.uses) for r in op.results)]
        if not dead:
            return erased
        for op in dead:
            if all(not list(r.uses) for r in op.results):
                op.erase()
                erased += 1
