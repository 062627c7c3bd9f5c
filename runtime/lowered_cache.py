"""Lowered modules in the disk cache: a warm process skips verification, layout, passes.

Preparing a variant is graph generation, then everything that reads only the
module the graph generator made: verifying it, checking its results' memory
layout, the JIT pass pipeline and reading off the lowered module what the
variant needs (runtime/lowering.py); then IREE. In a warm process,
whose IREE module comes from the disk cache, that middle part was most of a
first call's work (model_lstm_lm: 0.39 of 1.0 s after graph generation:
verification 0.13, layout 0.15, parsing the cached lowered module 0.09, and
printing it for IREE and reading its facts 0.12). It is a deterministic
function of:

* the module the graph generator made, *with its locations* (they name the
  guard sites that `explain` and errors show);
* what the caller names besides (`parts`: the pass names, in order, and
  which results are only copied into the caller's arrays);
* the settings passes read outside the module (passes/settings.py:
  PYFRONT_UNROLL_BUDGET, PYFRONT_POOL_MAX_ELEMENTS);
* the code that runs them: pyfront's own source (every `.py` file of the
  package, hashed once per process), the MLIR they link (iree-base-compiler's
  version) and NumPy, whose functions fold constants (passes/specialize.py);

and the key covers exactly these. The entry is the record `lower` returned
(a JSON value: the IREE input text, the guard lists, ...), so a hit parses no
MLIR at all. An entry that does not decode is ignored (`lookup` finds none).
The caller stores a record (`store`) only when lowering succeeded (a module
that fails verification or a layout check fails again, in every process), and
does not use the cache when it asks for each pass's output (PYFRONT_DUMP_DIR).
Off when the disk cache is off (PYFRONT_CACHE_DIR).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from pyfront import logs
from pyfront.passes import settings
from pyfront.runtime import disk_cache


def lookup(module_text: str, parts: tuple[str, ...]) -> tuple[str | None, Any]:
    """(the key of the module (`module_text`: printed with its locations) and `parts`, or None when the
    disk cache is off; the record stored for it, or None)."""
    cache_ = disk_cache.from_env()
    if cache_ is None:
        return None, None
    key = _key(module_text, parts)
    entry = cache_.get(key)
    if entry is not None:
        try:
            record = json.loads(entry.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            logs.cache_log.debug("prepared module in the disk cache does not decode: preparing it again")
        else:
            logs.cache_log.debug("prepared module read from the disk cache")
            return key, record
    return key, None


def store(key: str | None, record: Any) -> Any:
    """Store `record` (a JSON value) under `key` (from `lookup`; None: the cache is off); returns it as a hit would."""
    cache_ = disk_cache.from_env() if key is not None else None
    if cache_ is None:
        return record
    payload = json.dumps(record)
    cache_.put(key, payload.encode("utf-8"))
    return json.loads(payload)  # (as a hit gives it: lists for tuples)


def _key(module_text: str, parts: tuple[str, ...]) -> str:
    return disk_cache.make_key("pyfront-prepared", module_text, *parts, json.dumps(settings.current(), sort_keys=True),
                               *code_versions())


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
