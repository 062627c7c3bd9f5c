"""pyfront.nn and its primitives (dialects/primitives/nn.py).

- impls against straightforward loop references (small sizes, strides,
  padding, non-square kernels, ties in max pooling);
- every VJP rule against central finite differences in float64;
- the public functions: their documented examples (doctest), argument errors;
- compiled vs interpreted (tests/differential.py `check`) for each
  primitive-backed function, the composites, a LeNet-style forward on 8x8
  images with a varying batch size, embedding's index guard, and dropout's
  random stream (compiled, drawn on the host: test_random.py tests draws).
The lowerings against the impls on the table's own cases run in
test_primitives.py.
"""

from __future__ import annotations

import copy
import doctest

import numpy as np
import pytest
from differential import check
from pyfront.dialects.primitives import bind, get

import pyfront
from pyfront import nn

WINDOWS = [  # (kernel, strides, padding)
    ((2, 2), (2, 2), (0, 0)),
    ((3, 2), (2, 1), (1, 1)),
    ((3, 3), (1, 1), (1, 0)),
]


def _padded(x, padding, value=0.0):
    ph, pw = padding
    out = np.full((*x.shape[:2], x.shape[2] + 2 * ph, x.shape[3] + 2 * pw), value, x.dtype)
    out[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]] = x
    return out


def _positions(shape, kernel, strides, padding):
    """(n, oh, ow, the padded window's slices) for every window, by loops."""
    h, w = shape[2] + 2 * padding[0], shape[3] + 2 * padding[1]
    for n in range(shape[0]):
        for oh, top in enumerate(range(0, h - kernel[0] + 1, strides[0])):
            for ow, left in enumerate(range(0, w - kernel[1] + 1, strides[1])):
                yield n, oh, ow, (slice(top, top + kernel[0]), slice(left, left + kernel[1]))


def _out_hw(shape, kernel, strides, padding):
    return tuple((shape[2 + i] + 2 * padding[i] - kernel[i]) // strides[i] + 1 for i in range(2))


def ref_conv(x, w, strides, padding):
    xp = _padded(x, padding)
    out = np.zeros((x.shape[0], w.shape[0], *_out_hw(x.shape, w.shape[2:], strides, padding)), x.dtype)
    for n, oh, ow, (rows, cols) in _positions(x.shape, w.shape[2:], strides, padding):
        for o in range(w.shape[0]):
            out[n, o, oh, ow] = np.sum(xp[n, :, rows, cols] * w[o])
    return out


def ref_conv_grads(x, w, ct, strides, padding):
    dx, dw = np.zeros_like(_padded(x, padding)), np.zeros_like(w)
    xp = _padded(x, padding)
    for n, oh, ow, (rows, cols) in _positions(x.shape, w.shape[2:], strides, padding):
        for o in range(w.shape[0]):
            dx[n, :, rows, cols] += ct[n, o, oh, ow] * w[o]
            dw[o] += ct[n, o, oh, ow] * xp[n, :, rows, cols]
    ph, pw = padding
    return dx[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]], dw


