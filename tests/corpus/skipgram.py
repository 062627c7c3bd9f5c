"""Word2vec skip-gram with negative sampling, in the style of the from-scratch NumPy
tutorials: two embedding matrices on a model object, a window of (center, context)
pairs per step, negatives drawn from a unigram table with `rng.choice`, rows read with
integer-array indexing and updated in place with `np.add.at` (a word can repeat among
the negatives) and `-=` on a row, and the loss summed in a Python float."""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class SkipGram:
    def __init__(self, vocab_size, dim, counts, negatives=5, lr=0.05, seed=0):
        self.rng = np.random.default_rng(seed)
        self.W_in = (self.rng.random((vocab_size, dim)) - 0.5) / dim
        self.W_out = np.zeros((vocab_size, dim))
        probs = counts ** 0.75
        self.noise = probs / probs.sum()
        self.negatives = negatives
        self.lr = lr
        self.steps = 0

    def train_pair(self, center, context):
        h = self.W_in[center]
        neg = self.rng.choice(len(self.noise), size=self.negatives, p=self.noise)
        ids = np.concatenate(([context], neg))
        labels = np.zeros(len(ids))
        labels[0] = 1.0
        scores = sigmoid(self.W_out[ids] @ h)
        g = scores - labels
        grad_h = g @ self.W_out[ids]
        np.add.at(self.W_out, ids, -self.lr * np.outer(g, h))
        self.W_in[center] -= self.lr * grad_h
        self.steps += 1
        loss = -np.log(scores[0] + 1e-10) - np.sum(np.log(1 - scores[1:] + 1e-10))
        return float(loss)


def train_window(model, tokens, position, window=2):
    """Every (center, context) pair of the window around `position`; returns the summed loss."""
    center = tokens[position]
    total = 0.0
    for offset in range(-window, window + 1):
        if offset == 0 or not 0 <= position + offset < len(tokens):
            continue
        total += model.train_pair(center, tokens[position + offset])
    return total
