"""The profiler: runs a function in the interpreter and records what it saw.

For every profiled call it records each argument's type, dtype, shape and (for
Python scalars, bools, None, strings and tuples of these) value; per AST
site, the same facts about the values of global and closure names, attribute
reads, subscripts and calls; and the outcomes of every `if`, conditional
expression and `while` test. Sites are recorded by running an instrumented
copy of the function: its AST with each interesting expression wrapped in an
observer call that returns the value unchanged, compiled with the original
globals and closure cells, so the call has the interpreter's semantics.

Inside differentiated functions. Compiled code can differentiate only
speculated branches (autodiff/ir_ad.py), so the profiler also sees inside the
function `f` of each `pyfront.grad(f)` / `value_and_grad(f)` call the profiled
function makes, and inside the plain Python functions `f` calls, directly or
recursively: the callee of every call passes through a hook that swaps such a
function (or a GradFunction's `f`) for an instrumented copy recording into
`profile.callees[its code object]`. Other callees are called unchanged.

Size. A profiled call run with `count_events` also counts its `sys.setprofile`
events (`Profile.events`, from which pyfront/hotness.py expects how long
preparing a variant takes), unless a profiler is already installed: that one
is never displaced. Counting calls back into Python at every call and return,
built-in ones included (2-4x the call's time on bench's model programs), so
the caller asks for it only in the call whose count is read. The one trace
the count leaves: code that calls `sys.getprofile()` during such a call gets
pyfront's counter instead of None.
"""

from __future__ import annotations

import ast
import os
import sys
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyfront import call_depth, deep_ast
from pyfront.bounded import remember
from pyfront.errors import Unsupported
from pyfront.source import compile_in_scope, live_def
from pyfront.specialize import is_constant, key_of

_OBSERVER = "__pyfront_observe__"
_BRANCH = "__pyfront_branch__"
_INNER = "__pyfront_instrumented__"
_CALLEE = "__pyfront_callee__"
# The copy reaches its hooks through constants, not names: a name would be a
# free variable of the copy, and `locals()`, `vars()` and `dir()` show free
# variables. Each hook is compiled as `<placeholder>.__call__(...)` (a call of
# a constant itself is a SyntaxWarning) and its placeholder string, unique to
# this process, is then swapped for the hook in the code's constants.
_PLACEHOLDERS = {hook: f"{hook}{os.urandom(8).hex()}" for hook in (_OBSERVER, _BRANCH, _CALLEE)}
_MAX_VALUES = 8
# Modules whose work in a profiled call graph generation does not trace: the hooks (here and
# specialize's keys) and the import system (a first call's imports). The gradient tape's work
# counts: it grows with the backward pass, which graph generation builds too.
_NOT_COUNTED = ("pyfront.profiler", "pyfront.specialize", "importlib")
_MAX_COPIES = 64  # instrumented copies of differentiated callees kept


def describe_value(value: Any) -> tuple:
    """(type, dtype, shape, value) with value only for small immutable Python values."""
    t = type(value)
    if t is np.ndarray:
        return (t, value.dtype, value.shape, None)
    if isinstance(value, np.generic):
        return (t, value.dtype, (), None)
    if t in (int, float, bool, str, type(None)) or (t is tuple and len(value) <= 8 and all(
        type(v) in (int, float, bool, str, type(None)) for v in value
    )):
        return (t, None, None, value)
    if is_constant(value):  # functions, slices, dtypes...: as the dispatch key sees them (held alive)
        return (t, None, None, ("key", key_of(value)))
    return (t, None, None, ("id", id(value)))


@dataclass
class Observation:
    """What one argument or site produced over the profiled calls."""

    count: int = 0
    facts: Counter = field(default_factory=Counter)

    def add(self, value: Any) -> None:
        self.count += 1
        fact = describe_value(value)
        if fact in self.facts or len(self.facts) < _MAX_VALUES:
            self.facts[fact] += 1

    @property
    def stable(self) -> bool:
        """One type, dtype, shape and value (or identity) in every observation."""
        return len(self.facts) == 1

    def summary(self) -> str:
        parts = []
        for (t, dtype, shape, value), n in self.facts.most_common(3):
            if dtype is not None:
                parts.append(f"{t.__name__} {dtype}{list(shape) if shape else ''}")
            elif isinstance(value, tuple) and value[:1] in (("id",), ("key",)):
                parts.append(t.__name__)
            else:
                parts.append(f"{t.__name__} {value!r}"[:40])
        more = "" if len(self.facts) <= 3 else f" (+{len(self.facts) - 3} more)"
        return ", ".join(parts) + more


