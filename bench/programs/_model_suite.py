"""What the model-suite programs (model_*.py) share: the observed training step and the jax port.

Each model program benchmarks one training step of a model of examples/models/
(loss, `pyfront.value_and_grad`, optimizer update written in NumPy) exactly as
the model's `train_step` runs it: NumPy, pyfront and torch.compile run the
model's own code, which updates the model's and the optimizer's arrays in
place. The benchmarked function returns the step's loss together with the
arrays the step wrote (parameters and optimizer state) so that the harness's
result check covers the update, not only the loss (the harness checks each
call of a stateful program against NumPy run on a copy of the arguments as
they were just before it).

jax.jit needs a functional step: `jax_train_step` is the minimal port, the
model's loss function with `np` bound to `jax.numpy` and `nn` to the jax
equivalents below (`np.maximum` keeps pyfront's gradient at ties, see
_JaxNumPy), `jax.value_and_grad` in place of `pyfront.value_and_grad`,
and the optimizer's update written as a function of (params, state, grads)
that returns the new arrays instead of writing them into dicts. `jax_inputs`
takes those arrays out of the model and optimizer objects (a `Port`'s adapter).
The composites of pyfront.nn (sigmoid, log_softmax, cross_entropy) are its
own code with `np` bound to jax.numpy; conv2d, the pools and embedding are
pyfront primitives and get their jax.lax equivalents.

Each program builds its optimizer with one function, `make_optimizer(params)`
(the hyperparameters of the model's `trainer`); the port reads the
hyperparameters off an optimizer that function makes for a placeholder array.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from bench.program import NotRunnable
from examples.models.optim import SGD

NUMBA = NotRunnable("numba.njit cannot type the step's arguments, plain Python objects holding dicts of arrays "
                    "(the model, the optimizer: 'Cannot determine Numba type of <class ...>'), nor run "
                    "pyfront.value_and_grad's tape of Python objects")


def optimizer_state(opt, names):
    """The optimizer's arrays in a fixed order: SGD's velocities; Adam's m, v, then beta powers."""
    out = []
    if isinstance(opt, SGD):
        for name in names:
            out.append(opt.velocity[name])
        return out
    for name in names:
        out.append(opt.m[name])
    for name in names:
        out.append(opt.v[name])
    out.append(opt.b1_power)
    out.append(opt.b2_power)
    return out


def jax_inputs(model, opt):
    """(parameter list, optimizer state list): what the jax port takes instead of the objects."""
    return model.param_list(), optimizer_state(opt, model.names)


def jax_update(opt, params, state, grads):
    """`opt.update` as a function: the new (params, state) lists, `opt` only giving hyperparameters."""
    import jax.numpy as jnp

    n = len(params)
    if isinstance(opt, SGD):
        velocity = [opt.momentum * v + g for v, g in zip(state, grads)]
        return [p - opt.lr * v for p, v in zip(params, velocity)], velocity
    b1_power, b2_power = state[2 * n] * opt.b1, state[2 * n + 1] * opt.b2
    step_size = opt.lr * jnp.sqrt(1 - b2_power) / (1 - b1_power)
    m = [opt.b1 * m + (1 - opt.b1) * g for m, g in zip(state[:n], grads)]
    v = [opt.b2 * v + (1 - opt.b2) * (g * g) for v, g in zip(state[n : 2 * n], grads)]
    new_params = [p - step_size * mi / (jnp.sqrt(vi) + opt.eps) for p, mi, vi in zip(params, m, v)]
    return new_params, [*m, *v, b1_power, b2_power]


@functools.cache
def jax_nn() -> types.SimpleNamespace:
    """pyfront.nn's functions for jax: its composites rebound to jax.numpy, its primitives in jax.lax."""
    import jax.numpy as jnp
    from jax import lax

    from bench.systems import rebound
    from pyfront import nn

    def conv2d(x, weight, stride=1, padding=0):
        (sh, sw), (ph, pw) = nn.pair(stride, "stride"), nn.pair(padding, "padding")
        return lax.conv_general_dilated(x, weight, (sh, sw), [(ph, ph), (pw, pw)],
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def pool(x, kernel_size, stride, padding, init, op):
        (kh, kw), (ph, pw) = nn.pair(kernel_size, "kernel_size"), nn.pair(padding, "padding")
        sh, sw = nn.pair(stride if stride is not None else kernel_size, "stride")
        return lax.reduce_window(x, init, op, (1, 1, kh, kw), (1, 1, sh, sw), [(0, 0), (0, 0), (ph, ph), (pw, pw)])

    def max_pool2d(x, kernel_size, stride=None, padding=0):
        return pool(x, kernel_size, stride, padding, -jnp.inf, lax.max)

    def avg_pool2d(x, kernel_size, stride=None, padding=0):
        kh, kw = nn.pair(kernel_size, "kernel_size")
        return pool(x, kernel_size, stride, padding, 0.0, lax.add) / (kh * kw)

    composites = {name: rebound(getattr(nn, name), {"np": jnp}) for name in ("sigmoid", "log_softmax", "cross_entropy")}
    return types.SimpleNamespace(conv2d=conv2d, max_pool2d=max_pool2d, avg_pool2d=avg_pool2d,
                                 embedding=lambda table, indices: jnp.take(table, indices, axis=0), **composites)


class _JaxNumPy:
    """jax.numpy, except `maximum`, whose gradient at ties follows pyfront's rule.

    jnp.maximum splits the gradient of a tie between its operands; pyfront
    (docs/grad.md) sends it to the second one, so `np.maximum(x, 0)` has
    gradient 0 at 0. The CNN's ReLUs see exact ties (zero pixels, zero
    biases): `where(a > b, a, b)` has pyfront's derivative and the same values.
    """

    def __getattr__(self, name):
        import jax.numpy as jnp

        return getattr(jnp, name)

    @staticmethod
    def maximum(a, b):
        import jax.numpy as jnp

        return jnp.where(a > b, a, b)


def jax_version(fn):
    """A model function (and the helpers of its module it calls) with np -> jax.numpy, nn -> jax_nn()."""
    from bench.systems import rebound

    return rebound(fn, {"np": _JaxNumPy(), "nn": jax_nn()})


def hyperparameters(make_optimizer):
    """An optimizer made by `make_optimizer` for a placeholder: what the port reads its settings from."""
    return make_optimizer({"placeholder": np.zeros(1, np.float32)})


def jax_train_step(loss_fn, make_optimizer):
    """The jax port of `loss, grads = value_and_grad(loss_fn)(params, *batch); opt.update(...)`.

    Returns `step(params, state, *batch) -> (loss, params, state)`.
    """

    def step(params, state, *batch):
        import jax

        loss, grads = jax.value_and_grad(jax_version(loss_fn))(params, *batch)
        params, state = jax_update(hyperparameters(make_optimizer), params, state, grads)
        return loss, params, state

    return step
