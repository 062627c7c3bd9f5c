"""Keep the faster of a variant's compiled code and the interpreter (Config.keep_faster).

A compiled call has a fixed cost (pyfront's host path and IREE's dispatches: ~25 us
for `x + 1.0`, 40-100 us for a small training step; docs/performance.md), which a
function doing little work per call does not repay: most of bench/corpus.py's
programs ran 0.05-0.9x NumPy's speed compiled. Compiled code and the interpreter
give the same answers (the interpreter is CPython; compiled code runs only where its
guards held), so which of them runs a variant's calls is a question of speed, and
pyfront measures it per variant:

1. TIMED_CALLS compiled calls are timed (verified calls are not: they run both);
2. the next BASELINE_CALLS calls of the variant run in the interpreter, timed;
3. where the interpreter's median call is faster than compiled code's by MARGIN, the
   variant is suspended (`explain` names both medians) for SUSPEND_CALLS calls,
   doubling each time it loses again; its last BASELINE_CALLS suspended calls are
   timed as the next baseline, and after the suspension the compiled calls are
   timed again. Where compiled code wins, nothing is timed any more.

Cost: two clock reads per timed call, and BASELINE_CALLS interpreted calls once for a
variant that wins. Not measured: the compile itself (paid already), and calls of
other variants. Off in strict mode (an interpreted call is an error there) and for
the parts of a function around collectives (every rank must run the same code).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

TIMED_CALLS = 16
BASELINE_CALLS = 8
MARGIN = 1.1  # the interpreter must be this much faster: near ties keep the compiled code
SUSPEND_CALLS = 64
MAX_SUSPEND_CALLS = 1 << 20
TRIAL_REASON = "timed in the interpreter, to compare with the variant's compiled calls (Config.keep_faster)"

clock = time.perf_counter  # (a module attribute: the tests replace it)


@dataclass
class SpeedTrial:
    """The timings of one variant's calls, until compiled code is found the faster."""

    compiled: list[float] = field(default_factory=list)
    interpreted: list[float] = field(default_factory=list)
    losses: int = 0  # trials the compiled code lost

    def times_compiled(self) -> bool:
        return len(self.compiled) < TIMED_CALLS

    def wants_interpreted(self) -> bool:
        """Whether the variant's next call should run in the interpreter, timed."""
        return not self.times_compiled() and len(self.interpreted) < BASELINE_CALLS

    def add(self, seconds: float, compiled: bool) -> None:
        samples = self.compiled if compiled else self.interpreted
        samples.append(seconds)
        del samples[: -(TIMED_CALLS if compiled else BASELINE_CALLS)]  # a suspension's latest calls

    def verdict(self) -> tuple[float, float] | None:
        """(compiled, interpreted) median seconds once both samples are complete, which starts the
        next trial; None before."""
        if self.times_compiled() or len(self.interpreted) < BASELINE_CALLS:
            return None
        medians = statistics.median(self.compiled), statistics.median(self.interpreted)
        self.compiled.clear()
        self.interpreted.clear()
        return medians

    def suspension(self, medians: tuple[float, float]) -> tuple[int, str] | None:
        """(calls, reason) to suspend the variant for, if the interpreter won by MARGIN; else None."""
        compiled, interpreted = medians
        if interpreted * MARGIN >= compiled:
            return None
        calls = min(SUSPEND_CALLS << self.losses, MAX_SUSPEND_CALLS)
        self.losses += 1
        return calls, (f"compiled code measured slower than the interpreter ({_time(compiled)} vs "
                       f"{_time(interpreted)} per call): suspended for {calls} calls, then timed again "
                       "(Config.keep_faster)")


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.3g} us"
