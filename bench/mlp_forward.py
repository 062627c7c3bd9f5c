"""MLP forward pass: plain NumPy vs pyfront compiled, at a few sizes.

    python bench/mlp_forward.py [--repeats N]

Prints the median time per call of each (after warm-up) and the ratio, from
one run on this machine. Timings are medians of repeated calls because these
machines are shared and noisy; compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import pyfront


def mlp(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    return h @ w2 + b2


SIZES = [(8, 32, 64, 10), (64, 256, 512, 10), (256, 784, 1024, 10), (1024, 1024, 2048, 256)]


def median_us(fn, args, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'batch x in -> hidden -> out':32} {'NumPy us':>10} {'pyfront us':>11} {'speedup':>8}")
    for batch, d_in, hidden, d_out in SIZES:
        args = (
            rng.standard_normal((batch, d_in)).astype(np.float32),
            rng.standard_normal((d_in, hidden)).astype(np.float32) * 0.05,
            np.zeros(hidden, np.float32),
            rng.standard_normal((hidden, d_out)).astype(np.float32) * 0.05,
            np.zeros(d_out, np.float32),
        )
        compiled = pyfront.compile(mlp)
        for _ in range(5):
            compiled(*args)
        assert pyfront.explain(compiled).compiled_calls > 0, pyfront.explain(compiled)
        np.testing.assert_allclose(compiled(*args), mlp(*args), rtol=1e-4, atol=1e-4)
        repeats = max(10, opts.repeats // (1 + batch * hidden // 65536))
        t_np = median_us(mlp, args, repeats)
        t_pf = median_us(compiled, args, repeats)
        label = f"{batch} x {d_in} -> {hidden} -> {d_out}"
        print(f"{label:32} {t_np:10.1f} {t_pf:11.1f} {t_np / t_pf:7.2f}x")


if __name__ == "__main__":
    main()
