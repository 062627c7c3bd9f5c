"""Relaxation: assumptions that keep failing are generalized instead of recompiled forever."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def scale(x, k, t):
    y = x * k + k * 2.0 - t / k
    if k > 1.5:
        return y, k
    return y * 2, k


def test_python_float_seen_with_several_values_becomes_a_runtime_operand():
    x = np.arange(3, dtype=np.float32)
    calls = [(x, k, 1.0) for k in (1.0, 2.0, 3.0, 0.5, 4.0, 0.0, 2.5)]
    compiled = check(scale, calls, profile_calls=2)
    report = pyfront.explain(compiled)
    # One variant serves every k; k == 0.0 raises ZeroDivisionError in the interpreter.
    assert report.compilations == 1 and report.compiled_calls == 4, str(report)
    assert "arg1: Python float value -> runtime operand" in str(report)


def type_changes(a):
    return a * 2 + 1


def test_argument_type_goes_int_float_array():
    calls = [(3,), (3,), (2.5,), (2.5,), (np.ones((4, 8)),), (np.ones((4, 8)),), (np.ones((3, 8)),)]
    compiled = check(type_changes, calls)
    assert pyfront.explain(compiled).compiled_calls >= 3
