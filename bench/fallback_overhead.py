"""Per-call overhead of a compiled function that runs in the interpreter.

    python bench/fallback_overhead.py [--calls N]

Functions that never compile (one of two lambdas on a line: its source cannot
be told apart; a function with *args) are remembered as such after one attempt,
and one with an unsupported statement after failing the same way for three
argument keys (CompiledFunction._never_compiles), so each later call pays only
the dispatch to the interpreter. This prints the median time per call of the plain function
and of its compiled wrapper, and their difference: the fallback's overhead.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import pyfront


def _median_seconds_per_call(fn, arg, calls: int, rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn(arg)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    calls = parser.parse_args().calls

    def star(x, *rest):
        return x + 1.0

    def with_try(x):
        try:
            return x + 1.0
        except ValueError:
            return x

    cases = {"lambda (2 on a line)": (lambda x: x - 1.0, lambda x: x + 1.0)[1], "*args": star,
             "try (3 keys failed)": with_try}
    arg = np.float64(1.0)
    print(f"{'function':<22}{'plain':>12}{'compiled':>12}{'overhead':>12}")
    for name, fn in cases.items():
        compiled = pyfront.compile(fn, profile_calls=1)
        for n in range(5):  # the first calls: profiled, one compile attempt
            compiled(np.ones(n + 1))
        plain_s = _median_seconds_per_call(fn, arg, calls)
        compiled_s = _median_seconds_per_call(compiled, arg, calls)
        print(f"{name:<22}{plain_s * 1e6:>10.2f}us{compiled_s * 1e6:>10.2f}us{(compiled_s - plain_s) * 1e6:>10.2f}us")


if __name__ == "__main__":
    main()
