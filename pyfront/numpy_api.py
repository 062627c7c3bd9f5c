"""The NumPy API the compiler understands: functions, ndarray methods and attributes.

Each entry maps a NumPy callable (or an ndarray method name) to a handler with
NumPy's own signature, so Python binds positional and keyword arguments
exactly as NumPy would; a keyword NumPy accepts but the compiler does not
(`out=`, `where=`, ...) is rejected by the binding and reported. Handlers get
front-end values (values.py) and return one.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from pyfront import indexing, nn
from pyfront import semantics as S
from pyfront.dialects.primitives import get
from pyfront.dialects.primitives.base import ignoring_events
from pyfront.errors import Unsupported
from pyfront.values import Known, Seq, Tensor

FUNCTIONS: dict[Any, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}


def known(v: Any, what: str = "argument") -> Any:
    """The compile-time value of a parameter such as `axis` or `shape`."""
    if isinstance(v, Known):
        return v.value
    if isinstance(v, Seq):  # `axes=([1], [0])`
        return v.kind(known(i, what) for i in v.items)
    raise Unsupported(f"{what} must be a compile-time constant")


def items(v: Any) -> list[Any]:
    if isinstance(v, Seq):
        return list(v.items)
    if isinstance(v, Known) and isinstance(v.value, (tuple, list)):
        return [Known(i) for i in v.value]
    raise Unsupported("expected a tuple or list of arrays")


def views(numpy_fn: Callable[..., Any]):
    """For a handler whose result NumPy returns as a view of its first operand (or the operand
    itself): on a folded array (`np.zeros(3)`, `np.arange(4)[::2]`) and compile-time arguments,
    NumPy's own view, folded too. It shares the folded array's memory as in NumPy, so a write into
    either sees the other (buffers.py refuses it) and a returned view keeps its strides; a view the
    compiled code derived from a lifted copy of the constant would see neither."""
    def wrap(handler: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(handler)
        def view_or_handle(a, *args, **kwargs):
            if not (isinstance(a, Known) and type(a.value) is np.ndarray):
                return handler(a, *args, **kwargs)
            try:
                values, keywords = [known(v) for v in args], {k: known(v) for k, v in kwargs.items()}
            except Unsupported:  # a computed argument: the handler's (copied) constant it is
                return handler(a, *args, **kwargs)
            result = S.fold(numpy_fn, a.value, *values, **keywords)
            return a if result.value is a.value else result
        return view_or_handle
    return wrap


def implements(*targets: Any, method: str | None = None):
    def register(fn):
        for t in targets:
            FUNCTIONS[t] = fn
        if method:
            METHODS[method] = fn
        return fn
    return register


def _ufunc(uf: np.ufunc) -> Callable[..., Any]:
    """`np.<ufunc>(...)`: on Python scalars only, NumPy computes with its default dtypes
    (np.sqrt(0.5) is an np.float64; `0.5 ** 0.5` is a Python float)."""
    def handler(*operands: Any) -> Any:
        if all(S._is_python_scalar(o) for o in operands) and any(isinstance(o, Tensor) for o in operands):
            operands = tuple(S.as_numpy_scalar(o) for o in operands)
        return S.ufunc(uf, *operands)
    return handler


# Ufuncs: every ufunc the primitive table lowers is callable as np.<name>.
for _uf in S.UFUNC_PRIMITIVE:
    FUNCTIONS[_uf] = _ufunc(_uf)
FUNCTIONS[np.power] = S.power


@implements(np.matmul)
def _matmul(a, b):
    return S.matmul(a, b)


@implements(np.dot, method="dot")
def _dot(a, b):
    return S.dot(a, b)


@implements(np.where)
def _where(condition, x=None, y=None):
    if x is None and y is None:  # np.where(condition) is np.nonzero(condition)
        return indexing.nonzero(condition)
    if x is None or y is None:
        raise Unsupported("np.where: either both or neither of x and y should be given (NumPy raises ValueError)")
    return S.where(condition, x, y)


FUNCTIONS[np.nonzero] = METHODS["nonzero"] = indexing.nonzero


@implements(np.flatnonzero)
def _flatnonzero(a):
    return indexing.nonzero(S.reshape(S.to_tensor(S.array_operand(a)), (-1,))).items[0]


@implements(np.clip, method="clip")
def _clip(a, a_min=Known(None), a_max=Known(None)):
    return S.clip(a, a_min, a_max)


def _reduction(kind: str):
    def handler(a, axis=Known(None), dtype=Known(None), keepdims=Known(False)):
        return S.reduce(kind, a, known(axis, "axis"), known(keepdims, "keepdims"), known(dtype, "dtype"))
    return handler


def _arg_reduction(kind: str):
    def handler(a, axis=Known(None), keepdims=Known(False)):
        return S.reduce(kind, a, known(axis, "axis"), known(keepdims, "keepdims"))
    return handler


for _kind in ("sum", "prod", "max", "min", "mean"):
    implements(getattr(np, _kind), method=_kind)(_reduction(_kind))
implements(np.amax)(_reduction("max"))
implements(np.amin)(_reduction("min"))
for _kind in ("argmax", "argmin"):
    implements(getattr(np, _kind), method=_kind)(_arg_reduction(_kind))




@implements(np.reshape)
@views(np.reshape)
def _reshape(a, shape):
    return S.reshape(a, _shape(known(shape, "shape")))


def _reshape_method(a, *shape):
    values = [known(s, "shape") for s in shape]
    return S.reshape(a, _shape(values[0] if len(values) == 1 else tuple(values)))


METHODS["reshape"] = views(np.ndarray.reshape)(_reshape_method)


def _shape(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


@implements(np.transpose)
@views(np.transpose)
def _transpose(a, axes=Known(None)):
    return S.transpose(a, known(axes, "axes"))


def _transpose_method(a, *axes):
    values = [known(x, "axes") for x in axes]
    if not values or values == [None]:
        return S.transpose(a)
    return S.transpose(a, values[0] if len(values) == 1 and not isinstance(values[0], int) else values)


METHODS["transpose"] = views(np.ndarray.transpose)(_transpose_method)


@implements(np.expand_dims)
@views(np.expand_dims)
def _expand_dims(a, axis):
    return S.expand_dims(a, known(axis, "axis"))


@implements(np.squeeze, method="squeeze")
@views(np.squeeze)
def _squeeze(a, axis=Known(None)):
    return S.squeeze(a, known(axis, "axis"))


@implements(np.broadcast_to)
@views(np.broadcast_to)
def _broadcast_to(array, shape):
    return S.broadcast_to(array, _shape(known(shape, "shape")))


def _cast_to_join(arrays: Any, dtype: Any, casting: Any, name: str) -> list[Tensor]:
    """The arrays a joining function (`np.concatenate`, `np.stack`, `np.vstack`, `np.hstack`) joins,
    cast to the dtype NumPy gives them under its `dtype=` and `casting=` keywords.

    That dtype is NumPy's own answer for one-element arrays of the same dtypes; a combination
    NumPy refuses (a cast the rule forbids, an unknown rule) runs in the interpreter, which raises.
    """
    ts = [S.to_tensor(a) for a in items(arrays)]
    dt, rule = known(dtype, "dtype"), known(casting, "casting")
    if dt is None and rule == "same_kind":  # the defaults: the join's own promotion
        return ts
    try:
        joined = np.concatenate([np.zeros(1, t.dtype) for t in ts], dtype=dt, casting=rule).dtype
    except (TypeError, ValueError) as e:
        raise Unsupported(f"{name}(dtype={dt!r}, casting={rule!r}): NumPy raises {type(e).__name__}") from None
    return [S.astype(t, S.check_dtype(joined)) for t in ts]


@implements(np.concatenate)
def _concatenate(arrays, axis=Known(0), *, dtype=Known(None), casting=Known("same_kind")):
    return S.concatenate(_cast_to_join(arrays, dtype, casting, "np.concatenate"), known(axis, "axis"))


@implements(np.stack)
def _stack(arrays, axis=Known(0), *, dtype=Known(None), casting=Known("same_kind")):
    return S.stack(_cast_to_join(arrays, dtype, casting, "np.stack"), known(axis, "axis"))


def _astype(a, dtype, order=Known("K"), casting=Known("unsafe"), subok=Known(True), copy=Known(True)):
    if (known(order, "order"), known(casting, "casting"), known(subok, "subok")) != ("K", "unsafe", True):
        raise Unsupported("ndarray.astype with order=, casting= or subok= is not supported yet")
    t, dtype = S.to_tensor(a), np.dtype(known(dtype, "dtype"))
    if not known(copy, "copy") and t.dtype == dtype and t.pytype is np.ndarray:
        return a  # the array itself, as NumPy returns it
    return S.astype(t, dtype)


METHODS["astype"] = _astype


@implements(np.array)
def _array(a, dtype=Known(None), *, copy=Known(True)):
    if not known(copy, "copy"):  # None: copy only when needed, as np.asarray; False: never
        result = _asarray(a, dtype)
        if known(copy, "copy") is False and result is not a:
            raise Unsupported("np.array(..., copy=False) of a value that needs a copy (NumPy raises ValueError)")
        return result
    if isinstance(a, Known) and isinstance(dtype, Known):  # np.array(0), np.array([1, 2], np.int32)
        return S.fold(np.array, a.value, dtype.value)
    t = S.to_tensor(a)
    dt = known(dtype, "dtype")
    # np.array(x) copies and returns an ndarray even for a NumPy scalar.
    return S.astype(t, np.dtype(dt) if dt is not None else t.dtype, np.ndarray)


@implements(np.asarray)
@views(np.asarray)
def _asarray(a, dtype=Known(None)):
    t = S.to_tensor(a)
    dt = known(dtype, "dtype")
    if t.pytype is np.ndarray and (dt is None or np.dtype(dt) == t.dtype):
        return t  # NumPy returns the array itself, not a copy
    return _array(t, Known(dt))


def _copy(a):
    t = S.to_tensor(a)
    return Tensor(t.value, t.pytype)


METHODS["copy"] = _copy
FUNCTIONS[np.copy] = _copy


@implements(np.take, method="take")
def _take(a, indices, axis=Known(None), out=Known(None), mode=Known("raise")):
    if known(out, "out") is not None or known(mode, "mode") != "raise":
        raise Unsupported("np.take with out= or mode= other than 'raise' is not supported yet")
    t = S.to_tensor(a)
    ax = known(axis, "axis")
    if ax is None:
        return indexing.getitem(S.reshape(t, (-1,)), indexing.as_key(indices)) if t.ndim != 1 else \
            indexing.getitem(t, indexing.as_key(indices))
    (ax,) = S.normalize_axes(ax, t.ndim)
    return indexing.take(t, indexing.as_key(indices), ax)


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis):
    t = S.to_tensor(arr)
    ax = known(axis, "axis")
    idx = indexing.as_key(indices)
    idx_ndim = np.ndim(idx) if not isinstance(idx, Tensor) else idx.ndim
    if ax is None:
        t, ax = S.reshape(t, (-1,)), 0
    (ax,) = S.normalize_axes(ax, t.ndim)
    if idx_ndim != t.ndim:
        raise Unsupported("`indices` and `arr` must have the same number of dimensions (ValueError)")
    # NumPy's definition: arange index arrays on the other dims, broadcast against `indices`.
    key = tuple(idx if d == ax else np.arange(n).reshape([-1 if i == d else 1 for i in range(t.ndim)])
                for d, n in enumerate(S.static_shape(t, "np.take_along_axis")))
    return indexing.getitem(t, key)


def _creation(fill_value: Any):
    def handler(shape, dtype=Known(float)):
        return S.fold(np.full, known(shape, "shape"), fill_value, known(dtype, "dtype"))
    return handler


FUNCTIONS[np.zeros] = _creation(0)
FUNCTIONS[np.ones] = _creation(1)


@implements(np.full)
def _full(shape, fill_value, dtype=Known(None)):
    return S.fold(np.full, known(shape, "shape"), known(fill_value, "fill_value"), known(dtype, "dtype"))


def _like(fill_value: Any):
    def handler(a, dtype=Known(None)):
        t = S.to_tensor(a)
        dt = known(dtype, "dtype")
        return S.full(t.shape, fill_value, np.dtype(dt) if dt is not None else t.dtype)
    return handler


FUNCTIONS[np.zeros_like] = _like(0)
FUNCTIONS[np.ones_like] = _like(1)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=Known(None)):
    t = S.to_tensor(a)
    dt = known(dtype, "dtype")
    return S.full(t.shape, known(fill_value, "fill_value"), np.dtype(dt) if dt is not None else t.dtype)


@implements(np.shape)
def _shape_of(a):
    if isinstance(a, Known):
        return S.fold(np.shape, a.value)
    return S.shape(S.to_tensor(a))


# Array attributes that are compile-time facts, and those that compute.
ATTRIBUTES: dict[str, Callable[[Tensor], Any]] = {
    "shape": S.shape,
    "ndim": lambda t: Known(t.ndim),
    "size": lambda t: Known(int(np.prod(S.static_shape(t, "x.size"), dtype=np.int64))),
    "dtype": lambda t: Known(t.dtype),
    "T": lambda t: S.transpose(t) if t.pytype is np.ndarray else t,  # a NumPy scalar's .T is itself
}


# Python conversions of computed values: float(t), int(t), bool(t), np.float32(t), ...


def converts(fn: Any) -> bool:
    return fn in (float, int, bool) or (isinstance(fn, type) and issubclass(fn, np.generic))


def convert(fn: Any, value: Any) -> Any:
    if fn is bool:  # Python's truth test: NumPy allows any one-element array
        return Tensor(S.truth(value), bool)
    t = S.to_tensor(value)
    if t.ndim != 0:
        raise Unsupported(f"{fn.__name__}() of an array (only 0-d values convert)")
    if fn is float:
        return S.astype(t, np.dtype(np.float64), float)
    if fn is int:  # truncates; NaN, inf and values past int64 fail the cast's guard (Python raises or grows)
        return S.astype(t, np.dtype(np.int64), int)
    return S.astype(t, np.dtype(fn), fn)


def _item(a, *index):
    """`a.item()`: the one element of a size-1 array as the Python scalar of its kind (float,
    int, bool); `a.item(i)`: element i of the flattened array; `a.item(i, j)`: a[i, j]."""
    t = S.to_tensor(a)
    if t.dtype.kind not in "fiub":
        raise Unsupported(f"item() of a {t.dtype} array is not supported yet")
    if len(index) == 1:
        t = indexing.getitem(S.reshape(t, (-1,)), index[0])
    elif index:
        t = indexing.getitem(t, tuple(index))
    elif None in t.shape or int(np.prod(t.shape, dtype=np.int64)) != 1:
        raise Unsupported(f"item() of an array of shape {t.shape} (NumPy raises ValueError unless it has one element)")
    else:
        t = S.reshape(t, ())
    return convert({"f": float, "i": int, "u": int, "b": bool}[t.dtype.kind], t)


METHODS["item"] = _item


def _folded(fn):
    """`fn` of compile-time arguments only: a constant, NumPy's own result."""
    def handler(*args, **kwargs):
        if not all(isinstance(v, Known) for v in (*args, *kwargs.values())):
            raise Unsupported(f"np.{fn.__name__} with arguments computed at run time is not supported yet")
        return S.fold(fn, *(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
    return handler


FUNCTIONS[np.arange] = _folded(np.arange)
FUNCTIONS[np.linspace] = _folded(np.linspace)


@implements(np.swapaxes, method="swapaxes")
@views(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    t = S.to_tensor(a)
    perm = list(range(t.ndim))
    i, j = _axis(axis1, t.ndim), _axis(axis2, t.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return S.transpose(t, perm)


@implements(np.moveaxis)
@views(np.moveaxis)
def _moveaxis(a, source, destination):
    t = S.to_tensor(a)
    moved = [[_axis(Known(v), t.ndim) for v in (p if isinstance(p, (tuple, list)) else [p])]
             for p in (known(source, "source"), known(destination, "destination"))]
    if len(moved[0]) != len(moved[1]) or any(len(set(p)) != len(p) for p in moved):
        raise Unsupported("np.moveaxis: source and destination must be distinct axes, as many of each "
                          "(NumPy raises ValueError)")
    order = [n for n in range(t.ndim) if n not in moved[0]]
    for dest, src in sorted(zip(moved[1], moved[0])):
        order.insert(dest, src)
    return S.transpose(t, order)


def _axis(v: Any, ndim: int) -> int:
    axis = operator.index(known(v, "axis"))
    if not -ndim <= axis < ndim:
        raise Unsupported(f"axis {axis} is out of bounds for array of dimension {ndim} (NumPy raises AxisError)")
    return axis % ndim


@implements(np.count_nonzero)
def _count_nonzero(a, axis=Known(None), *, keepdims=Known(False)):
    """np.count_nonzero: the sum of `a != 0` as intp (an np.int64 over the whole array)."""
    return S.reduce("sum", S.ufunc(np.not_equal, S.to_tensor(a), Known(0)), known(axis, "axis"),
                    known(keepdims, "keepdims"), np.intp)


@implements(np.isclose)
def _isclose(a, b, rtol=Known(1e-05), atol=Known(1e-08), equal_nan=Known(False)):
    """NumPy's own formula: |a - b| <= atol + rtol * |b| where b is finite, or a == b; b made
    inexact first; its invalid values (inf - inf) ignored, as NumPy's errstate block does."""
    x, y = (S.constant(np.asarray(v.value)) if isinstance(v, Known) else S.to_tensor(v) for v in (a, b))
    y = S.astype(y, np.result_type(y.dtype, 1.0))
    with ignoring_events(frozenset({"invalid"})):
        close = S.ufunc(np.less_equal, S.ufunc(np.absolute, S.ufunc(np.subtract, x, y)),
                        S.ufunc(np.add, atol, S.ufunc(np.multiply, rtol, S.ufunc(np.absolute, y))))
        result = S.ufunc(np.logical_or, S.ufunc(np.logical_and, close, FUNCTIONS[np.isfinite](y)),
                         S.ufunc(np.equal, x, y))
        if known(equal_nan, "equal_nan"):
            both_nan = S.ufunc(np.logical_and, FUNCTIONS[np.isnan](x), FUNCTIONS[np.isnan](y))
            result = S.ufunc(np.logical_or, result, both_nan)
    return Tensor(result.value, np.bool_) if result.ndim == 0 else result  # NumPy's result[()]


@implements(np.allclose)
def _allclose(a, b, rtol=Known(1e-05), atol=Known(1e-08), equal_nan=Known(False)):
    return convert(bool, FUNCTIONS[np.all](_isclose(a, b, rtol, atol, equal_nan)))


@implements(np.round, np.around, method="round")
def _round(a, decimals=Known(0)):
    """NumPy's rounding of floats: half to even, at 10**decimals (x * f, rint, / f; for negative
    decimals x / f, rint, * f); ints round to themselves for decimals >= 0."""
    t, d = S.to_tensor(a), operator.index(known(decimals, "decimals"))
    if t.dtype.kind != "f":
        if d < 0 or t.dtype.kind not in "biu":
            raise Unsupported(f"np.round of {t.dtype} with decimals={d} is not supported yet")
        return Tensor(t.value, np.ndarray)  # a new array of the same values
    if d == 0:
        return S.ufunc(np.rint, t)
    scale = S.constant(np.asarray(10.0 ** abs(d), t.dtype)[()])
    if d > 0:
        return S.ufunc(np.true_divide, S.ufunc(np.rint, S.ufunc(np.multiply, t, scale)), scale)
    return S.ufunc(np.multiply, S.ufunc(np.rint, S.ufunc(np.true_divide, t, scale)), scale)


# pyfront.nn: the primitive-backed functions become their primitives (the
# composites, softmax and the like, are plain NumPy code and are inlined).
# Only an image's batch dim and an embedding's index dims may vary between
# calls (the shape rules reject the rest), and no two of those meet, so these
# need no shape guards; embedding guards its indices' range instead.


def _nn_operand(v: Any) -> Tensor:
    return S.constant(np.asarray(v.value)) if isinstance(v, Known) else S.to_tensor(v)


def _nn_params(what: str, make: Callable[..., dict], *args: Any) -> dict:
    try:
        return make(*(known(a, f"pyfront.nn.{what}'s window arguments") for a in args))
    except (TypeError, ValueError) as e:
        raise Unsupported(f"pyfront.nn.{what}: {e} (raises in the interpreter)") from None


def _nn_primitive(name: str, operands: list[Tensor], **params: Any) -> Tensor:
    try:
        result = get(name).build([t.value for t in operands], **params)
    except (TypeError, ValueError) as e:
        raise Unsupported(f"pyfront.nn.{name}: {e}") from None
    return Tensor(result, np.ndarray)


@implements(nn.conv2d)
def _conv2d(x, weight, stride=Known(1), padding=Known(0)):
    params = _nn_params("conv2d", nn.conv_params, stride, padding)
    return _nn_primitive("conv2d", [_nn_operand(x), _nn_operand(weight)], **params)


def _pool(name: str):
    def handler(x, kernel_size, stride=Known(None), padding=Known(0)):
        params = _nn_params(name, nn.pool_params, kernel_size, stride, padding)
        return _nn_primitive(name, [_nn_operand(x)], **params)
    return handler


FUNCTIONS[nn.max_pool2d] = _pool("max_pool2d")
FUNCTIONS[nn.avg_pool2d] = _pool("avg_pool2d")


@implements(nn.embedding)
def _embedding(table, indices):
    t, i = _nn_operand(table), _nn_operand(indices)
    rows = t.shape[0] if t.ndim == 2 else None
    if rows is not None and i.dtype.kind == "i":
        if isinstance(indices, Known):
            values = np.asarray(indices.value)
            if not np.all((-rows <= values) & (values < rows)):
                raise Unsupported("pyfront.nn.embedding: an index is out of range (IndexError)")
        else:
            in_range = S.ufunc(np.logical_and, S.ufunc(np.greater_equal, i, Known(-rows)),
                               S.ufunc(np.less, i, Known(rows)))
            S.guard(S.reduce_all(in_range.value), "value",
                    f"pyfront.nn.embedding: indices in [-{rows}, {rows}) (IndexError otherwise)")
    return _nn_primitive("embedding", [t, i])


# Composites of the primitives above: each is exact because it performs the
# same IEEE operations NumPy's own implementation performs, in the same order.


def _order_c(order: Any, what: str) -> None:
    if known(order, "order") not in ("C", "A", "K"):
        raise Unsupported(f"{what} with order other than 'C' is not supported yet")


@implements(np.ravel)
@views(np.ravel)
def _ravel(a, order=Known("C")):
    _order_c(order, "np.ravel")
    return S.reshape(S.to_tensor(a), (-1,))  # a view where NumPy's is one, as reshape


METHODS["ravel"] = lambda a, order=Known("C"): _ravel(a, order)


def _flatten(a, order=Known("C")):
    _order_c(order, "flatten")
    t = S.reshape(S.to_tensor(a), (-1,))
    return Tensor(t.value, np.ndarray)  # always a copy


METHODS["flatten"] = _flatten


def _atleast(t: Tensor, ndim: int) -> Tensor:
    """np.atleast_1d/2d/3d's reshape of a lower-dimensional array."""
    if t.ndim >= ndim:
        return t
    shape = {0: {1: (1,), 2: (1, 1), 3: (1, 1, 1)},
             1: {2: (1, -1), 3: (1, -1, 1)},
             2: {3: (*t.shape, 1)}}[t.ndim][ndim]
    return S.reshape(t, shape)


def _atleast_nd(ndim: int, numpy_fn):
    """np.atleast_1d/2d/3d: each array itself, or a view of it with axes of length 1 added."""
    @views(numpy_fn)
    def handler(*arys):
        results = [_atleast(S.to_tensor(a), ndim) for a in arys]
        return results[0] if len(results) == 1 else Seq(tuple(results), tuple)
    return handler


for _n, _fn in enumerate((np.atleast_1d, np.atleast_2d, np.atleast_3d), 1):
    FUNCTIONS[_fn] = _atleast_nd(_n, _fn)


@implements(np.hstack)
def _hstack(tup, *, dtype=Known(None), casting=Known("same_kind")):
    ts = [_atleast(t, 1) for t in _cast_to_join(tup, dtype, casting, "np.hstack")]
    return S.concatenate(ts, axis=0 if ts and ts[0].ndim == 1 else 1)


@implements(np.vstack)
def _vstack(tup, *, dtype=Known(None), casting=Known("same_kind")):
    return S.concatenate([_atleast(t, 2) for t in _cast_to_join(tup, dtype, casting, "np.vstack")], axis=0)


@implements(np.dstack)
def _dstack(tup):
    return S.concatenate([_atleast(S.to_tensor(v), 3) for v in items(tup)], axis=2)


@implements(np.column_stack)
def _column_stack(tup):
    ts = [S.to_tensor(v) for v in items(tup)]
    if any(t.ndim == 0 for t in ts):
        raise Unsupported("np.column_stack of a 0-d array (NumPy raises ValueError)")
    return S.concatenate([S.reshape(t, (-1, 1)) if t.ndim == 1 else t for t in ts], axis=1)


@implements(np.outer)
def _outer(a, b):
    x, y = S.reshape(S.to_tensor(a), (-1, 1)), S.reshape(S.to_tensor(b), (1, -1))
    return S.ufunc(np.multiply, x, y)


@implements(np.tensordot)
def _tensordot(a, b, axes=Known(2)):
    """NumPy's own algorithm: the summed axes moved last in `a` and first in `b`, both made 2-d, one dot."""
    x, y = S.to_tensor(a), S.to_tensor(b)
    spec = known(axes, "axes")
    if isinstance(spec, int):
        summed = [list(range(x.ndim - spec, x.ndim)), list(range(spec))]
    else:
        summed = [list(p) if isinstance(p, (tuple, list)) else [p] for p in spec]
    summed = [[_axis(Known(k), t.ndim) for k in p] for p, t in zip(summed, (x, y))]
    shapes = _static(x, "np.tensordot"), _static(y, "np.tensordot")
    if len(summed[0]) != len(summed[1]) or any(shapes[0][i] != shapes[1][j] for i, j in zip(*summed)):
        raise Unsupported("np.tensordot: shape-mismatch for sum (NumPy raises ValueError)")
    kept = [[k for k in range(t.ndim) if k not in p] for p, t in zip(summed, (x, y))]
    n = int(np.prod([shapes[0][k] for k in summed[0]], dtype=np.int64))
    left = S.reshape(S.transpose(x, kept[0] + summed[0]), (-1, n))
    right = S.reshape(S.transpose(y, summed[1] + kept[1]), (n, -1))
    return S.reshape(S.dot(left, right), [shapes[0][k] for k in kept[0]] + [shapes[1][k] for k in kept[1]])


@implements(np.array_equal)
def _array_equal(a1, a2, equal_nan=Known(False)):
    x, y = S.to_tensor(a1), S.to_tensor(a2)
    if x.shape != y.shape:
        if None in x.shape or None in y.shape:
            raise Unsupported("np.array_equal of arrays whose shapes vary")
        return Known(False)
    same = S.ufunc(np.equal, x, y)
    if known(equal_nan, "equal_nan") and np.result_type(x.dtype, y.dtype).kind in "fc":
        same = S.ufunc(np.logical_or, same, S.ufunc(np.logical_and, FUNCTIONS[np.isnan](x), FUNCTIONS[np.isnan](y)))
    return convert(bool, FUNCTIONS[np.all](same))


@implements(np.append)
def _append(arr, values, axis=Known(None)):
    joined = [S.array_operand(v) for v in (arr, values)]
    if known(axis, "axis") is None:
        joined = [S.reshape(S.to_tensor(v), (-1,)) for v in joined]
    return _concatenate(Seq(tuple(joined), tuple), Known(0) if known(axis, "axis") is None else axis)


@implements(np.ptp)
def _ptp(a, axis=Known(None), keepdims=Known(False)):
    return S.ufunc(np.subtract, *(S.reduce(kind, a, known(axis, "axis"), known(keepdims, "keepdims"))
                                  for kind in ("max", "min")))


@implements(np.average)
def _average(a, axis=Known(None), weights=Known(None), returned=Known(False), *, keepdims=Known(False)):
    if known(weights, "weights") is not None or known(returned, "returned"):
        raise Unsupported("np.average with weights= or returned=True is not supported yet")
    return S.reduce("mean", a, known(axis, "axis"), known(keepdims, "keepdims"))


@implements(np.eye)
def _eye(N, M=Known(None), k=Known(0), dtype=Known(float), order=Known("C")):
    return S.fold(np.eye, known(N, "N"), known(M, "M"), known(k, "k"), known(dtype, "dtype"), known(order, "order"))


@implements(np.identity)
def _identity(n, dtype=Known(None)):
    dt = known(dtype, "dtype")
    return S.fold(np.identity, known(n, "n"), dt if dt is not None else float)


@implements(np.empty)
def _empty(shape, dtype=Known(float), order=Known("C")):
    # NumPy leaves the contents unspecified; zeros are one of its possible answers.
    _order_c(order, "np.empty")
    return S.fold(np.zeros, known(shape, "shape"), known(dtype, "dtype"))


@implements(np.empty_like)
def _empty_like(prototype, dtype=Known(None)):
    return _like(0)(prototype, dtype)


def _is_float(t: Tensor) -> bool:
    return t.dtype.kind == "f"


def _float_test(test: Callable[[Tensor], Any], name: str):
    """np.isnan/isinf/isfinite: comparisons, which raise no FP flags (abs and != are quiet)."""
    def handler(x):
        if isinstance(x, Known):
            return S.fold(getattr(np, name), x.value)
        t = S.to_tensor(x)
        if not _is_float(t):
            if t.dtype.kind not in "biu":
                raise Unsupported(f"np.{name} of {t.dtype}")
            # Integers are always finite, never NaN or infinite.
            return S.ufunc(np.equal if name == "isfinite" else np.not_equal, t, t)
        return test(t)
    return handler


_INF = Known(float("inf"))
FUNCTIONS[np.isnan] = _float_test(lambda t: S.ufunc(np.not_equal, t, t), "isnan")
FUNCTIONS[np.isinf] = _float_test(lambda t: S.ufunc(np.equal, S.ufunc(np.absolute, t), _INF), "isinf")
FUNCTIONS[np.isfinite] = _float_test(lambda t: S.ufunc(np.less, S.ufunc(np.absolute, t), _INF), "isfinite")


@implements(np.nan_to_num)
def _nan_to_num(x, copy=Known(True), nan=Known(0.0), posinf=Known(None), neginf=Known(None)):
    """NaN, +inf and -inf replaced (by default with 0.0 and the dtype's largest and smallest
    finite values): quiet comparisons and selects, so no floating-point flag is raised."""
    if known(copy, "copy") is not True:
        raise Unsupported("np.nan_to_num(..., copy=False) writes in place; not supported yet")
    t = S.to_tensor(x)
    if t.pytype is not np.ndarray:
        raise Unsupported("np.nan_to_num of a scalar is not supported yet (only of arrays)")
    if not _is_float(t):
        return _copy(t)
    info = np.finfo(t.dtype)
    t = S.where(S.ufunc(np.not_equal, t, t), _replacement(nan, 0.0), t)
    t = S.where(S.ufunc(np.equal, t, _INF), _replacement(posinf, info.max), t)
    return S.where(S.ufunc(np.equal, t, Known(float("-inf"))), _replacement(neginf, info.min), t)


def _replacement(v: Any, default: float) -> Known:
    """A replacement value of np.nan_to_num: a compile-time number, `default` for None."""
    value = known(v, "replacement value")
    if value is not None and type(value) not in (int, float):
        raise Unsupported(f"np.nan_to_num with a {type(value).__name__} replacement value is not supported yet")
    return Known(float(default if value is None else value))


def _truth_reduction(kind: str):
    """np.any/all: max/min of `x != 0` (NaN counts as true, as in NumPy)."""
    def handler(a, axis=Known(None), out=Known(None), keepdims=Known(False)):
        if known(out, "out") is not None:
            raise Unsupported("out= is not supported yet")
        if isinstance(a, Known):
            return S.fold(getattr(np, "any" if kind == "max" else "all"), a.value,
                          axis=known(axis, "axis"), keepdims=known(keepdims, "keepdims"))
        t = S.to_tensor(a)
        flags = S.ufunc(np.not_equal, t, Known(0)) if t.dtype != S.BOOL else t
        return S.reduce(kind, flags, known(axis, "axis"), known(keepdims, "keepdims"))
    return handler


implements(np.any, method="any")(_truth_reduction("max"))
implements(np.all, method="all")(_truth_reduction("min"))


def _variance(a: Any, axis: Any, dtype: Any, ddof: Any, keepdims: Any, root: bool) -> Any:
    """NumPy's _var: mean with keepdims, squared deviations (x*x), their sum divided by n - ddof."""
    t = S.to_tensor(a)
    axis, keepdims, ddof = known(axis, "axis"), known(keepdims, "keepdims"), known(ddof, "ddof")
    if known(dtype, "dtype") is not None:
        raise Unsupported("var/std with dtype= is not supported yet")
    if isinstance(axis, list):
        raise Unsupported("var/std with a list as axis (NumPy raises TypeError)")
    if type(ddof) not in (int, float) or t.dtype.kind not in "biuf":
        raise Unsupported("var/std: ddof must be a Python int or float, the array real")
    axes = S.normalize_axes(axis, t.ndim)
    reduced = [t.shape[i] for i in axes]
    if None in reduced:
        raise Unsupported("var/std over a dimension whose size varies between calls is not supported yet")
    n = int(np.prod(reduced, dtype=np.int64))
    if n - ddof <= 0:
        raise Unsupported("var/std: degrees of freedom <= 0 (NumPy warns and returns NaN)")
    work = t if _is_float(t) else S.astype(t, S.FLOAT64)
    mean = S.reduce("mean", work, axis, True)
    deviation = S.ufunc(np.subtract, work, mean)
    squares = S.ufunc(np.multiply, deviation, deviation)
    total = S.reduce("sum", squares, axis, keepdims)
    result = S.ufunc(np.divide, total, S.constant(np.asarray(n - ddof, dtype=total.dtype)))
    return S.ufunc(np.sqrt, result) if root else result


def _var_like(root: bool):
    def handler(a, axis=Known(None), dtype=Known(None), out=Known(None), ddof=Known(0), keepdims=Known(False)):
        if known(out, "out") is not None:
            raise Unsupported("out= is not supported yet")
        return _variance(a, axis, dtype, ddof, keepdims, root)
    return handler


implements(np.var, method="var")(_var_like(False))
implements(np.std, method="std")(_var_like(True))


def _static(t: Tensor, what: str) -> tuple[int, ...]:
    return S.static_shape(t, what)


def _slice_along(t: Tensor, axis: int, start: int, stop: int) -> Tensor:
    return indexing.getitem(t, (slice(None),) * axis + (slice(start, stop),))


@implements(np.roll)
def _roll(a, shift, axis=Known(None)):
    t, shift, axis = S.to_tensor(a), known(shift, "shift"), known(axis, "axis")
    if axis is None:
        return S.reshape(_roll(S.reshape(t, (-1,)), Known(shift), Known(0)), _static(t, "np.roll"))
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes) or any(type(s) is not int for s in shifts):
        raise Unsupported("np.roll: shift and axis must be ints of the same count")
    for s, ax in zip(shifts, axes):
        (ax,) = S.normalize_axes(ax, t.ndim)
        n = _static(t, "np.roll")[ax]
        k = s % n if n else 0
        if k:
            t = S.concatenate([_slice_along(t, ax, n - k, n), _slice_along(t, ax, 0, n - k)], ax)
    return Tensor(t.value, np.ndarray)  # a copy, never a view


def _split(ary, indices_or_sections, axis, exact: bool):
    t, sections, axis = S.to_tensor(ary), known(indices_or_sections, "indices_or_sections"), known(axis, "axis")
    (ax,) = S.normalize_axes(axis, t.ndim)
    n = _static(t, "np.split")[ax]
    if type(sections) is int:
        if sections <= 0:
            raise Unsupported("number sections must be larger than 0.")
        if exact and n % sections:
            raise Unsupported("array split does not result in an equal division")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = list(np.cumsum([0] + sizes))
    else:
        if not all(type(i) is int for i in sections):
            raise Unsupported("np.split: indices must be Python ints")
        bounds = [0, *sections, n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        parts.append(_slice_along(t, ax, int(lo), int(hi)))
    return Seq(tuple(parts), list)


FUNCTIONS[np.split] = views(np.split)(
    lambda ary, indices_or_sections, axis=Known(0): _split(ary, indices_or_sections, axis, True))
FUNCTIONS[np.array_split] = views(np.array_split)(
    lambda ary, indices_or_sections, axis=Known(0): _split(ary, indices_or_sections, axis, False))


@implements(np.tile)
def _tile(A, reps):
    t, reps = S.to_tensor(A), known(reps, "reps")
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = _static(t, "np.tile")
    nd = max(len(reps), t.ndim)
    shape = (1,) * (nd - t.ndim) + shape
    reps = (1,) * (nd - len(reps)) + reps
    if any(type(r) is not int or r < 0 for r in reps):
        raise Unsupported("np.tile: reps must be non-negative ints")
    # Insert a repeat axis before each dim, broadcast, merge: a copy like NumPy's.
    spread = S.reshape(t, tuple(d for s in shape for d in (1, s)))
    wide = S.broadcast_to(spread, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return Tensor(S.reshape(Tensor(wide.value, np.ndarray), tuple(r * s for r, s in zip(reps, shape))).value,
                  np.ndarray)


@implements(np.repeat, method="repeat")
def _repeat(a, repeats, axis=Known(None)):
    t, repeats, axis = S.to_tensor(a), known(repeats, "repeats"), known(axis, "axis")
    if type(repeats) is not int or repeats < 0:
        raise Unsupported("np.repeat with per-element repeats is not supported yet")
    if axis is None:
        t, axis = S.reshape(t, (-1,)), 0
    (ax,) = S.normalize_axes(axis, t.ndim)
    shape = _static(t, "np.repeat")
    spread = S.reshape(t, shape[:ax + 1] + (1,) + shape[ax + 1:])
    wide = S.broadcast_to(spread, shape[:ax + 1] + (repeats,) + shape[ax + 1:])
    merged = shape[:ax] + (shape[ax] * repeats,) + shape[ax + 1:]
    return Tensor(S.reshape(Tensor(wide.value, np.ndarray), merged).value, np.ndarray)


def _triangle(lower: bool):
    def handler(m, k=Known(0)):
        t, k = S.to_tensor(m), known(k, "k")
        if t.ndim < 2 or type(k) is not int:
            raise Unsupported("np.tril/triu of an array with fewer than 2 dims (or a non-int k)")
        rows, cols = _static(t, "np.tril/triu")[-2:]
        keep = np.tri(rows, cols, k if lower else k - 1, dtype=bool)
        keep = keep if lower else ~keep
        return S.where(S.constant(keep), t, S.constant(np.zeros((), t.dtype)))  # NumPy's own where
    return handler


FUNCTIONS[np.tril] = _triangle(True)
FUNCTIONS[np.triu] = _triangle(False)


@implements(np.diag)
@views(np.diag)
def _diag(v, k=Known(0)):
    t, k = S.to_tensor(v), known(k, "k")
    if type(k) is not int:
        raise Unsupported("np.diag: k must be an int")
    shape = _static(t, "np.diag")
    if t.ndim == 1:
        n = shape[0] + abs(k)
        spots = np.eye(n, k=k, dtype=bool)
        # v as a row (k >= 0: entry j sits in column j + k) or a column, after |k| zeros.
        column = S.reshape(t, (1, -1) if k >= 0 else (-1, 1))
        edge = S.full((1, abs(k)) if k >= 0 else (abs(k), 1), 0, t.dtype)
        placed = S.concatenate([edge, column], 1 if k >= 0 else 0)
        return S.where(S.constant(spots), S.broadcast_to(placed, (n, n)), S.constant(np.zeros((), t.dtype)))
    if t.ndim == 2:
        rows, cols = shape
        start = k if k >= 0 else -k * cols
        count = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
        if count == 0:
            raise Unsupported("np.diag: an empty diagonal (NumPy returns a view, not rebuilt here)")
        flat = Tensor(S.reshape(t, (-1,)).value, np.ndarray)
        picked = indexing.getitem(flat, slice(start, start + (count - 1) * (cols + 1) + 1, cols + 1))
        return S.view_of(t, picked.value, lambda a: np.diag(a, k))  # NumPy's read-only diagonal view
    raise Unsupported("Input must be 1- or 2-d.")


@implements(np.diagflat)
def _diagflat(v, k=Known(0)):
    return _diag(S.reshape(S.to_tensor(v), (-1,)), k)


@implements(np.diagonal, method="diagonal")
@views(np.diagonal)
def _diagonal(a, offset=Known(0), axis1=Known(0), axis2=Known(1)):
    t = S.to_tensor(a)
    if t.ndim != 2 or (_axis(axis1, 2), _axis(axis2, 2)) != (0, 1):
        raise Unsupported("np.diagonal of other than the two axes of a 2-d array in order is not supported yet")
    return _diag(t, offset)


@implements(np.trace, method="trace")
def _trace(a, offset=Known(0), axis1=Known(0), axis2=Known(1), dtype=Known(None), out=Known(None)):
    if known(out, "out") is not None:
        raise Unsupported("np.trace(out=...) is not supported yet")
    return S.reduce("sum", _diagonal(S.to_tensor(a), offset, axis1, axis2), None, False, known(dtype, "dtype"))


@implements(np.pad)
def _pad(array, pad_width, mode=Known("constant"), **kwargs):
    t, mode = S.to_tensor(array), known(mode, "mode")
    values = {k: known(v, k) for k, v in kwargs.items()}
    if mode != "constant" or set(values) - {"constant_values"}:
        raise Unsupported(f"np.pad with mode {mode!r} (or those keywords) is not supported yet")
    _static(t, "np.pad")
    try:  # NumPy's own normalization and errors
        widths = np.broadcast_to(np.asarray(known(pad_width, "pad_width")), (t.ndim, 2))
        fills = np.broadcast_to(np.asarray(values.get("constant_values", 0)), (t.ndim, 2))
    except ValueError as e:
        raise Unsupported(f"np.pad: {e}") from None
    if widths.dtype.kind != "i" or (widths < 0).any():  # NumPy: TypeError, ValueError
        raise Unsupported("np.pad: pad widths must be non-negative ints")
    for ax in range(t.ndim):
        (before, after), (lo, hi) = widths[ax], fills[ax]
        side = list(_static(t, "np.pad"))
        parts = []
        if before:
            side[ax] = int(before)
            parts.append(S.fold(np.full, tuple(side), lo, t.dtype))
        parts.append(t)
        if after:
            side[ax] = int(after)
            parts.append(S.fold(np.full, tuple(side), hi, t.dtype))
        if len(parts) > 1:
            t = S.concatenate(parts, ax)
    return Tensor(t.value, np.ndarray)


SEQUENTIAL_LIMIT = 256  # unrolled adds per axis: beyond this the graph grows too large


def _accumulate(uf: np.ufunc, name: str):
    """np.cumsum/cumprod: NumPy accumulates strictly left to right, as the unrolled chain here does."""
    def handler(a, axis=Known(None), dtype=Known(None), out=Known(None)):
        if known(out, "out") is not None or known(dtype, "dtype") is not None:
            raise Unsupported(f"np.{name} with dtype= or out= is not supported yet")
        t, axis = S.to_tensor(a), known(axis, "axis")
        if axis is None:
            t, axis = S.reshape(t, (-1,)), 0
        if type(axis) is not int:
            raise Unsupported(f"np.{name}: axis must be an int (NumPy raises TypeError)")
        (ax,) = S.normalize_axes(axis, t.ndim)
        n = t.shape[ax]
        if n is None or n > SEQUENTIAL_LIMIT:
            raise Unsupported(f"np.{name} along an axis of varying size or more than {SEQUENTIAL_LIMIT} "
                              "elements is not supported yet")
        with np.errstate(all="ignore"):
            out_dtype = getattr(np, name)(np.ones(1, t.dtype)).dtype
        t = S.astype(t, S.check_dtype(out_dtype))
        if n == 0:
            return Tensor(t.value, np.ndarray)
        running = _slice_along(t, ax, 0, 1)
        parts = [running]
        for i in range(1, n):
            running = S.ufunc(uf, running, _slice_along(t, ax, i, i + 1))
            parts.append(running)
        return S.concatenate(parts, ax) if n > 1 else Tensor(running.value, np.ndarray)
    return handler


implements(np.cumsum, method="cumsum")(_accumulate(np.add, "cumsum"))
implements(np.cumprod, method="cumprod")(_accumulate(np.multiply, "cumprod"))


@implements(np.linalg.norm)
def _norm(x, ord=Known(None), axis=Known(None), keepdims=Known(False)):
    """ord=None: NumPy's sqrt(sum(x*x)) (its dot for a whole array accumulates in another order:
    the result agrees to the tolerance sums have, as np.sum's does)."""
    t, axis, keepdims = S.to_tensor(x), known(axis, "axis"), known(keepdims, "keepdims")
    if known(ord, "ord") is not None:
        raise Unsupported("np.linalg.norm with ord= is not supported yet")
    if t.dtype.kind not in "biuf":
        raise Unsupported(f"np.linalg.norm of {t.dtype}")
    if isinstance(axis, list):
        raise Unsupported("np.linalg.norm with a list as axis (NumPy raises TypeError)")
    if axis is not None and len(S.normalize_axes(axis, t.ndim)) > 2:
        raise Unsupported("Improper number of dimensions to norm.")
    work = t if t.dtype.kind == "f" else S.astype(t, S.FLOAT64)
    squares = S.ufunc(np.multiply, work, work)
    return S.ufunc(np.sqrt, S.reduce("sum", squares, axis, keepdims))


def _einsum_spec(subscripts: Any, n_operands: int) -> tuple[list[str], str]:
    if type(subscripts) is not str or "." in subscripts:
        raise Unsupported("np.einsum: only explicit letter subscripts (no ellipsis) are supported yet")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if not arrow:  # implicit output: the letters seen once, in alphabetical order
        output = "".join(sorted(c for c in set(inputs) - {","} if inputs.count(c) == 1))
    if len(terms) != n_operands or not all(t.isalpha() for t in terms) or not (output.isalpha() or not output):
        raise Unsupported(f"np.einsum: subscripts {subscripts!r} (NumPy raises or they are not supported yet)")
    return terms, output


@implements(np.einsum)
def _einsum(subscripts, *operands):
    """np.einsum for the contractions DL code writes: transposes, sums, traces, diagonals, outer
    products and (batched) matrix products. Products and sums agree with NumPy's to the tolerance
    np.sum/np.matmul have (NumPy's einsum loops accumulate in their own order); integers exactly."""
    terms, output = _einsum_spec(known(subscripts, "subscripts"), len(operands))
    ts = [S.to_tensor(o) for o in operands]
    if any(len(t) != x.ndim for t, x in zip(terms, ts)):
        raise Unsupported("np.einsum: subscripts do not match the operands' dims")
    with S.warnings_as("ignore"):
        try:
            sample = np.einsum(f"{','.join(terms)}->{output}", *(np.ones(_static(x, "np.einsum"), x.dtype) for x in ts))
        except (TypeError, ValueError) as e:
            raise Unsupported(f"np.einsum: {e}") from None
    dtype = S.check_dtype(np.asarray(sample).dtype)
    ts = [S.astype(x, dtype) if x.dtype != dtype else x for x in ts]
    if len(ts) == 1:
        result = _einsum_one(terms[0], output, ts[0], known(subscripts, "subscripts"))
    elif len(ts) == 2:
        result = _einsum_two(terms[0], terms[1], output, ts[0], ts[1])
    else:
        raise Unsupported("np.einsum of more than two operands is not supported yet")
    if result.pytype is not type(sample) and not (isinstance(sample, np.ndarray) and result.pytype is np.ndarray):
        result = S.astype(result, dtype, type(sample))
    return result


def _einsum_one(term: str, output: str, t: Tensor, subscripts: str) -> Tensor:
    if len(set(term)) < len(term):
        if len(term) != 2 or output not in ("", term[0]):
            raise Unsupported("np.einsum: repeated subscripts other than 'ii' / 'ii->i' are not supported yet")
        rows, cols = _static(t, "np.einsum")
        flat = Tensor(S.reshape(t, (-1,)).value, np.ndarray)
        picked = indexing.getitem(flat, slice(0, (rows - 1) * (cols + 1) + 1, cols + 1))
        if output:
            return S.view_of(t, picked.value, lambda a: np.einsum(subscripts, a))  # NumPy's writeable view
        return S.reduce("sum", Tensor(picked.value, np.ndarray), None, False, t.dtype)
    summed = tuple(i for i, c in enumerate(term) if c not in output)
    if summed:
        t = S.reduce("sum", t, summed, False, t.dtype)
        term = "".join(c for c in term if c in output)
        if term != output:
            raise Unsupported("np.einsum: a sum whose output permutes the axes (NumPy's result layout varies)")
        return t
    if term == output:
        return S.view_of(t, t.value, lambda a: np.einsum(subscripts, a))
    return S.view_of(t, S.transpose(t, [term.index(c) for c in output]).value, lambda a: np.einsum(subscripts, a))


def _einsum_two(ta: str, tb: str, output: str, a: Tensor, b: Tensor) -> Tensor:
    shared = [c for c in ta if c in tb]
    if not shared:  # an outer product: each operand broadcast into the output's letters
        if sorted(ta + tb) != sorted(output):
            raise Unsupported("np.einsum: this two-operand form is not supported yet")
        return S.ufunc(np.multiply, _spread(a, ta, output), _spread(b, tb, output))
    batch = [c for c in shared if c in output]
    summed = [c for c in shared if c not in output]
    free_a = [c for c in ta if c not in shared]
    free_b = [c for c in tb if c not in shared]
    if not summed or sorted(output) != sorted(batch + free_a + free_b):
        raise Unsupported("np.einsum: only (batched) matrix/vector products and outer products are supported yet")
    if "".join(batch + free_a + free_b) != output:
        raise Unsupported("np.einsum: a product whose output permutes the axes (NumPy's result layout varies)")
    left = S.transpose(a, [ta.index(c) for c in batch + free_a + summed])
    right = S.transpose(b, [tb.index(c) for c in batch + summed + free_b])
    if not free_a and not free_b:
        if batch:
            raise Unsupported("np.einsum: batched inner products are not supported yet")
        return S.dot(S.reshape(left, (-1,)), S.reshape(right, (-1,)))
    # (batch..., free_a, summed) @ (batch..., summed, free_b), each group of letters one dim.
    size = dict(zip(ta, _static(a, "np.einsum"))) | dict(zip(tb, _static(b, "np.einsum")))
    dims = [size[c] for c in batch]
    group = lambda letters: int(np.prod([size[c] for c in letters], dtype=np.int64))  # noqa: E731
    product = S.matmul(S.reshape(left, (*dims, group(free_a), group(summed))),
                       S.reshape(right, (*dims, group(summed), group(free_b))))
    return S.reshape(product, tuple(size[c] for c in output))


def _spread(t: Tensor, term: str, output: str) -> Tensor:
    """`t` with its letters in output order and 1s for the output letters it lacks."""
    ordered = S.transpose(t, sorted(range(len(term)), key=lambda i: output.index(term[i])))
    shape = dict(zip(sorted(term, key=output.index), _static(ordered, "np.einsum")))
    return S.reshape(ordered, tuple(shape.get(c, 1) for c in output))


def _ufunc_reduce(kind: str):
    """np.add.reduce and the like: NumPy's sum/prod/max/min are these, with axis=0 by default."""
    def handler(array, axis=Known(0), dtype=Known(None), out=Known(None), keepdims=Known(False)):
        if known(out, "out") is not None:
            raise Unsupported("out= is not supported yet")
        return S.reduce(kind, array, known(axis, "axis"), known(keepdims, "keepdims"), known(dtype, "dtype"))
    return handler


for _uf, _kind in ((np.add, "sum"), (np.multiply, "prod"), (np.maximum, "max"), (np.minimum, "min")):
    FUNCTIONS[_uf.reduce] = _ufunc_reduce(_kind)


@implements(np.flip)
@views(np.flip)
def _flip(m, axis=Known(None)):
    """NumPy's flip is a view with negative strides; compiled code reverses the elements (unit
    slices joined in reverse, up to SEQUENTIAL_LIMIT per axis) and the host rebuilds the view."""
    t, axis = S.to_tensor(m), known(axis, "axis")
    if t.ndim == 0:
        raise Unsupported("np.flip of a 0-d value (NumPy raises for an axis, returns it for none)")
    axes = S.normalize_axes(axis, t.ndim)
    shape = t.shape
    flipped = t
    for ax in axes:
        if shape[ax] is None or shape[ax] > SEQUENTIAL_LIMIT:
            raise Unsupported(f"np.flip of an axis of varying size or longer than {SEQUENTIAL_LIMIT} "
                              "is not supported yet")
        if shape[ax] > 1:
            flipped = S.concatenate([_slice_along(flipped, ax, i, i + 1) for i in reversed(range(shape[ax]))], ax)
    return S.view_of(t, flipped.value, lambda a: np.flip(a, axis))


_MAX_WINDOW = 64  # elements per window: one slice of the array each


@implements(np.lib.stride_tricks.sliding_window_view)
@views(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(x, window_shape, axis=Known(None), *, subok=Known(False), writeable=Known(False)):
    """NumPy's read-only strided view of every window: compiled code gathers the windows (one
    slice of `x` per window element, stacked last) and the host rebuilds the view from `x`."""
    t, window, ax = S.to_tensor(x), known(window_shape, "window_shape"), known(axis, "axis")
    if known(subok, "subok") or known(writeable, "writeable"):
        raise Unsupported("sliding_window_view with subok= or writeable= is not supported yet")
    window = tuple(window) if isinstance(window, (tuple, list)) else (window,)
    axes = tuple(range(t.ndim)) if ax is None else S.normalize_axes(ax, t.ndim)
    shape = _static(t, "sliding_window_view")
    if len(window) != len(axes) or len(set(axes)) != len(axes) or \
            any(w < 0 or w > shape[a] for w, a in zip(window, axes)):
        raise Unsupported("sliding_window_view: these windows do not fit the array (NumPy raises ValueError)")
    if int(np.prod(window)) > _MAX_WINDOW:
        raise Unsupported(f"sliding_window_view with windows of more than {_MAX_WINDOW} elements is not supported yet")
    sizes = dict(zip(axes, (shape[a] - w + 1 for w, a in zip(window, axes))))
    parts = []
    for offsets in itertools.product(*(range(w) for w in window)):
        start = dict(zip(axes, offsets))
        key = tuple(slice(start[d], start[d] + sizes[d]) if d in sizes else slice(None) for d in range(t.ndim))
        part = indexing.getitem(t, key)
        parts.append(S.expand_dims(Tensor(part.value, np.ndarray), -1))
    out = tuple(sizes.get(d, n) for d, n in enumerate(shape))
    windows = S.reshape(S.concatenate(parts, -1), out + window)
    return S.view_of(t, windows.value, lambda a: np.lib.stride_tricks.sliding_window_view(a, window, axis=ax))


def _flip_one(axis: int):
    def handler(m):
        if S.to_tensor(m).ndim <= axis:
            raise Unsupported(f"Input must be >= {axis + 1}-d.")
        return _flip(m, Known(axis))
    return handler


FUNCTIONS[np.flipud] = _flip_one(0)
FUNCTIONS[np.fliplr] = _flip_one(1)


@implements(np.diff)
def _diff(a, n=Known(1), axis=Known(-1), prepend=None, append=None):
    """`np.diff`: n times `a[..., 1:] - a[..., :-1]` along `axis` (`!=` for bools, as NumPy)."""
    if prepend is not None or append is not None:
        raise Unsupported("np.diff with prepend or append is not supported yet")
    times = known(n, "n")
    if times == 0:
        return a  # NumPy returns its argument itself
    t = S.to_tensor(S.array_operand(a))
    if times < 0 or t.ndim == 0:
        raise Unsupported("np.diff of a 0-d array or with n < 0 (NumPy raises ValueError)")
    (ax,) = S.normalize_axes(known(axis, "axis"), t.ndim)
    if t.shape[ax] is None or t.shape[ax] <= times:
        raise Unsupported("np.diff along an axis that varies between calls or ends up empty is not supported yet")
    for _ in range(times):
        hi, lo = ((slice(None),) * ax + (part,) for part in (slice(1, None), slice(None, -1)))
        t = S.ufunc(np.not_equal if t.dtype == np.bool_ else np.subtract, indexing.getitem(t, hi),
                    indexing.getitem(t, lo))
    return t


@implements(np.unravel_index)
def _unravel_index(indices, shape, order=Known("C")):
    """`np.unravel_index` into a shape known when compiling, C order: per dim, (i // stride) % size,
    NumPy scalars for a scalar or 0-d index (the max-pooling backward pass's argmax position)."""
    dims = _shape(known(shape, "shape"))
    _order_c(order, "np.unravel_index")
    if isinstance(indices, Known):
        return S.fold(np.unravel_index, indices.value, dims)
    t = S.to_tensor(S.array_operand(indices))
    if t.dtype.kind not in "iu" or t.dtype == np.uint64 or None in t.shape:
        raise Unsupported("np.unravel_index of other than ints of a static shape (NumPy raises TypeError for floats)")
    t = S.astype(t, np.dtype(np.int64), np.ndarray if t.ndim else np.int64)
    size = int(np.prod(dims, dtype=np.int64))
    within = S.ufunc(np.logical_and, S.ufunc(np.greater_equal, t, Known(0)), S.ufunc(np.less, t, Known(size)))
    S.guard(S.reduce_all(S.to_tensor(within).value), "value",
            f"np.unravel_index: every index is within size {size} (NumPy raises ValueError)")
    strides = [int(np.prod(dims[k + 1:], dtype=np.int64)) for k in range(len(dims))]
    coords = [S.ufunc(np.remainder, S.ufunc(np.floor_divide, t, Known(stride)), Known(d))
              for stride, d in zip(strides, dims)]
    if t.ndim == 0:
        return Seq(tuple(coords), tuple)
    return indexing.last_axis_views(S.stack(coords, axis=-1))


@implements(np.bincount)
def _bincount(x, weights=Known(None), minlength=Known(0)):
    """`np.bincount`: a first dim as long as max(x) + 1 (at least `minlength`), which depends on the
    data (a dynamic dim: a length below 2 re-runs in the interpreter, as mask reads do)."""
    t = S.to_tensor(S.array_operand(x))
    least = known(minlength, "minlength")
    if t.ndim != 1 or t.dtype.kind not in "iub" or t.dtype == np.uint64 or type(least) is not int or least < 0:
        raise Unsupported("np.bincount of other than a 1-d array of ints (or a negative minlength): NumPy raises")
    if t.shape[0] is None or t.shape[0] == 0:
        raise Unsupported("np.bincount of an array whose length varies between calls, or is 0, is not supported yet")
    t = S.astype(t, np.dtype(np.int64))
    S.guard(S.ufunc(np.greater_equal, S.reduce("min", t), Known(0)).value, "value",
            "np.bincount's values are non-negative (NumPy raises ValueError)")
    if least < 2:
        S.guard(S.ufunc(np.greater_equal, S.reduce("max", t), Known(1)).value, "value",
                "np.bincount gives at least 2 entries (a dynamic dim's size)")
    operands = [t.value]
    if not (isinstance(weights, Known) and weights.value is None):
        w = S.astype(S.to_tensor(S.array_operand(weights)), np.dtype(np.float64))
        if w.shape != t.shape:
            raise Unsupported("np.bincount: the weights and the list don't have the same length (NumPy raises)")
        operands.append(w.value)
    return Tensor(S.build("bincount", operands, minlength=least), np.ndarray)


@implements(np.logaddexp)
def _logaddexp(x1, x2):
    """NumPy's npy_logaddexp: x + ln2 where x == y, NaN through, else max + log1p(exp(-|x - y|)).
    The difference is taken with equal operands replaced by 0, so inf - inf raises no flag that
    NumPy's scalar branch would not; exp/log1p agree with NumPy's to the ufuncs' tolerance."""
    ts = [S.to_tensor(v) if not isinstance(v, Known) or not S._is_python_scalar(v) else v for v in (x1, x2)]
    floats = [t.dtype for t in ts if isinstance(t, Tensor)]
    if not floats or any(d.kind != "f" for d in floats) or len(set(floats)) > 1 or any(
            isinstance(t, Known) and not (type(t.value) is float or type(t.value) is int
                                          and float(np.asarray(t.value, floats[0])) == t.value) for t in ts):
        raise Unsupported("np.logaddexp of operands other than one float dtype (and Python floats or ints "
                          "it holds exactly)")
    x, y = (t if isinstance(t, Tensor) else S.constant(t.value, floats[0]) for t in ts)
    same = S.ufunc(np.equal, x, y)
    zero = S.constant(np.zeros((), floats[0]))
    diff = S.ufunc(np.subtract, S.where(same, zero, x), S.where(same, zero, y))
    tail = S.ufunc(np.log1p, S.ufunc(np.exp, S.ufunc(np.negative, S.ufunc(np.absolute, diff))))
    general = S.where(S.ufunc(np.not_equal, diff, diff), diff, S.ufunc(np.add, S.ufunc(np.maximum, x, y), tail))
    return S.where(same, S.ufunc(np.add, x, Known(float(np.log(2)))), general)


from pyfront import sorting  # noqa: E402, F401 - registers np.sort and np.argsort (a module of their own)
