"""Optimizers in plain NumPy: SGD with momentum and Adam.

`update(params, names, grads)` writes `params[name]` (a dict of arrays held
by the model) for each name, with `grads` the gradients in the order of
`names` (what `pyfront.value_and_grad` returns for the list of parameters).
Optimizer state is arrays too, held on the optimizer object: per-parameter
dicts and, for Adam, the running powers of beta1/beta2 as shape-(1,) arrays
(a NumPy scalar or Python number stored on the object would not be an array
write, which compiled code leaves to the interpreter).
"""

from __future__ import annotations

import numpy as np


class SGD:
    """SGD with (heavy-ball) momentum: v = momentum * v + g; p -= lr * v."""

    def __init__(self, params: dict, lr: float, momentum: float = 0.9):
        self.lr = lr
        self.momentum = momentum
        self.velocity = {name: np.zeros_like(p) for name, p in params.items()}

    def update(self, params, names, grads):
        for i, name in enumerate(names):
            v = self.momentum * self.velocity[name] + grads[i]
            self.velocity[name] = v
            params[name] = params[name] - self.lr * v


class Adam:
    """Adam (Kingma & Ba) with bias correction."""

    def __init__(self, params: dict, lr: float = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = {name: np.zeros_like(p) for name, p in params.items()}
        self.v = {name: np.zeros_like(p) for name, p in params.items()}
        dtype = next(iter(params.values())).dtype
        self.b1_power = np.ones(1, dtype)
        self.b2_power = np.ones(1, dtype)

    def update(self, params, names, grads):
        self.b1_power = self.b1_power * self.b1
        self.b2_power = self.b2_power * self.b2
        step_size = self.lr * np.sqrt(1 - self.b2_power) / (1 - self.b1_power)
        for i, name in enumerate(names):
            g = grads[i]
            m = self.b1 * self.m[name] + (1 - self.b1) * g
            v = self.b2 * self.v[name] + (1 - self.b2) * (g * g)
            self.m[name] = m
            self.v[name] = v
            params[name] = params[name] - step_size * m / (np.sqrt(v) + self.eps)
