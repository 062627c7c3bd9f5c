"""A sequential model of layer objects in the style of the "ML from scratch" repositories: a
list of layers walked forwards and `reversed` backwards, activation functions as classes
with `__call__` and `gradient` picked from a dict of classes by name, each layer holding its
own copy of an optimizer (`copy.copy`) whose moments start as None, `self.layer_input = X`
kept for the backward pass, loss classes with `loss`/`gradient`/`acc`, `np.clip` to keep the
log finite, dropout masks from `np.random.uniform`, and the step returning `(loss, acc)`."""

import copy
import math

import numpy as np


class Sigmoid:
    def __call__(self, x):
        return 1 / (1 + np.exp(-x))

    def gradient(self, x):
        return self.__call__(x) * (1 - self.__call__(x))


class ReLU:
    def __call__(self, x):
        return np.where(x >= 0, x, 0)

    def gradient(self, x):
        return np.where(x >= 0, 1, 0)


class Softmax:
    def __call__(self, x):
        e_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e_x / np.sum(e_x, axis=-1, keepdims=True)

    def gradient(self, x):
        p = self.__call__(x)
        return p * (1 - p)


ACTIVATIONS = {"sigmoid": Sigmoid, "relu": ReLU, "softmax": Softmax}


class Adam:
    def __init__(self, learning_rate=0.001, b1=0.9, b2=0.999):
        self.learning_rate = learning_rate
        self.eps = 1e-8
        self.m = None
        self.v = None
        self.b1 = b1
        self.b2 = b2

    def update(self, w, grad_wrt_w):
        if self.m is None:
            self.m = np.zeros(np.shape(grad_wrt_w))
            self.v = np.zeros(np.shape(grad_wrt_w))
        self.m = self.b1 * self.m + (1 - self.b1) * grad_wrt_w
        self.v = self.b2 * self.v + (1 - self.b2) * np.power(grad_wrt_w, 2)
        m_hat = self.m / (1 - self.b1)
        v_hat = self.v / (1 - self.b2)
        self.w_updt = self.learning_rate * m_hat / (np.sqrt(v_hat) + self.eps)
        return w - self.w_updt


class Dense:
    def __init__(self, n_units, input_shape=None):
        self.layer_input = None
        self.input_shape = input_shape
        self.n_units = n_units
        self.trainable = True
        self.W = None
        self.w0 = None

    def initialize(self, optimizer, rng):
        limit = 1 / math.sqrt(self.input_shape[0])
        self.W = rng.uniform(-limit, limit, (self.input_shape[0], self.n_units))
        self.w0 = np.zeros((1, self.n_units))
        self.W_opt = copy.copy(optimizer)
        self.w0_opt = copy.copy(optimizer)

    def output_shape(self):
        return (self.n_units,)

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return X.dot(self.W) + self.w0

    def backward_pass(self, accum_grad):
        W = self.W
        if self.trainable:
            grad_w = self.layer_input.T.dot(accum_grad)
            grad_w0 = np.sum(accum_grad, axis=0, keepdims=True)
            self.W = self.W_opt.update(self.W, grad_w)
            self.w0 = self.w0_opt.update(self.w0, grad_w0)
        return accum_grad.dot(W.T)


class Activation:
    def __init__(self, name):
        self.activation_func = ACTIVATIONS[name]()
        self.trainable = True
        self.input_shape = None

    def initialize(self, optimizer, rng):
        pass

    def output_shape(self):
        return self.input_shape

    def forward_pass(self, X, training=True):
        self.layer_input = X
        return self.activation_func(X)

    def backward_pass(self, accum_grad):
        return accum_grad * self.activation_func.gradient(self.layer_input)


class Dropout:
    def __init__(self, p=0.2):
        self.p = p
        self._mask = None
        self.input_shape = None
        self.trainable = True

    def initialize(self, optimizer, rng):
        pass

    def output_shape(self):
        return self.input_shape

    def forward_pass(self, X, training=True):
        c = (1 - self.p)
        if training:
            self._mask = np.random.uniform(size=X.shape) > self.p
            c = self._mask
        return X * c

    def backward_pass(self, accum_grad):
        return accum_grad * self._mask


class CrossEntropy:
    def loss(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return - y * np.log(p) - (1 - y) * np.log(1 - p)

    def acc(self, y, p):
        return accuracy_score(np.argmax(y, axis=1), np.argmax(p, axis=1))

    def gradient(self, y, p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return - (y / p) + (1 - y) / (1 - p)


def accuracy_score(y_true, y_pred):
    return np.sum(y_true == y_pred, axis=0) / len(y_true)


class NeuralNetwork:
    def __init__(self, optimizer, loss, seed=0):
        self.optimizer = optimizer
        self.layers = []
        self.loss_function = loss()
        self.rng = np.random.default_rng(seed)

    def add(self, layer):
        if self.layers:
            layer.input_shape = self.layers[-1].output_shape()
        if hasattr(layer, "initialize"):
            layer.initialize(optimizer=self.optimizer, rng=self.rng)
        self.layers.append(layer)

    def train_on_batch(self, X, y):
        y_pred = self._forward_pass(X)
        loss = np.mean(self.loss_function.loss(y, y_pred))
        acc = self.loss_function.acc(y, y_pred)
        loss_grad = self.loss_function.gradient(y, y_pred)
        self._backward_pass(loss_grad=loss_grad)
        return loss, acc

    def predict(self, X):
        return self._forward_pass(X, training=False)

    def _forward_pass(self, X, training=True):
        layer_output = X
        for layer in self.layers:
            layer_output = layer.forward_pass(layer_output, training)
        return layer_output

    def _backward_pass(self, loss_grad):
        for layer in reversed(self.layers):
            loss_grad = layer.backward_pass(loss_grad)
