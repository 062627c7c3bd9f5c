"""Compiles off the caller's thread (Config.wait_for_compile; pyfront/compile_thread.py).

The rest of the suite waits for every compile (tests/conftest.py); these tests
use the default, "never", and its alternatives. To make "the variant is still
compiling" deterministic, `compile_thread_held` queues a job that blocks the
compile thread until the test lets it go.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import pyfront
from pyfront import compile_thread
from pyfront.api import COMPILING
from tests.differential import assert_same

pytestmark = pytest.mark.iree


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    """Every compile compiles: a module found in the disk cache is loaded at once, never in the background."""
    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")


@contextlib.contextmanager
def compile_thread_held():
    """The compile thread busy until the block ends (or `release.set()`): compiles queue up behind it."""
    release = threading.Event()
    compile_thread.submit(compile_thread.Pending(release.wait))
    try:
        yield release
    finally:
        release.set()


def affine(x, w):
    return np.tanh(x @ w) * 2.0


X, W = np.linspace(-1, 1, 32).reshape(4, 8), np.linspace(-0.5, 0.5, 24).reshape(8, 3)


def test_calls_run_in_the_interpreter_until_the_variant_is_ready():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never")
    with compile_thread_held():
        for _ in range(4):
            assert_same(affine(X, W), f(X, W))
        report = pyfront.explain(f)
        assert (report.compiled_calls, report.compilations) == (0, 0)
        assert report.interpreter_reasons[COMPILING] == 3  # the call that started the compile, and 2 more
        assert "compiling in the background" in str(report) and "2 calls ran in the interpreter" in str(report)
    assert pyfront.wait(f, timeout=120)
    assert_same(affine(X, W), f(X, W))
    report = pyfront.explain(f)
    assert (report.compiled_calls, report.compilations, report.compiling) == (1, 1, [])


def test_the_variant_switches_in_on_a_call_without_wait():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never")
    with compile_thread_held():
        f(X, W)
        f(X, W)
    compiled, deadline = 0, time.monotonic() + 600  # the compile takes seconds (more on a busy machine)
    while not compiled and time.monotonic() < deadline:
        assert_same(affine(X, W), f(X, W))
        compiled = pyfront.explain(f).compiled_calls
        threading.Event().wait(0.01)
    assert compiled == 1


def test_wait_after_n_calls_in_the_interpreter():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile=2)
    with compile_thread_held() as release:
        f(X, W)  # profiled
        f(X, W)  # starts the compile, interpreted
        f(X, W)  # interpreted (1 call meanwhile)
        f(X, W)  # interpreted (2 calls meanwhile)
        assert pyfront.explain(f).compiled_calls == 0
        threading.Timer(0.2, release.set).start()
        assert_same(affine(X, W), f(X, W))  # waits, then runs compiled
    assert pyfront.explain(f).compiled_calls == 1


@pytest.mark.parametrize("options", [dict(wait_for_compile="always"), dict(strict=True)])
def test_always_and_strict_mode_wait(options):
    f = pyfront.compile(affine, profile_calls=1, **options)
    with compile_thread_held():  # not used: the compile runs on the caller's thread
        f(X, W)
        assert_same(affine(X, W), f(X, W))
    assert pyfront.explain(f).compiled_calls == 1


def test_a_failed_background_compile_is_remembered_and_reported():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_timeout=1e-3)
    f(X, W)
    f(X, W)  # starts the compile, which times out on the compile thread
    assert pyfront.wait(f, timeout=120)
    for _ in range(3):
        assert_same(affine(X, W), f(X, W))
    report = pyfront.explain(f)
    assert report.compilations == 0 and report.compiled_calls == 0
    reasons = [r for r in report.interpreter_reasons if "did not finish within" in r]
    assert reasons and report.interpreter_reasons[reasons[0]] == 3  # no new attempt per call


def test_explain_with_arguments_reports_the_outcome_of_the_background_compile():
    report = pyfront.explain(pyfront.compile(affine, wait_for_compile="never"), X, W)
    assert report.compilations == 1 and report.compiling == []


def test_a_module_in_the_disk_cache_is_loaded_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path))
    first = pyfront.compile(affine, profile_calls=1, wait_for_compile="never")
    first(X, W)
    first(X, W)
    assert pyfront.wait(first, timeout=120)
    again = pyfront.compile(affine, profile_calls=1, wait_for_compile="never")  # e.g. the next process
    with compile_thread_held():
        again(X, W)
        assert_same(affine(X, W), again(X, W))
    report = pyfront.explain(again)
    assert report.compiled_calls == 1 and report.variants[0].cache_hit


class Adam:
    """Parameters and moments updated in place, a step counter: state the interpreted calls
    change while the variant compiles."""

    def __init__(self):
        self.w = np.linspace(-1, 1, 12).reshape(3, 4)
        self.m, self.v, self.t = np.zeros((3, 4)), np.zeros((3, 4)), 0

    def step(self, g, lr):
        self.t += 1
        self.m *= 0.9
        self.m += 0.1 * g
        self.v = 0.999 * self.v + 0.001 * g * g
        m_hat = self.m / (1 - 0.9 ** self.t)
        self.w -= lr * m_hat / (np.sqrt(self.v / (1 - 0.999 ** self.t)) + 1e-8)
        return self.w.sum()


def test_state_changed_while_compiling_is_seen_by_the_variant():
    """Interpreted and compiled calls interleave over one object, as a training loop's do:
    every step and the state after it equal the interpreter's (float64: exact)."""
    compiled_model, plain_model = Adam(), Adam()
    step = pyfront.compile(Adam.step, profile_calls=1, wait_for_compile="never")
    rng = np.random.default_rng(0)
    with compile_thread_held() as release:
        for n in range(40):
            g, lr = rng.standard_normal((3, 4)), 0.01 * (1 + n % 3)
            assert_same(Adam.step(plain_model, g, lr), step(compiled_model, copy.deepcopy(g), lr), f"step {n}")
            assert_same(vars(plain_model), vars(compiled_model), f"state after step {n}")
            if n == 5:
                release.set()
            if n == 20:
                assert pyfront.wait(step, timeout=120)
    report = pyfront.explain(step)
    assert report.compiled_calls >= 15, str(report)


