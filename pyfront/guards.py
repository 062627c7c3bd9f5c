"""Entry guards: host-side checks of what a compiled variant assumed.

Argument types/dtypes/shapes/values are covered by the dispatch key
(specialize.py). The guards here cover the rest of the Python state the graph
depends on: the identity of globals, closure cells and module or class
attributes that were compiled as constants, and the type/dtype/shape of state
(attributes, globals) that the compiled code reads at call time, and that objects
written through deferred stores alias each other as at compile time. And the
in-graph guards that the `hoist-entry-guards` pass moved out of the graph
because they only read the shapes of the compiled function's inputs
(`ShapeGuard`: checked on the host once the inputs are read, before the call).
And NumPy's floating-point error state (`fp_errstate_supported`): compiled
code detects divide/overflow/invalid events (guard-fp-events) but not
underflow, so it may only run when underflow is ignored.
"""

from __future__ import annotations

import collections
import functools
import inspect
import keyword
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront.dialects.state_path import Path
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.layout import c_ordered
from pyfront.runtime.guarded_reads import SourceNames, guard_lambda
from pyfront.runtime.host_draws import bit_generator_type
from pyfront.specialize import (ArraySpec, ConstSpec, GeneratorSpec, HasAttrSpec, KeysSpec, LengthSpec, ObjectSpec,
                                OwnAttrSpec, ScalarSpec, Spec)

MISSING = object()


@dataclass(frozen=True, eq=False)
class IdentityGuard:
    """`container[name]` (a dict) or `getattr(container, name)` or a cell's contents is `expected`;
    "static": the attribute as stored, without running descriptors (a classmethod object, whose
    `getattr` is a new bound method each time)."""

    kind: str  # "item" | "attr" | "static" | "cell"
    container: Any
    name: str
    expected: Any
    site: str

    def holds(self) -> bool:
        return self.check()

    @functools.cached_property
    def check(self) -> Callable[[], bool]:
        """`holds`, its kind decided once (entry checks run it on every call)."""
        container, name, expected = self.container, self.name, self.expected
        if self.kind == "item":
            get = container.get
            return lambda: get(name, MISSING) is expected
        if self.kind == "attr":
            return lambda: getattr(container, name, MISSING) is expected
        if self.kind == "static":
            return lambda: inspect.getattr_static(container, name, MISSING) is expected

        def cell_holds() -> bool:
            try:
                return container.cell_contents is expected
            except ValueError:  # empty cell
                return False
        return cell_holds

    def condition(self, names: SourceNames) -> str:
        """A Python expression that is true where `holds()` is, and false or raising where not
        (runtime/guarded_reads.py inlines it; a raising read falls back to the guards one by one)."""
        container, name, expected = names(self.container), self.name, names(self.expected)
        if self.kind == "cell":
            return f"{container}.cell_contents is {expected}"
        if self.kind == "item" and self.expected is not MISSING and type(self.container) is dict:  # (no .get override)
            return f"{container}[{names(name)}] is {expected}"
        if self.kind == "attr" and self.expected is not MISSING and name.isidentifier() and not keyword.iskeyword(name):
            return f"{container}.{name} is {expected}"
        return f"{names(self.check)}()"

    def describe(self) -> str:
        what = {"item": f"global {self.name!r}", "attr": f"attribute {self.name!r}",
                "static": f"attribute {self.name!r}", "cell": f"closure variable {self.name!r}"}
        return f"{what[self.kind]} is the same object as at compile time"


