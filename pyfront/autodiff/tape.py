"""The interpreter's gradient: a tape over the NumPy calls a function makes.

`differentiate` calls `fn` with the differentiated arguments' float leaves
wrapped in `Box`es. A Box behaves like the NumPy value it holds (operators,
ufuncs, the NumPy functions and methods listed in HANDLERS, indexing, `len`,
iteration, `bool`), so Python control flow, loops, recursion and helper
calls run unchanged. Each operation computes its value with NumPy itself on
the raw values (so values are exactly the interpreter's) and, when the
result is a float, appends a node to the tape naming the primitive of the
table (dialects/primitives) that it is, with its operands cast as NumPy's
promotion did. The backward pass runs those primitives' VJP rules in reverse
(the very rules the AD on the IR uses). Calls of primitives through
`bind.call` (pyfront.nn) are recorded the same way; NumPy functions with no
primitive of their own are in composites.py.

What is differentiated (the arguments at `argnums`):
- float ndarrays, NumPy float scalars and Python floats (the gradient has the
  primal's type, dtype and shape);
- tuples, lists and dicts of those (the gradient has the same structure);
- objects: a shallow copy of the object, with its float attributes (and
  containers and objects in its attributes, recursively) boxed, is passed to
  `fn`; the gradient is a dict {attribute name: gradient} of those
  attributes. Attributes of other types are left alone (not differentiated).
Integer and bool arguments (or leaves of tuples, lists and dicts) raise
TypeError, as in JAX; `None` leaves stay None.

What is refused, with an error naming it (never a silently wrong or zero
gradient): NumPy functions and ufuncs with no rule here; ufunc methods
(`np.add.at`, `.reduce`, ...) and `out=`; in-place operators and item
assignment on a boxed array; `float()`, `.item()`, `.tolist()`,
`np.asarray`/`np.array` of a boxed value (each would turn a differentiated
value into a constant); a non-scalar or non-float result of `fn`; a boxed
value used after its gradient computation ended (stored during it);
nested gradients (higher order).

Results that are not floats (comparisons, `argmax`, `int()`) are plain NumPy
values: no gradient flows through them, which is exact, as their derivative
is zero wherever it exists.
"""

from __future__ import annotations

import copy
import operator
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from pyfront.dialects.primitives import bind, get
from pyfront.dialects.primitives.elementwise import BINARY, COMPARE, UNARY

UFUNC_PRIMITIVE: dict[np.ufunc, str] = {
    uf: name for table in (BINARY, COMPARE, UNARY) for name, (uf, *_) in table.items()
}
UFUNC_PRIMITIVE[np.matmul] = "matmul"


class GradError(TypeError):
    """An operation `pyfront.grad` cannot differentiate (named in the message)."""


class Node:
    """One primitive application on the tape (`prim` None: a differentiated input).

    The primitive's VJP rule is looked up once, here, and `out` is kept as an
    array, so the backward pass does no per-node lookups or conversions.
    """

    __slots__ = ("dtype", "operands", "out", "params", "parents", "prim", "shape", "vjp")

    def __init__(self, prim, out, operands, parents, params):
        self.prim = prim
        self.vjp = get(prim).vjp if prim is not None else None
        self.out = out if type(out) is np.ndarray else np.asarray(out)
        self.operands = operands
        self.parents = parents  # per operand: the operand's node index, or None for a constant
        self.params = params
        self.shape, self.dtype = self.out.shape, self.out.dtype


class Tape:
    def __init__(self):
        self.nodes: list[Node] = []
        self.active = True

    def push(self, node: Node, value: Any) -> Box:
        self.nodes.append(node)
        return Box(value, self, len(self.nodes) - 1)

    def leaf(self, value: Any) -> Box:
        return self.push(Node(None, value, (), (), {}), value)

    def backward(self, output: Box) -> dict[int, np.ndarray]:
        """Cotangents of the differentiated inputs (by node index) for d output."""
        node = self.nodes[output.node]
        cts: dict[int, np.ndarray] = {output.node: np.ones(node.shape, node.dtype)}
        leaves: dict[int, np.ndarray] = {}
        # The backward pass evaluates every operand's cotangent, also those
        # of constants (e.g. log(a) for the exponent of x ** 2 with a < 0).
        with np.errstate(all="ignore"):
            for index in range(output.node, -1, -1):
                ct = cts.pop(index, None)
                if ct is None:
                    continue
                node = self.nodes[index]
                if node.prim is None:
                    leaves[index] = ct
                    continue
                grads = node.vjp(ct, node.out, *node.operands, **node.params)
                for parent, g in zip(node.parents, grads):
                    if parent is None or g is None:
                        continue
                    _accumulate(cts, parent, g if type(g) is np.ndarray else np.asarray(g), self.nodes[parent],
                                node.prim)
        return leaves


