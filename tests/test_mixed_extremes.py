"""`min`/`max` of two scalars of different Python types (containers._speculated_extreme): Python
returns one of the two objects, so the result's type depends on the data; compiled code returns
the one the profile saw, under a guard that the comparison still picks it."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree

G = np.full((3, 3), 10.0, np.float32)


def clipped(g, max_norm):
    norm = np.linalg.norm(g)  # an np.float32 here: g * scale is float32 or float64 by scale's type
    scale = min(1.0, max_norm / (norm + 1e-6))
    return g * scale, scale


def test_the_profiled_side_compiles_and_the_other_deopts():
    calls = [(G, 5.0)] * 3 + [(G * 0.01, 5.0)] + [(G, 5.0)] * 2  # the fourth returns the float 1.0
    report = pyfront.explain(check(clipped, calls))
    assert report.compiled_calls >= 1 and report.deopts == 1, str(report)
    assert "min() returned its second argument when profiled" in str(report), str(report)


def test_the_first_argument_side():
    report = pyfront.explain(check(clipped, [(G * 0.01, 5.0)] * 4))
    assert report.compiled_calls > 0, str(report)
