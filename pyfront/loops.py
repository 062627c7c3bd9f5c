"""`while` loops, as a mixin of the graph generator.

A `while` whose test is a compile-time value is unrolled by the generator (up
to MAX_STATIC_UNROLL iterations). A `while` on a computed condition (iterate
until converged) becomes `scf.while`: the loop-carried values are the
variables the body assigns, which must be computed arrays or scalars of one
type and shape on every iteration. Guards, stores and prints inside such a
loop are not supported yet (the call then runs in the interpreter); state is
read once, before the loop.
"""

from __future__ import annotations

import ast

from pyfront import semantics as S
from pyfront.branches import assigned_names
from pyfront.dialects.mlir import ir, scf, tensor
from pyfront.errors import Unsupported
from pyfront.values import Known, Tensor

MAX_STATIC_UNROLL = 256


class LoopMixin:
    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise Unsupported("while/else is not supported yet", node)
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Break, ast.Continue, ast.Return)):
                raise Unsupported(f"{type(sub).__name__.lower()} inside a while loop is not supported yet", sub)
        for _ in range(MAX_STATIC_UNROLL + 1):
            test = self.visit(node.test)
            if not isinstance(test, Known):
                self._while_loop(node)
                return
            if not S.fold(bool, test.value).value:
                return
            self._visit_body(node.body)
        raise Unsupported(f"while loop ran more than {MAX_STATIC_UNROLL} iterations at compile time", node)

    def _while_loop(self, node: ast.While) -> None:
        env = self.frame.env
        names = sorted(assigned_names(node.body))
        for name in names:
            value = env.get(name)
            if not isinstance(value, Tensor):
                raise Unsupported(
                    f"{name!r} changes in a loop on a computed condition but is not a computed array", node
                )
        inits = [env[n] for n in names]
        if any(t.source is not None or t.view is not None for t in inits):
            # With zero iterations Python would return the argument itself, not
            # a copy: assume (and check) that the loop runs at least once.
            first = S.truth(self.visit(node.test))
            S.guard(first, "trip-count", f"the while loop at line {node.lineno} runs at least once")
        loop = scf.WhileOp([t.value.type for t in inits], [t.value for t in inits])
        if not self.hoist_points:
            self.hoist_points.append(ir.InsertionPoint(loop.operation))
        try:
            before = loop.before.blocks.append(*[t.value.type for t in inits])
            with ir.InsertionPoint(before):
                self._bind(names, inits, before.arguments)
                cond = S.truth(self.visit(node.test))
                scf.ConditionOp(tensor.extract(cond, []), list(before.arguments))
            after = loop.after.blocks.append(*[t.value.type for t in inits])
            with ir.InsertionPoint(after):
                self._bind(names, inits, after.arguments)
                self._visit_body(node.body)
                updated = [self.frame.env[n] for n in names]
                for name, old, new in zip(names, inits, updated):
                    if not isinstance(new, Tensor) or new.value.type != old.value.type or new.pytype is not old.pytype:
                        raise Unsupported(f"{name!r} changes type, dtype or shape inside the while loop", node)
                scf.YieldOp([t.value for t in updated])
        finally:
            if self.hoist_points and self.hoist_points[0].ref_operation == loop.operation:
                self.hoist_points.clear()
        self._bind(names, inits, loop.results)

    def _bind(self, names: list[str], like: list[Tensor], values) -> None:
        for name, old, value in zip(names, like, values):
            self.frame.env[name] = Tensor(value, old.pytype)
