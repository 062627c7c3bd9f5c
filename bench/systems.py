"""The systems under test, each behind the same small interface.

A `System` is created in a worker process after the thread settings are fixed
(bench/threads.py); `setup(cache_dir)` imports the library and points its
on-disk compilation cache (if it has one) into `cache_dir`, so the cold run
starts empty and the warm-start run, a new process on the same directory,
finds what the cold run wrote. `build(program)` returns a fresh compiled
callable (or raises `CannotRun` with the reason), `arguments` turns the NumPy
inputs into what the callable takes (a port's adapter, then `convert`), `run`
calls it and waits for the result, `to_numpy` makes the result comparable
with NumPy's.

`first_result(fn, args)` is the first-call latency: everything up to the first
result produced by the compiled code (pyfront: its profiled interpreter calls
plus the compiling call).
"""

from __future__ import annotations

import os
import re
import time
import types
from collections.abc import Callable
from typing import Any

from bench.program import NotRunnable, Port, Program


class CannotRun(Exception):
    """The system cannot run this program; the message is the reason."""


def _trivial(x):
    return (x * 2.0 + 1.0).sum()


class System:
    name = ""
    has_disk_cache = True
    strict_types = False  # results must have NumPy's exact types and dtypes

    def setup(self, cache_dir: str) -> None:
        pass

    def target(self, program: Program) -> Callable:
        """The function this system compiles: the program's port for it, or the NumPy function."""
        port = program.port_for(self.name)
        if isinstance(port, NotRunnable):
            raise CannotRun(port.reason)
        if isinstance(port, Port):
            return port.fn
        return port if port is not None else program.fn

    def arguments(self, program: Program, inputs: tuple) -> tuple:
        """What `target(program)` is called with for the NumPy function's `inputs`."""
        port = program.port_for(self.name)
        return self.convert(port.adapt(inputs) if isinstance(port, Port) else inputs)

    def build(self, program: Program) -> Callable:
        return self.target(program)

    def convert(self, args: tuple) -> tuple:
        return args

    def run(self, fn: Callable, args: tuple) -> Any:
        return fn(*args)

    def to_numpy(self, result: Any) -> Any:
        return result

    def first_result(self, fn: Callable, args: tuple) -> tuple[float, Any, list[str]]:
        """(seconds to the first compiled result, that result, notes)."""
        start = time.perf_counter()
        result = self.run(fn, args)
        return time.perf_counter() - start, result, []

    def warm_up_library(self) -> float:
        """Compile and run a trivial function once: the library's one-time start-up cost."""
        import numpy as np

        trivial = Program("trivial", "", _trivial, lambda size, rng: (), {})
        fn = self.build(trivial)
        start = time.perf_counter()
        self.first_result(fn, self.convert((np.ones(4, np.float32),)))
        return time.perf_counter() - start

    def reset(self) -> None:
        """Forget in-memory compiled code between sizes (disk caches stay)."""


class NumPy(System):
    name, has_disk_cache, strict_types = "numpy", False, True

    def warm_up_library(self) -> float:
        return 0.0


class Pyfront(System):
    has_disk_cache, strict_types = True, True

    def __init__(self, backend: str):
        self.backend = backend
        self.name = "pyfront" if backend == "cpu" else f"pyfront-{backend}"

    def setup(self, cache_dir: str) -> None:
        os.environ["PYFRONT_CACHE_DIR"] = os.path.join(cache_dir, "pyfront")

    def build(self, program: Program) -> Callable:
        import pyfront

        # The first compiled result is timed from a function prepared as soon as it is profiled;
        # bench/first_steps.py sets PYFRONT_COMPILE_AFTER to time the default (Config.compile_after).
        options = {} if "PYFRONT_COMPILE_AFTER" in os.environ else {"compile_after": 0}
        return pyfront.compile(self.target(program), backend=self.backend, **options)

    def first_result(self, fn, args):
        import pyfront

        start = time.perf_counter()
        for n in range(fn.config.profile_calls + 2):
            result = fn(*args)
            if pyfront.explain(fn).compiled_calls:
                return time.perf_counter() - start, result, []
            if n == fn.config.profile_calls:  # the call that started the compile (in the background)
                pyfront.wait(fn)
        seconds = time.perf_counter() - start
        report = pyfront.explain(fn)
        reasons = "; ".join(sorted(report.interpreter_reasons)) or "no compiled call"
        return seconds, result, [f"ran in the interpreter: {reasons}"]


