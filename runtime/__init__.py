"""pyfront's runtime: IREE compilation, execution and the on-disk artifact cache.

The names below load lazily so that importing a sibling module (say
`pyfront.runtime.variant`) does not load IREE.
"""

_EXPORTS = {
    "BACKENDS": "pyfront.runtime.iree_backend",
    "Backend": "pyfront.runtime.iree_backend",
    "CompileError": "pyfront.runtime.iree_backend",
    "CompileResult": "pyfront.runtime.iree_backend",
    "LoadedModule": "pyfront.runtime.iree_backend",
    "compile_vmfb": "pyfront.runtime.iree_backend",
    "get_backend": "pyfront.runtime.iree_backend",
    "DiskCache": "pyfront.runtime.disk_cache",
}
__all__ = [
    "BACKENDS",
    "Backend",
    "CompileError",
    "CompileResult",
    "DiskCache",
    "LoadedModule",
    "compile_vmfb",
    "get_backend",
]


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'pyfront.runtime' has no attribute {name!r}")
