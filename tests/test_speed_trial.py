"""Config.keep_faster: a variant's calls run where they were measured faster (pyfront/speed_trial.py).

The clock is a fake one that the compiled path and the interpreter advance by set
amounts, so which path wins does not depend on the machine.
"""

import numpy as np
import pytest
from pyfront.runtime.variant import Variant

import pyfront
from pyfront import api, call_depth, speed_trial
from pyfront.config import Config
from pyfront.speed_trial import BASELINE_CALLS, SUSPEND_CALLS, TIMED_CALLS, SpeedTrial

pytestmark = pytest.mark.iree


def test_a_trial_suspends_for_longer_each_time_the_interpreter_wins():
    trial = SpeedTrial()
    for calls in (SUSPEND_CALLS, 2 * SUSPEND_CALLS):
        for _ in range(TIMED_CALLS):
            assert not trial.wants_interpreted() and trial.verdict() is None
            trial.add(100e-6, compiled=True)
        for _ in range(BASELINE_CALLS):
            assert trial.wants_interpreted() and trial.verdict() is None
            trial.add(10e-6, compiled=False)
        medians = trial.verdict()
        assert medians == pytest.approx((100e-6, 10e-6))
        suspended, reason = trial.suspension(medians)
        assert suspended == calls and "100 us vs 10 us per call" in reason
    assert trial.suspension((100e-6, 95e-6)) is None  # within the margin: compiled code stays


@pytest.fixture
def clock(monkeypatch):
    """A fake clock that compiled calls advance by `clock.compiled` seconds and interpreted ones by
    `clock.interpreted`."""

    class Clock:
        now, compiled, interpreted = 0.0, 0.0, 0.0

        def __call__(self):
            return self.now

    fake = Clock()
    run, call_user = Variant.run, call_depth.call_user

    def timed_run(*args, **kwargs):
        fake.now += fake.compiled
        return run(*args, **kwargs)

    def timed_call_user(*args, **kwargs):
        fake.now += fake.interpreted
        return call_user(*args, **kwargs)

    monkeypatch.setattr(speed_trial, "clock", fake)
    monkeypatch.setattr(Variant, "run", timed_run)
    monkeypatch.setattr(call_depth, "call_user", timed_call_user)
    return fake


def _scaled(x, factor):
    return x * factor + 1.0


def _calls(fn, n):
    """n calls, each compared with CPython's answer."""
    x = np.arange(6.0)
    for i in range(n):
        np.testing.assert_array_equal(fn(x, float(i % 3)), _scaled(x, float(i % 3)))


def test_a_variant_slower_than_the_interpreter_is_suspended_then_timed_again(clock):
    clock.compiled, clock.interpreted = 100e-6, 10e-6
    f = pyfront.compile(_scaled, config=Config(keep_faster=True))
    profiled, verified = 2, 1
    _calls(f, profiled + verified + TIMED_CALLS + BASELINE_CALLS + SUSPEND_CALLS + TIMED_CALLS)
    report = pyfront.explain(f)
    assert report.compiled_calls == verified + 2 * TIMED_CALLS
    reasons = report.interpreter_reasons
    assert reasons[speed_trial.TRIAL_REASON] == BASELINE_CALLS
    suspended = [r for r in reasons if "measured slower than the interpreter (100 us vs 10 us per call)" in r]
    assert len(suspended) == 1 and reasons[suspended[0]] == SUSPEND_CALLS
    # The second trial compares with the suspended calls: no trial calls of its own, a longer suspension.
    _calls(f, 1)
    assert pyfront.explain(f).interpreter_reasons[speed_trial.TRIAL_REASON] == BASELINE_CALLS
    assert any(f"suspended for {2 * SUSPEND_CALLS} calls" in r for r in pyfront.explain(f).interpreter_reasons)


def test_a_variant_faster_than_the_interpreter_stops_being_timed(clock):
    clock.compiled, clock.interpreted = 10e-6, 100e-6
    f = pyfront.compile(_scaled, config=Config(keep_faster=True))
    _calls(f, 2 + 1 + TIMED_CALLS + BASELINE_CALLS)
    before = pyfront.explain(f)
    _calls(f, 100)
    after = pyfront.explain(f)
    assert after.compiled_calls - before.compiled_calls == 100
    assert after.interpreted_calls == before.interpreted_calls == 2 + BASELINE_CALLS


@pytest.mark.parametrize("config", [Config(keep_faster=False), Config(keep_faster=True, strict=True)],
                         ids=["off", "strict"])
def test_no_trial_when_off_or_strict(clock, config):
    clock.compiled, clock.interpreted = 100e-6, 10e-6
    f = pyfront.compile(_scaled, config=config)
    _calls(f, 2 + 1 + TIMED_CALLS + BASELINE_CALLS + 10)
    report = pyfront.explain(f)
    assert report.compiled_calls == report.calls - 2


def test_calls_of_a_suspended_only_variant_skip_the_dispatch_key_but_not_the_timed_ones(clock, monkeypatch):
    clock.compiled, clock.interpreted = 100e-6, 10e-6
    keys = []
    key = api.CompiledFunction._key
    monkeypatch.setattr(api.CompiledFunction, "_key", lambda self, args: keys.append(1) or key(self, args))
    f = pyfront.compile(_scaled, config=Config(keep_faster=True))
    trial = 2 + 1 + TIMED_CALLS + BASELINE_CALLS  # profiled, verified, then the trial
    _calls(f, trial)
    before = len(keys)
    _calls(f, SUSPEND_CALLS)
    # The first suspended call takes the whole path and finds the variant suspended; the suspension's
    # last BASELINE_CALLS calls are timed for the next trial, through the whole path too.
    assert len(keys) - before == 1 + BASELINE_CALLS
    assert pyfront.explain(f).interpreter_reasons[speed_trial.TRIAL_REASON] == BASELINE_CALLS
    _calls(f, TIMED_CALLS + 1)  # the second trial compared them: a suspension twice as long
    assert any(f"suspended for {2 * SUSPEND_CALLS} calls" in r for r in pyfront.explain(f).interpreter_reasons)


def test_arguments_of_another_key_compile_within_the_bypass_of_a_suspension(clock, monkeypatch):
    clock.compiled, clock.interpreted = 100e-6, 10e-6
    monkeypatch.setattr(api, "BYPASS_CALLS", 4)
    f = pyfront.compile(_scaled, config=Config(keep_faster=True))
    _calls(f, 2 + 1 + TIMED_CALLS + BASELINE_CALLS + 1)  # the last call is suspended, and starts a bypass
    clock.compiled = clock.interpreted  # (the new key's compiled code must not lose its own trial)
    y = np.arange(12.0).reshape(3, 4)
    for _ in range(api.BYPASS_CALLS + 1 + 2 + 1 + 1):  # the bypass, then profiled, verified and compiled calls
        np.testing.assert_array_equal(f(y, 2.0), _scaled(y, 2.0))
    report = pyfront.explain(f)
    assert len(report.variants) == 2 and report.variants[1].calls >= 1
