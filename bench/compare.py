"""Checking a system's result against NumPy's before anything is timed."""

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