def ref_pool(x, ct, kernel, strides, padding, kind):
    """(pooled, gradient) by loops; max sends the cotangent to the first maximum in row-major order."""
    xp = _padded(x, padding, -np.inf if kind == "max" else 0.0)
    out = np.zeros((*x.shape[:2], *_out_hw(x.shape, kernel, strides, padding)), x.dtype)
    dx = np.zeros_like(xp)
    for n, oh, ow, (rows, cols) in _positions(x.shape, kernel, strides, padding):
        for c in range(x.shape[1]):
            window = xp[n, c, rows, cols]
            if kind == "avg":
                out[n, c, oh, ow] = window.sum() / window.size
                dx[n, c, rows, cols] += ct[n, c, oh, ow] / window.size
                continue
            best = None
            for i in range(kernel[0]):
                for j in range(kernel[1]):
                    if best is None or window[i, j] > window[best]:
                        best = (i, j)
            out[n, c, oh, ow] = window[best]
            dx[n, c, rows.start + best[0], cols.start + best[1]] += ct[n, c, oh, ow]
    ph, pw = padding
    return out, dx[:, :, ph : ph + x.shape[2], pw : pw + x.shape[3]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel, strides, padding", WINDOWS)
def test_conv_impls_match_loops(kernel, strides, padding, dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-4, 5, (2, 3, 7, 6)).astype(dtype)  # small integers: every order sums exactly
    w = rng.integers(-4, 5, (4, 3, *kernel)).astype(dtype)
    out = bind.apply("conv2d", x, w, strides=strides, padding=padding)
    np.testing.assert_array_equal(out, ref_conv(x, w, strides, padding))
    assert out.dtype == dtype
    ct = rng.integers(-4, 5, out.shape).astype(dtype)
    dx, dw = ref_conv_grads(x, w, ct, strides, padding)
    window = dict(strides=strides, padding=padding)
    np.testing.assert_array_equal(bind.apply("conv2d_input_grad", ct, w, input_hw=(7, 6), **window), dx)
    np.testing.assert_array_equal(bind.apply("conv2d_filter_grad", x, ct, kernel=kernel, **window), dw)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kernel, strides, padding", WINDOWS)
def test_pool_impls_match_loops(kernel, strides, padding, kind):
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, (2, 3, 7, 6)).astype(np.float64)  # few values: many ties
    window = dict(kernel=kernel, strides=strides, padding=padding)
    out = bind.apply(f"{kind}_pool2d", x, **window)
    ct = rng.integers(-4, 5, out.shape).astype(np.float64)
    want_out, want_dx = ref_pool(x, ct, kernel, strides, padding, kind)
    np.testing.assert_allclose(out, want_out, rtol=1e-14, atol=1e-14)  # (avg: divisions by 6 round)
    grad = (bind.apply("max_pool2d_grad", x, ct, **window) if kind == "max"
            else bind.apply("avg_pool2d_grad", ct, input_hw=(7, 6), **window))
    np.testing.assert_allclose(grad, want_dx, rtol=1e-14, atol=1e-14)


def test_max_pool_grad_first_maximum_and_nan():
    x = np.array([[[[1.0, 3.0], [3.0, 0.0]], [[np.nan, 2.0], [np.nan, 5.0]]]])
    g = bind.apply("max_pool2d_grad", x, np.array([[[[7.0]], [[9.0]]]]), kernel=(2, 2), strides=(2, 2), padding=(0, 0))
    np.testing.assert_array_equal(g, [[[[0, 7], [0, 0]], [[9, 0], [0, 0]]]])


def test_embedding_impls_match_loops():
    rng = np.random.default_rng(2)
    table = rng.standard_normal((5, 3))
    indices = np.array([[0, 4, -1], [2, 2, -5]])
    out = bind.apply("embedding", table, indices)
    for pos in np.ndindex(indices.shape):
        np.testing.assert_array_equal(out[pos], table[indices[pos] % 5])
    ct = rng.standard_normal(out.shape)
    want = np.zeros_like(table)
    for pos in np.ndindex(indices.shape):
        want[indices[pos] % 5] += ct[pos]
    np.testing.assert_allclose(bind.apply("embedding_grad", ct, indices, num_rows=5), want, rtol=1e-15)
    with pytest.raises(IndexError):
        nn.embedding(table, np.array([5]))


# VJPs against central finite differences (float64) -----------------------------

