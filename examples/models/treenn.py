"""TreeNN: a TreeRNN classifying random binary trees of words (recursion over Python data).

    python -m examples.models.treenn [--steps N] [--interpreter]

A tree is a nested tuple: a leaf is a word id (a NumPy integer drawn from a
Generator), an inner node is a pair `(left, right)`. The encoder recurses over
that structure: leaves look their word up in an embedding, inner nodes combine
their children with tanh(W [left; right] + b); a dense layer classifies the
root. Words carry a hidden polarity (+1, -1 or 0) and a tree is positive when
its polarities sum to more than zero: a sentiment-like label from a rule.

Each step trains on one tree (recursion cannot be batched without changing
the program), so the step function sees as many tree shapes as there are
topologies: pyfront specializes on the nested tuple's structure, one variant
per topology (trees of 2 to 4 leaves have 1 + 2 + 5 = 8 topologies, the
default `max_variants`), while the word ids are run-time values.

Target: held-out accuracy >= 0.80 after 150 steps (the test checks it); a
constant guess scores about 0.57.
"""

from __future__ import annotations

import numpy as np

import pyfront
from examples.models.common import Parameters, Training, main, step_function
from examples.models.optim import Adam
from pyfront import nn

POLARITY = np.array([1, 1, 1, -1, -1, -1, 0, 0])  # per word id
EMBED = 16
MAX_LEAVES = 4


class TreeRNN(Parameters):
    names = ("embedding", "compose_w", "compose_b", "out_w", "out_b")

    @classmethod
    def init(cls, rng: np.random.Generator) -> TreeRNN:
        return cls(
            embedding=(rng.standard_normal((len(POLARITY), EMBED)) * 0.5).astype(np.float32),
            compose_w=(rng.standard_normal((2 * EMBED, EMBED)) / np.sqrt(2 * EMBED)).astype(np.float32),
            compose_b=np.zeros(EMBED, np.float32),
            out_w=(rng.standard_normal((EMBED, 2)) / np.sqrt(EMBED)).astype(np.float32),
            out_b=np.zeros(2, np.float32),
        )


def encode(tree, embedding, compose_w, compose_b):
    """The tree's vector (1, EMBED): recursion over the nested tuple."""
    if not isinstance(tree, tuple):
        return nn.embedding(embedding, np.reshape(tree, (1,)))
    left, right = tree
    children = np.concatenate(
        [encode(left, embedding, compose_w, compose_b), encode(right, embedding, compose_w, compose_b)], axis=1
    )
    return np.tanh(children @ compose_w + compose_b)


def logits_of(params, tree):
    embedding, compose_w, compose_b, out_w, out_b = params
    return encode(tree, embedding, compose_w, compose_b) @ out_w + out_b


def loss_fn(params, tree, label):
    return nn.cross_entropy(logits_of(params, tree), label)


def train_step(model, opt, tree, label):
    loss, grads = pyfront.value_and_grad(loss_fn)(model.param_list(), tree, label)
    opt.update(model.params, model.names, grads)
    return loss


def random_tree(rng: np.random.Generator, leaves: int):
    """A uniformly split random binary tree over `leaves` word ids."""
    if leaves == 1:
        return rng.integers(len(POLARITY))
    left = int(rng.integers(1, leaves))
    return (random_tree(rng, left), random_tree(rng, leaves - left))


def words_of(tree) -> list:
    return words_of(tree[0]) + words_of(tree[1]) if isinstance(tree, tuple) else [tree]


def labelled(rng: np.random.Generator):
    """A random tree of 2..MAX_LEAVES leaves and its label (1,) int64: 1 when its polarity sum is > 0."""
    tree = random_tree(rng, int(rng.integers(2, MAX_LEAVES + 1)))
    return tree, np.array([int(POLARITY[words_of(tree)].sum() > 0)], np.int64)


def make(seed: int):
    """The model, and 200 held-out labelled trees."""
    rng = np.random.default_rng(seed + 1000)
    return TreeRNN.init(np.random.default_rng(seed)), {"test": [labelled(rng) for _ in range(200)]}


def trainer(seed: int = 0, compile: bool = True, backend: str = "cpu") -> Training:
    model, data = make(seed)
    opt = Adam(model.params, lr=0.01)
    rng = np.random.default_rng(seed + 1)
    return Training(step_function(train_step, compile, backend), lambda: (model, opt, *labelled(rng)), model, data)


def train(steps: int, compile: bool = True, seed: int = 0, backend: str = "cpu") -> Training:
    """`steps` training steps from `seed`; the step compiled for `backend` unless compile=False."""
    return trainer(seed, compile, backend).run(steps)


def evaluate(model, data) -> float:
    """Accuracy on the held-out trees."""
    params = model.param_list()
    return float(np.mean([logits_of(params, tree).argmax() == label[0] for tree, label in data["test"]]))


if __name__ == "__main__":
    main(__doc__, train, evaluate, steps=300, metric="test accuracy")
