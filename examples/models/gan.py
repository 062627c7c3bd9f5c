"""GAN: a small MLP GAN learning a correlated 2-D Gaussian.

    python -m examples.models.gan [--steps N] [--interpreter]

Generator 2 -> 32 -> 2 (tanh), discriminator 2 -> 32 -> 1 (leaky ReLU),
non-saturating GAN losses written with a stable softplus, one Adam per
network. Each step updates the discriminator on a batch of real samples and
generated ones; the generator is updated on every other step only (a Python
bool argument: the step function has two specializations, JANUS's dynamic
control flow on a Python value). Noise and real samples come from seeded
Generators outside the step.

Target: the generated mean is within 0.3 of the data mean (2, -1) and each
generated standard deviation within 0.3 of the data's (0.8, 0.4), after 600
steps (the test checks it; the gap is about 1.0 after 300 steps, 0.12 after
600, 0.02 after 1000); an untrained generator's samples sit near 0.
"""

from __future__ import annotations

import itertools

import numpy as np

import pyfront
from examples.models.common import Parameters, Training, main, step_function
from examples.models.optim import Adam

HIDDEN, BATCH = 32, 64
DATA_MEAN = np.array([2.0, -1.0])
DATA_COV = np.array([[0.64, 0.16], [0.16, 0.16]])  # std 0.8 and 0.4, correlation 0.5


def dense_init(rng, fan_in, fan_out):
    return (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32), np.zeros(fan_out, np.float32)


class Generator(Parameters):
    names = ("w1", "b1", "w2", "b2")


class Discriminator(Parameters):
    names = ("w1", "b1", "w2", "b2")


class GAN:
    def __init__(self, rng: np.random.Generator):
        g_w1, g_b1 = dense_init(rng, 2, HIDDEN)
        g_w2, g_b2 = dense_init(rng, HIDDEN, 2)
        d_w1, d_b1 = dense_init(rng, 2, HIDDEN)
        d_w2, d_b2 = dense_init(rng, HIDDEN, 1)
        self.generator = Generator(w1=g_w1, b1=g_b1, w2=g_w2, b2=g_b2)
        self.discriminator = Discriminator(w1=d_w1, b1=d_b1, w2=d_w2, b2=d_b2)


def generate(g_params, noise):
    w1, b1, w2, b2 = g_params
    return np.tanh(noise @ w1 + b1) @ w2 + b2


def discriminate(d_params, x):
    w1, b1, w2, b2 = d_params
    h = x @ w1 + b1
    return np.maximum(h, 0.2 * h) @ w2 + b2


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def discriminator_loss(d_params, g_params, real, noise):
    fake = generate(g_params, noise)
    return softplus(-discriminate(d_params, real)).mean() + softplus(discriminate(d_params, fake)).mean()


def generator_loss(g_params, d_params, noise):
    return softplus(-discriminate(d_params, generate(g_params, noise))).mean()


def train_step(gan, d_opt, g_opt, real, noise, update_generator):
    """Returns the discriminator's loss (before its update)."""
    g, d = gan.generator, gan.discriminator
    d_loss, d_grads = pyfront.value_and_grad(discriminator_loss)(d.param_list(), g.param_list(), real, noise)
    d_opt.update(d.params, d.names, d_grads)
    if update_generator:
        _, g_grads = pyfront.value_and_grad(generator_loss)(g.param_list(), d.param_list(), noise)
        g_opt.update(g.params, g.names, g_grads)
    return d_loss


def make(seed: int):
    """The GAN, and the Generator for evaluation samples."""
    return GAN(np.random.default_rng(seed)), {"eval_seed": seed + 1000}


def trainer(seed: int = 0, compile: bool = True, backend: str = "cpu") -> Training:
    gan, data = make(seed)
    d_opt = Adam(gan.discriminator.params, lr=2e-3, b1=0.5)
    g_opt = Adam(gan.generator.params, lr=2e-3, b1=0.5)
    rng = np.random.default_rng(seed + 1)
    steps_taken = itertools.count()

    def next_args():
        real = rng.multivariate_normal(DATA_MEAN, DATA_COV, BATCH).astype(np.float32)
        noise = rng.standard_normal((BATCH, 2)).astype(np.float32)
        return gan, d_opt, g_opt, real, noise, next(steps_taken) % 2 == 0

    return Training(step_function(train_step, compile, backend), next_args, gan, data)


def train(steps: int, compile: bool = True, seed: int = 0, backend: str = "cpu") -> Training:
    """`steps` training steps from `seed`; the step compiled for `backend` unless compile=False."""
    return trainer(seed, compile, backend).run(steps)


def sample(gan, rng: np.random.Generator, n: int) -> np.ndarray:
    return generate(gan.generator.param_list(), rng.standard_normal((n, 2)).astype(np.float32))


def evaluate(gan, data) -> float:
    """The largest gap between generated and data moments (means and standard deviations)."""
    samples = sample(gan, np.random.default_rng(data["eval_seed"]), 4000)
    mean_gap = np.abs(samples.mean(axis=0) - DATA_MEAN).max()
    std_gap = np.abs(samples.std(axis=0) - np.sqrt(np.diag(DATA_COV))).max()
    return float(max(mean_gap, std_gap))


if __name__ == "__main__":
    main(__doc__, train, evaluate, steps=1000, metric="largest moment gap")
