"""The JIT API: `pyfront.compile` and `pyfront.explain`.

    @pyfront.compile
    def predict(x, w, b):
        return np.tanh(x @ w + b)

The first `Config.profile_calls` calls run in the interpreter under the
profiler. Then each call is dispatched on its argument key (specialize.py):
the variants compiled for that key (a `VariantGroup`, variant_group.py) are
tried, and one whose entry guards hold runs; a new key, or state that no
variant of the key was compiled for (another tree shape behind the same
argument type), compiles a new variant (at most `Config.max_variants` live
variants per function; beyond that, the least recently used one is evicted,
with a back-off against thrashing: variant_budget.py); anything the compiler
cannot handle, or any failed guard, runs the original function in the
interpreter, so the caller always gets the interpreter's answer. Every table
kept per function is bounded (bounded.py), however many keys calls bring.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from pyfront import call_depth, callables, compile_thread, hotness, logs, segments, source, speed_trial
from pyfront.bounded import remember
from pyfront.compile_thread import Pending
from pyfront.config import Config
from pyfront.errors import StrictModeError, Unsupported
from pyfront.guards import FP_ERRSTATE_REASON, fp_errstate_supported
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.profiler import Observation, Profiler
from pyfront.report import Blocker, Report, VariantReport
from pyfront.runtime.variant import Deopt
from pyfront.specialize import describe_key as _describe_key
from pyfront.specialize import key_of
from pyfront.variant_budget import VariantBudget
from pyfront.variant_group import VariantGroup
from pyfront.verification import Verdict, is_due, verified_call

# Failed assumptions that a recompilation relaxes (new state, or a branch seen both ways).
# "fp-error" (a floating-point event NumPy reports) is relaxed once, from deferred checks
# to exact per-op ones (_deopt); after that the same code would raise it again.
RELAXABLE = ("state", "branch")
# Deferred floating-point checks relax to per-op ones when they failed this many times on calls
# whose inputs held NaN or inf, or of a function that can make one with no event NumPy reports
# (a -inf constant for masks, an op under np.errstate ignoring some events): such values fail a
# deferred check on every call, and the per-op checks, which look for the reported events
# themselves, let them run compiled. Otherwise every NaN or inf a check sees comes from an event
# (one NumPy reports, or a subnormal result IREE flushed, made NaN by primitives/subnormal.py),
# which the per-op checks fail on just the same: such failures count as data failures
# (GIVE_UP_AFTER), with no recompile, which costs seconds (model_reinforce's fixed-batch policy,
# whose flushed softmax probabilities fail every call from step ~915 on, had its next ~1,300
# calls interpreted while the useless per-op variant compiled).
RELAX_FP_CHECKS_AFTER = 2
# Other in-graph assumptions fail on data (a division by zero, a subnormal reaching an input):
# after this many failures the variant is suspended, its calls run in the interpreter for
# SUSPEND_CALLS calls, then it is tried again; each suspension doubles the next. Such data is
# often transient: Adam's bias correction beta1**t is subnormal in float32 for 23 steps at
# beta1=0.5 (t = 127..149), then exactly 0. "raise" guards are never counted (raising is the
# interpreter's job, by design).
GIVE_UP_AFTER = 8
SUSPEND_CALLS = 64
MAX_SUSPEND_CALLS = 1 << 20
# While a function's only variant is suspended, its calls skip the dispatch key and the entry guards
# (`_bypass`), which cost a suspended `x + 1.0` 8 of its 9 us; after this many calls one call takes
# the whole path again, so arguments of another key are compiled within that many calls.
BYPASS_CALLS = 256
# Dispatch keys whose group is kept beyond those with live variants (their failures, remembered).
MAX_IDLE_GROUPS = 64
MAX_STATE_MISS_SITES = 256
MAX_BLOCKERS = 32  # distinct blockers a report keeps (compile attempts for new keys add theirs)
COMPILING = "its variant is compiling in the background (Config.wait_for_compile)"
WARMING_UP = ("not compiled yet: its calls have not yet run long enough in the interpreter to repay preparing "
              "a variant (Config.compile_after)")


@dataclasses.dataclass
class Compiling:
    """A group's variant being compiled (on the compile thread, or on the caller's: `job.run()`)."""

    job: Pending
    signature: tuple  # the state it was compiled for (VariantGroup.signature): where a failure is remembered
    evict: bool  # admitted by evicting the least recently used variant, once it is ready
    calls_meanwhile: int = 0  # calls of its key that ran in the interpreter while it compiled


class CompiledFunction:
    """A function whose calls run compiled when its assumptions hold."""

    def __init__(self, target: Callable, config: Config):
        fn, leading = callables.resolve(target)
        # Named after the code compiled, except where that is pyfront's (compile(grad(f)) is f's).
        functools.update_wrapper(self, target if fn is callables.apply_transform else fn)
        self.fn = fn
        # A bound method's receiver, a partial's arguments, a callable object: arguments read per call.
        self._leading = None if leading is callables.binds_nothing else leading
        # Why this code cannot compile whatever the arguments (no source, a generator).
        self._never_compiles: str | None = None
        self.config = config
        self._lock = threading.RLock()
        self._groups: dict[Any, VariantGroup] = {}  # dispatch key -> its variants
        # Failed entry guards at which no variant of a key held once (that call ran profiled).
        self._state_misses: dict[str, None] = {}
        self._budget = VariantBudget(config.max_variants)
        self._profiler: Profiler | None = None
        # Argument position -> relaxation: True (a Python float operand) or the set of
        # array dims whose sizes are runtime values (specialize.spec_of).
        self._relaxed: dict[int, Any] = {}
        self._no_relax: set[int] = set()  # positions whose relaxation made compilation fail
        self._fp_checks_per_op = False  # a deferred floating-point check failed: check each op exactly
        # Seconds its calls spent in the interpreter after profiling, until a first preparation starts
        # (then None: the function is hot, and later variants are prepared when needed); the seconds
        # that make it hot (pyfront/hotness.py), once known.
        self._interpreted_seconds: float | None = 0.0
        self._hot_after: float | None = None
        self._worker_after = math.inf  # the seconds after which the preparation worker starts
        self._report = Report(self.__qualname__)
        self._code = fn.__code__  # the code object the variants and the profile are of
        self._profiled_before_code = 0  # profiled calls made for earlier code objects
        # Compile failures by reason -> the keys they failed for; a reason that failed for
        # HOPELESS_AFTER keys does not depend on the key either (`_never_compiles`).
        self._failed_keys: dict[str, set] = {}
        # The function's parts around its collective statements (segments.py), per code object.
        self._parts: tuple[types.CodeType, list | None] | None = None
        # (first call number not bypassed, the suspension's reason) while the only variant is suspended.
        self._bypass: tuple[int, str] | None = None
        logs.configure_from_env()

    def __get__(self, obj: Any, objtype: type | None = None) -> Callable:
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        caller_limit = call_depth.enter()  # first: recursion fails at CPython's depth (call_depth.py)
        try:
            return self._call(args, kwargs)
        finally:
            if caller_limit is not None:
                sys.setrecursionlimit(caller_limit)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        never = self._never_compiles
        if never is not None and self.fn.__code__ is self._code and never in self._report.interpreter_reasons:
            return self._fallback(never, args, kwargs)
        with self._lock:
            self._report.calls += 1
        if self.config.disabled:
            return self._interpret("compilation disabled (PYFRONT_DISABLE=1)", args, kwargs, chosen=True)
        if self._leading is not None:
            args, kwargs = self._leading(args, kwargs)
        if self.fn.__code__ is not self._code:
            self._forget_code()
        if self._never_compiles is not None:  # cheap: no key, no profiling, no compile attempt
            return self._interpret(self._never_compiles, args, kwargs)
        bypass = self._bypass
        if bypass is not None:
            if self._report.calls < bypass[0]:
                return self._interpret(bypass[1], args, kwargs)
            self._bypass = None
        bound = callables.positional(self.fn, args, kwargs)
        if bound is None:  # the interpreter raises CPython's TypeError
            return self._interpret("the arguments do not bind to the parameters (the interpreter raises)",
                                   args, kwargs, chosen=True)
        parts = self._split()
        if parts is not None:
            return self._call_parts(parts, bound)
        call, args = (args, kwargs), bound  # the interpreter runs `call`; compiled code takes `bound`
        try:
            key = self._key(args)
        except TypeError as e:
            return self._interpret(f"an argument cannot be specialized on ({e})", *call)
        group = self._groups.get(key)
        variant, entry = group.select(args) if group is not None else (None, None)
        if variant is None:
            miss, entry = entry, None  # a variant found below checks its entry guards itself
            with self._lock:
                profiling = self._report.profiled_calls - self._profiled_before_code < self.config.profile_calls
                if profiling:
                    self._report.profiled_calls += 1
                elif miss is not None and self._first_state_miss(key, miss):
                    profiling = True
                elif self._warming_up():
                    reason = WARMING_UP
                else:
                    key = self._relax(key, args)
                    variant, reason = self._variant_or_compile(key, args)
                    if variant is None and reason is not COMPILING and self._give_up_relaxations(key, args, reason):
                        key = self._key(args)
                        variant, reason = self._variant_or_compile(key, args)
            if profiling:
                return self._profiled(call, args)
            if variant is None:
                return self._interpret(reason, *call)
        trial = variant.speed_trial
        if variant.suspended_until > self._report.calls:  # a guard kept failing on recent data, or slower
            # The last calls of a suspension are the next speed trial's interpreted ones.
            timed = trial is not None and variant.suspended_until - self._report.calls <= speed_trial.BASELINE_CALLS
            if not timed:
                self._bypass_while_suspended(group, variant)
            return self._interpret(variant.suspension, *call, timed=(key, variant) if timed else None)
        if not fp_errstate_supported():  # an underflow would go unnoticed: NumPy's answer needs NumPy
            return self._interpret(FP_ERRSTATE_REASON, *call)
        if not call_depth.has_room(variant.inlined_frames):
            return self._interpret(call_depth.NO_ROOM_REASON, *call)
        if is_due(variant.calls, self.config.verify):  # checked against the interpreter (verification.py)
            result = verified_call(self, key, variant, args, call)
        elif trial is not None and trial.wants_interpreted():
            return self._interpret(speed_trial.TRIAL_REASON, *call, timed=(key, variant))
        elif trial is not None and trial.times_compiled():
            start = speed_trial.clock()
            result = variant.run(args, entry)
            if not isinstance(result, Deopt):
                self._timed(key, variant, speed_trial.clock() - start, compiled=True)
        else:
            result = variant.run(args, entry)
        if isinstance(result, Deopt):
            self._deopt(key, variant, result, args)
            # Nothing was committed: re-run from the start, profiled, so the
            # failed assumption can be relaxed when this key is compiled again.
            return self._profiled(call, args)
        if isinstance(result, Verdict):
            return result.outcome()
        with self._lock:
            self._report.compiled_calls += 1
        return result

    def _bypass_while_suspended(self, group: VariantGroup, variant) -> None:
        """Send the next calls straight to the interpreter while `variant`, the function's only one, is
        suspended: no key, no entry guards (BYPASS_CALLS calls at most; never the speed trial's timed ones)."""
        if len(self._groups) != 1 or len(group.variants) != 1 or group.compiling is not None:
            return  # another variant or key may take these calls
        end = variant.suspended_until - (speed_trial.BASELINE_CALLS if variant.speed_trial is not None else 0)
        self._bypass = (min(end, self._report.calls + 1 + BYPASS_CALLS), variant.suspension)

    def _split(self) -> list | None:
        """(segments.Part, its CompiledFunction or None for a collective statement) per part of a function
        that calls collectives, or None: it compiles whole."""
        code = self.fn.__code__
        if self._parts is None or self._parts[0] is not code:
            parts = segments.split(self.fn)
            # Every rank switches to a part's compiled code at the same call, as it would compiling
            # on its own thread (one still interpreting while the others run compiled may round differently).
            config = dataclasses.replace(self.config, wait_for_compile="always", keep_faster=False)
            self._parts = (code, None if parts is None else
                           [(p, None if p.collective else CompiledFunction(p.fn, config)) for p in parts])
        return self._parts[1]

    def _call_parts(self, parts: list, bound: tuple) -> Any:
        """Run the parts in order, each on the names the one before returned (segments.py). The call
        counts as compiled when every compiled part ran compiled code."""
        before = [c._report.compiled_calls for _, c in parts if c is not None]
        values = bound
        for part, compiled in parts:
            values = (compiled or part.fn)(*values)
        after = [c._report.compiled_calls for _, c in parts if c is not None]
        with self._lock:
            if all(a > b for a, b in zip(after, before)):
                self._report.compiled_calls += 1
            else:
                self._report.interpreted_calls += 1
                self._report.interpreter_reasons["a part of the function ran in the interpreter (see its parts)"] += 1
        return values

    def _fallback(self, reason: str, args: tuple, kwargs: dict) -> Any:
        """A call of code that never compiles, once its reason is known and logged: the interpreter
        at the least cost per call (one lock, no key): bench/fallback_overhead.py measures it."""
        self._refuse_if_strict(reason)
        with self._lock:
            report = self._report
            report.calls += 1
            report.interpreted_calls += 1
            report.interpreter_reasons[reason] += 1
        if self._leading is not None:
            args, kwargs = self._leading(args, kwargs)
        return call_depth.call_user(self.fn, args, kwargs)

    def _forget_code(self) -> None:
        """`fn.__code__` was replaced (hot reload): drop the variants and profile of the old code.

        The variants could not run anyway (they guard `__code__`); the new code is profiled afresh.
        """
        with self._lock:
            if self.fn.__code__ is self._code:
                return
            self._code = self.fn.__code__
            self._never_compiles = None
            self._groups, self._bypass = {}, None
            self._profiler = None
            self._state_misses = {}
            self._relaxed, self._no_relax, self._fp_checks_per_op = {}, set(), False
            self._hot_after = None  # (the profile it was estimated from is of the old code)
            self._failed_keys = {}
            self._report.blockers = []
            self._profiled_before_code = self._report.profiled_calls
        if logs.compile_log.isEnabledFor(logs.INFO):
            logs.compile_log.info("%s: __code__ replaced: variants dropped, profiling again", self.__qualname__)

    def _profiled(self, call: tuple[tuple, dict], bound: tuple) -> Any:
        """Run `call` in the interpreter, profiled; the profile sees its canonical arguments `bound`.

        Only the call whose size the hotness threshold will read counts its events (the last of the
        profiling window, before the threshold is set): counting made a call 2-4x slower (bench
        model programs), which the first call and every deopt's re-run paid.
        """
        with self._lock:
            if self._profiler is None:
                self._profiler = Profiler(self.fn)
            self._report.interpreted_calls += 1
            count = (self._hot_after is None and self._warms_up()
                     and self._report.profiled_calls - self._profiled_before_code >= self.config.profile_calls)
        return self._profiler.run(*call, observed=bound, count_events=count)

    def _key(self, args: tuple) -> tuple:
        relaxed = self._relaxed
        return tuple([key_of(a, relaxed.get(i)) for i, a in enumerate(args)])  # (cheaper than a generator, per call)

    def _relax(self, key: tuple, args: tuple) -> tuple:
        """Generalize arguments seen in several forms (lock held); returns the call's new key.

        JANUS's specialization hierarchy: a Python float seen with several values
        becomes a runtime operand; an array seen with several sizes of a dim (same
        dtype and rank) gets that dim dynamic: (4, 8) then (3, 8) gives (?, 8).
        """
        if self._profiler is None:
            return key
        args_seen = self._profiler.profile.args
        for i, a in enumerate(args):
            args_seen.setdefault(i, Observation()).add(a)
        for i, obs in args_seen.items():
            if i in self._no_relax:
                continue
            relaxation = _relaxation(list(obs.facts))
            if relaxation is not None and relaxation != self._relaxed.get(i):
                self._relaxed = {**self._relaxed, i: relaxation}
                kind = next(iter(obs.facts))[0].__name__
                what = (f"Python {kind} value -> runtime operand" if kind in ("int", "float") else
                        f"Python ints and floats in a {kind} -> runtime operands") if relaxation is True else (
                    f"dims {sorted(relaxation)} of varying size -> dynamic")
                self._note_relaxation(f"arg{i}: {what}")
        return self._key(args)

    def _first_state_miss(self, key: Any, miss: Deopt) -> bool:
        """No variant of `key` holds for the state behind the arguments (lock held).

        Counted like a deopt, with a failed guard of one variant. The first miss at
        a guard runs profiled (so a global that keeps changing is seen as unstable,
        not compiled once per value); later ones compile a variant for the state at
        hand into the group (another tree shape). True: run this call profiled.
        """
        site = self._count_deopt(key, miss)
        if site in self._state_misses:
            return False
        remember(self._state_misses, site, None, MAX_STATE_MISS_SITES)
        return True

    def _variant_or_compile(self, key: Any, args: tuple) -> tuple[Any, str | None]:
        """(a variant of `key` that holds, maybe compiled meanwhile by another thread, or a
        new one, None) or (None, why none could be compiled)."""
        group = self._groups.get(key)
        if group is not None:
            variant, _ = group.select(args)
            if variant is not None:
                return variant, None
            if group.compiling is not None:
                return self._compiling(key, group, args)
        return self._compile(key, args)

    def _compiling(self, key: Any, group: VariantGroup, args: tuple) -> tuple[Any, str | None]:
        """A call of `key` while its variant compiles on the compile thread (lock held): wait for it
        if `Config.wait_for_compile` says so; once it is done, install it and dispatch again."""
        compiling = group.compiling
        if not compiling.job.done.is_set() and self._waits(compiling.calls_meanwhile):
            with logs.progress(f"{self.__qualname__} {_describe_key(key)} (compiling in the background)"):
                compiling.job.wait()
        if not compiling.job.done.is_set():
            compiling.calls_meanwhile += 1
            return None, COMPILING
        self._install(key, group)
        return self._variant_or_compile(key, args)

    def _waits(self, calls_meanwhile: int) -> bool:
        """Whether a call blocks on a pending compile (after `calls_meanwhile` calls ran in the interpreter
        while it compiled) rather than run in the interpreter."""
        wait = self.config.wait_for_compile
        return self.config.strict or wait == "always" or (type(wait) is int and calls_meanwhile >= wait)

    def _warms_up(self) -> bool:
        """Whether calls stay in the interpreter until the function is hot: where no call waits for compiles."""
        return self.config.wait_for_compile == "never" and not self.config.strict

    def _warming_up(self) -> bool:
        """Whether a call that needs a first variant stays in the interpreter, the function not being
        hot yet (lock held; pyfront/hotness.py)."""
        spent, config = self._interpreted_seconds, self.config
        if spent is None or not self._warms_up():
            return False
        if self._hot_after is None:
            profile = self._profiler.profile
            self._hot_after = hotness.threshold(self.fn, profile, config)
            # The worker that will lower a large function's module starts halfway to the threshold:
            # ready by then (it takes ~0.5 s), and a loop too short to get there never pays for it.
            self._worker_after = self._hot_after / 2 if hotness.large(profile) else math.inf
        if spent >= self._worker_after:
            from pyfront.runtime import preparation_worker

            self._worker_after = math.inf
            preparation_worker.start()
        return spent < self._hot_after

    def _give_up_relaxations(self, key: Any, args: tuple, reason: str) -> bool:
        """A relaxed key failed to compile: specialize those arguments again (lock held).

        E.g. a loop over a dim made dynamic cannot be unrolled; one variant per size
        (bounded by max_variants) still compiles.
        """
        if key == tuple(key_of(a) for a in args):
            return False  # no relaxation applied to this call
        for i in self._relaxed:
            self._note_relaxation(f"arg{i}: relaxation undone ({reason})")
        self._no_relax |= set(self._relaxed)
        self._relaxed = {}
        return True

    def _compile(self, key: Any, args: tuple) -> tuple[Any, str | None]:
        """Compile a variant for `key` and the state behind the canonical `args` (lock held): (variant, None),
        or (None, why not); a failure is remembered for that state (VariantGroup.failed)."""
        from pyfront.runtime.jit import prepare_variant

        if self._never_compiles is not None:  # found by the attempt a relaxed key just made
            return None, self._never_compiles
        group = self._groups.get(key)
        reason = group.failure_for(args) if group is not None else None
        if reason is not None:
            return None, reason
        live = sum(len(g.variants) + (g.compiling is not None) for g in self._groups.values())
        admitted, evict, reason = self._budget.admit(key, live)
        if not admitted:
            return None, reason
        if group is None:
            group = self._groups[key] = VariantGroup(self.fn)
            self._forget_idle_groups()
        self._budget.started()
        self._interpreted_seconds = None  # hot from now on
        profile = self._profiler.profile if self._profiler else None
        signature = group.signature(args)
        with logs.progress(f"{self.__qualname__} {_describe_key(key)}"):  # on a terminal, past a second
            waits = self._waits(0)
            try:
                prepared = prepare_variant(self.fn, key, args, {}, self.config, profile, self._relaxed,
                                           self._fp_checks_per_op, background=not waits)
            except Exception as e:  # noqa: BLE001 - a compiler bug must not change the call's outcome
                reraise_if_asynchronous(e)  # e.g. a watchdog's signal during graph generation
                return None, self._failed(key, group, signature, e)
            hotness.note_prepared(self.fn)
            compiling = group.compiling = Compiling(Pending(prepared.build), signature, evict)
            if prepared.cached is not None or waits:
                compiling.job.run()
                return self._install(key, group)
        prepared.in_background = True
        compile_thread.submit(compiling.job)
        if logs.compile_log.isEnabledFor(logs.INFO):
            logs.compile_log.info("%s %s: compiling in the background (%.2fs on the calling thread)",
                                  self.__qualname__, _describe_key(key), prepared.seconds)
        return None, COMPILING

    def _install(self, key: Any, group: VariantGroup) -> tuple[Any, str | None]:
        """Take in the outcome of the group's finished compile (lock held): (its variant, None), or
        (None, why it failed: remembered for the state it was compiled for), or (None, None) for a
        compile the process forked away from (compiled again on the next call)."""
        compiling, group.compiling = group.compiling, None
        job = compiling.job
        if job.abandoned:
            return None, None
        if job.error is not None:
            if not isinstance(job.error, Exception):  # KeyboardInterrupt, SystemExit: the caller's
                raise job.error
            reraise_if_asynchronous(job.error)  # e.g. IREE's compiler interrupted by a watchdog's signal
            return None, self._failed(key, group, compiling.signature, job.error)
        variant = job.variant
        self._report.compilations += 1
        if compiling.evict:  # only now: a failed compile evicts nothing
            self._evict_least_recently_used()
        if self.config.keep_faster and not self.config.strict:
            variant.speed_trial = speed_trial.SpeedTrial()
        group.add(variant)
        if logs.compile_log.isEnabledFor(logs.INFO):
            logs.compile_log.info("%s %s: compiled in %.2fs (%s%s)", self.__qualname__, _describe_key(key),
                                  variant.compile_seconds,
                                  "disk cache hit" if variant.cache_hit else "not in the disk cache",
                                  f"; {compiling.calls_meanwhile} calls ran in the interpreter meanwhile"
                                  if compiling.calls_meanwhile else "")
        if logs.guards_log.isEnabledFor(logs.INFO):
            for g in variant.describe_guards():
                logs.guards_log.info("%s %s: guard %s", self.__qualname__, _describe_key(key), g)
        return variant, None

    def _failed(self, key: Any, group: VariantGroup, signature: tuple, error: Exception) -> str:
        """Remember why compiling `key` for the state of `signature` failed (lock held); the reason."""
        if isinstance(error, Unsupported) and error.whole_code is self.fn.__code__:
            self._never_compiles = str(error)  # not the key's fault: never try again for this code
        if not isinstance(error, Unsupported):
            reason = f"internal compiler error ({type(error).__name__}: {error}); please report it"
            group.fail(signature, reason)
            return reason
        self._note_blockers(error)
        group.fail(signature, str(error))
        self._note_failure(key, str(error))
        return str(error)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the variants compiling in the background are ready (or failed), at most
        `timeout` seconds; True when none is left compiling. `pyfront.wait` documents it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        parts = self._parts[1] if self._parts is not None and self._parts[1] is not None else []
        with self._lock:
            pending = [(k, g, g.compiling) for k, g in self._groups.items() if g.compiling is not None]
        done = all(part.wait(_left(deadline)) for _, part in parts if part is not None)
        for key, group, compiling in pending:
            if not compiling.job.wait(_left(deadline)):
                done = False
                continue
            with self._lock:
                if group.compiling is compiling:  # (not installed by a call meanwhile)
                    self._install(key, group)
        return done

    def _note_failure(self, key: Any, reason: str) -> None:
        """Remember a compile failure (lock held); the same one for HOPELESS_AFTER keys: give up.

        A reason that names a dtype, shape or value differs between keys, so only one that
        does not depend on the arguments (an unsupported construct at a line) repeats."""
        keys = self._failed_keys.get(reason, set())
        if len(keys) < HOPELESS_AFTER:
            keys.add(key)
        remember(self._failed_keys, reason, keys, MAX_FAILURE_REASONS)
        if len(keys) >= HOPELESS_AFTER and self._never_compiles is None:
            self._never_compiles = (f"{reason} (the same for {HOPELESS_AFTER} argument keys: new keys are not "
                                    "compiled until the function's code changes)")

    def _evict_least_recently_used(self) -> None:
        """Make room for a new variant (lock held): drop the one whose last compiled call is oldest."""
        key, group, victim = min(((k, g, v) for k, g in self._groups.items() for v in g.variants),
                                 key=lambda kgv: kgv[2].last_used)
        group.remove(victim)
        self._budget.evicted(key)
        self._report.evictions = self._budget.evictions
        if logs.compile_log.isEnabledFor(logs.INFO):
            logs.compile_log.info("%s %s: variant evicted (least recently used; max_variants=%d)",
                                  self.__qualname__, _describe_key(key), self.config.max_variants)

    def _forget_idle_groups(self) -> None:
        """Keep at most MAX_IDLE_GROUPS groups without live variants (lock held), oldest go first."""
        idle = [k for k, g in self._groups.items() if not g.variants and g.compiling is None]
        for k in idle[:len(idle) - MAX_IDLE_GROUPS]:
            del self._groups[k]

    def _note_relaxation(self, text: str) -> None:
        self._report.relaxations.append(text)
        if logs.relax_log.isEnabledFor(logs.INFO):
            logs.relax_log.info("%s: %s", self.__qualname__, text)

    def _count_deopt(self, key: Any, deopt: Deopt) -> str:
        """Count a failed assumption (lock held); returns its site line for the report."""
        self._report.deopts += 1
        site = f"{deopt.site}: [{deopt.kind}] {deopt.reason}"
        self._report.deopt_reasons[site] += 1
        if logs.deopt_log.isEnabledFor(logs.INFO):
            logs.deopt_log.info("%s %s: deopt at %s [%s] %s (%d at this guard so far)",
                                self.__qualname__, _describe_key(key), deopt.site, deopt.kind,
                                deopt.reason, self._report.deopt_reasons[site])
        return site

    def _deopt(self, key: Any, variant, deopt: Deopt, args: tuple) -> None:
        """Count a failed in-graph assumption; retire the variant when recompiling can relax it."""
        with self._lock:
            site = self._count_deopt(key, deopt)
            group = self._groups.get(key)
            if group is None or variant not in group.variants:
                return
            retired = None
            if deopt.kind == "fp-error" and (deopt.nonfinite_inputs or variant.quiet_nonfinite):
                variant.fp_errors += 1  # per-op checks may hold where this one failed (RELAX_FP_CHECKS_AFTER)
            if deopt.kind in RELAXABLE:
                group.remove(variant)
                retired = "to be recompiled without the failed assumption"
            elif (deopt.kind == "fp-error" and not variant.fp_checks_per_op
                  and variant.fp_errors >= RELAX_FP_CHECKS_AFTER):
                group.remove(variant)
                retired = "to be recompiled with exact per-op floating-point checks"
                if not self._fp_checks_per_op:
                    self._fp_checks_per_op = True
                    self._note_relaxation("floating-point checks: deferred -> per op (NaN or inf reached a check "
                                          "twice, which NaN or inf inputs, constants or ignored events may explain)")
            elif deopt.kind == "runtime":  # IREE itself failed: never run this variant again
                group.remove(variant)
                retired = f"compiled code failed at run time: {deopt.reason}"
                group.fail(group.signature(args), retired)
            elif deopt.kind != "raise":
                variant.strikes += 1
                if variant.strikes >= GIVE_UP_AFTER:
                    self._suspend(key, variant, site)
            if retired and logs.guards_log.isEnabledFor(logs.INFO):
                logs.guards_log.info("%s %s: variant retired (%s)", self.__qualname__, _describe_key(key), retired)

    def _timed(self, key: Any, variant, seconds: float, compiled: bool) -> None:
        """Add a call's time to the variant's speed trial; once it is complete, suspend the variant where
        the interpreter was faster, or stop timing it (speed_trial.py)."""
        with self._lock:
            trial = variant.speed_trial
            if trial is None:  # (another thread's call ended the trial)
                return
            trial.add(seconds, compiled)
            medians = trial.verdict()
            if medians is None:
                return
            suspension = trial.suspension(medians)
            if suspension is None:
                variant.speed_trial = None
            else:
                self._suspend_for(key, variant, *suspension)

    def _suspend(self, key: Any, variant, site: str) -> None:
        """Send the variant's calls to the interpreter for a while (lock held): see SUSPEND_CALLS."""
        calls = min(SUSPEND_CALLS << variant.suspensions, MAX_SUSPEND_CALLS)
        variant.suspensions += 1
        variant.strikes = 0
        self._suspend_for(key, variant, calls, f"compiled code suspended for {calls} calls: {site} failed "
                                               f"{GIVE_UP_AFTER} times (tried again after)")

    def _suspend_for(self, key: Any, variant, calls: int, reason: str) -> None:
        """Send the variant's next `calls` calls to the interpreter for `reason` (lock held)."""
        variant.suspended_until = self._report.calls + calls + 1  # (this call is counted)
        variant.suspension = reason
        if logs.guards_log.isEnabledFor(logs.INFO):
            logs.guards_log.info("%s %s: variant suspended (%s)", self.__qualname__, _describe_key(key),
                                 variant.suspension)

    def _interpret(self, reason: str, args: tuple, kwargs: dict, chosen: bool = False,
                   timed: tuple | None = None) -> Any:
        """Run the call in the interpreter for `reason`; `chosen`: the user's choice or CPython's
        error, which strict mode lets through; `timed`: (key, variant) whose speed trial times it."""
        if not chosen:
            self._refuse_if_strict(reason)
        with self._lock:
            self._report.interpreted_calls += 1
            first = reason not in self._report.interpreter_reasons
            self._report.interpreter_reasons[reason] += 1
        if first and logs.compile_log.isEnabledFor(logs.INFO):
            logs.compile_log.info("%s: runs in the interpreter: %s", self.__qualname__, reason)
        if timed is not None:
            start = speed_trial.clock()
            result = call_depth.call_user(self.fn, args, kwargs)
            self._timed(*timed, speed_trial.clock() - start, compiled=False)
            return result
        if self._interpreted_seconds is None:
            return call_depth.call_user(self.fn, args, kwargs)
        start = time.perf_counter()
        try:
            return call_depth.call_user(self.fn, args, kwargs)
        finally:
            with self._lock:
                if self._interpreted_seconds is not None:
                    self._interpreted_seconds += time.perf_counter() - start

    def _refuse_if_strict(self, reason: str) -> None:
        if self.config.strict:
            with self._lock:
                blockers = list(self._report.blockers)
            raise StrictModeError(self.__qualname__, reason, blockers)

    def _note_blockers(self, error: Unsupported) -> None:
        """Keep the blockers a failed compile attempt found (lock held), for explain and strict mode."""
        kept = self._report.blockers
        for found in (error, *error.also):
            blocker = Blocker.of(found)
            if blocker not in kept and len(kept) < MAX_BLOCKERS:
                kept.append(blocker)

    def explain_call(self, args: tuple, kwargs: dict) -> Report:
        """`pyfront.explain(fn, *args)`: one call of `args` in the interpreter (profiled), then a
        compile attempt for them (compiled code does not run); the report says what happened."""
        if self._leading is not None:
            args, kwargs = self._leading(args, kwargs)
        if self.fn.__code__ is not self._code:
            self._forget_code()
        with self._lock:
            self._report.calls += 1
        bound = callables.positional(self.fn, args, kwargs)
        if self._never_compiles is not None or bound is None:  # no attempt to make; CPython's TypeError
            self._interpret(self._never_compiles or "the arguments do not bind to the parameters", args, kwargs,
                            chosen=bound is None)
            return self.explain()
        with self._lock:
            self._report.profiled_calls += 1
        self._profiled((args, kwargs), bound)
        with self._lock:
            self._variant_or_compile(self._relax(self._key(bound), bound), bound)
        self.wait()  # the attempt's outcome, blockers included, even when it compiles in the background
        return self.explain()

    def explain(self) -> Report:
        with self._lock:
            r = self._report
            out = Report(
                r.name, r.calls, r.compiled_calls, r.interpreted_calls, r.profiled_calls, r.deopts,
                r.compilations, interpreter_reasons=r.interpreter_reasons.copy(),
                deopt_reasons=r.deopt_reasons.copy(), relaxations=list(r.relaxations), evictions=r.evictions,
                verified_calls=r.verified_calls, verify_failures=list(r.verify_failures),
                blockers=list(r.blockers),
            )
            out.filename, out.source = _source_of(self.fn)
            if self._interpreted_seconds is not None and self._hot_after is not None:
                out.warming_up = (self._interpreted_seconds, self._hot_after)
            for key, group in self._groups.items():
                if group.compiling is not None:
                    out.compiling.append(f"{_describe_key(key)} ({group.compiling.calls_meanwhile} calls ran "
                                         "in the interpreter meanwhile)")
                for v in group.variants:
                    sites = [(g.site, "state", 0) for g in (*v.identity_guards, *v.state_guards)]
                    sites += [(g.site, g.kind, g.failures) for g in v.graph_guards]
                    out.variants.append(VariantReport(_describe_key(key), v.calls, v.compile_seconds,
                                                      v.cache_hit, v.describe_guards(), sites, v.approximate_dtype))
            if self._profiler:
                p = self._profiler.profile
                out.profile_lines = [f"arg{i}: {o.summary()}" for i, o in sorted(p.args.items())]
                if p.note:
                    out.profile_lines.append(p.note)
            parts = self._parts[1] if self._parts is not None and self._parts[0] is self.fn.__code__ else None
        for part, compiled in parts or ():
            where = f"lines {part.first_line}-{part.last_line}"
            if compiled is None:
                out.parts.append((f"{where}: a collective, run in the interpreter", None))
                continue
            report = compiled.explain()
            report.source = [(n, text) for n, text in report.source if part.first_line <= n <= part.last_line]
            out.parts.append((where, report))
        return out


call_depth.entry_code = CompiledFunction.__call__.__code__


HOPELESS_AFTER = 3  # compile failures with one reason for this many keys: the function stays interpreted
MAX_FAILURE_REASONS = 16


def _left(deadline: float | None) -> float | None:
    """Seconds until `deadline` (time.monotonic), none below zero; None for no deadline."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _relaxation(facts: list[tuple]) -> Any:
    """How to generalize one argument from its profiled (type, dtype, shape, value) facts."""
    if len(facts) < 2:
        return None
    if all(f[0] is float for f in facts) or all(f[0] is int for f in facts):
        return True
    if len({f[0] for f in facts}) == 1 and facts[0][0] in (list, tuple):  # lists of token ids, say
        return True
    if all(f[0] is np.ndarray for f in facts) and len({(f[1], len(f[2])) for f in facts}) == 1:
        shapes = [f[2] for f in facts]
        return frozenset(d for d in range(len(shapes[0])) if len({s[d] for s in shapes}) > 1) or None
    return None


def _source_of(fn: Callable) -> tuple[str, list[tuple[int, str]]]:
    """The function's file and its numbered source lines (none when the source is not available)."""
    code = fn.__code__  # the code that runs, never __wrapped__
    first = code.co_firstlineno
    lines = source.source_lines(code, fn.__globals__)[first - 1:]
    if lines:
        lines = inspect.getblock(lines)
    return code.co_filename, [(first + i, text.rstrip("\n")) for i, text in enumerate(lines)]


def compile(fn: Callable | None = None, *, config: Config | None = None, **options: Any):
    """Compile `fn` speculatively; usable as `compile(fn)`, `@compile` or `@compile(backend="cpu", ...)`.

    Options are the fields of `pyfront.Config` (profile_calls, max_variants, backend, passes, ...).
    """
    configured = config is not None or bool(options)
    if config is None:
        config = Config(**options)
    elif options:
        raise TypeError("pass either config= or keyword options, not both")
    if fn is None:
        return lambda f: _compiled(f, config, configured)
    return _compiled(fn, config, configured)


def _compiled(target: Callable, config: Config, configured: bool) -> Any:
    """`target` compiled; a static or class method object stays one, and compiling a compiled
    function again returns it (its variants), unless options ask for another configuration."""
    if isinstance(target, CompiledFunction) and (not configured or target.config == config):
        return target
    if isinstance(target, (staticmethod, classmethod)):
        return type(target)(_compiled(target.__func__, config, configured))
    return CompiledFunction(target, config)


def wait(*fns: Any, timeout: float | None = None) -> bool:
    """Block until the variants of `fns` (functions returned by `pyfront.compile`, or bound methods
    of them) that compile in the background are ready, at most `timeout` seconds in all. True
    when none is left compiling.

    With the default `Config.wait_for_compile="never"`, a call that needs a new variant
    runs in the interpreter while IREE compiles it on a background thread. A benchmark that
    wants to time compiled calls only waits first:

        step = pyfront.compile(train_step)
        for _ in range(3):      # profiled, then the compile starts
            step(x, y)
        pyfront.wait(step)      # compiled calls from here on
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    done = True
    for fn in fns:
        target = getattr(fn, "__func__", fn)
        if not isinstance(target, CompiledFunction):
            raise TypeError(f"wait() needs functions returned by pyfront.compile, got {type(fn).__name__}")
        done = target.wait(_left(deadline)) and done
    return done


def explain(fn: Any, *args: Any, **kwargs: Any) -> Report:
    """What the compiler did with `fn` (a function returned by `pyfront.compile`, or a bound method of one).

    With arguments, `fn` may be any callable `compile` accepts: `explain(fn, *args, **kwargs)`
    calls it once in the interpreter (profiled), attempts the compile for those arguments at
    once, without running compiled code, and reports every blocker the attempt found:

        report = pyfront.explain(train_step, x, y)
        for b in report.blockers:
            print(b.site, b.construct, b.reason, b.hint)
    """
    target = getattr(fn, "__func__", fn)
    if args or kwargs:
        if isinstance(target, CompiledFunction):
            receiver = getattr(fn, "__self__", None)
            return target.explain_call((receiver, *args) if target is not fn else args, kwargs)
        return compile(fn).explain_call(args, kwargs)
    if not isinstance(target, CompiledFunction):
        raise TypeError(f"explain() needs a function returned by pyfront.compile, got {type(fn).__name__}")
    return target.explain()
