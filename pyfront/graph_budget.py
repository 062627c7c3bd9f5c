"""The size budget of one graph: how much the generator may emit before it refuses.

Graph generation unrolls loops over compile-time values and inlines calls,
so a small function can expand into a huge graph (two nested 200-iteration
loops: 40,000 copies of the inner body), and both generating and compiling
it grow with its size (IREE took minutes for ten thousand ops). The budget
counts syntax-node evaluations (`charge`, once per node the generator
visits: a loop body counts once per unrolled iteration, an inlined function
once per call); a node evaluation emits about one op. Past the budget,
`Unsupported` names the line and the budget, and the call runs in the
interpreter.

So as not to spend the budget's worth of time on a loop nest that will not
fit anyway, `unrolling` refuses up front when a loop's projected cost (its
iterations times its body's size, times the iterations left in each loop
unrolled around it) exceeds what is left. The projection assumes every
iteration runs the whole body; a refusal on that estimate is safe (the call
runs in the interpreter).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager

from pyfront.errors import Unsupported

DEFAULT_MAX_NODES = 20000  # Config.max_graph_nodes


class GraphTooLarge(Unsupported):
    """The graph would exceed its budget."""


def _reason(limit: int) -> str:
    return (f"graph too large: more than {limit} expression evaluations once loops are unrolled and "
            f"calls inlined (Config.max_graph_nodes / PYFRONT_MAX_GRAPH_NODES)")


def body_size(body: list[ast.stmt]) -> int:
    """Syntax nodes in `body` (nested function bodies excluded: they are not evaluated there)."""
    count, stack = 0, list(body)
    while stack:
        node = stack.pop()
        count += 1
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return count


class GraphBudget:
    """Counts the generator's node evaluations against `limit`."""

    def __init__(self, limit: int):
        self.limit = limit
        self.spent = 0
        self._enclosing: list[list[int]] = []  # per unrolled loop around: [iterations left]

    def charge(self, node: ast.AST) -> None:
        self.spent += 1
        if self.spent > self.limit:
            raise GraphTooLarge(_reason(self.limit), node)

    @contextmanager
    def unrolling(self, iterations: int, body: list[ast.stmt], node: ast.AST) -> Iterator[list[int]]:
        """Enter a loop unrolled `iterations` times; the caller keeps the yielded [left] at the
        number of iterations not yet finished."""
        projected = iterations * body_size(body)
        for (left,) in self._enclosing:
            projected *= max(left, 1)
        if self.spent + projected > self.limit:
            raise GraphTooLarge(f"{_reason(self.limit)}: this loop unrolls {iterations} times"
                              + (" inside unrolled loops" if self._enclosing else ""), node)
        left = [iterations]
        self._enclosing.append(left)
        try:
            yield left
        finally:
            self._enclosing.pop()
