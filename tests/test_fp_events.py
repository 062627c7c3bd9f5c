"""NumPy's floating-point warnings and errors (np.errstate / np.seterr) from compiled code.

Compiled code assumes no float op raises an IEEE event NumPy reports
(divide by zero, overflow, invalid value; passes/guard_fp_events.py) and
deopts when one did; the interpreter then warns, raises FloatingPointError or
stays silent exactly as NumPy does under the caller's np.errstate. Every test
is differential (tests/differential.py compares warnings too): a call with an
event between calls without one, so the variant runs compiled, deopts, and
runs compiled again.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront
from pyfront.api import GIVE_UP_AFTER
from pyfront.guards import FP_ERRSTATE_REASON

pytestmark = pytest.mark.iree


def log(x):
    return np.log(x) + 1.0


def sqrt(x):
    return np.sqrt(x) * 2.0


def exp(x):
    return np.exp(x) - 1.0


def divide(a, b):
    return a / b


def subtract(a, b):
    return a - b


def total(x):
    return np.sum(x * 2.0, axis=0)


def matmul(a, b):
    return a @ b


def to_int(x):
    return (x * 2.0).astype(np.int32)


def to_float32(x):
    return (x * 2.0).astype(np.float32)


def f64(*values):
    return np.array(values, dtype=np.float64)


def f32(*values):
    return np.array(values, dtype=np.float32)


INF, NAN = np.inf, np.nan

# (function, a call without an event, a call with one): NumPy warns on the second.
CASES = {
    "log of 0": (log, (f64(1.0, 2.0, 3.0),), (f64(1.0, 0.0, 3.0),)),
    "log of -1": (log, (f64(1.0, 2.0, 3.0),), (f64(1.0, -1.0, 3.0),)),
    "sqrt of -1": (sqrt, (f32(1.0, 4.0),), (f32(-1.0, 4.0),)),
    "exp overflow float32": (exp, (f32(1.0, 80.0),), (f32(1.0, 90.0),)),
    "exp overflow float64": (exp, (f64(1.0, 700.0),), (f64(1.0, 710.0),)),
    "1/0": (divide, (f64(1.0, 2.0), f64(2.0, 4.0)), (f64(1.0, 2.0), f64(2.0, 0.0))),
    "0/0": (divide, (f64(1.0, 2.0), f64(2.0, 4.0)), (f64(1.0, 0.0), f64(2.0, 0.0))),
    "inf-inf": (subtract, (f64(INF, 2.0), f64(1.0, 4.0)), (f64(INF, 2.0), f64(INF, 4.0))),
    "overflow in sum": (total, (f64(1e300, 1e300, 1.0).reshape(3, 1),), (f64(1e308, 1e308, 1.0).reshape(3, 1),)),
    "overflow in matmul": (matmul, (np.full((3, 4), 1e150), np.full((4, 2), 1e150)),
                           (np.full((3, 4), 1e160), np.full((4, 2), 1e160))),
    "float->int cast of NaN": (to_int, (f64(1.5, -2.5),), (f64(1.5, NAN),)),
    "float->int cast out of range": (to_int, (f64(1.5, -2.5),), (f64(1.5, 2e9),)),
    "float64->float32 overflow": (to_float32, (f64(1.5, 1e38),), (f64(1.5, 1e300),)),
}


def calls_of(ok: tuple, bad: tuple) -> list[tuple]:
    return [ok, ok, bad, ok]


def assert_deopted_and_ran_compiled(compiled, ok_has_nonfinite: bool = False) -> None:
    """One deopt for the event, which recompiles nothing (the exact checks would fail on it too).
    With NaN/inf in the event-free call's inputs, one more: the deferred checks fail on them, and
    their second failure (the event) recompiles with exact per-op checks, which let the last call
    run compiled (api.RELAX_FP_CHECKS_AFTER)."""
    report = pyfront.explain(compiled)
    extra = int(ok_has_nonfinite)
    assert report.deopts == 1 + extra and report.compiled_calls == 2 - extra, str(report)
    assert report.compilations == 1 + extra, str(report)
    assert any("per op" in r for r in report.relaxations) == ok_has_nonfinite, str(report)


@pytest.mark.parametrize("fn, ok, bad", CASES.values(), ids=CASES.keys())
def test_numpy_warns_and_compiled_code_deopts(fn, ok, bad):
    with np.errstate(all="warn", under="ignore"):
        nonfinite = not all(np.isfinite(a).all() for a in ok)
        assert_deopted_and_ran_compiled(check(fn, calls_of(ok, bad)), nonfinite)


def masked_softmax(x, mask):
    s = np.where(mask, x, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_minus_inf_masks_run_compiled_after_one_relaxation():
    x = np.arange(8.0).reshape(2, 4)
    mask = np.array([[True, False, True, True], [False, True, True, False]])
    compiled = check(masked_softmax, [(x, mask)] * 5)
    report = pyfront.explain(compiled)  # the deferred checks fail twice, then per-op ones hold
    assert report.deopts == 2 and report.compiled_calls == 2 and report.compilations == 2, str(report)


@pytest.mark.parametrize("case", ["log of 0", "exp overflow float64", "0/0", "overflow in sum",
                                  "float->int cast of NaN"])
def test_errstate_raise_gives_floating_point_error(case):
    fn, ok, bad = CASES[case]
    with np.errstate(all="raise", under="ignore"):
        with pytest.raises(FloatingPointError):
            fn(*bad)
        assert_deopted_and_ran_compiled(check(fn, calls_of(ok, bad)))


def test_errstate_all_raise_runs_in_the_interpreter_as_underflow_would_raise():
    fn, ok, bad = CASES["exp overflow float64"]
    with np.errstate(all="raise"):
        compiled = check(fn, calls_of(ok, bad))
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and report.interpreter_reasons[FP_ERRSTATE_REASON] == 3, str(report)


@pytest.mark.parametrize("case", ["log of -1", "1/0", "overflow in matmul"])
def test_errstate_ignore_is_silent_with_the_same_values(case):
    fn, ok, bad = CASES[case]
    with np.errstate(all="ignore"):
        check(fn, calls_of(ok, bad))


def test_inf_and_nan_inputs_that_numpy_propagates_silently_run_compiled_after_one_relaxation():
    x = f64(1.0, INF, -INF, NAN)
    compiled = check(exp, [(x,)] * 5)  # the deferred check deopts twice, the exact per-op one holds
    report = pyfront.explain(compiled)
    assert report.deopts == 2 and report.compiled_calls == 2, str(report)


def underflow(x):
    return np.exp(x) * 2.0


def test_underflow_reported_by_seterr_runs_in_the_interpreter():
    x = f64(-1000.0, 1.0)  # exp underflows to 0: NumPy warns only if asked to
    compiled = check(underflow, [(x,)] * 2)
    assert pyfront.explain(compiled).compiled_calls == 1
    old = np.seterr(under="warn")
    try:
        check(underflow, [(x,)] * 2)  # a fresh function, compiled under under='warn'
        with pytest.warns(RuntimeWarning, match="underflow encountered in exp"):
            compiled(x)
    finally:
        np.seterr(**old)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 1 and report.interpreter_reasons[FP_ERRSTATE_REASON] == 1, str(report)


def test_explain_names_the_op_and_line_and_suspends_after_repeated_events():
    fn, ok, bad = CASES["log of 0"]
    with np.errstate(all="ignore"):
        # No input holds NaN or inf and the function makes none quietly: exact per-op checks would fail
        # on these events just the same, so nothing is recompiled; GIVE_UP_AFTER of them suspend the variant.
        compiled = check(fn, [ok, ok] + [bad] * (GIVE_UP_AFTER + 2) + [ok])
    report = pyfront.explain(compiled)
    line = log.__code__.co_firstlineno + 1
    assert any(f"{__file__}:{line}:" in site and "[fp-error] floating-point divide by zero or invalid value in log"
               in site for site in report.deopt_reasons), str(report)
    assert report.deopts == GIVE_UP_AFTER and report.compilations == 1 and not report.relaxations, str(report)
    assert any("compiled code suspended for" in r for r in report.interpreter_reasons), str(report)


def three_rows(a, b, c):
    return np.exp(a) * 2.0, np.log(b) + 1.0, np.sqrt(c) - 1.0


def test_pooled_checks_name_the_op_of_the_row_that_failed():
    """Small checked values share one reduction per dtype (passes/pooled_checks.py), each group a row
    with its own guard: an event deopts naming its own op only."""
    ok = (np.zeros((2, 3), np.float32), np.ones(5, np.float32), np.ones(4))
    overflow = (np.full((2, 3), 100.0, np.float32), *ok[1:])
    invalid = (*ok[:2], np.array([1.0, -1.0, 4.0, 9.0]))
    with np.errstate(all="warn", under="ignore"):
        compiled = check(three_rows, [ok, ok, overflow, ok, invalid, ok])
    report = pyfront.explain(compiled)
    assert report.deopts == 2 and report.compiled_calls == 3, str(report)
    sqrt_row, exp_row = sorted(site.partition("[fp-error] ")[2] for site in report.deopt_reasons)
    assert exp_row.startswith("floating-point overflow in exp; or ") and "sqrt" not in exp_row, str(report)
    assert sqrt_row.startswith("floating-point invalid value in sqrt; or ") and "exp" not in sqrt_row, str(report)
    assert "log" not in exp_row + sqrt_row, str(report)


def scaled_exp(x):
    return np.exp(x) * 2.0


def test_flushed_subnormals_suspend_without_a_useless_recompile():
    """exp(-720) is a float64 subnormal: IREE flushes it, the compiled call deopts (the result is
    marked NaN) and NumPy answers, with no warning. Exact per-op checks would fail on it just the
    same, so the variant is not recompiled: repeated failures suspend it (pyfront/api.py)."""
    ok, flushed = (f64(0.0, 1.0),), (f64(0.0, -720.0),)
    compiled = check(scaled_exp, [ok, ok] + [flushed] * (GIVE_UP_AFTER + 1) + [ok])
    report = pyfront.explain(compiled)
    assert report.deopts == GIVE_UP_AFTER and report.compilations == 1 and not report.relaxations, str(report)


# Control flow: the flags of ops in loops and branches are carried out of them -------


def grow(x, n):
    for i in range(n):
        x = np.exp(x) - 2.0
    return x


def test_event_inside_a_loop():
    # 300 iterations: beyond the unroll budget, an scf.for.
    calls = [(f64(0.5, 0.1), 300), (f64(0.5, 0.1), 300), (f64(0.5, 3.0), 300), (f64(0.5, 0.1), 300)]
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(grow, calls))


def halve_then_log(x):
    while np.abs(x).max() > 1.0:
        x = x / 2
    return np.log(x)


def test_event_inside_a_while_loop_and_after_it():
    calls = [(f64(5.0, 3.0),), (f64(8.0, 0.5),), (f64(8.0, 0.0),), (f64(3.0, 0.5),)]
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(halve_then_log, calls))


def branchy(x):
    if x.sum() > 0:
        y = np.log(x)
    else:
        y = np.sqrt(-x)
    return y


def test_event_inside_a_branch_compiled_as_control_flow():
    pos, neg = (f64(1.0, 2.0),), (f64(-1.0, -2.0),)
    with np.errstate(all="warn", under="ignore"):
        compiled = check(branchy, [pos, neg, pos, neg, pos, neg, (f64(3.0, 0.0),), (f64(-3.0, 1.0),), pos, neg])
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 2 and sum(
        n for site, n in report.deopt_reasons.items() if "fp-error" in site) == 2, str(report)


# Gradients: the loss's events deopt, the interpreter's tape warns --------------------


def loss(w, x):
    return np.sum(np.log(x @ w))


def train_step(w, x):
    value, g = pyfront.value_and_grad(loss)(w, x)
    return value, w - 0.1 * g


def test_event_in_a_compiled_gradient():
    w = f64(0.5, 0.25)
    ok, bad = (w, f64(1.0, 2.0, 3.0, 4.0).reshape(2, 2)), (w, f64(0.0, 0.0, 3.0, 4.0).reshape(2, 2))
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(train_step, calls_of(ok, bad)))


def gate_loss(w, x):
    z = x @ w
    return np.sum(np.exp(z[:, :1]) ** 2) + np.sum(np.tanh(z[:, 1:]))


def gate_step(w, x):
    return pyfront.value_and_grad(gate_loss)(w, x)


def test_event_in_a_cotangent_that_slice_grad_places_deopts():
    """z[:, :1]'s cotangent 2 e * e (e = exp(z)) overflows where the forward's e ** 2 does not; slice_grad
    places it in zeros, keeping all of it (no check of its own): the event still shows where the
    gradient is checked."""
    w = f64(0.5, 0.25, 1.0, -1.0).reshape(1, 4)
    ok, bad = (w, f64(1.0, 2.0).reshape(2, 1)), (w, f64(1.0, 709.4).reshape(2, 1))  # e = 1.2e154
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(gate_step, calls_of(ok, bad)))


# Dispatch shapes: checks next to a matmul must leave IREE a compilable dispatch ------


def test_mlp_forward_64x256_512_10_runs_compiled():
    """At 64x256-512-10, checking tanh's input gave the first matmul's dispatch a second
    result, whose tiles overflowed IREE's CPU stack limit (the call ran in the interpreter)."""
    from bench.programs.mlp_forward import PROGRAM

    rng = np.random.default_rng(0)
    size = PROGRAM.sizes["64x256-512-10"]
    calls = [PROGRAM.make_inputs(size, rng) for _ in range(3)]
    with np.errstate(all="warn", under="ignore"):
        compiled = check(PROGRAM.fn, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0 and report.deopts == 0, str(report)


def test_overflow_in_a_matmul_feeding_tanh_deopts():
    """tanh hides the matmul's inf: the checked copy of its input must still see it."""
    from bench.programs.mlp_forward import PROGRAM

    x, w1, b1, w2, b2 = PROGRAM.make_inputs(PROGRAM.sizes["8x32-64-10"], np.random.default_rng(1))
    big = np.full_like(x, 1e30)
    calls = [(x, w1, b1, w2, b2), (x, w1, b1, w2, b2), (big, w1 * 1e20, b1, w2, b2), (x, w1, b1, w2, b2)]
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(PROGRAM.fn, calls))


