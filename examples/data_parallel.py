"""Data-parallel training over MPI: the model suite's CNN (examples/models/cnn.py) on N processes.

    pip install -e '.[distributed]'
    mpiexec -n 2 python examples/data_parallel.py [--steps N] [--batch B]

Every process runs `pyfront.distributed.data_parallel(loss, update)`: the
compiled gradient of the CNN's loss on its shard of each global batch of 64
digits (`--batch`; on the `cpu-sync` backend, one thread per process), one
allreduce of the loss and gradients (one float64 buffer), and the compiled
SGD-with-momentum update, the suite's optimizer. In float64 the run equals a
1-process run over the same global batches to rounding: rank 0 replays the
training on MPI's COMM_SELF (one process, the whole batch) and prints the
largest parameter difference. The last line reads

    data-parallel: 2 processes, final loss <x>, max parameter difference vs 1-process run <d>, <s> samples/s

where samples/s counts the global batches of the timed steps (those after
the first `WARMUP`, which profile and compile).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `examples.models` from a checkout

from examples.models import cnn  # noqa: E402
from examples.models.optim import SGD  # noqa: E402
from pyfront import distributed  # noqa: E402

WARMUP = 4  # profiled calls, then the compiles


class Momentum:
    """The suite's SGD with momentum as data_parallel's `update(params, grads) -> params`.

    The optimizer writes the parameters into a dict, as the model suite's
    training steps do; here that dict is this object's, so the writes are
    deferred state updates of the compiled update."""

    def __init__(self, params: list):
        self.names = cnn.LeNet.names
        self.params = dict(zip(self.names, params))
        self.sgd = SGD(self.params, lr=0.05, momentum=0.9)

    def __call__(self, params, grads):
        for name, p in zip(self.names, params):
            self.params[name] = p
        self.sgd.update(self.params, self.names, grads)
        return [self.params[name] for name in self.names]


def global_batches(steps: int, seed: int, batch: int = cnn.BATCH) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same global batches on every rank: `batch` float64 training digits and their labels per step."""
    _, data = cnn.make(seed)
    images, labels = data["train"]
    rng = np.random.default_rng(seed + 1)
    picks = [rng.choice(len(images), batch, replace=False) for _ in range(steps)]
    return [(images[idx].astype(np.float64), labels[idx]) for idx in picks]


def train(comm, params: list, batches: list) -> tuple[list, float, float]:
    """(final parameters, final loss, seconds of the steps after the warmup) of data-parallel training."""
    # cpu-sync: the compiled code runs in the calling thread, one core per process.
    step = distributed.data_parallel(cnn.loss_fn, Momentum(params), comm=comm, backend="cpu-sync")
    loss, start = None, None
    for i, batch in enumerate(batches):
        if i == WARMUP:
            comm.Barrier()
            start = time.perf_counter()
        params, loss = step(params, *batch)
    comm.Barrier()
    return params, float(loss), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=cnn.BATCH, help="rows of each global batch")
    opts = parser.parse_args()
    if opts.steps <= WARMUP:
        parser.error(f"--steps must be more than the {WARMUP} warmup steps")
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    model, _ = cnn.make(opts.seed)
    initial = [p.astype(np.float64) for p in model.param_list()]
    batches = global_batches(opts.steps, opts.seed, opts.batch)
    params, loss, seconds = train(world, initial, batches)
    samples_per_second = (opts.steps - WARMUP) * len(batches[0][0]) / seconds
    difference = 0.0
    if world.Get_rank() == 0:
        alone, _, _ = train(MPI.COMM_SELF, initial, batches)
        difference = max(float(np.abs(a - b).max()) for a, b in zip(params, alone))
    world.Barrier()
    if world.Get_rank() == 0:
        print(f"data-parallel: {world.Get_size()} processes, final loss {loss:.6f}, max parameter difference "
              f"vs 1-process run {difference:.3g}, {samples_per_second:.0f} samples/s")


if __name__ == "__main__":
    main()
