"""An exception raised by a signal handler during a compile or a compiled call is the caller's.

It reaches the caller unchanged, and nothing is recorded against the function:
no "IREE could not compile", no runtime deopt, no retired variant; the next
call compiles and runs compiled (pyfront/interrupts.py). The timer is armed
from inside the step under test and the step then sleeps, so the signal always
arrives there, however fast the machine or the disk cache.
"""

from __future__ import annotations

import contextlib
import signal
import time

import numpy as np
import pytest

import pyfront
import pyfront.runtime.jit as jit
import pyfront.runtime.lowering as lowering
from pyfront import interrupts
from pyfront.errors import Unsupported

pytestmark = pytest.mark.iree


def _affine(x, w):
    return np.tanh(x @ w) + 1.0


X, W = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.full((3, 4), 0.25)


class Watchdog(TimeoutError):
    pass


def _on_alarm(signum, frame):
    raise Watchdog("the caller's deadline passed")


@contextlib.contextmanager
def _watchdog():
    old = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _interrupted(step):
    """`step` (a callable) that lets the watchdog fire while it runs."""
    def run(*args, **kwargs):
        out = step(*args, **kwargs)
        # Armed after the step: a signal that arrives in a fork handler (IREE's compiler is
        # started with a fork) is printed and dropped by CPython, not raised.
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        time.sleep(30)  # interrupted by the handler's exception
        return out
    return run


def _assert_nothing_recorded(compiled):
    report = pyfront.explain(compiled)
    assert not report.interpreter_reasons and not report.deopt_reasons and report.deopts == 0, report


# Graph generation, the pass pipeline, IREE's compiler: before, the exception became an
# "internal compiler error" or "IREE could not compile" and the key was marked failed.
@pytest.mark.parametrize("module, stage", [(jit, "generate"), (lowering, "run_passes"), (jit, "cached_vmfb"),
                                           (jit, "compile_vmfb")], ids=["generate", "run_passes", "cached_vmfb", "compile_vmfb"])
def test_signal_during_compile_reaches_the_caller(monkeypatch, module, stage):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")  # every stage runs, IREE's compiler too
    compiled = pyfront.compile(_affine, profile_calls=1)
    compiled(X, W)  # profiled
    with _watchdog(), monkeypatch.context() as patch:
        patch.setattr(module, stage, _interrupted(getattr(module, stage)))
        with pytest.raises(Watchdog, match="deadline passed") as raised:
            compiled(X, W)
    # Not wrapped by pyfront. (The alarm may fire inside a library's own except block, e.g. the MLIR
    # bindings' lookup of a Python module for the pyfront dialect, which sets __context__: not ours.)
    assert raised.value.__cause__ is None and not getattr(raised.value, "__notes__", None)
    assert not isinstance(raised.value.__context__, Unsupported)
    _assert_nothing_recorded(compiled)
    assert pyfront.explain(compiled).compilations == 0
    np.testing.assert_array_equal(compiled(X, W), _affine(X, W))
    report = pyfront.explain(compiled)
    assert report.compilations == 1 and report.compiled_calls == 1
    _assert_nothing_recorded(compiled)


def test_signal_during_compiled_call_reaches_the_caller():
    compiled = pyfront.compile(_affine, profile_calls=1)
    compiled(X, W)
    compiled(X, W)  # compiled
    (group,) = compiled._groups.values()
    (variant,) = group.variants
    real_invoke = variant.invoke
    with _watchdog():
        variant.invoke = _interrupted(real_invoke)
        with pytest.raises(Watchdog, match="deadline passed") as raised:
            compiled(X, W)
        variant.invoke = real_invoke
    assert not getattr(raised.value, "__notes__", None)
    _assert_nothing_recorded(compiled)
    assert group.variants == (variant,) and not group.failed  # not retired
    np.testing.assert_array_equal(compiled(X, W), _affine(X, W))
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 2 and report.compilations == 1
    _assert_nothing_recorded(compiled)


def test_compiler_failures_under_a_handler_are_still_compiler_failures(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("error: the compiler failed")

    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")  # IREE's compiler runs (here: fails)
    compiled = pyfront.compile(_affine, profile_calls=1)
    compiled(X, W)
    with _watchdog():
        monkeypatch.setattr(jit, "compile_vmfb", broken)
        np.testing.assert_array_equal(compiled(X, W), _affine(X, W))
    (reason,) = pyfront.explain(compiled).interpreter_reasons
    assert "IREE could not compile" in reason


def _raised(fail) -> Exception:
    try:
        fail()
    except Exception as e:  # noqa: BLE001 - returned for the test
        return e
    raise AssertionError("did not raise")


def test_the_handlers_exception_is_found_among_several_with_one_query():
    # A variant group's signature reads many paths another tree shape leaves unreadable,
    # and checks their exceptions together (variant_group.VariantGroup.signature).
    with _watchdog():
        missing, handlers, none_attr = (_raised(f) for f in (lambda: {}["left"],
                                                              lambda: _on_alarm(signal.SIGALRM, None),
                                                              lambda: None.left))
        interrupts.reraise_if_asynchronous(missing, none_attr)  # ordinary failures: nothing raised
        with pytest.raises(Watchdog, match="deadline passed"):
            interrupts.reraise_if_asynchronous(missing, handlers, none_attr)
