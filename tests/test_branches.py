"""Branches on computed values: speculation with guards, deopt, relaxation to scf.if."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def signed_scale(x, t):
    if x.sum() > t:
        y = x * 2
    else:
        y = -x
    return y + 1


def test_branch_that_flips_after_profiling_deopts_then_compiles_both_ways():
    x = np.arange(4.0)
    low, high = np.float64(0.0), np.float64(100.0)  # NumPy scalars: one variant for all values
    calls = [(x, low)] * 3 + [(x, high)] + [(x, low), (x, high)] * 2
    compiled = check(signed_scale, calls)
    report = pyfront.explain(compiled)
    # Speculated on "always true", failed once (re-run in the interpreter),
    # then recompiled with real control flow: later flips no longer deopt.
    assert report.deopts == 1 and report.compilations == 2, str(report)
    assert report.compiled_calls == len(calls) - 2, str(report)


def test_branch_seen_both_ways_compiles_to_control_flow():
    x = np.arange(4.0)
    low, high = np.float64(0.0), np.float64(100.0)
    compiled = check(signed_scale, [(x, low), (x, high), (x, low), (x, high)], profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.deopts == 0 and report.compiled_calls == 2, str(report)


def early_return(x):
    y = x + 1
    if y.max() > 3:
        return y * 10
    z = y - 1
    return z, y


def early_return_same_type(x):
    y = x + 1
    if y.max() > 3:
        return y * 10
    return -y


def test_early_return():
    big, small = np.arange(5.0), np.zeros(5)
    compiled = check(early_return_same_type, [(big,), (big,), (small,), (small,), (big,)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 3, str(report)
    # Different result structure on each path: interpreted, and correct.
    check(early_return, [(big,), (small,), (big,), (small,)], profile_calls=2)


def select_expr(x):
    return x * 2 if x.mean() > 0 else x * 3


def test_conditional_expression():
    x = np.linspace(-1, 2, 6)
    compiled = check(select_expr, [(x,), (-x,), (x,), (-x,)], profile_calls=2)
    assert pyfront.explain(compiled).compiled_calls == 2


def pair(x):
    if x[0] > 0:
        a, b = x + 1, x * 2
    else:
        a, b = x - 1, x * 3
    return a, b


def test_tuples_and_several_variables_merge():
    x = np.array([1.0, -2.0, 3.0])
    compiled = check(pair, [(x,), (-x,), (x,), (-x,)], profile_calls=2)
    assert pyfront.explain(compiled).compiled_calls == 2


class Model:
    def __init__(self):
        self.w = np.eye(3)
        self.b = np.ones(3)

    def forward(self, x):
        h = x @ self.w
        if h.sum() > 0:
            h = h + self.b
        return h


def forward(model, x):
    return model.forward(x)


def test_state_read_inside_a_branch():
    x = np.array([[1.0, 2.0, 3.0]])
    compiled = check(forward, [(Model(), x), (Model(), -x), (Model(), x), (Model(), -x)], profile_calls=2)
    assert pyfront.explain(compiled).compiled_calls == 2


def nested(x):
    if x.sum() > 0:
        if x.max() > 2:
            y = x * 4
        else:
            y = x * 3
    else:
        y = x * 2
    return y


def test_nested_branches():
    calls = [(np.array([1.0, 5.0]),), (np.array([1.0, 1.0]),), (np.array([-1.0, -5.0]),)] * 2
    compiled = check(nested, calls, profile_calls=3)
    assert pyfront.explain(compiled).compiled_calls == 3


def one_sided(x):
    if x.sum() > 0:
        y = x * 2
    return y


def test_variable_bound_on_one_path_only_runs_interpreted():
    x = np.ones(2)
    compiled = check(one_sided, [(x,), (-x,), (x,), (-x,)], profile_calls=2)
    assert "assigned in only one branch" in str(pyfront.explain(compiled))


def ambiguous(x):
    if x > 0:
        return x
    return -x


def test_truth_of_an_array_raises_like_numpy():
    check(ambiguous, [(np.ones(3),), (np.ones(3),)])


CHECKED_INPUTS = """
import numpy as np

def checked_inputs(x, w):
    assert (x > -10).all(), f"inputs out of range: {x.min()}"  # the message only when it fails
    assert np.isfinite(x).all()
    return x @ w
