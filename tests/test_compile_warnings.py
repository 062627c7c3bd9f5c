"""Compiling must not change which warnings the user sees (pyfront/compile_warnings.py).

Under the "default" action CPython shows a warning once per code location;
a compile that reset the warning registries (catch_warnings) made the next
call show it again, and folding a constant cast at compile time showed the
compiler's own copy of NumPy's warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyfront

pytestmark = pytest.mark.iree


def folds_a_cast(x):
    return x + np.float32(1e300)


def folds_a_cast_of_a_variable(x):
    a = 1e300
    return x * np.float32(a)


def casts_an_operand(x):
    return (x * 1e300).astype(np.float32)


def _shown(fn, calls: int, action: str) -> list:
    x = np.ones(3, np.float32)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter(action)
        for _ in range(calls):
            fn(x)
    return [(w.category, str(w.message), w.filename, w.lineno) for w in shown]


@pytest.mark.parametrize("fn", [folds_a_cast, folds_a_cast_of_a_variable, casts_an_operand])
@pytest.mark.parametrize("action", ["default", "always"])
def test_compiling_shows_the_interpreters_warnings(fn, action):
    compiled = pyfront.compile(fn)
    want = _shown(fn, 5, action)
    assert want  # the case warns at all
    assert _shown(compiled, 5, action) == want
