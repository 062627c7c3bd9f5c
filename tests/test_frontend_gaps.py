"""Front-end gaps closed after the containers work: NumPy scalars stored to Python state, and
NumPy scalars read from object attributes as run-time values. Differential against CPython."""

from __future__ import annotations

import numpy as np
from differential import check

import pyfront


class Counter:
    def __init__(self, t, beta):
        self.t = t
        self.beta = beta


def decay(c, x):
    c.t = c.t * c.beta  # 0-d result: NumPy returns a NumPy scalar
    return x / (1 - c.t)


def test_a_numpy_scalar_counter_stored_on_an_object_compiles_with_its_exact_type():
    for t in (np.float32(1.0), np.float64(1.0), np.ones((), np.float32)):
        x = np.arange(3, dtype=np.float32)
        c = Counter(t, 0.9)
        calls = [(c, x)] * 2 + [(Counter(np.float32(0.5), 0.9), x)] * 3
        compiled = check(decay, calls)
        assert pyfront.explain(compiled).compiled_calls > 0


def test_the_stored_numpy_scalar_is_a_fresh_object_per_call_and_state_carries_across_calls():
    compiled = pyfront.compile(decay, profile_calls=1)
    plain, comp = Counter(np.float32(1.0), np.float32(0.5)), Counter(np.float32(1.0), np.float32(0.5))
    x = np.ones(2, np.float32)
    seen = []
    for _ in range(5):
        expected, got = decay(plain, x), compiled(comp, x)
        np.testing.assert_array_equal(got, expected)
        assert type(comp.t) is type(plain.t) and comp.t == plain.t
        assert all(comp.t is not s for s in seen)
        seen.append(comp.t)
    assert pyfront.explain(compiled).compiled_calls >= 3


def keep(c, s):
    c.t = s
    return s * 2


def test_a_stored_numpy_scalar_argument_is_the_callers_object():
    compiled = pyfront.compile(keep, profile_calls=1)
    for v in (1.5, 2.5, 3.5):
        c, s = Counter(np.float64(0), 0), np.float64(v)
        assert compiled(c, s) == keep(Counter(0, 0), s)
        assert c.t is s
    assert pyfront.explain(compiled).compiled_calls > 0


def bias_correction(opt, g):
    opt.state["b1t"] = opt.state["b1t"] * np.float32(0.9)
    return g / (1 - opt.state["b1t"])


def test_a_numpy_scalar_in_a_dict_item():
    class Opt:
        def __init__(self):
            self.state = {"b1t": np.float32(1.0)}

    compiled = check(bias_correction, [(Opt(), np.ones(3, np.float32))] * 4)
    assert pyfront.explain(compiled).compiled_calls > 0


def scaled_step(x):
    lr = np.float32(0.1)
    if x.sum() > 5.0:
        lr = lr * 5.0 / x.sum()  # a computed float32 scalar; the other path keeps the constant
    return x * lr, lr


def python_float_step(x):
    lr = 0.1
    if x.sum() > 5.0:
        lr = lr * 5.0 / x.sum()  # np.float32 here, a Python float on the other path
    return x * lr


BRANCH_CALLS = [(np.ones(3, np.float32),)] * 3 + [(np.full(3, 10, np.float32),)] + [(np.ones(3, np.float32),)] * 3 + [
    (np.full(3, 10, np.float32),)] * 2


def test_a_branch_merging_a_constant_with_a_computed_scalar_of_the_same_type_compiles():
    compiled = check(scaled_step, BRANCH_CALLS)
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 5 and report.deopts == 1, str(report)


def test_a_merge_whose_python_type_depends_on_the_branch_runs_in_the_interpreter():
    compiled = check(python_float_step, BRANCH_CALLS)
    reasons = " ".join(pyfront.explain(compiled).interpreter_reasons)
    assert "its Python type would depend on the branch taken" in reasons
