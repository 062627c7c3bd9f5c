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


def box(array: np.ndarray, pytype: type) -> Any:
    """A compiled output as the interpreter's type: ndarray, NumPy scalar or Python scalar."""
    if pytype is np.ndarray:
        return array
    if pytype in (float, int, bool):
        return pytype(array[()])
    value = array[()]
    assert type(value) is pytype, (type(value), pytype)
    return value


class ResultBuilder:
    """Builds the returned value of one call from outputs and the call's arguments."""

    def __init__(self, tree: Any, resolve: Callable[[Path], Any]):
        self.tree = tree
        self.resolve = resolve

    def build(self, outputs: list[np.ndarray]) -> Any:
        memo: dict = {}
        return self._build(self.tree, outputs, memo)

    def _build(self, node: Any, outputs: list, memo: dict) -> Any:
        if isinstance(node, Output):
            key = ("out", node.index)
            if key not in memo:
                memo[key] = box(outputs[node.index], node.pytype)
            return memo[key]
        if isinstance(node, Input):
            return self.resolve(node.path)
        if isinstance(node, Const):
            return node.value.copy() if isinstance(node.value, np.ndarray) else node.value
        if isinstance(node, ViewOf):
            key = ("view", id(node))
            if key not in memo:
                memo[key] = node.replay(self._build(node.base, outputs, memo))
            return memo[key]
        return node.kind(self._build(i, outputs, memo) for i in node.items)


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
    for kind, name in path.steps:
        getter = _step(getter, kind, name)
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
