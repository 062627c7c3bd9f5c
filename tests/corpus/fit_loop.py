"""A Keras-like `fit` method compiled as a whole, in the style of from-scratch tutorials:
epochs of shuffled minibatches (`np.random.permutation`), layer objects updated in place
(`self.W -= lr * dW`), the epoch loss summed in a Python float, the history appended to a list
on the model, and a progress line printed with an f-string every epoch."""

import numpy as np


class Dense:
    def __init__(self, n_in, n_out, rng):
        self.W = rng.standard_normal((n_in, n_out)) * 0.1
        self.b = np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, grad, lr):
        dW = self.x.T @ grad
        db = grad.sum(axis=0)
        grad_x = grad @ self.W.T
        self.W -= lr * dW
        self.b -= lr * db
        return grad_x


class Regressor:
    def __init__(self, n_in, hidden, seed=0):
        rng = np.random.default_rng(seed)
        self.hidden = Dense(n_in, hidden, rng)
        self.out = Dense(hidden, 1, rng)
        self.history = []

    def fit(self, X, y, epochs=2, batch_size=16, lr=0.01, verbose=True):
        n = X.shape[0]
        for epoch in range(epochs):
            order = np.random.permutation(n)
            total = 0.0
            for start in range(0, n, batch_size):
                batch = order[start:start + batch_size]
                h = np.maximum(self.hidden.forward(X[batch]), 0)
                err = self.out.forward(h) - y[batch]
                total += float((err ** 2).sum())
                grad = self.out.backward(2 * err / len(batch), lr)
                self.hidden.backward(grad * (h > 0), lr)
            self.history.append(total / n)
            if verbose:
                print(f"epoch {epoch + 1}/{epochs} - loss: {total / n:.4f}")
        return self.history