VJP_CASES = [  # (primitive, operand shapes, params)
    ("conv2d", [(2, 2, 5, 4), (3, 2, 3, 2)], dict(strides=(2, 1), padding=(1, 1))),
    ("conv2d_input_grad", [(2, 3, 3, 5), (3, 2, 3, 2)], dict(input_hw=(5, 4), strides=(2, 1), padding=(1, 1))),
    ("conv2d_filter_grad", [(2, 2, 5, 4), (2, 3, 3, 5)], dict(kernel=(3, 2), strides=(2, 1), padding=(1, 1))),
    ("max_pool2d", [(2, 2, 5, 4)], dict(kernel=(2, 2), strides=(1, 2), padding=(1, 0))),
    ("max_pool2d", [(2, 2, 5, 4)], dict(kernel=(2, 2), strides=(2, 2), padding=(0, 0))),  # tiles
    ("avg_pool2d", [(2, 2, 5, 4)], dict(kernel=(3, 2), strides=(2, 2), padding=(1, 1))),
    ("avg_pool2d_grad", [(2, 2, 3, 3)], dict(input_hw=(5, 4), kernel=(3, 2), strides=(2, 2), padding=(1, 1))),
    ("avg_pool2d_grad", [(2, 2, 2, 2)], dict(input_hw=(5, 4), kernel=(2, 2), strides=(2, 2), padding=(0, 0))),
    ("embedding", [(4, 3), (2, 3)], {}),
    ("embedding_grad", [(2, 3, 5), (2, 3)], dict(num_rows=4)),
]


@pytest.mark.parametrize("name, shapes, params", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_vjp_matches_finite_differences(name, shapes, params):
    rng = np.random.default_rng(3)
    xs = [rng.integers(-4, 4, s) if name.startswith("embedding") and i == 1 else rng.standard_normal(s)
          for i, s in enumerate(shapes)]
    out = bind.apply(name, *xs, **params)
    ct = rng.standard_normal(out.shape)
    cts = get(name).vjp(ct, out, *xs, **params)
    assert len(cts) == len(xs)
    eps = 1e-6
    for i, (x, got) in enumerate(zip(xs, cts)):
        if x.dtype.kind != "f":
            assert got is None
            continue
        assert got.shape == x.shape and got.dtype == x.dtype
        want = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            hi, lo = [v.copy() for v in xs], [v.copy() for v in xs]
            hi[i][k] += eps
            lo[i][k] -= eps
            want[k] = np.sum(ct * (bind.apply(name, *hi, **params) - bind.apply(name, *lo, **params))) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


# The operands whose first dim is a batch (the only dims that may be dynamic).
BATCHED = {"conv2d": (0,), "conv2d_input_grad": (0,), "conv2d_filter_grad": (0, 1), "max_pool2d": (0,),
           "avg_pool2d": (0,), "avg_pool2d_grad": (0,), "embedding": (1,), "embedding_grad": (0, 1)}


@pytest.mark.iree
def test_primitives_and_vjps_compile_with_a_dynamic_batch():
    """Each VJP case with its batch dim dynamic: the primitive and its VJP rule built on IR values,
    lowered and compiled in one function, run with batch 3, equal the NumPy impl and rule."""
    iree_compiler = pytest.importorskip("iree.compiler")
    iree_runtime = pytest.importorskip("iree.runtime")
    from pyfront.dialects import verify_module
    from pyfront.dialects.mlir import func, ir, new_context
    from pyfront.dialects.types import tensor_type
    from pyfront.passes import run_passes

    rng = np.random.default_rng(11)
    inputs, want, arg_types = [], [], []
    for name, shapes, params in VJP_CASES:
        dynamic = [(None, *s[1:]) if i in BATCHED[name] else s for i, s in enumerate(shapes)]
        xs = [rng.integers(-4, 4, s) if name.startswith("embedding") and i == 1 else rng.standard_normal(s)
              for i, s in enumerate(shapes)]
        out = bind.apply(name, *xs, **params)
        ct = rng.standard_normal(out.shape)
        out_dynamic = out.shape if name.endswith(("filter_grad", "embedding_grad")) else (None, *out.shape[1:])
        arg_types += [*zip(dynamic, (x.dtype for x in xs)), (out_dynamic, ct.dtype)]
        inputs += [*xs, ct]
        want += [out, *(c for c in get(name).vjp(ct, out, *xs, **params) if c is not None)]
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        types = [tensor_type(s, d) for s, d in arg_types]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("run", (types, []))
            with ir.InsertionPoint(fn.add_entry_block()):
                args, results = list(fn.arguments), []
                for name, shapes, params in VJP_CASES:
                    xs, ct, args = args[: len(shapes)], args[len(shapes)], args[len(shapes) + 1 :]
                    out = get(name).build(xs, **params)
                    results += [out, *(c for c in get(name).vjp(ct, out, *xs, **params) if c is not None)]
                func.ReturnOp(results)
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [r.type for r in results]))
        verify_module(module)
        run_passes(module, ["lower-to-linalg"])
        asm = str(module)
    vmfb = iree_compiler.compile_str(asm, target_backends=["llvm-cpu"],
                                     extra_args=["--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"])
    config = iree_runtime.Config("local-task")
    context = iree_runtime.SystemContext(config=config)
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, vmfb))
    got = context.modules.module["run"](*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g.to_host()), w, rtol=1e-12, atol=1e-12)