def grow_then_shrink(x, n):
    for i in range(n):
        x = np.exp(x) * 0.1
    for i in range(n):
        x = np.log(x + 2.0)
    return x


def test_two_loops_compile_and_an_event_in_the_first_deopts():
    # Values of the first loop's body covered by its yield are not checked again before the second loop.
    ok, bad = (f64(-50.0, -60.0), 300), (f64(-50.0, 710.0), 300)
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(grow_then_shrink, calls_of(ok, bad)))


# Ops that hide a NaN/inf pass the taint on (result - (v - v)): same results, same deopts --


def capped(x):
    return np.minimum(np.exp(x), 3.0)  # minimum(inf, 3) is 3


def gated(x):
    return np.where(x < 100.0, np.exp(x), 0.0)  # where drops exp's inf


def signed_zero(x):
    return np.minimum(np.exp(x) * -0.0, 1.0)  # -0.0, and stays so: -0.0 - (v - v) is -0.0


@pytest.mark.parametrize("fn", [capped, gated])
def test_absorbed_overflow_deopts(fn):
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(fn, calls_of((f64(1.0, 2.0),), (f64(1.0, 800.0),))))


def test_taint_forwarding_keeps_negative_zero():
    compiled = check(signed_zero, [(f64(1.0, 2.0),)] * 3)
    assert np.signbit(compiled(f64(1.0, 2.0))).all() and pyfront.explain(compiled).compiled_calls > 0


