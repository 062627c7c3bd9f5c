"""Configuration of `pyfront.compile`: defaults come from the environment.

    PYFRONT_PROFILE_CALLS   interpreter runs profiled before compiling (default 2)
    PYFRONT_MAX_VARIANTS    compiled variants kept per function (default 8)
    PYFRONT_BACKEND         default backend (default "cpu-sync": see README, Backends)
    PYFRONT_DISABLE         "1" runs every call in the interpreter
    PYFRONT_DUMP_DIR        a folder: the IR after each pipeline stage is written there
                            (see runtime/jit.py and docs/compile.md)
    PYFRONT_DEVICE_STATE    "0" turns device-resident state off (default on)
    PYFRONT_VERIFY          "first" (default), "off", or N: which compiled calls are verified
    PYFRONT_MAX_GRAPH_NODES graph size budget (default 20000; see pyfront/graph_budget.py)
    PYFRONT_COMPILE_TIMEOUT seconds one IREE compile may take (default 300)
    PYFRONT_WAIT_FOR_COMPILE "never" (default), "always", or N: when a call waits for
                            IREE to compile its variant instead of running in the interpreter
    PYFRONT_COMPILE_AFTER   "auto" (default) or seconds: interpreter time before a function's
                            first variant is prepared, where no call waits (see below)
    PYFRONT_STRICT          "1": a call that would run in the interpreter (anything but
                            profiling, PYFRONT_DISABLE or CPython's own argument errors)
                            raises pyfront.StrictModeError listing every blocker instead
    PYFRONT_KEEP_FASTER     "0" runs a variant's calls compiled even where the interpreter
                            was measured faster (default on; see below)

Budgets: a call whose graph exceeds `max_graph_nodes` (syntax-node
evaluations once loops are unrolled and calls inlined, about one op each), or
whose IREE compile runs longer than `compile_timeout` seconds (the compiler
process is then killed), runs in the interpreter; `pyfront.explain` says why.

`device_state`: arrays that compiled code commits to Python state (parameters,
optimizer moments, RNN state) are NumPy arrays over the device's own result
buffers, passed back without an upload when the next call reads them (on the
CPU backends; see runtime/iree_backend.py). Off: every result is copied out.

`verify`: a verified call runs the variant without committing, then the
function in the interpreter (whose outcome the caller gets), and compares
results, prints and state (runtime/verify.py); a disagreement retires the
variant for good. "first": the first call of every new variant; N (an int):
that and every Nth call of a variant; "off": none (for latency-critical code;
the first compiled call then costs no interpreter run).

`wait_for_compile`: a call that needs a new variant generates its graph (it
reads the call's arguments and state), then the module is lowered and IREE
compiles it on a background thread (pyfront/compile_thread.py; a large module is
lowered in a worker process: runtime/preparation_worker.py) while this and later
calls of its key run in the interpreter; the variant switches in when ready.
"never" (default): no call waits for IREE (the call that starts a compile still
generates the graph on its own thread, and the lowering and the compile share the
cores with the calls meanwhile, which is why `compile_after` defers it);
"always": the call waits, as a compile on its own thread would (the answer does
not depend on how fast the compile is: the tests use it); N (an int): calls run
in the interpreter while N of them have, then the next one waits. A module in the
disk cache is loaded at once, whatever this says. Strict mode always waits.

`compile_after` (only where no call waits: "never", not strict): a function's
first variant is prepared once its calls after profiling have spent this many
seconds in the interpreter; "auto": twice as long as the preparation is expected to
take, from the last profiled call's size (pyfront/hotness.py), at
once below 0.1 s. 0: at once. Later variants of a hot function are prepared
when first needed.

`keep_faster`: each variant's compiled calls are timed against a few calls of
it in the interpreter, and where the interpreter is faster (a function doing
little work per call, which pyfront's fixed cost per compiled call does not
repay), its calls run there, re-timed after a while (pyfront/speed_trial.py).
The answers are the same either way; `explain` shows both times. Off in strict
mode. The tests turn it off (tests/conftest.py): which path runs depends on
the machine's load.

`passes` selects the pass pipeline: None is the default (passes.JIT_PIPELINE);
otherwise a sequence of registered pass names, run in that order, that must
contain the required lowering passes (passes.pipeline.REQUIRED). An unknown
name or a missing required pass raises ValueError naming them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pyfront.graph_budget import DEFAULT_MAX_NODES


def _env_int(name: str, default: int | float, kind: type = int) -> int | float:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{name} must be a{'n integer' if kind is int else ' number'}, got {value!r}") from None


def _word_or_count(name: str, value: str | int, words: tuple[str, str], least: int, count: str) -> str | int:
    """One of `words` or an int >= `least` (a string of digits, from the environment, becomes one)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if value in words or (type(value) is int and value >= least):
        return value
    raise ValueError(f"{name} must be {words[0]!r}, {words[1]!r} or {count}, got {value!r}")


