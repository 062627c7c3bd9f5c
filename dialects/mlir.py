"""The one place that imports the MLIR Python bindings (shipped in iree-base-compiler)."""

from iree.compiler import ir, passmanager, rewrite
from iree.compiler.dialects import arith, func, linalg, math, scf, tensor

__all__ = ["arith", "func", "ir", "linalg", "math", "new_context", "passmanager", "rewrite", "scf", "tensor"]


def new_context() -> ir.Context:
    """A context that accepts pyfront's (unregistered) ops next to the upstream dialects."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx
