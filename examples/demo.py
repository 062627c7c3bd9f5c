"""pyfront in one screen: compile a NumPy MLP, compare its speed with NumPy, read explain().

    python examples/demo.py
"""

import time

import numpy as np

import pyfront


@pyfront.compile
def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0.0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def median_seconds(fn, *args, repeats=200):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    w1 = rng.standard_normal((256, 512)).astype(np.float32) * 0.05
    b1 = np.zeros(512, np.float32)
    w2 = rng.standard_normal((512, 10)).astype(np.float32) * 0.05
    b2 = np.zeros(10, np.float32)
    args = (x, w1, b1, w2, b2)

    start = time.perf_counter()
    for _ in range(3):  # profiled in the interpreter, then compiled
        out = mlp(*args)
    warmup = time.perf_counter() - start
    expected = mlp.__wrapped__(*args)
    assert out.dtype == expected.dtype and np.allclose(out, expected, rtol=1e-5, atol=1e-6)

    numpy_t = median_seconds(mlp.__wrapped__, *args)
    compiled_t = median_seconds(mlp, *args)
    print(f"MLP forward, batch 64, 256 -> 512 -> 10 (float32), first calls incl. compile: {warmup:.2f}s")
    print(f"  NumPy     {numpy_t * 1e6:9.1f} us/call")
    print(f"  pyfront   {compiled_t * 1e6:9.1f} us/call   ({numpy_t / compiled_t:.2f}x NumPy)")
    print()
    print(pyfront.explain(mlp))


if __name__ == "__main__":
    main()