def _seconds_or_auto(name: str, value: str | float) -> str | float:
    """"auto" or a number of seconds >= 0 (a string of one, from the environment, becomes a float)."""
    if value == "auto":
        return value
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not seconds >= 0:  # (NaN too)
        raise ValueError(f"{name} must be 'auto' or a number of seconds >= 0, got {value!r}")
    return seconds


@dataclass(frozen=True)
class Config:
    profile_calls: int = field(default_factory=lambda: _env_int("PYFRONT_PROFILE_CALLS", 2))
    max_variants: int = field(default_factory=lambda: _env_int("PYFRONT_MAX_VARIANTS", 8))
    backend: str = field(default_factory=lambda: os.environ.get("PYFRONT_BACKEND", "cpu-sync"))
    disabled: bool = field(default_factory=lambda: os.environ.get("PYFRONT_DISABLE", "") == "1")
    passes: tuple[str, ...] | None = None  # None: the default JIT pipeline
    device_state: bool = field(default_factory=lambda: os.environ.get("PYFRONT_DEVICE_STATE", "1") != "0")
    verify: str | int = field(default_factory=lambda: os.environ.get("PYFRONT_VERIFY", "first"))
    max_graph_nodes: int = field(default_factory=lambda: _env_int("PYFRONT_MAX_GRAPH_NODES", DEFAULT_MAX_NODES))
    compile_timeout: float = field(default_factory=lambda: _env_int("PYFRONT_COMPILE_TIMEOUT", 300.0, float))
    strict: bool = field(default_factory=lambda: os.environ.get("PYFRONT_STRICT", "") == "1")
    wait_for_compile: str | int = field(default_factory=lambda: os.environ.get("PYFRONT_WAIT_FOR_COMPILE", "never"))
    compile_after: str | float = field(default_factory=lambda: os.environ.get("PYFRONT_COMPILE_AFTER", "auto"))
    keep_faster: bool = field(default_factory=lambda: os.environ.get("PYFRONT_KEEP_FASTER", "1") != "0")

    def __post_init__(self) -> None:
        if self.passes is not None:
            from pyfront.passes.pipeline import check_pipeline

            object.__setattr__(self, "passes", check_pipeline(self.passes))
        if self.profile_calls < 1:
            raise ValueError("profile_calls must be at least 1")
        if self.max_variants < 1:
            raise ValueError("max_variants must be at least 1")
        object.__setattr__(self, "verify", _word_or_count("verify", self.verify, ("first", "off"), 1,
                                                          "a positive integer N (every Nth call)"))
        object.__setattr__(self, "wait_for_compile", _word_or_count(
            "wait_for_compile", self.wait_for_compile, ("never", "always"), 0, "a number of calls N >= 0"))
        object.__setattr__(self, "compile_after", _seconds_or_auto("compile_after", self.compile_after))
        if self.max_graph_nodes < 1:
            raise ValueError("max_graph_nodes must be at least 1")
        if not self.compile_timeout > 0:
            raise ValueError("compile_timeout must be a positive number of seconds")
        if not self.disabled:
            # An unknown backend, or one whose driver or device is missing, fails here,
            # naming it: never a silent run in the interpreter or on another backend.
            from pyfront.runtime.iree_backend import check_available

            check_available(self.backend)
