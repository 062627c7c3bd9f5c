"""The model suite's GAN (examples/models/gan.py): one training step of the MLP GAN (both networks).

The model's own `train_step` with `update_generator=True`: the
discriminator's loss and Adam update, then the generator's, each through
`pyfront.value_and_grad`, written into the dicts; the benchmarked function
also returns the arrays it wrote. jax.jit cannot branch on the Python bool
argument (it becomes a traced value), so its port selects the generator's
update with `jax.lax.cond`.
"""

import numpy as np

from bench.program import Port, Program
from bench.programs._model_suite import (
    NUMBA,
    hyperparameters,
    jax_inputs,
    jax_update,
    jax_version,
    optimizer_state,
)
from examples.models import gan
from examples.models.optim import Adam


def make_optimizer(params):
    return Adam(params, lr=2e-3, b1=0.5)  # as gan.trainer, for both networks


def train_step(model, d_opt, g_opt, real, noise, update_generator):
    loss = gan.train_step(model, d_opt, g_opt, real, noise, update_generator)
    g, d = model.generator, model.discriminator
    return (loss, g.param_list(), d.param_list(),
            optimizer_state(d_opt, d.names), optimizer_state(g_opt, g.names))


def train_step_jax(g_params, d_params, d_state, g_state, real, noise, update_generator):
    import jax

    opt = hyperparameters(make_optimizer)
    d_loss, d_grads = jax.value_and_grad(jax_version(gan.discriminator_loss))(d_params, g_params, real, noise)
    d_params, d_state = jax_update(opt, d_params, d_state, d_grads)

    def update(g_params, g_state):
        _, g_grads = jax.value_and_grad(jax_version(gan.generator_loss))(g_params, d_params, noise)
        return jax_update(opt, g_params, g_state, g_grads)

    g_params, g_state = jax.lax.cond(update_generator, update, lambda p, s: (p, s), g_params, g_state)
    return d_loss, g_params, d_params, d_state, g_state


def jax_arguments(inputs):
    model, d_opt, g_opt, real, noise, update_generator = inputs
    g_params, g_state = jax_inputs(model.generator, g_opt)
    d_params, d_state = jax_inputs(model.discriminator, d_opt)
    return g_params, d_params, d_state, g_state, real, noise, update_generator


def make_inputs(size, rng):
    model, _ = gan.make(0)
    real = rng.multivariate_normal(gan.DATA_MEAN, gan.DATA_COV, size["batch"]).astype(np.float32)
    noise = rng.standard_normal((size["batch"], 2)).astype(np.float32)
    return (model, make_optimizer(model.discriminator.params), make_optimizer(model.generator.params),
            real, noise, True)


PROGRAM = Program(
    name="model_gan",
    description="model suite GAN: discriminator and generator steps, batch 64 (value_and_grad; Adam), float32",
    fn=train_step,
    make_inputs=make_inputs,
    sizes={"B64 2-32-2": {"batch": 64}},
    ports={"numba": NUMBA, "jax": Port(train_step_jax, jax_arguments)},
    stateful=True,
    rtol=1e-3,
    atol=1e-5,
)
