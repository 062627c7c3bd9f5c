"""A policy-gradient agent in the style of the well-known NumPy Pong script: a model dict,
ReLU by masked assignment, np.outer in the backward pass, discounted rewards computed
backwards in a loop, and RMSProp updating the model's arrays in place."""

import numpy as np

H, D = 16, 24
gamma = 0.99
decay_rate = 0.99
learning_rate = 1e-3

rng = np.random.default_rng(5)
model = {'W1': rng.standard_normal((H, D)) / np.sqrt(D), 'W2': rng.standard_normal(H) / np.sqrt(H)}
grad_buffer = {k: np.zeros_like(v) for k, v in model.items()}
rmsprop_cache = {k: np.zeros_like(v) for k, v in model.items()}


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def discount_rewards(r):
    discounted_r = np.zeros_like(r)
    running_add = 0
    for t in reversed(range(0, r.size)):
        running_add = running_add * gamma + r[t]
        discounted_r[t] = running_add
    return discounted_r


def policy_forward(x):
    h = np.dot(model['W1'], x)
    h[h < 0] = 0
    logp = np.dot(model['W2'], h)
    p = sigmoid(logp)
    return p, h


def policy_backward(eph, epdlogp, epx):
    dW2 = np.dot(eph.T, epdlogp).ravel()
    dh = np.outer(epdlogp, model['W2'])
    dh[eph <= 0] = 0
    dW1 = np.dot(dh.T, epx)
    return {'W1': dW1, 'W2': dW2}


def episode_update(epx, eph, epdlogp, epr):
    discounted_epr = discount_rewards(epr)
    discounted_epr -= np.mean(discounted_epr)
    discounted_epr /= np.std(discounted_epr)
    epdlogp *= discounted_epr
    grad = policy_backward(eph, epdlogp, epx)
    for k in model:
        grad_buffer[k] += grad[k]
    for k, v in model.items():
        g = grad_buffer[k]
        rmsprop_cache[k] = decay_rate * rmsprop_cache[k] + (1 - decay_rate) * g ** 2
        model[k] += learning_rate * g / (np.sqrt(rmsprop_cache[k]) + 1e-5)
        grad_buffer[k] = np.zeros_like(v)
