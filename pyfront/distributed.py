"""Collectives over MPI (through mpi4py) on trees of NumPy arrays, with a failure policy that never hangs.

    from pyfront import distributed
    grads = distributed.allreduce(grads)            # the mean over every rank, same tree back
    params = distributed.broadcast(params, root=0)  # rank 0's values everywhere
    distributed.rank(), distributed.size()

The communicator is mpi4py's `COMM_WORLD` unless `set_communicator(comm)`
chose another (or a call passes `comm=`). mpi4py and an MPI library come with
`pip install 'pyfront[distributed]'` (the mpi4py and mpich wheels); programs
run under `mpiexec -n N python program.py`. Without mpiexec a program is one
rank of one, and every collective is the identity.

What a call guarantees:

* One message per dtype: the tree's leaves are packed into one contiguous
  buffer per dtype (in tree order), and each buffer is one MPI collective
  (nonblocking ones, all posted before the wait); never one message per array.
* Agreement first: before the data moves, every rank contributes a 33-byte
  record (a status byte and a digest of its tree's paths, dtypes and shapes,
  and of the operation) to one allgather. When they all match, the data
  collectives follow. When any rank's tree differs, every rank gathers the
  full descriptions and raises the same `MismatchError`, naming the rank and
  the path (`rank 1 passes ['w1'] as float64 (3, 4), rank 0 as float64 (4,
  4)`); when a rank could not form its tree (a leaf that is not an array, a
  dtype MPI cannot add), every rank raises the same `RankFailed` naming it.
  So a mismatch is an exception on every rank, never a hang or a garbled sum.
  (Arguments that are wrong whatever the tree, an unknown `op` or a `root`
  outside the communicator, raise ValueError at once, before any message.)
* The sum is MPI's; `op="mean"` divides it by the number of ranks on the
  host, in NumPy. Every rank gets the same bits: the MPI standard advises it
  for built-in operations and MPICH's algorithms give it (with 2 ranks the
  sum is a + b on both); data_parallel checks its parameters every step all
  the same. Leaves come back as the type they went in (array, NumPy scalar,
  float); arrays are views into one fresh array per dtype (MPI itself sends
  and receives through a buffer reused from call to call, which it moves
  several times faster).

Failure policy (docs/distributed.md): a rank that raises while the others
wait in a collective would leave them waiting forever, so
* importing this module installs an uncaught-exception hook: when a rank of a
  multi-rank job dies of an exception other than a `DistributedError` (which
  every rank raises alike, so none is left waiting), the hook prints the
  traceback, then a line naming the rank, and calls `MPI_Abort` on
  `COMM_WORLD`, which ends every rank of the job (mpiexec exits non-zero);
* `set_timeout(seconds)` (or `PYFRONT_MPI_TIMEOUT`) bounds
  every wait: a collective that some rank does not reach in time (a rank
  stuck in a loop, or one that caught an exception and went on) aborts the
  job the same way, naming the collective and the rank that gave up;
* `data_parallel` (pyfront/data_parallel.py) catches an exception of the
  local step and reports it through the agreement record, so every rank
  raises the same `RankFailed` naming the failed rank and its error.

Inside a `pyfront.compile`d function, a top-level statement that calls
`allreduce` or `broadcast` splits the function into parts compiled on their
own, with the statement run in the interpreter between them
(pyfront/segments.py): every rank issues each collective exactly once per
call, whichever parts ran compiled. A collective anywhere else (in a loop or
branch) keeps the call in the interpreter (`explain` names it), which also
issues it once. `rank()` and `size()` are not compile-time constants
either: a compiled module is shared between processes through the disk cache.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from pyfront.array_trees import as_array, flatten, like, rebuild
from pyfront.errors import INTERPRETED_ATTRIBUTE
from pyfront.segments import COLLECTIVE_ATTRIBUTE

TIMEOUT_ENV = "PYFRONT_MPI_TIMEOUT"
# Dtypes MPI reduces natively (mpi4py's buffer typecodes): ints, uints, float32/64, complex64/128.
_MPI_DTYPE_CHARS = "bhilqBHILQfdFD"
_DIGEST_BYTES = 16
_ABORT_GRACE_SECONDS = 0.5
_SPIN_SECONDS = 1e-3
_FROM_ENV = object()


class DistributedError(RuntimeError):
    """Raised alike on every rank of the communicator, so no rank is left waiting for another."""


class MismatchError(DistributedError, ValueError):
    """The ranks passed trees that differ in structure, dtype or shape (or the operation)."""


class RankFailed(DistributedError):
    """A rank's own part of a collective step raised; every rank raises this, naming it."""


