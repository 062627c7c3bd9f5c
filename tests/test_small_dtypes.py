"""uint8/uint16/uint32/uint64, int16 and float16 arrays compile with NumPy 2's exact semantics.

Differential (tests/differential.py): each compiled call equals the
interpreter's (values, dtypes, NumPy scalar types, warnings, exceptions,
arguments after the call), and each test asserts how many calls ran compiled
or, for what stays interpreted, the reason `explain` gives. float16 results
are compared bit for bit as well (`check_bits`): differential.check allows
a few ulps, and float16 elementwise results must be NumPy's exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential import arrays, check

import pyfront

pytestmark = pytest.mark.iree

RNG = np.random.default_rng(7)
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
ALL = [np.bool_, np.int8, np.int16, np.int32, np.int64, *UNSIGNED, np.float16, np.float32, np.float64]


def compiled_calls(fn) -> int:
    return pyfront.explain(fn).compiled_calls


def reasons(fn) -> str:
    return str(pyfront.explain(fn))


def check_bits(fn, args, calls=3, **options):
    """`check`, then one more compiled call whose results must equal NumPy's byte for byte."""
    compiled = check(fn, [args] * calls, **options)
    before = compiled_calls(compiled)
    assert before == calls - 1  # all but the profiled call
    got, want = compiled(*args), fn(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (g, w)
    assert compiled_calls(compiled) == before + 1
    return compiled


# Unsigned and int16 arithmetic --------------------------------------------------------


def int_ops(a, b):
    return (a + b, a - b, a * b, a // b, a % b, a / b, a < b, a >= b, a == b, np.maximum(a, b),
            np.minimum(a, b), a & b, a | b, a ^ b, ~a, -a, np.abs(a), np.sign(a), a >> 3, a << 2,
            a.astype(np.float32), a.astype(np.int64), a.astype(np.int8))


@pytest.mark.parametrize("dtype", [*UNSIGNED, np.int16])
def test_integer_arithmetic_is_numpys(dtype):
    info = np.iinfo(dtype)
    a = np.array([0, 1, 7, info.max, info.max - 1, info.max // 2 + 1, 200, 13], dtype)
    b = np.array([1, 3, 7, 2, info.max, 9, 255, 1], dtype)  # no zero divisor
    assert compiled_calls(check(int_ops, [(a, b)] * 3)) == 2


def test_uint8_wraps_like_numpy():
    def f(a):
        return a + 1, a - 1, a * 2, a + np.uint8(200)
    a = np.array([0, 1, 127, 128, 254, 255], np.uint8)
    assert compiled_calls(check(f, [(a,)] * 3)) == 2


def test_in_place_add_on_a_uint8_array_wraps():
    def bump(a):
        a += 1
        return a
    assert compiled_calls(check(bump, [(np.array([254, 255, 0], np.uint8),)] * 3)) == 2


def test_a_python_int_beyond_the_dtype_raises_overflow_error_in_the_interpreter():
    def f(a):
        return a + 300
    compiled = check(f, [(np.arange(4, dtype=np.uint8),)] * 3)
    assert compiled_calls(compiled) == 0
    assert "Python integer 300 out of bounds for uint8" in reasons(compiled)


def test_a_computed_python_int_beyond_the_dtype_deopts():
    def f(a, n):
        return a + n
    a = np.arange(4, dtype=np.uint8)
    compiled = check(f, [(a, 3), (a, 4), (a, 5), (a, 300), (a, -1)])
    assert compiled_calls(compiled) == 2  # 300 and -1: OverflowError, from the interpreter


def test_numpy_scalar_overflow_warns_as_numpy_does():
    def f(a):
        return a[0] * a[1], a[0] + a[1], a[0] - a[1], -a[2]
    ok = np.array([3, 2, 0], np.uint8)
    compiled = check(f, [(ok,), (ok,), (ok,), (np.array([200, 100, 0], np.uint8),), (np.array([3, 2, 1], np.uint8),)])
    assert compiled_calls(compiled) == 2  # the last call warns "overflow encountered in scalar ..."


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64])
def test_scalar_overflow_of_other_int_dtypes(dtype):
    def f(a):
        return a[0] * a[1]
    info = np.iinfo(dtype)
    small = np.array([3, 2], dtype)
    check(f, [(small,), (small,), (np.array([info.max, 2], dtype),)])


def test_unsigned_division_by_zero_deopts_and_warns():
    def f(a, b):
        return a // b, a % b
    a = np.array([7, 200, 255], np.uint8)
    compiled = check(f, [(a, np.array([2, 3, 4], np.uint8))] * 2 + [(a, np.array([2, 0, 4], np.uint8))])
    assert compiled_calls(compiled) == 1


@pytest.mark.parametrize("other", ALL)
def test_uint8_promotes_with_every_dtype(other):
    def f(a, b):
        return a + b, a * b, a - 1.5, a * 2
    a = np.array([0, 3, 200, 255], np.uint8)
    (b,) = arrays(RNG, other, (4,))
    assert compiled_calls(check(f, [(a, b)] * 3)) == 2


def test_uint64_and_int64_compare_in_the_interpreter():
    def f(a, b):
        return a < b
    compiled = check(f, [(np.array([2**64 - 1, 3], np.uint64), np.array([-1, 4]))] * 3)
    assert compiled_calls(compiled) == 0
    assert "operand dtypes differ: uint64, int64" in reasons(compiled)


def test_reductions_accumulate_as_numpy():
    def f(img):
        return (img.sum(), img.sum(axis=1), img.mean(), img.mean(axis=0), img.max(), img.min(axis=1),
                img.argmax(), img.argmin(axis=0), (img > 128).mean(), img.prod(axis=0), img.sum(dtype=np.uint8))
    img = RNG.integers(0, 256, (5, 7), dtype=np.uint8)
    assert compiled_calls(check(f, [(img,)] * 3)) == 2


def test_results_are_numpy_scalars_where_numpy_returns_them():
    def f(img):
        return img[1, 2], img.max(), img.sum(), img[0, 0] + np.uint8(1)
    compiled = check(f, [(np.arange(12, dtype=np.uint8).reshape(3, 4),)] * 3)
    assert compiled_calls(compiled) == 2
    assert [type(v) for v in compiled(np.ones((3, 4), np.uint8))] == [np.uint8, np.uint8, np.uint64, np.uint8]


# Casts ------------------------------------------------------------------------------------


def test_float_to_uint8_casts_and_clips():
    def f(x):
        return np.clip(x * 255.0, 0, 255).astype(np.uint8), x.astype(np.uint16)
    x = RNG.random((3, 4))
    assert compiled_calls(check(f, [(x,)] * 3)) == 2


@pytest.mark.parametrize("bad", [-1.5, 256.0, np.nan, np.inf])
def test_float_to_uint8_out_of_range_runs_in_the_interpreter(bad):
    def f(x):
        return x.astype(np.uint8)
    ok = np.array([0.5, 255.9, -0.5])
    compiled = check(f, [(ok,), (ok,), (np.array([bad, 1.0]),)])
    assert compiled_calls(compiled) == 1


def test_uint64_to_float_and_back():
    def f(a, x):
        return a.astype(np.float64), a.astype(np.float32), x.astype(np.uint64)
    a = np.array([2**64 - 1, 2**63 + 1, 5, 0], np.uint64)
    x = np.array([0.0, 1.5, 2.0**63 + 2**12, 2.0**64 - 2**11])
    assert compiled_calls(check(f, [(a, x)] * 3)) == 2


def test_bool_and_uint8_convert_both_ways():
    def f(a):
        return a.astype(bool), (a > 3).astype(np.uint8), a.astype(np.int8), a.astype(np.uint8) * 1.0
    assert compiled_calls(check(f, [(np.array([0, 1, 200, 255], np.uint8),)] * 3)) == 2


# Indexing and writes --------------------------------------------------------------------


def test_uint8_index_arrays_read_rows_past_127():
    def f(table, idx):
        return table[idx], table[idx, 1] * 2.0
    table = RNG.standard_normal((256, 3))
    idx = np.array([[200, 255], [3, 128]], np.uint8)
    assert compiled_calls(check(f, [(table, idx)] * 3)) == 2


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64])
def test_wider_unsigned_index_arrays(dtype):
    def f(table, idx):
        return table[idx]
    table = np.arange(300.0)
    calls = [(table, np.array([200, 299, 3], dtype))] * 3
    if dtype == np.uint64:  # NumPy casts to intp: 2**64 - 1 is -1, 2**63 is out of bounds (IndexError)
        calls += [(table, np.array([2**64 - 1, 2**64 - 300], dtype)), (table, np.array([2**63, 1], dtype))]
    assert compiled_calls(check(f, calls)) == len(calls) - 1 - (dtype == np.uint64)