"""


def test_an_assert_on_computed_values_is_a_guard_the_interpreter_raises_for(tmp_path):
    # (In a file of its own: pytest rewrites the asserts of test modules, and pyfront compiles
    # only functions whose source matches their code.)
    path = tmp_path / "checked.py"
    path.write_text(CHECKED_INPUTS)
    namespace = {}
    exec(compile(CHECKED_INPUTS, str(path), "exec"), namespace)
    w = np.ones((3, 2))
    calls = [(np.ones((4, 3)), w), (np.ones((4, 3)) * 2, w), (np.full((4, 3), -20.0), w), (np.ones((4, 3)), w)]
    report = pyfront.explain(check(namespace["checked_inputs"], calls))
    assert report.deopts == 1 and report.compiled_calls == 2, str(report)


def constants_by_branch(y, x):
    labels = np.array([1 if v > 0 else 0 for v in y])
    sign = 1.0 if x.sum() > 0 else -1.0
    flag = True if x[0] > x[1] else False
    scale = np.float32(0.5) if x[1] > 0 else np.float32(2.0)
    return labels, sign * x, flag, scale


def int_too_large(x):
    return 10 ** 20 if x[0] > 0 else 0


def test_python_constants_chosen_by_a_computed_condition():
    calls = [(np.array([1.5, -2.0, 0.0]), np.array([0.5, -1.0])), (np.array([-1.0, 2.0, 3.0]), np.array([-0.5, 1.0])),
             (np.array([0.0, 0.0, 1.0]), np.array([2.0, 3.0]))]
    compiled = check(constants_by_branch, calls)
    assert pyfront.explain(compiled).compiled_calls > 0
    compiled = check(int_too_large, [c[1:] for c in calls])
    assert "out of range for int64" in str(pyfront.explain(compiled))  # 10 ** 20: the interpreter's


class Perceptron:
    """A perceptron as tutorials write it: labels mapped by a comprehension, a loop over the rows."""

    def __init__(self, lr=0.01, n_iters=2):
        self.lr, self.n_iters = lr, n_iters

    def fit(self, X, y):
        self.weights, self.bias = np.zeros(X.shape[1]), 0
        y_ = np.array([1 if i > 0 else 0 for i in y])
        for _ in range(self.n_iters):
            for idx, x_i in enumerate(X):
                y_predicted = np.where(np.dot(x_i, self.weights) + self.bias > 0, 1, 0)
                update = self.lr * (y_[idx] - y_predicted)
                self.weights += update * x_i
                self.bias += update
        return self.weights, self.bias


def test_textbook_perceptron_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    calls = [(Perceptron(), X * k, np.where(X[:, 0] > 0, 1, -1)) for k in (1.0, 2.0, -1.0)]
    compiled = check(Perceptron.fit, calls)
    assert pyfront.explain(compiled).compiled_calls > 0


# An argument on one path, a new array on the other: the merged value is that object where the
# argument's path ran (returned, stored, viewed as itself), and the new array where not.


def clip_by_norm(g, max_norm):
    norm = np.sqrt(np.sum(g * g))
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g


def pick_and_view(x, y):
    if x.sum() > 0:
        z = x
    else:
        z = y * 2.0
    return z, z.T, z[1:], z + 1.0


class Holder:
    def __init__(self, w):
        self.w = w


def keep_or_rescale(h, x):
    w = h.w
    if x.sum() > 0:
        w = w * 0.5
    h.last = w
    return w @ x


A = np.arange(6.0).reshape(2, 3) / 10


def _compiled_both_ways(report) -> None:
    assert report.deopts == 0 and report.compiled_calls > report.verified_calls, str(report)


def test_gradient_clipping_returns_the_argument_itself_when_not_clipped():
    calls = [(A * k, 1.0) for k in (1, 30, 2, 40, 1, 50)]
    _compiled_both_ways(pyfront.explain(check(clip_by_norm, calls, profile_calls=2)))


def test_an_argument_merged_with_a_new_array_keeps_its_views_and_identity():
    calls = [(A * k, A + 1) for k in (1, -1, 2, -3, 1)]
    _compiled_both_ways(pyfront.explain(check(pick_and_view, calls, profile_calls=2)))


def test_state_merged_with_a_new_array_is_stored_as_that_object():
    w = np.eye(3)
    calls = [(Holder(w), x) for x in (np.ones(3), -np.ones(3), np.ones(3), -np.ones(3), np.ones(3))]
    compiled = check(keep_or_rescale, calls, profile_calls=2)
    _compiled_both_ways(pyfront.explain(compiled))
    h = Holder(w)
    compiled(h, -np.ones(3))
    assert h.last is w  # the very array, as in the interpreter


def write_after_merge(x):
    if x.sum() > 0:
        x = x * 2.0
    x[0] = 5.0
    return x


def test_writing_into_an_array_that_is_the_argument_on_one_path_runs_in_the_interpreter():
    compiled = check(write_after_merge, [(A * k,) for k in (1, -1, 2, -3)], profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and "the caller's on one path of a branch" in str(report), str(report)


def hinge_rows(scores, y):
    """`continue` in a branch on a computed value, and writes in a branch (the naive SVM loss's loop)."""
    grad = np.zeros(scores.shape)
    for i in range(scores.shape[0]):
        for j in range(scores.shape[1]):
            if j == y[i]:
                continue
            margin = scores[i, j] - scores[i, y[i]] + 1.0
            if margin > 0:
                grad[i, j] += 1.0
                grad[i, y[i]] -= 1.0  # a computed index: its bounds guard goes after the branch
    return grad


def test_continue_and_index_guards_inside_branches_on_computed_values():
    scores = np.array([[0.5, 2.0, -1.0], [3.0, 0.0, 0.25]])
    y = np.array([1, 0])
    out_of_range = np.array([1, 3])  # IndexError on a row whose margins are positive: the interpreter raises it
    calls = [(scores, y), (scores, np.array([0, 2])), (scores, y), (scores, out_of_range), (-scores, y)]
    compiled = check(hinge_rows, calls, profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 2 and not report.interpreter_reasons, str(report)


def written_through_an_alias(x):
    a = x * 1.0
    b = a
    if x.sum() > 0:
        a[0] = 1.0
    b[1] = 2.0
    return a, b


def compile_time_array_written_in_a_branch(x):
    a = np.zeros(3)
    if x.sum() > 0:
        a[0] = 1.0
    return a


def written_while_in_a_list(x):
    a = x * 1.0
    hs = [a]
    if x.sum() > 0:
        a[0] = 5.0
    return hs[0], a


def aliased_on_one_path(x):
    a, c = x * 1.0, x * 2.0
    b = c
    if x.sum() > 0:
        b = a
    b[0] = 7.0
    return a, c


@pytest.mark.parametrize("fn", [written_through_an_alias, compile_time_array_written_in_a_branch,
                                written_while_in_a_list])
def test_names_of_one_array_stay_one_array_after_a_branch(fn):
    # Each name got its own scf.if result: a write through one no longer reached the others.
    calls = [(np.ones(3),), (-np.ones(3),)] * 2
    report = pyfront.explain(check(fn, calls, profile_calls=2))
    assert report.compiled_calls == 2, str(report)


def test_names_that_alias_on_one_path_only_run_in_the_interpreter_when_written():
    report = pyfront.explain(check(aliased_on_one_path, [(np.ones(3),), (-np.ones(3),)] * 2, profile_calls=2))
    assert report.compiled_calls == 0
    assert any("another name holds on one path of a branch" in r for r in report.interpreter_reasons), str(report)


def set_if_positive(x, i):
    out = np.zeros_like(x)
    if x.sum() > 0:
        out[i] = 1.0  # the bounds guard of `i` holds, or this side did not run
    return out


def test_a_guard_in_a_branch_that_did_not_run_does_not_deopt():
    x, far = np.ones(3), np.int64(5)
    calls = [(x, np.int64(1)), (-x, np.int64(2)), (-x, far), (x, np.int64(2)), (x, far)]
    report = pyfront.explain(check(set_if_positive, calls, profile_calls=2))
    # After two profiled calls, (-x, far) runs compiled; (x, far), whose taken side indexes out
    # of range, leaves compiled code (the interpreter raises the IndexError).
    assert report.compiled_calls == 2 and report.deopts == 1, str(report)
    assert any("within bounds" in reason for reason in report.deopt_reasons), str(report)


def hinge_loss(scores, y, last):
    """CS231n's naive SVM loss: `loss = 0.0` becomes a NumPy float64 once a margin is added, so its
    type depends on the data (values.FloatOrFloat64) until `np.sum` makes it a float64 anyway.
    (Reading the correct score at `y[i]` inside the branch, as CS231n does, also compiles, but
    IREE 3.13 fails to run some such modules: tests/iree_repro/README.md, bug 4.)"""
    loss = 0.0
    for i in range(scores.shape[0]):
        correct = scores[i, y[i]]
        for j in range(scores.shape[1]):
            if j == y[i]:
                continue
            margin = scores[i, j] - correct + 1.0
            if margin > 0:
                loss += margin
    loss /= scores.shape[0]
    if last:
        return loss  # a Python float if no margin was positive: where its type matters, it is guarded
    return loss + 0.5 * np.sum(scores * scores)


def test_a_float_that_becomes_a_numpy_float64_on_some_paths_compiles():
    scores = np.array([[0.5, 2.0, -1.0], [3.0, 0.0, 0.25]])
    y, none_positive = np.array([1, 0]), np.array([[9.0, 0.0, 0.0], [9.0, 0.0, 0.0]])
    calls = [(scores, y, False), (-scores, y, False), (none_positive, np.array([0, 0]), False)]
    report = pyfront.explain(check(hinge_loss, calls + calls, profile_calls=2))
    assert report.compiled_calls == 4 and report.deopts == 0, str(report)
    # Returned as it is: a NumPy float64 where a margin was positive, else the interpreter's Python float.
    calls = [(scores, y, True), (-scores, y, True), (-scores, y, True), (none_positive, np.array([0, 0]), True)]
    report = pyfront.explain(check(hinge_loss, calls, profile_calls=2))
    assert report.compiled_calls == 1 and report.deopts == 1, str(report)
    assert any("is a NumPy float64 here" in reason for reason in report.deopt_reasons), str(report)


# Writes inside a side of a branch into arrays held outside it ---------------------------------------


def clip_gradients_in_place(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g * g) for g in grads))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / norm  # the caller's arrays, on one path
    return norm


