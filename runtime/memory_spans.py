"""A set of address ranges that answers "does [start, end) overlap any of them?" in O(log n).

The compiled-call path (runtime/iree_backend.py) makes a result device-resident
only if its memory overlaps no memory the caller can already see (the call's
resident inputs and the results made resident before it). A call of a model
step has dozens of such ranges, and testing each new one against every
earlier one cost O(n^2) per call. Here the ranges are kept merged (any two
that overlap become their union) and sorted by start, so the stored ranges are
disjoint and only the two neighbours of a query's insertion point can overlap
it. Ranges are half-open and non-empty (start < end: the callers' arrays have
bytes); ranges that merely touch do not overlap (as `s1 < e2 and s2 < e1`,
the test this replaces). `all_disjoint` is the sweep that lets the call path
skip the set altogether when nothing overlaps.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from operator import le


def all_disjoint(spans: list[tuple[int, int]]) -> bool:
    """Whether no two of `spans` overlap.

    Starts and ends are sorted apart (ints sort much faster than tuples): the
    spans are disjoint exactly when each end, in order, is at most the next
    start (then no address lies in two spans: at any address, the spans begun
    exceed the spans ended by at most one).
    """
    if len(spans) < 2:
        return True
    starts, ends = map(sorted, zip(*spans))
    return all(map(le, ends, starts[1:]))


class MemorySpans:
    """Disjoint, sorted half-open address ranges; `add` merges, `overlaps` tests."""

    __slots__ = ("_ends", "_starts")

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in spans:
            self.add(start, end)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether [start, end) shares an address with a stored range."""
        i = bisect_right(self._starts, start)
        # The range starting at or before `start`, and the first one starting after it.
        return (i > 0 and self._ends[i - 1] > start) or (i < len(self._starts) and self._starts[i] < end)

    def add(self, start: int, end: int) -> None:
        """Store [start, end), merged with the stored ranges it overlaps."""
        starts, ends = self._starts, self._ends
        lo = bisect_right(starts, start)
        if lo > 0 and ends[lo - 1] > start:  # the range before overlaps: merge from it
            lo -= 1
        hi = lo
        while hi < len(starts) and starts[hi] < end:  # every later range starting inside [start, end)
            hi += 1
        if hi > lo:
            start, end = min(start, starts[lo]), max(end, ends[hi - 1])
        starts[lo:hi] = [start]
        ends[lo:hi] = [end]
