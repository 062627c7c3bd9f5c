"""Softmax cross-entropy loss of a batch of logits against one-hot targets."""

import numpy as np

from bench.program import Program


def softmax_cross_entropy(logits, onehot):
    z = logits - logits.max(axis=1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(onehot * log_probs).sum(axis=1).mean()


def make_inputs(size, rng):
    labels = rng.integers(0, size["classes"], size["batch"])
    return (
        rng.standard_normal((size["batch"], size["classes"])).astype(np.float32),
        np.eye(size["classes"], dtype=np.float32)[labels],
    )


PROGRAM = Program(
    name="softmax_xent",
    description="mean softmax cross-entropy (numerically stable), float32 -> 0-d",
    fn=softmax_cross_entropy,
    make_inputs=make_inputs,
    sizes={
        "32x10": {"batch": 32, "classes": 10},
        "256x1000": {"batch": 256, "classes": 1000},
    },
)