def _collective(fn):
    setattr(fn, INTERPRETED_ATTRIBUTE,
            f"pyfront.distributed.{fn.__name__} talks to the other MPI ranks and runs in the interpreter "
            f"(collectives are not compiled yet)")
    return fn


def _communicates(fn):
    """A collective that talks to the other ranks: a statement calling it splits a compiled function
    (pyfront/segments.py)."""
    setattr(fn, COLLECTIVE_ATTRIBUTE, True)
    return _collective(fn)


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("pyfront.distributed needs mpi4py and an MPI library: "
                          "pip install 'pyfront[distributed]'") from e
    return MPI


class _Settings:
    comm: Any = None  # None: mpi4py's COMM_WORLD
    timeout: Any = _FROM_ENV


def set_communicator(comm: Any) -> None:
    """Use `comm` (an mpi4py communicator; None: COMM_WORLD) for collectives called without `comm=`."""
    _Settings.comm = comm


def communicator(comm: Any = None) -> Any:
    """`comm`, else the one `set_communicator` chose, else COMM_WORLD."""
    if comm is not None:
        return comm
    return _Settings.comm if _Settings.comm is not None else _mpi().COMM_WORLD


def set_timeout(seconds: float | None) -> None:
    """Bound every wait of every collective by `seconds` (None: wait as long as MPI does); past it the
    job is aborted (see the module docstring). Until this is called, `PYFRONT_MPI_TIMEOUT` decides."""
    _Settings.timeout = None if seconds is None else float(seconds)


def timeout() -> float | None:
    """The bound on every wait of a collective, in seconds, or None."""
    if _Settings.timeout is _FROM_ENV:
        value = os.environ.get(TIMEOUT_ENV, "").strip()
        return float(value) if value else None
    return _Settings.timeout


@_collective
def rank(comm: Any = None) -> int:
    """This process's rank in the communicator."""
    return communicator(comm).Get_rank()


@_collective
def size(comm: Any = None) -> int:
    """The number of ranks in the communicator."""
    return communicator(comm).Get_size()


# Agreement --------------------------------------------------------------------------------------------------


def tree_signature(leaves: list[tuple[str, Any]], operation: str) -> tuple:
    """What every rank's tree must share: the operation, and each leaf's path, dtype and shape."""
    return (operation,) + tuple((path, as_array(leaf).dtype.str, as_array(leaf).shape) for path, leaf in leaves)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=_DIGEST_BYTES).digest()


def agree(comm: Any, what: str, signature: tuple | None, error: str | None, extra: bytes = b"") -> list[bytes]:
    """One allgather of a status, a digest of `signature` and `extra`; raise alike on every rank unless all agree.

    `error` (a description, with `signature` None) says this rank cannot take
    part; any such rank makes every rank raise `RankFailed`. Differing
    signatures make every rank raise `MismatchError`. Returns every rank's
    `extra`, in rank order.
    """
    record = np.frombuffer(bytes([error is not None]) + _digest(repr(signature) if error is None else error)
                           + extra, np.uint8)
    gathered = np.empty((comm.Get_size(), record.size), np.uint8)
    complete(comm, what, "Allgather", [((record, gathered), {})])
    failed = gathered[:, 0].any()
    if not failed and (gathered[:, 1:1 + _DIGEST_BYTES] == gathered[0, 1:1 + _DIGEST_BYTES]).all():
        return [row[1 + _DIGEST_BYTES:].tobytes() for row in gathered]
    # Every rank saw the same records, so every rank takes this branch and the blocking allgather below.
    details = comm.allgather((signature, error))
    failures = [f"rank {r}: {err}" for r, (_, err) in enumerate(details) if err is not None]
    if failures:
        raise RankFailed(f"{what} failed on {'; '.join(failures)}")
    raise MismatchError(f"{what}: {_describe_mismatch([sig for sig, _ in details])}")


def _describe_mismatch(signatures: list[tuple]) -> str:
    """The first way some rank's signature differs from rank 0's, in words."""
    reference = signatures[0]
    for r, sig in enumerate(signatures[1:], start=1):
        if sig == reference:
            continue
        if sig[0] != reference[0]:
            return f"rank {r} calls it as {sig[0]}, rank 0 as {reference[0]}"
        mine, theirs = dict((p, (d, s)) for p, d, s in sig[1:]), dict((p, (d, s)) for p, d, s in reference[1:])
        for path, dtype, shape in reference[1:]:
            if path not in mine:
                return f"rank {r} passes no {path or 'argument'}, rank 0 passes {_leaf(dtype, shape)}"
            if mine[path] != (dtype, shape):
                return (f"rank {r} passes {path or 'the argument'} as {_leaf(*mine[path])}, "
                        f"rank 0 as {_leaf(dtype, shape)}")
        extra = [p for p, _, _ in sig[1:] if p not in theirs]
        if extra:
            return f"rank {r} passes {extra[0]}, which rank 0 does not"
        return f"rank {r} passes the leaves in another order than rank 0"
    raise AssertionError("no signature differs")


