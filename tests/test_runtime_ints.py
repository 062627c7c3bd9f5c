"""Python ints as runtime values: an int argument seen with several values is relaxed to an
int64 operand (one variant for all its values), with guards where Python's unbounded ints,
exact comparisons or exceptions would differ from int64 arithmetic."""

import numpy as np
import pyfront
import pytest

from tests.differential import check

X = np.arange(40.0).reshape(20, 2)


def minibatch(X, i, B):
    xb = X[i * B:(i + 1) * B]
    return xb * i + (i // 3) - i % 4


def test_minibatch_index_compiles_once_for_every_value():
    data = np.arange(400.0).reshape(200, 2)
    compiled = check(minibatch, [(data, i, 4) for i in range(50)])  # 50 values of i
    report = pyfront.explain(compiled)
    assert report.compilations <= 3 and report.compiled_calls >= 45, report
    assert any("arg1: Python int value -> runtime operand" in r for r in report.relaxations)


def adam_scale(lr, b1, b2, t):
    return lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)


def test_powers_of_a_step_counter():
    compiled = check(adam_scale, [(0.001, 0.9, 0.999, t) for t in range(1, 21)])
    assert pyfront.explain(compiled).compilations == 1


def int_arithmetic(x, n):
    return x * (n * 3 - 7), n // 2, n % 5, -n, n / 4, n > 2, float(n) * 0.5


@pytest.mark.parametrize("values", [
    [3, 4, 5, -6, 7],
    [2, 3, 2 ** 62, 5],  # n * 3 passes int64: the interpreter's big int
    [2, 3, 2 ** 70, 4],  # beyond int64: a key (and variant) of its own
])
def test_python_int_semantics(values):
    assert pyfront.explain(check(int_arithmetic, [(X[:2], n) for n in values])).compiled_calls > 0


def divide(x, n):
    return x[0, 0] + 10 // n


def test_division_by_a_zero_int_raises_zero_division_error():
    check(divide, [(X, 2), (X, 3), (X, 0), (X, 5)])


def with_int8(a, n):
    return a + n  # NumPy 2: a Python int out of int8's range raises OverflowError


def test_weak_int_out_of_the_arrays_range_raises_as_numpy():
    a = np.arange(4, dtype=np.int8)
    check(with_int8, [(a, 1), (a, 2), (a, 300), (a, 3)])


def np_function_of_ints(n):
    return np.sqrt(n), np.add(n, 1), n ** 0.5


def test_numpy_functions_of_python_scalars_return_numpy_scalars():
    assert pyfront.explain(check(np_function_of_ints, [(n,) for n in (4, 9, 16)])).compiled_calls > 0


def token_pair(embedding, tokens, position):
    center, context = tokens[position], tokens[position - 1]
    return embedding[center] * embedding[context], center  # the item: a Python int


def scaled_by_item(x, scales, position):
    return x * scales[position] - scales[position - 1], scales[position]


@pytest.mark.parametrize("fn, items", [(token_pair, [3, 1, 4, 1, 5, 9, 2, 6]),
                                       (scaled_by_item, (0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5))],
                         ids=["list of ints", "tuple of floats"])
def test_a_sequence_indexed_by_a_runtime_int(fn, items):
    x = np.arange(40.0).reshape(10, 4)
    positions = [1, 2, 3, 4, 5, 6, 7, -1, -8, 0, 8, 11, 3]  # 0 reads items[-1]; 8, 11 and -8 - 1 raise IndexError
    report = pyfront.explain(check(fn, [(x, items, p) for p in positions]))
    assert report.compilations <= 2 and report.compiled_calls >= 8, report  # not one variant per position
