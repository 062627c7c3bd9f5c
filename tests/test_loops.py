"""Loops: static unrolling on compile-time values, scf.while on computed conditions."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

from tests.corpus.cs231n_layers import conv_forward_naive

import pyfront

pytestmark = pytest.mark.iree


def converge(x):
    while np.abs(x).max() > 1.0:
        x = x / 2
    return x


def test_while_on_a_computed_condition():
    calls = [(np.array(v),) for v in ([5.0, 1.0], [100.0, -3.0], [1e6, 1.0], [7.0, 7.0])]
    compiled = check(converge, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 3, str(report)  # (the text names a lost device: tests/test_vulkan.py)


def test_while_that_does_not_run_returns_the_argument_itself():
    small = np.array([0.5, 0.1])
    compiled = check(converge, [(np.array([4.0, 1.0]),), (np.array([4.0, 1.0]),), (small,), (small,)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 1 and report.deopts == 2, str(report)


def newton_sqrt(a):
    x = a.copy()
    y = a * 0.5
    while np.abs(y - x).max() > 1e-12:
        x = y
        y = 0.5 * (x + a / x)
    return y


def test_newton_iteration_is_exact():
    calls = [(np.array(v),) for v in ([2.0, 9.0], [16.0, 3.0], [1e-3, 1e3])]
    compiled = check(newton_sqrt, calls + calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 4, str(report)  # (the text names a lost device: tests/test_vulkan.py)


def power_iteration(a, steps):
    v = np.ones(a.shape[0]) / a.shape[0]
    for _ in range(steps):
        v = a @ v
        v = v / np.sqrt((v * v).sum())
    return v


def test_for_range_on_a_compile_time_count_is_unrolled():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    compiled = check(power_iteration, [(a, 5), (a, 5), (a, 8), (a, 8)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 3 and report.compilations == 2, str(report)


def count_while(x):
    n = 0
    while x.sum() > 1:
        x = x / 2
        n += 1
    return x, n


def test_python_int_counter_in_a_computed_loop_runs_interpreted():
    # (Carried as an int64, `n += 1` needs a guard against overflowing it: not yet inside scf.while.)
    x = np.array([8.0, 8.0])
    compiled = check(count_while, [(x,), (x,), (x,)])
    assert "inside a while loop on a computed condition" in str(pyfront.explain(compiled))


def run_rnn(seq, h, w):
    for x in seq:
        h = np.tanh(x @ w + h)
    return h, x


def test_for_over_a_sequence_of_varying_length_becomes_scf_for():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3)) * 0.5
    calls = [(rng.standard_normal((n, 3)), np.zeros(3), w) for n in (4, 3, 5, 2, 7, 4)]
    compiled = check(run_rnn, calls, profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.compilations == 1 and report.compiled_calls == 4, str(report)
    seq = rng.standard_normal((6, 3))
    _, last = compiled(seq, np.zeros(3), w)
    assert np.shares_memory(last, seq)  # the loop variable is a view of the last row, as in NumPy


def long_loop(xs, h, w):
    for i in range(300):
        h = np.tanh(xs[i] @ w + h * 0.5)
    return h


def test_loop_beyond_the_unroll_budget_becomes_scf_for():
    rng = np.random.default_rng(3)
    w, xs = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((300, 3))
    compiled = check(long_loop, [(xs, np.zeros(3), w)] * 3)
    assert pyfront.explain(compiled).compiled_calls == 2
    short = rng.standard_normal((100, 3))  # xs[i] would raise IndexError: interpreted, and it raises
    check(long_loop, [(short, np.zeros(3), w)] * 2)


def first_rows(x, limit):
    total = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        if i == limit:
            break
        if i % 2:
            continue
        total = total + x[i]
    return total


def test_break_and_continue_in_unrolled_loops():
    x = np.arange(12.0).reshape(6, 2)
    compiled = check(first_rows, [(x, 4), (x, 4), (x, 10), (x, 10)])
    assert pyfront.explain(compiled).compiled_calls == 3


def stop_early(x):
    for row in x:
        if row.sum() > 3:
            break
        x = x * 2
    return x


def test_break_on_a_computed_condition_is_speculated_or_interpreted():
    small, big = np.zeros((3, 2)), np.full((3, 2), 5.0)
    check(stop_early, [(small,), (small,), (big,), (big,), (small,)])


GAMMA = 0.99


def discount_rewards(r):
    # Policy-gradient style: a long reversed loop; `running` starts as a Python float and becomes
    # a NumPy float64 in the first iteration (peeled), then the loop is an scf.for.
    out = np.zeros_like(r)
    running = 0.0
    for t in reversed(range(r.size)):
        running = running * GAMMA + r[t]
        out[t] = running
    return out


def discount_with_resets(r):
    # pg-pong's reset at game boundaries: `running = 0` (an int) on one path and a float64 on the
    # other; the next statement, taken into both branches, makes it a float64 on both again.
    out = np.zeros_like(r)
    running = 0
    for t in range(len(r) - 1, -1, -1):
        if r[t] != 0:
            running = 0
        running = running * GAMMA + r[t]
        out[t] = running
    return out


def _rewards(seed, n=300):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(n) < 0.05, rng.choice([-1.0, 1.0], n), 0.0)


@pytest.mark.parametrize("fn", [discount_rewards, discount_with_resets])
def test_long_reversed_loops_with_writes_compile_without_a_trip_count_limit(fn):
    compiled = check(fn, [(_rewards(seed),) for seed in range(4)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 3 and report.compilations == 1, str(report)


def writes_in_a_branch_in_a_loop(r):
    out = np.zeros_like(r)
    for t in range(r.size):
        if r[t] != 0:
            out[t] = 1.0
    return out


def test_an_array_written_in_a_branch_inside_an_scf_for_is_carried():
    # Before: the loop yielded the array from before the branch (the verified call caught it).
    compiled = check(writes_in_a_branch_in_a_loop, [(np.array([1.0, 0.0, -2.0, 0.0]),)] * 4)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 3 and not report.verify_failures, str(report)


def babylonian_sqrt(a):
    x = a.copy()
    while True:
        x = 0.5 * (x + a / x)
        if np.abs(x * x - a).max() < 1e-9:
            break
    return x


def test_while_true_with_one_computed_break_compiles():
    calls = [(np.array(v),) for v in ([2.0, 9.0], [16.0, 1.0], [1e4, 3.0], [0.25, 2.0])]
    compiled = check(babylonian_sqrt, calls)
    assert pyfront.explain(compiled).compiled_calls == 3, str(pyfront.explain(compiled))


def reversed_range_is_exhausted_once(x):
    steps = reversed(range(3))
    for i in steps:
        x = x + i
    for j in steps:  # Python finds the iterator exhausted: no iteration
        x = x * 100.0
    return x


def test_reversed_range_iterates_once():
    # A second loop over the same iterator is refused (the interpreter's answer, not a re-run).
    compiled = check(reversed_range_is_exhausted_once, [(np.ones(2),)] * 3)
    assert "iterating an iterator a second time" in str(pyfront.explain(compiled))


def not_of_a_computed_value(x):
    return not (x.sum() > 2.0), not x[0]


def test_not_of_a_computed_value_is_a_python_bool():
    compiled = check(not_of_a_computed_value, [(np.array([1.0, 0.0]),), (np.array([3.0, 1.0]),)] * 2)
    assert pyfront.explain(compiled).compiled_calls == 3


class LogisticRegression:
    """`fit` as ML-from-scratch repositories write it: weights on self, updated every iteration."""

    def __init__(self, lr=0.1, n_iters=200):
        self.lr, self.n_iters = lr, n_iters
        self.weights, self.bias = None, None

    def _sigmoid(self, x):
        return 1 / (1 + np.exp(-x))

    def fit(self, X, y):
        n_samples, n_features = X.shape
        self.weights = np.zeros(n_features)
        self.bias = 0
        for _ in range(self.n_iters):
            y_predicted = self._sigmoid(np.dot(X, self.weights) + self.bias)
            dw = (1 / n_samples) * np.dot(X.T, (y_predicted - y))
            db = (1 / n_samples) * np.sum(y_predicted - y)
            self.weights -= self.lr * dw
            self.bias -= self.lr * db
        return self


@pytest.mark.parametrize("n_iters", [40, 300])
def test_attributes_updated_in_a_real_loop(n_iters):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(float)
    calls = [(LogisticRegression(n_iters=n_iters), X * k, y) for k in (1.0, 2.0, 0.5)]
    compiled = check(LogisticRegression.fit, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, report


def halve_until_small(x):
    v = x * 1.0
    for it in range(300):
        v = v * 0.5
        if v.max() < 1e-3:
            break
    return v, it


def converge_then_break(x):
    v = x * 1.0
    for it in range(300):
        w = v * 0.5  # bound first thing in each iteration: no value needed before the loop
        if np.max(np.abs(w - v)) < 1e-3:
            v = w + 1.0  # the statements before `break` run in the iteration that exits
            break
        v = w
    return v, it


def late_name(x):
    v = x * 1.0
    for it in range(300):
        if v.max() < 1e-3:
            break
        v = v * 0.5
        w = v  # bound after the exit test: unbound if the first iteration exits (NameError)
    return v, w


@pytest.mark.parametrize("fn", [halve_until_small, converge_then_break])
def test_range_loop_that_breaks_on_a_computed_condition(fn):
    compiled = check(fn, [(np.ones(3) * k,) for k in (1.0, 2.0, 1e-4, 1e9)])  # 1e9: runs all 300
    assert pyfront.explain(compiled).compiled_calls > 0, str(pyfront.explain(compiled))


def test_a_name_bound_after_the_exit_test_keeps_the_loop_interpreted():
    compiled = check(late_name, [(np.ones(3) * k,) for k in (1.0, 2.0, 1e-4)])
    assert "no value before it" in str(pyfront.explain(compiled))


def newest_estimate(x):
    v = x * 1.0
    for it in range(300):
        q = v * 0.5  # q's value from the previous iteration is never read
        if np.max(np.abs(q - v)) < 1e-3:
            break
        v = q
    return v, q, it


def test_loop_returning_a_value_bound_first_thing_in_the_body():
    """IREE 3.13 crashed compiling this loop once canonicalization dropped the body's unread
    arguments (loops.py keeps every argument read)."""
    compiled = check(newest_estimate, [(np.ones(3) * k,) for k in (1.0, 2.0, 1e-4, 1e9)])
    assert pyfront.explain(compiled).compiled_calls > 0


def offset_range_sum(x):
    t = x[0] * 0.0
    for i in range(3, 280, 2):  # a real loop whose counter starts past 0
        t = t + x[i] * i
    for j in range(5, 9):  # a short one
        t = t - x[j]
    return t, i, j


def test_range_loops_that_start_past_zero():
    compiled = check(offset_range_sum, [(np.arange(300.0) * k,) for k in (1.0, 2.0, 0.5)])
    assert pyfront.explain(compiled).compiled_calls > 0


# Names each iteration binds afresh (`window = ...`, an inner loop's counter) are not carried
# from iteration to iteration; their last values are kept for after the loop where they are arrays.


NO_PAD = {"stride": 1, "pad": 0}  # cs231n's naive convolution (tests/corpus): four nested loops


def test_a_loop_nest_too_large_to_unroll_compiles_with_iteration_local_names():
    rng = np.random.default_rng(0)
    calls = [(rng.normal(size=(2, 3, 8, 8)), rng.normal(size=(2, 3, 3, 3)), rng.normal(size=2), NO_PAD)
             for _ in range(3)]
    compiled = check(conv_forward_naive, calls, profile_calls=1)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > report.verified_calls, str(report)
    # Unrolled by the generator, its 2 x 2 x 6 x 6 windows were 144 reductions, each a kernel IREE
    # compiled separately (a minute); as scf.for loops the unroll pass unrolls what fits its budget.
    (variant,) = [v for group in compiled._groups.values() for v in group.variants]
    assert "scf.for" in variant.pyfront_ir


def test_a_loop_nest_too_large_for_one_scf_for_nests_scf_for_loops():
    # With a small graph budget not even one image's loops unroll: the n and f loops are scf.for
    # loops around scf.for loops (the unroll pass then unrolls what fits its budget of kernels).
    rng = np.random.default_rng(2)
    calls = [(rng.normal(size=(2, 3, 8, 8)), rng.normal(size=(3, 3, 3, 3)), rng.normal(size=3), NO_PAD)
             for _ in range(3)]
    report = pyfront.explain(check(conv_forward_naive, calls, profile_calls=1, max_graph_nodes=400))
    assert report.compiled_calls > report.verified_calls, str(report)


# Guards made in a real loop's body go after the loop, on "held in every iteration".


def count_correct(scores, labels, table):
    """Grokking's per-sample accuracy count (`int(argmax == label)`: a guard on ties of +0.0 and
    -0.0), an embedding row by a computed index (a bounds guard), and a branch the profile saw go one
    way (a speculation guard), in a loop too long to unroll."""
    correct, total = 0, np.zeros(table.shape[1])
    for i in range(len(scores)):
        correct += int(np.argmax(scores[i]) == labels[i])
        total = total + table[labels[i] * 2]
        if scores[i, 0] < 5.0:
            total = total * 0.5
    return correct, total


def test_guards_in_a_real_loop_hold_or_deopt():
    rng = np.random.default_rng(3)
    scores, labels, table = rng.normal(size=(300, 4)), rng.integers(0, 4, 300), rng.normal(size=(8, 2))
    far = scores.copy()
    far[7, 0] = 9.0  # the branch the profile never saw not taken
    ties = scores.copy()
    ties[5] = [0.0, -0.0, -1.0, -2.0]  # NumPy's argmax of a +0.0/-0.0 tie
    wide = labels.copy()
    wide[9] = 4  # table[8]: IndexError, from the interpreter
    calls = [(scores, labels, table), (scores * 2, labels, table), (scores, labels[::-1].copy(), table),
             (far, labels, table), (ties, labels, table), (scores, wide, table)]
    report = pyfront.explain(check(count_correct, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls and report.deopts >= 2, str(report)


# Writes into the caller's arrays inside a real loop: the loop carries the array's contents.


def per_sample_sgd(images, labels, W):
    """Grokking's per-sample loop at a dataset's length: the caller's weights updated in place every
    sample (`W += ...`) beside an int counter."""
    correct = 0
    for i in range(len(images)):
        x = images[i:i + 1]
        out = x.dot(W)
        correct += int(np.argmax(out) == labels[i])
        W += 0.01 * x.T.dot(np.eye(W.shape[1])[labels[i]:labels[i] + 1] - out)
    return correct


class Adaline:
    """Raschka's style: weights on `self`, `self.w_[1:] += ...` and `self.w_[0] += ...` per sample."""

    def __init__(self, n):
        self.w_ = np.linspace(-0.1, 0.1, n + 1)

    def epoch(self, X, y, eta):
        cost = 0.0
        for i in range(X.shape[0]):
            error = y[i] - (X[i].dot(self.w_[1:]) + self.w_[0])
            self.w_[1:] += eta * X[i] * error
            self.w_[0] += eta * error
            cost = cost + 0.5 * error ** 2
        return cost


