"""What every model of the suite shares: its parameters' container and the training run record.

Parameters live in a dict on the model object (`model.params[name]`), in the
order given by the class's `names`; the loss functions take them as a list
(the order of `names`), which `pyfront.value_and_grad` differentiates as one
pytree. Optimizers (optim.py) write the updated arrays back into the dict:
in compiled code those are deferred item writes, committed only when every
guard held.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyfront


class Parameters:
    """A model's arrays: `params[name]` for each name in `names` (set by the subclass)."""

    names: tuple[str, ...] = ()

    def __init__(self, **arrays):
        if tuple(arrays) != self.names:
            raise ValueError(f"{type(self).__name__} needs parameters {self.names}, got {tuple(arrays)}")
        self.params = arrays

    def param_list(self):
        """The parameters in the order of `names` (what the loss functions take)."""
        out = []
        for name in self.names:
            out.append(self.params[name])
        return out


@dataclass
class Training:
    """A model's training: its step function, where each step's arguments come from, the losses so far.

    `step` is the training step (the `pyfront.compile`d function when
    compiled); `next_args()` makes the next step's arguments (draws a batch,
    plays an episode, ...), which is not part of the step. Benchmarks time
    `step(*next_args())` alone; `run` records the loss of each step.
    """

    step: Callable
    next_args: Callable[[], tuple]
    model: Any
    data: Any
    losses: list[float] = field(default_factory=list)

    def run(self, steps: int) -> Training:
        for _ in range(steps):
            self.losses.append(float(self.step(*self.next_args())))
        return self


def step_function(step: Callable, compile: bool, backend: str, **options: Any) -> Callable:
    """`step` itself (the interpreter), or `pyfront.compile(step)` for `backend`."""
    if not compile:
        return step
    return pyfront.compile(step, backend=backend, **options)


def main(doc: str, train: Callable, evaluate: Callable, steps: int, metric: str) -> None:
    """A model module's command line: train, print the loss curve, the metric and `explain`."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--interpreter", action="store_true", help="do not compile the training step")
    opts = parser.parse_args()
    run = train(opts.steps, compile=not opts.interpreter, seed=opts.seed, backend=opts.backend)
    every = max(1, len(run.losses) // 20)
    for i in range(0, len(run.losses), every):
        print(f"step {i:5d}  loss {run.losses[i]:.4f}")
    print(f"final loss {run.losses[-1]:.4f}, {metric} {evaluate(run.model, run.data):.4f}")
    if not opts.interpreter:
        print(pyfront.explain(run.step))
