"""Differential testing: a compiled function must behave exactly like the interpreter.

`check(fn, calls)` runs every call twice, on deep copies of its arguments:
once through plain CPython and once through `pyfront.compile`, and compares
returned values (Python type, dtype, shape, values; floats to a few ulps, but
the sign of a zero exactly: `pyfront.runtime.verify.difference`, which the
JIT's verified calls use too), raised exceptions,
printed output, the warnings raised (category and message, each recorded
with the "always" filter, e.g. NumPy's "RuntimeWarning: overflow encountered
in exp"; `compare_warnings=False` skips that) and the arguments' state
afterwards. The JIT verifies the first call of each variant against the
interpreter itself (Config.verify) and returns the interpreter's answer on
that call, so `check` also asserts that no verified call disagreed (which
would be a compiler bug hidden from the comparison). It returns the compiled
function so tests can assert on `pyfront.explain`.
"""

from __future__ import annotations

import contextlib
import copy
import io
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import pyfront
from pyfront.runtime import verify


def assert_same(expected: Any, got: Any, where: str = "result", approximate: np.dtype | None = None) -> None:
    difference = verify.difference(expected, got, where, approximate)
    assert difference is None, difference


def assert_same_text(expected: str, got: str, compiled: pyfront.CompiledFunction, where: str) -> None:
    """Printed text equal to the interpreter's (floats that approximations computed to their tolerance)."""
    d = verify.text_difference(expected, got, _approximate_dtype(compiled))
    assert not d, f"{where}: {d}"


def _assert_same_identities(expected, got, plain_args, compiled_args, where: str) -> None:
    """A returned argument must be the caller's very object, as in the interpreter."""
    for i, (p, c) in enumerate(zip(plain_args, compiled_args)):
        if expected is p:
            assert got is c, f"{where}: should be argument {i} itself"
            return
    if isinstance(expected, (tuple, list)):
        for k, (e, g) in enumerate(zip(expected, got)):
            _assert_same_identities(e, g, plain_args, compiled_args, f"{where}[{k}]")


def _run(fn: Callable, args: tuple) -> tuple[Any, BaseException | None, str, list[tuple[type, str]]]:
    """(result, raised exception, printed text, warnings as (category, message)) of `fn(*args)`."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(out):
                result, error = fn(*args), None
        except Exception as e:  # noqa: BLE001 - compared below
            result, error = None, e
    return result, error, out.getvalue(), [(w.category, str(w.message)) for w in caught]


def _approximate_dtype(compiled: pyfront.CompiledFunction) -> np.dtype | None:
    """The narrowest approximations any variant of `compiled` computes with (verify.difference)."""
    dtypes = [v.approximate_dtype for v in pyfront.explain(compiled).variants if v.approximate_dtype is not None]
    return min(dtypes, key=lambda d: d.itemsize, default=None)


def check(fn: Callable, calls: Iterable[tuple], *, compare_warnings: bool = True,
          **options: Any) -> pyfront.CompiledFunction:
    """Compare `fn` compiled (with `options`, see pyfront.Config) and interpreted on each argument tuple."""
    options.setdefault("profile_calls", 1)
    compiled = pyfront.compile(fn, **options)
    for n, args in enumerate(calls):
        plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        expected, expected_error, expected_out, expected_warnings = _run(fn, plain_args)
        got, error, out, got_warnings = _run(compiled, compiled_args)
        assert_same_text(expected_out, out, compiled, f"call {n}")
        approximate = _approximate_dtype(compiled)
        if compare_warnings:
            assert got_warnings == expected_warnings, f"call {n}: warned {got_warnings}, expected {expected_warnings}"
        if expected_error is not None or error is not None:
            assert type(error) is type(expected_error), f"call {n}: raised {error!r}, expected {expected_error!r}"
            assert str(error) == str(expected_error), f"call {n}: message {error} != {expected_error}"
        if expected_error is None and error is None:
            assert_same(expected, got, f"call {n} result", approximate)
            _assert_same_identities(expected, got, plain_args, compiled_args, f"call {n} result")
        assert_same(plain_args, compiled_args, f"call {n} arguments after the call", approximate)
    failures = pyfront.explain(compiled).verify_failures
    assert not failures, f"compiled code disagreed with the interpreter on a verified call: {failures}"
    return compiled


def arrays(rng: np.random.Generator, dtype: Any, *shapes: tuple) -> list[np.ndarray]:
    """Random arrays of `dtype`: normal floats, small signed or unsigned ints, or random bools."""
    dtype = np.dtype(dtype)
    out = []
    for shape in shapes:
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.random(shape) < 0.5)
        elif dtype.kind == "u":
            out.append(rng.integers(0, 19, shape).astype(dtype))
        else:
            out.append(rng.integers(-9, 10, shape).astype(dtype))
    return out
