"""An LSTM layer over a fixed-length sequence: a Python loop over the time steps."""

import numpy as np

from bench.program import Program


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm(xs, h, c, wx, wh, b):
    n = h.shape[1]
    for t in range(xs.shape[0]):
        z = xs[t] @ wx + h @ wh + b
        i = sigmoid(z[:, :n])
        f = sigmoid(z[:, n:2 * n])
        o = sigmoid(z[:, 2 * n:3 * n])
        g = np.tanh(z[:, 3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return h, c


def make_inputs(size, rng):
    steps, batch, d_in, n = size["steps"], size["batch"], size["d_in"], size["hidden"]
    return (
        rng.standard_normal((steps, batch, d_in)).astype(np.float32),
        np.zeros((batch, n), np.float32),
        np.zeros((batch, n), np.float32),
        (rng.standard_normal((d_in, 4 * n)) * 0.1).astype(np.float32),
        (rng.standard_normal((n, 4 * n)) * 0.1).astype(np.float32),
        np.zeros(4 * n, np.float32),
    )


PROGRAM = Program(
    name="lstm",
    description="LSTM layer, Python loop over time steps, returns (h, c), float32",
    fn=lstm,
    make_inputs=make_inputs,
    sizes={
        "T16 B8 64-128": {"steps": 16, "batch": 8, "d_in": 64, "hidden": 128},
        "T32 B64 128-256": {"steps": 32, "batch": 64, "d_in": 128, "hidden": 256},
    },
)
