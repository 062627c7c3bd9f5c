"""and/or and comparison chains on computed values, and f-strings of compile-time values.

Python evaluates `b` in `a or b`, `a and b` and `x < y < b` only when `a` (or `x < y`) does not
decide the result; compiled code must print, store and draw exactly as often. Each test runs
the calls compiled and in the interpreter (tests/differential.py) and, where the function
compiles, asserts that compiled code ran.
"""

import numpy as np
import pyfront

from tests.differential import check


def ran_compiled(compiled) -> bool:
    return pyfront.explain(compiled).compiled_calls > 0


def window_bounds(x, n, i):
    inside = 0 <= i < n
    edge = i == 0 or not 0 <= i + 1 < n
    positive = bool(x.sum() > 0) and i > 1 or i == n
    return x * 2.0, inside, edge, positive


def test_chains_and_boolean_operators_on_runtime_ints_compile():
    calls = [(np.arange(3.0) - k, 5, i) for k in range(3) for i in (-1, 0, 1, 3, 4, 5, 7)]
    assert ran_compiled(check(window_bounds, calls))


def shout(x):
    print("evaluated", x.sum())
    return True


def or_with_a_printing_operand(x, flag):
    return x + 1.0, flag or shout(x)


def test_a_known_left_operand_skips_the_right_one():
    calls = [(np.ones(2), True), (np.ones(2), True), (np.ones(2), 0), (np.ones(2), 0)]
    assert ran_compiled(check(or_with_a_printing_operand, calls))


def chain_with_a_printing_comparator(x, n):
    return x - 1.0, 0 < n < shout(x) + 5


def test_a_failed_comparison_ends_the_chain_before_the_next_comparator():
    calls = [(np.ones(2), 0), (np.ones(2), 0), (np.ones(2), 3), (np.ones(2), 3), (np.ones(2), 9)]
    assert ran_compiled(check(chain_with_a_printing_comparator, calls))


def computed_or_with_a_printing_operand(x):
    return bool(x.sum() > 0) or shout(x)


def test_a_computed_left_operand_prints_only_when_python_would():
    calls = [(np.ones(2),), (-np.ones(2),), (np.ones(2),), (-np.ones(2),), (np.zeros(2),)]
    report = pyfront.explain(check(computed_or_with_a_printing_operand, calls))
    # The print would sit in a branch on a computed value: the interpreter runs the call, and says so.
    assert [b.reason for b in report.blockers] == ["print inside a branch on a computed value is not supported yet"]


def mixed_types(x, i):
    return x.sum() > 0 and i > 1  # NumPy bool or Python bool, depending on the data


def test_operands_of_different_python_types_run_in_the_interpreter():
    calls = [(np.ones(2), 3), (-np.ones(2), 3), (np.ones(2), 0), (-np.ones(2), 4)]
    report = pyfront.explain(check(mixed_types, calls))
    assert report.compiled_calls == 0 and any("Python type would depend on the branch" in b.reason
                                              for b in report.blockers), str(report)


def params_by_name(params, x):
    for i in range(1, 3):
        x = np.tanh(x @ params[f"W{i}"] + params["b%d" % i])
    return x, f"{x.shape}", f"{0.5:.3f}|{'a'!r}|{i:>{i + 2}}"


def test_f_strings_of_compile_time_values_compile():
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(4, 3)), "b1": np.zeros(3), "W2": rng.normal(size=(3, 2)), "b2": np.ones(2)}
    calls = [(params, rng.normal(size=(5, 4))) for _ in range(3)]
    assert ran_compiled(check(params_by_name, calls))


def text_of_a_computed_value(x):
    return f"{x.sum():.2f}".upper()


def test_text_of_a_computed_value_used_as_a_str_names_itself():
    compiled = check(text_of_a_computed_value, [(np.ones(2),)] * 3)
    report = pyfront.explain(compiled)
    assert [b.reason for b in report.blockers] == [
        "str.upper: text made from values computed at run time is only printed, returned or stored by "
        "compiled code"], str(report)
