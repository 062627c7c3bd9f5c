"""What the compiler does not handle runs in the interpreter, correctly, and explain says why."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def uses_try(x):
    try:
        return np.log(x)
    except ValueError:
        return x


def uses_with(x):
    with contextlib.suppress(ValueError):
        x = x * 2
    return x


def make_generator(x):
    for row in x:
        yield row * 2


def uses_generator(x):
    return list(make_generator(x))


def uses_class_definition(x):
    class Box:
        pass
    return x + 1


def uses_exec(x):
    exec("y = 1")  # noqa: S102 - the construct under test
    return x


class Dynamic:
    def __init__(self):
        self.w = np.ones(3)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return np.zeros(3)


def reads_dynamic(obj, x):
    return x + obj.w


CASES = [
    (uses_try, "try/except is not supported", (np.ones(3),)),
    (uses_with, "a with block is not supported", (np.ones(3),)),
    (uses_generator, "generator", (np.ones((2, 3)),)),
    (uses_class_definition, "a class definition is not supported", (np.ones(3),)),
    (uses_exec, "exec", (np.ones(3),)),
    (reads_dynamic, "customize attribute access", (Dynamic(), np.ones(3))),
]


@pytest.mark.parametrize("fn,reason,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_constructs_run_interpreted_and_are_explained(fn, reason, args):
    compiled = check(fn, [args, args, args])
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and report.interpreted_calls == 3
    assert reason in str(report) and "test_interpreter_fallback.py:" in str(report), str(report)


class Layer:
    def __init__(self):
        self.w = np.ones(3)
        self.calls = np.zeros(1)


def update_then_check(layer, x):
    layer.w = layer.w * 2
    if x.sum() < 0:
        raise ValueError("negative input")
    return layer.w + x


def test_state_written_before_a_raise_is_never_committed():
    layer = Layer()
    ok, bad = np.ones(3), -np.ones(3)
    compiled = check(update_then_check, [(layer, ok), (layer, ok), (layer, bad), (layer, ok)])
    report = pyfront.explain(compiled)
    # The raise path was never profiled: compiled with a guard, which fails on `bad`;
    # the interpreter then raises with the layer exactly as the interpreter leaves it.
    assert report.compiled_calls >= 2 and report.deopts == 1, str(report)


def big_ints(x, n):
    return x * (n // 10**20), n * n


def test_huge_python_ints_keep_python_semantics():
    x = np.arange(3)
    calls = [(x, 10**21), (x, 10**21), (x, 10**40), (x, 10**40)]
    check(big_ints, calls)


def _with_try(x):
    try:
        return x + 1
    except ValueError:
        return x


def test_a_failure_independent_of_the_key_is_not_compiled_again_for_new_keys():
    compiled = pyfront.compile(_with_try, profile_calls=1)
    for n in range(2, 22):  # 20 shapes, each a new key
        np.testing.assert_array_equal(compiled(np.ones(n)), _with_try(np.ones(n)))
    assert sum(len(keys) for keys in compiled._failed_keys.values()) == 3  # not 20 compile attempts
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0
    assert any("new keys are not compiled until the function's code changes" in r
               for r in report.interpreter_reasons), str(report)
