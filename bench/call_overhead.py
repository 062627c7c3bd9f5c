"""Per-call overhead of a compiled call: a trivial function, compiled, against the bare IREE call.

    python -m bench.call_overhead [--rounds 21] [--calls 2000] [--backends cpu-sync,cpu] [--size 8]
                                  [--threads 1] [--json out.json]

`x + 1.0` on a small float32 array, compiled by pyfront; then the same
variant's IREE function called four ways, each timed as the median over
`--rounds` rounds of `--calls` calls (rounds of the ways interleave, so a
noisy neighbour slows all of them alike):

- NumPy: `x + 1.0` in the interpreter;
- bare VM call: `VmContext.invoke` of the variant's function on an argument
  list built once (IREE's own floor: no upload, no result read);
- iree.runtime: the same module through `iree.runtime`'s own function
  invoker (uploads the argument, copies the result to the host);
- pyfront: the compiled function, as user code calls it (dispatch, entry
  guards, upload, call, guard flags, results).

The table gives each time and its ratio to the bare VM call: issue 14's
target is pyfront <= 2x. `python -m bench` runs this in a fresh process with
its thread settings (bench/threads.py) and reports it as the "Trivial call
overhead" table (bench/report.py); `--json` writes the medians for it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

WAYS = ("numpy", "bare VM call", "iree.runtime", "pyfront")


def add_one(x):
    return x + 1.0


def _the_variant(compiled):
    """The one variant pyfront compiled for `compiled` (its IREE function is what we time bare)."""
    (variant,) = [v for group in compiled._groups.values() for v in group.variants]
    return variant


def calls(backend: str, x) -> dict[str, Callable[[], object]]:
    """One zero-argument callable per way of making the trivial call on `backend` (`x`: the array)."""
    from iree import runtime as ireert

    import pyfront

    # (keep_faster off: the compiled call is what is timed, though the interpreter is faster here.)
    compiled = pyfront.compile(add_one, backend=backend, wait_for_compile="always", keep_faster=False)
    for _ in range(compiled.config.profile_calls + 2):
        compiled(x)
    if not pyfront.explain(compiled).compiled_calls:
        raise RuntimeError(f"add_one did not compile on {backend!r}: {pyfront.explain(compiled)}")
    function = _the_variant(compiled).invoke
    module = function._module
    runtime, context, vm_function = module._rt, module._contexts[0], function._vm_function
    buffer = runtime.allocator.allocate_buffer_copy(int(ireert.MemoryType.DEVICE_LOCAL),
                                                    int(ireert.BufferUsage.DEFAULT), runtime.device, x,
                                                    ireert.HalElementType.FLOAT_32)
    arguments = ireert.VmVariantList(1)
    arguments.push_ref(buffer.ref)
    n_results = function.n_results

    def bare():
        context.invoke(vm_function, arguments, ireert.VmVariantList(n_results))

    config = ireert.Config(device=runtime.device)
    invoker = ireert.load_vm_module(ireert.VmModule.copy_buffer(config.vm_instance, module._vmfb), config)
    through_iree = invoker[function.name]

    def iree_runtime():
        return through_iree(x)[0].to_host()

    return {"numpy": lambda: add_one(x), "bare VM call": bare, "iree.runtime": iree_runtime,
            "pyfront": lambda: compiled(x)}


def medians(ways: dict[str, Callable[[], object]], rounds: int, n: int) -> dict[str, float]:
    """Median seconds per call of each way, rounds interleaved."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, call in ways.items():
            start = time.perf_counter()
            for _ in range(n):
                call()
            times[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(t) for name, t in times.items()}


def measure(backend: str, rounds: int = 21, n: int = 2000, size: int = 8) -> dict[str, float]:
    """Median seconds per trivial call of each of WAYS on `backend`."""
    import numpy as np

    return medians(calls(backend, np.ones(size, np.float32)), rounds, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--backends", default="cpu-sync,cpu")
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="as python -m bench sets them (bench/threads.py)")
    parser.add_argument("--json", help="also write {backend: {way: median seconds}} here")
    opts = parser.parse_args()
    from bench import threads

    threads.configure_env(opts.threads)  # before NumPy loads
    threads.configure_loaded("pyfront", opts.threads)
    measured = {}
    print(f"x + 1.0 on float32[{opts.size}]: median of {opts.rounds} rounds x {opts.calls} calls; "
          "ratio to the bare VM call")
    print(f"{'backend':<10}" + "".join(f"{w:>22}" for w in WAYS))
    for backend in opts.backends.split(","):
        t = measured[backend] = measure(backend, opts.rounds, opts.calls, opts.size)
        bare = t["bare VM call"]
        print(f"{backend:<10}" + "".join(f"{t[w] * 1e6:>10.2f} us ({t[w] / bare:5.2f}x)" for w in WAYS))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"size": opts.size, "rounds": opts.rounds, "calls": opts.calls, "medians": measured}, f)


if __name__ == "__main__":
    main()