class Perceptron:
    """Raschka's perceptron: `for xi, target in zip(X, y)` over the samples (an scf.for over rows,
    not unrolled), `self.w_[1:] += update * xi`, an int error count, a list in state appended to."""

    def __init__(self, n):
        self.eta, self.w_, self.errors_ = 0.1, np.linspace(-0.01, 0.01, n + 1), []

    def predict(self, X):
        return np.where(np.dot(X, self.w_[1:]) + self.w_[0] >= 0.0, 1, -1)

    def epoch(self, X, y):
        errors = 0
        for xi, target in zip(X, y):
            update = self.eta * (target - self.predict(xi))
            self.w_[1:] += update * xi
            self.w_[0] += update
            errors += int(update != 0.0)
        self.errors_.append(errors)
        return errors


def write_rows_through_views(X):
    for i in range(300):
        r = X[i]  # a view: the write goes to X (it once went to a copy: wrong with verify="off")
        r[0] = r[1] * 2.0
    Z = np.zeros_like(X)
    for i in range(300):
        z = Z[i]
        z[1] = X[i, 0]
    return X.sum(), Z


def test_a_real_loop_carries_the_callers_arrays_it_writes():
    rng = np.random.default_rng(4)
    images, labels = rng.random((300, 4)), rng.integers(0, 3, 300)
    calls = [(images * k, labels, rng.normal(size=(4, 3)) * 0.1) for k in (1, 2, 3)]
    report = pyfront.explain(check(per_sample_sgd, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls and not report.deopts, str(report)
    X, y = rng.normal(size=(300, 2)), rng.normal(size=300)
    calls = [(Adaline(2), X, y, eta) for eta in (0.01, 0.02, 0.005)]
    report = pyfront.explain(check(lambda model, X, y, eta: model.epoch(X, y, eta), calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)
    calls = [(rng.normal(size=(300, 3)),) for _ in range(3)]
    report = pyfront.explain(check(write_rows_through_views, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)


def last_row_after_writes(X):
    for x in X:
        x[0] = 5.0  # through the view: into X
    return x.sum()  # the last row shows the write (refused compiled: the row is taken before the loop)


def test_a_loop_over_the_rows_of_arrays_is_a_real_loop():
    # 300 samples: more rows than the generator unrolls (it once refused, and unrolled 100 samples
    # into a module IREE compiled for minutes).
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    calls = [(Perceptron(2), X * k, y) for k in (1, 2, 3)]
    report = pyfront.explain(check(lambda model, X, y: model.epoch(X, y), calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)
    check(last_row_after_writes, [(rng.normal(size=(300, 3)),) for _ in range(3)], profile_calls=1)
    xs = rng.normal(size=(300, 3))
    report = pyfront.explain(check(run_rnn, [(xs * k, np.zeros(3), np.eye(3) * 0.5) for k in (1, 2, 3)],
                                   profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)


def last_step(xs, W):
    for t in range(xs.shape[0]):
        pre = W @ xs[t]
        k = t * 2 + 1
        y = np.tanh(pre) * k
    return y, pre, k, t


def read_before_bound(xs):
    acc = np.zeros(xs.shape[1])
    for t in range(xs.shape[0]):
        if t > 0:
            acc = acc + prev
        prev = xs[t] * 2.0
    return acc


def test_iteration_local_names_keep_their_last_values_after_a_real_loop():
    rng = np.random.default_rng(1)
    calls = [(rng.normal(size=(40, 3)), rng.normal(size=(4, 3))) for _ in range(3)]  # 40: too long to unroll
    report = pyfront.explain(check(last_step, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)
    # A name read before the iteration binds it needs the last iteration's value: not a real loop.
    check(read_before_bound, [(rng.normal(size=(40, 3)),) for _ in range(3)], profile_calls=1)


def halve_until_small(x, tol):
    err, steps = 1.0, 0.0
    while err > tol and steps < 30.0:  # an np.bool_-or-bool test: only its truth matters
        x = x * 0.5
        err = float(np.abs(x).max())
        steps += 1.0  # a Python float the loop carries
    return x, steps


def halve_until_done(x):
    done, steps = False, 0.0
    while not done:
        x = x * 0.5
        steps += 1.0
        done = steps >= 7.0  # a Python bool the loop carries
    return x, steps, done


def halve_until_small_or_done(x, tol):
    err, steps, done = 1.0, 0.0, False
    while err > tol and not done:  # err and done are bound before they are read in the body
        x = x * 0.5
        err = float(np.abs(x).max())
        steps += 1.0
        done = steps >= 30.0
    return x, steps, done


@pytest.mark.parametrize("fn, make", [(halve_until_small, lambda k: (np.arange(3.0) * k, 0.01)),
                                      (halve_until_done, lambda k: (np.arange(3.0) * k,)),
                                      (halve_until_small_or_done, lambda k: (np.arange(3.0) * k, 0.01))])
def test_while_loops_carry_python_numbers(fn, make):
    compiled = check(fn, [make(k) for k in range(1, 6)])
    assert pyfront.explain(compiled).compiled_calls > 0, str(pyfront.explain(compiled))
