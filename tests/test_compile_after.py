"""When a function's first variant is prepared: Config.compile_after (pyfront/hotness.py).

Where no call waits for compiles (wait_for_compile="never", the default), a
function's calls after profiling run in the interpreter until they have spent
`compile_after` seconds there ("auto": twice as long as preparing its variant is
expected to take, from the profiled call's size); then one call prepares it.
These tests use thresholds a call cannot fail to cross (1e-9 s) or cannot cross
(1e9 s), so no outcome depends on the machine's speed.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pyfront
from pyfront import hotness
from pyfront.api import WARMING_UP
from pyfront.hotness import PREPARATION_SECONDS_PER_EVENT, PREPARE_AT_ONCE_SECONDS
from pyfront.profiler import Profile
from tests.differential import assert_same

pytestmark = pytest.mark.iree


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")


def affine(x, w):
    return np.tanh(x @ w) * 2.0


def layer(x):
    return np.tanh(x)


def many_calls(x):
    for _ in range(1000):
        x = layer(x)
    return x


X, W = np.linspace(-1, 1, 32).reshape(4, 8), np.linspace(-0.5, 0.5, 24).reshape(8, 3)


def test_the_first_call_past_the_threshold_prepares_the_variant():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_after=1e-9)
    assert_same(affine(X, W), f(X, W))  # profiled
    assert_same(affine(X, W), f(X, W))  # in the interpreter: 0 s spent there so far
    report = pyfront.explain(f)
    assert report.interpreter_reasons[WARMING_UP] == 1 and report.compiling == []
    f(X, W)  # spent more than 1e-9 s: prepares, and IREE compiles in the background
    assert pyfront.wait(f, timeout=600)
    assert_same(affine(X, W), f(X, W))
    report = pyfront.explain(f)
    assert report.interpreter_reasons[WARMING_UP] == 1 and report.compiled_calls == 1
    assert report.warming_up is None and "warming up" not in str(report)


def test_a_function_that_never_gets_hot_is_never_prepared(monkeypatch):
    from pyfront.runtime import jit

    monkeypatch.setattr(jit, "prepare_variant", lambda *a, **k: pytest.fail("prepared"))
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_after=1e9)
    for _ in range(5):
        assert_same(affine(X, W), f(X, W))
    assert pyfront.wait(f, timeout=0)  # nothing pending
    report = pyfront.explain(f)
    assert (report.interpreter_reasons[WARMING_UP], report.compilations, report.compiling) == (4, 0, [])
    assert report.warming_up[0] > 0 and report.warming_up[1] == 1e9
    assert "warming up: its calls spent" in str(report) and "prepared at 1000000000.000 s" in str(report)


@pytest.mark.parametrize("options", [dict(wait_for_compile="always"), dict(wait_for_compile=3),
                                     dict(strict=True)])
def test_a_call_that_may_wait_prepares_at_once(options):
    f = pyfront.compile(affine, profile_calls=1, compile_after=1e9, **options)
    f(X, W)
    f(X, W)
    assert WARMING_UP not in pyfront.explain(f).interpreter_reasons
    assert pyfront.wait(f, timeout=600)
    assert_same(affine(X, W), f(X, W))
    assert pyfront.explain(f).compiled_calls >= 1


def test_once_hot_a_new_key_is_prepared_when_first_needed():
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_after=1e-9)
    f(X, W)
    f(X, W)  # warming up
    f(X, W)  # prepares
    assert pyfront.wait(f, timeout=600)
    x = np.linspace(-1, 1, 48).reshape(6, 8)  # a new shape: a new key
    f(x, W)  # profiled (a new key's first call)
    f(x, W)  # prepares at once: the function is hot
    assert pyfront.wait(f, timeout=600)
    assert_same(affine(x, W), f(x, W))
    report = pyfront.explain(f)
    assert report.interpreter_reasons[WARMING_UP] == 1 and report.compilations == 2


def test_auto_prepares_a_small_function_at_once_and_waits_for_a_large_one():
    small = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_after="auto")
    small(X, W)
    small(X, W)
    assert WARMING_UP not in pyfront.explain(small).interpreter_reasons
    assert pyfront.wait(small, timeout=600)

    large = pyfront.compile(many_calls, profile_calls=1, wait_for_compile="never", compile_after="auto")
    x = np.linspace(-1, 1, 8)
    for _ in range(3):
        assert_same(many_calls(x), large(x))
    events = large._profiler.profile.events  # 1,000 calls of `layer` and their returns, at least
    assert events * PREPARATION_SECONDS_PER_EVENT >= PREPARE_AT_ONCE_SECONDS
    assert pyfront.explain(large).interpreter_reasons[WARMING_UP] == 2


def test_profiling_never_displaces_the_users_profiler():
    seen = []

    def users_profiler(frame, event, arg):
        seen.append(event)

    f = pyfront.compile(many_calls, profile_calls=1, wait_for_compile="never")
    sys.setprofile(users_profiler)
    try:
        f(np.ones(3))  # profiled
        assert sys.getprofile() is users_profiler
    finally:
        sys.setprofile(None)
    assert seen.count("call") >= 1000
    assert f._profiler.profile.events == 0  # not counted: the expected preparation is unknown (prepared at once)


PROFILERS_SEEN = []


def sees_the_profiler(x):
    PROFILERS_SEEN.append(sys.getprofile())  # pyfront's event counter while it counts
    return many_calls(x)


@pytest.mark.parametrize("options, counted", [(dict(wait_for_compile="never"), [False, True]),
                                              (dict(wait_for_compile="always"), [False, False])])
def test_only_the_profiled_call_the_threshold_reads_counts_its_events(options, counted):
    """Counting costs 2-4x a call: of the profiling window's calls only the last counts, and only where
    the threshold is read (no call waits for compiles)."""
    PROFILERS_SEEN.clear()
    f = pyfront.compile(sees_the_profiler, profile_calls=2, **options)
    x = np.linspace(-1, 1, 8)
    for _ in range(2):
        assert_same(sees_the_profiler(x), f(x))
    assert [p is not None for p in PROFILERS_SEEN[1::2]] == counted  # (the even entries: the plain calls)
    assert (f._profiler.profile.events >= 2000) == counted[-1]


def test_compile_after_is_auto_or_seconds(monkeypatch):
    for bad in ("soon", -1, float("nan")):
        with pytest.raises(ValueError, match="compile_after must be 'auto' or a number of seconds >= 0"):
            pyfront.Config(compile_after=bad)
    monkeypatch.setenv("PYFRONT_COMPILE_AFTER", "0.5")
    assert pyfront.Config().compile_after == 0.5
    monkeypatch.delenv("PYFRONT_COMPILE_AFTER")
    assert pyfront.Config().compile_after == "auto"
    assert "PYFRONT_COMPILE_AFTER" not in os.environ


def test_a_function_prepared_by_an_earlier_process_is_prepared_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path))
    large, config = Profile(events=10_000), pyfront.Config(compile_after="auto")
    assert hotness.threshold(many_calls, large, config) == (
        hotness.HOT_AFTER_PREPARATIONS * 10_000 * PREPARATION_SECONDS_PER_EVENT)
    f = pyfront.compile(affine, profile_calls=1, wait_for_compile="never", compile_after=0)
    f(X, W)
    f(X, W)  # prepares: remembered in the disk cache, as the next process would find it
    assert pyfront.wait(f, timeout=600)
    assert hotness.threshold(affine, large, config) == 0.0
    assert hotness.threshold(many_calls, large, config) > 0.0  # (another function)
    assert hotness.threshold(affine, large, pyfront.Config(compile_after=2.5)) == 2.5
    monkeypatch.setenv("PYFRONT_CACHE_DIR", "off")
    assert hotness.threshold(affine, large, config) > 0.0


@pytest.mark.parametrize("fn, compile_after, starts", [(many_calls, 1e-9, 1), (many_calls, 1e9, 0), (layer, 1e-9, 0)])
def test_a_large_function_starts_the_preparation_worker_halfway_to_its_threshold(monkeypatch, fn, compile_after,
                                                                               starts):
    from pyfront.runtime import jit, preparation_worker

    started = []
    monkeypatch.setattr(preparation_worker, "start", lambda: started.append(1))
    monkeypatch.setattr(jit, "prepare_variant", lambda *a, **k: pytest.fail("no compile needed here"))
    f = pyfront.compile(fn, profile_calls=1, wait_for_compile="never", compile_after=compile_after)
    x = np.linspace(-1, 1, 8)
    for _ in range(2):  # profiled, then warming up: 0 s spent so far
        assert_same(fn(x), f(x))
    assert started == []
    if compile_after == 1e-9:  # the next call is past both halfway and the threshold: it prepares
        monkeypatch.setattr(jit, "prepare_variant", _refused)
    for _ in range(3):
        assert_same(fn(x), f(x))
    assert len(started) == starts


def _refused(*args, **kwargs):
    raise RuntimeError("not compiled in this test")
