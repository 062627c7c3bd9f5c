"""Profiled calls run an instrumented copy of the function (profiler.py); its frame
must show exactly the locals CPython shows: no hooks of the profiler among them."""

from __future__ import annotations

import numpy as np
import pytest

from differential import check

pytestmark = pytest.mark.iree


def names_after_branch(x):
    y = x * 2
    if y.sum() > 0:  # a profiled branch
        z = [v for v in y]  # a comprehension: its own scope
        return sorted(locals()), len(z)
    return sorted(locals()), 0


def names_by_dir_and_vars(x):
    y = np.tanh(x)
    return dir(), sorted(vars()), float(y.sum())


def make_closure():
    scale = 3.0

    def with_free_variable(x):
        return sorted(locals()), x * scale  # `scale` is a free variable: CPython shows it

    return with_free_variable


def local_values(x):
    y = x + 1
    return locals()


@pytest.mark.parametrize("fn", [names_after_branch, names_by_dir_and_vars, make_closure(), local_values])
def test_profiled_call_shows_the_same_locals(fn):
    x = np.arange(3.0)
    check(fn, [(x,), (x - 5,), (x,)], profile_calls=2)


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