def test_one_hot_from_uint8_labels():
    def one_hot(labels):
        n = labels.shape[0]
        out = np.zeros((n, 10), np.float32)
        out[np.arange(n), labels] = 1
        return out
    assert compiled_calls(check(one_hot, [(np.array([3, 0, 9, 7], np.uint8),)] * 3)) == 2


def test_masked_write_into_a_uint8_image():
    def threshold(img):
        img[img > 200] = 0
        return img
    img = RNG.integers(0, 256, (4, 6), dtype=np.uint8)
    assert compiled_calls(check(threshold, [(img,)] * 3)) == 2


class FrameBuffer:
    def __init__(self):
        self.last = np.zeros((4, 6), np.uint8)
        self.seen = np.zeros(6, np.uint16)
        self.total = np.zeros((4, 6), np.uint8)

    def push(self, frame):
        self.last[:] = frame
        self.seen += 1
        self.total = self.total + frame  # rebound each call: its old buffer can hold the new value
        return frame.astype(np.float32) / 255.0


def test_uint8_and_uint16_state_arrays_are_written():
    buffer = FrameBuffer()
    push = pyfront.compile(buffer.push)
    frame = RNG.integers(0, 256, (4, 6), dtype=np.uint8)
    for _ in range(4):
        out = push(frame)
    assert compiled_calls(push) == 2
    np.testing.assert_array_equal(out, frame.astype(np.float32) / 255.0)
    assert buffer.last.dtype == np.uint8 and np.array_equal(buffer.last, frame)
    assert buffer.seen.dtype == np.uint16 and list(buffer.seen) == [4] * 6
    assert buffer.total.dtype == np.uint8 and np.array_equal(buffer.total, frame * np.uint8(4))


