"""Deep-learning building blocks for plain NumPy programs: convolution, pooling, softmax, losses, norms.

Every function takes and returns NumPy arrays and runs as ordinary Python, so
a model written with them works without compiling. Two kinds:

- primitive-backed (`conv2d`, `max_pool2d`, `avg_pool2d`, `embedding`): they
  run a primitive of the table (dialects/primitives/nn.py) through
  `bind.call`, so the gradient tape records them and `pyfront.compile` lowers
  them to linalg (pyfront/numpy_api.py registers them with the front end);
- composites (`softmax`, `log_softmax`, `cross_entropy`, `layer_norm`,
  `batch_norm`, `relu`, `sigmoid`, `gelu`): plain NumPy code that the
  compiler inlines like any helper and the tape differentiates through the
  NumPy operations they use.

`dropout` (a composite too) draws its mask from a `np.random.Generator` the
caller passes in; compiled, the draw is made on the host before the call with
that very generator (runtime/host_draws.py), so the stream of numbers is the
interpreter's. Nothing here mutates its arguments: `batch_norm` returns the
updated running statistics instead of writing them.

Layouts: images NCHW, convolution weights OIHW. Arguments are validated as
the primitives' rules require and violations raise ValueError/TypeError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyfront.dialects.primitives import bind, get

__all__ = [
    "avg_pool2d", "batch_norm", "conv2d", "cross_entropy", "dropout", "embedding", "gelu", "layer_norm",
    "log_softmax", "max_pool2d", "relu", "sigmoid", "softmax",
]


def pair(value: Any, what: str) -> tuple[int, int]:
    """An int or a pair of ints as an (h, w) pair (how `stride`, `padding` and `kernel_size` are given)."""
    values = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{what} must be an int or a pair of ints, got {value!r}")
    return int(values[0]), int(values[1])


def conv_params(stride: Any, padding: Any) -> dict[str, tuple[int, int]]:
    return {"strides": pair(stride, "stride"), "padding": pair(padding, "padding")}


def pool_params(kernel_size: Any, stride: Any, padding: Any) -> dict[str, tuple[int, int]]:
    kernel = pair(kernel_size, "kernel_size")
    return {"kernel": kernel, "strides": kernel if stride is None else pair(stride, "stride"),
            "padding": pair(padding, "padding")}


def _call(name: str, *operands: Any, **params: Any) -> np.ndarray:
    """Run primitive `name` after checking the operands against its rules (as compiled code would)."""
    arrays = [o if hasattr(o, "shape") and hasattr(o, "dtype") else np.asarray(o) for o in operands]
    get(name).infer([tuple(a.shape) for a in arrays], [np.dtype(a.dtype) for a in arrays], params)
    return bind.call(name, *arrays, **params)


# Primitive-backed ------------------------------------------------------------------


def conv2d(x, weight, stride=1, padding=0):
    """2-D convolution (cross-correlation, as in DL frameworks) of NCHW `x` with OIHW `weight`.

    `stride` and `padding` are ints or (h, w) pairs; padding adds zeros on both
    sides and must be smaller than the kernel. No bias: add it yourself.

    >>> x = np.ones((1, 1, 4, 4), np.float32)
    >>> w = np.ones((2, 1, 3, 3), np.float32)
    >>> conv2d(x, w, padding=1)[0, 0]
    array([[4., 6., 6., 4.],
           [6., 9., 9., 6.],
           [6., 9., 9., 6.],
           [4., 6., 6., 4.]], dtype=float32)
    """
    return _call("conv2d", x, weight, **conv_params(stride, padding))


def max_pool2d(x, kernel_size, stride=None, padding=0):
    """Max over `kernel_size` windows of NCHW `x` (stride defaults to the kernel; padding is -inf).

    Its gradient goes to the first maximum of each window (row-major).

    >>> max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    return _call("max_pool2d", x, **pool_params(kernel_size, stride, padding))


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """Mean over `kernel_size` windows of NCHW `x`; zero padding counts (the divisor is always kh * kw).

    >>> avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)[0, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    return _call("avg_pool2d", x, **pool_params(kernel_size, stride, padding))


def embedding(table, indices):
    """Rows of the (V, D) `table` at integer `indices` (any shape): `table[indices]`, always a new array.

    Negative indices count from the end; an index out of range raises IndexError.
    The gradient adds each row's cotangent into the table's gradient (repeats add up).

    >>> embedding(np.eye(3), np.array([[2, 0]]))
    array([[[0., 0., 1.],
            [1., 0., 0.]]])
    """
    return _call("embedding", table, indices)


# Composites ------------------------------------------------------------------------


def relu(x):
    """max(x, 0) elementwise, keeping x's dtype."""
    return np.maximum(x, 0)


