"""Data-parallel training over MPI: `pyfront.distributed.data_parallel(loss, update)`.

    step = distributed.data_parallel(loss, update)   # loss(params, *batch) -> mean loss over the batch
    for x, y in batches:                              # every rank passes the same global batch
        params, value = step(params, x, y)            # update(params, grads) -> new params

The step contract keeps the heavy work compiled and the communication on the
host, between two compiled calls, which today's runtime runs soundly:

1. `pyfront.compile(pyfront.value_and_grad(loss))` on this rank's shard of
   the batch: every batch argument is split along axis 0 into `size()`
   contiguous blocks (the first `n % size` ranks get one row more), and rank r
   takes block r;
2. one agreement allgather (distributed.agree: status, tree signature, and a
   digest of the parameters) and one bucketed allreduce of (loss, gradients):
   each rank weights its shard's mean by its share of the rows and the ranks
   sum, giving the mean over the global batch (for equal shards, exactly the
   mean of the shard means);
3. `pyfront.compile(update)(params, grads)` with the same averaged gradients
   on every rank.

`params` is a tree (dict, list, tuple) of float arrays; `update` may be an
object with state (momentum buffers as attributes) and a `__call__`.

Guarantees:
* On the first call, rank 0's parameters are broadcast to every rank (their
  structure, dtypes and shapes must agree, else `MismatchError` on every
  rank naming the rank and the path), as Horovod's broadcast_parameters does.
* Every step checks that the parameters it is given are bitwise identical on
  every rank (their digest rides in the agreement record, no extra message).
  They are, as long as each rank ran the same code on the same values; a rank
  whose call ran in the interpreter while the others ran compiled code may
  round differently. Then rank 0's parameters are broadcast again, the step
  is recomputed from them, `resyncs` counts it and a RuntimeWarning says so.
  State that `update` keeps itself (momentum buffers) is neither checked nor
  resynchronized; the parameters a step returns are checked by the next step.
* An exception in a rank's local part (the gradient call, a bad batch) does
  not strand the others in the allreduce: every rank raises the same
  `RankFailed` naming the rank and its error.
* The number and order of collectives per step is the same on every rank
  whatever ran compiled or interpreted: they are issued here, on the host.
"""

from __future__ import annotations

import hashlib
import warnings
from typing import Any

import numpy as np

from pyfront import distributed
from pyfront.array_trees import as_array, flatten, like, rebuild


def shard_bounds(rows: int, ranks: int, rank: int) -> tuple[int, int]:
    """The rows `[start, stop)` of rank `rank` when `rows` are split into `ranks` contiguous blocks."""
    base, extra = divmod(rows, ranks)
    start = rank * base + min(rank, extra)
    return start, start + base + (rank < extra)


_DIGEST_BYTES = 16


def _params_digest(params: Any) -> bytes:
    digest = hashlib.blake2b(digest_size=_DIGEST_BYTES)
    for path, leaf in flatten(params):
        array = np.ascontiguousarray(as_array(leaf))
        digest.update(f"{path}:{array.dtype.str}:{array.shape};".encode())
        digest.update(array.data)
    return digest.digest()


class DataParallel:
    """A training step that shards the batch over the ranks and averages the gradients (module docstring)."""

    def __init__(self, loss: Any, update: Any, *, comm: Any = None, compile: bool = True, **options: Any):
        """`options` are `pyfront.compile`'s (`backend="cpu-sync"` suits one process per core)."""
        import pyfront

        self.comm = comm
        self.value_and_grad = pyfront.value_and_grad(loss)
        self.update = update
        if compile:
            # Every rank switches to compiled code at the same step (a rank still interpreting
            # while the others run compiled code may round differently: a resync).
            options.setdefault("wait_for_compile", "always")
            self.value_and_grad = pyfront.compile(self.value_and_grad, **options)
            self.update = pyfront.compile(update, **options)
        self.steps = 0
        self.resyncs = 0
        self._synced = False

    def __call__(self, params: Any, *batch: Any) -> tuple[Any, Any]:
        """One step on the global `batch`: `(new params, the loss over the global batch)`."""
        comm = distributed.communicator(self.comm)
        if not self._synced:
            params = distributed.broadcast(params, root=0, comm=comm)
            self._synced = True
        what = "pyfront.distributed.data_parallel step"
        while True:
            tree, leaves, weight, digest, error = self._local_part(comm, params, batch)
            signature = None if error is not None else distributed.tree_signature(leaves, "data_parallel")
            digests = distributed.agree(comm, what, signature, error, extra=digest)
            if all(d == digests[0] for d in digests):
                break
            # Every rank sees the same digests, so every rank broadcasts and recomputes.
            differing = [r for r, d in enumerate(digests) if d != digests[0]]
            warnings.warn(f"{what}: the parameters of rank(s) {differing} differ from rank 0's; rank 0's are "
                          f"broadcast to every rank and the step is recomputed", RuntimeWarning, stacklevel=2)
            params = distributed.broadcast(params, root=0, comm=comm)
            self.resyncs += 1
        arrays = [as_array(leaf) * weight for _, leaf in leaves]
        reduced = distributed.reduce_leaves(comm, arrays, "sum", what)
        loss, grads = rebuild(tree, [like(leaf, r) for (_, leaf), r in zip(leaves, reduced)])
        self.steps += 1
        return self.update(params, grads), loss

    def _local_part(self, comm: Any, params: Any, batch: tuple) -> tuple[Any, list, float, bytes, str | None]:
        """This rank's `(loss, grads)` on its shard, their leaves, its weight and the parameters' digest; or
        the error that stopped it (with a zero digest)."""
        try:
            ranks, rank = comm.Get_size(), comm.Get_rank()
            rows = {len(b) for b in batch}
            if len(rows) != 1:
                raise ValueError(f"the batch arguments have different numbers of rows: {sorted(rows)}")
            (total,) = rows
            if total < ranks:
                raise ValueError(f"a batch of {total} rows cannot be split over {ranks} ranks")
            start, stop = shard_bounds(total, ranks, rank)
            tree = self.value_and_grad(params, *(b[start:stop] for b in batch))
            leaves = flatten(tree)
            for path, leaf in leaves:
                distributed.check_transportable(f"(loss, gradients){path}", as_array(leaf).dtype)
            return tree, leaves, (stop - start) / total, _params_digest(params), None
        except Exception as e:  # noqa: BLE001 - reported to every rank by agree(), raised there as RankFailed
            return None, [], 0.0, bytes(_DIGEST_BYTES), f"{type(e).__name__}: {e}"
