"""When a compiled function may compile another variant, and which variant it evicts.

Policy (docs/compile.md, "How many variants"):
- a function keeps at most `max_variants` live variants, all keys together;
- its first `2 * max_variants` compile attempts (failed ones included) happen
  on a key's first miss, as long as a variant slot is free;
- after that, a key compiles only once it has missed `threshold` times (calls
  with that key that found no variant), and if every slot is taken the least
  recently used variant (the one whose last compiled call is oldest) is evicted
  to make room. `threshold` starts at `FIRST_THRESHOLD` and doubles each time a
  key compiles again after its own variant was evicted: a function cycling
  through more keys than `max_variants` (the worst case for LRU) then compiles
  a number of times that grows with the logarithm of its calls, not with them;
  a key that changes every call (a counter passed as a Python int) never
  reaches the threshold and runs in the interpreter, compiling nothing.
Guarantees: the miss counts and the evicted keys are bounded tables
(bounded.remember), so nothing here grows with the number of distinct keys.
Not thread-safe by itself: the compiled function calls it under its lock.
"""

from __future__ import annotations

from typing import Any

from pyfront.bounded import remember

FIRST_THRESHOLD = 2
MAX_THRESHOLD = 1 << 20
TRACKED_PER_VARIANT = 8  # keys whose misses (or eviction) are remembered, per variant slot


class VariantBudget:
    """Admission of compilations and choice of evictions for one compiled function."""

    def __init__(self, max_variants: int):
        self.max_variants = max_variants
        self.attempts = 0  # compilations started (successful or not)
        self.evictions = 0
        self.threshold = FIRST_THRESHOLD
        self._limit = TRACKED_PER_VARIANT * max_variants
        self._misses: dict[Any, int] = {}  # key -> calls that found no variant, since the free attempts ran out
        self._evicted: dict[Any, None] = {}  # keys whose variant was evicted

    def admit(self, key: Any, live: int) -> tuple[bool, bool, str | None]:
        """Whether `key` may compile now: (compile, evict the LRU variant first, why not)."""
        if live < self.max_variants and self.attempts < 2 * self.max_variants:
            return True, False, None
        misses = self._misses.get(key, 0) + 1
        if misses < self.threshold:
            remember(self._misses, key, misses, self._limit)
            return False, False, (f"variant limit reached (max_variants={self.max_variants}): a new key "
                                  f"compiles after {self.threshold} calls with it, evicting the least "
                                  "recently used variant")
        self._misses.pop(key, None)
        if key in self._evicted:  # it was compiled before and pushed out: thrashing, back off
            del self._evicted[key]
            self.threshold = min(2 * self.threshold, MAX_THRESHOLD)
        return True, live >= self.max_variants, None

    def started(self) -> None:
        self.attempts += 1

    def evicted(self, key: Any) -> None:
        self.evictions += 1
        remember(self._evicted, key, None, self._limit)
