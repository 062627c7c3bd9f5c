"""One compiled variant of a function, and the steps of a compiled call.

A call through a variant (JANUS Figure 2): check the entry guards on the host,
read the state inputs at call time, make the call's random draws on the host
(runtime/host_draws.py), invoke the IREE function, check the in-graph guard
flags, and only then commit deferred stores and build the result. Any failed
check returns a `Deopt` before anything was mutated (the draws undone), so
the caller can re-run the call in the interpreter from its start.

What each output of the IREE function becomes (`_modes`, see
iree_backend's docstring): arrays that a deferred store commits to Python
state are device-resident when `device_state` is on (the next call that reads
them passes their buffer back without an upload), the guard flags and the
values the result or a print shows are copies, and outputs that nothing
reads (the `store:` output of a path whose commit tree names another output)
are not copied at all.

What a call can derive from the variant alone is derived once, when the
variant is built (`__post_init__`), not per call: one generated function that
checks its entry guards and reads its inputs, each path prefix once
(runtime/guarded_reads.py; where it finds a failure, the guards checked one by
one, with their readers (results.make_resolver), say which), a builder per result, print, store
and written-array tree (results.tree_builder), each output's mode, and which
effects are warnings that could raise. A call then only reads what can change:
the state behind the paths, the guards' objects, the outputs.

Result storage (passes/bind_result_storage.py): after a commit, the array each
bound state slot held before it (the call's input of that path) is kept, one
per storage argument, and handed to the next call as that result's storage
candidate; the backend uses its buffer only if nothing else can reach it
(runtime/result_storage.py). A steady training loop thus alternates between
two buffers per parameter. The kept arrays live as long as the variant.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyfront.dialects.state_path import Path, draw_index
from pyfront.runtime.deferred_warnings import DeferredWarning
from pyfront.runtime.guarded_reads import guarded_reader, path_writer
from pyfront.runtime.host_draws import DrawFailed, Drawn, HostDraws
from pyfront.runtime.iree_backend import COPY, RESIDENT, UNUSED, DeviceLost
from pyfront.runtime.results import (
    CallValues,
    Output,
    Stored,
    leaves,
    make_resolver,
    outputs_getter,
    tree_builder,
)

from pyfront.guards import AliasGuard, BufferGuard, IdentityGuard, StateGuard, first_changed
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.layout import laid_out

_USE_CLOCK = itertools.count()  # next() is atomic: concurrent calls never share a tick


@dataclass(frozen=True)
class Deopt:
    """Why a compiled call gave up; `site` and `kind` name the failed assumption."""

    kind: str
    site: str
    reason: str
    # A failed floating-point check ("fp-error") on a call whose inputs held NaN or inf, which the
    # deferred checks cannot tell from an event (pyfront/api.py: relaxing to per-op checks can help).
    nonfinite_inputs: bool = False


@dataclass(frozen=True)
class Pending:
    """What a call would do, not done (`Variant.run(commit=False)`): for verified calls (runtime/verify.py)."""

    result: Any
    printed: list  # (values, print keyword arguments or DeferredWarning) per effect, in order
    stores: list  # (path, value) per deferred store, in commit order
    written: list = field(default_factory=list)  # (path, new contents) per input array written into
    appended: list = field(default_factory=list)  # (the list's path, the list, item) per append, in order
    drawn: list = field(default_factory=list)  # (generator, its state after the call's draws), undone since


@dataclass
class GuardInfo:
    kind: str
    site: str
    reason: str
    failures: int = 0
    where: str = "in-graph"


@dataclass
class Variant:
    """A compiled specialization: its guards, how to feed it and how to read its results."""

    fn: Any
    key: Any
    func_name: str
    invoke: Callable[[list], list]
    input_paths: list[str]
    output_paths: list[str]
    result_tree: Any
    identity_guards: list[IdentityGuard]
    state_guards: list[StateGuard]
    graph_guards: list[GuardInfo]
    pyfront_ir: str
    compile_seconds: float
    cache_hit: bool
    # Deferred prints and warnings, in program order: (args tree, print keyword arguments or DeferredWarning).
    effects: list = field(default_factory=list)
    commits: list = field(default_factory=list)  # deferred stores in program order: (path, value tree)
    appends: list = field(default_factory=list)  # deferred appends to lists in state: (the list's path, item tree)
    mutations: list = field(default_factory=list)  # written input arrays: (path, tree of their new contents)
    hoisted_guards: list = field(default_factory=list)  # (GuardInfo, guards.ShapeGuard): checked on the inputs
    device_state: bool = False  # committed arrays stay in device buffers (Config.device_state)
    fp_checks_per_op: bool = False  # guard-fp-events checked each op exactly (not deferred)
    # Its graph can make a NaN or inf NumPy reports no event for (jit._makes_quiet_nonfinite; pyfront/api.py).
    quiet_nonfinite: bool = False
    storage: list = field(default_factory=list)  # bind-result-storage: [output, input of its path] per storage argument
    merged_stores: dict = field(default_factory=dict)  # bind-result-storage: path -> the output it shares
    draws: list = field(default_factory=list)  # host_draws.HostDraw per random draw, in program order
    draw_taken: dict = field(default_factory=dict)  # per draw in a branch: result tree of whether it ran
    inlined_frames: int = 0  # Python frames CPython would nest below the function (call_depth.has_room)
    approximate_dtype: Any = None  # primitives.approximate_dtype of the graph: how close its floats are to NumPy's
    relayouts: tuple = ()  # (result n, axis permutation): results the host lays out in NumPy's order (layout.py)
    calls: int = 0
    # When the variant last ran a call (or was compiled): the least recent is evicted first.
    last_used: int = field(default_factory=lambda: next(_USE_CLOCK))
    # A guard that fails on data suspends the variant for a while (pyfront/api.py, SUSPEND_CALLS):
    strikes: int = 0  # such failures since it last ran again
    fp_errors: int = 0  # failed floating-point checks that NaN or inf inputs or constants may explain (api.py)
    suspensions: int = 0
    suspended_until: int = 0  # the function's call count from which it is tried again
    suspension: str = ""  # why, for the calls it sends to the interpreter meanwhile
    speed_trial: Any = None  # pyfront/speed_trial.py's timings, until compiled code is found the faster
    _inputs: list = field(default_factory=list, repr=False)
    _draw_inputs: list = field(default_factory=list, repr=False)  # (input position, draw number)
    _host_draws: HostDraws | None = field(default=None, repr=False)
    _first_changed: Any = field(default=None, repr=False)  # guards.first_changed of identity_guards
    _read_guarded: Any = field(default=None, repr=False)  # guarded_reads.guarded_reader: entry guards and inputs
    _state_checks: list = field(default_factory=list, repr=False)  # (resolver, StateGuard.holds_for, guard)
    _alias_checks: list = field(default_factory=list, repr=False)
    _commits: list = field(default_factory=list, repr=False)  # the value tree per store, in commit order
    _commit_paths: list = field(default_factory=list, repr=False)
    _mutations: list = field(default_factory=list, repr=False)  # (resolver, tree) per written input array
    _store_index: dict = field(default_factory=dict, repr=False)
    _result_index: list = field(default_factory=list, repr=False)
    _guard_index: int | None = None
    _modes: tuple = ()  # per output: iree_backend.COPY, RESIDENT or UNUSED
    _resolvers: dict = field(default_factory=dict, repr=False)  # Path -> getter, built on first use
    # [the arrays the last commit displaced, per storage argument (None: none)], or []: taken by one call.
    _spares: list = field(default_factory=list, repr=False)
    _displaced: list = field(default_factory=list, repr=False)  # per storage argument: its input index, or None
    # Built once from the trees above (results.tree_builder): what a call runs to make its values.
    _effect_builders: list = field(default_factory=list, repr=False)  # (builder, options) per effect
    _commit_builders: list = field(default_factory=list, repr=False)  # builder per store
    _committed_arrays: Any = field(default=None, repr=False)  # results.outputs_getter of the stores, if all arrays
    _write_stores: Any = field(default=None, repr=False)  # guarded_reads.path_writer of the stores' paths
    _mutation_builders: list = field(default_factory=list, repr=False)  # (resolver, builder) per written array
    _draw_taken_builders: list = field(default_factory=list, repr=False)  # (draw index, builder) per draw in a branch
    _result_builder: Any = field(default=None, repr=False)
    _warnings: list = field(default_factory=list, repr=False)  # the effects that are DeferredWarnings

    def __post_init__(self) -> None:
        fn = self.fn
        self._draw_inputs = [(i, draw_index(p)) for i, p in enumerate(self.input_paths) if draw_index(p) is not None]
        drawn_inputs = {i for i, _ in self._draw_inputs}
        self._inputs = [_drawn_later if i in drawn_inputs else make_resolver(Path.parse(p), fn)
                        for i, p in enumerate(self.input_paths)]
        self._host_draws = HostDraws(self.draws, fn, frozenset(self.draw_taken))
        self._first_changed = first_changed(self.identity_guards)
        self._state_checks = [(make_resolver(g.path, fn), g.holds_for, g) for g in self.state_guards
                              if isinstance(g, StateGuard)]
        self._alias_checks = [([make_resolver(p, fn) for p in g.paths], g) for g in self.state_guards
                              if isinstance(g, (AliasGuard, BufferGuard))]
        self._read_guarded = guarded_reader(
            fn, self.identity_guards, [g for g in self.state_guards if isinstance(g, StateGuard)],
            [(g.paths, g.holds_for) for _, g in self._alias_checks],
            [None if i in drawn_inputs else Path.parse(p) for i, p in enumerate(self.input_paths)])
        for i, p in enumerate(self.output_paths):
            if p == "guards":
                self._guard_index = i
            elif p.startswith("store:"):
                self._store_index[p[6:]] = i
            else:
                self._result_index.append(i)
        self._store_index.update(self.merged_stores)
        # What each store commits: the graph generator's tree (which keeps the
        # identity of stored arguments, views and returned arrays), else the output.
        trees = dict(self.commits)
        order = [p for p, _ in self.commits] + [p for p in self._store_index if p not in trees]
        self._commits = [trees.get(p, Stored(p)) for p in order]
        self._commit_paths = order
        self._write_stores = path_writer([Path.parse(p) for p in order], fn)
        self._mutations = [(make_resolver(Path.parse(p), fn), tree) for p, tree in self.mutations]
        self._modes = self._output_modes()
        # A storage argument is offered the array that the slot held before the
        # last commit (the call's input of that path), when the output it
        # stores is committed as a device-resident array.
        self._displaced = [k if self._modes[j] == RESIDENT else None for j, k in self.storage]
        self._effect_builders = [(self._builder(tree), options) for tree, options in self.effects]
        self._commit_builders = [self._builder(tree) for tree in self._commits]
        self._committed_arrays = outputs_getter(self._commits, self._result_index, self._store_index)
        self._mutation_builders = [(target, self._builder(tree)) for target, tree in self._mutations]
        self._append_builders = [(make_resolver(Path.parse(p), fn), self._builder(tree)) for p, tree in self.appends]
        self._draw_taken_builders = [(k, self._builder(tree)) for k, tree in self.draw_taken.items()]
        self._result_builder = self._builder(self.result_tree)
        self._warnings = [w for _, w in self.effects if isinstance(w, DeferredWarning)]

    def _builder(self, tree: Any) -> Callable[[CallValues], Any]:
        return tree_builder(tree, self._result_index, self._store_index, self.resolver)

    def _output_modes(self) -> tuple:
        def key(leaf) -> tuple:
            return ("out", leaf.index) if isinstance(leaf, Output) else ("store", leaf.path)

        committed = self._commits
        state = {key(x) for tree in committed for x in leaves(tree) if x.pytype is np.ndarray}
        written = [tree for _, tree in self.mutations]  # copied into the caller's arrays: host memory
        read = {key(x) for tree in [self.result_tree, *committed, *written, *(t for t, _ in self.effects),
                                    *(t for _, t in self.appends), *self.draw_taken.values()]
                for x in leaves(tree)}
        resident = RESIDENT if self.device_state else COPY
        keys: dict[int, set] = {}  # output -> the leaves it is
        for p, i in self._store_index.items():
            keys.setdefault(i, set()).add(("store", p))
        for n, i in enumerate(self._result_index):
            keys.setdefault(i, set()).add(("out", n))
        relaid = {self._result_index[n] for n, _ in self.relayouts}  # host copies, never resident
        modes = []
        for i in range(len(self.output_paths)):
            k = keys.get(i, set())
            modes.append(COPY if i == self._guard_index or i in relaid else resident if k & state
                         else COPY if k & read else UNUSED)
        return tuple(modes)

    def enter(self, args: tuple) -> Deopt | list:
        """The call's input values (None for a random draw's) if every entry guard holds for `args`,
        else the first entry guard (identity, state, alias) that fails, or the read that raised.

        Reads state only: nothing runs and nothing is mutated, so a dispatcher may
        try several variants' entry guards before running one (pyfront/variant_group.py).
        """
        inputs = self._read_guarded(args)
        if inputs is not None:
            return inputs
        failure = self.entry_failure(args)
        if failure is not None:
            return failure
        try:  # every guard holds, yet a read raised: the inputs' own reads say which
            return [resolve(args) for resolve in self._inputs]
        except Exception as e:  # noqa: BLE001 - nothing ran: the interpreter answers
            reraise_if_asynchronous(e)
            return self._failed(e)

    def entry_failure(self, args: tuple) -> Deopt | None:
        """The first entry guard (identity, state, alias) that fails for `args`, or None, checked one by one."""
        changed = self._first_changed()
        if changed is not None:
            return Deopt("state", changed.site, f"changed: {changed.describe()}")
        for resolve, holds_for, g in self._state_checks:
            try:
                value = resolve(args)
            except Exception as e:  # noqa: BLE001 - the interpreter will raise it properly
                reraise_if_asynchronous(e)
                return Deopt("state", g.site, f"reading {g.path} raised {type(e).__name__}")
            if not holds_for(value):
                return Deopt("state", g.site, f"assumption failed: {g.describe()}")
        for resolvers, g in self._alias_checks:
            try:
                values = [resolve(args) for resolve in resolvers]
            except Exception as e:  # noqa: BLE001
                reraise_if_asynchronous(e)
                return Deopt("state", g.site, f"reading state raised {type(e).__name__}")
            if not g.holds_for(values):
                return Deopt("state", g.site, f"assumption failed: {g.describe()}")
        return None

    @property
    def input_resolvers(self) -> list:
        """Per input path, a function from the call's arguments to its value (None for a draw's path)."""
        return self._inputs

    def resolver(self, path: str | Path) -> Callable[[tuple], Any]:
        """A function from the call's arguments to the value at `path` (cached)."""
        parsed = Path.parse(path) if isinstance(path, str) else path
        getter = self._resolvers.get(parsed)
        if getter is None:
            getter = self._resolvers[parsed] = make_resolver(parsed, self.fn)
        return getter

    def run(self, args: tuple, inputs: list | None = None, commit: bool = True) -> Any:
        """Run the call; `inputs`: what `enter(args)` has just returned, if the caller called it.

        `commit=False`: print and store nothing, return a `Pending` (or a `Deopt`). Either way
        the call's random draws are undone, so the interpreter, running the call next, makes them.
        """
        if inputs is None:
            inputs = self.enter(args)
            if isinstance(inputs, Deopt):
                return inputs
        try:
            drawn = self._host_draws.take(args)
        except DrawFailed as e:
            return Deopt("state", e.draw.site, e.reason)
        try:
            outcome = self._run_drawn(args, inputs, drawn, commit)
        except BaseException:
            drawn.restore()  # (an interrupt: the call did not happen)
            raise
        if isinstance(outcome, (Deopt, Pending)):
            drawn.restore()
        return outcome

    def _run_drawn(self, args: tuple, inputs: list, drawn: Drawn, commit: bool) -> Any:
        """`run` once the call's random draws are made (`drawn`)."""
        try:
            for i, k in self._draw_inputs:
                inputs[i] = drawn.values[k]
            for info, g in self.hoisted_guards:  # in-graph guards moved to the host: the same deopt
                if not g.holds_for(inputs):
                    info.failures += 1
                    return Deopt(g.kind, g.site, g.reason)
            # A function whose results are all inputs, views or constants needs no device call.
            storage = _take(self._spares)
            outputs = self.invoke(inputs, self._modes, storage) if self.output_paths else []
        except DeviceLost as e:  # not the variant's failure: the next call runs it on a new device
            return Deopt("device-lost", self.func_name, str(e)[:300])
        except Exception as e:  # noqa: BLE001 - nothing was committed: the interpreter answers
            reraise_if_asynchronous(e)  # the caller's, not a failure of the compiled code
            return self._failed(e)
        if self._guard_index is not None:
            flags = outputs[self._guard_index]
            if not all(flags.tolist()):  # (ndarray.all costs several times more on a few flags)
                failed = [self.graph_guards[i] for i in np.flatnonzero(flags == 0)]
                for g in failed:
                    g.failures += 1
                g = failed[0]
                return Deopt(g.kind, g.site, g.reason, g.kind == "fp-error" and any(map(_holds_nonfinite, inputs)))
        raising = next((w for w in self._warnings if w.would_raise()), None)
        if raising is not None:  # the interpreter raises it mid-call, after the effects before it
            return Deopt("raise", raising.site, f"the warnings filters turn {raising.category.__name__} "
                                                f"{raising.message!r} into an exception")
        # Everything is read before anything is written: a tree's inputs are the
        # objects the call started with (stores rebind, they never mutate), and
        # prints show their values in program order.
        for n, permutation in self.relayouts:
            i = self._result_index[n]
            outputs[i] = laid_out(outputs[i], permutation)
        call = CallValues(args, outputs)
        if self._draw_taken_builders:
            wrong = drawn.settle({k: build(call) for k, build in self._draw_taken_builders})
            if wrong is not None:
                draw = self.draws[wrong]
                return Deopt("state", draw.site, f"{draw.text} drew after a draw in a branch that did not run")
        printed = [(build(call), options) for build, options in self._effect_builders]
        if self._committed_arrays is not None:  # every store commits an output array: one C call
            committed = list(self._committed_arrays(outputs))
        else:
            committed = [build(call) for build in self._commit_builders]
        # Written input arrays: the objects the call started with, and their new contents.
        written = [(target(args), build(call)) for target, build in self._mutation_builders]
        appended = [(target(args), build(call)) for target, build in self._append_builders]
        result = self._result_builder(call)
        if not commit:
            stores = list(zip(self._commit_paths, committed))
            # The printed values as they are now: the interpreter, run next, may write into them.
            return Pending(result, copy.deepcopy(printed), stores,
                           written=[(p, v) for (p, _), (_, v) in zip(self.mutations, written)],
                           appended=[(p, lst, v) for (p, _), (lst, v) in zip(self.appends, appended)],
                           drawn=drawn.states_after())
        for values, options in printed:
            if isinstance(options, DeferredWarning):
                options.issue()
            else:
                print(*values, **options)
        for array, contents in written:
            np.copyto(array, contents)
        self._write_stores(args, committed)
        for lst, item in appended:
            lst.append(item)
        if self._displaced and not self._spares:  # offered as storage next call; only_the_callers decides
            self._spares.append([None if k is None or type(inputs[k]) is not np.ndarray else inputs[k]
                                 for k in self._displaced])
        self.calls += 1
        self.last_used = next(_USE_CLOCK)
        return result

    def _failed(self, e: Exception) -> Deopt:
        return Deopt("runtime", self.func_name, f"the compiled code failed ({type(e).__name__}: {e})"[:300])

    def describe_guards(self) -> list[str]:
        lines = [f"{g.site}: {g.describe()}" for g in self.identity_guards]
        lines += [f"{g.site}: {g.describe()}" for g in self.state_guards]
        lines += [f"{g.site}: [{g.kind}] {g.reason} ({g.where}, failed {g.failures}x)" for g in self.graph_guards]
        return lines


def _drawn_later(args: tuple) -> None:
    """The resolver of a random draw's input: the call's draw gives the value (Variant.run)."""
    return None


def _holds_nonfinite(x: Any) -> bool:
    """Whether input value `x` is or holds a float NaN or infinity."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and not np.isfinite(x).all()
    return isinstance(x, float | complex | np.inexact) and not np.isfinite(x)


def _take(spare: list):
    """The list's item, or None; list.pop is atomic, so concurrent calls never share it."""
    try:
        return spare.pop()
    except IndexError:
        return None
