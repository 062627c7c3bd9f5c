"""RNN: an LSTM word-level language model on sentences from a small grammar.

    python -m examples.models.lstm_lm [--steps N] [--interpreter]

Sentences are `<s> det [adj] noun verb det [adj] noun </s>` (7 to 9 tokens,
17 words), generated with a seeded Generator. Each step trains on a batch of
16 sentences of one length (sentences are bucketed by length, as a real
loader does to avoid padding); the forward pass is a Python loop over time
steps whose trip count is the sequence length, so the step function sees
three lengths: JANUS's dynamic control flow for RNNs. Adam on the
embedding, one fused-gate LSTM cell (hidden 32) and the output layer.

Target: mean next-word loss <= 1.25 nats on fresh sentences after 150 steps
(uniform guessing is ln 17 = 2.83; the grammar's own entropy is about 0.9).
"""

from __future__ import annotations

import numpy as np

import pyfront
from examples.models.common import Parameters, Training, main, step_function
from examples.models.optim import Adam
from pyfront import nn

DETERMINERS = ("the", "a")
ADJECTIVES = ("small", "big", "red", "old")
NOUNS = ("cat", "dog", "bird", "fox")
VERBS = ("sees", "chases", "likes")
VOCAB = ("<s>", "</s>", *DETERMINERS, *ADJECTIVES, *NOUNS, *VERBS)
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
EMBED, HIDDEN, BATCH = 16, 32, 16


class LSTMLanguageModel(Parameters):
    names = ("embedding", "gates_w", "gates_b", "out_w", "out_b")

    @classmethod
    def init(cls, rng: np.random.Generator) -> LSTMLanguageModel:
        def uniform(shape, fan_in):
            bound = 1.0 / np.sqrt(fan_in)
            return rng.uniform(-bound, bound, shape).astype(np.float32)

        gates_b = np.zeros(4 * HIDDEN, np.float32)
        gates_b[HIDDEN : 2 * HIDDEN] = 1.0  # forget gate starts open
        return cls(
            embedding=(rng.standard_normal((len(VOCAB), EMBED)) * 0.1).astype(np.float32),
            gates_w=uniform((EMBED + HIDDEN, 4 * HIDDEN), EMBED + HIDDEN),
            gates_b=gates_b,
            out_w=uniform((HIDDEN, len(VOCAB)), HIDDEN),
            out_b=np.zeros(len(VOCAB), np.float32),
        )


def lstm_cell(x, h, c, gates_w, gates_b):
    z = np.concatenate([x, h], axis=1) @ gates_w + gates_b
    i = nn.sigmoid(z[:, :HIDDEN])
    f = nn.sigmoid(z[:, HIDDEN : 2 * HIDDEN])
    o = nn.sigmoid(z[:, 2 * HIDDEN : 3 * HIDDEN])
    g = np.tanh(z[:, 3 * HIDDEN :])
    c = f * c + i * g
    return o * np.tanh(c), c


def loss_fn(params, tokens):
    """Mean cross-entropy of predicting tokens[:, t + 1] from tokens[:, : t + 1]."""
    embedding, gates_w, gates_b, out_w, out_b = params
    batch, length = tokens.shape
    h = np.zeros((batch, HIDDEN), np.float32)
    c = np.zeros((batch, HIDDEN), np.float32)
    total = 0.0
    for t in range(length - 1):
        h, c = lstm_cell(nn.embedding(embedding, tokens[:, t]), h, c, gates_w, gates_b)
        total = total + nn.cross_entropy(h @ out_w + out_b, tokens[:, t + 1])
    return total / (length - 1)


def train_step(model, opt, tokens):
    loss, grads = pyfront.value_and_grad(loss_fn)(model.param_list(), tokens)
    opt.update(model.params, model.names, grads)
    return loss


def sentence(rng: np.random.Generator) -> list[str]:
    def noun_phrase():
        words = [DETERMINERS[rng.integers(len(DETERMINERS))]]
        if rng.random() < 0.5:
            words.append(ADJECTIVES[rng.integers(len(ADJECTIVES))])
        return words + [NOUNS[rng.integers(len(NOUNS))]]

    return ["<s>", *noun_phrase(), VERBS[rng.integers(len(VERBS))], *noun_phrase(), "</s>"]


def batch_of_length(rng: np.random.Generator, length: int) -> np.ndarray:
    """BATCH sentences of `length` tokens as word ids (BATCH, length)."""
    rows = []
    while len(rows) < BATCH:
        words = sentence(rng)
        if len(words) == length:
            rows.append([WORD_ID[w] for w in words])
    return np.array(rows, np.int64)


def batches(rng: np.random.Generator):
    """Length-bucketed batches, lengths drawn as often as the grammar produces them."""
    while True:
        yield batch_of_length(rng, len(sentence(rng)))


def make(seed: int):
    """The model, and held-out batches (one per length) for `evaluate`."""
    rng = np.random.default_rng(seed + 1000)
    data = {"test": [batch_of_length(rng, n) for n in (7, 8, 9)]}
    return LSTMLanguageModel.init(np.random.default_rng(seed)), data


def trainer(seed: int = 0, compile: bool = True, backend: str = "cpu") -> Training:
    model, data = make(seed)
    opt = Adam(model.params, lr=0.01)
    stream = batches(np.random.default_rng(seed + 1))
    return Training(step_function(train_step, compile, backend), lambda: (model, opt, next(stream)), model, data)


def train(steps: int, compile: bool = True, seed: int = 0, backend: str = "cpu") -> Training:
    """`steps` training steps from `seed`; the step compiled for `backend` unless compile=False."""
    return trainer(seed, compile, backend).run(steps)


def evaluate(model, data) -> float:
    """Mean next-word loss (nats) on the held-out batches."""
    return float(np.mean([loss_fn(model.param_list(), tokens) for tokens in data["test"]]))


if __name__ == "__main__":
    main(__doc__, train, evaluate, steps=400, metric="held-out loss")
