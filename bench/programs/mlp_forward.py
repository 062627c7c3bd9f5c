"""MLP forward pass: two dense layers with tanh, at sizes from tiny to large."""

import numpy as np

from bench.program import Program


def mlp(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    return h @ w2 + b2


def make_inputs(size, rng):
    d_in, hidden, d_out = size["d_in"], size["hidden"], size["d_out"]
    return (
        rng.standard_normal((size["batch"], d_in)).astype(np.float32),
        (rng.standard_normal((d_in, hidden)) * 0.05).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, d_out)) * 0.05).astype(np.float32),
        np.zeros(d_out, np.float32),
    )


PROGRAM = Program(
    name="mlp_forward",
    description="tanh(x @ w1 + b1) @ w2 + b2, float32",
    fn=mlp,
    make_inputs=make_inputs,
    sizes={
        "8x32-64-10": {"batch": 8, "d_in": 32, "hidden": 64, "d_out": 10},
        "64x256-512-10": {"batch": 64, "d_in": 256, "hidden": 512, "d_out": 10},
        "256x784-1024-10": {"batch": 256, "d_in": 784, "hidden": 1024, "d_out": 10},
        "1024x1024-2048-256": {"batch": 1024, "d_in": 1024, "hidden": 2048, "d_out": 256},
    },
)
