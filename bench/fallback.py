"""`python -m bench.fallback`: what a call costs when pyfront runs it in the interpreter.

A function that cannot compile (here: `try`) is called through `pyfront.compile` after its
compile failure has been remembered for the function (the same reason for three argument
keys: api.HOPELESS_AFTER), and directly; the overhead per call is the difference of the
medians of `--repeats` runs of `--calls` calls each.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pyfront
from pyfront.api import HOPELESS_AFTER


def uncompilable(x):
    try:
        return x + 1
    except ValueError:
        return x


def _per_call(fn, x, calls: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(x)
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def measure(calls: int = 20000, repeats: int = 7) -> dict:
    compiled = pyfront.compile(uncompilable, profile_calls=1)
    for n in range(2, 2 + 2 * HOPELESS_AFTER):  # profiled, then one failed compile per key
        compiled(np.ones(n))
    x = np.ones(3)
    plain, through = _per_call(uncompilable, x, calls, repeats), _per_call(compiled, x, calls, repeats)
    return {"plain": plain, "pyfront": through, "overhead": through - plain,
            "compilations attempted": sum(len(k) for k in compiled._failed_keys.values())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    opts = parser.parse_args(argv)
    r = measure(opts.calls, opts.repeats)
    print(f"plain call {r['plain'] * 1e6:.2f} us, through pyfront {r['pyfront'] * 1e6:.2f} us: "
          f"overhead {r['overhead'] * 1e6:.2f} us per call ({r['compilations attempted']} compiles attempted)")


if __name__ == "__main__":
    main()
