"""The inputs of docs/distributed.md's scaling model: allreduce cost against message size, and compute per step.

    mpiexec -n 2 python -m bench.allreduce [--repeats 50]   # the allreduce table (loopback)
    python -m bench.allreduce                               # the compute table (one process)

With more than one rank it times, for float64 messages of 8 B to 64 MiB, the
median over `--repeats` of MPI's own `Allreduce` (mpi4py, in place) and of
`pyfront.distributed.allreduce` of one array (agreement allgather, packing,
the allreduce, the mean); every repeat starts after a barrier and ends when
rank 0's call returns. With one rank it times the data-parallel step of
examples/data_parallel.py's CNN (compiled, cpu-sync): the gradient call on a
shard of `rows` rows, the update call, and the whole step on COMM_SELF
(communication of one rank included), medians over `--repeats` steps after
the warmup. Rank 0 prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # pyfront and examples from a checkout

from pyfront import distributed  # noqa: E402

SIZES = [1 << k for k in range(0, 24, 2)] + [1 << 23]  # float64 elements: 8 B ... 64 MiB


def median_seconds(fn, comm, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def allreduce_table(comm, repeats: int) -> list[str]:
    from mpi4py import MPI

    rows = ["| bytes | MPI Allreduce (us) | pyfront allreduce (us) | pyfront GB/s |", "|---:|---:|---:|---:|"]
    for n in SIZES:
        data = np.ones(n)
        reps = max(5, min(repeats, (1 << 26) // (8 * n) + 5))  # fewer repeats of the big messages
        raw = median_seconds(lambda: comm.Allreduce(MPI.IN_PLACE, data, op=MPI.SUM), comm, reps)
        ours = median_seconds(lambda: distributed.allreduce(data, comm=comm), comm, reps)
        rows.append(f"| {8 * n} | {raw * 1e6:.1f} | {ours * 1e6:.1f} | {8 * n / ours / 1e9:.2f} |")
    return rows


def compute_table(repeats: int) -> list[str]:
    from mpi4py import MPI

    from examples import data_parallel as example

    model, _ = example.cnn.make(0)
    initial = [p.astype(np.float64) for p in model.param_list()]
    batches = example.global_batches(example.WARMUP + repeats, 0)
    table = ["| rows per shard | gradient call (ms) | update call (ms) | whole step, 1 rank (ms) |",
             "|---:|---:|---:|---:|"]
    for rows in (64, 32, 16, 8, 4, 2):
        step = distributed.data_parallel(example.cnn.loss_fn, example.Momentum(initial), comm=MPI.COMM_SELF,
                                         backend="cpu-sync")
        params = initial
        grads_times, update_times, step_times = [], [], []
        for i, (images, labels) in enumerate(batches):
            start = time.perf_counter()
            value, grads = step.value_and_grad(params, images[:rows], labels[:rows])
            middle = time.perf_counter()
            step.update(params, grads)
            end = time.perf_counter()
            params, _ = step(params, images[:rows], labels[:rows])
            if i >= example.WARMUP:
                grads_times.append(middle - start)
                update_times.append(end - middle)
                step_times.append(time.perf_counter() - end)
        table.append(f"| {rows} | {np.median(grads_times) * 1e3:.2f} | {np.median(update_times) * 1e3:.2f} | "
                     f"{np.median(step_times) * 1e3:.2f} |")
    n_params = sum(p.size for p in initial)
    table.append(f"\n(the gradients: {n_params} float64 parameters, {8 * n_params} bytes)")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    opts = parser.parse_args()
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rows = allreduce_table(world, opts.repeats) if world.Get_size() > 1 else compute_table(opts.repeats)
    if world.Get_rank() == 0:
        print("\n".join(rows))


if __name__ == "__main__":
    main()