def first_changed(guards: list[IdentityGuard]) -> Callable[[], IdentityGuard | None]:
    """A function returning the first of `guards` (in order) that fails now, or None.

    Built once per variant. The guards that read plain attributes or dict items
    of one container (and expect one, not its absence) are read together, by one
    `operator.attrgetter` or `operator.itemgetter` call, and compared by identity in C; only when one of
    those reads fails or raises are the guards checked one by one, in order (the
    one reported, and any exception, are then exactly as without batching).
    """
    def batched(g: IdentityGuard) -> bool:  # (a guarded absence, e.g. of a builtin's name in globals, would raise)
        return g.kind in ("attr", "item") and g.expected is not MISSING

    grouped: dict[tuple[str, int], list[IdentityGuard]] = {}
    for g in guards:
        if batched(g):
            grouped.setdefault((g.kind, id(g.container)), []).append(g)
    batches, singles = [], [g.check for g in guards if not batched(g)]
    for (kind, _), group in grouped.items():
        if len(group) == 1:  # (a getter of one name returns the value, not a tuple)
            singles.append(group[0].check)
            continue
        names = [g.name for g in group]
        getter = operator.attrgetter(*names) if kind == "attr" and not any("." in n for n in names) else (
            operator.itemgetter(*names) if kind == "item" else None)
        if getter is None:
            singles.extend(g.check for g in group)
        else:
            batches.append((getter, group[0].container, tuple(g.expected for g in group)))

    def all_hold() -> bool:
        for read, container, expected in batches:
            if not all(map(operator.is_, read(container), expected)):
                return False
        for holds in singles:
            if not holds():
                return False
        return True

    def first_failure() -> IdentityGuard | None:
        try:
            if all_hold():
                return None
        except Exception as e:  # noqa: BLE001 - a missing name or a raising read: checked one by one below
            reraise_if_asynchronous(e)
        return next((g for g in guards if not g.check()), None)

    return first_failure


@dataclass(frozen=True, eq=False)
class StateGuard:
    """The value at `path`, read at call time, matches `spec` (arrays: dtype and shape)."""

    path: Path
    spec: Spec
    site: str

    def holds_for(self, value: Any) -> bool:
        return self.check(value)

    @functools.cached_property
    def check(self) -> Callable[[Any], bool]:
        """`holds_for`, compiled once (entry checks run it on every call)."""
        return guard_lambda(self.condition, f"<pyfront state guard at {self.site}>")

    def condition(self, value: str, names: SourceNames) -> str:
        """`holds_for` as a Python expression over the variable `value` (runtime/guarded_reads.py
        inlines it in a variant's entry reads); `names(obj)` is how it refers to an object."""
        s = self.spec
        if isinstance(s, ArraySpec):  # (a contiguous array is C-ordered without a call)
            return (f"(type({value}) is {names(np.ndarray)} and {value}.dtype == {names(s.dtype)} "
                    f"and {value}.shape == {names(s.shape)} "
                    f"and ({value}.flags.c_contiguous or {names(c_ordered)}({value})))")
        if isinstance(s, (ObjectSpec, ScalarSpec)):
            if s.type is int:
                return f"(type({value}) is int and {-2 ** 63} <= {value} < {2 ** 63})"
            return f"type({value}) is {names(s.type)}"
        if isinstance(s, ConstSpec):
            return f"{value} is {names(s.value)}"
        return f"{names(self._holds_for_other)}({value})"

    @functools.cached_property
    def _holds_for_other(self) -> Callable[[Any], bool]:
        """`holds_for` of the specs `condition` does not inline."""
        s = self.spec
        if isinstance(s, LengthSpec):
            length = s.length
            return lambda v: container_type(v) in (list, tuple) and len(v) == length
        if isinstance(s, KeysSpec):
            keys = s.keys
            return lambda v: container_type(v) is dict and len(v) == len(keys) and all(
                type(a) is type(b) and a == b for a, b in zip(v, keys))
        if isinstance(s, HasAttrSpec):
            name, present = s.name, s.present
            return lambda v: has_plain_attr(v, name) is present
        if isinstance(s, OwnAttrSpec):
            name, present = s.name, s.present
            return lambda v: (name in getattr(v, "__dict__", {})) is present
        if isinstance(s, GeneratorSpec):
            cls, bits = s.type, s.bit_generator
            return lambda v: type(v) is cls and bit_generator_type(v) is bits
        return lambda v: False

    def describe(self) -> str:
        s = self.spec
        if isinstance(s, ArraySpec):
            return f"{self.path} is a C-ordered ndarray of {s.dtype} {s.shape}"
        if isinstance(s, (ObjectSpec, ScalarSpec)):
            return f"{self.path} is a {s.type.__name__}"
        if isinstance(s, LengthSpec):
            return f"len({self.path}) is {s.length}"
        if isinstance(s, KeysSpec):
            return f"{self.path} has keys {list(s.keys)!r}"[:100]
        if isinstance(s, HasAttrSpec):
            return f"hasattr({self.path}, {s.name!r}) is {s.present}"
        if isinstance(s, OwnAttrSpec):
            return f"{self.path} has {'an' if s.present else 'no'} instance attribute {s.name!r}"
        if isinstance(s, GeneratorSpec):
            bits = f" on {s.bit_generator.__name__}" if s.bit_generator is not None else ""
            return f"{self.path} is a {s.type.__name__}{bits}"
        return f"{self.path} is {s.value!r}"[:100]