@dataclass
class Profile:
    calls: int = 0
    args: dict[int, Observation] = field(default_factory=dict)
    sites: dict[tuple, Observation] = field(default_factory=dict)  # site key -> observation
    branches: dict[tuple, Counter] = field(default_factory=dict)  # site key of the test -> outcomes
    instrumented: bool = True
    note: str = ""
    # sys.setprofile's events (calls and returns of Python functions and of built-in functions and
    # methods, but _NOT_COUNTED's) in the last profiled call: a measure of what graph generation
    # will trace (callees are not sites).
    # 0: not counted, because another profiler (a debugger, cProfile) was installed.
    events: int = 0
    # Functions called while being differentiated (see the module docstring), by code object.
    callees: dict[types.CodeType, Profile] = field(default_factory=dict)

    def site(self, node: ast.AST) -> Observation | None:
        return self.sites.get(_site_key(node))

    def branch(self, test: ast.AST) -> Counter | None:
        """How often the test expression `test` was true and false."""
        return self.branches.get(_site_key(test))


def _site_key(node: ast.AST) -> tuple:
    """Where `node` is in the source; nodes without a position (a comprehension's `for` clause)
    are never profiled sites and get the position of none."""
    return (getattr(node, "lineno", None), getattr(node, "col_offset", None), getattr(node, "end_lineno", None),
            getattr(node, "end_col_offset", None), type(node).__name__)


def _hook(name: str) -> ast.expr:
    return ast.Attribute(ast.Constant(_PLACEHOLDERS[name]), "__call__", ast.Load())


