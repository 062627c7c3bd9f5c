"""A transformer block from scratch, as NumPy tutorials write one: a MultiHeadAttention layer object
called as a function (`self.attn(x, mask=mask)`) that splits heads with reshape/transpose, scaled dot
products with a causal mask from np.tril through np.where, a softmax with the max subtracted, layer norm
by .mean/.var with keepdims, a ReLU feed-forward, and a `causal=` keyword flag on forward."""

import numpy as np

def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)

def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta

class MultiHeadAttention:
    def __init__(self, d_model, n_heads, rng):
        self.d_model, self.n_heads = d_model, n_heads
        self.d_k = d_model // n_heads
        scale = 1.0 / np.sqrt(d_model)
        self.W_q = rng.normal(0, scale, (d_model, d_model))
        self.W_k = rng.normal(0, scale, (d_model, d_model))
        self.W_v = rng.normal(0, scale, (d_model, d_model))
        self.W_o = rng.normal(0, scale, (d_model, d_model))

    def split_heads(self, x):
        batch, seq, _ = x.shape
        return x.reshape(batch, seq, self.n_heads, self.d_k).transpose(0, 2, 1, 3)

    def __call__(self, x, mask=None):
        batch, seq, _ = x.shape
        q = self.split_heads(x @ self.W_q)
        k = self.split_heads(x @ self.W_k)
        v = self.split_heads(x @ self.W_v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_k)
        if mask is not None:
            scores = np.where(mask, scores, -1e9)
        attn = softmax(scores, axis=-1)
        out = (attn @ v).transpose(0, 2, 1, 3).reshape(batch, seq, self.d_model)
        return out @ self.W_o

class TransformerBlock:
    def __init__(self, d_model, n_heads, d_ff, rng):
        self.attn = MultiHeadAttention(d_model, n_heads, rng)
        self.W1 = rng.normal(0, 0.02, (d_model, d_ff)); self.b1 = np.zeros(d_ff)
        self.W2 = rng.normal(0, 0.02, (d_ff, d_model)); self.b2 = np.zeros(d_model)
        self.g1, self.be1 = np.ones(d_model), np.zeros(d_model)
        self.g2, self.be2 = np.ones(d_model), np.zeros(d_model)

    def forward(self, x, causal=True):
        seq = x.shape[1]
        mask = np.tril(np.ones((seq, seq), dtype=bool)) if causal else None
        h = layer_norm(x + self.attn(x, mask=mask), self.g1, self.be1)
        ff = np.maximum(0, h @ self.W1 + self.b1) @ self.W2 + self.b2
        return layer_norm(h + ff, self.g2, self.be2)
