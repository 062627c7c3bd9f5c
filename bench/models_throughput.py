"""Training throughput of the model suite: interpreter vs pyfront-compiled steps per second.

    python bench/models_throughput.py [--models cnn,gan] [--repeats 5] [--steps 20] [--backend cpu]

For each model of examples/models/, two trainings from the same seed: one
with the plain training step, one with `pyfront.compile(step)`. The compiled
one first runs `--warm-up` steps (profiling, compiling every variant the
model needs). Then each repeat times `--steps` calls of the step function
alone (the batch, episode or tree is made before the clock starts), and the
table gives the median steps/s over the repeats for each, their ratio, and
how many of the timed compiled steps actually ran compiled. These machines
are shared and noisy: compare ratios, not absolute numbers.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

import pyfront

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/ lives at the repository root

from examples.models import MODELS


def steps_per_second(training, steps: int) -> float:
    elapsed = 0.0
    for _ in range(steps):
        args = training.next_args()
        start = time.perf_counter()
        training.step(*args)
        elapsed += time.perf_counter() - start
    return steps / elapsed


def measure(name: str, opts) -> dict:
    module = importlib.import_module(f"examples.models.{name}")
    interpreted = module.trainer(seed=0, compile=False)
    compiled = module.trainer(seed=0, compile=True, backend=opts.backend)
    start = time.perf_counter()
    compiled.run(opts.warm_up)
    pyfront.wait(compiled.step)  # the variants the warm-up started compiling
    warm_up_s = time.perf_counter() - start
    interpreted.run(opts.warm_up)
    before = pyfront.explain(compiled.step)
    rates = {"interpreter": [], "compiled": []}
    for _ in range(opts.repeats):
        rates["interpreter"].append(steps_per_second(interpreted, opts.steps))
        rates["compiled"].append(steps_per_second(compiled, opts.steps))
    after = pyfront.explain(compiled.step)
    interp, comp = statistics.median(rates["interpreter"]), statistics.median(rates["compiled"])
    return {
        "model": name,
        "interpreter": interp,
        "compiled": comp,
        "ratio": comp / interp,
        "ran_compiled": f"{after.compiled_calls - before.compiled_calls}/{after.calls - before.calls}",
        "warm_up_s": warm_up_s,
        "variants": after.compilations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per repeat")
    parser.add_argument("--warm-up", type=int, default=30, help="untimed steps before timing")
    parser.add_argument("--backend", default="cpu")
    opts = parser.parse_args()
    print(f"median of {opts.repeats} repeats x {opts.steps} steps, after {opts.warm_up} warm-up steps")
    header = f"{'model':10} {'interp steps/s':>15} {'compiled steps/s':>17} {'ratio':>7} {'ran compiled':>13} {'warm-up s':>10} {'compiles':>9}"
    print(header)
    for name in opts.models.split(","):
        row = measure(name, opts)
        print(
            f"{row['model']:10} {row['interpreter']:15.1f} {row['compiled']:17.1f} {row['ratio']:6.2f}x"
            f" {row['ran_compiled']:>13} {row['warm_up_s']:10.1f} {row['variants']:9d}",
            flush=True,
        )


if __name__ == "__main__":
    main()
