"""When a function is hot enough to prepare its first variant (Config.compile_after).

Preparing a variant for IREE costs 0.3-2.7 s of CPU for the model programs
of bench/programs: graph generation on the caller's thread (about a seventh),
then lowering, in the preparation worker for modules of that size
(runtime/preparation_worker.py). That is more than a 100-step loop of most
of them takes in NumPy, and where no core is idle the worker's share comes
out of the loop's time too: the expectation below is of both. Where no call
waits for compiles, a function's calls after profiling therefore run in the interpreter
until they have spent HOT_AFTER_PREPARATIONS times its expected preparation
there: a loop too short to repay the preparation never pays it, and a longer
one pays a bounded multiple of what it would had it known its length (rent or
buy: with a compiled call costing a fraction r of an interpreted one, buying
once the rent paid reaches preparation / (1 - r) costs at most 2 - r times
the best choice in hindsight, whatever IREE's compile time after it; r is
0.06-0.3 for those programs, so 1.1-1.4 preparations). The expectation is
within a factor of about two (below), and one too low makes a short loop pay
the whole preparation for nothing: the threshold takes twice it. Once one
preparation started the function is hot, and its later variants are
prepared when first needed (pyfront/api.py).

The expectation is PREPARATION_SECONDS_PER_EVENT times the last profiled
call's events (Profile.events: calls and returns of Python functions and of
built-in functions and methods as `sys.setprofile` reports them, NumPy's
ufuncs and operators not among them); measured 0.05-0.14 ms per event on
bench/programs' model_* programs (2-core AMD EPYC). Two cases prepare at once:

* an expectation under PREPARE_AT_ONCE_SECONDS (a small function: whatever
  the loop, the preparation is within its noise), or unknown (profiled under
  another profiler, which the event count must not displace);
* a function prepared by an earlier process with this disk cache
  (`note_prepared`): its modules are likely cached, and a warm process should
  run compiled from the first call after profiling, as with compile_after=0.
  The record is a hint: a stale one (the function's callees changed) costs
  one preparation at the old time, never an answer.
"""

from __future__ import annotations

import types

from pyfront.config import Config
from pyfront.profiler import Profile
from pyfront.runtime import disk_cache

PREPARATION_SECONDS_PER_EVENT = 1e-4
PREPARE_AT_ONCE_SECONDS = 0.1
HOT_AFTER_PREPARATIONS = 2


def threshold(fn: types.FunctionType, profile: Profile, config: Config) -> float:
    """Seconds `fn`'s calls after profiling spend in the interpreter before one prepares its first variant."""
    if config.compile_after != "auto":
        return config.compile_after
    if not large(profile) or _prepared_before(fn):
        return 0.0
    return HOT_AFTER_PREPARATIONS * _expected(profile)


def large(profile: Profile) -> bool:
    """Whether preparing the profiled function is expected to take PREPARE_AT_ONCE_SECONDS or more."""
    return _expected(profile) >= PREPARE_AT_ONCE_SECONDS


def _expected(profile: Profile) -> float:
    return profile.events * PREPARATION_SECONDS_PER_EVENT


def note_prepared(fn: types.FunctionType) -> None:
    """Remember in the disk cache that `fn` was prepared (once per process and function)."""
    cache, key = disk_cache.from_env(), _record_key(fn)
    if cache is not None and key not in _noted:
        _noted.add(key)
        cache.put(key, b"prepared")


_noted: set[str] = set()


def _prepared_before(fn: types.FunctionType) -> bool:
    cache = disk_cache.from_env()
    return cache is not None and cache.get(_record_key(fn)) is not None


def _record_key(fn: types.FunctionType) -> str:
    from pyfront.runtime.lowered_cache import code_versions

    code = fn.__code__
    return disk_cache.make_key("pyfront-prepared-function", code.co_filename, code.co_qualname,
                               str(code.co_firstlineno), code.co_code, *code_versions())