def sliced_product(x, w):
    m = x @ w
    return m[0], m > 0.0


def test_checked_matmul_result_read_by_a_slice_and_a_comparison():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((8, 4)), rng.standard_normal((4, 6))
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(sliced_product, calls_of((x, w), (x * 1e200, w * 1e200))))


def masked_scores(q, k, mask):
    s = np.where(mask, q @ k.T, -np.inf)  # where gets no taint to pass on: -inf is no event
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_minus_inf_mask_on_a_matmul_runs_compiled_after_one_relaxation():
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((4, 8)), rng.standard_normal((5, 8))
    mask = rng.standard_normal((4, 5)) > -0.5
    mask[:, 0] = True
    compiled = check(masked_scores, [(q, k, mask)] * 5)  # exp(-inf) fails the deferred check, as above
    report = pyfront.explain(compiled)
    assert report.deopts == 2 and report.compiled_calls == 2, str(report)


def gates(x, w):
    z = x @ w  # not checked itself: its slices read all of it and carry its taint on
    i = 1.0 / (1.0 + np.exp(-z[:, :2]))  # 1 / (1 + inf) is 0: hides exp's overflow
    g = np.tanh(z[:, 2:])  # tanh(inf) is 1: hides the matmul's
    return i * g


def gates_skipping_column_2(x, w):
    z = x @ w  # checked: no slice reads column 2
    return np.tanh(z[:, :2]), np.tanh(z[:, 3:])


