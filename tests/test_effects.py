"""Side effects in compiled code happen exactly once per call, in program order."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest
from differential import assert_same, check

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


# Warnings: deferred like prints, issued with CPython's attribution (runtime/deferred_warnings.py).

def check_lr(lr):
    warnings.warn("learning rate above 1 diverges", UserWarning, stacklevel=2)
    return lr


def sgd(w, g, lr):
    print("before")
    w = w - check_lr(lr) * g
    stacked = np.row_stack((w,
                            g))  # NumPy 2's deprecated alias: a DeprecationWarning for this line
    warnings.warn("done")
    return stacked


def recorded(fn, args, action: str = "always") -> tuple:
    """(result or exception, printed text, each warning's category, message, file and line) of fn(*args)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter(action)
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001 - compared by the caller
            result = e
    return result, out.getvalue(), [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def test_warnings_are_issued_like_the_interpreters():
    w, g = np.linspace(-1, 1, 4), np.ones(4)
    compiled = pyfront.compile(sgd, profile_calls=1)
    expected_result, expected_out, expected = recorded(sgd, (w, g, 2.0))
    assert [c for c, *_ in expected] == [UserWarning, DeprecationWarning, UserWarning]
    for _ in range(3):
        result, out, got = recorded(compiled, (w, g, 2.0))
        assert_same(expected_result, result)
        assert (out, got) == (expected_out, expected)
    assert pyfront.explain(compiled).compiled_calls == 2


def test_default_action_shows_a_warning_once_per_line_as_the_interpreter():
    w, g = np.zeros(2), np.ones(2)
    compiled = pyfront.compile(sgd, profile_calls=1)

    def three_calls(fn):
        return [fn(w, g, 0.5) for _ in range(3)]

    _, _, expected = recorded(three_calls, (sgd,), "default")
    _, _, got = recorded(three_calls, (compiled,), "default")
    assert got == expected and len(got) == 3
    assert pyfront.explain(compiled).compiled_calls == 2


def test_the_interpreters_own_filters_match_as_in_cpython():
    w, g = np.zeros(2), np.ones(2)
    compiled = pyfront.compile(sgd, profile_calls=1)
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        # CPython's built-in filters name the module by a plain str ('__main__'), not a regex.
        warnings.filters.insert(0, ("error", None, DeprecationWarning, "__main__", 0))
        for _ in range(3):
            compiled(w, g, 0.5)
    assert len(caught) == 9 and pyfront.explain(compiled).compiled_calls == 2


class Step:
    def __init__(self):
        self.count = 0

    def run(self, x):
        self.count += 1
        warnings.warn("deprecated step")
        return x * 2


def take_step(step, x):
    return step.run(x)


def test_a_warning_the_filters_make_an_error_raises_after_the_state_written_before_it():
    compiled = pyfront.compile(take_step, profile_calls=1)
    x = np.ones(3)
    plain, step = Step(), Step()
    for action in ("ignore", "ignore", "error", "ignore"):
        expected, _, _ = recorded(take_step, (plain, x), action)
        got, _, _ = recorded(compiled, (step, x), action)
        assert type(got) is type(expected) and str(got) == str(expected)
        assert step.count == plain.count
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 2 and report.deopts == 1, str(report)


def warn_for_the_caller(x):
    warnings.warn("called with a bad x", stacklevel=2)  # the caller's line: not known when compiling
    return x


def warn_when_negative(x):
    if x.sum() < 0:
        warnings.warn("negative")
    return x


def test_warnings_that_cannot_be_deferred_run_in_the_interpreter():
    x = np.ones(2)
    for fn, reason in ((warn_for_the_caller, "names a frame outside the compiled function"),
                       (warn_when_negative, "inside a branch or loop on a computed value")):
        compiled = check(fn, [(x,), (x,), (-x,), (-x,), (x,)])
        report = pyfront.explain(compiled)
        assert any(reason in r for r in report.interpreter_reasons), str(report)
