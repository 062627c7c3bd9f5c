"""The `pyfront` MLIR dialect: op definitions, verification and builders.

The MLIR Python bindings cannot register new dialects, so pyfront ops are ops
of an unregistered dialect, printed in generic form. Each op is declared once
(an `OpDef`), and `verify_module` checks a module against those declarations.
"""

from pyfront.dialects import (
    core,  # noqa: F401  (registers the core ops)
    primitives,  # noqa: F401  (registers the array ops)
)
from pyfront.dialects.opdef import OpDef, VerificationError, lookup, registered_ops, verify_module

__all__ = ["OpDef", "VerificationError", "lookup", "registered_ops", "verify_module"]
