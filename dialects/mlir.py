"""The one place that imports the MLIR Python bindings (shipped in iree-base-compiler)."""

from iree.compiler import ir, passmanager, rewrite
from iree.compiler._mlir_libs import _mlir
from iree.compiler.dialects import arith, func, linalg, math, scf, tensor

# Where the bindings find a module for each namespace of pyfront's ops (dialects/dialect_modules).
_mlir.globals.append_dialect_search_prefix(__name__.rpartition(".")[0] + ".dialect_modules")

__all__ = ["arith", "func", "ir", "linalg", "math", "new_context", "passmanager", "rewrite", "scf", "tensor", "walk"]


def new_context() -> ir.Context:
    """A context that accepts pyfront's (unregistered) ops next to the upstream dialects."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx


def walk(op: ir.Operation, callback, order: ir.WalkOrder = ir.WalkOrder.PRE_ORDER) -> None:
    """`op.walk(callback, order)`, except that an exception the callback raises propagates as it is.

    The bindings turn it into a `RuntimeError` carrying only its text, which
    would hide, e.g., a signal handler's exception (pyfront/interrupts.py)
    from the caller.
    """
    raised = []

    def visit(o: ir.Operation) -> ir.WalkResult:
        try:
            return callback(o)
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the walk
            raised.append(e)
            return ir.WalkResult.INTERRUPT

    op.walk(visit, order)
    if raised:
        raise raised[0]
