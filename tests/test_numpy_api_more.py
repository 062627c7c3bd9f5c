"""NumPy functions and methods DL code uses (issue 13): differential tests.

Each compiled function exercises many ops at once so the IREE compiles stay
few; every case asserts compiled code ran. Cases NumPy raises or warns about
must run in the interpreter (same exception, same message).
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
import pyfront
import pytest

from tests.differential import arrays, check


def _compiled(fn, calls):
    assert pyfront.explain(check(fn, calls)).compiled_calls > 0


def _calls(dtype, *shapes, n=2):
    rng = np.random.default_rng(7)
    return [tuple(arrays(rng, dtype, *shapes)) for _ in range(n)]


def stacking(a, b, v):
    return (np.hstack((a, b)), np.vstack([a, b]), np.dstack((a, b)), np.column_stack((v, a[:, 0], a)),
            np.hstack((v, v)), np.vstack((v, v)), np.dstack([v, v]), np.outer(v, a), np.outer(a, v),
            a.flatten(), a.T.flatten(), np.ravel(a), a.ravel(), a.T.ravel())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_stacking_outer_flatten(dtype):
    _compiled(stacking, _calls(dtype, (3, 4), (3, 4), (3,)))


def creation(x):
    e = np.empty((2, 3), np.float32)
    e[...] = x[:2, :3]
    f = np.empty_like(x)
    f[:] = x * 2
    return e, f, np.eye(3), np.eye(3, 4, k=1, dtype=np.int32), np.identity(2, dtype=np.float32) @ x[:2, :2], \
        np.eye(x.shape[0], dtype=x.dtype) * x


def test_empty_eye_identity():
    _compiled(creation, _calls(np.float32, (3, 3)))


def float_tests(x):
    return (np.isnan(x), np.isinf(x), np.isfinite(x), np.any(x > 0), np.all(x > -5), x.any(axis=0),
            x.all(axis=1, keepdims=True), np.any(np.isnan(x), axis=(0, 1)), np.all(x), x.any())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_nan_inf_any_all(dtype):
    calls = _calls(dtype, (3, 4))
    if np.dtype(dtype).kind == "f":
        special = np.array([[np.nan, np.inf, -np.inf, 0.0], [-0.0, 1, 2, 3], [np.nan, 1e30, -1, 5]], dtype)
        calls.append((special,))
    _compiled(float_tests, calls)


def moments(x):
    return (np.var(x), np.std(x), x.var(axis=0), x.std(axis=1, ddof=1), np.var(x, axis=(0, 1), keepdims=True),
            np.std(x, axis=-1, ddof=1.5, keepdims=True), x.var(ddof=2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_var_std(dtype):
    calls = _calls(dtype, (3, 5))
    if np.dtype(dtype).kind == "f":  # NaN propagates quietly; inf - inf warns in both
        calls.append((np.array([[np.nan, 1, 2, 3, 4], [np.inf, 0, 1, 2, 3], [1e30, -1e30, 0, -0.0, 5]], dtype),))
    _compiled(moments, calls)


def too_few_degrees(x):
    return np.var(x, axis=0, ddof=3)


def test_var_without_degrees_of_freedom_runs_in_the_interpreter():
    f = check(too_few_degrees, [(np.ones((3, 2)),)])
    assert pyfront.explain(f).compiled_calls == 0


def shuffling(a, v):
    first, rest = np.split(a, [1], axis=1)
    halves = np.array_split(v, 2)
    return (np.roll(a, 1, axis=0), np.roll(a, -2, axis=1), np.roll(a, 5), np.roll(v, (1,), (0,)),
            first, rest, halves[0], halves[1], np.split(a, 3)[2], np.array_split(a, 3, axis=1)[2],
            np.tile(v, 2), np.tile(a, (2, 1)), np.tile(v, (2, 1, 2)), np.repeat(v, 3), a.repeat(2, axis=1),
            np.repeat(a, 2, axis=0), np.tril(a), np.triu(a, 1), np.tril(a, -1), np.triu(a, -2),
            np.flip(a), np.flip(a, 1), np.flip(v), np.flipud(a), np.fliplr(a), np.flip(a, (0, 1)),
            np.diag(v), np.diag(v, 1), np.diag(v, -2), np.diag(a), np.diag(a, 1), np.diag(a, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_roll_split_tile_repeat_triangles_diag(dtype):
    _compiled(shuffling, _calls(dtype, (3, 4), (5,)))


def padding_and_accumulation(a, v):
    return (np.pad(a, 1), np.pad(a, ((1, 0), (2, 3)), constant_values=7), np.pad(v, (2,), "constant"),
            np.pad(a, [(0, 1), (1, 0)], mode="constant", constant_values=((1, 2), (3, 4))),
            np.cumsum(v), a.cumsum(axis=1), np.cumsum(a), np.cumprod(v), a.cumprod(axis=0),
            np.linalg.norm(v), np.linalg.norm(a, axis=1), np.linalg.norm(a, axis=0, keepdims=True),
            np.linalg.norm(a, axis=(0, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_pad_cumsum_norm(dtype):
    calls = _calls(dtype, (3, 4), (5,))
    if np.dtype(dtype).kind == "f":
        calls.append((np.array([[np.nan, 1, 2, 3], [np.inf, 0, 1, 2], [1e30, -1e30, 0, -0.0]], dtype),
                      np.array([np.inf, -np.inf, 1, 2, 3], dtype)))
    _compiled(padding_and_accumulation, calls)


def bad_split(a):
    return np.split(a, 3)


def bad_pad(a):
    return np.pad(a, -1)


def list_axis_sum(a):
    return np.sum(a, axis=[0])


def list_axis_var(a):
    return a.var(axis=[0])


def list_axis_norm(a):
    return np.linalg.norm(a, axis=[0])


def list_axis_cumsum(a):
    return np.cumsum(a, axis=[0])


def unsigned_pad_width(a):
    return np.pad(a, np.uint8(1))


def test_numpy_errors_raise_the_same():
    x = np.ones((4, 2))
    for fn in (bad_split, bad_pad, list_axis_sum, list_axis_var, list_axis_norm, list_axis_cumsum,
               unsigned_pad_width):
        report = pyfront.explain(check(fn, [(x,), (x,)]))
        assert report.compiled_calls == 0 and "internal compiler error" not in str(report), str(report)


def joins_with_dtype(a, b):
    return (np.concatenate((a, b), dtype=np.float32), np.vstack([a, b], dtype=np.int64, casting="unsafe"),
            np.hstack((a, b), casting="safe"), np.stack([a, b], axis=1, dtype=np.float64, casting="same_kind"))


def test_joins_with_dtype_and_casting():
    rng = np.random.default_rng(3)
    _compiled(joins_with_dtype, [(arrays(rng, np.float32, (2, 3))[0], arrays(rng, np.float64, (2, 3))[0])] * 2)


def join_casting_no(a, b):
    return np.vstack((a, b), casting="no")


def join_to_int(a, b):
    return np.concatenate([a, b], dtype=np.int32)


def join_bad_rule(a, b):
    return np.stack((a, b), casting="bogus")


def test_joins_numpy_refuses_raise_the_same():
    a, b = np.ones((2, 2), np.float32), np.ones((2, 2))
    for fn in (join_casting_no, join_to_int, join_bad_rule):
        assert pyfront.explain(check(fn, [(a, b), (a, b)])).compiled_calls == 0


def slice_objects(a):
    window = slice(1, 3)
    rows = slice(None, None, 2)
    return a[window], a[rows, window], a[:, slice(2)]


def test_builtin_slice_objects_as_keys():
    _compiled(slice_objects, _calls(np.float64, (4, 4)))


def contractions(a, b, v, w, batch1, batch2):
    return (np.einsum("ij,jk->ik", a, b), np.einsum("bij,bjk->bik", batch1, batch2), np.einsum("i,j->ij", v, w),
            np.einsum("ij->ji", a), np.einsum("ii->i", a[:, :3]), np.einsum("ii", a[:, :3]), np.einsum("ij->", a),
            np.einsum("ij->j", a), np.einsum("ij", a), np.einsum("ij,kj->ik", a, b.T), np.einsum("i,i->", v, v),
            np.einsum("ij,j->i", a, b[:, 0]), np.einsum("bij,bkj->bik", batch1, batch2.transpose(0, 2, 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_einsum(dtype):
    _compiled(contractions, _calls(dtype, (3, 4), (4, 2), (3,), (5,), (2, 3, 4), (2, 4, 5)))


def ufunc_reductions(a):
    return (np.add.reduce(a), np.multiply.reduce(a, axis=1), np.maximum.reduce(a, axis=None),
            np.minimum.reduce(a, 1, keepdims=True), np.add.reduce(a, (0, 1)))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
def test_ufunc_reduce(dtype):
    _compiled(ufunc_reductions, _calls(dtype, (3, 4)))


def flip_vector_lr(v):
    return np.fliplr(v)


def test_fliplr_of_a_vector_raises_the_same():
    assert pyfront.explain(check(flip_vector_lr, [(np.ones(3),), (np.ones(3),)])).compiled_calls == 0


def batch_layer(x, w):
    h = np.hstack((x, x * 2)) @ w
    return (h.var(axis=1, keepdims=True), h.std(axis=-1, ddof=1), np.cumsum(h, axis=1), h.flatten(),
            np.any(np.isnan(h), axis=1), np.linalg.norm(h, axis=1), np.flip(h, 1))


def test_dynamic_batch():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 3))
    calls = [(rng.standard_normal((n, 4)), w) for n in (4, 3, 5, 2)]
    report = pyfront.explain(check(batch_layer, calls, profile_calls=2))
    assert report.compilations == 1 and report.compiled_calls >= 2, str(report)


def log_sum_exp(a, b):
    return (np.logaddexp(a, b), np.logaddexp(a, 0.0), np.logaddexp(a[0], b[0, 0]), np.logaddexp(-3.0, b),
            np.logaddexp(0, a))  # softplus: a weak Python int


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_logaddexp(dtype):
    calls = _calls(dtype, (3, 4), (3, 4))
    special = np.array([[np.inf, -np.inf, np.nan, 0.0], [-0.0, 700, -700, 1e-3], [np.inf, 5, -np.inf, 2]], dtype)
    calls.append((special, special[::-1].copy()))
    calls.append((special, special.copy()))
    _compiled(log_sum_exp, calls)


def sorting(x):
    return (np.sort(x), np.sort(x, axis=0), np.sort(x, axis=None), np.argsort(x, kind="stable"),
            x.argsort(axis=0, kind="mergesort"), np.argsort(-x[0], stable=True)[:2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_sort_and_stable_argsort(dtype):
    calls = _calls(dtype, (4, 5), n=3)
    tied = np.array([[3, 1, 1, 0, 2], [2, 2, 2, 2, 2], [0, 5, 5, 1, 0], [1, 0, 1, 0, 1]]).astype(dtype)
    _compiled(sorting, calls + [(tied,), (tied,)])


def top_k(scores, k):
    return np.argsort(-scores, axis=1)[:, :k]


def test_default_argsort_compiles_without_ties_and_deopts_on_them():
    rng = np.random.default_rng(2)
    calls = [(rng.normal(size=(3, 6)), 2) for _ in range(3)] + [(np.array([[1.0, 1.0, 0.5] * 2] * 3), 2)]
    compiled = check(top_k, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 1 and report.deopts == 1, str(report)
    assert "no two equal values in a row" in str(report)


def sort_rows(x):
    return np.sort(x)


def test_default_sort_of_floats_deopts_on_zeros_of_both_signs():
    values = np.array([[0.0, -0.0, 1.0, np.nan], [2.0, np.nan, -1.0, 0.0]])
    compiled = check(sort_rows, [(values + 1,)] * 3 + [(values,)])
    assert "+0.0 and -0.0" in str(pyfront.explain(compiled))


def array_likes(x, y, n, s):
    """Lists and tuples where NumPy takes arrays: built from computed values, passed to NumPy
    functions, and as operands of operators whose other side is an array."""
    return (np.array([x.sum(), x.max(), s]), np.array([x, y]).mean(0), np.asarray((x, 2 * y, x)),
            np.array([[s, 1.0], [2.0, s * s]]), np.concatenate(([n], np.arange(3))),
            np.maximum(x, [0.0, 0.5, 1.0]), x + [1, 2, 3], [1, 2, 3] * x, (s, 2.0, 3.0) - x,
            np.where([True, False, True], x, y), np.array([np.float32(1.5), s]), np.array([n, 2.5]),
            np.array([n > 1, True]), [x[0], s] @ np.ones((2, 2)), x @ [s, 1.0, 2.0])


def test_lists_and_tuples_as_arrays():
    calls = [(np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.25, -1.0]), n, s)
             for n, s in [(2, 1.5), (3, -0.5), (0, 2.0)]]
    _compiled(array_likes, calls)


def ragged_list(x, y):
    return np.array([x, y])


def test_a_ragged_list_raises_numpys_error_in_the_interpreter():
    compiled = check(ragged_list, [(np.ones(3), np.ones(2))] * 3)
    assert "different shapes" in str(pyfront.explain(compiled))


SCALES = [1.5, 2.5]


def python_list_operators(x, n, s):
    """Python's own list operators: no array involved, whatever the items."""
    return [x] * n, n * SCALES, [s] == [x.sum()], [s] < [1.0], bool([x[:1]]), [x[0]] if [s] else None


