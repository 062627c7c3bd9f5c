"""Preparing a module through the disk cache: a warm process skips verification, layout, passes.

Preparing a variant is graph generation, then everything that reads only the
module the graph generator made: verifying it, checking its results' memory
layout, the JIT pass pipeline and reading off the lowered module what the
variant needs (runtime/jit.py `_prepared`); then IREE. In a warm process,
whose IREE module comes from the disk cache, that middle part was most of a
first call's work (model_lstm_lm: 0.39 of 1.0 s after graph generation:
verification 0.13, layout 0.15, parsing the cached lowered module 0.09, and
printing it for IREE and reading its facts 0.12). It is a deterministic
function of:

* the module the graph generator made, *with its locations* (they name the
  guard sites that `explain` and errors show);
* what the caller names besides (`parts`: the pass names, in order, and
  which results are only copied into the caller's arrays);
* the one setting a pass reads outside the module: PYFRONT_UNROLL_BUDGET
  (passes/unroll.py);
* the code that runs them: pyfront's own source (every `.py` file of the
  package, hashed once per process), the MLIR they link (iree-base-compiler's
  version) and NumPy, whose functions fold constants (passes/specialize.py);

and the key covers exactly these. The entry is what the caller's `prepare`
returned (a JSON value: the IREE input text, the guard lists, ...), so a hit
parses no MLIR at all. An entry that does not decode is ignored and
`prepare` runs. Nothing is cached when `prepare` raises (a module that fails
verification or a layout check fails again, in every process). Off when the
disk cache is off (PYFRONT_CACHE_DIR), and when the caller asks for each
pass's output (PYFRONT_DUMP_DIR).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from pyfront import logs
from pyfront.dialects.mlir import ir
from pyfront.passes.unroll import budget as unroll_budget
from pyfront.runtime import disk_cache


def prepared(module: ir.Module, parts: tuple[str, ...], prepare: Callable[[], Any], cached: bool = True) -> Any:
    """`prepare()` (which reads only `module` and `parts`), or what it returned for the same key before.

    `cached=False`: always run it (and store nothing), e.g. while its passes dump their IR.
    """
    cache_ = disk_cache.from_env()
    if cache_ is None or not cached:
        return prepare()
    key = _key(module, parts)
    entry = cache_.get(key)
    if entry is not None:
        try:
            record = json.loads(entry.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            logs.cache_log.debug("prepared module in the disk cache does not decode: preparing it again")
        else:
            logs.cache_log.debug("prepared module read from the disk cache")
            return record
    payload = json.dumps(prepare())
    cache_.put(key, payload.encode("utf-8"))
    return json.loads(payload)  # (as a hit gives it: lists for tuples)


def _key(module: ir.Module, parts: tuple[str, ...]) -> str:
    return disk_cache.make_key("pyfront-prepared", module.operation.get_asm(enable_debug_info=True),
                               *parts, str(unroll_budget()), *code_versions())


@cache
def code_versions() -> tuple[str, ...]:
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
