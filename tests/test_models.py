"""The model suite (examples/models/) trains the same compiled as in the interpreter.

For each model: the same seeds give the same loss at every step with the
training step run by `pyfront.compile` and by the plain interpreter, the
compiled run reaches the model's stated target, and in steady state (the
second half of the steps) every step ran compiled.

Tolerance: the models train in float32. Compiled code computes the same
operations but IREE may reassociate sums (matmul, reductions, fused
elementwise chains), so each step's values differ from NumPy's by a few ulps
(~1e-7 relative); training feeds those differences back through the updated
parameters, where they grow slowly. rtol=1e-3 (atol=1e-5 for losses near 0)
holds at every logged step of these short runs with a wide margin, while any
real difference (a wrong gradient, a missed or doubled update, a state write
lost) changes the loss by far more after a few steps.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import pyfront

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/ lives at the repository root

pytestmark = pytest.mark.iree

RTOL, ATOL = 1e-3, 1e-5


@dataclass(frozen=True)
class Case:
    steps: int
    metric_bound: float  # evaluate(model, data) must be >= this (or <= with lower_is_better)
    lower_is_better: bool = False


CASES = {
    "cnn": Case(steps=160, metric_bound=0.80),  # test accuracy
    "lstm_lm": Case(steps=150, metric_bound=1.25, lower_is_better=True),  # held-out loss, nats
    "treenn": Case(steps=150, metric_bound=0.80),  # test accuracy
    "reinforce": Case(steps=100, metric_bound=0.0),  # its target is on episode lengths, below
    "gan": Case(steps=600, metric_bound=0.3, lower_is_better=True),  # largest moment gap
}


@pytest.mark.parametrize("name", list(CASES))
def test_model_trains_the_same_compiled_and_reaches_its_target(name):
    case = CASES[name]
    module = importlib.import_module(f"examples.models.{name}")
    interpreted = module.train(case.steps, compile=False, seed=0)

    compiled = module.trainer(seed=0, compile=True)
    warm_up = case.steps // 2
    compiled.run(warm_up)
    before = pyfront.explain(compiled.step)
    compiled.run(case.steps - warm_up)
    after = pyfront.explain(compiled.step)

    np.testing.assert_allclose(compiled.losses, interpreted.losses, rtol=RTOL, atol=ATOL)
    steady_calls = after.calls - before.calls
    steady_compiled = after.compiled_calls - before.compiled_calls
    assert steady_compiled == steady_calls, f"{steady_calls - steady_compiled} steady-state steps ran interpreted\n{after}"

    metric = module.evaluate(compiled.model, compiled.data)
    if case.lower_is_better:
        assert metric <= case.metric_bound, metric
    else:
        assert metric >= case.metric_bound, metric
    if name == "reinforce":
        lengths = compiled.data["episode_lengths"]
        assert np.mean(lengths[-20:]) >= 3 * np.mean(lengths[:20]), lengths