def test_python_list_operators_stay_python():
    check(python_list_operators, [(np.zeros(2), 2, 0.0), (np.ones(2), 3, 2.0), (np.ones(2), 1, 0.5)])


def negated_list(x):
    return -[x]


def test_negating_a_list_raises_pythons_type_error():
    check(negated_list, [(np.ones(2),)] * 3)


def conversions(x, i):
    return int(x.argmax()), int(x[0] * 2.5), int(x.sum() > 1), bool(x[1] > 0), bool(x[:1]), int(i), bool(i)


def test_int_and_bool_of_computed_values():
    calls = [(np.array([1.5, -2.0, 3.7]), np.int32(4)), (np.array([-1.5, 2.0, 0.7]), np.int32(0)),
             (np.array([2.5, 0.0, -0.7]), np.int32(-3))]
    _compiled(conversions, calls)


def int_of(x):
    return int(x[0])


@pytest.mark.parametrize("value", [np.nan, np.inf, 3e20, -3e20])
def test_int_of_a_float_python_rejects_or_grows_runs_in_the_interpreter(value):
    check(int_of, [(np.array([1.5]),), (np.array([2.5]),), (np.array([value]),), (np.array([0.5]),)])


def windows_and_contractions(x, w, v):
    """A convolution as sliding windows contracted over three indices; einsum products over
    several summed letters (grouped into one matmul dimension)."""
    win = sliding_window_view(x, (3, 3), axis=(2, 3))
    conv = np.einsum("nchwij,cij->nhw", win, w)
    return (conv, np.einsum("ij,j->i", v, v[0]), np.einsum("bij,bjk->bik", x[:, 0], x[:, 1]),
            np.einsum("ij,ij->", v, v), np.einsum("nhwc,c->nhw", x.transpose(0, 2, 3, 1), w[:, 0, 0]),
            win[:, :, ::2, ::2].sum(), sliding_window_view(v[0], 2))


