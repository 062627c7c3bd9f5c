"""Room on the Python stack for processing deeply nested syntax trees.

Code generators emit long expressions: a 600-term sum is a left-nested chain
of 600 `BinOp`s. CPython compiles such a function from source, but the
recursive AST visitors of the profiler and the graph generator (and
`compile()` of an AST object, which checks the recursion limit per level)
need several Python frames per level, and a few hundred levels exceed the
default recursion limit of 1000.

`room_for(tree)` raises the recursion limit while it is active, to the
current depth plus `FRAMES_PER_LEVEL` frames per level of `tree` (plus
`MARGIN`); trees deeper than `MAX_DEPTH` levels are refused with
`Unsupported`, so the call runs in the interpreter. The limit is raised for
the whole process (Python has one); nested and concurrent users share it:
it is restored to the value found by the first user when the last one
leaves, and never lowered while any user is inside. Assumes no other code
changes the limit while a user is inside (it would be overwritten).

Guarantees for callers: inside `room_for`, a visitor that uses at most
`FRAMES_PER_LEVEL` frames per level of `tree` does not hit the limit.
"""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pyfront.errors import Unsupported

# Frames per nesting level: NodeVisitor.visit -> visit_X -> helper -> visit is 3 to 4,
# twice that leaves room for mixins that go through a helper or two more.
FRAMES_PER_LEVEL = 8
MARGIN = 200
# CPython itself refuses to compile expressions nested a few thousand deep
# (at the default recursion limit), so no function nests deeper than this.
MAX_DEPTH = 5000

_lock = threading.Lock()
_users = 0
_limit_before = 0


def depth(tree: ast.AST) -> int:
    """Nesting depth of `tree` (1 for a leaf), computed without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def copy_tree(node: ast.AST) -> ast.AST:
    """A deep copy of a syntax tree: new nodes and lists for its fields, the same immutable leaves
    (positions, names, constants) and the same values of any attribute that is not a field.

    `copy.deepcopy` of a parsed tree at a fifth of the time (its memo and reduce
    protocol per node were 10% of a warm process's graph generation, measured).
    Recurses once per level (run it inside `room_for`).
    """
    cls = node.__class__
    new = cls.__new__(cls)
    attributes = node.__dict__.copy()
    for name in node._fields:
        value = attributes.get(name)
        if isinstance(value, ast.AST):
            attributes[name] = copy_tree(value)
        elif value.__class__ is list:
            attributes[name] = [copy_tree(v) if isinstance(v, ast.AST) else v for v in value]
    new.__dict__.update(attributes)
    return new


def _stack_depth() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


@contextmanager
def room_for(tree: ast.AST, filename: str | None = None) -> Iterator[None]:
    """Run the block with recursion room for `tree`; Unsupported if it is deeper than MAX_DEPTH."""
    levels = depth(tree)
    if levels > MAX_DEPTH:
        raise Unsupported(f"expression nested {levels} levels deep (more than {MAX_DEPTH})", tree, filename)
    needed = _stack_depth() + FRAMES_PER_LEVEL * levels + MARGIN
    global _users, _limit_before
    with _lock:
        if _users == 0:
            _limit_before = sys.getrecursionlimit()
        _users += 1
        if needed > sys.getrecursionlimit():
            sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setrecursionlimit(_limit_before)
