"""Differential tests of straight-line NumPy functions: compiled == interpreter.

Every case runs each argument set at least twice (the first call is profiled
in the interpreter, later ones run compiled) and checks that compiled code
really ran, so a silent fallback to the interpreter fails the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import arrays, check

import pyfront

pytestmark = pytest.mark.iree

FLOATS = ["float32", "float64"]
NUMERIC = ["float32", "float64", "int32", "int64"]
ALL = NUMERIC + ["bool"]


def compiled_ran(fn) -> None:
    report = pyfront.explain(fn)
    assert report.compiled_calls > 0, str(report)


# Binary operators with broadcasting and NumPy's promotion ------------------------


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def truediv(a, b):
    return a / b


def floordiv(a, b):
    return a // b


def mod(a, b):
    return a % b


def maximum(a, b):
    return np.maximum(a, b)


def minimum(a, b):
    return np.minimum(a, b)


def less(a, b):
    return a < b


def greater_equal(a, b):
    return a >= b


def equal(a, b):
    return a == b


def bit_and(a, b):
    return a & b


BINARY = {
    add: ALL, sub: NUMERIC, mul: ALL, truediv: NUMERIC, floordiv: ["float32", "int32", "int64"],
    mod: ["float32", "int32", "int64"],
    maximum: ALL, minimum: ALL, less: ALL, greater_equal: ALL, equal: ALL, bit_and: ["int32", "int64", "bool"],
}


@pytest.mark.parametrize("fn,dtype", [(f, d) for f, ds in BINARY.items() for d in ds],
                         ids=lambda v: getattr(v, "__name__", v))
def test_binary_broadcasting(fn, dtype):
    rng = np.random.default_rng(1)
    a, b = arrays(rng, dtype, (3, 4), (4,))
    if fn in (floordiv, mod, truediv) and dtype.startswith("int"):
        b[b == 0] = 3
        a[a == 0] = 5
    compiled_ran(check(fn, [(a, b), (a, b), (b, a)]))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_python_scalars_are_weak(dtype, scalar):
    (a,) = arrays(np.random.default_rng(2), dtype, (2, 3))
    compiled_ran(check(add, [(a, scalar), (a, scalar)]))
    compiled_ran(check(mul, [(scalar, a), (scalar, a)]))


def test_mixed_dtypes_promote():
    rng = np.random.default_rng(3)
    f32, i64 = arrays(rng, "float32", (4,))[0], arrays(rng, "int64", (4,))[0]
    compiled_ran(check(add, [(f32, i64), (f32, i64)]))
    compiled_ran(check(truediv, [(i64, i64 + 100), (i64, i64 + 100)]))


def test_numpy_scalar_arguments_and_results():
    x = np.float32(1.5)
    a = np.arange(4, dtype=np.float64)
    compiled_ran(check(mul, [(x, a), (x, a)]))
    compiled_ran(check(add, [(x, np.float32(2)), (x, np.float32(2))]))


def test_integer_floordiv_by_zero_deopts_to_numpy():
    a = np.array([5, -7, 9], dtype=np.int64)
    b = np.array([2, 0, -4], dtype=np.int64)
    ok = (a, np.array([2, 3, -4], dtype=np.int64))
    with np.errstate(divide="ignore"):
        compiled = check(floordiv, [ok, ok, (a, b), ok])
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 2 and report.deopts == 1, str(report)


# Unary functions -------------------------------------------------------------------


def ufuncs(x):
    return np.exp(x), np.tanh(x), np.abs(x), -x, np.sign(x), np.floor(x), np.ceil(x), np.square(x)


def trig(x):
    return np.sin(x), np.cos(x), np.arctan2(x, 1.0)


def positive_ufuncs(x):
    return np.log(x), np.sqrt(x), np.log1p(x), x ** 2, x ** 0.5


def clip_where(x):
    return np.clip(x, -0.5, 0.5), np.where(x > 0, x, 0.0), np.maximum(x, 0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_ufuncs(dtype):
    (x,) = arrays(np.random.default_rng(4), dtype, (5, 3))
    compiled_ran(check(ufuncs, [(x,), (x,)]))
    compiled_ran(check(positive_ufuncs, [(np.abs(x) + 0.1,), (np.abs(x) + 0.1,)]))
    compiled_ran(check(clip_where, [(x,), (x,)]))
    compiled = check(trig, [(x,), (x,)])
    if dtype == "float32":
        compiled_ran(compiled)
    else:  # IREE's CPU backend has no float64 sin/cos/atan2: interpreted, and explain says so
        assert "float64" in str(pyfront.explain(compiled))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_unary_on_ints_promotes_to_float(dtype):
    (x,) = arrays(np.random.default_rng(5), dtype, (6,))
    compiled_ran(check(ufuncs, [(x,), (x,)]))


# Matmul, dot ---------------------------------------------------------------------------


def matmul(a, b):
    return a @ b


def np_dot(a, b):
    return np.dot(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul(dtype, shapes):
    a, b = arrays(np.random.default_rng(6), dtype, *shapes)
    compiled_ran(check(matmul, [(a, b), (a, b)]))


def test_dot():
    a, b = arrays(np.random.default_rng(7), "float64", (3, 4), (4, 2))
    compiled_ran(check(np_dot, [(a, b), (a, b)]))


# Reductions ------------------------------------------------------------------------------


def reductions(x):
    return (x.sum(), x.sum(axis=0), np.sum(x, axis=1, keepdims=True), x.max(axis=-1), np.min(x),
            x.mean(axis=(0, 1)), np.mean(x, axis=0, keepdims=True), x.argmax(axis=1), np.argmax(x), x.argmin(0))


@pytest.mark.parametrize("dtype", ALL)
def test_reductions(dtype):
    (x,) = arrays(np.random.default_rng(8), dtype, (4, 5))
    if dtype == "bool":
        compiled_ran(check(lambda_free_bool_reductions, [(x,), (x,)]))
    else:
        compiled_ran(check(reductions, [(x,), (x,)]))


def lambda_free_bool_reductions(x):
    return x.sum(), x.max(axis=0), x.argmax(axis=1), np.min(x, axis=1, keepdims=True)


# Shapes, views and indexing -----------------------------------------------------------------


def shapes(x):
    a = x.reshape(2, -1)
    b = np.transpose(x, (1, 0, 2))
    c = np.expand_dims(x[0], 0)
    d = np.squeeze(x[:, :1, :], axis=1)
    e = np.concatenate([x, x], axis=2)
    f = np.stack((x[0], x[1]), axis=1)
    g = np.broadcast_to(x[0, 0], (3, 4))
    # b itself, not b * 2: NumPy lays b * 2 out in b's order, not C order, so a
    # call returning it runs in the interpreter (tests/test_memory_order.py).
    return a + 1, b, c.T, d, e, f, g + 0


def views(x):
    return x.T, x[1:, ::2], x.reshape(-1), x[0]


def indexing(x):
    return x[0, 1], x[-1], x[..., 1], x[None, :, 1:3], x[1][2]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_shape_functions(dtype):
    (x,) = arrays(np.random.default_rng(9), dtype, (2, 3, 4))
    compiled_ran(check(shapes, [(x,), (x,)]))


def test_views_of_arguments_alias_the_argument():
    x = np.arange(12.0).reshape(3, 4)
    compiled = check(views, [(x,), (x,)])
    for view in compiled(x):
        assert np.shares_memory(view, x)
    assert pyfront.explain(compiled).compiled_calls >= 2


def test_basic_indexing():
    (x,) = arrays(np.random.default_rng(10), "float64", (3, 4))
    compiled_ran(check(indexing, [(x,), (x,)]))


def scaled_view(x):
    y = x * 2
    return y, y.T, y[0]


def test_views_of_results_share_memory():
    x = np.arange(6.0).reshape(2, 3)
    compiled = check(scaled_view, [(x,), (x,)])
    y, t, row = compiled(x)
    assert np.shares_memory(t, y) and np.shares_memory(row, y)
    compiled_ran(compiled)


# Dtypes, creation, Python types of results ------------------------------------------------


def conversions(x):
    return x.astype(np.float32), x.astype(np.int32), x.astype(bool), float(x.sum()), np.float32(x[0])


def items(x):
    """`.item()` gives the Python scalar of the dtype's kind (float, int, bool)."""
    return x.sum().item(), x.item(2), (x > 0).item(1), x.astype(np.int32).item(3), np.float32(x[0]).item()