class Jax(System):
    name = "jax"

    def setup(self, cache_dir: str) -> None:
        import jax

        jax.config.update("jax_platforms", "cpu")
        # NumPy's dtypes: without x64 jax computes a float64 program (the REINFORCE model)
        # in float32; with it, float32 programs stay float32 (their results' dtypes match NumPy's).
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_compilation_cache_dir", os.path.join(cache_dir, "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

    def build(self, program):
        import jax
        import jax.numpy as jnp

        fn = self.target(program)
        if fn is program.fn:  # the minimal port: the same source with `np` bound to jax.numpy
            fn = rebound(fn, {"np": jnp})
        return jax.jit(fn)

    def convert(self, args):
        import jax

        return tuple(jax.device_put(a) for a in args)

    def run(self, fn, args):
        import jax

        return jax.block_until_ready(fn(*args))

    def to_numpy(self, result):
        import jax
        import numpy as np

        return jax.tree_util.tree_map(np.asarray, result)

    def reset(self) -> None:
        import jax

        jax.clear_caches()


def rebound(fn: Callable, overrides: dict, wrap: Callable = lambda f: f) -> Callable:
    """`fn` with its module's functions (helpers it calls) re-created in a copy of its
    globals updated with `overrides`, each passed through `wrap`."""
    namespace = dict(fn.__globals__)
    namespace.update(overrides)
    for name, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
            namespace[name] = wrap(types.FunctionType(value.__code__, namespace, value.__name__,
                                                      value.__defaults__, value.__closure__))
    return namespace[fn.__name__]


class Torch(System):
    name = "torch"

    def setup(self, cache_dir: str) -> None:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_dir, "inductor")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
        import torch  # noqa: F401

    def build(self, program):
        import torch

        return torch.compile(self.target(program))

    def first_result(self, fn, args):
        from torch._dynamo.utils import counters

        breaks_before = sum(counters["graph_break"].values())
        seconds, result, notes = super().first_result(fn, args)
        breaks = sum(counters["graph_break"].values()) - breaks_before
        if breaks:
            notes.append(f"{breaks} graph break(s): parts run in the Python interpreter")
        return seconds, result, notes

    def reset(self) -> None:
        import torch

        torch.compiler.reset()


class Numba(System):
    name = "numba"

    def setup(self, cache_dir: str) -> None:
        # NUMBA_CACHE_DIR is read when numba is imported.
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(cache_dir, "numba")
        os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"
        import numba  # noqa: F401

    def build(self, program):
        import numba

        fn = self.target(program)
        # numba compiles only functions it is given: the helpers the program calls are
        # njit-compiled too (what a numba user writes with @njit on each).
        return rebound(fn, {}, numba.njit(cache=True)) if fn is program.fn else numba.njit(cache=True)(fn)


SYSTEMS: dict[str, Callable[[], System]] = {
    "numpy": NumPy,
    "pyfront": lambda: Pyfront("cpu"),
    "pyfront-cpu-sync": lambda: Pyfront("cpu-sync"),
    "jax": Jax,
    "torch": Torch,
    "numba": Numba,
}
PEERS = ("jax", "torch", "numba")
LABELS = {"numpy": "NumPy", "pyfront": "pyfront (cpu)", "pyfront-cpu-sync": "pyfront (cpu-sync)",
          "jax": "jax.jit", "torch": "torch.compile", "numba": "numba.njit"}
MODULES = {"pyfront": "pyfront", "pyfront-cpu-sync": "pyfront", "jax": "jax", "torch": "torch",
           "numba": "numba"}


_NUMBA_MISSING = re.compile(r"No implementation of function Function\(<[^>]*?(?:function|built-in) "
                            r"(?P<fn>[\w.]+)[^>]*>\) found for signature:\s*>>> (?P<sig>[^\n]+)")


def reason_of(error: BaseException) -> str:
    """A one-line reason a peer could not compile or run a program."""
    text = str(error)
    m = _NUMBA_MISSING.search(text)
    if m:
        return f"numba has no {m['sig'].strip()}"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # numba puts the useful line after a generic "Failed in nopython mode pipeline" header.
    useful = [ln for ln in lines if not ln.startswith(("Failed in ", "During:"))]
    first = (useful or lines or [""])[0]
    reason = f"{type(error).__name__}: {first}"
    return reason if len(reason) <= 160 else reason[:157] + "..."
