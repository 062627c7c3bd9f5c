"""pyfront in one screen: compile plain NumPy code, compare its speed with NumPy, read explain().

    python examples/demo.py

The function is an LSTM layer, a Python loop of small array operations: where NumPy's cost per
operator is most of the time, which is where compiling pays (docs/performance.md).
"""

import time

import numpy as np

import pyfront


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@pyfront.compile
def lstm(xs, h, c, wx, wh, b):
    """An LSTM layer: a Python loop over the time steps, NumPy paying per operator."""
    n = h.shape[1]
    for t in range(xs.shape[0]):
        z = xs[t] @ wx + h @ wh + b
        i, f, o = sigmoid(z[:, :n]), sigmoid(z[:, n:2 * n]), sigmoid(z[:, 2 * n:3 * n])
        c = f * c + i * np.tanh(z[:, 3 * n:])
        h = o * np.tanh(c)
    return h, c


def median_seconds(fn, *args, repeats=100):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    rng = np.random.default_rng(0)
    steps, batch, d_in, n = 16, 8, 32, 64
    args = (rng.standard_normal((steps, batch, d_in)).astype(np.float32), np.zeros((batch, n), np.float32),
            np.zeros((batch, n), np.float32), (rng.standard_normal((d_in, 4 * n)) * 0.1).astype(np.float32),
            (rng.standard_normal((n, 4 * n)) * 0.1).astype(np.float32), np.zeros(4 * n, np.float32))

    start = time.perf_counter()
    for _ in range(3):  # two profiled interpreter runs; the third starts the compile and runs interpreted
        out = lstm(*args)
    first_calls = time.perf_counter() - start
    start = time.perf_counter()
    pyfront.wait(lstm)  # IREE compiles in the background; calls meanwhile ran in the interpreter
    compiling = time.perf_counter() - start
    expected = lstm.__wrapped__(*args)
    assert all(type(o) is type(e) and o.dtype == e.dtype and np.allclose(o, e, rtol=1e-4, atol=1e-5)
               for o, e in zip(out, expected))

    numpy_t = median_seconds(lstm.__wrapped__, *args)
    compiled_t = median_seconds(lstm, *args)
    print(f"An LSTM layer over 16 time steps, batch 8, 32 -> 64 units, float32 (first 3 calls: {first_calls:.2f}s,"
          f" then {compiling:.2f}s more until the background compile was ready)")
    print(f"  NumPy     {numpy_t * 1e6:9.1f} us/call")
    print(f"  pyfront   {compiled_t * 1e6:9.1f} us/call   ({numpy_t / compiled_t:.2f}x NumPy)")
    print()
    print(pyfront.explain(lstm))


if __name__ == "__main__":
    main()