def creation(x):
    z = np.zeros((2, 3))
    o = np.ones((3,), dtype=np.int32)
    f = np.full((2, 2), 7.5, dtype=np.float32)
    return z, o, f, np.zeros_like(x) + x, np.ones_like(x, dtype=np.int64), np.full_like(x, 3)


def test_conversions():
    x = np.array([1.7, -2.2, 0.0, 3.9])
    compiled_ran(check(conversions, [(x,), (x,)]))
    compiled_ran(check(items, [(x,), (x,), (-x,)]))


def test_creation():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compiled = check(creation, [(x,), (x,)])
    a, b = compiled(x), compiled(x)
    assert a[0] is not b[0], "constants returned by compiled code must be fresh arrays"
    compiled_ran(compiled)


# Functions: helpers, Python arguments, tuples, returning arguments ------------------------


def relu(h):
    return np.maximum(h, 0.0)


def dense(x, w, b, activation):
    y = x @ w + b
    if activation == "relu":
        return relu(y)
    return np.tanh(y)


def mlp(x, params, scale):
    w1, b1, w2, b2 = params
    h = dense(x, w1, b1, "relu")
    return dense(h, w2, b2, "tanh") * scale, h.shape


def test_helpers_tuples_and_python_arguments():
    rng = np.random.default_rng(11)
    x, w1, b1, w2, b2 = arrays(rng, "float32", (4, 8), (8, 16), (16,), (16, 3), (3,))
    params = (w1, b1, w2, b2)
    compiled_ran(check(mlp, [(x, params, 2), (x, params, 2), (x, params, 0.5), (x, params, 0.5)]))


