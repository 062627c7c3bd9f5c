"""pyfront's benchmarks against NumPy, jax.jit, torch.compile and numba.njit.

    python -m bench            # every program, every system (about 15 minutes on 2 cores)
    python -m bench --quick    # smallest size of each program, few repeats (a smoke test)
    python -m bench --help

Importing this package imports nothing heavy: the workers (bench/worker.py)
must fix the thread settings before NumPy, torch or jax are loaded.
"""
