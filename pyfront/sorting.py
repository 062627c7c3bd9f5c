"""np.sort and np.argsort (and ndarray.argsort) as rank computations, exactly NumPy's answers.

Element i of a row goes to position rank(i) = the number of elements that come before it:
smaller ones, NaN last (NumPy sorts NaN to the end), and equal ones with a smaller index.
That is a stable sort, built from comparisons, a sum and a gather, which IREE compiles
like any other elementwise code; it costs n comparisons per element, so rows are limited
to MAX_ROW elements.

Where NumPy's default sort (an introsort, not stable) could order equal elements
differently, a guard makes the call run in the interpreter instead:
- argsort with kind "quicksort" or "heapsort" (the default): a row holding equal values
  (their order in the result is the algorithm's; NaNs count as equal to each other);
- sort of floats with those kinds: a row holding both +0.0 and -0.0 (equal, but not the same).
"stable" and "mergesort" are stable in NumPy too: no guard.
"""

from __future__ import annotations

import numpy as np

from pyfront import indexing
from pyfront import semantics as S
from pyfront.errors import Unsupported
from pyfront.numpy_api import _take_along_axis, implements, known
from pyfront.values import Known, Tensor

MAX_ROW = 1024
MAX_COMPARISONS = 1 << 24  # elements of the (..., n, n) comparison of a whole array
STABLE_KINDS = ("stable", "mergesort")
KINDS = (None, "quicksort", "heapsort", *STABLE_KINDS)


@implements(np.argsort, method="argsort")
def _argsort(a, axis=Known(-1), kind=Known(None), order=Known(None), stable=Known(None)):
    t, axis = _operand(a, axis, kind, order)
    if _stable(kind, stable):
        return _order_along(t, axis)
    order_ = _order_along(t, axis)
    if t.shape[axis] > 1:
        values = _take_along_axis(t, order_, Known(axis))
        ties = _equal(_slice_along(values, axis, 1, None), _slice_along(values, axis, 0, -1))
        S.guard(S.reduce_all(S.logical_not(ties.value)), "value",
                "np.argsort: no two equal values in a row (NumPy's default sort orders them its own way)")
    return order_


@implements(np.sort)
def _sort(a, axis=Known(-1), kind=Known(None), order=Known(None), stable=Known(None)):
    t, axis = _operand(a, axis, kind, order)
    if t.dtype.kind == "f" and not _stable(kind, stable):
        zero = S.ufunc(np.equal, t, Known(0.0))
        zeros_only = S.where(zero, t, S.constant(np.array(-np.inf, t.dtype)))
        agree = S.build("zero_signs_agree", [zeros_only.value], kind="max", axes=(axis,))
        S.guard(agree, "value", "np.sort: no row holds both +0.0 and -0.0 (NumPy's default sort orders them "
                                "its own way)")
    return _take_along_axis(t, _order_along(t, axis), Known(axis))


def _operand(a, axis, kind, order) -> tuple[Tensor, int]:
    """The array (flattened for axis=None) and the axis, non-negative; the options checked."""
    t = S.to_tensor(a)
    if known(order, "order") is not None:
        raise Unsupported("sorting with order= (structured arrays) is not supported")
    if known(kind, "kind") not in KINDS:
        raise Unsupported(f"sorting with kind={known(kind, 'kind')!r} (NumPy raises ValueError)")
    if t.dtype == np.bool_:
        raise Unsupported("sorting a bool array is not supported yet")
    axis = known(axis, "axis")
    if axis is None:
        t, axis = S.reshape(t, (-1,)), 0
    if t.ndim == 0:
        raise Unsupported("sorting a 0-d array (NumPy raises AxisError)")
    (axis,) = S.normalize_axes(axis, t.ndim)
    shape = S.static_shape(t, "sorting")
    n = shape[axis]
    if n > MAX_ROW or int(np.prod(shape, dtype=np.int64)) * n > MAX_COMPARISONS:
        raise Unsupported(f"sorting rows of more than {MAX_ROW} elements (or {MAX_COMPARISONS} comparisons) is "
                          "not supported yet")
    return t, axis


def _stable(kind, stable) -> bool:
    return known(stable, "stable") is True or known(kind, "kind") in STABLE_KINDS


def _order_along(t: Tensor, axis: int) -> Tensor:
    """The indices that sort `t` along `axis` stably (NaN last), as np.argsort(kind="stable").

    Along a new axis after `axis` runs the other element: (.., i, j, ..) compares element j
    with element i, and (.., k, i, ..) says whether element i lands at position k. No
    transposes: the result is laid out as NumPy's (C order, layout.py)."""
    n = t.shape[axis]

    def index(at: int) -> Tensor:  # 0..n-1 along axis `at` of the widened shape
        return S.constant(np.arange(n, dtype=np.int64).reshape([n if d == at else 1 for d in range(t.ndim + 1)]))

    mine, theirs = S.expand_dims(t, axis + 1), S.expand_dims(t, axis)
    earlier = S.ufunc(np.less, index(axis + 1), index(axis))  # j < i
    before = S.ufunc(np.logical_or, _precedes(theirs, mine), S.ufunc(np.logical_and, _equal(theirs, mine), earlier))
    rank = S.reduce("sum", S.astype(before, np.dtype(np.int64)), axis=axis + 1)  # where element i goes
    lands = S.ufunc(np.equal, S.expand_dims(rank, axis), index(axis))
    return S.reduce("sum", S.where(lands, index(axis + 1), S.constant(np.zeros((), np.int64))), axis=axis + 1)


def _precedes(a: Tensor, b: Tensor) -> Tensor:
    """a sorts before b: a < b, or b is NaN and a is not."""
    less = S.ufunc(np.less, a, b)
    if a.dtype.kind != "f":
        return less
    nan_after = S.ufunc(np.logical_and, _isnan(b), S.ufunc(np.logical_not, _isnan(a)))
    return S.ufunc(np.logical_or, less, nan_after)


def _equal(a: Tensor, b: Tensor) -> Tensor:
    """a and b sort as equals: a == b, or both NaN."""
    same = S.ufunc(np.equal, a, b)
    if a.dtype.kind != "f":
        return same
    return S.ufunc(np.logical_or, same, S.ufunc(np.logical_and, _isnan(a), _isnan(b)))


def _isnan(a: Tensor) -> Tensor:
    return S.ufunc(np.not_equal, a, a)  # a quiet comparison: no floating-point flag, as in NumPy


def _slice_along(t: Tensor, axis: int, start: int | None, stop: int | None) -> Tensor:
    return indexing.getitem(t, tuple(slice(start, stop) if d == axis else slice(None) for d in range(t.ndim)))
