"""pyfront in one screen: compile plain NumPy code, compare its speed with NumPy, read explain().

    python examples/demo.py
"""

import time

import numpy as np

import pyfront


@pyfront.compile
def gelu_layer_norm(x, gamma, beta):
    """A transformer block's elementwise part: NumPy makes a temporary per operator."""
    g = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    mean = g.mean(axis=-1, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=-1, keepdims=True)
    return (g - mean) / np.sqrt(var + 1e-5) * gamma + beta


def median_seconds(fn, *args, repeats=100):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    gamma = rng.standard_normal(1024).astype(np.float32)
    beta = np.zeros(1024, np.float32)
    args = (x, gamma, beta)

    start = time.perf_counter()
    for _ in range(3):  # two profiled interpreter runs; the third starts the compile and runs interpreted
        out = gelu_layer_norm(*args)
    first_calls = time.perf_counter() - start
    start = time.perf_counter()
    pyfront.wait(gelu_layer_norm)  # IREE compiles in the background; calls meanwhile ran in the interpreter
    compiling = time.perf_counter() - start
    expected = gelu_layer_norm.__wrapped__(*args)
    assert type(out) is type(expected) and out.dtype == expected.dtype
    assert np.allclose(out, expected, rtol=1e-4, atol=1e-5)

    numpy_t = median_seconds(gelu_layer_norm.__wrapped__, *args)
    compiled_t = median_seconds(gelu_layer_norm, *args)
    print(f"GELU + layer norm on a 256x1024 float32 batch (first 3 calls: {first_calls:.2f}s, then"
          f" {compiling:.2f}s more until the background compile was ready)")
    print(f"  NumPy     {numpy_t * 1e6:9.1f} us/call")
    print(f"  pyfront   {compiled_t * 1e6:9.1f} us/call   ({numpy_t / compiled_t:.2f}x NumPy)")
    print()
    print(pyfront.explain(gelu_layer_norm))


if __name__ == "__main__":
    main()
