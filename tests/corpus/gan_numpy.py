"""A small GAN from scratch, as NumPy tutorials write one: Generator and Discriminator classes whose
forward passes cache their inputs and activations on self and whose backward passes return the
gradients, leaky ReLU by np.where and by a mask write, sigmoid outputs with a BCE loss through
np.log(p + eps), plain SGD on the discriminator and Adam (moment lists, a step counter) on the
generator, both updating self's arrays in place. The noise is drawn by the caller and passed in."""

import numpy as np

eps = 1e-8


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lrelu(x, alpha=0.2):
    return np.where(x > 0, x, x * alpha)


def dlrelu(x, alpha=0.2):
    dx = np.ones_like(x)
    dx[x < 0] = alpha
    return dx


class Generator:
    def __init__(self, z_dim, hidden_dim, out_dim, rng, beta1=0.5, beta2=0.999):
        self.W1 = rng.standard_normal((z_dim, hidden_dim)) * np.sqrt(2.0 / z_dim)
        self.b1 = np.zeros((1, hidden_dim))
        self.W2 = rng.standard_normal((hidden_dim, out_dim)) * np.sqrt(2.0 / hidden_dim)
        self.b2 = np.zeros((1, out_dim))
        self.params = [self.W1, self.b1, self.W2, self.b2]
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.beta1, self.beta2 = beta1, beta2
        self.t = 0

    def forward(self, z):
        self.z = z
        self.a1 = np.dot(z, self.W1) + self.b1
        self.h1 = lrelu(self.a1)
        self.a2 = np.dot(self.h1, self.W2) + self.b2
        self.out = np.tanh(self.a2)
        return self.out

    def backward(self, dout):
        da2 = dout * (1.0 - self.out ** 2)
        dW2 = np.dot(self.h1.T, da2)
        db2 = np.sum(da2, axis=0, keepdims=True)
        da1 = np.dot(da2, self.W2.T) * dlrelu(self.a1)
        dW1 = np.dot(self.z.T, da1)
        db1 = np.sum(da1, axis=0, keepdims=True)
        return [dW1, db1, dW2, db2]

    def adam_step(self, grads, lr):
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m[:] = self.beta1 * m + (1 - self.beta1) * g
            v[:] = self.beta2 * v + (1 - self.beta2) * g * g
            m_hat = m / (1 - self.beta1 ** self.t)
            v_hat = v / (1 - self.beta2 ** self.t)
            p -= lr * m_hat / (np.sqrt(v_hat) + eps)


class Discriminator:
    def __init__(self, in_dim, hidden_dim, rng, alpha=0.2):
        self.W1 = rng.standard_normal((in_dim, hidden_dim)) * np.sqrt(2.0 / in_dim)
        self.b1 = np.zeros((1, hidden_dim))
        self.W2 = rng.standard_normal((hidden_dim, 1)) * np.sqrt(2.0 / hidden_dim)
        self.b2 = np.zeros((1, 1))
        self.alpha = alpha

    def forward(self, x):
        self.x = x
        self.a1 = x @ self.W1 + self.b1
        self.mask = self.a1 > 0
        self.h1 = np.where(self.mask, self.a1, self.alpha * self.a1)
        self.logits = self.h1 @ self.W2 + self.b2
        self.prob = sigmoid(self.logits)
        return self.prob

    def backward(self, dlogits):
        dW2 = self.h1.T @ dlogits
        db2 = dlogits.sum(axis=0, keepdims=True)
        da1 = (dlogits @ self.W2.T) * np.where(self.mask, 1.0, self.alpha)
        dW1 = self.x.T @ da1
        db1 = da1.sum(axis=0, keepdims=True)
        dx = da1 @ self.W1.T
        return (dW1, db1, dW2, db2), dx

    def sgd_step(self, grads, lr):
        dW1, db1, dW2, db2 = grads
        self.W1 -= lr * dW1
        self.b1 -= lr * db1
        self.W2 -= lr * dW2
        self.b2 -= lr * db2


def train_step(G, D, x_real, z, lr):
    n = x_real.shape[0]
    x_fake = G.forward(z)

    # discriminator: real samples are labelled 1, generated ones 0
    p_real = D.forward(x_real)
    d_loss_real = -np.mean(np.log(p_real + eps))
    grads_real, _ = D.backward((p_real - 1.0) / n)
    p_fake = D.forward(x_fake)
    d_loss_fake = -np.mean(np.log(1.0 - p_fake + eps))
    grads_fake, _ = D.backward(p_fake / n)
    D.sgd_step([gr + gf for gr, gf in zip(grads_real, grads_fake)], lr)

    # generator: fool the updated discriminator into saying 1
    p_fake = D.forward(x_fake)
    g_loss = -np.mean(np.log(p_fake + eps))
    _, dx_fake = D.backward((p_fake - 1.0) / n)
    G.adam_step(G.backward(dx_fake), lr)
    return d_loss_real + d_loss_fake, g_loss