def test_writing_into_the_callers_arrays_in_a_branch():
    rng = np.random.default_rng(5)
    calls = [([rng.standard_normal((3, 2)) * k, rng.standard_normal(2) * k], 2.0) for k in (0.1, 5.0, 0.2, 3.0, 0.5, 9.0)]
    compiled = check(clip_gradients_in_place, calls)
    assert pyfront.explain(compiled).compiled_calls > 2, str(pyfront.explain(compiled))


def zero_first_if(a, c):
    if c > 0:
        a[0] = 5.0
    return 0


def written_in_an_inlined_helper(x):
    a = x * 1.0
    kept = [a]
    zero_first_if(a, x.sum())  # a name of the caller's frame, and a list, hold the array written
    zero_first_if(x, -x.sum())
    return a, kept, x


class Running:
    def __init__(self):
        self.mean, self.seen = np.zeros(2), None


def update_running_mean_if_finite(state, x):
    state.seen = state.mean  # a pending store of the array that the branch writes
    m = x.mean(axis=0)
    if np.isfinite(m).all():
        state.mean *= 0.9
        state.mean += 0.1 * m
    return state.mean.sum()


def scale_or_shift_state(state, x):
    if x.sum() > 0:  # the attribute is read first in a side
        state.mean *= 2.0
    else:
        state.mean += x
    return x * 1.0


@pytest.mark.parametrize("fn, make", [
    (written_in_an_inlined_helper, lambda k: (np.array([1.0, -2.0]) * k,)),
    (scale_or_shift_state, lambda k: (Running(), np.ones(2) * k)),
    (update_running_mean_if_finite, lambda k: (Running(), np.array([[1.0, np.inf if k % 2 else 2.0]]) * k)),
])
def test_a_write_in_a_branch_reaches_every_holder_of_the_array(fn, make):
    compiled = check(fn, [make(k) for k in (1, -1, 2, -3, 4, -5)])
    assert pyfront.explain(compiled).compiled_calls > 0, str(pyfront.explain(compiled))