# The public functions ----------------------------------------------------------


def test_documented_examples():
    result = doctest.testmod(nn, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 6 and result.failed == 0


@pytest.mark.parametrize("call, error", [
    (lambda: nn.conv2d(np.ones((1, 2, 4, 4)), np.ones((3, 1, 3, 3))), ValueError),  # channels
    (lambda: nn.conv2d(np.ones((1, 1, 4, 4)), np.ones((3, 1, 3, 3), np.float32)), TypeError),  # dtypes
    (lambda: nn.conv2d(np.ones((1, 1, 4, 4), int), np.ones((3, 1, 3, 3), int)), TypeError),
    (lambda: nn.max_pool2d(np.ones((1, 1, 4, 4)), 2, padding=2), ValueError),
    (lambda: nn.avg_pool2d(np.ones((1, 1, 4, 4)), (2, 2, 2)), TypeError),
    (lambda: nn.embedding(np.ones((3, 2)), np.array([0.0])), TypeError),
])
def test_bad_arguments_raise(call, error):
    with pytest.raises(error):
        call()


def test_composites_match_definitions():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5))
    np.testing.assert_allclose(nn.softmax(x), np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(nn.log_softmax(x), np.log(nn.softmax(x)), rtol=1e-13)
    labels = np.array([0, 4, 2])
    want = -np.mean([np.log(nn.softmax(x)[i, c]) for i, c in enumerate(labels)])
    np.testing.assert_allclose(nn.cross_entropy(x, labels), want, rtol=1e-13)
    np.testing.assert_allclose(nn.sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-14)
    y, mean, var = nn.batch_norm(x, np.ones(5), np.zeros(5), np.zeros(5), np.ones(5), True, momentum=0.5)
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(mean, 0.5 * x.mean(0), rtol=1e-14)
    np.testing.assert_allclose(var, 0.5 + 0.5 * x.var(0), rtol=1e-14)
    stats = np.zeros(5), np.ones(5)
    assert nn.batch_norm(x, np.ones(5), np.zeros(5), *stats, False)[1] is stats[0]


# Compiled vs interpreted -----------------------------------------------------------


def _floats(rng, dtype, *shapes):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.iree
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_conv_and_pooling(dtype):
    def f(x, w):
        y = nn.conv2d(x, w, stride=(2, 1), padding=1)
        return nn.max_pool2d(y, 2, stride=1), nn.avg_pool2d(y, (3, 2), padding=(1, 1))

    rng = np.random.default_rng(5)
    fn = check(f, [tuple(_floats(rng, dtype, (2, 3, 7, 6), (4, 3, 3, 2))) for _ in range(3)])
    assert pyfront.explain(fn).compiled_calls > 0


@pytest.mark.iree
def test_compiled_embedding_and_index_guard():
    def f(table, indices):
        return nn.embedding(table, indices) * 2.0

    rng = np.random.default_rng(6)
    table = rng.standard_normal((6, 4)).astype(np.float32)
    good = [(table, rng.integers(-6, 6, (3, 5))) for _ in range(3)]
    fn = check(f, good + [(table, np.array([[0, 6, 1, 2, 3]] * 3))] + good[:1])  # 6: IndexError
    report = pyfront.explain(fn)
    assert report.compiled_calls > 0 and report.deopts >= 1


@pytest.mark.iree
def test_compiled_composites():
    def f(x, gamma, beta, mean, var, labels, training):
        y, mean, var = nn.batch_norm(x, gamma, beta, mean, var, training)
        z = nn.layer_norm(nn.gelu(y), gamma, beta)
        return nn.cross_entropy(z, labels), nn.log_softmax(nn.sigmoid(z)), mean, var

    rng = np.random.default_rng(7)
    calls = [(*_floats(rng, np.float32, (6, 5), (5,), (5,), (5,)), np.ones(5, np.float32),
              rng.integers(0, 5, 6), training) for training in (True, True, True, False, False)]
    fn = check(f, calls)
    assert pyfront.explain(fn).compiled_calls > 0


def lenet(params, x, labels):
    h = nn.relu(nn.conv2d(x, params["conv1"], padding=1) + params["b1"][:, None, None])
    h = nn.max_pool2d(h, 2)  # 4x4
    h = nn.relu(nn.conv2d(h, params["conv2"], padding=1))
    h = nn.avg_pool2d(h, 2)  # 2x2
    logits = h.reshape(-1, 32) @ params["fc"]
    return nn.cross_entropy(logits, labels), np.argmax(logits, axis=1)


@pytest.mark.iree
def test_lenet_forward_compiled_with_varying_batch():
    rng = np.random.default_rng(8)
    params = {"conv1": rng.standard_normal((4, 1, 3, 3)).astype(np.float32) * 0.5,
              "b1": rng.standard_normal(4).astype(np.float32),
              "conv2": rng.standard_normal((8, 4, 3, 3)).astype(np.float32) * 0.3,
              "fc": rng.standard_normal((32, 10)).astype(np.float32) * 0.2}
    batches = [8, 8, 8, 5, 6, 7]  # the last batches are smaller: the batch dim becomes dynamic
    calls = [(params, rng.random((n, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, n)) for n in batches]
    fn = check(lenet, calls)
    report = pyfront.explain(fn)
    assert report.compiled_calls >= 4


def _dropout_model(rng):
    def f(x, training):
        return nn.dropout(nn.relu(x), 0.5, rng, training) * 2.0
    return f


@pytest.mark.iree
def test_dropout_compiles_with_the_same_stream():
    x = np.random.default_rng(9).standard_normal((4, 6))
    rng_a, rng_b = np.random.default_rng(10), np.random.default_rng(10)
    compiled, plain = pyfront.compile(_dropout_model(rng_a)), _dropout_model(rng_b)
    for training in (True, True, True, False, False, False, True, False):
        np.testing.assert_array_equal(compiled(x, training), plain(x, training))
        assert rng_a.bit_generator.state == rng_b.bit_generator.state
    assert pyfront.explain(compiled).compiled_calls == 6  # the mask is drawn on the host, from rng_a itself


@pytest.mark.iree
def test_dropout_off_compiles():
    def f(x, rate):
        return nn.dropout(x, rate, None, training=False) + nn.dropout(x, 0, None)

    fn = check(f, [(np.ones((2, 3), np.float32), 0.5)] * 3)
    assert pyfront.explain(fn).compiled_calls > 0


def test_dropout_mask():
    x = np.ones((1000,))
    y = nn.dropout(x, 0.25, np.random.default_rng(0))
    assert set(np.unique(y)) == {0.0, 1 / 0.75} and 0.2 < np.mean(y == 0) < 0.3
    rng = np.random.default_rng(0)
    state = copy.deepcopy(rng.bit_generator.state)
    assert nn.dropout(x, 0.25, rng, training=False) is x and rng.bit_generator.state == state