def mlp_forward(images, labels, W1, b1, W2, b2):
    """A uint8 image batch through a float32 MLP: the loss and accuracy."""
    x = images.reshape(images.shape[0], -1).astype(np.float32) / 255.0
    h = np.maximum(x @ W1 + b1, 0)
    logits = h @ W2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p = p / p.sum(axis=1, keepdims=True)
    n = labels.shape[0]
    loss = -np.log(p[np.arange(n), labels]).mean()
    accuracy = (p.argmax(axis=1) == labels).mean()
    return loss, accuracy


def test_uint8_batches_of_varying_size_relax_to_dynamic_dims():
    def f(img, labels):
        return (img.astype(np.float32) / 255.0).sum(axis=1), img // 3, labels + 1, img.max(axis=0)
    calls = [(RNG.integers(0, 256, (n, 6), dtype=np.uint8), RNG.integers(0, 256, n, dtype=np.uint8))
             for n in (4, 4, 5, 7, 9, 3)]
    compiled = check(f, calls)
    assert compiled_calls(compiled) == 5
    assert pyfront.explain(compiled).compilations == 2  # (4, 6), then (?, 6) for every later batch


def test_uint8_image_batch_through_a_float32_mlp():
    images = RNG.integers(0, 256, (8, 6, 6), dtype=np.uint8)
    labels = RNG.integers(0, 10, 8).astype(np.uint8)
    params = (RNG.standard_normal((36, 16)).astype(np.float32) * 0.1, np.zeros(16, np.float32),
              RNG.standard_normal((16, 10)).astype(np.float32) * 0.1, np.zeros(10, np.float32))
    assert compiled_calls(check(mlp_forward, [(images, labels, *params)] * 3)) == 2


# float16 -------------------------------------------------------------------------------------


def _finite_halves(limit: float) -> np.ndarray:
    every = np.arange(2**16, dtype=np.uint16).view(np.float16)
    return RNG.permutation(every[np.isfinite(every) & (np.abs(every) < limit)])


def test_float16_arithmetic_is_bit_exact_over_all_values():
    def f(a, b):
        return a + b, a - b, a * b, a / b, a < b, np.maximum(a, b), np.minimum(a, b), -a, np.sqrt(np.abs(a))
    a = _finite_halves(200.0)
    b = _finite_halves(200.0)
    b = np.resize(b[np.abs(b) >= 0.01], a.size)  # a / b neither divides by zero nor overflows (warnings deopt)
    check_bits(f, (a, b), compare_warnings=False)


