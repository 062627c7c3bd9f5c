"""A plain NumPy MLP trained by an Adam optimizer class as course code writes it: moment dicts
created on the first update, a step counter `self.iter += 1`, and in-place updates of the
caller's parameter dict."""

import numpy as np


class Adam:
    def __init__(self, lr=0.001, beta1=0.9, beta2=0.999):
        self.lr = lr
        self.beta1 = beta1
        self.beta2 = beta2
        self.iter = 0
        self.m = None
        self.v = None

    def update(self, params, grads):
        if self.m is None:
            self.m, self.v = {}, {}
            for key, val in params.items():
                self.m[key] = np.zeros_like(val)
                self.v[key] = np.zeros_like(val)

        self.iter += 1
        lr_t = self.lr * np.sqrt(1.0 - self.beta2 ** self.iter) / (1.0 - self.beta1 ** self.iter)

        for key in params.keys():
            self.m[key] += (1 - self.beta1) * (grads[key] - self.m[key])
            self.v[key] += (1 - self.beta2) * (grads[key] ** 2 - self.v[key])
            params[key] -= lr_t * self.m[key] / (np.sqrt(self.v[key]) + 1e-7)


def init_params(rng, n_in, n_hidden, n_out):
    return {"W1": rng.standard_normal((n_in, n_hidden)) * 0.1, "b1": np.zeros(n_hidden),
            "W2": rng.standard_normal((n_hidden, n_out)) * 0.1, "b2": np.zeros(n_out)}


def loss_and_grads(params, X, y):
    h = np.maximum(0, X @ params["W1"] + params["b1"])
    scores = h @ params["W2"] + params["b2"]
    scores -= scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    N = X.shape[0]
    loss = -np.log(probs[np.arange(N), y]).mean()
    dscores = probs
    dscores[np.arange(N), y] -= 1
    dscores /= N
    grads = {"W2": h.T @ dscores, "b2": dscores.sum(axis=0)}
    dh = dscores @ params["W2"].T
    dh[h <= 0] = 0
    grads["W1"] = X.T @ dh
    grads["b1"] = dh.sum(axis=0)
    return loss, grads


def train_step(params, optimizer, X, y):
    loss, grads = loss_and_grads(params, X, y)
    optimizer.update(params, grads)
    return loss
