"""A fully connected net in the style of the course assignments: forward/backward functions
that return a `cache` tuple, batch normalization whose running statistics live in a
`bn_param` dict updated in place with a "train"/"test" mode string, inverted dropout
whose mask is drawn from `np.random`, and a model class whose parameters sit in a
`self.params` dict keyed by names built with f-strings, updated by SGD with momentum
kept in a per-parameter config dict."""

import numpy as np


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx = dout.dot(w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db


def relu_forward(x):
    out = np.maximum(0, x)
    return out, x


def relu_backward(dout, cache):
    x = cache
    dx = dout.copy()
    dx[x <= 0] = 0
    return dx


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    cache = None
    if mode == "train":
        mu = x.mean(axis=0)
        var = x.var(axis=0)
        std = np.sqrt(var + eps)
        x_hat = (x - mu) / std
        out = gamma * x_hat + beta
        running_mean = momentum * running_mean + (1 - momentum) * mu
        running_var = momentum * running_var + (1 - momentum) * var
        cache = (x_hat, gamma, std)
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def batchnorm_backward(dout, cache):
    x_hat, gamma, std = cache
    N = dout.shape[0]
    dbeta = dout.sum(axis=0)
    dgamma = np.sum(dout * x_hat, axis=0)
    dx_hat = dout * gamma
    dx = (N * dx_hat - dx_hat.sum(axis=0) - x_hat * np.sum(dx_hat * x_hat, axis=0)) / (N * std)
    return dx, dgamma, dbeta


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    else:
        out = x
    return out, (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    if dropout_param["mode"] == "train":
        return dout * mask
    return dout


def softmax_loss(x, y):
    shifted = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted), axis=1, keepdims=True)
    log_probs = shifted - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


class FullyConnectedNet:
    def __init__(self, hidden_dims, input_dim, num_classes, dropout_keep=0.8, reg=0.0, weight_scale=1e-2, seed=0):
        rng = np.random.RandomState(seed)
        self.reg = reg
        self.num_layers = 1 + len(hidden_dims)
        dims = [input_dim] + hidden_dims + [num_classes]
        self.params = {}
        for i in range(self.num_layers):
            self.params[f"W{i + 1}"] = weight_scale * rng.randn(dims[i], dims[i + 1])
            self.params[f"b{i + 1}"] = np.zeros(dims[i + 1])
            if i < self.num_layers - 1:
                self.params[f"gamma{i + 1}"] = np.ones(dims[i + 1])
                self.params[f"beta{i + 1}"] = np.zeros(dims[i + 1])
        self.dropout_param = {"mode": "train", "p": dropout_keep}
        self.bn_params = [{"mode": "train"} for _ in range(self.num_layers - 1)]

    def loss(self, X, y=None):
        mode = "test" if y is None else "train"
        self.dropout_param["mode"] = mode
        for bn_param in self.bn_params:
            bn_param["mode"] = mode
        caches = []
        out = X
        for i in range(1, self.num_layers):
            out, fc_cache = affine_forward(out, self.params[f"W{i}"], self.params[f"b{i}"])
            out, bn_cache = batchnorm_forward(out, self.params[f"gamma{i}"], self.params[f"beta{i}"],
                                              self.bn_params[i - 1])
            out, relu_cache = relu_forward(out)
            out, do_cache = dropout_forward(out, self.dropout_param)
            caches.append((fc_cache, bn_cache, relu_cache, do_cache))
        scores, last_cache = affine_forward(out, self.params[f"W{self.num_layers}"], self.params[f"b{self.num_layers}"])
        if mode == "test":
            return scores

        loss, dscores = softmax_loss(scores, y)
        grads = {}
        dout, dw, db = affine_backward(dscores, last_cache)
        grads[f"W{self.num_layers}"] = dw + self.reg * self.params[f"W{self.num_layers}"]
        grads[f"b{self.num_layers}"] = db
        loss += 0.5 * self.reg * np.sum(self.params[f"W{self.num_layers}"] ** 2)
        for i in range(self.num_layers - 1, 0, -1):
            fc_cache, bn_cache, relu_cache, do_cache = caches[i - 1]
            dout = dropout_backward(dout, do_cache)
            dout = relu_backward(dout, relu_cache)
            dout, dgamma, dbeta = batchnorm_backward(dout, bn_cache)
            dout, dw, db = affine_backward(dout, fc_cache)
            grads[f"W{i}"] = dw + self.reg * self.params[f"W{i}"]
            grads[f"b{i}"] = db
            grads[f"gamma{i}"] = dgamma
            grads[f"beta{i}"] = dbeta
            loss += 0.5 * self.reg * np.sum(self.params[f"W{i}"] ** 2)
        return loss, grads


def sgd_momentum(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def train_step(model, optim_configs, X_batch, y_batch):
    loss, grads = model.loss(X_batch, y_batch)
    for p, w in model.params.items():
        next_w, next_config = sgd_momentum(w, grads[p], optim_configs[p])
        model.params[p] = next_w
        optim_configs[p] = next_config
    return loss