def _leaf(dtype: str, shape: tuple) -> str:
    return f"{np.dtype(dtype).name} {shape}"


# Packing ----------------------------------------------------------------------------------------------------


def _buckets(arrays: list[np.ndarray]) -> list[list[int]]:
    """The indexes of `arrays` grouped by dtype, groups in order of first appearance."""
    groups: dict[np.dtype, list[int]] = {}
    for i, a in enumerate(arrays):
        groups.setdefault(a.dtype, []).append(i)
    return list(groups.values())


# Per thread and dtype, the buffer that collectives last sent and received through. MPI moves a
# buffer it has seen before much faster: MPICH took 7.6 ms for 2 MiB in a fresh buffer on every call
# and 0.8 ms in a reused one (shared-memory transfers cache the mapping of the buffer's pages).
_staging = threading.local()


def _staging_buffer(dtype: np.dtype, size: int) -> np.ndarray:
    """This thread's reused buffer of `size` elements of `dtype` (reallocated when the size changes)."""
    buffers = _staging.__dict__.setdefault("buffers", {})
    buffer = buffers.get(dtype)
    if buffer is None or buffer.size != size:
        buffer = buffers[dtype] = np.empty(size, dtype)
    return buffer


def _pack(arrays: list[np.ndarray], group: list[int], fill: bool) -> np.ndarray:
    """The staging buffer for `group`, holding the arrays' elements in order if `fill`."""
    buffer = _staging_buffer(arrays[group[0]].dtype, sum(arrays[i].size for i in group))
    if fill:
        offset = 0
        for i in group:
            buffer[offset:offset + arrays[i].size] = arrays[i].ravel()
            offset += arrays[i].size
    return buffer


def _unpack(received: np.ndarray, arrays: list[np.ndarray], group: list[int], out: list) -> None:
    """Views, shaped like `arrays`, into `received` (a fresh array: the staging buffer is reused)."""
    offset = 0
    for i in group:
        out[i] = received[offset:offset + arrays[i].size].reshape(arrays[i].shape)
        offset += arrays[i].size


def _prepare(tree: Any, operation: str, check_dtype) -> tuple[list, tuple | None, str | None]:
    """The leaves and signature of `tree`, or the error that keeps this rank out of the collective."""
    try:
        leaves = flatten(tree)
        for path, leaf in leaves:
            check_dtype(path or "the argument", as_array(leaf).dtype)
        return leaves, tree_signature(leaves, operation), None
    except (TypeError, ValueError) as e:
        return [], None, f"{type(e).__name__}: {e}"


def check_transportable(path: str, dtype: np.dtype) -> None:
    if not dtype.isnative:
        raise TypeError(f"{path} has dtype {dtype.str}, not in this machine's byte order (MPI would add its "
                        f"bytes as native numbers)")
    if dtype.char not in _MPI_DTYPE_CHARS:
        raise TypeError(f"{path} has dtype {dtype.name}, which MPI does not reduce (use an int, float32/64 or "
                        f"complex dtype)")


def complete(comm: Any, what: str, name: str, calls: list[tuple]) -> None:
    """Run the collective `name` (Allgather, Allreduce, Bcast) once per argument tuple of `calls`.

    Always as MPI's nonblocking collectives (Iallgather, ...), all posted, then
    waited for: a blocking collective on one rank does not match a nonblocking
    one on another, so a rank that set a timeout and one that did not must
    still issue the same calls. Without a timeout the wait is MPI's Waitall;
    with one the requests are polled, and past the timeout the job is aborted
    (an MPI collective cannot be cancelled).
    """
    MPI = _mpi()
    requests = [getattr(comm, "I" + name.lower())(*args, **kwargs) for args, kwargs in calls]
    seconds = timeout()
    if seconds is None:
        MPI.Request.Waitall(requests)
        return
    start = time.monotonic()
    pause = 0.0
    while not MPI.Request.Testall(requests):
        waited = time.monotonic() - start
        if waited > seconds:
            abort(f"{what} waited {seconds:g}s on rank {comm.Get_rank()} for a rank that did not reach it")
        if waited > _SPIN_SECONDS:  # collectives usually complete in microseconds: poll, then back off
            time.sleep(pause)
            pause = min(2 * pause or 1e-5, 1e-3)


