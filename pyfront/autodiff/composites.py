"""NumPy functions with no primitive of their own, on the gradient tape (interpreter only).

Each is differentiated through a composition of the table's primitives
(recorded on the tape like any other operations), while the value returned is
the one NumPy itself computes: the composition's result is tied to NumPy's by
an identity node (`exact`), so values stay bit-for-bit the interpreter's and
only the derivative comes from the composition.

- `np.logaddexp(a, b)`: m + log(exp(a - m) + exp(b - m)), m = maximum(a, b);
- `np.cumsum(a, axis)`: the axis moved last, times the upper-triangular ones
  matrix (its transpose sums the cotangent in reverse);
- `np.var`/`np.std` with `ddof`: sum((a - mean(a))**2) / (n - ddof), as NumPy
  computes it (this one is NumPy's value already), its square root for std;
- `np.linalg.norm(x)` with `axis=None` and ord None (any rank), 2 (vectors)
  or 'fro' (matrices): sqrt(sum(x * x));
- `np.dot(a, b)` with operands of more than 2 dims: a matmul of `a` as rows by
  `b`'s second-to-last axis as columns, reshaped to NumPy's result.

None of these compiles yet (pyfront/numpy_api.py has no entry for them), so a
compiled function that differentiates through them runs in the interpreter.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from pyfront.autodiff.tape import Box, _axes, _implements, _no_extras, _unsupported, record, unbox


def exact(value: Any, composed: Any) -> Any:
    """NumPy's `value`, differentiated as `composed` (an identity node on the tape)."""
    if not isinstance(composed, Box):
        return value
    return record("astype", value, [(np.asarray(composed.value), composed)], dtype=str(np.asarray(value).dtype))


def logaddexp(a: Any, b: Any) -> Any:
    value = np.logaddexp(unbox(a), unbox(b))
    m = np.maximum(a, b)
    return exact(value, m + np.log(np.exp(a - m) + np.exp(b - m)))


COMPOSITE_UFUNCS = {np.logaddexp: logaddexp}


@_implements(np.cumsum)
def _cumsum(func, a, axis=None, dtype=None, out=None):
    _no_extras(func, dtype=dtype, out=out)
    value = np.cumsum(unbox(a), axis=axis)
    x = np.ravel(a) if axis is None else np.moveaxis(a, operator.index(axis), -1)
    n = np.shape(unbox(x))[-1]
    summed = x @ np.triu(np.ones((n, n), np.asarray(value).dtype))
    return exact(value, summed if axis is None else np.moveaxis(summed, -1, operator.index(axis)))


@_implements(np.var, np.std)
def _var(func, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **rest):
    _no_extras(func, dtype=dtype, out=out, **rest)
    axes = tuple(_axes(axis, np.ndim(unbox(a))))
    count = int(np.prod([np.shape(unbox(a))[i] for i in axes], dtype=np.int64))
    if count - ddof <= 0:
        raise _unsupported(f"{func.__name__} with ddof={ddof} >= the number of elements ({count})")
    centered = a - np.mean(a, axis=axes, keepdims=True)
    variance = np.sum(centered * centered, axis=axes, keepdims=keepdims) / (count - ddof)
    return np.sqrt(variance) if func is np.std else variance


@_implements(np.linalg.norm)
def _norm(func, x, ord=None, axis=None, keepdims=False):
    ndim = np.ndim(unbox(x))
    if axis is not None or not (ord is None or (ord == 2 and ndim == 1) or (ord == "fro" and ndim == 2)):
        raise _unsupported(f"np.linalg.norm with ord={ord!r}, axis={axis!r} on {ndim} dims",
                           "; supported: axis=None with ord None, 2 (vectors) or 'fro' (matrices)")
    value = np.linalg.norm(unbox(x), ord=ord, keepdims=keepdims)
    return exact(value, np.sqrt(np.sum(x * x, keepdims=keepdims)))


def dot_nd(a: Any, b: Any) -> Any:
    """np.dot with an operand of more than 2 dims (neither 0-d)."""
    value = np.dot(unbox(a), unbox(b))
    if np.ndim(unbox(b)) == 1:
        return exact(value, np.matmul(a, b))
    k = np.shape(unbox(a))[-1]
    rows = np.reshape(a, (-1, k))
    columns = np.reshape(np.moveaxis(b, -2, 0), (k, -1))
    return exact(value, np.reshape(rows @ columns, np.shape(value)))