_READ_METHODS = ("__getitem__", "__setitem__", "__delitem__", "__iter__", "__reversed__", "__len__", "__contains__",
                 "__getattribute__", "__getattr__", "keys", "values", "items", "get", "append", "extend", "insert",
                 "pop", "reverse", "copy", "__eq__", "__hash__")


def container_type(value: Any) -> type:
    """`dict` or `list` for the containers that read and write exactly as dicts and lists do
    (also OrderedDict, and subclasses that override none of their item or attribute access:
    `class Tree(list)`), else `type(value)`. The exact type is guarded where it is relied on."""
    cls = type(value)
    for base in (dict, list):
        if cls is base or cls is collections.OrderedDict and base is dict:
            return base
        if issubclass(cls, base):
            origin = collections.OrderedDict if issubclass(cls, collections.OrderedDict) else base
            if all(getattr(cls, m, None) is getattr(origin, m, None) for m in _READ_METHODS):
                return base
    return cls


def has_plain_attr(value: Any, name: str) -> bool | None:
    """`hasattr(value, name)` for an object without custom attribute access, found without
    running any of its code: True/False, or None when a data descriptor (e.g. a property)
    would decide (its getter may raise or have effects)."""
    attr = inspect.getattr_static(type(value), name, MISSING)
    if attr is not MISSING and hasattr(type(attr), "__set__"):
        return None
    return name in getattr(value, "__dict__", {}) or attr is not MISSING


@dataclass(frozen=True, eq=False)
class AliasGuard:
    """The objects at `paths` alias each other exactly as they did at compile time.

    Deferred stores give read-after-write by object identity (`p.h = x` then
    `q.h` sees x when `p is q`); the compiled graph is only right if the
    caller's objects are the same objects (or distinct ones) as at compile time.
    `groups[i] == groups[j]` iff the objects at `paths[i]` and `paths[j]` were one object.
    """

    paths: tuple[Path, ...]
    groups: tuple[int, ...]
    site: str

    def holds_for(self, values: list) -> bool:
        return _grouped_as(values, self.groups)

    def describe(self) -> str:
        return f"objects at {', '.join(map(str, self.paths))} alias as at compile time"[:160]


def _grouped_as(values: list, groups: tuple[int, ...]) -> bool:
    """Whether `values` are one object exactly where `groups` are equal."""
    first: dict[int, int] = {}
    for value, group in zip(values, groups):
        if first.setdefault(id(value), group) != group:
            return False
    return len(first) == len(set(groups))


@dataclass(frozen=True, eq=False)
class BufferGuard:
    """The arrays at `paths` alias as at compile time, and those the call writes can be written.

    `groups` as in AliasGuard (one group per array object). A written array
    (`written[i]`) must not share memory with another group's array (overlapping
    views would see the write in NumPy but not in the graph) and must be writeable
    (NumPy raises ValueError otherwise). pyfront/buffers.py makes these."""

    paths: tuple[Path, ...]
    groups: tuple[int, ...]
    written: tuple[bool, ...]
    site: str

    def holds_for(self, values: list) -> bool:
        if not all(type(v) is np.ndarray for v in values) or not _grouped_as(values, self.groups):
            return False
        if not all(v.flags.writeable for v, w in zip(values, self.written) if w):
            return False
        pairs = self._checked_pairs
        if len(pairs) <= _PAIRWISE_MAX:
            return not any(np.may_share_memory(values[i], values[j]) for i, j in pairs)
        return not _written_overlap(values, self.groups, self.written)

    @functools.cached_property
    def _checked_pairs(self) -> list[tuple[int, int]]:
        """The pairs whose overlap matters: of two groups, at least one written."""
        n, groups, written = len(self.groups), self.groups, self.written
        return [(i, j) for i in range(n) for j in range(i + 1, n)
                if groups[i] != groups[j] and (written[i] or written[j])]

    def describe(self) -> str:
        return f"arrays at {', '.join(map(str, self.paths))} alias as at compile time, written ones writeable"[:160]


