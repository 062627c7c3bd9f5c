"""A process forked after compiled calls (multiprocessing's default on Linux) gets answers, not a hang.

The child runs in a `fork` multiprocessing process joined with a timeout, so
a regression (IREE's local-task workers do not survive fork, and the child's
first call on the parent's device used to wait for them forever) fails the test
instead of hanging the suite.
"""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

import pyfront

pytestmark = pytest.mark.iree

_JOIN_SECONDS = 120  # compiles are cached on disk; the child only loads and calls


class Model:
    def __init__(self):
        self.w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


def step(model, x):
    # Elementwise float64 only: the compiled answer is bit-equal to NumPy's.
    model.w = model.w * 0.5 + x  # state the compiled code commits (device-resident on CPU)
    return model.w * 2.0 - x


def _in_child(fn, model, x, queue) -> None:
    try:
        got = [fn(model, x) for _ in range(3)]
        queue.put(("ok", got, pyfront.explain(fn).compiled_calls, model.w.copy()))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the test
        queue.put(("error", repr(e), 0, None))


@pytest.mark.parametrize("backend", ["cpu", "cpu-sync"])
def test_forked_child_calls_compiled_code(backend):
    compiled = pyfront.compile(step, backend=backend, profile_calls=1)
    x = np.arange(12.0).reshape(3, 4) / 10
    model, plain_model = Model(), Model()
    for _ in range(3):
        np.testing.assert_array_equal(compiled(model, x), step(plain_model, x))
    before = pyfront.explain(compiled).compiled_calls
    assert before == 2

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_in_child, args=(compiled, model, x, queue))
    child.start()
    try:
        child.join(_JOIN_SECONDS)
        assert not child.is_alive(), "the forked child hung in its compiled call"
    finally:
        if child.is_alive():
            child.kill()
            child.join()
    status, got, compiled_calls, w = queue.get(timeout=10)
    assert status == "ok", got
    for got_one, expected in zip(got, [step(plain_model, x) for _ in range(3)], strict=True):
        np.testing.assert_array_equal(got_one, expected)
    np.testing.assert_array_equal(w, plain_model.w)
    assert compiled_calls == before + 3  # the child ran compiled code, not the interpreter
    assert child.exitcode == 0
    # The parent's runtime is untouched by the child.
    parent_model = Model()
    plain_again = Model()
    np.testing.assert_array_equal(compiled(parent_model, x), step(plain_again, x))
