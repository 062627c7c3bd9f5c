"""Argument specialization: what a compiled variant assumes about each argument.

`spec_of(value)` describes an argument the way the graph generator compiles
it; `key_of(value)` is a hashable key equal for exactly the values with the
same spec, so the dispatcher finds a variant with one dict lookup. They follow
JANUS's type -> shape -> value hierarchy: arrays specialize on dtype and shape,
NumPy scalars on type, Python scalars and other immutable constants on value,
objects on their exact type (their attributes are read at call time).
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import layout

_IMMUTABLE = (int, float, bool, str, bytes, type(None), complex, type(Ellipsis), slice, range)


@dataclass(frozen=True)
class ArraySpec:
    dtype: np.dtype
    shape: tuple[int, ...]


@dataclass(frozen=True)
class ScalarSpec:
    type: type  # a NumPy scalar type, e.g. np.float32, or `float`/`int` for a relaxed Python scalar


@dataclass(frozen=True)
class ConstSpec:
    value: Any


@dataclass(frozen=True)
class SeqSpec:
    kind: type  # tuple or list
    items: tuple


@dataclass(frozen=True)
class ObjectSpec:
    type: type


@dataclass(frozen=True)
class LengthSpec:
    """A list or tuple in Python state has `length` items (unpacked or iterated at compile time)."""

    length: int


@dataclass(frozen=True)
class KeysSpec:
    """A dict in Python state has exactly `keys`, in this order (iterated at compile time)."""

    keys: tuple


@dataclass(frozen=True)
class HasAttrSpec:
    """`hasattr(obj, name)` of a plain object is `present` (instance dict or class attribute)."""

    name: str
    present: bool


@dataclass(frozen=True)
class OwnAttrSpec:
    """`name` is (not) in the object's instance `__dict__`: an instance attribute would shadow
    the class's method of that name (`layer.act = ...`, `mock.patch.object(layer, "act")`)."""

    name: str
    present: bool


@dataclass(frozen=True)
class GeneratorSpec:
    """A random generator of exactly `type`, drawing with a bit generator of `bit_generator`
    (None for `random.Random`): what a variant's host draws assume (runtime/host_draws.py)."""

    type: type
    bit_generator: type | None


Spec = (ArraySpec | ScalarSpec | ConstSpec | SeqSpec | ObjectSpec | LengthSpec | KeysSpec | HasAttrSpec | OwnAttrSpec
        | GeneratorSpec)


class CompileTimeConstant:
    """A base for pyfront's own immutable callables (pyfront.grad functions): folded by identity."""

    __slots__ = ()


# NumPy 2's array functions (`np.dot`, `np.vstack`, ...) are neither Python functions nor
# builtins but `_ArrayFunctionDispatcher`s: `from numpy import dot` binds one to a global.
NUMPY_FUNCTION = type(np.dot)


def is_constant(value: Any) -> bool:
    """Immutable values that compile into the graph as constants."""
    t = type(value)
    if t in _IMMUTABLE:
        return True
    if t is tuple:
        return all(is_constant(v) for v in value)
    return isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, np.ufunc,
                              NUMPY_FUNCTION, np.dtype, CompileTimeConstant))


def _fits_int64(value: int) -> bool:
    return -2 ** 63 <= value < 2 ** 63


def relaxed_shape(shape: tuple[int, ...], dims: frozenset) -> tuple[int | None, ...]:
    """`shape` with the relaxed dims made dynamic (None); sizes 0 and 1 stay static, so a
    dynamic dim is always >= 2 (never broadcast, never empty)."""
    return tuple(None if i in dims and d >= 2 else d for i, d in enumerate(shape))


