"""The inputs of docs/distributed.md's scaling model: allreduce cost against message size, and compute per step.

    mpiexec -n 2 python -m bench.allreduce [--repeats 50]   # the allreduce table (loopback)
    python -m bench.allreduce                               # the compute table (one process)
    python -m bench.allreduce --model                       # the modelled scale factors

With more than one rank it times, for float64 messages of 8 B to 64 MiB, the
median over `--repeats` of MPI's own `Allreduce` (mpi4py, in place) and of
`pyfront.distributed.allreduce` of one array (agreement allgather, packing,
the allreduce, the mean); every repeat starts after a barrier and ends when
rank 0's call returns. With one rank it times the data-parallel step of
examples/data_parallel.py's CNN (compiled, cpu-sync): the gradient call on a
shard of `rows` rows, the update call, and the whole step on COMM_SELF
(communication of one rank included), medians over `--repeats` steps after
the warmup. Rank 0 prints a Markdown table.

`--model` prints docs/distributed.md's model of the scale factor (throughput
of p ranks over p times that of one, each rank with the same shard: JANUS's
definition) for 2 to 64 ranks, from the step's compute and host time and the
gradients' size (measured here, or a ResNet-50-sized workload, stated) and a
network's latency and bandwidth (stated in NETWORKS).
"""

from __future__ import annotations

import argparse
import math
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


# (name, latency alpha in seconds, bandwidth beta in bytes/s per link, per direction)
NETWORKS = [("100 Gb/s InfiniBand (alpha 2 us, beta 10 GB/s)", 2e-6, 10e9),
            ("10 Gb/s Ethernet, TCP (alpha 25 us, beta 1.1 GB/s)", 25e-6, 1.1e9)]
# (name, compute seconds per step, host seconds per step not counting packing, gradient bytes)
WORKLOADS = [("the example's CNN, 64 rows per rank (measured)", 3.2e-3, 0.5e-3, 20944),
             ("the example's CNN, 8 rows per rank (measured)", 1.1e-3, 0.3e-3, 20944),
             ("ResNet-50-sized: 25.6 M float32 gradients, 250 ms of compute (assumed)", 0.25, 0.5e-3, 102_400_000)]
HOST_SECONDS_PER_BYTE = 0.6e-9  # packing, weighting, the mean, the copy out: pyfront's minus MPI's time at 64 MiB


def allreduce_seconds(ranks: int, nbytes: int, alpha: float, beta: float) -> float:
    """MPI's better of recursive doubling (latency-bound) and reduce-scatter + allgather (bandwidth-bound)."""
    rounds = math.ceil(math.log2(ranks))
    doubling = rounds * (alpha + nbytes / beta)
    rabenseifner = 2 * rounds * alpha + 2 * (ranks - 1) / ranks * nbytes / beta
    return min(doubling, rabenseifner)


def step_seconds(ranks: int, compute: float, host: float, nbytes: int, alpha: float, beta: float) -> float:
    """One data-parallel step: compute, host work, and (with company) agreement and allreduce, not overlapped."""
    if ranks == 1:
        return compute + host + HOST_SECONDS_PER_BYTE * nbytes
    agreement = allreduce_seconds(ranks, 33, alpha, beta)  # the 33-byte records' allgather: latency only
    return (compute + host + HOST_SECONDS_PER_BYTE * nbytes + agreement
            + allreduce_seconds(ranks, nbytes, alpha, beta))


def model_table() -> list[str]:
    counts = (2, 4, 8, 16, 32, 64)
    rows = ["| workload | network | " + " | ".join(f"{p} ranks" for p in counts) + " |",
            "|---|---|" + "---:|" * len(counts)]
    for name, compute, host, nbytes in WORKLOADS:
        for network, alpha, beta in NETWORKS:
            one = step_seconds(1, compute, host, nbytes, alpha, beta)
            factors = [one / step_seconds(p, compute, host, nbytes, alpha, beta) for p in counts]
            rows.append(f"| {name} | {network} | " + " | ".join(f"{f:.2f}" for f in factors) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--model", action="store_true", help="print the modelled scale factors")
    opts = parser.parse_args()
    if opts.model:
        print("\n".join(model_table()))
        return
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rows = allreduce_table(world, opts.repeats) if world.Get_size() > 1 else compute_table(opts.repeats)
    if world.Get_rank() == 0:
        print("\n".join(rows))


if __name__ == "__main__":
    main()
