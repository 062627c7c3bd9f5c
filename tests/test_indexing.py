"""NumPy indexing for every kind of key, reads and writes: differential tests, each asserting compiled code ran.

Kinds: negative steps, computed int scalars, slices with computed bounds,
int arrays (lists, constants, computed; int32/int64; negative, repeated,
broadcast; mixed with slices in NumPy's placement rule), bool masks (known
and computed), np.take / np.take_along_axis, np.add.at / np.subtract.at.
Out-of-range indices deopt: the interpreter raises NumPy's IndexError.
"""

import numpy as np
import pyfront
import pytest

from tests.differential import check


def _compiled(fn, calls, **options):
    compiled = check(fn, calls, **options)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, str(report)
    return compiled


X = np.arange(24, dtype=np.float64).reshape(4, 6) * 0.5 - 3
Y3 = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


# Negative steps --------------------------------------------------------------------------


def reversed_rows(x):
    return x[::-1] * 1.0, x[3:0:-2, ::-1] + 0, x[:, 5:1:-2].sum()


def reversed_write(x):
    a = x * 1.0
    a[::-1, 0] = np.arange(4.0)
    a[2, 5:1:-2] = x[0, :2]
    return a


def ellipsis_after_ints(x):
    v = x[1, 2, ...]  # a 0-d view, not a scalar
    return v, x[1, 2]


@pytest.mark.parametrize("fn", [reversed_rows, reversed_write, ellipsis_after_ints])
def test_negative_steps(fn):
    _compiled(fn, [(X.copy(),), (X.copy() * 2,)])


# Computed int scalars and slice bounds ---------------------------------------------------


def batch(x, i):
    b = 2
    return x[i * b:(i + 1) * b] * 2


def batch_write(x, i):
    out = np.zeros_like(x)
    out[i * 2:(i + 1) * 2] = x[:2] + 1
    out[-1 - i, i] = 5  # computed ints
    out[i] = out[i] * 2
    return out


def computed_scalar(x, i):
    return x[i] + x[-1 - i, i] + x[:, i].sum()


@pytest.mark.parametrize("fn", [batch, batch_write, computed_scalar])
def test_computed_bounds(fn):
    _compiled(fn, [(X.copy(), np.int64(0)), (X.copy(), np.int64(1)), (X.copy(), np.int64(1))])


B = 2


def get_batch(x, i):
    return x[i * B:(i + 1) * B], x[i:i + 3] * 1, x[-3 - i:-i - 1]


def batches_in_a_helper(x, i):
    # Inlined helpers have no profile of their own: the lengths fold (stop - start is a constant).
    a, b, c = get_batch(x, i)
    out = np.ones_like(x)
    out[i:i + 2] = 0  # a scalar value: the length folds too
    return a.sum() + b.sum() + c.sum(), out


def test_computed_bounds_whose_difference_folds():
    x = np.arange(24.0).reshape(8, 3)
    _compiled(batches_in_a_helper, [(x, np.int64(0)), (x, np.int64(1)), (x, np.int64(3)), (x, np.int64(6))])


def test_computed_slice_shorter_than_profiled_deopts():
    # i = 3: x[6:8] of a 4-row array is empty: the guard deopts and the interpreter answers.
    _compiled(batch, [(X.copy(), np.int64(0)), (X.copy(), np.int64(1)), (X.copy(), np.int64(3))])


def test_computed_index_out_of_range_raises_numpys_index_error():
    _compiled(computed_scalar, [(X.copy(), np.int64(1)), (X.copy(), np.int64(2)), (X.copy(), np.int64(7))])


# Integer arrays ---------------------------------------------------------------------------


def pick_labels(p, y):
    return p[np.arange(p.shape[0]), y], p[range(p.shape[0]), y], p[(0, 1), :].sum()


def embedding(w, idx):
    return w[idx]


def columns(x, idx):
    return (x[:, idx] * 2).sum(axis=1)  # (x[:, idx] itself is F-ordered in NumPy: see test_memory_order_kept)


ROWS, COLS = np.array([[0], [3]]), np.array([1, 2, 5])  # read from globals at call time


