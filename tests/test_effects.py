"""Side effects in compiled code happen exactly once per call, in program order."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def log_steps(x):
    y = x * 2
    print("step", y, y.sum(), sep=" | ")
    z = np.tanh(y)
    print(z.dtype, z.shape, float(z.mean()), end="!\n")
    return z


def test_print_is_deferred_and_exact():
    x = np.linspace(-1, 1, 5)
    compiled = check(log_steps, [(x,), (x,), (x * 3,)])
    assert pyfront.explain(compiled).compiled_calls == 2


def print_then_fail(x):
    print("before", x.sum())
    if x.sum() > 0:
        return x
    return -x


def test_print_happens_once_when_a_guard_fails():
    # Profiled on positive sums only: the negative call deopts and re-runs in
    # the interpreter, which must be the only one to print.
    pos, neg = np.ones(3), -np.ones(3)
    compiled = check(print_then_fail, [(pos,), (pos,), (neg,), (pos,)])
    assert pyfront.explain(compiled).deopts == 1


class Counter:
    def __init__(self):
        self.total = np.zeros(2)

    def add(self, x):
        print("old", self.total)
        self.total = self.total + x
        print("new", self.total)
        return self.total


def add(counter, x):
    return counter.add(x)


def test_prints_see_state_in_program_order():
    x = np.array([1.0, 2.0])
    counter = Counter()
    compiled = check(add, [(counter, x)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2