def _with_hooks(code: types.CodeType, hooks: dict[str, Any]) -> types.CodeType:
    """`code` (and the code nested in it) with each hook's placeholder constant replaced by the hook."""
    consts = tuple(
        hooks.get(c, c) if type(c) is str else _with_hooks(c, hooks) if isinstance(c, types.CodeType) else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


class _Instrument(ast.NodeTransformer):
    """Wrap observed expressions: `e` becomes `__pyfront_observe__(site, e)`."""

    def __init__(self, local_names: frozenset):
        self.local_names = local_names
        self.sites: list[tuple] = []

    def _wrap(self, node: ast.expr) -> ast.expr:
        key = _site_key(node)
        self.sites.append(key)
        call = ast.Call(_hook(_OBSERVER), [ast.Constant(key), node], [])
        return ast.copy_location(call, node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id not in self.local_names:
            return self._wrap(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        self.generic_visit(node)
        return self._wrap(node) if isinstance(node.ctx, ast.Load) else node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        return self._wrap(node) if isinstance(node.ctx, ast.Load) else node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        node.func = ast.copy_location(ast.Call(_hook(_CALLEE), [node.func], []), node.func)
        return self._wrap(node)

    def _wrap_test(self, node: ast.If | ast.IfExp | ast.While) -> ast.AST:
        key = _site_key(node.test)
        self.generic_visit(node)
        # The observer returns bool(test), so truth is evaluated exactly once, as in Python.
        node.test = ast.copy_location(
            ast.Call(_hook(_BRANCH), [ast.Constant(key), node.test], []), node.test
        )
        return node

    visit_If = visit_IfExp = visit_While = _wrap_test

    # Nested functions and lambdas have their own scopes; leave them alone.
    def visit_FunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node


def instrument(fn: types.FunctionType, profile: Profile, callee: Callable[[Any], Any]) -> Callable:
    """A copy of `fn` that records its sites into `profile`; same globals, closure and defaults.

    `callee(f)` gives what the copy calls when its code calls `f`.
    """
    from pyfront.graphgen import _assigned_names

    node = live_def(fn)
    node.decorator_list = []
    # A name of its own: with the function's name, the factory's local would
    # shadow the global that a recursive function calls itself through.
    node.name = _INNER
    with deep_ast.room_for(node, fn.__code__.co_filename):
        body_node = _Instrument(_assigned_names(node))
        for i, stmt in enumerate(node.body):
            node.body[i] = body_node.visit(stmt)
        inner = compile_in_scope(node, fn)
    inner = inner.replace(co_name=fn.__code__.co_name, co_qualname=fn.__code__.co_qualname)  # error messages

    def observe(key, value):
        obs = profile.sites.get(key)
        if obs is None:
            obs = profile.sites[key] = Observation()
        obs.add(value)
        return value

    def branch(key, test):
        outcome = bool(test)
        profile.branches.setdefault(key, Counter())[outcome] += 1
        return outcome

    inner = _with_hooks(inner, {_PLACEHOLDERS[_OBSERVER]: observe, _PLACEHOLDERS[_BRANCH]: branch,
                                _PLACEHOLDERS[_CALLEE]: callee})
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(cells[name] for name in inner.co_freevars)
    copy = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


# RecursionError: deep_ast's room was not enough; the call then runs uninstrumented.
_UNINSTRUMENTABLE = (Unsupported, SyntaxError, StopIteration, ValueError, KeyError, RecursionError)


class Profiler:
    """Profiles the first calls of one function.

    Instrumented copies are made from the source of each function's current
    code object (source.live_def) and take its current defaults at every call:
    a replaced `__code__` or `__defaults__` is never run stale.
    """

    def __init__(self, fn: types.FunctionType):
        self.fn = fn
        self.profile = Profile()
        # (function, its callee hook) -> (the code object it was instrumented for, its instrumented copy or None);
        # the profiled function and a differentiated call of it (recursion) record into different profiles.
        self._copies: dict[tuple, tuple[types.CodeType, Callable | None]] = {}

    def _instrumented(self, f: types.FunctionType, profile: Profile, callee: Callable[[Any], Any]) -> Callable:
        """An instrumented copy of `f` as it is now (or `f` itself, when it cannot be instrumented)."""
        entry = self._copies.get((f, callee))
        if entry is None or entry[0] is not f.__code__:
            try:
                entry = (f.__code__, instrument(f, profile, callee))
            except _UNINSTRUMENTABLE as e:
                entry = (f.__code__, None)
                if f is self.fn:
                    self.profile.instrumented = False
                    self.profile.note = f"site profiling unavailable: {e}"
            # Bounded: a closure made per call is a new function each time.
            remember(self._copies, (f, callee), entry, _MAX_COPIES)
        copy = entry[1]
        if copy is None:
            return f  # called as is; its branches stay unprofiled (not speculated)
        copy.__defaults__, copy.__kwdefaults__ = f.__defaults__, f.__kwdefaults__
        return copy

    def _grad_callee(self, f: Any) -> Any:
        """What the profiled function calls for `f`: a GradFunction over an instrumented copy of its function."""
        from pyfront.autodiff import GradFunction

        if type(f) is GradFunction and isinstance(f.fn, types.FunctionType):
            return f.with_fn(self._copy(f.fn))
        return f

    def _differentiated_callee(self, f: Any) -> Any:
        """What a function being differentiated calls for `f`: plain Python functions are instrumented too."""
        if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
            return types.MethodType(self._copy(f.__func__), f.__self__)
        if isinstance(f, types.FunctionType):
            return self._copy(f)
        return self._grad_callee(f)

    def _copy(self, f: types.FunctionType) -> Callable:
        return self._instrumented(f, self.profile.callees.setdefault(f.__code__, Profile()),
                                  self._differentiated_callee)

    def run(self, args: tuple, kwargs: dict, observed: tuple | None = None, count_events: bool = False) -> Any:
        """Run one call in the interpreter, recording arguments (`observed`: the call's canonical
        arguments, callables.positional, when they are not `args`) and sites; with `count_events`,
        its size too (`Profile.events`, else left as an earlier call counted it)."""
        self.profile.calls += 1
        for i, a in enumerate(args if observed is None else observed):
            self.profile.args.setdefault(i, Observation()).add(a)
        copy = self._instrumented(self.fn, self.profile, self._grad_callee)
        if not count_events:
            return call_depth.call_user(copy, args, kwargs)
        if sys.getprofile() is not None:  # never displace the user's profiler
            self.profile.events = 0
            return call_depth.call_user(copy, args, kwargs)
        events, counted = [0], {}  # id(a frame's globals) -> whether its events count

        def count(frame, event, arg) -> None:
            module = frame.f_globals
            counts = counted.get(id(module))
            if counts is None:
                counts = counted[id(module)] = not str(module.get("__name__")).startswith(_NOT_COUNTED)
            if counts:
                events[0] += 1

        sys.setprofile(count)
        try:
            return call_depth.call_user(copy, args, kwargs)
        finally:
            if sys.getprofile() is count:  # (the function may have installed its own)
                sys.setprofile(None)
            self.profile.events = events[0]
