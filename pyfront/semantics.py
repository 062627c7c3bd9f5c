"""NumPy and Python semantics on front-end values: promotion, broadcasting, result types.

This is the one place that decides dtypes and Python result types. Every
operation either
- folds, when all operands are `Known`, by running NumPy/Python itself; or
- resolves dtypes with NumPy's own machinery (`ufunc.resolve_dtypes`, which
  treats Python scalars as weak, NEP 50), inserts explicit casts, and emits a
  primitive whose operands already share the compute dtype.
Anything NumPy would answer with an exception or a warning that compiled code
cannot reproduce raises `Unsupported`, and the call stays in the interpreter.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import layout
from pyfront.compile_warnings import warnings_as
from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir, tensor
from pyfront.dialects.primitives import emit, get
from pyfront.dialects.primitives.elementwise import BINARY, COMPARE, UNARY
from pyfront.dialects.types import SUPPORTED_DTYPES, is_tensor, tensor_type
from pyfront.errors import Unsupported
from pyfront.values import BoundedInt, FloatOrFloat64, Known, Seq, Tensor, Text, View

UFUNC_PRIMITIVE = {uf: name for table in (BINARY, COMPARE, UNARY) for name, (uf, *_) in table.items()}
BOOL = np.dtype(np.bool_)
FLOAT64 = np.dtype(np.float64)


def fold(fn, *args, **kwargs) -> Known:
    """Evaluate `fn` on compile-time values with the interpreter's exact semantics.

    A warning at compile time would be lost at run time, and an exception must
    be raised by the call itself, so both make the construct unsupported.
    """
    with warnings_as("error"):
        try:
            return Known(fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - any exception of the user's code
            raise Unsupported(f"{getattr(fn, '__name__', fn)} raises {type(e).__name__}: {e}") from None


def check_dtype(dtype: np.dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise Unsupported(f"arrays of dtype {dtype} are not supported by the compiler yet")
    return dtype


def result_pytype(shape: tuple[int, ...], dtype: np.dtype) -> type:
    """What a ufunc-like NumPy operation returns: an array, or a NumPy scalar when 0-d."""
    return np.ndarray if len(shape) else np.dtype(dtype).type


# Conversion to tensors -------------------------------------------------------


def constant(value: Any, dtype: np.dtype | None = None) -> Tensor:
    """A compile-time value as a constant tensor (Python scalars need an explicit dtype)."""
    array = np.asarray(value, dtype=dtype)
    check_dtype(array.dtype)
    pytype = np.ndarray if isinstance(value, np.ndarray) else array.dtype.type
    return Tensor(emit.dense(array), pytype)


def to_tensor(v: Any) -> Tensor:
    if isinstance(v, Tensor):
        return v
    if isinstance(v, Known) and isinstance(v.value, (np.ndarray, np.generic)):
        return constant(v.value)
    if is_sequence(v):
        return array_from_sequence(v)
    raise Unsupported(f"expected an array, got {describe(v)}")


def is_sequence(v: Any) -> bool:
    """A list or tuple: NumPy functions take it as the array `np.asarray` makes of it."""
    return isinstance(v, Seq) and v.kind in (list, tuple) or isinstance(v, Known) and type(v.value) in (list, tuple)


def array_operand(v: Any) -> Any:
    """An operand of a NumPy function: a list or tuple becomes its array, anything else stays."""
    return array_from_sequence(v) if is_sequence(v) else v


def array_from_sequence(v: Seq | Known) -> Tensor:
    """`np.asarray([a, b, ...])`: the items (arrays, scalars, nested lists) have one shape, and the
    result their common dtype (Python scalars at their default dtypes, not weak), stacked on a new
    first axis. A list of compile-time values is NumPy's own array of it."""
    if isinstance(v, Known) or all(isinstance(i, Known) and not isinstance(i.value, (list, tuple)) for i in v.items):
        values = v.value if isinstance(v, Known) else [i.value for i in v.items]
        with warnings_as("error"):
            try:
                array = np.asarray(values)
            except (ValueError, TypeError, Warning) as e:
                raise Unsupported(f"np.asarray of this {type(values).__name__} raises {type(e).__name__}") from None
        return constant(array)
    ts = [to_tensor(i) if not isinstance(i, Known) or isinstance(i.value, (list, tuple))
          else constant(np.asarray(i.value)) for i in v.items]
    if any(t.shape != ts[0].shape for t in ts):
        raise Unsupported("a list of arrays of different shapes (NumPy raises ValueError)")
    dtype = check_dtype(np.result_type(*(t.dtype for t in ts)))
    return Tensor(stack([astype(t, dtype, np.ndarray) for t in ts]).value, np.ndarray)


def describe(v: Any) -> str:
    """A value as messages name it: its Python type (and a scalar's value), never an array's repr."""
    if isinstance(v, Known):
        value = v.value
        if isinstance(value, np.ndarray):
            return f"ndarray of {value.dtype} {value.shape}"
        return f"{type(value).__name__} {value!r}"[:80] if isinstance(value, (int, float, str)) else f"a {type(value).__name__}"
    if isinstance(v, Tensor):
        return f"{v.pytype.__name__} of {v.dtype} {v.shape}"
    if isinstance(v, Seq):
        return v.kind.__name__
    if isinstance(v, Text):
        return "an f-string of values computed at run time"
    example = getattr(v, "example", None)  # an object in Python state
    return f"a {type(example).__name__} object" if example is not None else "this value"


def astype(t: Tensor, dtype: np.dtype, pytype: type | None = None) -> Tensor:
    dtype = check_dtype(dtype)
    if pytype is None:  # a NumPy scalar's astype is a NumPy scalar of the new dtype
        pytype = dtype.type if issubclass(t.pytype, np.generic) else t.pytype
    if t.dtype == dtype:
        return Tensor(t.value, pytype)
    if t.dtype.kind in "iu" and dtype.kind == "f" and np.iinfo(t.dtype).max > float(np.finfo(dtype).max):
        _guard_int_fits_float(t, dtype)
    return Tensor(get("astype").build([t.value], dtype=dtype.name), pytype)