def sigmoid(x):
    """1 / (1 + exp(-x)), computed as (tanh(x / 2) + 1) / 2 so that no exp overflows."""
    return 0.5 * (np.tanh(0.5 * x) + 1)


def gelu(x):
    """GELU, tanh approximation: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, with the max subtracted first (no overflow).

    >>> softmax(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
    """
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """log(softmax(x)) along `axis`, computed as z - log(sum(exp(z))) with z = x - max(x)."""
    z = x - np.max(x, axis=axis, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def cross_entropy(logits, labels):
    """Mean over the batch of -log softmax(logits)[i, labels[i]] for (N, C) logits and N integer labels.

    A label outside [0, C) picks no class (it adds 0 to the sum).

    >>> float(cross_entropy(np.zeros((2, 4)), np.array([1, 3])))  # log(4)
    1.3862943611198906
    """
    num_classes = logits[0].shape[0]  # (not logits.shape: the batch size may vary between calls)
    # Compared as int32 (IREE 3.13's SPIR-V int64 emulation rejects an int64 compare with a
    # constant); clipping first keeps labels outside [0, C) matching no class, as in int64.
    labels = np.clip(labels, -1, num_classes).astype(np.int32)
    picked = labels[:, None] == np.arange(num_classes, dtype=np.int32)
    return -np.mean(np.sum(np.where(picked, log_softmax(logits), 0.0), axis=-1))


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalize over the last axis to zero mean and unit variance, then scale by gamma and shift by beta."""
    mean = np.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * gamma + beta


def batch_norm(x, gamma, beta, running_mean, running_var, training, momentum=0.1, eps=1e-5):
    """Batch normalization over every axis but 1 (channels) of (N, C) or (N, C, H, W) `x`.

    Returns `(y, new_running_mean, new_running_var)` and mutates nothing.
    With `training` true, `x` is normalized with its batch mean and (biased)
    variance and the running statistics move towards them:
    `new = (1 - momentum) * running + momentum * batch`. Otherwise `x` is
    normalized with the running statistics, which are returned unchanged (the
    same objects). Keep the statistics on your model object and store the
    returned ones back:

        y, self.mean, self.var = batch_norm(x, self.g, self.b, self.mean, self.var, train)
    """
    axes = (0,) + tuple(range(2, x.ndim))
    channel_shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean = np.mean(x, axis=axes)
        centered = x - mean.reshape(channel_shape)
        var = np.mean(centered * centered, axis=axes)
        new_mean = (1 - momentum) * running_mean + momentum * mean
        new_var = (1 - momentum) * running_var + momentum * var
    else:
        mean, var = running_mean, running_var
        centered = x - mean.reshape(channel_shape)
        new_mean, new_var = running_mean, running_var
    scale = gamma / np.sqrt(var + eps)
    return centered * scale.reshape(channel_shape) + beta.reshape(channel_shape), new_mean, new_var


def dropout(x, rate, rng, training=True):
    """Zero each element with probability `rate` and scale the rest by 1 / (1 - rate).

    The mask is `rng.random(x.shape) >= rate`, drawn from the `np.random.Generator`
    `rng` (which advances). With `training` false or `rate == 0` it returns `x`
    itself and draws nothing. Compiled (with `rate` and `training` compile-time
    values), the mask is drawn on the host just before the call, from `rng`
    itself: compiled and interpreted runs see the same numbers.
    """
    if not training or rate == 0:
        return x
    if not 0 <= rate < 1:
        raise ValueError(f"dropout rate must be in [0, 1), got {rate!r}")
    keep = rng.random(np.shape(x)) >= rate
    return np.where(keep, x / (1 - rate), 0)
