"""Programs that tests/test_distributed.py runs under `mpiexec -n 2`: `python tests/mpi_programs.py SCENARIO`.

Each rank prints one line `RESULT <json>` with what the test checks; a
scenario that is meant to end the job (an uncaught exception, a timeout) is
checked through mpiexec's exit status and stderr instead. The model is a
small float64 MLP so that compiles take about a second.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # pyfront from this checkout

import pyfront  # noqa: E402
from pyfront import distributed  # noqa: E402

STEPS = 8
CLAMP = -100.0


def loss(params, x, y):
    """Softmax cross-entropy of a one-hidden-layer MLP, the mean over the batch.

    The branch is on a computed value: a shard holding a value below CLAMP
    takes it where the others do not (clamping per shard equals clamping the
    whole batch, so the 1-process run agrees), which breaks the speculation of
    a rank that compiled it as never taken.
    """
    if x.min() < CLAMP:
        x = np.maximum(x, CLAMP)
    h = np.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(y * logp).sum(axis=1).mean()


def failing_loss(params, x, y):
    if np.isnan(x).any():
        raise ValueError("a NaN in the batch")
    return loss(params, x, y)


def update(params, grads):
    return {k: params[k] - 0.1 * grads[k] for k in params}


def initial_params(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"w1": rng.standard_normal((6, 8)) * 0.3, "b1": np.zeros(8),
            "w2": rng.standard_normal((8, 3)) * 0.3, "b2": np.zeros(3)}


def batches(deopt_step: int | None = None, nan_step: int | None = None, rows: int = 12) -> list:
    """Global batches; at `deopt_step` the last row (rank 1's shard) holds a value below CLAMP."""
    rng = np.random.default_rng(7)
    out = []
    for i in range(STEPS):
        x, y = rng.standard_normal((rows, 6)), np.eye(3)[rng.integers(0, 3, rows)]
        if i == deopt_step:
            x[-1, 0] = 10 * CLAMP
        if i == nan_step:
            x[-1, 0] = np.nan
        out.append((x, y))
    return out


def report(**fields) -> None:
    print("RESULT " + json.dumps({"rank": distributed.rank(), **fields}), flush=True)


def train(step, params, data):
    for x, y in data:
        params, value = step(params, x, y)
    return params, float(value)


def max_difference(a: dict, b: dict) -> float:
    return max(float(np.abs(a[k] - b[k]).max()) for k in a)


def identical_on_every_rank(params: dict) -> bool:
    from mpi4py import MPI

    return len(set(MPI.COMM_WORLD.allgather(b"".join(v.tobytes() for v in params.values())))) == 1


def scenario_train() -> None:
    """2 ranks (each starting from its own seed: rank 0's parameters win) vs a 1-process run on COMM_SELF,
    vs the same step in the interpreter, and with a batch that does not split evenly (13 rows)."""
    from mpi4py import MPI

    data = batches(deopt_step=5)
    step = distributed.data_parallel(loss, update)
    params, value = train(step, initial_params(distributed.rank()), data)
    one = MPI.COMM_SELF
    alone, alone_value = train(distributed.data_parallel(loss, update, comm=one), initial_params(0), data)
    interpreted, _ = train(distributed.data_parallel(loss, update, compile=False), initial_params(0), data)
    uneven = batches(rows=13)
    uneven_params, _ = train(distributed.data_parallel(loss, update), initial_params(0), uneven)
    uneven_alone, _ = train(distributed.data_parallel(loss, update, comm=one), initial_params(0), uneven)
    grads_report, update_report = pyfront.explain(step.value_and_grad), pyfront.explain(step.update)
    report(loss=value, alone_loss=alone_value, difference=max_difference(params, alone),
           interpreted_difference=max_difference(params, interpreted),
           uneven_difference=max_difference(uneven_params, uneven_alone),
           identical=identical_on_every_rank(params),
           grad_compiled=grads_report.compiled_calls, grad_deopts=grads_report.deopts,
           update_compiled=update_report.compiled_calls, resyncs=step.resyncs)


def scenario_diverge() -> None:
    """Rank 1 changes its parameters between steps: the step must warn, resync from rank 0, and go on."""
    import warnings

    step = distributed.data_parallel(loss, update)
    params = initial_params(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, (x, y) in enumerate(batches()):
            if i == 3 and distributed.rank() == 1:
                params = {**params, "b2": params["b2"] + 1e-9}
            params, _ = step(params, x, y)
    report(resyncs=step.resyncs, identical=identical_on_every_rank(params),
           warnings=[str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)])


def scenario_interpreted() -> None:
    """A compiled function that calls allreduce in a loop: it runs in the interpreter, the collectives once each."""
    from mpi4py import MPI

    counting = CountingComm(MPI.COMM_WORLD)
    distributed.set_communicator(counting)

    @pyfront.compile
    def averaged_twice(w, g):
        for _ in range(2):
            g = distributed.allreduce(g)
        return w - 0.5 * g

    w = np.ones(4)
    for _ in range(5):
        w = averaged_twice(w, np.full(4, float(distributed.rank() + 1)))
    explained = pyfront.explain(averaged_twice)
    report(w=w.tolist(), allreduces=counting.counts.get("Iallreduce", 0),
           agreements=counting.counts.get("Iallgather", 0), calls=explained.calls,
           compiled=explained.compiled_calls, explain=str(explained))


def local_step(w, x):
    """A data-parallel step written by hand: the local gradient, its mean over the ranks, the update.
    The branch after the collective reads this rank's shard: rank 1's shard of step 5 holds a value
    below CLAMP, which breaks that part's speculation on rank 1 only."""
    err = x @ w - 1.0
    g = x.T @ err / len(x)
    g = distributed.allreduce(g, op="mean")
    if x.min() < CLAMP:
        g = g * 0.5
    return w - 0.1 * g, 0.5 * np.mean(err ** 2)


def scenario_compiled_parts() -> None:
    """`local_step` compiled: its parts around the allreduce run compiled on every rank, one collective per
    call whatever ran compiled, and every step equals the interpreter's."""
    from mpi4py import MPI

    rng = np.random.default_rng(7 + distributed.rank())
    shards = [rng.standard_normal((6, 4)) for _ in range(STEPS)]
    shards[5][-1, -1] = CLAMP * 2 if distributed.rank() == 1 else 0.0
    w, expected = np.zeros(4), []
    for x in shards:  # the interpreter, first
        w, loss_value = local_step(w, x)
        expected.append((w, loss_value))
    counting = CountingComm(MPI.COMM_WORLD)
    distributed.set_communicator(counting)
    step, w, difference = pyfront.compile(local_step), np.zeros(4), 0.0
    for x, (w_expected, loss_expected) in zip(shards, expected):
        w, loss_value = step(w, x)
        difference = max(difference, float(np.abs(w - w_expected).max()), abs(loss_value - loss_expected))
    explained = pyfront.explain(step)
    parts = [part for _, part in explained.parts if part is not None]
    report(difference=difference, allreduces=counting.counts.get("Iallreduce", 0), calls=explained.calls,
           compiled=explained.compiled_calls, part_compiled=[p.compiled_calls for p in parts],
           part_deopts=[p.deopts for p in parts])


class CountingComm:
    """An mpi4py communicator that counts the calls of each method (and otherwise is the communicator)."""

    def __init__(self, comm):
        self.comm, self.counts = comm, {}

    def __getattr__(self, name):
        self.counts[name] = self.counts.get(name, 0) + 1
        return getattr(self.comm, name)


def scenario_step_raises() -> None:
    """Rank 1's shard holds a NaN at step 3: its loss raises; every rank must raise RankFailed."""
    step = distributed.data_parallel(failing_loss, update)
    try:
        train(step, initial_params(0), batches(nan_step=3))
    except distributed.RankFailed as e:
        report(error=str(e), steps=step.steps)


def scenario_mismatch() -> None:
    """Rank 1 passes w1 with another shape."""
    tree = {"w1": np.zeros((3, 4 + distributed.rank())), "b": [np.ones(2), np.float32(1)]}
    try:
        distributed.allreduce(tree)
    except distributed.MismatchError as e:
        report(error=str(e))


def scenario_uncaught() -> None:
    """Rank 1 raises and does not catch it while rank 0 waits in an allreduce: the job must end."""
    if distributed.rank() == 1:
        raise RuntimeError("rank 1 gives up")
    distributed.allreduce(np.ones(3))
    report(error="rank 0 was not stopped")


def scenario_timeout() -> None:
    """Rank 1 arrives 30 s late; rank 0's 1 s timeout must abort the job."""
    distributed.set_timeout(1.0)
    if distributed.rank() == 1:
        time.sleep(30)
    distributed.allreduce(np.ones(3))
    report(error="not aborted")


if __name__ == "__main__":
    globals()[f"scenario_{sys.argv[1]}"]()
