"""GELU (tanh approximation) then layer norm: a transformer block's elementwise part."""

import numpy as np

from bench.program import Program


def gelu_layer_norm(x, gamma, beta):
    g = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    mean = g.mean(axis=-1, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=-1, keepdims=True)
    return (g - mean) / np.sqrt(var + 1e-5) * gamma + beta


def make_inputs(size, rng):
    return (
        rng.standard_normal((size["batch"], size["features"])).astype(np.float32),
        rng.standard_normal(size["features"]).astype(np.float32),
        np.zeros(size["features"], np.float32),
    )


PROGRAM = Program(
    name="gelu_layernorm",
    description="GELU then layer norm over the last axis, float32",
    fn=gelu_layer_norm,
    make_inputs=make_inputs,
    sizes={
        "16x256": {"batch": 16, "features": 256},
        "256x1024": {"batch": 256, "features": 1024},
    },
)
