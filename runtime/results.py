"""Result trees and access paths at call time.

The graph generator describes a function's return value as a tree: leaves
are compiled outputs (boxed to the exact Python type the interpreter returns),
inputs returned as themselves (identity preserved), constants, and views
replayed on the host from their base (so aliasing is NumPy's own).
`tree_builder` turns a tree, once per variant, into a function of one call's
values, so a call builds its results without walking the tree's node types.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyfront.dialects.state_path import Path


@dataclass(frozen=True, eq=False)
class Const:
    value: Any


@dataclass(frozen=True, eq=False)
class Input:
    path: Path


@dataclass(frozen=True, eq=False)
class Output:
    index: int
    pytype: type


@dataclass(frozen=True, eq=False)
class ViewOf:
    base: Any
    replay: Callable[[Any], Any]


@dataclass(frozen=True, eq=False)
class Node:
    kind: type
    items: tuple


@dataclass(frozen=True, eq=False)
class Either:
    """`then` where the bool that `taken` builds holds, `orelse` where not (a value that is the
    caller's object on one path of a branch and a new array on another)."""

    taken: Any
    then: Any
    orelse: Any


@dataclass(frozen=True, eq=False)
class Format:
    """Text formatted from the call's values: literal strs and `(tree, render)` parts, `render`
    giving a value's text as the f-string, `str.format` or `%` that made it does."""

    parts: tuple


@dataclass(frozen=True, eq=False)
class Stored:
    """The value a deferred store wrote to `path` (the function's `store:<path>` output)."""

    path: str
    pytype: type = np.ndarray


def leaves(tree: Any):
    """The Output and Stored leaves of `tree`, views' bases included."""
    if isinstance(tree, (Output, Stored)):
        yield tree
    elif isinstance(tree, ViewOf):
        yield from leaves(tree.base)
    elif isinstance(tree, Node):
        for item in tree.items:
            yield from leaves(item)
    elif isinstance(tree, Either):
        for part in (tree.taken, tree.then, tree.orelse):
            yield from leaves(part)
    elif isinstance(tree, Format):
        for part in tree.parts:
            if not isinstance(part, str):
                yield from leaves(part[0])


def box(array: np.ndarray, pytype: type) -> Any:
    """A compiled output as the interpreter's type: ndarray, NumPy scalar or Python scalar."""
    if pytype is np.ndarray:
        return array
    if pytype in (float, int, bool):
        return pytype(array[()])
    value = array[()]
    assert type(value) is pytype, (type(value), pytype)
    return value


def fresh_copy(array: np.ndarray) -> np.ndarray:
    """A new array equal to the constant `array`, laid out as it is: a constant view (np.zeros(3)[::-1],
    np.arange(4)[::2]) is a view, with its strides, of a fresh copy of its base, as every
    interpreted call makes one (the layout is observable: .flags, .strides)."""
    base = array
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base is array or not (base.flags.c_contiguous or base.flags.f_contiguous):  # no buffer to replay on
        return array.copy(order="K")
    offset = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return np.ndarray(array.shape, array.dtype, buffer=base.copy(order="K").ravel(order="K"), offset=offset,
                      strides=array.strides)


class CallValues:
    """What one call's trees are built from: its arguments, the IREE function's outputs, and a memo.

    One memo serves a whole call, so a compiled output or view that appears in
    several trees (the result, printed values, committed stores) becomes one
    Python object, as it is in the interpreter.
    """

    __slots__ = ("args", "memo", "outputs")

    def __init__(self, args: tuple, outputs: list):
        self.args, self.outputs, self.memo = args, outputs, {}


TreeBuilder = Callable[[CallValues], Any]


def tree_builder(tree: Any, result_index: list[int], store_index: dict[str, int],
                 resolver: Callable[[Path], Callable[[tuple], Any]]) -> TreeBuilder:
    """`tree` made, once per variant, into a function from a call's values to its Python value.

    An `Output(n)` is the IREE function's output `result_index[n]`, a
    `Stored(p)` its output `store_index[p]`; `resolver(path)` reads an input.
    Arrays are the outputs themselves; other boxed values, and views replayed
    on the host, are made once per call (CallValues.memo).
    """
    def build(node: Any) -> TreeBuilder:
        if isinstance(node, (Output, Stored)):
            key = ("out", node.index) if isinstance(node, Output) else ("store", node.path)
            i = output_of(node, result_index, store_index)
            pytype = node.pytype
            if pytype is np.ndarray:  # box() is the array itself: one object without a memo
                return lambda v: v.outputs[i]

            def boxed(v: CallValues) -> Any:
                memo = v.memo
                if key not in memo:
                    memo[key] = box(v.outputs[i], pytype)
                return memo[key]
            return boxed
        if isinstance(node, Input):
            read = resolver(node.path)
            return lambda v: read(v.args)
        if isinstance(node, Const):
            value = node.value
            if isinstance(value, np.ndarray):
                return lambda v: fresh_copy(value)
            return lambda v: value
        if isinstance(node, ViewOf):
            base, replay, key = build(node.base), node.replay, ("view", id(node))

            def view(v: CallValues) -> Any:
                memo = v.memo
                if key not in memo:
                    memo[key] = replay(base(v))
                return memo[key]
            return view
        if isinstance(node, Format):
            parts = [(part, None) if isinstance(part, str) else (build(part[0]), part[1]) for part in node.parts]
            return lambda v: "".join(text if render is None else render(text(v)) for text, render in parts)
        if isinstance(node, Either):  # the caller's object where its side of the branch ran
            taken, then, orelse = build(node.taken), build(node.then), build(node.orelse)
            return lambda v: then(v) if taken(v) else orelse(v)
        kind = node.kind
        arrays = outputs_getter(node.items, result_index, store_index)
        if arrays is not None:  # (one C call for a container of arrays: a model's parameters)
            return lambda v: kind(arrays(v.outputs))
        items = [build(item) for item in node.items]
        return lambda v: kind([item(v) for item in items])

    return build(tree)


def output_of(leaf: Output | Stored, result_index: list[int], store_index: dict[str, int]) -> int:
    """The index of the IREE function's output that `leaf` is."""
    return result_index[leaf.index] if isinstance(leaf, Output) else store_index[leaf.path]


def outputs_getter(trees, result_index: list[int], store_index: dict[str, int]) -> Callable[[list], tuple] | None:
    """If every one of `trees` is an array output itself, a function from the outputs to theirs, as a tuple."""
    if not all(isinstance(t, (Output, Stored)) and t.pytype is np.ndarray for t in trees):
        return None
    indices = [output_of(t, result_index, store_index) for t in trees]
    if len(indices) == 1:
        (i,) = indices
        return lambda outputs: (outputs[i],)
    return operator.itemgetter(*indices) if indices else lambda outputs: ()


def make_resolver(path: Path, fn) -> Callable[[tuple], Any]:
    """A function from the call's arguments to the value at `path` (read at call time).

    Each run of attribute steps is one `operator.attrgetter` and each subscript
    one `operator.itemgetter` (C code, the same getattr and [] as Python's), so
    a call reads a path with few Python frames.
    """
    root = path.root
    if root.startswith("arg"):
        getter = operator.itemgetter(int(root[3:]))
    elif root.startswith("global:"):
        name, g = root[7:], fn.__globals__
        getter = lambda args: g[name]
    elif root.startswith("cell:"):
        cell = fn.__closure__[fn.__code__.co_freevars.index(root[5:])]
        getter = lambda args: cell.cell_contents
    else:
        raise ValueError(f"path {path} cannot be read")
    for step in _step_getters(path.steps):
        getter = _then(getter, step)
    return getter


def _step_getters(steps) -> list[Callable[[Any], Any]]:
    getters, names = [], []
    for kind, name in steps:
        if kind == "attr" and "." not in name:  # attrgetter("a.b") reads a, then b
            names.append(name)
            continue
        if names:
            getters.append(operator.attrgetter(".".join(names)))
            names = []
        getters.append(operator.itemgetter(name) if kind != "attr" else lambda value, name=name: getattr(value, name))
    if names:
        getters.append(operator.attrgetter(".".join(names)))
    return getters


def _then(getter: Callable[[tuple], Any], step: Callable[[Any], Any]) -> Callable[[tuple], Any]:
    return lambda args: step(getter(args))