def constant_lists(x):
    none = [False, False, False, False, False, False]
    return x[[0, 2]], x[[-1, 1], [0, -2]], x[ROWS, COLS], x[[True, False, True, True]], x[:, none]


def mixed_placement(y, i, j):
    # Adjacent advanced indices stay in place; separated by a slice, their dims go first.
    return y[:, i, j].sum(axis=0), y[i, :, j], y[1, :, j], y[i, 1:3], y[..., j].sum(), y[None, i, None]


def columns_returned(x, idx):
    return x[:, idx]


def test_memory_order_kept():
    # NumPy lays out x[:, idx] F-contiguous; the host lays out the compiled result so (check compares the flags).
    compiled = check(columns_returned, [(X.copy(), np.array([5, 0, 0])), (X.copy(), np.array([1, 2, 3]))] * 2)
    assert pyfront.explain(compiled).compiled_calls > 0


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_label_pick(dtype):
    p = np.linspace(0.1, 0.9, 20).reshape(5, 4)
    _compiled(pick_labels, [(p, np.array([0, 3, 1, 1, 2], dtype)), (p * 2, np.array([3, 3, 0, -1, -4], dtype))])


def test_embedding_lookup_with_repeats_and_negative_indices():
    w = np.arange(30.0).reshape(10, 3)
    _compiled(embedding, [(w, np.array([[1, 1, 9], [-1, 0, -10]])), (w * 2, np.array([[0, 2, 2], [3, 3, 3]]))])


def test_columns():
    _compiled(columns, [(X.copy(), np.array([5, 0, 0])), (X.copy(), np.array([-1, 2, 3]))])


def test_constant_lists():
    _compiled(constant_lists, [(X.copy(),), (X.copy() + 1,)])


def lists_of_computed_ints(x, v):
    order = list(np.argsort(v))  # a list of NumPy ints, each computed
    return x[:, order].sum(axis=0), x[:, [v.argmax(), 0]].sum(axis=1), x[1, order[:2]]


def test_lists_of_computed_ints():
    _compiled(lists_of_computed_ints, [(X.copy(), np.array([3.0, -1, 2, 0, 5, 1])),
                                       (X.copy() * 2, np.array([0.0, 1, 2, 3, -4, 5]))])


def test_mixed_placement():
    _compiled(mixed_placement, [(Y3.copy(), np.array([0, 2]), np.array([4, -1])),
                                (Y3.copy(), np.array([1, 1]), np.array([0, 3]))])


def test_index_array_out_of_range_raises_numpys_index_error():
    w = np.arange(30.0).reshape(10, 3)
    _compiled(embedding, [(w, np.array([1, 2])), (w, np.array([3, 4])), (w, np.array([3, 10])),
                          (w, np.array([-11, 0]))])


def test_broadcast_mismatch_raises_in_the_interpreter():
    def f(x, i, j):
        return x[i, j]
    compiled = check(f, [(X.copy(), np.array([0, 1]), np.array([0, 1, 2]))])
    assert pyfront.explain(compiled).compiled_calls == 0


# Bool masks -------------------------------------------------------------------------------


def relu_write(h):
    h = h * 1.0
    h[h < 0] = 0
    return h


def dropout_write(x, mask):
    out = x + 1
    out[mask] = 0
    return out


def positive_part(x):
    return x[x > 0], x[x > 0].mean()


def mask_rows(x, m):
    return x[m] * 2, x[m, ...].sum(axis=0)


def test_mask_reads_have_data_dependent_length():
    # Counts 0 and 1 deopt (a dynamic dim is >= 2 at run time): the interpreter answers those calls.
    _compiled(positive_part, [(X.copy(),), (X.copy() - 5,), (-np.abs(X),), (np.arange(6) - 4,), (np.arange(6) - 3,)])
    _compiled(mask_rows, [(X.copy(), X[:, 0] > -3), (X.copy(), X[:, 1] > 0), (X.copy(), np.zeros(4, bool))])


def positions(x, y):
    rows, cols = np.where(x > 0)  # NumPy's arrays are views of one (count, 2) array: so are these
    return rows, cols, np.nonzero(y)[0], np.flatnonzero(x < -1), (x > 1).nonzero(), y[np.where(y != 0)[0]]


