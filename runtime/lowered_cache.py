"""The pass pipeline through the disk cache: a warm process skips the passes.

Preparing a variant is graph generation, then the JIT pass pipeline, then
IREE (runtime/jit.py). After IREE, the passes are the largest part of a first
call's own work, and of a warm process's, whose IREE module comes from the
disk cache (model_lstm_lm: 2.9 of 4.2 s preparing). They are a deterministic
function of:

* the module the graph generator made, *with its locations* (they name the
  guard sites that `explain` and errors show);
* the pass names, in order;
* the one setting a pass reads outside the module: PYFRONT_UNROLL_BUDGET
  (passes/unroll.py);
* the code that runs them: pyfront's own source (every `.py` file of the
  package, hashed once per process), the MLIR they link (iree-base-compiler's
  version) and NumPy, whose functions fold constants (passes/specialize.py);

and the key covers exactly these. The entry is the lowered module printed with
its locations; parsing it back gives the module the passes would have made,
which prints to the same text (so IREE's own disk-cache key is the same too).
An entry that does not parse is ignored and the passes run. Off when the disk
cache is off (PYFRONT_CACHE_DIR), and while PYFRONT_DUMP_DIR asks for each
pass's output.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np

from pyfront import logs
from pyfront.dialects.mlir import ir
from pyfront.passes import run_passes
from pyfront.passes.unroll import budget as unroll_budget
from pyfront.runtime import disk_cache


def lower(module: ir.Module, passes: list[str],
          after_each: Callable[[int, str, ir.Module], None] | None = None) -> ir.Module:
    """`module` after `passes`: `module` itself, lowered in place, or its lowering read from the disk cache.

    `after_each`: run_passes' per-pass hook (IR dumps); with it, the passes always run.
    """
    cache_ = disk_cache.from_env()
    if cache_ is None or after_each is not None:
        run_passes(module, passes, after_each)
        return module
    key = _key(module, passes)
    entry = cache_.get(key)
    if entry is not None:
        try:
            lowered = ir.Module.parse(entry.decode("utf-8"), module.context)
        except (ir.MLIRError, UnicodeDecodeError):
            logs.cache_log.debug("lowered module in the disk cache does not parse: running the passes")
        else:
            logs.cache_log.debug("lowered module read from the disk cache")
            return lowered
    run_passes(module, passes)
    cache_.put(key, module.operation.get_asm(enable_debug_info=True).encode("utf-8"))
    return module


def _key(module: ir.Module, passes: list[str]) -> str:
    return disk_cache.make_key("pyfront-lowered", module.operation.get_asm(enable_debug_info=True),
                               "\0".join(passes), str(unroll_budget()), *_code_versions())


@cache
def _code_versions() -> tuple[str, ...]:
    """What, besides the module, decides what the passes make of it (see the module docstring)."""
    import pyfront

    digest = hashlib.sha256()
    root = Path(pyfront.__file__).resolve().parent
    packages = {root} | {Path(sys.modules[name].__file__).resolve().parent
                         for name in ("pyfront.dialects", "pyfront.passes", "pyfront.runtime")}
    for package in sorted(packages):
        for path in sorted(package.rglob("*.py")):
            digest.update(str(path.relative_to(package.parent)).encode() + b"\0" + path.read_bytes())
    try:
        compiler = importlib.metadata.version("iree-base-compiler")
    except importlib.metadata.PackageNotFoundError:
        from iree.compiler.version import VERSION as compiler  # a source build
    return digest.hexdigest(), compiler, np.__version__, sys.version
