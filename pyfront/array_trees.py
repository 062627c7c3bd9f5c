"""Trees of arrays (dicts, lists, tuples, named tuples of NumPy arrays) as flat lists of leaves with paths.

`flatten(tree)` returns the leaves in a fixed order (dict keys in insertion
order, sequences in index order) with their paths written as code indexes
them (`['w1']`, `[0][2]`), and `rebuild(tree, values)` puts new values back
into a copy of the same structure (the same container types; a named tuple
stays that named tuple). The order depends only on the structure, so two
processes holding equal structures flatten them the same way.

A leaf is a NumPy array, a NumPy scalar or a Python float; anything else
(ints, strings, objects) is reported by `flatten` as a `TypeError` naming its
path, because a collective has no sound meaning for it (a Python int summed
across ranks would silently become a float or overflow differently).
"""

from __future__ import annotations

from typing import Any

import numpy as np

LEAF_TYPES = (np.ndarray, np.generic, float)


def flatten(tree: Any, path: str = "") -> list[tuple[str, Any]]:
    """The `(path, leaf)` pairs of `tree` in structure order; TypeError naming the first bad leaf."""
    if isinstance(tree, dict):
        return [item for key, sub in tree.items() for item in flatten(sub, f"{path}[{key!r}]")]
    if isinstance(tree, (list, tuple)):
        return [item for i, sub in enumerate(tree) for item in flatten(sub, f"{path}[{i}]")]
    if isinstance(tree, LEAF_TYPES) and not isinstance(tree, (np.bool_, bool)):
        return [(path, tree)]
    raise TypeError(f"{path or 'the argument'} is a {type(tree).__name__}: only NumPy arrays, NumPy scalars "
                    f"and Python floats (in dicts, lists and tuples) can be communicated")


def as_array(leaf: Any) -> np.ndarray:
    """The leaf's values as a NumPy array (a Python float is float64, as NumPy makes it)."""
    return leaf if isinstance(leaf, np.ndarray) else np.asarray(leaf)


def like(leaf: Any, values: np.ndarray) -> Any:
    """`values` (shaped like `leaf`) given the leaf's type: array, NumPy scalar of its dtype, or float."""
    if isinstance(leaf, np.ndarray):
        return values
    if isinstance(leaf, np.generic):
        return values.dtype.type(values[()])
    return float(values[()])


def rebuild(tree: Any, values: list) -> Any:
    """A copy of `tree`'s structure holding `values` (in `flatten`'s order) at its leaves."""
    rest = iter(values)
    result = _rebuild(tree, rest)
    assert next(rest, None) is None, "more values than leaves"
    return result


def _rebuild(tree: Any, values) -> Any:
    if isinstance(tree, dict):
        return type(tree)((key, _rebuild(sub, values)) for key, sub in tree.items())
    if isinstance(tree, tuple):
        items = [_rebuild(sub, values) for sub in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, list):
        return [_rebuild(sub, values) for sub in tree]
    return next(values)