GATE_CASES = {
    "overflow in a gate's exp": (gates, 0, -1e3),
    "overflow in the matmul under tanh": (gates, 3, 1e308),
    "overflow in the matmul where no slice reads": (gates_skipping_column_2, 2, 1e308),
}


@pytest.mark.parametrize("fn, column, value", GATE_CASES.values(), ids=GATE_CASES.keys())
def test_slices_of_a_matmul_result_pass_its_taint_on_where_they_read_all_of_it(fn, column, value):
    rng = np.random.default_rng(5)
    x, w = np.abs(rng.standard_normal((4, 3))) + 1.0, rng.standard_normal((3, 4))
    big = w.copy()
    big[:, column] = value  # only that column of z sees the event
    with np.errstate(all="warn", under="ignore"):
        assert_deopted_and_ran_compiled(check(fn, calls_of((x, w), (x, big))))


def relu_then_matmul_and_mask(x, w, v):
    h = np.maximum(x @ w, 0.0)  # not checked: h @ v keeps all of it, and is checked
    return h @ v, h > 0.0


def test_a_value_the_next_matmul_keeps_is_not_checked_where_a_comparison_reads_it():
    rng = np.random.default_rng(6)
    x, w, v = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), rng.standard_normal((5, 2))
    with np.errstate(all="warn", under="ignore"):
        compiled = check(relu_then_matmul_and_mask, calls_of((x, w, v), (np.abs(x) + 1.0, np.full((3, 5), 1e308), v)))
    assert_deopted_and_ran_compiled(compiled)


