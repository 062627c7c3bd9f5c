"""pyfront: compile plain imperative Python + NumPy functions speculatively with MLIR and IREE.

    import numpy as np
    import pyfront

    @pyfront.compile
    def mlp(x, w1, b1, w2):
        return np.tanh(x @ w1 + b1) @ w2

    mlp(x, w1, b1, w2)          # the first calls run in the interpreter and are profiled
    mlp(x, w1, b1, w2)          # later calls run compiled code guarded by what was observed,
                                # once IREE has compiled it in the background (pyfront.wait(mlp))
    print(pyfront.explain(mlp)) # which variants exist, their guards, why anything ran interpreted

    dw = pyfront.grad(lambda w: np.sum(np.tanh(x @ w) ** 2))(w)  # gradients of plain NumPy code
"""

import os as _os

# In a source checkout dialects/, passes/ and runtime/ sit beside this package
# (the project's layout); make them importable as pyfront.dialects etc. An
# installed wheel has them inside the package and needs nothing here.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "dialects")) and _os.path.isdir(
    _os.path.join(_root, "dialects")
):
    __path__.append(_root)

# The public API loads lazily so that `import pyfront` stays cheap and the
# compiler's heavy imports happen on first use.
_EXPORTS = {
    "CompiledFunction": "pyfront.api",
    "compile": "pyfront.api",
    "explain": "pyfront.api",
    "wait": "pyfront.api",
    "export": "pyfront.aot",
    "load": "pyfront.runtime.aot",
    "Config": "pyfront.config",
    "Unsupported": "pyfront.errors",
    "StrictModeError": "pyfront.errors",
    "grad": "pyfront.autodiff",
    "value_and_grad": "pyfront.autodiff",
}
__all__ = [
    "CompiledFunction", "Config", "StrictModeError", "Unsupported", "compile", "explain", "export", "grad", "load",
    "value_and_grad", "wait",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        # Kept as a module attribute: later reads (a compiled step calling `pyfront.value_and_grad`
        # each call, and the entry guard that checks it) are plain lookups, not this hook.
        value = globals()[name] = getattr(importlib.import_module(_EXPORTS[name]), name)
        return value
    raise AttributeError(f"module 'pyfront' has no attribute {name!r}")
