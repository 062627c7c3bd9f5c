"""Verified calls (Config.verify, runtime/verify.py, pyfront/verification.py).

A miscompile is simulated by corrupting the outputs of the IREE function of
every variant compiled (all but the guard flags, + 1); the real compiler is
checked by the differential tests (tests/differential.py asserts that no
verified call disagreed).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
from differential import check

import pyfront
from pyfront.runtime import jit
from pyfront.runtime.verify import difference, text_difference

pytestmark = pytest.mark.iree


def _changing_outputs(monkeypatch, change) -> None:
    """Every variant compiled from now on returns `change(output)` for each output but the guard flags."""
    real = jit.PreparedVariant.build

    def build(prepared):
        variant = real(prepared)
        invoke = variant.invoke

        def changed(inputs, *rest):
            outputs = invoke(inputs, *rest)
            return [o if p == "guards" else change(o) for o, p in zip(outputs, variant.output_paths)]

        variant.invoke = changed
        return variant

    monkeypatch.setattr(jit.PreparedVariant, "build", build)


@pytest.fixture
def miscompiling(monkeypatch):
    """Every variant compiled from now on returns each output + 1."""
    _changing_outputs(monkeypatch, lambda o: o + 1)


def double(x):
    return x * 2.0


class Model:
    def __init__(self):
        self.w = np.zeros(3)


def step(model, g):
    model.w = model.w - 0.5 * g
    print("step", g.sum())
    return model.w.sum()


def test_disagreement_gives_the_interpreters_answer_and_retires_the_variant(miscompiling, caplog):
    f = pyfront.compile(double, profile_calls=1)
    x = np.arange(3.0)
    with caplog.at_level(logging.WARNING, logger="pyfront.verify"):
        results = [f(x) for _ in range(4)]
    for r in results:
        np.testing.assert_array_equal(r, x * 2.0)
    report = pyfront.explain(f)
    assert report.compilations == 1  # the failed key is not compiled into the same bug again
    assert report.compiled_calls == 0 and report.verified_calls == 0
    assert report.interpreted_calls == 4 and not report.variants
    (failure,) = report.verify_failures
    assert failure.startswith("(ndarray[float64, (3,)]): result: 3 of 3 values differ")
    assert "compiled code disagreed with the interpreter" in str(report)
    assert "compiled code disagreed with the interpreter" in report.summary()
    (record,) = [r for r in caplog.records if r.name == "pyfront.verify"]
    assert record.levelno == logging.WARNING and "variant retired" in record.getMessage()


def test_disagreement_in_state_keeps_the_interpreters_state_and_effects(miscompiling, capsys):
    f = pyfront.compile(step, profile_calls=1)
    model, g = Model(), np.ones(3)
    for _ in range(3):
        f(model, g)
    np.testing.assert_array_equal(model.w, np.full(3, -1.5))  # three steps, each applied once
    assert capsys.readouterr().out == "step 3.0\n" * 3  # printed once per call
    report = pyfront.explain(f)
    assert report.verify_failures and report.compiled_calls == 0


def test_an_agreeing_verified_call_has_its_effects_once(capsys):
    f = pyfront.compile(step, profile_calls=1)
    model, g = Model(), np.ones(3)
    results = [f(model, g) for _ in range(3)]
    assert results == [-1.5, -3.0, -4.5]
    np.testing.assert_array_equal(model.w, np.full(3, -1.5))
    assert capsys.readouterr().out == "step 3.0\n" * 3
    report = pyfront.explain(f)
    assert (report.verified_calls, report.compiled_calls, report.interpreted_calls) == (1, 2, 1)
    assert not report.verify_failures and report.variants[0].calls == 2


class Layers:
    def __init__(self):
        self.biases = [np.ones(3), np.ones(2)]


def step_each(net):
    net.biases = [b - 0.5 for b in net.biases]  # a new list: net.biases[0] is another array after


def test_state_under_a_rebound_path_is_compared_through_the_new_value():
    """`net.biases[i]` is read and `net.biases` stored: the verified call compares the stored list,
    not the items it read with what the path holds after the call (that retired the variant)."""
    compiled = check(step_each, [(Layers(),)] * 3)
    report = pyfront.explain(compiled)
    assert report.verified_calls == 1 and report.compiled_calls == 2, str(report)


class Losses:
    def __init__(self):
        self.history = []


def record(log, x):
    log.history.append(x * 2.0)


def test_a_disagreeing_append_is_found_and_made_once(miscompiling):
    f = pyfront.compile(record, profile_calls=1)
    log = Losses()
    for _ in range(3):
        f(log, np.ones(2))
    assert [h.tolist() for h in log.history] == [[2.0, 2.0]] * 3  # the interpreter's, each once
    failures = pyfront.explain(f).verify_failures
    assert failures and all("the items appended to arg0.history" in failure for failure in failures), failures


def widened_exp(w):
    return np.exp(w) * w.astype(np.float64)


def test_float64_values_computed_from_float32_approximations_compare_at_float32s_tolerance():
    """IREE's float32 exp is a few ulps from NumPy's; the float64 product keeps that difference,
    which float64's own tolerance took for a miscompile, retiring the variant (fuzz seed 11)."""
    w = np.array([[1.5, 0.625, 0.0], [-1.0, -0.75, -1.875]], np.float32)
    compiled = check(widened_exp, [(w,)] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 2 and report.variants[0].approximate_dtype == np.float32, str(report)
    assert pyfront.explain(check(double, [(np.arange(3.0),)] * 2)).variants[0].approximate_dtype is None


def test_difference_takes_the_tolerance_of_the_approximations():
    exact, approximated = np.array([11.077911615371704]), np.array([11.077910900115967])
    assert difference(exact, approximated) is not None
    assert difference(exact, approximated, approximate=np.dtype(np.float32)) is None
    assert difference(exact, exact + 1e-3, approximate=np.dtype(np.float32)) is not None
    assert difference(exact, approximated, approximate=np.dtype(np.float64)) is not None


def test_verified_calls_scale_the_tolerance_to_each_arrays_largest_magnitude():
    """A float32 logit that cancels to near zero, summed in another order than NumPy's (model_cnn's
    forward after 336 steps): 4.7e-6 off at -0.06 is far beyond elementwise float32 tolerance, but a
    few ulps of the array's largest value, 54. Only verified calls allow that; the tests do not."""
    numpy = np.array([[-0.060229320, 54.0], [3.0, -12.5]], np.float32)
    compiled = numpy.copy()
    compiled[0, 0] = np.float32(-0.060224563)
    assert difference(numpy, compiled) is not None
    assert difference(numpy, compiled, scaled=True) is None
    assert difference({"logits": [numpy]}, {"logits": [compiled]}, scaled=True) is None  # through containers
    compiled[0, 0] = np.float32(-0.07)  # 1.8e-4 of the scale: a miscompile, not rounding
    assert difference(numpy, compiled, scaled=True) is not None
    # The scale is of the finite values: an inf does not make every difference allowed.
    assert difference(np.array([np.inf, 1.0], np.float32), np.array([np.inf, 1.1], np.float32), scaled=True)


def logits(x, w):
    return x @ w


@pytest.fixture
def reordered(monkeypatch):
    """Every variant's float32 outputs come back as a summation order other than NumPy's could give
    them: the element nearest zero moved by two ulps of the array's largest magnitude."""
    def rounded_otherwise(o):
        if o.dtype == np.float32 and o.size:
            o.flat[np.argmin(np.abs(o))] += 2 * np.spacing(np.abs(o).max())
        return o

    _changing_outputs(monkeypatch, rounded_otherwise)


def test_a_verified_call_keeps_a_variant_whose_sums_round_otherwise(reordered):
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    w = np.array([[2.0, 1e-3], [-1.0, 20.0]], np.float32)  # [0, 0] cancels to 0
    f = pyfront.compile(logits, profile_calls=1)
    results = [f(x, w) for _ in range(4)]
    np.testing.assert_array_equal(results[1], x @ w)  # the verified call's answer is the interpreter's
    report = pyfront.explain(f)
    assert not report.verify_failures and report.verified_calls == 1 and report.compiled_calls == 3, str(report)
    assert results[3][0, 0] != 0  # the compiled code's own rounding, kept


def test_a_graph_without_reordering_ops_is_verified_elementwise(reordered):
    """`x * 2.0` rounds exactly as NumPy does: no scaled tolerance, the nudged element is a miscompile."""
    f = pyfront.compile(double, profile_calls=1)
    for _ in range(3):
        f(np.array([0.0, 1.0, 50.0], np.float32))
    report = pyfront.explain(f)
    assert report.verify_failures and report.compiled_calls == 0, str(report)


def test_printed_floats_take_the_tolerance_of_the_approximations():
    """`print(f"cost {cost}")` of a summed cost: its last digit may differ as the cost itself may."""
    f64 = np.dtype(np.float64)
    assert text_difference("cost 0.7586044635858095\n", "cost 0.7586044635858094\n") is not None
    assert text_difference("cost 0.7586044635858095\n", "cost 0.7586044635858094\n", f64) is None
    assert text_difference("cost 0.7586044635858095\n", "cost 0.7586044635858094!\n", f64) is not None
    assert text_difference("step 10: 1.5e-03 nan", "step 11: 1.5e-03 nan", f64) is not None  # ints exactly
    assert text_difference("1.5e-03 nan", "1.5000000000000002e-03 nan", f64) is None
    assert text_difference("0.75", "0.76", f64) is not None


@pytest.mark.parametrize("verify, verified", [("first", 1), (2, 3), (1, 5), ("off", 0)])
def test_which_calls_are_verified(verify, verified):
    f = pyfront.compile(double, profile_calls=1, verify=verify)
    for _ in range(6):
        f(np.arange(3.0))
    report = pyfront.explain(f)
    assert report.compiled_calls == 5 and report.verified_calls == verified


def test_verify_off_runs_the_compiled_code_unchecked(miscompiling):
    # What verification protects from: with it off, the (simulated) miscompile gets through.
    f = pyfront.compile(double, profile_calls=1, verify="off")
    f(np.arange(3.0))
    np.testing.assert_array_equal(f(np.arange(3.0)), np.arange(3.0) * 2.0 + 1)


def test_the_differential_check_reports_a_disagreement(miscompiling):
    with pytest.raises(AssertionError, match="disagreed with the interpreter on a verified call"):
        check(double, [(np.arange(3.0),)] * 3)


def test_config(monkeypatch):
    assert pyfront.Config().verify == "first"
    monkeypatch.setenv("PYFRONT_VERIFY", "10")
    assert pyfront.Config().verify == 10
    monkeypatch.setenv("PYFRONT_VERIFY", "off")
    assert pyfront.Config().verify == "off"
    for bad in ("sometimes", 0, -2, 1.5):
        with pytest.raises(ValueError, match="verify must be"):
            pyfront.Config(verify=bad)
