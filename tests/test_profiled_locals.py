"""A profiled call runs an instrumented copy (pyfront/profiler.py) whose hooks must not show.

The copy's hooks are free variables of its frame; `locals()`, `vars()`,
`dir()`, and `eval`/`exec` without explicit namespaces must see the
function's own names only, as in CPython.
"""

from __future__ import annotations

import numpy as np
import pytest

from differential import check

pytestmark = pytest.mark.iree


def introspects(x, k):
    y = x * k
    if y.sum() > 0:
        names = sorted(locals())
    else:
        names = []
    listed = dir()
    viewed = sorted(vars())
    evaluated = eval("sorted(locals())")
    exec("found = sorted(locals())")
    return y, names, listed, viewed, evaluated, locals() is locals(), vars(np.ma.core).get("__name__")


def test_locals_in_profiled_calls_are_the_functions_own():
    check(introspects, [(np.ones(3), 2.0), (np.ones(3), 3.0), (-np.ones(3), 2.0)], profile_calls=2)
