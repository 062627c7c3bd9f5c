"""Result trees and access paths at call time.

The graph generator describes a function's return value as a tree: leaves
are compiled outputs (boxed to the exact Python type the interpreter returns),
inputs returned as themselves (identity preserved), constants, and views
replayed on the host from their base (so aliasing is NumPy's own).
"""

from __future__ import annotations

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


class ResultBuilder:
    """Builds the values of one call (its result, printed values, committed stores).

    One builder serves a whole call, so a compiled output or view that appears
    in several trees becomes one Python object, as it is in the interpreter.
    """

    def __init__(self, resolve: Callable[[Path], Any], outputs: list[np.ndarray],
                 stored: dict[str, np.ndarray] | None = None):
        self.resolve = resolve
        self.outputs = outputs
        self.stored = stored or {}
        self.memo: dict = {}

    def build(self, tree: Any) -> Any:
        return self._build(tree)

    def _build(self, node: Any) -> Any:
        memo = self.memo
        if isinstance(node, Output):
            key = ("out", node.index)
            if key not in memo:
                memo[key] = box(self.outputs[node.index], node.pytype)
            return memo[key]
        if isinstance(node, Stored):
            key = ("store", node.path)
            if key not in memo:
                memo[key] = box(self.stored[node.path], node.pytype)
            return memo[key]
        if isinstance(node, Input):
            return self.resolve(node.path)
        if isinstance(node, Const):
            return fresh_copy(node.value) if isinstance(node.value, np.ndarray) else node.value
        if isinstance(node, ViewOf):
            key = ("view", id(node))
            if key not in memo:
                memo[key] = node.replay(self._build(node.base))
            return memo[key]
        if isinstance(node, Either):
            return self._build(node.then if self._build(node.taken) else node.orelse)
        return node.kind(self._build(i) for i in node.items)


def make_resolver(path: Path, fn) -> Callable[[tuple], Any]:
    """A function from the call's arguments to the value at `path` (read at call time)."""
    root = path.root
    if root.startswith("arg"):
        i = int(root[3:])
        get_root = lambda args: args[i]
    elif root.startswith("global:"):
        name, g = root[7:], fn.__globals__
        get_root = lambda args: g[name]
    elif root.startswith("cell:"):
        cell = fn.__closure__[fn.__code__.co_freevars.index(root[5:])]
        get_root = lambda args: cell.cell_contents
    else:
        raise ValueError(f"path {path} cannot be read")
    getter = get_root
    for kind, step in path.steps:  # not `name`: get_root reads it
        getter = _step(getter, kind, step)
    return getter


def _step(getter, kind: str, name: Any):
    if kind == "attr":
        return lambda args: getattr(getter(args), name)
    return lambda args: getter(args)[name]


def make_committer(path: Path, fn) -> Callable[[tuple, Any], None]:
    """A function that writes a value to `path` (used for committing deferred stores)."""
    if not path.steps:
        root = path.root
        if root.startswith("global:"):
            name, g = root[7:], fn.__globals__
            return lambda args, v: g.__setitem__(name, v)
        if root.startswith("cell:"):
            cell = fn.__closure__[fn.__code__.co_freevars.index(root[5:])]
            return lambda args, v: setattr(cell, "cell_contents", v)
        raise ValueError(f"cannot assign to {path}")
    parent = make_resolver(Path(path.root, path.steps[:-1]), fn)
    kind, name = path.steps[-1]
    if kind == "attr":
        return lambda args, v: setattr(parent(args), name, v)
    return lambda args, v: parent(args).__setitem__(name, v)