def spec_of(value: Any, relaxed: Any = None) -> Spec:
    """The spec of an argument. `relaxed` is True for a Python float or int compiled as a
    runtime operand (in a list or tuple: every one inside it), or a set of dims of an array
    whose sizes are runtime values."""
    t = type(value)
    if relaxed is True and (t is float or t is int and _fits_int64(value)):
        return ScalarSpec(t)
    if relaxed is True and t in (tuple, list):  # e.g. token ids: every int and float inside is relaxed
        return SeqSpec(t, tuple(spec_of(v, True) for v in value))
    if t is np.ndarray:
        shape = relaxed_shape(value.shape, relaxed) if isinstance(relaxed, frozenset) else value.shape
        return ArraySpec(value.dtype, shape)
    if isinstance(value, np.generic):
        return ScalarSpec(t)
    if t in (tuple, list) and not (t is tuple and is_constant(value)):
        return SeqSpec(t, tuple(spec_of(v) for v in value))
    if is_constant(value):
        return ConstSpec(value)
    return ObjectSpec(t)


def key_of(value: Any, relaxed: Any = None) -> Any:
    """A hashable key; equal keys mean equal specs (and so the same variant)."""
    t = type(value)
    known = _KEY_OF_TYPE.get(t)
    if known is not None:  # (a user object or NumPy scalar: a model, an optimizer, np.int64 token ids)
        return known
    if relaxed is True and (t is float or t is int and _fits_int64(value)):
        return (t,)  # a runtime operand (an int beyond int64 keeps a key, and a variant, of its own)
    if relaxed is True and t in (tuple, list):
        return (t,) + tuple(key_of(v, True) for v in value)
    if t is np.ndarray:
        if not value.flags.c_contiguous:  # (C-contiguous is C order: the usual case needs no call)
            layout.check_argument(value)  # compiled code keeps only C order
        if isinstance(relaxed, frozenset):
            return (t, value.dtype, relaxed_shape(value.shape, relaxed))
        return (t, value.dtype, value.shape)
    if t is float:
        # 0.0 == -0.0 but they compute differently; NaN never equals itself and always misses.
        return (t, value, math.copysign(1.0, value))
    if t is complex:
        return (t, value, math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
    if t in (int, bool, str, bytes, type(None)):
        return (t, value)
    if t in (tuple, list):
        return (t,) + tuple(key_of(v) for v in value)
    if isinstance(value, np.generic):
        return _keyed_by_type(t, (t,))
    if t is slice:  # by value, each bound keyed by its own type (slice(0, 2.0) == slice(0, 2))
        return (t, key_of(value.start), key_of(value.stop), key_of(value.step))
    if t is range:  # not by ==: range(0) == range(5, 5), but their .start differ
        return (t, value.start, value.stop, value.step)
    if isinstance(value, np.dtype):
        return (t, value)  # by value: equal dtypes are interchangeable wherever NumPy takes one
    if is_constant(value):
        # Functions, modules, types, ufuncs: by identity, holding the object, so that its
        # address cannot be reused by another object (e.g. a closure made per call, whose
        # inlined body guards the cells of the closure this variant was compiled for).
        return (t, Identity(value))
    return _keyed_by_type(t, ("object", t))


# Types whose every value has one key, found by the checks of key_of above: only type tests
# decided it, unless an instance can claim another class (`__class__` overridden).
_KEY_OF_TYPE: dict[type, tuple] = {}


def _keyed_by_type(t: type, key: tuple) -> tuple:
    if not any("__class__" in vars(k) for k in t.__mro__[:-1]):
        _KEY_OF_TYPE[t] = key
    return key


class Identity:
    """A key part equal only to one holding the same object, and keeping that object alive."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return type(other) is Identity and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def describe_key(key: tuple) -> str:
    """A key as people read it: `(ndarray[float32, (?, 8)], float=0.5)`."""
    parts = []
    for k in key:
        if k and k[0] == "object":
            parts.append(k[1].__name__)
        elif k and getattr(k[0], "__name__", "") == "ndarray":
            dims = ", ".join("?" if d is None else str(d) for d in k[2])
            parts.append(f"ndarray[{k[1]}, ({dims}{',' if len(k[2]) == 1 else ''})]")
        elif k and isinstance(k[0], type) and len(k) >= 2 and k[0] in (int, float, bool, str, type(None)):
            parts.append(f"{k[0].__name__}={k[1]!r}")
        else:
            parts.append(getattr(k[0], "__name__", str(k[0])))
    return f"({', '.join(parts)})"