def test_nonzero_and_where_of_a_condition_read_indices_through_the_mask():
    y = np.array([0, 3, 0, -2, 1.5, 0])
    _compiled(positions, [(X.copy(), y), (X.copy(), y), (X - 2, -y), (X + 10, np.array([0.0, 1, 0, 0, 0, 0]))])


def masked_energy(x):
    return (x[x > 0] ** 2).sum()


def masked_energy_grad(x):
    return pyfront.grad(masked_energy)(x)


def test_grad_through_mask_read():
    _compiled(masked_energy_grad, [(X.copy(),), (X.copy() - 5,)])


def masked_copy(x, y):
    out = x * 1.0
    out[y > x] = y[y > x]  # values read through an equal mask: counts agree by construction
    return out


def masked_rows(x, m, rows):
    out = x + 0.0
    out[m] = rows  # as many rows as the mask selects (guarded), or one row for all
    return out


def test_mask_writes_of_arrays():
    _compiled(masked_copy, [(X.copy(), X.T.reshape(4, 6).copy()), (X.copy(), -X.copy()), (X.copy(), X + 1)])
    rows = np.arange(12.0).reshape(2, 6)
    _compiled(masked_rows, [(X.copy(), np.array([True, False, False, True]), rows),
                            (X.copy(), np.array([False, True, True, False]), rows),
                            (X.copy(), np.array([True, True, True, False]), rows),  # ValueError in NumPy
                            (X.copy(), np.array([True, False, True, False]), rows[:1])])


def test_mask_writes():
    _compiled(relu_write, [(X.copy(),), (-X.copy(),)])
    _compiled(dropout_write, [(X.copy(), X > 0), (X.copy(), np.zeros((4, 6), bool)), (X.copy(), X[:, 0] > 0)])


# Writes through int arrays -----------------------------------------------------------------


def scatter_rows(x, idx, v):
    a = x * 1.0
    a[idx] = v  # repeated indices: the last write wins
    return a


def scatter_labels(p, y):
    d = p.copy()
    r = np.arange(p.shape[0])
    d[r, y] = d[r, y] - 1
    d[:, [0, -1]] = 7
    return d


def scatter_cast(x, idx):
    a = np.zeros(6, np.int32)
    a[idx] = x[0] * 1.7
    return a


def test_scatter_rows_last_write_wins():
    _compiled(scatter_rows, [(X.copy(), np.array([1, 1, 3]), np.arange(18.0).reshape(3, 6)),
                             (X.copy(), np.array([-1, 0, 3]), np.ones((3, 6))),
                             (X.copy(), np.array([2, 2, 2]), np.ones((3, 1)))])


def test_scatter_labels_and_constant_columns():
    p = np.linspace(0.1, 0.9, 20).reshape(5, 4)
    _compiled(scatter_labels, [(p, np.array([0, 3, 1, 1, 2])), (p, np.array([3, 3, 0, -1, 2], np.int32))])


def buffered_increment(x, idx):
    a = x * 1.0
    a[idx] = a[idx] + 1  # what `a[idx] += 1` means in NumPy: a repeated index is incremented once
    return a


def test_buffered_increment_with_repeats():
    _compiled(buffered_increment, [(X.copy(), np.array([1, 1, 3])), (X.copy(), np.array([0, 0, 0, -1]))])


def test_scatter_out_of_range_raises_numpys_index_error():
    _compiled(scatter_rows, [(X.copy(), np.array([1, 2, 3]), np.ones((3, 6))),
                             (X.copy(), np.array([0, 1, 2]), np.ones((3, 6))),
                             (X.copy(), np.array([0, 4, 2]), np.ones((3, 6)))])


def test_scatter_cast():
    _compiled(scatter_cast, [(X.copy(), np.array([0, 5, 5, 2, 1, 1])), (X.copy() + 1, np.array([1, 2, 3, 4, 5, 0]))])


# np.take, np.take_along_axis, np.add.at ----------------------------------------------------


