"""Models of the suite (examples/models/) train on Vulkan (lavapipe) as on the CPU and in the interpreter.

A few training steps of a model from the same seed, three ways: the plain
interpreter, `pyfront.compile(step, backend="cpu")` and backend="vulkan".
The loss curves and the final parameters must agree, and steps must really
have run compiled on Vulkan (`pyfront.explain(step).compiled_calls > 0`: a
silent run in the interpreter is not a pass). Steps are few because lavapipe
runs each call in about 20 ms and each Vulkan compile takes seconds (they
land in the on-disk cache).

Which models, and why not the others (examples/models/ is not changed here):

* gan: static shapes; the step alternates `update_generator` (two variants,
  both compiled on Vulkan).
* lstm_lm with one sentence length (the model's own step and optimizer, its
  batches drawn at a fixed length so that no dim becomes dynamic).
  `nn.cross_entropy` compares labels with `np.arange(C)` in int32: IREE
  3.13's int64 emulation for SPIR-V rejects an elementwise op on a non-splat
  int64 constant inside a dispatch ("failed to legalize unresolved target
  materialization from ('i64') to ('vector<2xi32>')"; reproducer:
  `lambda l: l + np.arange(8)` on an int64 array, compiled for Vulkan).
* cnn and treenn: their batches vary in size (a dynamic dim, which the Vulkan
  backend refuses) or their trees give one variant per shape: slow to compile
  for lavapipe in CI.
* reinforce: its policy computes in float64 with `np.tanh`, which the Vulkan
  backend refuses by design (no float64 transcendental functions in SPIR-V's
  GLSL set).

Tolerance: the models train in float32. Vulkan code computes the same
operations, but IREE's SPIR-V code generation splits reductions (matmuls,
means) differently from the CPU code and from NumPy, and lavapipe's
exp/log/tanh are not NumPy's to the last bit: each step differs by a few ulps
(measured over these steps, on the CPU and on Vulkan alike: losses 9e-8
relative, parameters 7e-6 at most, on entries near zero). rtol=1e-4 with
atol=1e-6 leaves a margin of 15x or more, while a real error (a wrong
gradient, a lost or doubled optimizer update) moves the GAN's loss by about
2e-2 at the next step (its loss falls by 0.02 to 0.03 per step here).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from vulkan_support import requires_vulkan

import pyfront

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/ lives at the repository root

pytestmark = [pytest.mark.iree, requires_vulkan]

RTOL, ATOL = 1e-4, 1e-6
SENTENCE_LENGTH = 8


def trainer(name: str, compile: bool, backend: str = "cpu"):
    """The model's training from seed 0 (lstm_lm: every batch of SENTENCE_LENGTH tokens)."""
    module = importlib.import_module(f"examples.models.{name}")
    training = module.trainer(seed=0, compile=compile, backend=backend)
    if name == "lstm_lm":
        model, opt, _ = training.next_args()
        rng = np.random.default_rng(1)
        training.next_args = lambda: (model, opt, module.batch_of_length(rng, SENTENCE_LENGTH))
    return training


# Steps: the first two are profiled in the interpreter, then each call compiles its variant
# (the GAN's two, one per value of update_generator) and runs it.
@pytest.mark.parametrize(("name", "steps"), [("gan", 4), ("lstm_lm", 3)])
def test_model_trains_the_same_on_vulkan_as_on_cpu_and_in_the_interpreter(name, steps):
    vulkan = trainer(name, compile=True, backend="vulkan").run(steps)
    report = pyfront.explain(vulkan.step)
    assert report.compiled_calls > 0, f"no step ran compiled on Vulkan:\n{report}"

    interpreted = trainer(name, compile=False).run(steps)
    cpu = trainer(name, compile=True, backend="cpu").run(steps)
    assert pyfront.explain(cpu.step).compiled_calls > 0
    for run in (cpu, vulkan):
        np.testing.assert_allclose(run.losses, interpreted.losses, rtol=RTOL, atol=ATOL)
        for got, want in zip(parameters(run.model), parameters(interpreted.model), strict=True):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def parameters(model) -> list[np.ndarray]:
    """Every parameter array of a model (the GAN holds two networks)."""
    if hasattr(model, "generator"):
        return model.generator.param_list() + model.discriminator.param_list()
    return model.param_list()
