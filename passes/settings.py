"""Settings the passes read from the environment, besides the module they transform.

Each is an integer environment variable with a default, read each time a
pass runs. What a pass makes of a module thus depends on them, so they are
listed here, in one place: the lowered-module cache (runtime/lowered_cache.py)
keys on `current()`, and the preparation worker lowers a caller's module with
the caller's values (`Lowering.settings`, applied by `apply`).

- `PYFRONT_UNROLL_BUDGET` (ops, default 16384): what unrolling may add to a
  module (passes/unroll.py); 0 disables unrolling.
- `PYFRONT_POOL_MAX_ELEMENTS` (elements, default 4096): the largest group of
  values whose check shares a pooled reduction (passes/pooled_checks.py);
  0 gives every group its own reduction, as before pooling (bench/ablation.py
  compares the two).
"""

from __future__ import annotations

import os

DEFAULTS = {"PYFRONT_UNROLL_BUDGET": 16384, "PYFRONT_POOL_MAX_ELEMENTS": 1 << 12}


def integer(name: str) -> int:
    """The setting `name` (one of DEFAULTS) in this process's environment."""
    value = os.environ.get(name)
    if value is None:
        return DEFAULTS[name]
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def current() -> dict[str, int]:
    """Every setting, as this process's passes would read it."""
    return {name: integer(name) for name in DEFAULTS}


def apply(values: dict[str, int]) -> None:
    """Make this process's passes read `values` (another process's `current()`)."""
    os.environ.update({name: str(value) for name, value in values.items()})