def test_float16_subnormals_and_signed_zeros():
    def f(a, b):
        return a * b, a + b, a / b, np.maximum(a, b), np.minimum(b, a), a // b, a % b
    a = np.array([6e-8, 1e-5, -3e-5, 0.0, -0.0, 6e-5], np.float16)
    b = np.array([0.5, 3.0, 0.25, -0.0, 0.0, -1.5], np.float16)
    b_nonzero = np.where(b == 0, np.float16(1), b)
    check_bits(f, (a, b_nonzero))
    check_bits(lambda x, y: (np.maximum(x, y), np.minimum(x, y)), (a, b))


def test_float16_casts_round_once():
    def f(x64, x32, i):
        halves = x64.astype(np.float16)
        return halves, x32.astype(np.float16), i.astype(np.float16), halves.astype(np.int32)
    x64 = np.array([1 + 2**-11 + 2**-30, 1e-6, 6e-8, 3e-8, -1e-7, 65519.0, 2.5])
    x32 = x64.astype(np.float32)
    i = np.array([1, 2049, -65519, 300], np.int64)
    check_bits(f, (x64, x32, i))


def test_int_to_float16_overflow_deopts():
    def f(i):
        return i.astype(np.float16)
    compiled = check(f, [(np.array([1, 65519]),)] * 2 + [(np.array([1, 65520]),)])
    assert compiled_calls(compiled) == 1


def test_mixed_precision_elementwise_compiles():
    def f(x16, w32):
        y = x16.astype(np.float32) * w32 + 1.0
        return y.astype(np.float16), np.where(x16 > 0, x16, np.float16(0)), x16 + np.uint8(3)
    check_bits(f, ((RNG.standard_normal(64) * 4).astype(np.float16), RNG.standard_normal(64).astype(np.float32)))


@pytest.mark.parametrize("a_shape, b_shape", [((5, 3), (3, 4)), ((300,), (300, 7)), ((33, 1000), (1000,)),
                                              ((64, 256), (256, 64)), ((4, 2, 7, 9), (4, 1, 9, 3)), ((6,), (6,))])
def test_float16_matmul_is_bit_exact(a_shape, b_shape):
    def mixed_precision(w16, x16):
        return (w16 @ x16).astype(np.float32), w16 @ x16
    w16, x16 = ((RNG.standard_normal(s) * 3).astype(np.float16) for s in (a_shape, b_shape))
    check_bits(mixed_precision, (w16, x16))


@pytest.mark.parametrize("fn, reason", [
    (lambda x: np.exp(x), "np.exp on float16: float16 results of IREE's float32 approximation"),
    (lambda x: x.sum(), "np.sum of float16: float16 sums accumulate in float32 in NumPy's own order"),
    (lambda x: x.mean(), "np.mean of float16: float16 sums accumulate in float32 in NumPy's own order"),
    (lambda x: x.prod(), "np.prod of float16: float16 sums accumulate in float32"),
])
def test_float16_ops_numpy_rounds_its_own_way_stay_interpreted(fn, reason):
    compiled = check(fn, [((RNG.standard_normal(16)).astype(np.float16),)] * 3)
    assert compiled_calls(compiled) == 0
    assert reason in reasons(compiled)


# Export ------------------------------------------------------------------------------------------


def test_export_of_a_uint8_input(tmp_path):
    def prepare(frames, w):
        return (frames.astype(np.float32) / 255.0) @ w, frames.max(), frames + 1
    args = (RNG.integers(0, 256, (4, 6), dtype=np.uint8), RNG.standard_normal((6, 3)).astype(np.float32))
    pyfront.export(prepare, *args, path=tmp_path / "prepare.pyfront", dynamic_dims={0: [0]})
    artifact = pyfront.load(tmp_path / "prepare.pyfront")
    args = (RNG.integers(0, 256, (7, 6), dtype=np.uint8), args[1])  # another batch size
    got, want = artifact(*args), prepare(*args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)  # float32 sums in another order
    assert type(got[1]) is np.uint8 and got[1] == want[1]
    assert got[2].dtype == np.uint8 and np.array_equal(got[2], want[2])