def test_sliding_window_view_and_multi_index_einsum():
    rng = np.random.default_rng(0)
    calls = [(rng.normal(size=(2, 3, 5, 5)), rng.normal(size=(3, 3, 3)), rng.normal(size=(4, 4))) for _ in range(3)]
    _compiled(windows_and_contractions, calls)


def write_into_windows(x):
    win = sliding_window_view(x, 2)
    win[0, 0] = 1.0  # NumPy's windows are read-only: ValueError
    return win


def test_writing_into_sliding_windows_raises_numpys_error():
    check(write_into_windows, [(np.arange(4.0),)] * 3)


def astype_without_copy(x):
    y = x.astype(x.dtype, copy=False)
    z = x.astype(np.float32, copy=False)
    return y, z, y is x


def test_astype_without_copy_returns_the_array_itself_when_the_dtype_matches():
    compiled = check(astype_without_copy, [(np.arange(6.0),)] * 3)
    y, _, same = compiled(a := np.arange(6.0))
    assert y is a and same


def differences(x):
    return np.diff(x), np.diff(x, axis=0), np.diff(x, n=2), np.diff(x > 0), np.diff(x[0]), np.diff(x, n=0)


def test_diff():
    calls = _calls(np.float64, (3, 4))
    _compiled(differences, calls + [(calls[0][0].astype(np.int32),)])


