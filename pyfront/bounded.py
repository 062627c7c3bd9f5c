"""Bounded tables for per-function bookkeeping that a long-running program feeds forever.

A compiled function sees keys, signatures, guard sites and reasons whose
number depends on its arguments' values (a Python int that changes every call
is a new key every call), so every table kept per function is bounded: it
forgets its least recently written entry (`remember`) or counts new keys under
one overflow entry (`BoundedCounter`). Forgetting only costs work (a failure
compiled again, a counter merged), never a wrong answer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

OTHER = "(other reasons, not listed separately)"


def remember(table: dict, key: Any, value: Any, limit: int) -> None:
    """`table[key] = value`, most recent last; beyond `limit` entries the least recent goes."""
    table.pop(key, None)
    table[key] = value
    if len(table) > limit:
        del table[next(iter(table))]


class BoundedCounter(Counter):
    """A Counter of at most `limit` keys; counts of further new keys go to `OTHER`."""

    def __init__(self, *args: Any, limit: int = 64, **kwargs: Any):
        self.limit = limit
        super().__init__(*args, **kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        if key not in self and len(self) >= self.limit - 1 and key != OTHER:
            key, value = OTHER, self.get(OTHER, 0) + value
        super().__setitem__(key, value)