def abort(message: str) -> None:
    """Print `message` (naming this rank) and end every rank of the job with MPI_Abort."""
    MPI = _mpi()
    sys.stderr.write(f"pyfront.distributed: {message}; aborting every rank (MPI_Abort)\n")
    sys.stderr.flush()
    # mpiexec forwards a rank's output through a pipe that MPI_Abort's teardown can close before it is
    # drained (MPICH's hydra lost this line about one time in ten): give it a moment to forward the reason.
    time.sleep(_ABORT_GRACE_SECONDS)
    MPI.COMM_WORLD.Abort(1)


def reduce_leaves(comm: Any, arrays: list[np.ndarray], op: str, what: str) -> list[np.ndarray]:
    """Sum (or mean) `arrays` over the ranks: one allreduce per dtype bucket. The ranks have agreed already."""
    MPI = _mpi()
    out: list = [None] * len(arrays)
    buckets = [(group, _pack(arrays, group, fill=True)) for group in _buckets(arrays)]
    complete(comm, what, "Allreduce", [((MPI.IN_PLACE, buffer), {"op": MPI.SUM}) for _, buffer in buckets])
    for group, buffer in buckets:
        _unpack(buffer / comm.Get_size() if op == "mean" else buffer.copy(), arrays, group, out)
    return out


@_communicates
def allreduce(tree: Any, op: str = "mean", *, comm: Any = None) -> Any:
    """The elementwise sum or mean of `tree` over every rank, as a tree of the same structure and types.

    `op="mean"` needs float (or complex) leaves; `op="sum"` also takes ints.
    """
    if op not in ("mean", "sum"):
        raise ValueError(f"allreduce: op must be 'mean' or 'sum', got {op!r}")
    comm = communicator(comm)
    what = f"pyfront.distributed.allreduce(op={op!r})"

    def check_dtype(path: str, dtype: np.dtype) -> None:
        check_transportable(path, dtype)
        if op == "mean" and dtype.kind not in "fc":
            raise TypeError(f"{path} has dtype {dtype.name}: op='mean' needs float leaves (use op='sum')")

    leaves, signature, error = _prepare(tree, f"allreduce(op={op!r})", check_dtype)
    agree(comm, what, signature, error)
    arrays = [as_array(leaf) for _, leaf in leaves]
    reduced = reduce_leaves(comm, arrays, op, what)
    return rebuild(tree, [like(leaf, r) for (_, leaf), r in zip(leaves, reduced)])


@_communicates
def broadcast(tree: Any, root: int = 0, *, comm: Any = None) -> Any:
    """`root`'s values of `tree` on every rank; every rank passes a tree of the same structure, dtypes, shapes."""
    comm = communicator(comm)
    what = f"pyfront.distributed.broadcast(root={root})"
    if not 0 <= root < comm.Get_size():
        raise ValueError(f"broadcast: root {root} is not a rank of a communicator of size {comm.Get_size()}")
    leaves, signature, error = _prepare(tree, f"broadcast(root={root})", check_transportable)
    agree(comm, what, signature, error)
    arrays = [as_array(leaf) for _, leaf in leaves]
    out: list = [None] * len(arrays)
    mine = comm.Get_rank() == root
    buckets = [(group, _pack(arrays, group, fill=mine)) for group in _buckets(arrays)]
    complete(comm, what, "Bcast", [((buffer,), {"root": root}) for _, buffer in buckets])
    for group, buffer in buckets:
        _unpack(buffer.copy(), arrays, group, out)
    return rebuild(tree, [like(leaf, r) for (_, leaf), r in zip(leaves, out)])


def data_parallel(loss: Any, update: Any, *, comm: Any = None, compile: bool = True, **options: Any) -> Any:
    """A data-parallel training step `step(params, *batch) -> (params, loss)`: pyfront/data_parallel.py."""
    from pyfront.data_parallel import DataParallel  # imported here: it imports this module

    return DataParallel(loss, update, comm=comm, compile=compile, **options)


# The uncaught-exception hook --------------------------------------------------------------------------------


def _abort_on_uncaught(previous):
    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        MPI = sys.modules.get("mpi4py.MPI")
        if (MPI is None or isinstance(value, DistributedError) or not MPI.Is_initialized()
                or MPI.Is_finalized() or MPI.COMM_WORLD.Get_size() == 1):
            return
        abort(f"rank {MPI.COMM_WORLD.Get_rank()} raised {kind.__name__} and did not catch it")

    return hook


sys.excepthook = _abort_on_uncaught(sys.excepthook)