def take_forms(x, idx):
    # np.take(x, idx, axis=1) is C-ordered in NumPy (x[:, idx] is not: test_memory_order_kept)
    return np.take(x, idx, axis=1), np.take(x, idx), x.take(idx, axis=0), np.take(x[0], idx[0]), \
        np.take(x, idx[:, None], axis=-1), np.take(x, range(2), axis=1)


def take_along(x, idx):
    return np.take_along_axis(x, idx, axis=1)


def add_at(x, idx, v):
    a = x * 1.0
    np.add.at(a, idx, v)
    np.subtract.at(a, (idx, 0), 1.5)
    return a


def test_take():
    _compiled(take_forms, [(X.copy(), np.array([0, 3, -1])), (X.copy(), np.array([1, 1, 2]))])


def test_take_along_axis():
    _compiled(take_along, [(X.copy(), np.argsort(X, axis=1)[:, :2]), (X.copy(), np.zeros((4, 3), np.int64))])


def add_at_rows(x, idx, v):
    a = x * 1.0
    np.add.at(a, (np.arange(4)[:, None], idx), v)  # an arange index: the write loops over rows, no search
    b = x * 0.0
    b[np.arange(4)[:, None], idx] = v
    return a, b


def test_arange_indices_with_repeats_in_the_other_index():
    idx = np.array([[0, 0, 5], [1, 2, 1], [3, 3, 3], [-1, 4, 0]])
    _compiled(add_at_rows, [(X.copy(), idx, np.arange(12.0).reshape(4, 3)), (X.copy(), idx[::-1].copy(), 2.5)])


def word_embedding_backward(dout, x, W):
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)  # as course assignments write the embedding gradient
    return dW


def svm_loss(x, y):
    """The multiclass SVM loss of course assignments (layers.py), `dx[r, y] -= num_pos` spelled out."""
    N = x.shape[0]
    correct_class_scores = x[np.arange(N), y]
    margins = np.maximum(0, x - correct_class_scores[:, np.newaxis] + 1.0)
    margins[np.arange(N), y] = 0
    loss = np.sum(margins) / N
    num_pos = np.sum(margins > 0, axis=1)
    dx = np.zeros_like(x)
    dx[margins > 0] = 1
    dx[np.arange(N), y] = dx[np.arange(N), y] - num_pos
    dx /= N
    return loss, dx


def test_svm_loss():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 5))
    _compiled(svm_loss, [(x, rng.integers(0, 5, 8)), (x * 3, rng.integers(0, 5, 8)), (x, np.zeros(8, np.int64))])


def test_word_embedding_backward():
    rng = np.random.default_rng(5)
    W, dout = rng.standard_normal((7, 4)), rng.standard_normal((2, 3, 4))
    _compiled(word_embedding_backward, [(dout, np.array([[0, 3, 3], [6, 0, 3]]), W),
                                        (dout * 2, np.array([[1, 1, 1], [1, 2, 5]]), W)])


def test_add_at_accumulates_repeated_indices():
    _compiled(add_at, [(X.copy(), np.array([1, 1, 3]), np.arange(18.0).reshape(3, 6)),
                       (X.copy(), np.array([0, 0, 0]), 2.0)])


# Gradients through indexing (pyfront.grad compiled vs the interpreter's tape) ----------------


def nll(w, x, y):
    scores = x @ w
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return -np.log(p[np.arange(x.shape[0]), y]).mean()


def nll_grad(w, x, y):
    return pyfront.grad(nll)(w, x, y)


def embedding_loss(w, idx, target):
    h = w[idx]  # (batch, seq, dim)
    return ((h.sum(axis=1) - target) ** 2).sum()


def embedding_grad(w, idx, target):
    return pyfront.grad(embedding_loss)(w, idx, target)


def test_grad_through_label_pick():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    _compiled(nll_grad, [(w, x, np.array([0, 2, 1, 1, 0, 2])), (w * 0.5, x, np.array([2, 2, 2, 0, 1, -1]))])


def test_grad_through_embedding_lookup_with_repeats():
    rng = np.random.default_rng(1)
    w, t = rng.standard_normal((7, 3)), rng.standard_normal((2, 3))
    _compiled(embedding_grad, [(w, np.array([[1, 1, 6], [0, -1, 3]]), t), (w * 2, np.array([[2, 2, 2], [5, 4, 3]]), t)])