def counts(y, w):
    return np.bincount(y), np.bincount(y, minlength=7), np.bincount(y, weights=w), np.argmax(np.bincount(y[:3]))


def test_bincount_has_a_length_that_depends_on_the_data():
    y, w = np.array([1, 3, 3, 0, 2, 3]), np.linspace(0.5, 3.0, 6)
    # All zeros (one entry) and a negative value (NumPy's ValueError) re-run in the interpreter.
    calls = [(y, w), (y, w), (y[::-1].copy(), w), (y + 4, -w), (np.zeros(6, np.int64), w), (y - 1, w)]
    _compiled(counts, calls)


def argmax_positions(x, x3, d, k):
    r, c = np.unravel_index(np.argmax(x), x.shape)
    rows, cols = np.unravel_index(np.argmax(x, axis=1) + k, (2, 3))  # views of one array, as NumPy's
    dx = np.zeros_like(x3)
    for i in range(x3.shape[0]):  # max pooling's backward pass: each window's gradient at its argmax
        a, b = np.unravel_index(np.argmax(x3[i]), x3[i].shape)
        dx[i, a, b] = d[i]
    return r, c, rows, cols, dx


def test_unravel_index_and_single_element_writes_at_computed_positions():
    rng = np.random.default_rng(5)
    x, x3, d = rng.standard_normal((4, 6)), rng.standard_normal((3, 2, 2)), rng.standard_normal(3)
    far = np.int64(1)  # argmax over 6 columns + 1 can reach 6: NumPy's ValueError, in the interpreter
    _compiled(argmax_positions, [(x, x3, d, np.int64(0)), (x, x3, d, np.int64(0)), (-x, -x3, d, np.int64(0)),
                                 (x, x3, d, far)])
