"""Timing: steady-state time per step as the median and quartiles of single calls.

Each call is timed alone (perf_counter around one call that waits for its
result), after warm-up calls, with the garbage collector paused as timeit does.
Calls repeat until a time budget is spent (at least `min_repeats`, at most
`max_repeats`), so fast programs get many samples and slow ones a few.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Steady:
    median: float  # seconds per step
    p25: float
    p75: float
    repeats: int

    def as_dict(self) -> dict:
        return asdict(self)


def steady_state(call: Callable[[], object], budget_s: float, min_repeats: int = 10,
                 max_repeats: int = 5000, warm_up: int = 3, warmed: Callable[[], object] | None = None) -> Steady:
    """`warmed`: called once between the warm-up calls and the timed ones."""
    for _ in range(warm_up):
        call()
    if warmed is not None:
        warmed()
    times = []
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        deadline = time.perf_counter() + budget_s
        while len(times) < max_repeats and (len(times) < min_repeats or time.perf_counter() < deadline):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    finally:
        if was_enabled:
            gc.enable()
    p25, median, p75 = np.percentile(times, [25, 50, 75])
    return Steady(float(median), float(p25), float(p75), len(times))


def timed(call: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result
