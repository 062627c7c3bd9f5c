"""Warnings raised while the compiler evaluates user-visible operations on constants.

Assumes CPython's `warnings` machinery: `warnings.filters` is the one list
both `warnings.warn` and C code (NumPy's floating-point warnings) consult on
every warning, and each module's `__warningregistry__` (what the "default"
and "module" actions have already shown) is discarded whenever filters are
changed through `warnings.catch_warnings`/`simplefilter`/`filterwarnings`.

Guarantees: `warnings_as(action)` applies `action` ("error" or "ignore") to
every warning raised in its block, without that discard: it puts one entry
at the front of the filter list and takes it out again in place. A compile
therefore never resets which warnings the user has already been shown (with
`catch_warnings`, the next call of the user's code showed a "default"
warning, such as NumPy's "overflow encountered in cast", a second time,
where CPython shows it once). Neither action records anything in a
registry: "error" raises before, "ignore" returns before.

Like `catch_warnings`, it is not thread-safe: another thread warning during
the block sees the entry too.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager


@contextmanager
def warnings_as(action: str):
    if action not in ("error", "ignore"):
        raise ValueError(f"warnings_as: {action!r} is not 'error' or 'ignore'")
    entry = (action, None, Warning, None, 0)
    filters = warnings.filters
    filters.insert(0, entry)
    try:
        yield
    finally:
        for i, f in enumerate(filters):
            if f is entry:
                del filters[i]
                break