# Up to this many pairs, np.may_share_memory on each pair (~0.5 us) beats the sorted sweep
# of _written_overlap (~4 us per array, for its Python-level byte bounds). Measured, n arrays
# all written: n = 2: 0.7 vs 12.9 us; 8: 15 vs 39; 12: 27 vs 48; 16 (120 pairs): 61 vs 65.
_PAIRWISE_MAX = 100


def _written_overlap(values: list, groups: tuple[int, ...], written: tuple[bool, ...]) -> bool:
    """Whether a written array's memory bounds overlap those of another group's array (what
    np.may_share_memory tests, pair by pair): one sweep over the arrays sorted by address."""
    spans = sorted((lo, hi, i) for i, (lo, hi) in enumerate(map(_extent, values)) if hi > lo)
    active: list[tuple[int, int]] = []  # (end, index) of the spans that reach the current start
    for lo, hi, i in spans:
        active = [(end, j) for end, j in active if end > lo]
        if any(groups[j] != groups[i] and (written[i] or written[j]) for _, j in active):
            return True
        active.append((hi, i))
    return False


def _extent(a: np.ndarray) -> tuple[int, int]:
    """[first byte, last byte + 1) of `a`'s elements (numpy.lib.array_utils.byte_bounds, faster)."""
    start = a.__array_interface__["data"][0]
    if a.size == 0:
        return start, start
    if a.flags.c_contiguous:
        return start, start + a.nbytes
    low = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)
    high = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0)
    return start + low, start + high + a.itemsize


# Shape guards hoisted out of the graph (passes/hoist_entry_guards.py) ------------

# An expression over the compiled function's inputs, as nested lists (JSON in the IR):
# ["dim", input index, axis] | ["const", int] | [predicate, a, b] | ["and", a, b].
SHAPE_PREDICATES = {
    "eq": operator.eq, "ne": operator.ne, "slt": operator.lt,
    "sle": operator.le, "sgt": operator.gt, "sge": operator.ge,
}


def evaluate_shape_expr(expr: list, inputs: list) -> int | bool:
    head = expr[0]
    if head == "dim":
        return inputs[expr[1]].shape[expr[2]]
    if head == "const":
        return expr[1]
    if head == "and":
        return evaluate_shape_expr(expr[1], inputs) and evaluate_shape_expr(expr[2], inputs)
    return SHAPE_PREDICATES[head](evaluate_shape_expr(expr[1], inputs), evaluate_shape_expr(expr[2], inputs))


# NumPy 2 keeps the np.errstate/np.seterr settings in a context variable whose value is
# replaced, never mutated, on each change: a value once checked stays right.
_ERRSTATE = getattr(getattr(getattr(np, "_core", None), "_multiarray_umath", None), "_extobj_contextvar", None)
_checked_errstate: list = []  # the last context-variable value seen with underflow ignored (held: ids stay unique)


def fp_errstate_supported() -> bool:
    """`np.geterr()["under"] == "ignore"` in the calling context (NumPy's default), cheaply.

    Compiled code only runs when no floating-point event it cannot detect
    would make NumPy warn, raise or call: every other setting of np.errstate
    is honoured by deopting when an event happened (the interpreter then
    behaves as NumPy does). About 0.1 us when the state did not change.
    """
    state = _ERRSTATE.get() if _ERRSTATE is not None else None
    if state is not None and _checked_errstate and _checked_errstate[0] is state:
        return True
    if np.geterr()["under"] != "ignore":
        return False
    if state is not None:
        _checked_errstate[:] = [state]
    return True


FP_ERRSTATE_REASON = ("np.seterr/np.errstate: underflow is not 'ignore' "
                      "(compiled code cannot detect floating-point underflow)")


@dataclass(frozen=True, eq=False)
class ShapeGuard:
    """An in-graph guard that only reads the inputs' shapes, checked on the host before the call.

    It fails exactly when the in-graph guard would (same condition on the same
    inputs) and is reported the same way (kind, site, reason): a deopt.
    """

    expr: list
    kind: str
    site: str
    reason: str

    def holds_for(self, inputs: list) -> bool:
        return bool(evaluate_shape_expr(self.expr, inputs))
