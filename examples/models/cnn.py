"""CNN: a LeNet-style network on scikit-learn's 8x8 handwritten digits.

    python -m examples.models.cnn [--steps N] [--interpreter]

conv(1->6, 3x3, pad 1) -> relu -> max pool 2 -> conv(6->12, 3x3, pad 1) ->
relu -> average pool 2 -> dense(48->32) -> relu -> dense(32->10), softmax
cross-entropy, SGD with momentum, mini-batches of 64 drawn from a shuffled
1500-image training split. 1500 is not a multiple of 64: each epoch ends with
a batch of 28, the shape change a real data loader makes (pyfront relaxes the
batch dim to a dynamic size instead of compiling one variant per size).

Target: test accuracy >= 0.80 on the 297 held-out digits (the last ones of
the data set, other writers than most of the training split) after 160 steps
(about seven epochs; the test suite checks it; about 0.84 after 200).
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

import pyfront
from examples.models.common import Parameters, Training, main, step_function
from examples.models.optim import SGD
from pyfront import nn

BATCH = 64
TRAIN_SIZE = 1500


class LeNet(Parameters):
    names = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b")

    @classmethod
    def init(cls, rng: np.random.Generator) -> LeNet:
        def he(shape, fan_in):
            return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

        return cls(
            conv1_w=he((6, 1, 3, 3), 9),
            conv1_b=np.zeros(6, np.float32),
            conv2_w=he((12, 6, 3, 3), 54),
            conv2_b=np.zeros(12, np.float32),
            fc1_w=he((48, 32), 48),
            fc1_b=np.zeros(32, np.float32),
            fc2_w=he((32, 10), 32),
            fc2_b=np.zeros(10, np.float32),
        )


def forward(params, images):
    """Logits (N, 10) for images (N, 1, 8, 8)."""
    conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b = params
    h = np.maximum(nn.conv2d(images, conv1_w, padding=1) + conv1_b.reshape(-1, 1, 1), 0)
    h = nn.max_pool2d(h, 2)
    h = np.maximum(nn.conv2d(h, conv2_w, padding=1) + conv2_b.reshape(-1, 1, 1), 0)
    h = nn.avg_pool2d(h, 2)
    h = h.reshape(h.shape[0], -1)
    h = np.maximum(h @ fc1_w + fc1_b, 0)
    return h @ fc2_w + fc2_b


def loss_fn(params, images, labels):
    return nn.cross_entropy(forward(params, images), labels)


def train_step(model, opt, images, labels):
    loss, grads = pyfront.value_and_grad(loss_fn)(model.param_list(), images, labels)
    opt.update(model.params, model.names, grads)
    return loss


def make(seed: int):
    """The network and the data: a fixed train/test split of load_digits, pixels scaled to [0, 1]."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    data = {
        "train": (images[:TRAIN_SIZE], labels[:TRAIN_SIZE]),
        "test": (images[TRAIN_SIZE:], labels[TRAIN_SIZE:]),
    }
    return LeNet.init(np.random.default_rng(seed)), data


def batches(data, rng: np.random.Generator):
    """Shuffled mini-batches of the training split, forever; each epoch's last batch is smaller."""
    images, labels = data["train"]
    while True:
        order = rng.permutation(len(images))
        for start in range(0, len(images), BATCH):
            idx = order[start : start + BATCH]
            yield images[idx], labels[idx]


def trainer(seed: int = 0, compile: bool = True, backend: str = "cpu") -> Training:
    model, data = make(seed)
    opt = SGD(model.params, lr=0.05, momentum=0.9)
    stream = batches(data, np.random.default_rng(seed + 1))
    return Training(step_function(train_step, compile, backend), lambda: (model, opt, *next(stream)), model, data)


def train(steps: int, compile: bool = True, seed: int = 0, backend: str = "cpu") -> Training:
    """`steps` training steps from `seed`; the step compiled for `backend` unless compile=False."""
    return trainer(seed, compile, backend).run(steps)


def evaluate(model, data) -> float:
    """Accuracy on the held-out split."""
    images, labels = data["test"]
    return float((forward(model.param_list(), images).argmax(axis=1) == labels).mean())


if __name__ == "__main__":
    main(__doc__, train, evaluate, steps=300, metric="test accuracy")
