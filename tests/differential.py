"""Differential testing: a compiled function must behave exactly like the interpreter.

`check(fn, calls)` runs every call twice, on deep copies of its arguments:
once through plain CPython and once through `pyfront.compile`, and compares
returned values (Python type, dtype, shape, values; floats to a few ulps, but
the sign of a zero exactly), raised exceptions,
printed output, the warnings raised (category and message, each recorded
with the "always" filter, e.g. NumPy's "RuntimeWarning: overflow encountered
in exp"; `compare_warnings=False` skips that) and the arguments' state
afterwards. It returns the compiled function so tests can assert on
`pyfront.explain`.
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

# float32 transcendentals in IREE (e.g. atan2) differ from libm by up to ~30 ulp.
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
ATOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def assert_same(expected: Any, got: Any, where: str = "result") -> None:
    assert type(got) is type(expected), f"{where}: type {type(got).__name__} != {type(expected).__name__}"
    if isinstance(expected, np.ndarray):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
        # The memory layout is observable (.flags, .strides, .T, reshape views).
        for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
            assert got.flags[flag] == expected.flags[flag], (
                f"{where}: {flag} {got.flags[flag]} != {expected.flags[flag]} (strides {got.strides} "
                f"!= {expected.strides})")
        _assert_values(expected, got, where)
    elif isinstance(expected, np.generic):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
        _assert_values(np.asarray(expected), np.asarray(got), where)
    elif isinstance(expected, float):
        _assert_values(np.float64(expected), np.float64(got), where)
    elif isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), f"{where}: length {len(got)} != {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys(), f"{where}: keys differ"
        for k in expected:
            assert_same(expected[k], got[k], f"{where}[{k!r}]")
    elif hasattr(expected, "__dict__") and not isinstance(expected, type):
        assert_same(vars(expected), vars(got), f"{where}.__dict__")
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def _assert_values(expected: np.ndarray, got: np.ndarray, where: str) -> None:
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(
            got, expected, rtol=RTOL[expected.dtype], atol=ATOL[expected.dtype], equal_nan=True, err_msg=where
        )
        # allclose takes -0.0 == 0.0, but NumPy's sign of zero is part of its answer (1 / x, copysign).
        zeros = (expected == 0) & (got == 0)
        np.testing.assert_array_equal(
            np.signbit(got[zeros]), np.signbit(expected[zeros]), err_msg=f"{where}: sign of zero"
        )
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


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


def check(fn: Callable, calls: Iterable[tuple], *, compare_warnings: bool = True,
          **options: Any) -> pyfront.CompiledFunction:
    """Compare `fn` compiled (with `options`, see pyfront.Config) and interpreted on each argument tuple."""
    options.setdefault("profile_calls", 1)
    compiled = pyfront.compile(fn, **options)
    for n, args in enumerate(calls):
        plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        expected, expected_error, expected_out, expected_warnings = _run(fn, plain_args)
        got, error, out, got_warnings = _run(compiled, compiled_args)
        assert out == expected_out, f"call {n}: printed {out!r}, expected {expected_out!r}"
        if compare_warnings:
            assert got_warnings == expected_warnings, f"call {n}: warned {got_warnings}, expected {expected_warnings}"
        if expected_error is not None or error is not None:
            assert type(error) is type(expected_error), f"call {n}: raised {error!r}, expected {expected_error!r}"
            assert str(error) == str(expected_error), f"call {n}: message {error} != {expected_error}"
        else:
            assert_same(expected, got, f"call {n} result")
            _assert_same_identities(expected, got, plain_args, compiled_args, f"call {n} result")
        assert_same(plain_args, compiled_args, f"call {n} arguments after the call")
    return compiled


def arrays(rng: np.random.Generator, dtype: Any, *shapes: tuple) -> list[np.ndarray]:
    """Random arrays of `dtype`: normal floats, small signed ints, or random bools."""
    dtype = np.dtype(dtype)
    out = []
    for shape in shapes:
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.random(shape) < 0.5)
        else:
            out.append(rng.integers(-9, 10, shape).astype(dtype))
    return out