def cross_entropy_of_probabilities(p, y):
    with np.errstate(divide="ignore"):  # log(0) = -inf, masked out below
        logp = np.log(p)
    return -np.where(y > 0, logp, 0.0).sum()


def ratios(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = a / b
    return np.nan_to_num(r), a / np.maximum(b, 1.0)  # (the second outside: checked)


def nested_settings(a, b):
    with np.errstate(all="ignore"):
        with np.errstate(divide="warn"):  # warns again inside
            r = a / b
        s = np.sqrt(a - 10)  # invalid: still ignored
    return r, s


P, Y = np.array([0.0, 0.5, 0.5]), np.array([0.0, 1.0, 1.0])
A, B = np.array([1.0, 0.0, 2.0]), np.array([0.0, 0.0, 4.0])


@pytest.mark.parametrize("fn, calls", [
    (cross_entropy_of_probabilities, [(P, Y)] * 5),  # -inf logs: two deopts, then per-op checks
    (ratios, [(A, B)] * 3 + [(A * 1e300, B * 1e-300)] + [(A, B)] * 2),  # an overflow is reported
    (nested_settings, [(A[:2], B[:2])] * 2 + [(A[:2], B[:2] + 1.0)] * 3),  # the first two warn
])
def test_errstate_blocks_compile_ignoring_what_they_ignore(fn, calls):
    report = pyfront.explain(check(fn, calls))
    assert report.compiled_calls > report.verified_calls, str(report)


def underflow_raised(a):
    with np.errstate(under="raise"):
        return a * 1e-300


def test_errstate_on_underflow_runs_in_the_interpreter():
    report = pyfront.explain(check(underflow_raised, [(np.ones(2),)] * 3))
    assert report.compiled_calls == 0 and "compiled code does not see underflow" in str(report), str(report)
