"""Thread settings, fixed the same way for every system so the comparison is fair.

`configure_env(n)` must run before NumPy, torch, jax or numba is imported (the
BLAS and OpenMP pools read these variables when they load); `configure_loaded(n)`
covers what can only be set through a library's API. `describe(n)` is the
sentence the report prints.
"""

from __future__ import annotations

import os

_POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def configure_env(n: int) -> None:
    for name in _POOL_VARIABLES:
        os.environ[name] = str(n)
    os.environ["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={n}"


def configure_loaded(system: str, n: int) -> None:
    """Thread settings that exist only as library calls, for the system about to run."""
    if system.startswith("pyfront"):
        # IREE's local-task driver reads its worker topology when pyfront creates the
        # device (first compile), so the flag must be parsed before that.
        import iree.runtime

        iree.runtime.flags.parse_flags(f"--task_topology_group_count={n}")
    elif system == "torch":
        import torch

        torch.set_num_threads(n)
        torch.set_num_interop_threads(1)


def describe(n: int) -> str:
    return (f"{n} threads for every system: {', '.join(f'{v}={n}' for v in _POOL_VARIABLES)} "
            f"(NumPy's BLAS, torch/inductor OpenMP), torch.set_num_threads({n}), "
            f"XLA intra_op_parallelism_threads={n}, IREE --task_topology_group_count={n} "
            "(pyfront 'cpu'); pyfront 'cpu-sync' and numba.njit run their own code on the "
            "calling thread (numba's np.dot calls BLAS)")