def _accumulate(cts: dict, parent: int, g: np.ndarray, target: Node, prim: str) -> None:
    if g.shape != target.shape:
        raise AssertionError(f"VJP rule of {prim} gave a cotangent of shape {g.shape} for {target.shape}")
    if g.dtype != target.dtype:  # the operand was cast (NumPy's promotion) before the primitive
        g = g.astype(target.dtype)
    cts[parent] = cts[parent] + g if parent in cts else g


# Boxes ----------------------------------------------------------------------------


def unbox(x: Any) -> Any:
    return x.value if isinstance(x, Box) else x


def _tape_of(values) -> Tape | None:
    """The active tape of the boxes among `values` (None if there are none)."""
    tape = None
    for v in values:
        if isinstance(v, Box):
            if not v.tape.active:
                raise GradError(
                    "pyfront.grad: a value from a finished gradient computation was used "
                    "(it was stored while the function was differentiated)"
                )
            if tape is not None and v.tape is not tape:
                raise GradError("pyfront.grad: nested gradients (higher-order derivatives) are not supported")
            tape = v.tape
        elif isinstance(v, (list, tuple)):
            inner = _tape_of(v)
            if inner is not None:
                if tape is not None and inner is not tape:
                    raise GradError("pyfront.grad: nested gradients (higher-order derivatives) are not supported")
                tape = inner
    return tape


