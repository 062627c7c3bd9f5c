"""Checking a system's result, and the state its call left, against NumPy's before anything is timed."""

from __future__ import annotations

from typing import Any

import numpy as np


def leaves(value: Any) -> list:
    """The arrays and scalars of a (nested tuple/list of) result(s), in order."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def mismatch(expected: Any, got: Any, rtol: float, atol: float, strict_types: bool) -> str | None:
    """Why `got` is not NumPy's answer `expected`, or None when it is.

    Values must agree within rtol/atol and shapes exactly. With `strict_types`
    (pyfront's promise) the Python types and dtypes must be identical too; peers
    return their own array types (jax.Array), so for them only values and shapes count.
    """
    want, have = leaves(expected), leaves(got)
    if len(want) != len(have):
        return f"{len(have)} results instead of {len(want)}"
    for i, (w, h) in enumerate(zip(want, have)):
        if strict_types and type(w) is not type(h):
            return f"result {i}: type {type(h).__name__} instead of {type(w).__name__}"
        w_arr, h_arr = np.asarray(w), np.asarray(h)
        if strict_types and w_arr.dtype != h_arr.dtype:
            return f"result {i}: dtype {h_arr.dtype} instead of {w_arr.dtype}"
        if w_arr.shape != h_arr.shape:
            return f"result {i}: shape {h_arr.shape} instead of {w_arr.shape}"
        if not np.allclose(h_arr, w_arr, rtol=rtol, atol=atol, equal_nan=True):
            err = float(np.max(np.abs(h_arr.astype(np.float64) - w_arr.astype(np.float64))))
            return f"result {i}: max abs error {err:.3g} (rtol={rtol}, atol={atol})"
    return None


def state_mismatch(expected: Any, got: Any, rtol: float, atol: float, strict_types: bool,
                   path: str = "argument") -> str | None:
    """Why the arguments `got`, after a system's call, differ from `expected`, after NumPy's; None if they do not.

    For programs that update their arguments in place: arrays, scalars, dicts,
    lists, tuples and the attributes of objects are compared, recursively
    (with `strict_types`, arrays' and scalars' types and dtypes too).
    """
    if isinstance(expected, (np.ndarray, np.generic)):
        w, h = np.asarray(expected), np.asarray(got)
        if strict_types and (type(expected) is not type(got) or w.dtype != h.dtype):
            return f"{path}: {type(got).__name__} {h.dtype} instead of {type(expected).__name__} {w.dtype}"
        if w.shape != h.shape:
            return f"{path}: shape {h.shape} instead of {w.shape}"
        if not np.allclose(h, w, rtol=rtol, atol=atol, equal_nan=True):
            err = float(np.max(np.abs(h.astype(np.float64) - w.astype(np.float64))))
            return f"{path}: max abs error {err:.3g} (rtol={rtol}, atol={atol})"
        return None
    if type(expected) is not type(got):
        return f"{path}: {type(got).__name__} instead of {type(expected).__name__}"
    if isinstance(expected, dict):
        if list(expected) != list(got):
            return f"{path}: keys {list(got)} instead of {list(expected)}"
        items = [(f"{path}[{k!r}]", expected[k], got[k]) for k in expected]
    elif isinstance(expected, (list, tuple)):
        if len(expected) != len(got):
            return f"{path}: length {len(got)} instead of {len(expected)}"
        items = [(f"{path}[{i}]", w, h) for i, (w, h) in enumerate(zip(expected, got))]
    elif hasattr(expected, "__dict__"):
        return state_mismatch(vars(expected), vars(got), rtol, atol, strict_types, path + ".__dict__")
    elif isinstance(expected, float):
        return None if np.isclose(got, expected, rtol=rtol, atol=atol) else f"{path}: {got!r} instead of {expected!r}"
    else:
        return None if expected == got else f"{path}: {got!r} instead of {expected!r}"
    for where, w, h in items:
        wrong = state_mismatch(w, h, rtol, atol, strict_types, where)
        if wrong:
            return wrong
    return None