def _call_in_child(fn, queue) -> None:
    try:
        fn(X, W)  # the parent's compile was abandoned by the fork: compiled again here
        done = pyfront.wait(fn, timeout=100)
        queue.put((done, fn(X, W), pyfront.explain(fn).compiled_calls))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the test
        queue.put((False, repr(e), 0))


def test_a_forked_child_compiles_what_its_parent_was_compiling():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    with compile_thread_held():
        f(X, W)
        f(X, W)  # the compile is queued behind the held job when the process forks
        child = ctx.Process(target=_call_in_child, args=(f, queue))
        child.start()
        try:
            done, result, compiled_calls = queue.get(timeout=120)
        finally:
            child.join(10)
            if child.is_alive():
                child.kill()
    assert done, result
    assert_same(affine(X, W), result)
    assert compiled_calls == 1


def test_a_process_does_not_wait_for_a_pending_compile_at_exit(tmp_path):
    script = textwrap.dedent("""
        import threading
        import numpy as np
        import pyfront
        from pyfront import compile_thread

        compile_thread.submit(compile_thread.Pending(threading.Event().wait))  # never released

        @pyfront.compile(profile_calls=1, wait_for_compile="never")
        def f(x):
            return x * 2.0

        print(f(np.ones(3)).tolist(), f(np.ones(3)).tolist(), pyfront.explain(f).compiling != [])
    """)
    (tmp_path / "script.py").write_text(script)
    done = subprocess.run([sys.executable, str(tmp_path / "script.py")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYFRONT_WAIT_FOR_COMPILE": "never",
                                            "PYFRONT_CACHE_DIR": str(tmp_path / "cache")})  # not loaded at once
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[2.0,", "2.0,", "2.0]", "[2.0,", "2.0,", "2.0]", "True"]


def test_wait_rejects_what_pyfront_did_not_compile():
    with pytest.raises(TypeError, match="needs functions returned by pyfront.compile"):
        pyfront.wait(affine)


def test_the_policy_is_checked_and_read_from_the_environment(monkeypatch):
    with pytest.raises(ValueError, match="wait_for_compile must be 'never', 'always' or a number of calls"):
        pyfront.Config(wait_for_compile="sometimes")
    monkeypatch.setenv("PYFRONT_WAIT_FOR_COMPILE", "3")
    assert pyfront.Config().wait_for_compile == 3
    monkeypatch.delenv("PYFRONT_WAIT_FOR_COMPILE")
    assert pyfront.Config().wait_for_compile == "never"