# A softmax classifier as course assignments write it, trained 10 SGD steps ---------------------


def softmax_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(np.log(probs[np.arange(num_train), y])) / num_train
    loss += 0.5 * reg * np.sum(W * W)
    dscores = probs.copy()
    dscores[np.arange(num_train), y] -= 1
    dscores /= num_train
    dW = X.T.dot(dscores)
    dW += reg * W
    return loss, dW


def softmax_loss_explicit_write(W, X, y, reg):
    """The same, with the label write spelled `d[r, y] = d[r, y] - 1` (no augmented assignment)."""
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= np.max(scores, axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= np.sum(probs, axis=1, keepdims=True)
    rows = np.arange(num_train)
    loss = -np.sum(np.log(probs[rows, y])) / num_train
    loss += 0.5 * reg * np.sum(W * W)
    dscores = probs.copy()
    dscores[rows, y] = dscores[rows, y] - 1
    dscores /= num_train
    dW = X.T.dot(dscores)
    dW += reg * W
    return loss, dW


def _train(loss_fn):
    from tests.differential import assert_same

    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((32, 10)), rng.integers(0, 5, 32)
    W_plain = W_compiled = 0.01 * rng.standard_normal((10, 5))
    compiled = pyfront.compile(loss_fn, profile_calls=1)
    for step in range(10):
        want = loss_fn(W_plain, X, y, 1e-3)
        got = compiled(W_compiled, X, y, 1e-3)
        assert_same(want, got, f"step {step}")
        W_plain, W_compiled = W_plain - 0.5 * want[1], W_compiled - 0.5 * got[1]
    report = pyfront.explain(compiled)
    steady = report.calls - report.profiled_calls
    assert report.compiled_calls >= 0.9 * steady, str(report)


def test_softmax_classifier_explicit_write():
    _train(softmax_loss_explicit_write)


def test_softmax_classifier_as_assignments_write_it():
    _train(softmax_loss_vectorized)


# Many key shapes at once: reads and local writes agree with NumPy ----------------------------

KEYS = {  # I2 = [2, 0] and I3 = [[1], [-1]] are globals of the generated module
    "neg_step_newaxis": "None, ::-2, 1",
    "ellipsis_neg": "..., 3:0:-1",
    "int_then_array": "1, I2",
    "array_slice_array": "I2, 1:3, I2",
    "broadcast_arrays": "I3, :, I2",
    "newaxis_between": "I2, None, I2",
    "array_then_ellipsis": "I3, ...",
    "neg_step_array": "::-1, I2",
    "list_last": ":, :, [0, -1, 0]",
    "bool_list": ":, [True, False, True, False]",
}
SOURCE = """
import numpy as np
I2, I3 = np.array([2, 0]), np.array([[1], [-1]])

def read(a):
    return a[{key}] + 0.5

def write(a, v):
    b = a * 1.0
    b[{key}] = v
    return b
"""


def _key_module(name, tmp_path, monkeypatch):
    # pyfront compiles functions from their source file: write one per key.
    path = tmp_path / f"keys_{name}.py"
    path.write_text(SOURCE.format(key=KEYS[name]))
    monkeypatch.syspath_prepend(str(tmp_path))
    return __import__(f"keys_{name}")


@pytest.mark.parametrize("name", list(KEYS))
def test_key_forms(name, tmp_path, monkeypatch):
    module = _key_module(name, tmp_path, monkeypatch)
    y = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    compiled = check(module.read, [(y,), (y * 2,)])
    report = str(pyfront.explain(compiled))
    # A result NumPy lays out in another memory order is refused (see test_memory_order_kept).
    assert pyfront.explain(compiled).compiled_calls > 0 or "memory order" in report, report
    _compiled(module.write, [(y, 1.5), (y, np.full(module.read(y).shape[-1:], -2.0))])


def embed_mean(w, tokens):
    return w[tokens].mean(axis=0)


def test_index_array_whose_length_varies_between_calls():
    # Token arrays of several lengths: the index dim is relaxed to a dynamic dim (one variant for all).
    w = np.arange(30.0).reshape(10, 3)
    compiled = _compiled(embed_mean, [(w, np.array([1, 2, 3])), (w, np.array([4, 4, 9, 0])),
                                      (w, np.array([5, 6, 7, 8, 9])), (w, np.array([-1, 2, 3, 1, 1, 1])),
                                      (w, np.array([0, 1, 2, 3, 4, 5, 6])), (w, np.array([3, 3, 3, 12]))])
    report = str(pyfront.explain(compiled))
    assert "-> dynamic" in report and "relaxation undone" not in report, report


def cluster_means(X, C):
    """k-means' update step as people write it: len() of a masked selection, a branch on it."""
    labels = np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1), axis=1)
    new_C = np.empty_like(C)
    for k in range(C.shape[0]):
        members = X[labels == k]
        if len(members) > 0:
            new_C[k] = members.mean(axis=0)
        else:
            new_C[k] = C[k]
    return new_C, labels


