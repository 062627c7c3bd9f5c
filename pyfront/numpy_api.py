"""The NumPy API the compiler understands: functions, ndarray methods and attributes.

Each entry maps a NumPy callable (or an ndarray method name) to a handler with
NumPy's own signature, so Python binds positional and keyword arguments
exactly as NumPy would; a keyword NumPy accepts but the compiler does not
(`out=`, `where=`, ...) is rejected by the binding and reported. Handlers get
front-end values (values.py) and return one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyfront import indexing, nn
from pyfront import semantics as S
from pyfront.dialects.primitives import get
from pyfront.errors import Unsupported
from pyfront.values import Known, Seq, Tensor

FUNCTIONS: dict[Any, Callable[..., Any]] = {}
METHODS: dict[str, Callable[..., Any]] = {}


def known(v: Any, what: str = "argument") -> Any:
    """The compile-time value of a parameter such as `axis` or `shape`."""
    if isinstance(v, Known):
        return v.value
    if isinstance(v, Seq) and all(isinstance(i, Known) for i in v.items):
        return v.kind(i.value for i in v.items)
    raise Unsupported(f"{what} must be a compile-time constant")


def items(v: Any) -> list[Any]:
    if isinstance(v, Seq):
        return list(v.items)
    if isinstance(v, Known) and isinstance(v.value, (tuple, list)):
        return [Known(i) for i in v.value]
    raise Unsupported("expected a tuple or list of arrays")


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
def _where(condition, x, y):
    return S.where(condition, x, y)


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


def _moment(root: bool):
    """np.var / np.std as NumPy computes them: the mean kept, squared deviations summed, / (n - ddof)."""
    def handler(a, axis=Known(None), dtype=Known(None), out=Known(None), ddof=Known(0), keepdims=Known(False)):
        if known(out, "out") is not None:
            raise Unsupported(f"np.{'std' if root else 'var'} with out= is not supported yet")
        t = S.to_tensor(a)
        ax, dt, dd = known(axis, "axis"), known(dtype, "dtype"), known(ddof, "ddof")
        if dt is None and t.dtype.kind in "iub":
            dt = np.float64  # NumPy's accumulator for ints and bools
        axes = S.normalize_axes(ax, t.ndim)
        n = int(np.prod([S.static_shape(t, "np.var")[i] for i in axes], dtype=np.int64))
        mean = S.reduce("mean", t, ax, True, dt)
        deviation = S.ufunc(np.subtract, t if dt is None else S.astype(t, np.dtype(dt)), mean)
        total = S.reduce("sum", S.ufunc(np.multiply, deviation, deviation), ax, known(keepdims, "keepdims"))
        var = S.ufunc(np.true_divide, total, Known(max(n - dd, 0)))
        return S.ufunc(np.sqrt, var) if root else var
    return handler


implements(np.var, method="var")(_moment(root=False))
implements(np.std, method="std")(_moment(root=True))


@implements(np.reshape)
def _reshape(a, shape):
    return S.reshape(a, _shape(known(shape, "shape")))


def _reshape_method(a, *shape):
    values = [known(s, "shape") for s in shape]
    return S.reshape(a, _shape(values[0] if len(values) == 1 else tuple(values)))


METHODS["reshape"] = _reshape_method


def _shape(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


@implements(np.transpose)
def _transpose(a, axes=Known(None)):
    return S.transpose(a, known(axes, "axes"))


def _transpose_method(a, *axes):
    values = [known(x, "axes") for x in axes]
    if not values or values == [None]:
        return S.transpose(a)
    return S.transpose(a, values[0] if len(values) == 1 and not isinstance(values[0], int) else values)


METHODS["transpose"] = _transpose_method


@implements(np.expand_dims)
def _expand_dims(a, axis):
    return S.expand_dims(a, known(axis, "axis"))


@implements(np.squeeze, method="squeeze")
def _squeeze(a, axis=Known(None)):
    return S.squeeze(a, known(axis, "axis"))


@implements(np.broadcast_to)
def _broadcast_to(array, shape):
    return S.broadcast_to(array, _shape(known(shape, "shape")))


@implements(np.concatenate)
def _concatenate(arrays, axis=Known(0)):
    return S.concatenate(items(arrays), known(axis, "axis"))


@implements(np.stack)
def _stack(arrays, axis=Known(0)):
    return S.stack(items(arrays), known(axis, "axis"))


def _astype(a, dtype):
    return S.astype(S.to_tensor(a), np.dtype(known(dtype, "dtype")))


METHODS["astype"] = _astype


@implements(np.array)
def _array(a, dtype=Known(None)):
    t = S.to_tensor(a)
    dt = known(dtype, "dtype")
    # np.array(x) copies and returns an ndarray even for a NumPy scalar.
    return S.astype(t, np.dtype(dt) if dt is not None else t.dtype, np.ndarray)


@implements(np.asarray)
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
# np.empty's elements are whatever the memory held: a program that reads them before writing
# them has no defined result. Compiled, they are zeros, one of the answers NumPy may give.
FUNCTIONS[np.empty] = _creation(0)
FUNCTIONS[np.empty_like] = _like(0)


@implements(np.outer)
def _outer(a, b):
    return S.ufunc(np.multiply, S.reshape(S.to_tensor(a), (-1, 1)), S.reshape(S.to_tensor(b), (1, -1)))


@implements(np.ravel, method="ravel")
def _ravel(a):
    return S.reshape(S.to_tensor(a), (-1,))  # a view where NumPy's is (S.reshape follows the layout)


def _flatten(a):
    t = S.reshape(S.to_tensor(a), (-1,))
    return Tensor(t.value, np.ndarray)  # always a copy


METHODS["flatten"] = _flatten


@implements(np.pad)
def _pad(array, pad_width, mode=Known("constant"), constant_values=Known(0)):
    """np.pad in 'constant' mode: the array written into a filled one."""
    t = S.to_tensor(array)
    if known(mode, "mode") != "constant" or np.ndim(known(constant_values, "constant_values")):
        raise Unsupported("np.pad is supported in 'constant' mode with one constant value")
    widths = np.asarray(known(pad_width, "pad_width"))
    if widths.dtype.kind not in "iu" or (widths < 0).any():
        raise Unsupported("np.pad: pad widths must be non-negative ints (NumPy raises otherwise)")
    try:
        widths = np.broadcast_to(widths, (t.ndim, 2))
    except ValueError as e:
        raise Unsupported(f"np.pad: {e}") from None
    shape = S.static_shape(t, "np.pad")
    padded = S.full(tuple(int(d + lo + hi) for d, (lo, hi) in zip(shape, widths)), constant_values.value, t.dtype)
    return indexing.setitem(padded, tuple(slice(int(lo), int(lo) + d) for d, (lo, _) in zip(shape, widths)), t)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=Known(None)):
    t = S.to_tensor(a)
    dt = known(dtype, "dtype")
    return S.full(t.shape, known(fill_value, "fill_value"), np.dtype(dt) if dt is not None else t.dtype)


# Array attributes that are compile-time facts, and those that compute.
ATTRIBUTES: dict[str, Callable[[Tensor], Any]] = {
    "shape": lambda t: Known(S.static_shape(t, "x.shape")),
    "ndim": lambda t: Known(t.ndim),
    "size": lambda t: Known(int(np.prod(S.static_shape(t, "x.size"), dtype=np.int64))),
    "dtype": lambda t: Known(t.dtype),
    "T": lambda t: S.transpose(t) if t.pytype is np.ndarray else t,  # a NumPy scalar's .T is itself
}


# Python conversions of computed values: float(t), len(t), np.float32(t), ...


def converts(fn: Any) -> bool:
    return fn in (float, len) or (isinstance(fn, type) and issubclass(fn, np.generic))


def convert(fn: Any, value: Any) -> Any:
    if fn is len:
        if isinstance(value, Seq):
            return Known(len(value.items))
        t = S.to_tensor(value)
        if t.ndim == 0:
            raise Unsupported("len() of unsized object")
        return Known(S.static_shape(t, "len()")[0])
    t = S.to_tensor(value)
    if t.ndim != 0:
        raise Unsupported(f"{fn.__name__}() of an array (only 0-d values convert)")
    if fn is float:
        return S.astype(t, np.dtype(np.float64), float)
    return S.astype(t, np.dtype(fn), fn)


@implements(np.arange)
def _arange(*args, **kwargs):
    if not all(isinstance(v, Known) for v in (*args, *kwargs.values())):
        raise Unsupported("np.arange with bounds computed at run time is not supported yet")
    return S.fold(np.arange, *(a.value for a in args), **{k: v.value for k, v in kwargs.items()})


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


@implements(nn.dropout)
def _dropout(x, rate, rng, training=Known(True)):
    off = isinstance(training, Known) and not training.value
    no_rate = isinstance(rate, Known) and type(rate.value) in (int, float) and rate.value == 0
    if off or no_rate:
        return x  # nothing is drawn: the interpreter returns x itself
    raise Unsupported("pyfront.nn.dropout draws its mask from a NumPy Generator, which compiled code does "
                      "not do (the call runs in the interpreter, with the interpreter's random numbers)")