def passthrough(x, n):
    return x, n, None


def test_returning_arguments_keeps_identity():
    x = np.ones(3)
    compiled = pyfront.compile(passthrough, profile_calls=1)
    compiled(x, 1)
    out = compiled(x, 1)
    assert out[0] is x and out[1] == 1 and out[2] is None


def scale(x, k):
    return x * k


def test_changing_argument_types_shapes_and_dtypes():
    rng = np.random.default_rng(12)
    calls = [(3, 2), (3, 2), (3.5, 2), (3.5, 2)]
    for dtype in ("float32", "int64", "float64"):
        for shape in ((4, 8), (3, 8), (2,)):
            (x,) = arrays(rng, dtype, shape)
            calls += [(x, 2), (x, 2.5)]
    compiled = check(scale, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0 and report.compilations >= 2, str(report)


# Methods and attributes --------------------------------------------------------------------


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.name = "linear"

    @pyfront.compile(profile_calls=1)
    def __call__(self, x):
        return x @ self.w + self.b

    def forward(self, x):
        return np.tanh(x @ self.w + self.b)


def test_method_decorated_in_class_body():
    rng = np.random.default_rng(13)
    w, b, x = arrays(rng, "float64", (4, 3), (3,), (2, 4))
    layer = Linear(w, b)
    other = Linear(w * 2, b)
    for _ in range(3):
        np.testing.assert_allclose(layer(x), x @ w + b)
        np.testing.assert_allclose(other(x), x @ (w * 2) + b)
    layer.w = w * 3  # rebinding is seen on the next call
    np.testing.assert_allclose(layer(x), x @ (w * 3) + b)
    layer.w[0, 0] = 100.0  # so is an in-place mutation
    np.testing.assert_allclose(layer(x), x @ layer.w + b)
    assert pyfront.explain(Linear.__call__).compiled_calls >= 4


def call_forward(model, x):
    return model.forward(x)


def test_object_argument_and_inlined_method():
    rng = np.random.default_rng(14)
    w, b, x = arrays(rng, "float32", (4, 3), (3,), (2, 4))
    compiled_ran(check(call_forward, [(Linear(w, b), x), (Linear(w, b), x)]))


W_GLOBAL = np.arange(12.0).reshape(4, 3)
OFFSET = 1.5


def uses_globals(x):
    return x @ W_GLOBAL + OFFSET


def test_globals_are_read_at_call_time():
    global W_GLOBAL, OFFSET
    x = np.ones((2, 4))
    compiled = pyfront.compile(uses_globals, profile_calls=1)
    for _ in range(2):
        np.testing.assert_array_equal(compiled(x), x @ W_GLOBAL + OFFSET)
    saved = W_GLOBAL, OFFSET
    try:
        W_GLOBAL = W_GLOBAL * 2
        np.testing.assert_array_equal(compiled(x), x @ W_GLOBAL + OFFSET)
        W_GLOBAL[0, 0] = -7.0
        np.testing.assert_array_equal(compiled(x), x @ W_GLOBAL + OFFSET)
        OFFSET = 10.0
        np.testing.assert_array_equal(compiled(x), x @ W_GLOBAL + OFFSET)
    finally:
        W_GLOBAL, OFFSET = saved
    assert pyfront.explain(compiled).compiled_calls >= 3


def make_closure(k):
    bias = np.full(3, float(k))

    def shifted(x):
        return x * k + bias
    return shifted


def test_closures():
    x = np.arange(3.0)
    compiled_ran(check(make_closure(2), [(x,), (x,)]))


# What does not compile runs in the interpreter, and explain says why ------------------------


def guarded_log(x):
    try:
        return np.log(x)
    except ValueError:
        return x


def test_unsupported_runs_interpreted_and_explain_names_the_line():
    x = np.ones(3)
    compiled = check(guarded_log, [(x,), (x,), (x * 2,)])
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and report.interpreted_calls == 3
    text = str(report)
    assert "test_differential.py:" in text and "try/except is not supported" in text, text


def raises_on_shapes(a, b):
    return a + b


def test_exceptions_match_the_interpreter():
    a, b = np.ones(3), np.ones(4)
    check(raises_on_shapes, [(a, b), (a, b)])


class RNNCell:
    def __init__(self, w, h):
        self.w = w
        self.h = h

    def step(self, x):
        self.h = np.tanh(x @ self.w + self.h)
        return self.h * 2


def rnn_step(cell, x):
    return cell.step(x)


def test_attribute_stores_are_committed():
    rng = np.random.default_rng(15)
    w, h, x = arrays(rng, "float64", (3, 3), (3,), (2, 3))
    compiled = check(rnn_step, [(RNNCell(w, h), x)] * 3)
    cell = RNNCell(w, h)
    expected = RNNCell(w.copy(), h.copy())
    for _ in range(3):
        np.testing.assert_allclose(compiled(cell, x), rnn_step(expected, x))
        np.testing.assert_allclose(cell.h, expected.h)
    compiled_ran(compiled)


def identity_of_sequences(params, x):
    return params, x * 2


def test_returned_tuple_and_list_arguments_are_the_callers_objects():
    w = np.ones(2)
    for params in ((w, w * 2), [w, w * 3]):
        compiled = check(identity_of_sequences, [(params, w), (params, w)])
        compiled_ran(compiled)


def as_arrays(x, s):
    return np.asarray(x), np.asarray(x, dtype=np.float32), np.array(x), np.asarray(s)


def test_asarray_returns_the_array_itself():
    x = np.arange(3.0)
    compiled = check(as_arrays, [(x, np.float64(2.0)), (x, np.float64(2.0))])
    out = compiled(x, np.float64(2.0))
    assert out[0] is x and out[2] is not x
    compiled_ran(compiled)


# Constant arrays in the graph -----------------------------------------------------


def mask_with_constant(x):
    return x & (np.arange(10) % 3 == 0)  # folded at compile time to a constant


def test_mixed_bool_constant_keeps_every_element():
    x = np.array([True] * 10)
    compiled = check(mask_with_constant, [(x,), (x,), (~x,)])
    compiled_ran(compiled)