def test_len_of_a_data_dependent_selection_compiles():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    far = np.array([[0.0, 0.0], [1.0, 1.0], [50.0, 50.0]])  # the third cluster gets no member
    _compiled(cluster_means, [(X, X[:3].copy()), (X, X[3:6].copy()), (X, far), (X * 2, far)])


def dims_at_run_time(x):
    n, d = x.shape
    picked = x[x[:, 0] > 0]
    return picked.shape, len(picked), np.shape(picked)[0] * d, picked.sum(axis=0) / (len(picked) + 1), n


def test_shape_and_len_of_dims_known_only_at_run_time():
    rng = np.random.default_rng(1)
    _compiled(dims_at_run_time, [(rng.normal(size=(6, 2)),) for _ in range(4)] + [(-np.ones((6, 2)),)])


def take_is_a_copy(w, i):
    rows = np.take(w, i, axis=0)  # a 0-d index array: still a copy (a[i] is NumPy's view only for ints)
    first = np.take(w, 0, axis=0)
    w[0] = 7.0
    w[i] = 8.0
    return rows, first


def test_np_take_with_a_single_index_returns_a_copy():
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    _compiled(take_is_a_copy, [(w, np.array(1)), (w, np.array(2)), (w, np.array(-1))])


def zero_d_array_index(w, i):
    r = w[i]  # i is a 0-d array: an advanced index, so a copy
    s = w[np.int64(1)]  # a NumPy int: a view
    t = w[np.array(0), :]
    w[1] = 9.0
    w[0] = 7.0
    return r, s, t


def test_indexing_by_a_0d_array_copies_and_by_a_numpy_int_views():
    _compiled(zero_d_array_index, [(np.arange(6.0).reshape(3, 2), np.array(k)) for k in (1, 2, -1)])


# Masks over arrays whose length varies between calls (dynamic dims): read with the mask's size guarded.


class _Box:
    pass


def mask_of_a_masked_read(a0, box):
    """From the fuzzer (seed 13): a mask over the result of another masked read (a dynamic length)."""
    v2 = a0[a0 > 3]
    v4 = v2[v2 > 0]
    return v4 * 2, box.w[box.w < 1.0]


def test_a_mask_over_a_masked_read_compiles():
    box = _Box()
    box.w = np.array([0.5, 2.0, -1.0, 3.0])
    calls = [(np.array(v, np.float32), box) for v in
             ([4.0, 5.0, 1.0, 7.0], [4.0, 5.0, 1.0, 7.0, 9.0], [4.0, -5.0, 6.0, 3.5, 8.0, 1.0], [4.0, 5.0, 9.0])]
    report = pyfront.explain(check(mask_of_a_masked_read, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls, str(report)


def rows_through_a_mask(x, m):
    return x[m], x[m].sum()


def test_a_dynamic_mask_that_does_not_match_raises_as_numpy_does():
    x = np.arange(15.0).reshape(5, 3)
    calls = [(x[:4], x[:4] > 4), (x[:3], x[:3] > 1), (x, x % 2 == 0), (x[:4], x[:3] > 1), (x[:2], x[:2] > -1)]
    report = pyfront.explain(check(rows_through_a_mask, calls, profile_calls=1))
    assert report.compiled_calls > report.verified_calls and report.deopts == 1, str(report)