def _guard_int_fits_float(t: Tensor, dtype: np.dtype) -> None:
    """Ints that round past float16's largest value become inf with NumPy's "overflow encountered
    in cast" warning (guard-fp-events checks only float sources): the interpreter answers."""
    info = np.finfo(dtype)
    limit = int(info.max) + 2 ** (info.maxexp - 2 - info.nmant) - 1  # below max + ulp / 2: 65519 rounds down
    wide = get("astype").build([t.value], dtype="float64")  # ints near these bounds convert exactly
    bound = emit.dense(np.asarray(float(limit)))
    within = get("logical_and").build([get("less_equal").build([wide, bound]),
                                       get("greater_equal").build([wide, get("negative").build([bound])])])
    guard(reduce_all(within), "value", f"every {t.dtype} value converts to a finite {dtype} (NumPy warns)")


def _weak_dtype(v: Any):
    """The dtype NumPy's promotion sees for an operand (Python scalars are weak)."""
    if isinstance(v, Tensor):
        return {float: float, int: int, bool: BOOL}.get(v.pytype, v.dtype)
    value = v.value
    if type(value) is bool:
        return BOOL
    if type(value) in (int, float):
        return type(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    raise Unsupported(f"NumPy operand of type {type(value).__name__} is not supported")


def _promotion_operand(v: Any):
    """What `np.result_type` must see for an operand to promote it as NumPy does.

    A Python scalar is weak only as a *value*: `np.result_type(0.5, float32)` is float32 but
    `np.result_type(float, float32)` is float64 (unlike `ufunc.resolve_dtypes`, which `_weak_dtype`
    serves). So a Python scalar computed at run time stands in as a value of its type.
    """
    if isinstance(v, Tensor):
        return v.pytype(0) if v.is_python_scalar else v.dtype
    return v.value if type(v.value) in (int, float) else _weak_dtype(v)


def _cast_operand(v: Any, dtype: np.dtype) -> ir.Value:
    if isinstance(v, Tensor):
        if v.pytype is int and dtype != INT64:
            _guard_weak_int(v, dtype)
        return astype(v, dtype).value
    value = v.value
    if isinstance(value, int) and not isinstance(value, bool) and dtype.kind == "i":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise Unsupported(f"Python int {value} does not fit {dtype}")
    with warnings_as("error"):
        # NumPy warns on every run of an overflowing cast (1e300 to float32);
        # compiled in as a constant, the cast would never warn again.
        try:
            array = np.asarray(value, dtype=dtype)
        except (Warning, OverflowError) as e:
            raise Unsupported(f"the constant {value!r} does not fit {dtype} ({e}): NumPy raises or warns, or, in a "
                              "comparison, compares it exactly (not compiled yet)") from None
    return emit.dense(array)


# Ufuncs ------------------------------------------------------------------------


def ufunc(uf: np.ufunc, *operands: Any) -> Any:
    """Apply a NumPy ufunc (one output) to front-end values."""
    if all(isinstance(o, Known) for o in operands):
        return fold(uf, *(o.value for o in operands))
    operands = tuple(array_operand(o) for o in operands)
    if uf not in UFUNC_PRIMITIVE:
        raise Unsupported(f"np.{uf.__name__} is not supported by the compiler yet")
    if all(_is_python_scalar(o) for o in operands):
        if any(isinstance(o, Tensor) and o.pytype is int for o in operands):
            return python_int_op(uf, *operands)
        return python_float_op(uf, *operands)
    try:
        loop = uf.resolve_dtypes(tuple(_weak_dtype(o) for o in operands) + (None,))
    except Exception as e:  # noqa: BLE001 - NumPy's type errors
        raise Unsupported(f"np.{uf.__name__}: {e}") from None
    in_dtypes = [check_dtype(d) for d in loop[: uf.nin]]
    out_dtype = check_dtype(loop[-1])
    values = [_cast_operand(o, d) for o, d in zip(operands, in_dtypes)]
    name = UFUNC_PRIMITIVE[uf]
    msg = get(name).operand_rule(*in_dtypes)
    if msg:
        raise Unsupported(f"np.{uf.__name__} on {in_dtypes[0]}: {msg}")
    if uf is np.power and in_dtypes[0].kind != "f":
        raise Unsupported("integer power is not supported by the compiler yet")
    if uf in (np.floor_divide, np.remainder) and in_dtypes[1].kind in "iu":
        _guard_int_division(uf, values, in_dtypes[1])
    result = build(name, values)
    assert np.dtype(out_dtype) == Tensor(result, np.ndarray).dtype
    shape = Tensor(result, np.ndarray).shape
    return Tensor(result, result_pytype(shape, out_dtype))


# Operators on NumPy integer scalars: NumPy's scalar math warns where the result wraps.
SCALAR_MATH_OVERFLOWS = (np.add, np.subtract, np.multiply, np.negative)


def operator(uf: np.ufunc, *operands: Any) -> Any:
    """A Python operator (`a * b`, `-a`): the ufunc, except that on NumPy integer scalars
    (with Python scalars) NumPy's scalar math warns "overflow encountered in scalar multiply"
    where the result wraps, which the ufunc itself (also on 0-d arrays) does silently."""
    result = ufunc(uf, *operands)
    if (uf in SCALAR_MATH_OVERFLOWS and isinstance(result, Tensor) and issubclass(result.pytype, np.integer)
            and all(_is_scalar(o) for o in operands)):
        _guard_scalar_math(uf, [_cast_operand(o, result.dtype) for o in operands], result.dtype)
    return result


def _is_scalar(v: Any) -> bool:
    """A NumPy or Python scalar, not a (0-d) array."""
    return (v.pytype is not np.ndarray) if isinstance(v, Tensor) else not isinstance(v.value, np.ndarray)


def _guard_scalar_math(uf: np.ufunc, values: list[ir.Value], dtype: np.dtype) -> None:
    """Guard that `uf` on the int scalars `values` (of `dtype`) does not wrap.

    Below 64 bits the exact result is computed in int64; at 64 bits a float64
    estimate must stay clear of the limits (the interpreter answers near them)
    and an unsigned difference needs a >= b.
    """
    reason = f"{dtype} scalar {uf.__name__} does not overflow (NumPy warns)"
    if uf is np.negative:  # wraps for every nonzero unsigned value, and for a signed MIN
        bad = 0 if dtype.kind == "u" else np.iinfo(dtype).min
        ok = get("equal" if dtype.kind == "u" else "not_equal").build([values[0], emit.dense(np.asarray(bad, dtype))])
        guard(ok, "value", reason)
        return
    result = build(UFUNC_PRIMITIVE[uf], values)
    if dtype.itemsize < 8:
        exact = build(UFUNC_PRIMITIVE[uf], [get("astype").build([v], dtype="int64") for v in values])
        guard(get("equal").build([exact, get("astype").build([result], dtype="int64")]), "value", reason)
        return
    if dtype.kind == "u" and uf is np.subtract:
        guard(get("greater_equal").build(values), "value", reason)
        return
    estimate = build(UFUNC_PRIMITIVE[uf], [get("astype").build([v], dtype="float64") for v in values])
    if dtype.kind == "u":
        ok = get("less").build([estimate, emit.dense(np.asarray(2.0 ** 63))])
    else:
        ok = get("less").build([get("absolute").build([estimate]), emit.dense(np.asarray(_INT_LIMIT))])
    guard(ok, "value", reason)


def _guard_int_division(uf: np.ufunc, values: list[ir.Value], dtype: np.dtype) -> None:
    """Guard the integer divisions NumPy warns about: by zero, and (floor_divide only) MIN // -1.

    NumPy returns 0 for both, and MIN for MIN // -1 ("overflow encountered in
    floor_divide"); `%` by -1 is 0 without a warning. The primitives compute
    those values without trapping (elementwise.py `_safe_divisor`), so a guard
    only has to send the call to the interpreter, which warns.
    """
    def every(name: str, operand: ir.Value, value: int) -> ir.Value:
        return get(name).build([operand, emit.dense(np.asarray(value, dtype))])

    guard(reduce_all(every("not_equal", values[1], 0)), "value", "integer division by zero (NumPy warns)")
    if uf is np.floor_divide and dtype.kind == "i":
        overflows = get("logical_and").build([every("equal", values[0], np.iinfo(dtype).min),
                                               every("equal", values[1], -1)])
        no_overflow = get("logical_not").build([overflows])
        guard(reduce_all(no_overflow), "value", f"integer overflow in {dtype} floor_divide: MIN // -1 (NumPy warns)")


PYTHON_FLOAT_OPS = {np.add, np.subtract, np.multiply, np.true_divide, np.negative, np.less, np.less_equal,
                    np.greater, np.greater_equal, np.equal, np.not_equal, np.power}


def python_float_op(uf: np.ufunc, *operands: Any) -> Tensor:
    """Python float arithmetic on computed floats: IEEE double, as CPython computes it."""
    if uf not in PYTHON_FLOAT_OPS or any(
        isinstance(o, Tensor) and o.pytype is not float or isinstance(o, Known) and type(o.value) is bool
        for o in operands
    ):
        raise Unsupported(f"Python scalar operation {uf.__name__} on computed values is not supported yet")
    values = [_cast_operand(o, FLOAT64) if isinstance(o, Tensor) else _cast_operand(Known(float(o.value)), FLOAT64)
              for o in operands]
    if uf is np.true_divide:
        nonzero = get("not_equal").build([values[1], emit.dense(np.zeros((), FLOAT64))])
        guard(nonzero, "value", "float division by zero (Python raises ZeroDivisionError)")
    result = build(UFUNC_PRIMITIVE[uf], values)
    if uf is np.power:
        _guard_python_pow(*values, result)
    return Tensor(result, bool if uf.nout == 1 and Tensor(result, float).dtype == BOOL else float)


def _guard_python_pow(base: ir.Value, exponent: ir.Value, result: ir.Value) -> None:
    """Where CPython's float ** float raises or leaves the reals: 0.0 ** -1 (ZeroDivisionError),
    (-8.0) ** 0.5 (a complex), overflow (OverflowError); non-finite operands are not compiled."""
    def f(value: float) -> ir.Value:
        return emit.dense(np.asarray(value, FLOAT64))

    def isfinite(v: ir.Value) -> ir.Value:  # v - v is NaN exactly for inf and NaN
        return get("equal").build([get("subtract").build([v, v]), f(0.0)])

    finite = get("logical_and").build([isfinite(result), get("logical_and").build([isfinite(base), isfinite(exponent)])])
    real = get("logical_or").build([get("greater").build([base, f(0.0)]),
                                    get("equal").build([exponent, get("floor").build([exponent])])])
    defined = get("logical_or").build([get("not_equal").build([base, f(0.0)]),
                                       get("greater_equal").build([exponent, f(0.0)])])
    ok = get("logical_and").build([finite, get("logical_and").build([real, defined])])
    guard(ok, "value", "Python float ** stays finite and real (else CPython raises or returns a complex)")


PYTHON_INT_OPS = {np.add, np.subtract, np.multiply, np.floor_divide, np.remainder, np.negative, np.less,
                  np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal}
INT64 = np.dtype(np.int64)
# Python ints are unbounded; computed ones are int64 values under guards. Results this far
# from int64's limits are computed exactly (a float estimate bounds them), and ints this
# small convert to float64 exactly (2**53).
_INT_LIMIT, _EXACT_FLOAT_INT = 2.0 ** 62, 2 ** 53


def python_int_op(uf: np.ufunc, *operands: Any) -> Tensor:
    """Python arithmetic with computed ints (int64 under guards where Python's ints would grow).

    With a float operand the int converts to float64 (correctly rounded, as CPython's
    int-to-float), except that comparisons, exact in Python, need |int| <= 2**53. int / int
    is float division of ints up to 2**53 (CPython's exact algorithm agrees there)."""
    if any(isinstance(o, Known) and type(o.value) is bool or isinstance(o, Tensor) and o.pytype is bool
           for o in operands):
        raise Unsupported(f"Python {uf.__name__} of a bool and a computed int is not supported yet")
    floats = any(isinstance(o, Tensor) and o.pytype is float or isinstance(o, Known) and type(o.value) is float
                 for o in operands)
    comparison = uf in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
    if uf is np.true_divide or floats:
        for o in operands:
            if isinstance(o, Tensor) and o.pytype is int and (comparison or uf is np.true_divide):
                _guard_int_magnitude(o, _EXACT_FLOAT_INT, "converts to float exactly")
        return python_float_op(uf, *(astype(o, FLOAT64, float) if isinstance(o, Tensor) and o.pytype is int else
                                     Known(float(o.value)) if isinstance(o, Known) else o for o in operands))
    if uf not in PYTHON_INT_OPS:
        raise Unsupported(f"Python int operation {uf.__name__} on computed values is not supported yet")
    values = [_cast_operand(o, INT64) for o in operands]
    bounds = _int_bounds(uf, operands)
    if bounds is not None:
        result = build(UFUNC_PRIMITIVE[uf], values)
        return Tensor(result, bool) if comparison else BoundedInt(result, int, lower=bounds[0], upper=bounds[1] + 1)
    if uf in (np.floor_divide, np.remainder):
        # Python raises ZeroDivisionError, and MIN // -1 grows past int64: the interpreter answers.
        _guard_int_division(uf, values, INT64)
    elif uf in (np.add, np.subtract, np.multiply):
        estimate = build(UFUNC_PRIMITIVE[uf], [get("astype").build([v], dtype="float64") for v in values])
        small = get("less").build([get("absolute").build([estimate]), emit.dense(np.asarray(_INT_LIMIT))])
        guard(small, "value", f"Python int {uf.__name__} stays within int64 (Python's ints grow past it)")
    result = build(UFUNC_PRIMITIVE[uf], values)
    return Tensor(result, bool if comparison else int)


def _int_bounds(uf: np.ufunc, operands: Sequence[Any]) -> tuple[int, int] | None:
    """The smallest and largest result of `uf` on ints of known ranges, if it cannot overflow or raise."""
    ranges = []
    for o in operands:
        if isinstance(o, BoundedInt):
            ranges.append((o.lower, o.upper - 1))
        elif isinstance(o, Known) and type(o.value) is int:
            ranges.append((o.value, o.value))
        else:
            return None
    if uf is np.negative:
        (lo, hi), = ranges
        return -hi, -lo
    if uf in (np.floor_divide, np.remainder):
        (lo, hi), (d, d_hi) = ranges
        if d != d_hi or d <= 0:
            return None
        return (lo // d, hi // d) if uf is np.floor_divide else (0, d - 1) if hi - lo >= d else \
            (min(lo % d, hi % d), max(lo % d, hi % d))
    if uf not in (np.add, np.subtract, np.multiply, np.less, np.less_equal, np.greater, np.greater_equal,
                  np.equal, np.not_equal):
        return None
    (a_lo, a_hi), (b_lo, b_hi) = ranges
    corners = [(uf if uf in (np.add, np.subtract, np.multiply) else np.subtract)(int(a), int(b))
               for a in (a_lo, a_hi) for b in (b_lo, b_hi)]
    lo, hi = int(min(corners)), int(max(corners))
    return (lo, hi) if abs(lo) < _INT_LIMIT and abs(hi) < _INT_LIMIT else None


def _guard_weak_int(t: Tensor, dtype: np.dtype) -> None:
    """A computed Python int meeting an array of `dtype` is converted as NumPy converts a weak int:
    NumPy raises OverflowError for one out of an int dtype's range; float dtypes are exact below 2**mantissa."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if isinstance(t, BoundedInt) and info.min <= t.lower and t.upper - 1 <= info.max:
            return
        value = t.value
        within = get("logical_and").build([
            get("greater_equal").build([value, emit.dense(np.asarray(max(info.min, -2 ** 63), INT64))]),
            get("less_equal").build([value, emit.dense(np.asarray(min(info.max, 2 ** 63 - 1), INT64))])])
        guard(within, "value", f"the Python int fits {dtype} (NumPy raises OverflowError)")
    elif dtype.kind == "f":
        _guard_int_magnitude(t, 2 ** (np.finfo(dtype).nmant + 1), f"converts to {dtype} exactly")
    elif dtype != BOOL:
        raise Unsupported(f"a computed Python int with a {dtype} array is not supported yet")


def _guard_int_magnitude(t: Tensor, limit: int, what: str) -> None:
    value = astype(t, INT64).value
    bound = emit.dense(np.asarray(limit, INT64))
    within = get("logical_and").build([get("less_equal").build([value, bound]),
                                       get("greater_equal").build([value, get("negative").build([bound])])])
    guard(within, "value", f"the Python int {what} (|n| <= {limit})")


def as_numpy_scalar(v: Any) -> Any:
    """A Python scalar as NumPy takes it when no array decides the dtype: float64, int64 or bool_."""
    if isinstance(v, Tensor):
        return astype(v, np.dtype(_DEFAULT_TYPES[v.pytype]), _DEFAULT_TYPES[v.pytype])
    if type(v.value) is int and not -2 ** 63 <= v.value < 2 ** 63:
        raise Unsupported(f"the Python int {v.value} does not fit NumPy's int64")
    return Known(_DEFAULT_TYPES[type(v.value)](v.value))


_DEFAULT_TYPES = {float: np.float64, int: np.int64, bool: np.bool_}


def _is_python_scalar(v: Any) -> bool:
    if isinstance(v, Known):
        return type(v.value) in (int, float, bool)
    return isinstance(v, Tensor) and v.is_python_scalar


def build(name: str, operands: list[ir.Value], **params: Any) -> ir.Value:
    """Emit primitive `name`; what NumPy would reject (shapes, axes) is unsupported here."""
    try:
        result = get(name).build(operands, **params)
    except (ValueError, TypeError) as e:
        raise Unsupported(f"np.{name}: {e} (NumPy raises)") from None
    if name in BROADCASTING:
        _guard_dims_agree(operands, name)
    return result


BROADCASTING = set(UFUNC_PRIMITIVE.values()) | {"where"}


def _guard_dims_agree(operands: list[ir.Value], name: str) -> None:
    """Dims of varying size that broadcasting pairs must be equal at run time (NumPy raises otherwise)."""
    shapes = [Tensor(v, np.ndarray).shape for v in operands]
    rank = max(map(len, shapes), default=0)
    pairs = []
    for pos in range(rank):
        dims = [(v, len(s) - rank + pos, s[len(s) - rank + pos]) for v, s in zip(operands, shapes)
                if len(s) - rank + pos >= 0 and s[len(s) - rank + pos] != 1]
        dynamic = [(v, i) for v, i, d in dims if d is None]
        if not dynamic or len(dims) < 2:
            continue
        first, i0 = dynamic[0]
        pairs += [((first, i0), (v, i, d)) for v, i, d in dims if not (v is first and i == i0)]
    guard_same_sizes(pairs, f"np.{name}")


def guard_same_sizes(pairs: list, what: str) -> None:
    """Guard that each ((tensor, dim), (tensor, dim, static size or None)) pair has equal sizes."""
    checks = [emit.dims_equal(a, i, b, j) if d is None else emit.dim_is(a, i, d) for (a, i), (b, j, d) in pairs]
    if not checks:
        return
    flag = checks[0]
    for c in checks[1:]:
        flag = arith.andi(flag, c)
    guard(flag, "shape", f"{what}: sizes that vary between calls agree")


def reduce_all(flags: ir.Value) -> ir.Value:
    """A 0-d bool tensor: every element of the bool tensor `flags` is true."""
    t = Tensor(flags, np.ndarray)
    return get("min").build([flags], axes=tuple(range(t.ndim)), keepdims=False) if t.ndim else flags


@dataclass(frozen=True)
class RegionGuard:
    """A guard made in a region that cannot deopt from inside: a side of a branch on a computed value,
    or a real loop's body (`region_guards`)."""

    cond: ir.Value
    kind: str
    reason: str
    site: str


# The region being built, and the guards made in it: (its block, [RegionGuard]).
_REGION: ContextVar[tuple[ir.Block, list] | None] = ContextVar("guard_region", default=None)


@contextmanager
def region_guards(block: ir.Block | None) -> Iterator[list[RegionGuard]]:
    """Collect the guards made in `block`, a side of a branch or a loop body (None: one where no
    guard can go).

    A guard cannot deopt from inside a region: a side yields its condition and the guard goes after
    the branch, on "the side did not run, or it held"; a loop carries "it held in every iteration so
    far" and the guard goes after the loop. Compiled code goes on computing after an assumption
    failed (the call's results are then dropped, the interpreter re-runs it): the primitives'
    lowerings clamp what they index with, so that is memory safe.
    """
    guards: list[RegionGuard] = []
    token = _REGION.set(None if block is None else (block, guards))
    try:
        yield guards
    finally:
        _REGION.reset(token)


def at_function_level() -> bool:
    """Whether ops built here run once per call: not inside a real loop or branch."""
    owner = ir.InsertionPoint.current.block.owner
    return owner is None or owner.operation.name == "func.func"


def enclosing_regions() -> list[str]:
    """The names of the ops whose regions hold ops built here (scf.for, scf.if, ...), innermost first,
    up to the function."""
    names = []
    op = ir.InsertionPoint.current.block.owner
    op = op.operation if op is not None else None
    while op is not None and op.name != "func.func":
        names.append(op.name)
        op = op.parent
    return names


def in_loop() -> bool:
    """Whether ops built here are inside a real loop's body (scf.for, scf.while): they may run many times."""
    return any(name in ("scf.for", "scf.while") for name in enclosing_regions())


def can_guard() -> bool:
    """Whether a guard may be made here: at function level, or directly in a region that collects
    guards (`region_guards`)."""
    region = _REGION.get()
    return at_function_level() or region is not None and region[0] == ir.InsertionPoint.current.block


def resolve_float_or_float64(v: FloatOrFloat64, what: str) -> Tensor:
    """`v` where its type matters: a NumPy float64, under a guard (a Python float deopts)."""
    guard(v.is_numpy.value, "value", f"{what} is a NumPy float64 here (a Python float on some paths before)")
    return v.number  # (a FloatOrFloat64's type is never a constant: values.float_or_float64)


def guard(cond: ir.Value, kind: str, reason: str, site: str | None = None) -> None:
    """An in-graph `pyfront.guard` at the current location, or after the branch or loop this is in."""
    if not can_guard():
        raise Unsupported(f"a {kind} assumption inside a while loop on a computed condition is not supported yet")
    site = site or _site()
    if at_function_level():
        GUARD.build([cond], [], kind=kind, reason=reason, site=site)
    else:
        if not is_tensor(cond.type):
            cond = tensor.from_elements(tensor_type((), BOOL), [cond])
        _REGION.get()[1].append(RegionGuard(cond, kind, reason, site))


def truth(v: Any) -> ir.Value:
    """`bool(v)` of a computed value as a 0-d tensor<i1> (NumPy: only single-element arrays)."""
    if is_sequence(v):  # a list's truth is whether it is empty, not its array's
        raise Unsupported("the truth value of a tuple or list built here is not supported yet")
    t = to_tensor(v)
    if None in t.shape or int(np.prod(t.shape, dtype=np.int64)) != 1:
        raise Unsupported("the truth value of an array with more than one element is ambiguous (NumPy raises)")
    flag = astype(t, BOOL)
    return flag.value if t.ndim == 0 else build("reshape", [flag.value], shape=())


def logical_not(flag: ir.Value) -> ir.Value:
    return get("logical_not").build([flag])


def _site() -> str:
    loc = ir.Location.current
    return str(loc).removeprefix("loc(").removesuffix(")").replace('"', "")


def power(base: Any, exponent: Any) -> Any:
    """`base ** exponent` for arrays, with NumPy's fast paths for scalar exponents."""
    if isinstance(base, Tensor) and base.pytype is np.ndarray and isinstance(exponent, Known):
        e = exponent.value
        if type(e) in (int, float) and e == 2:
            return ufunc(np.square, base)
    return ufunc(np.power, base, exponent)


def where(cond: Any, x: Any, y: Any) -> Any:
    if all(isinstance(o, Known) for o in (cond, x, y)):
        return fold(np.where, cond.value, x.value, y.value)
    cond, x, y = (array_operand(o) for o in (cond, x, y))
    c = astype(to_tensor(cond) if not isinstance(cond, Known) else constant(cond.value), BOOL)
    try:
        dtype = check_dtype(np.result_type(*(_promotion_operand(o) for o in (x, y))))
    except TypeError as e:
        raise Unsupported(f"np.where: {e}") from None
    xs = [_cast_operand(o, dtype) for o in (x, y)]
    result = build("where", [c.value] + xs)
    return Tensor(result, np.ndarray)


def clip(a: Any, lo: Any, hi: Any) -> Any:
    if any(isinstance(b, Known) and b.value is None for b in (lo, hi)):
        out = a
        if not (isinstance(lo, Known) and lo.value is None):
            out = ufunc(np.maximum, out, lo)
        if not (isinstance(hi, Known) and hi.value is None):
            out = ufunc(np.minimum, out, hi)
        return out
    if all(isinstance(o, Known) for o in (a, lo, hi)):
        return fold(np.clip, a.value, lo.value, hi.value)
    if all(_zero_d(b) for b in (lo, hi)):
        # NumPy's clip loop for scalar bounds keeps x where it equals a bound (np.clip(-0.0, 0.0,
        # 1.0) is -0.0); np.maximum and np.minimum, like its loop for array bounds, give the bound.
        return _bounded_keeping_ties(_bounded_keeping_ties(a, lo, np.maximum), hi, np.minimum)
    return ufunc(np.minimum, ufunc(np.maximum, a, lo), hi)


def _zero_d(v: Any) -> bool:
    return np.ndim(v.value) == 0 if isinstance(v, Known) else to_tensor(v).ndim == 0


def _bounded_keeping_ties(x: Any, bound: Any, extremum: np.ufunc) -> Any:
    """`extremum(x, bound)`, but x itself where x == bound (the sign of a zero; NaNs still propagate)."""
    out = ufunc(extremum, x, bound)
    if not isinstance(out, Tensor) or out.dtype.kind != "f":
        return out
    return Tensor(where(ufunc(np.equal, x, bound), x, out).value, out.pytype)


# Contractions ------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    if isinstance(a, Known) and isinstance(b, Known):
        return fold(np.matmul, a.value, b.value)
    a, b = array_operand(a), array_operand(b)
    try:
        loop = np.matmul.resolve_dtypes((_weak_dtype(a), _weak_dtype(b), None))
    except Exception as e:  # noqa: BLE001
        raise Unsupported(f"np.matmul: {e}") from None
    ta, tb = (Tensor(_cast_operand(o, check_dtype(d)), np.ndarray) for o, d in zip((a, b), loop[:2]))
    if ta.ndim == 0 or tb.ndim == 0:
        raise Unsupported("matmul: Input operand does not have enough dimensions")
    try:
        result = get("matmul").build([ta.value, tb.value])
    except (ValueError, TypeError) as e:
        raise Unsupported(f"np.matmul: {e}") from None
    ka, kb = ta.ndim - 1, tb.ndim - 2 if tb.ndim > 1 else 0
    if None in (ta.shape[ka], tb.shape[kb]):
        if ta.shape[ka] is None:
            guard_same_sizes([((ta.value, ka), (tb.value, kb, tb.shape[kb]))], "np.matmul")
        else:
            guard_same_sizes([((tb.value, kb), (ta.value, ka, ta.shape[ka]))], "np.matmul")
    out = Tensor(result, np.ndarray)
    return Tensor(result, result_pytype(out.shape, out.dtype))


def dot(a: Any, b: Any) -> Any:
    nd = [o.ndim if isinstance(o, Tensor) else np.ndim(o.value) for o in (a, b)]
    if 0 in nd:
        return ufunc(np.multiply, a, b)
    if max(nd) > 2:
        raise Unsupported("np.dot of arrays with more than 2 dimensions is not supported yet")
    return matmul(a, b)


# Reductions --------------------------------------------------------------------


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if type(a) is not int and not isinstance(a, np.integer):
            raise Unsupported(f"axis must be an integer, got {a!r}")
        if not -ndim <= a < max(ndim, 1):
            raise Unsupported(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise Unsupported("duplicate value in 'axis'")
    return tuple(sorted(out))


def reduce(kind: str, x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """np.sum/prod/max/min/mean/argmax/argmin with NumPy's accumulation and result types."""
    fn = getattr(np, kind)
    if isinstance(axis, list):
        raise Unsupported(f"{kind} with a list as axis (NumPy raises TypeError)")
    kwargs = {} if dtype is None else {"dtype": dtype}
    if kind in ("argmax", "argmin") and dtype is not None:
        raise Unsupported(f"{kind} has no dtype argument")
    if isinstance(x, Known):
        return fold(fn, x.value, axis=axis, keepdims=keepdims, **kwargs)
    t = to_tensor(x)
    if kind in ("argmax", "argmin") and axis is None:
        if keepdims:
            raise Unsupported(f"{kind} with axis=None and keepdims=True is not supported yet")
        t = reshape(t, (-1,))
        axis = 0
    axes = normalize_axes(axis, t.ndim)
    proto = np.ones((1,) * t.ndim, dtype=t.dtype) if t.pytype is np.ndarray else t.dtype.type(1)
    with warnings_as("ignore"):
        sample = fn(proto, axis=axis, keepdims=keepdims, **kwargs)
    out_dtype = check_dtype(np.asarray(sample).dtype)
    pytype = np.ndarray if isinstance(sample, np.ndarray) else type(sample)
    if kind in ("argmax", "argmin"):
        operand = t
    elif kind == "mean":
        operand = astype(t, out_dtype if out_dtype.kind == "f" else FLOAT64)
    else:
        operand = astype(t, out_dtype)
    if kind in ("max", "min", "argmax", "argmin") and any(t.shape[a] == 0 for a in axes):
        raise Unsupported(f"{kind} of an empty axis raises ValueError")
    refused = get(kind).operand_rule and get(kind).operand_rule(operand.dtype, axes=axes, keepdims=keepdims)
    if refused:
        raise Unsupported(f"np.{kind} of {operand.dtype}: {refused}")
    result = get(kind).build([operand.value], axes=axes, keepdims=bool(keepdims))
    if kind in ("max", "min") and operand.dtype.kind == "f":
        # Where a slice's extreme is zero and it holds both +0.0 and -0.0, NumPy's sign depends on order.
        agree = get("zero_signs_agree").build([operand.value], kind=kind, axes=axes)
        if can_guard():
            guard(agree, "value", f"{kind} over a slice holding both +0.0 and -0.0: NumPy's choice depends on order")
        else:
            result = _nan_unless(agree, result)
    return astype(Tensor(result, pytype), out_dtype, pytype)


def _nan_unless(ok: ir.Value, value: ir.Value) -> ir.Value:
    """`value` where the 0-d `ok` holds, NaN where not, made by an IEEE invalid operation (0 / 0).

    Inside loops and branches, where guards cannot go yet, guard-fp-events then
    checks the NaN like any event's and carries the check out of the region: the
    call deopts before the value could be seen. `value - 0/1` is `value` bit for
    bit (-0.0 - +0.0 is -0.0).
    """
    dtype = Tensor(value, np.ndarray).dtype
    zero_or_nan = get("true_divide").build([emit.dense(np.zeros((), dtype)), astype(Tensor(ok, np.ndarray), dtype).value])
    return get("subtract").build([value, zero_or_nan])


# Shapes and views ----------------------------------------------------------------


def view_of(base: Tensor, result: ir.Value, replay, redo=None, write_back=None) -> Tensor:
    """A result that NumPy returns as a view of `base` (for reconstructing aliasing on the host).

    `redo(b)` applies the same view operation to another value of `base`, and
    `write_back(b, v)` is `b` with the view's elements replaced by `v` (values.View:
    writes through views and into viewed arrays, pyfront/buffers.py); None where unknown."""
    if base.view is None:
        root, derive, back = base, redo, write_back
    else:
        root, outer = base.view.base, base.view
        derive = back = None
        if redo is not None and outer.derive is not None:
            derive = lambda r: redo(outer.derive(r))  # noqa: E731
            if write_back is not None and outer.write_back is not None:
                back = lambda r, v: outer.write_back(r, write_back(outer.derive(r), v))  # noqa: E731
    if base.view is not None and replay is not None:
        chain = base.view.replay  # None: a view of a row picked by a computed index
        replay = None if chain is None else (lambda a, inner=replay: inner(chain(a)))
    return Tensor(result, np.ndarray, View(root, replay, derive, back, base.view and base.view.host))


def _reshaped(shape):
    """`write_back` of a view that only reshapes: the view's elements, in C order, are the base's."""
    return lambda b, v: Tensor(_reshape_value(v.value, b.shape), np.ndarray)


def reshape(x: Any, shape: Sequence[int]) -> Tensor:
    t = to_tensor(x)
    shape = tuple(int(d) for d in shape)
    if shape.count(-1) > 1:
        raise Unsupported("can only specify one unknown dimension")
    if None in t.shape:
        if -1 not in shape:
            raise Unsupported("reshaping an array whose shape varies needs -1 for the varying part")
        result = build("reshape", [t.value], shape=shape)
    else:
        size = int(np.prod(t.shape, dtype=np.int64))
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            if known == 0 or size % known:
                raise Unsupported(f"cannot reshape array of size {size} into shape {shape}")
            shape = tuple(size // known if d == -1 else d for d in shape)
        if any(d < 0 for d in shape) or int(np.prod(shape, dtype=np.int64)) != size:
            raise Unsupported(f"cannot reshape array of size {size} into shape {shape}")
        result = build("reshape", [t.value], shape=shape)
    if t.pytype is not np.ndarray:  # np.float32(1).reshape(()) returns a 0-d array copy
        return Tensor(result, np.ndarray)
    if t.view is not None or layout.may_be_reordered(t.value):  # NumPy may copy: writes are not followed
        if t.has_identity:
            return view_of(t, result, lambda a: a.reshape(shape))
        # t is the call's own array: while writes into either are refused, whether NumPy copied it
        # shows only in the result's layout, which layout.check_results judges on the result's own
        # value, the one the host gets (not a replay on t, which NumPy lays out in another order).
        return Tensor(result, np.ndarray, View(t, lambda a: a, host=Tensor(result, np.ndarray)))
    return view_of(t, result, lambda a: a.reshape(shape), lambda b: reshape(b, shape), _reshaped(shape))


def transpose(x: Any, axes: Sequence[int] | None = None) -> Tensor:
    t = to_tensor(x)
    perm = tuple(range(t.ndim))[::-1] if axes is None else tuple(normalize_axes_ordered(axes, t.ndim))
    result = get("transpose").build([t.value], perm=perm)
    inverse = tuple(int(i) for i in np.argsort(perm))
    return view_of(t, result, lambda a: a.transpose(perm), lambda b: transpose(b, perm),
                   lambda b, v: transpose(v, inverse))


def normalize_axes_ordered(axes: Sequence[int], ndim: int) -> list[int]:
    out = [int(a) % ndim if -ndim <= a < ndim else None for a in axes]
    if None in out or sorted(out) != list(range(ndim)):
        raise Unsupported(f"axes {tuple(axes)} don't match array of dimension {ndim}")
    return out


def expand_dims(x: Any, axis: Any) -> Tensor:
    t = to_tensor(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = t.ndim + len(axes)
    axes = normalize_axes(axes, nd)
    shape, it = [], iter(t.shape)
    for i in range(nd):
        shape.append(1 if i in axes else next(it))
    result = _reshape_value(t.value, tuple(shape))
    return view_of(t, result, lambda a: np.expand_dims(a, axes), lambda b: expand_dims(b, axes), _reshaped(shape))


def squeeze(x: Any, axis: Any = None) -> Tensor:
    t = to_tensor(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(t.shape) if d == 1)
    else:
        axes = normalize_axes(axis, t.ndim)
        if any(t.shape[a] != 1 for a in axes):
            raise Unsupported("cannot select an axis to squeeze out which has size not equal to one")
    shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
    result = _reshape_value(t.value, shape)
    return view_of(t, result, lambda a: np.squeeze(a, axes), lambda b: squeeze(b, axes), _reshaped(shape))


def broadcast_to(x: Any, shape: Sequence[int]) -> Tensor:
    t = to_tensor(x)
    shape = tuple(int(d) for d in shape)
    try:
        result = build("broadcast_to", [t.value], shape=shape)
    except ValueError as e:
        raise Unsupported(str(e)) from None
    # NumPy's broadcast views are read-only: writes through them raise (no write_back).
    return view_of(t, result, lambda a: np.broadcast_to(a, shape), lambda b: broadcast_to(b, shape))


def concatenate(items: Sequence[Any], axis: int = 0) -> Tensor:
    ts = [to_tensor(i) for i in items]
    if not ts:
        raise Unsupported("need at least one array to concatenate")
    if any(t.ndim == 0 for t in ts):
        raise Unsupported("zero-dimensional arrays cannot be concatenated")
    dtype = check_dtype(np.result_type(*(t.dtype for t in ts)))
    (ax,) = normalize_axes(axis, ts[0].ndim)
    values = [astype(t, dtype).value for t in ts]
    result = build("concatenate", values, axis=ax)
    pairs = []
    for d in range(ts[0].ndim):
        if d == ax:
            continue
        dynamic = [(v, t) for v, t in zip(values, ts) if t.shape[d] is None]
        if dynamic:
            first = dynamic[0][0]
            pairs += [((first, d), (v, d, t.shape[d])) for v, t in zip(values, ts) if v is not first]
    guard_same_sizes(pairs, "np.concatenate")
    return Tensor(result, np.ndarray)


def stack(items: Sequence[Any], axis: int = 0) -> Tensor:
    ts = [to_tensor(i) for i in items]
    if not ts or any(t.shape != ts[0].shape for t in ts):
        raise Unsupported("all input arrays must have the same shape")
    (ax,) = normalize_axes(axis, ts[0].ndim + 1)
    return concatenate([expand_dims(t, ax) for t in ts], axis=ax)


def _reshape_value(value: ir.Value, shape: tuple[int | None, ...]) -> ir.Value:
    """Reshape to `shape`, whose one dynamic dim (if any) is the rest of the elements."""
    if Tensor(value, np.ndarray).shape == shape:
        return value
    if shape.count(None) > 1:
        raise Unsupported("reshaping to more than one dimension of varying size is not supported yet")
    return build("reshape", [value], shape=tuple(-1 if d is None else d for d in shape))


def shape(t: Tensor) -> Known | Seq:
    """`t.shape`: a tuple of ints, those of dims that vary between calls computed (Python ints)."""
    if None not in t.shape:
        return Known(t.shape)
    return Seq(tuple(Known(d) if d is not None else Tensor(build("dim", [t.value], axis=i), int)
                     for i, d in enumerate(t.shape)), tuple)


def static_shape(t: Tensor, what: str) -> tuple[int, ...]:
    """The shape of `t`, which `what` needs to be known when compiling."""
    if None in t.shape:
        raise Unsupported(f"{what} of an array whose shape varies between calls is not supported yet")
    return t.shape


def full(shape: Sequence[int], value: Any, dtype: np.dtype) -> Tensor:
    if None in tuple(shape):
        raise Unsupported("creating an array whose shape varies between calls is not supported yet")
    dtype = check_dtype(dtype)
    return Tensor(emit.splat(np.asarray(value, dtype=dtype)[()], tuple(shape), dtype), np.ndarray)


def scalar_type(t: Tensor) -> ir.Type:
    return tensor_type((), t.dtype)
