"""One SGD step of an MLP classifier with hand-written backprop and gradient-norm clipping.

Until `pyfront.grad` lands the gradients are written out in NumPy. The
clipping branch is on a computed value: pyfront speculates on the outcome it
profiled (no clipping) behind a guard, which a batch with large gradients
breaks (the deopt measure). jax.jit cannot trace a Python `if` on an array,
so its port writes the clipping with `jnp.minimum` (same arithmetic).
"""

import numpy as np

from bench.program import GuardFailure, Program

CLIP = 5.0


def train_step(x, y, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    loss = -(y * np.log(p + 1e-9)).sum() / x.shape[0]
    d_logits = (p - y) / x.shape[0]
    dw2 = h.T @ d_logits
    db2 = d_logits.sum(axis=0)
    dh = (d_logits @ w2.T) * (1.0 - h * h)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    norm = np.sqrt((dw1 * dw1).sum() + (db1 * db1).sum() + (dw2 * dw2).sum() + (db2 * db2).sum())
    lr = 0.1
    if norm > CLIP:
        lr = lr * CLIP / norm
    return w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2, loss


def train_step_jax(x, y, w1, b1, w2, b2):
    import jax.numpy as jnp

    h = jnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    e = jnp.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    loss = -(y * jnp.log(p + 1e-9)).sum() / x.shape[0]
    d_logits = (p - y) / x.shape[0]
    dw2 = h.T @ d_logits
    db2 = d_logits.sum(axis=0)
    dh = (d_logits @ w2.T) * (1.0 - h * h)
    dw1 = x.T @ dh
    db1 = dh.sum(axis=0)
    norm = jnp.sqrt((dw1 * dw1).sum() + (db1 * db1).sum() + (dw2 * dw2).sum() + (db2 * db2).sum())
    lr = 0.1 * jnp.minimum(1.0, CLIP / norm)
    return w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2, loss


def make_inputs(size, rng, input_scale=1.0):
    batch, d_in, hidden, classes = size["batch"], size["d_in"], size["hidden"], size["classes"]
    labels = rng.integers(0, classes, batch)
    return (
        (rng.standard_normal((batch, d_in)) * input_scale).astype(np.float32),
        np.eye(classes, dtype=np.float32)[labels],
        (rng.standard_normal((d_in, hidden)) * 0.05).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, classes)) * 0.05).astype(np.float32),
        np.zeros(classes, np.float32),
    )


def make_large_gradient_inputs(size, rng):
    return make_inputs(size, rng, input_scale=100.0)


PROGRAM = Program(
    name="mlp_train_step",
    description="MLP SGD step, manual backprop, clip by global norm, float32",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={
        "32x64-128-10": {"batch": 32, "d_in": 64, "hidden": 128, "classes": 10},
        "128x784-256-10": {"batch": 128, "d_in": 784, "hidden": 256, "classes": 10},
    },
    ports={"jax": train_step_jax},
    guard_failure=GuardFailure("a batch whose gradient norm exceeds CLIP (clipping branch taken)",
                               make_large_gradient_inputs),
    rtol=1e-3,
    atol=1e-5,
)