def _is_float(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def record(prim: str, out: Any, operands: list[tuple[Any, Any]], **params: Any) -> Any:
    """`out` (computed by NumPy) as the primitive `prim` applied to `operands`.

    Each operand is `(array as the primitive takes it, the source value)`; a
    source that is a Box makes that operand differentiated. The result is a
    Box if `out` is a float and a source is boxed, else `out` itself.
    """
    tape = _tape_of([src for _, src in operands])
    if tape is None or not _is_float(out):
        return out
    arrays = tuple(a if type(a) is np.ndarray else np.asarray(a) for a, _ in operands)
    parents = tuple(src.node if isinstance(src, Box) else None for _, src in operands)
    return tape.push(Node(prim, out, arrays, parents, params), out)


def apply(prim: str, *sources: Any, **params: Any) -> Any:
    """The primitive `prim` on `sources` (Boxes or arrays, of the dtypes it takes), recorded."""
    raws = [np.asarray(unbox(s)) for s in sources]
    return record(prim, bind.apply(prim, *raws, **params), list(zip(raws, sources)), **params)


def _elementwise(prim: str, out: Any, sources: list[Any]) -> Any:
    """NumPy's elementwise result `out` as `prim` on the sources cast to its dtype."""
    if not _is_float(out):
        return out
    dtype = np.asarray(out).dtype
    return record(prim, out, [(np.asarray(unbox(s), dtype), s) for s in sources])


def _unsupported(what: str, hint: str = "") -> GradError:
    return GradError(f"pyfront.grad: {what} is not supported on a differentiated value{hint}")


def _operator(prim: str, op: Callable[[Any, Any], Any], reflected: bool = False):
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        out = op(unbox(a), unbox(b))
        return out if out is NotImplemented else _elementwise(prim, out, [a, b])
    return method


def _in_place(name: str, op: Callable[[Any, Any], Any], prim: str):
    def method(self, other):
        if isinstance(self.value, np.ndarray):  # NumPy would write into the array
            raise _unsupported(f"the in-place operator {name}", "; write `x = x ... y` instead")
        return _elementwise(prim, op(self.value, unbox(other)), [self, other])
    return method


class Box:
    """A NumPy value (float ndarray or scalar) being differentiated; see the module docstring."""

    __slots__ = ("node", "tape", "value")
    __hash__ = None  # like ndarray

    def __init__(self, value: Any, tape: Tape, node: int):
        self.value = value
        self.tape = tape
        self.node = node

    # NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _tape_of(inputs)
        if method != "__call__":
            raise _unsupported(f"np.{ufunc.__name__}.{method}")
        if kwargs:
            raise _unsupported(f"np.{ufunc.__name__} with {', '.join(kwargs)}=")
        out = ufunc(*map(unbox, inputs))
        if not _is_float(out):
            return out
        if ufunc is np.positive:  # a copy
            return _copy(inputs[0], out)
        if ufunc in composites.COMPOSITE_UFUNCS:
            return composites.COMPOSITE_UFUNCS[ufunc](*inputs)
        if ufunc not in UFUNC_PRIMITIVE:
            raise _unsupported(f"np.{ufunc.__name__}")
        return _elementwise(UFUNC_PRIMITIVE[ufunc], out, list(inputs))

    def __array_function__(self, func, types_, args, kwargs):
        handler = HANDLERS.get(func)
        if handler is None:
            raise _unsupported(f"{_func_name(func)}")
        _tape_of(list(args) + list(kwargs.values()))
        return handler(func, *args, **kwargs)

    def __array__(self, dtype=None, copy=None):
        raise _unsupported(
            "np.asarray/np.array (converting to a plain array)",
            "; it would make the value a constant (use np.stack to build arrays from boxed values)",
        )

    # Python protocols
    def __bool__(self):
        return bool(self.value)

    def __int__(self):
        return int(self.value)  # piecewise constant: no gradient, exactly

    def __float__(self):
        raise _unsupported("float()", "; it would make the value a constant")

    def __complex__(self):
        raise _unsupported("complex()")

    def item(self, *args):
        raise _unsupported(".item()", "; it would make the value a constant")

    def tolist(self):
        raise _unsupported(".tolist()", "; it would make the value a constant")

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, key):
        return _getitem(self, key)

    def __setitem__(self, key, value):
        raise _unsupported("item assignment x[...] = ...", "; build a new array (np.where, np.concatenate)")

    def __repr__(self):
        return repr(self.value)

    def __str__(self):
        return str(self.value)

    def __format__(self, spec):
        return format(self.value, spec)

    # Array attributes
    shape = property(lambda self: np.shape(self.value))
    dtype = property(lambda self: np.asarray(self.value).dtype)
    ndim = property(lambda self: np.ndim(self.value))
    size = property(lambda self: np.size(self.value))
    T = property(lambda self: np.transpose(self))

    # Operators
    __add__, __radd__ = _operator("add", operator.add), _operator("add", operator.add, True)
    __sub__, __rsub__ = _operator("subtract", operator.sub), _operator("subtract", operator.sub, True)
    __mul__, __rmul__ = _operator("multiply", operator.mul), _operator("multiply", operator.mul, True)
    __truediv__ = _operator("true_divide", operator.truediv)
    __rtruediv__ = _operator("true_divide", operator.truediv, True)
    __floordiv__ = _operator("floor_divide", operator.floordiv)
    __rfloordiv__ = _operator("floor_divide", operator.floordiv, True)
    __mod__, __rmod__ = _operator("remainder", operator.mod), _operator("remainder", operator.mod, True)
    __pow__, __rpow__ = _operator("power", operator.pow), _operator("power", operator.pow, True)
    __matmul__ = _operator("matmul", operator.matmul)
    __rmatmul__ = _operator("matmul", operator.matmul, True)
    __lt__, __le__ = _operator("less", operator.lt), _operator("less_equal", operator.le)
    __gt__, __ge__ = _operator("greater", operator.gt), _operator("greater_equal", operator.ge)
    __eq__, __ne__ = _operator("equal", operator.eq), _operator("not_equal", operator.ne)
    __iadd__ = _in_place("+=", operator.add, "add")
    __isub__ = _in_place("-=", operator.sub, "subtract")
    __imul__ = _in_place("*=", operator.mul, "multiply")
    __itruediv__ = _in_place("/=", operator.truediv, "true_divide")
    __ipow__ = _in_place("**=", operator.pow, "power")

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    # Methods (each is the NumPy function of the same name)
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return np.max(self, axis=axis, out=out, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return np.min(self, axis=axis, out=out, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)

    def argmax(self, axis=None, out=None, keepdims=False):
        return np.argmax(self.value, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        return np.argmin(self.value, axis=axis, out=out, keepdims=keepdims)

    def reshape(self, *shape, order="C"):
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def transpose(self, *axes):
        return np.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        return np.ravel(self, order=order)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def copy(self):
        return np.copy(self)

    def dot(self, other):
        return np.dot(self, other)

    def clip(self, min=None, max=None):
        return np.clip(self, min, max)

    def astype(self, dtype, copy=True):
        out = np.asarray(self.value).astype(dtype)
        return _copy(self, out if isinstance(self.value, np.ndarray) else out[()])


def _copy(source: Box, out: Any) -> Any:
    """`out`, the value of `source` converted (or copied) to `out`'s dtype."""
    return record("astype", out, [(np.asarray(source.value), source)], dtype=str(np.asarray(out).dtype))


def _func_name(func: Callable) -> str:
    module = getattr(func, "__module__", "") or ""
    prefix = "np.linalg." if "linalg" in module else "np.fft." if "fft" in module else "np."
    return prefix + getattr(func, "__name__", repr(func))


def _traced_call(prim: str, operands: tuple, params: dict) -> Any:
    """A `bind.call` of a primitive with a boxed operand (pyfront.nn): applied and recorded."""
    return apply(prim, *operands, **params)


bind.register_tracer(Box, _traced_call)


# NumPy functions ----------------------------------------------------------------
#
# A handler takes the NumPy function, then its arguments (Boxes among them).

HANDLERS: dict[Callable, Callable[..., Any]] = {}


def _implements(*funcs: Callable):
    def register(handler):
        for f in funcs:
            HANDLERS[f] = handler
        return handler
    return register


def _no_extras(func: Callable, **extras: Any) -> None:
    given = [k for k, v in extras.items() if v is not None and v is not False]
    if given:
        raise _unsupported(f"{_func_name(func)} with {', '.join(given)}=")


def _axes(axis: Any, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return sorted(operator.index(a) % ndim for a in axes)


REDUCTIONS = {np.sum: "sum", np.mean: "mean", np.prod: "prod", np.max: "max", np.amax: "max",
              np.min: "min", np.amin: "min"}


@_implements(*REDUCTIONS)
def _reduction(func, a, axis=None, dtype=None, out=None, keepdims=False, **rest):
    _no_extras(func, dtype=dtype, out=out, **rest)
    raw = np.asarray(unbox(a))
    value = func(raw, axis=axis, keepdims=keepdims)
    return record(REDUCTIONS[func], value, [(raw, a)], axes=_axes(axis, raw.ndim), keepdims=bool(keepdims))


@_implements(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d)
def _reshape_like(func, a, *args, **kwargs):
    """Functions that keep the elements in C order and change only the shape."""
    if kwargs.get("order", "C") != "C":
        raise _unsupported(f"{_func_name(func)} with order={kwargs['order']!r}")
    return apply("reshape", a, shape=list(np.shape(func(unbox(a), *args, **kwargs))))


@_implements(np.transpose, np.swapaxes, np.moveaxis)
def _transpose_like(func, a, *args, **kwargs):
    # The permutation, read off the function applied to an array whose dim i has size i + 2.
    ndim = np.ndim(unbox(a))
    moved = func(np.empty(tuple(range(2, ndim + 2)), np.bool_), *args, **kwargs).shape
    return apply("transpose", a, perm=[d - 2 for d in moved])


@_implements(np.broadcast_to)
def _broadcast_to(func, a, shape, subok=False):
    return apply("broadcast_to", a, shape=list(np.broadcast_to(unbox(a), shape).shape))


@_implements(np.concatenate, np.stack)
def _concatenate(func, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    _no_extras(func, out=out, dtype=dtype)
    if axis is None:
        raise _unsupported(f"{_func_name(func)} with axis=None")
    value = func([unbox(x) for x in arrays], axis=axis)
    axis = operator.index(axis) % value.ndim
    if func is np.stack:
        arrays = [np.expand_dims(x, axis) for x in arrays]
    return record("concatenate", value, [(np.asarray(unbox(x), value.dtype), x) for x in arrays], axis=axis)


@_implements(np.where)
def _where(func, condition, *branches):
    if len(branches) != 2:
        return np.where(unbox(condition), *map(unbox, branches))
    x, y = branches
    cond = np.asarray(unbox(condition)).astype(bool)
    value = np.where(cond, unbox(x), unbox(y))
    if not _is_float(value):
        return value
    operands = [(cond, None)] + [(np.asarray(unbox(v), value.dtype), v) for v in branches]
    return record("where", value, operands)


@_implements(np.dot)
def _dot(func, a, b, out=None):
    _no_extras(func, out=out)
    if np.ndim(unbox(a)) == 0 or np.ndim(unbox(b)) == 0:
        return np.multiply(a, b)
    if np.ndim(unbox(a)) > 2 or np.ndim(unbox(b)) > 2:
        return composites.dot_nd(a, b)
    return _elementwise("matmul", np.dot(unbox(a), unbox(b)), [a, b])


@_implements(np.clip)
def _clip(func, a, a_min=None, a_max=None, out=None, **kwargs):
    """minimum(maximum(a, a_min), a_max), as NumPy defines it."""
    _no_extras(func, out=out, **kwargs)
    result = a if a_min is None else np.maximum(a, a_min)
    return result if a_max is None else np.minimum(result, a_max)


@_implements(np.copy)
def _np_copy(func, a, order="K", subok=False):
    return _copy(a, np.copy(unbox(a))) if isinstance(a, Box) else np.copy(a)


# Functions whose results hold nothing computed from float values (shapes,
# indices, bools, fresh arrays): they run on the raw values and no gradient
# flows through them.
CONSTANT_RESULTS = (
    np.shape, np.ndim, np.size, np.zeros_like, np.ones_like, np.empty_like, np.argmax, np.argmin,
    np.argsort, np.nonzero, np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal,
)


@_implements(*CONSTANT_RESULTS)
def _constant_result(func, *args, **kwargs):
    return func(*map(unbox, args), **{k: unbox(v) for k, v in kwargs.items()})


# Indexing -------------------------------------------------------------------------


def _basic_slice(shape: tuple[int, ...], key: Any) -> tuple[list, list, list] | None:
    """(offsets, sizes, strides) of a basic index (ints, slices with step > 0, None, ...), else None."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        used = sum(k is not None for k in key) - 1
        key = key[:at] + (slice(None),) * (len(shape) - used) + key[at + 1:]
    key = [k for k in key if k is not None]  # new axes: the reshape to NumPy's shape adds them
    if len(key) > len(shape):
        return None
    key += [slice(None)] * (len(shape) - len(key))
    offsets, sizes, strides = [], [], []
    for k, dim in zip(key, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(dim)
            if step <= 0:
                return None
            offsets.append(start), sizes.append(len(range(start, stop, step))), strides.append(step)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) and -dim <= k < dim:
            offsets.append(int(k) % dim), sizes.append(1), strides.append(1)
        else:
            return None
    return offsets, sizes, strides


def _getitem(box: Box, key: Any) -> Any:
    raw = box.value
    key = tuple(map(unbox, key)) if isinstance(key, tuple) else unbox(key)
    value = raw[key]
    if not _is_float(value):
        return value
    shape = np.shape(raw)
    basic = _basic_slice(shape, key)
    if basic is not None:
        offsets, sizes, strides = basic
        part = apply("slice", box, offsets=offsets, sizes=sizes, strides=strides)
    else:
        # Any other index (arrays, masks, negative steps) picks elements by their
        # flat position: a gather of rows of the array seen as a column.
        positions = np.arange(np.size(raw), dtype=np.int64).reshape(shape)[key]
        column = apply("reshape", box, shape=[int(np.size(raw)), 1])
        part = apply("embedding", column, np.asarray(positions))
    return record("reshape", value, [(np.asarray(unbox(part)), part)], shape=list(np.shape(value)))


# Differentiating a call ---------------------------------------------------------------


def _leaf_error(value: Any, path: str) -> TypeError:
    dtype = getattr(value, "dtype", type(value).__name__)
    return TypeError(
        f"pyfront.grad requires float inputs, but {path} has {dtype}; "
        "integer and bool values cannot be differentiated (pass them as other arguments)"
    )


def _plain_object(value: Any) -> bool:
    return hasattr(value, "__dict__") and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType)
    )


Rebuild = Callable[[dict[int, np.ndarray]], Any]  # cotangents by node -> a gradient


def _box(tape: Tape, value: Any, path: str, in_object: bool, visiting: set[int]) -> tuple[Any, Rebuild]:
    """`value` with its float leaves boxed, and how to build its gradient from the cotangents."""
    if _is_float(value):
        leaf = tape.leaf(value)
        return leaf, lambda cts: _like(value, cts.get(leaf.node))
    if isinstance(value, Box):
        raise GradError("pyfront.grad: nested gradients (higher-order derivatives) are not supported")
    if isinstance(value, (tuple, list, dict)):
        keys = list(value) if isinstance(value, dict) else range(len(value))
        parts = {k: _box(tape, value[k], f"{path}[{k!r}]", in_object, visiting) for k in keys}
        if isinstance(value, dict):
            return (type(value)((k, b) for k, (b, _) in parts.items()),
                    lambda cts: type(value)((k, g(cts)) for k, (_, g) in parts.items()))
        return (_rebuild(value, [b for b, _ in parts.values()]),
                lambda cts: _rebuild(value, [g(cts) for _, g in parts.values()]))
    if value is None or (in_object and not _plain_object(value)):
        return value, lambda cts: None  # not differentiated
    if _plain_object(value):
        return _box_object(tape, value, path, visiting)
    raise _leaf_error(value, path)


def _box_object(tape: Tape, obj: Any, path: str, visiting: set[int]) -> tuple[Any, Rebuild]:
    """A shallow copy with the float-holding attributes boxed; the gradient is a dict of those."""
    boxed = copy.copy(obj)
    parts = {}
    visiting = visiting | {id(obj)}
    for name, attr in vars(obj).items():
        if has_float(attr, set(visiting)):
            parts[name] = _box(tape, attr, f"{path}.{name}", True, visiting)
            setattr(boxed, name, parts[name][0])
    return boxed, lambda cts: {name: g(cts) for name, (_, g) in parts.items()}


def has_float(value: Any, seen: set[int]) -> bool:
    """Whether an attribute holds float leaves (in containers and objects): what objects differentiate."""
    if _is_float(value):
        return True
    if id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, (tuple, list)):
        return any(has_float(v, seen) for v in value)
    if isinstance(value, dict):
        return any(has_float(v, seen) for v in value.values())
    return _plain_object(value) and any(has_float(v, seen) for v in vars(value).values())


def _rebuild(like: tuple | list, items: list) -> tuple | list:
    if isinstance(like, tuple) and hasattr(like, "_fields"):  # a namedtuple
        return type(like)(*items)
    return type(like)(items)


def _like(primal: Any, ct: np.ndarray | None) -> Any:
    """The cotangent as a value of the primal's type, dtype and shape (zeros if none reached it)."""
    dtype = np.asarray(primal).dtype
    g = np.zeros(np.shape(primal), dtype) if ct is None else np.asarray(ct, dtype)
    if isinstance(primal, np.ndarray):
        return g
    return float(g) if type(primal) is float else dtype.type(g)


def _scalar_output(out: Any) -> Any:
    value = unbox(out)
    if isinstance(value, (bool, np.bool_)) or not _is_float(value):
        kind = getattr(value, "dtype", type(value).__name__)
        raise TypeError(f"pyfront.grad requires a float scalar output, but the function returned {kind}")
    if np.shape(value) != ():
        raise TypeError(
            f"pyfront.grad is only defined for scalar-output functions; the output had shape {np.shape(value)}"
        )
    return value


def _split_aux(out: Any) -> tuple[Any, Any]:
    """`fn`'s `(loss, aux)` with `has_aux`: aux unboxed (no gradient flows through it)."""
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError("pyfront.grad with has_aux=True requires the function to return a pair (loss, aux), "
                        f"but it returned {type(out).__name__}")
    return out[0], _stop_gradient(out[1])


def _stop_gradient(value: Any) -> Any:
    """`value` with Boxes (in tuples, lists and dicts) replaced by their values."""
    if isinstance(value, Box):
        return value.value
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [_stop_gradient(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, _stop_gradient(v)) for k, v in value.items())
    return value


def differentiate(fn: Callable, args: tuple, kwargs: dict, argnums: int | tuple[int, ...], with_value: bool,
                  has_aux: bool = False):
    """`fn(*args, **kwargs)`'s gradient (and value first, if `with_value`) by the tape; see GradFunction."""
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in positions:
        if not -len(args) <= i < len(args):
            raise ValueError(f"pyfront.grad: argnums {argnums!r} is out of range for {len(args)} positional arguments")
    positions = tuple(i % len(args) for i in positions)
    tape = Tape()
    call_args, rebuilds = list(args), []
    for i in positions:
        call_args[i], rebuild = _box(tape, args[i], f"argument {i}", False, set())
        rebuilds.append(rebuild)
    try:
        out = fn(*call_args, **kwargs)
        out, aux = _split_aux(out) if has_aux else (out, None)
        value = _scalar_output(out)
        if isinstance(out, Box) and _tape_of([out]) is not tape:
            raise GradError("pyfront.grad: nested gradients (higher-order derivatives) are not supported")
        cts = tape.backward(out) if isinstance(out, Box) else {}
    finally:
        tape.active = False
    grads = tuple(rebuild(cts) for rebuild in rebuilds)
    result = grads[0] if isinstance(argnums, int) else grads
    if has_aux:
        return ((value, aux), result) if with_value else (result, aux)
    return (value, result) if with_value else result


# NumPy functions differentiated through compositions of primitives (registers their handlers).
from pyfront.autodiff import composites  # noqa: E402
