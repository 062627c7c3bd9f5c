"""Branches on computed values (JANUS §4.2.1), as a mixin of the graph generator.

A branch whose profile saw one outcome only is speculated: the graph contains
that side alone plus a `pyfront.guard` (kind "branch") on the condition; if
the guard fails at run time the call is discarded and re-run in the
interpreter (which profiles it, so the next compilation sees both outcomes).
A branch seen both ways, or never profiled (e.g. inside an inlined helper),
becomes an `scf.if` whose results are the variables either side assigns.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import semantics as S
from pyfront.dialects.mlir import ir, scf, tensor
from pyfront.errors import BranchTypeConflict, Unsupported
from pyfront.values import Either, Known, Seq, Tensor


class BranchMixin:
    def visit_If(self, node: ast.If) -> None:
        test = self.visit(node.test)
        if isinstance(test, Known):
            self._visit_body(node.body if S.fold(bool, test.value).value else node.orelse)
            return
        cond = S.truth(test)
        if raises(node.body) != raises(node.orelse):
            # Raising is left to the interpreter: compile the other side, guarded.
            taken = raises(node.orelse)
            flag = cond if taken else S.logical_not(cond)
            S.guard(flag, "raise", f"the branch at line {node.lineno} that raises is not taken")
            self._visit_body(node.body if taken else node.orelse)
            return
        taken = self._speculated_outcome(node.test)
        if taken is not None:
            self._guard_branch(cond, taken, node)
            self._visit_body(node.body if taken else node.orelse)
            return
        if returns(node.body) or returns(node.orelse):
            raise Unsupported("return inside a branch on a computed value is supported only at a function's top level",
                              node)
        self._if_statement(cond, node)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        test = self.visit(node.test)
        if isinstance(test, Known):
            return self.visit(node.body if S.fold(bool, test.value).value else node.orelse)
        cond = S.truth(test)
        taken = self._speculated_outcome(node.test)
        if taken is not None:
            self._guard_branch(cond, taken, node)
            return self.visit(node.body if taken else node.orelse)
        (value,) = self._region_if(cond, lambda: [self.visit(node.body)], lambda: [self.visit(node.orelse)], node)
        return value

    def _speculated_outcome(self, test: ast.expr) -> bool | None:
        """The only outcome the profile saw for this test, or None (both seen, not profiled, or
        inside a real loop or branch, where no guard can go: both sides are compiled)."""
        if not S.can_guard():
            return None
        outcomes = self._profiled_outcomes(test)
        if not outcomes or len(outcomes) != 1:
            return None
        return next(iter(outcomes))

    def _guard_branch(self, cond: ir.Value, taken: bool, node: ast.AST) -> None:
        flag = cond if taken else S.logical_not(cond)
        S.guard(flag, "branch", f"the condition at line {node.lineno} was always {taken} when profiled")

    def _if_statement(self, cond: ir.Value, node: ast.If) -> None:
        names = sorted(assigned_names(node.body) | assigned_names(node.orelse))
        before = dict(self.frame.env)

        def side(body):
            def run():
                self.frame.env = dict(before)
                self._visit_body(body)
                return [self._unpoisoned(self.frame.env.get(n), node) for n in names]
            return run

        values = self._region_if(cond, side(node.body), side(node.orelse), node, names)
        self.frame.env = before
        for name, value in zip(names, values):
            if value is not None:
                self.frame.env[name] = value

    def _region_if(self, cond: ir.Value, then_fn, else_fn, node: ast.AST, names=None) -> list:
        """Build `scf.if` from two sides that each return a list of values to merge."""
        # Result types are known only after both sides are built: build them in
        # a result-less scf.if, then move the ops into the real one.
        i1 = tensor.extract(cond, [])
        draft = scf.IfOp(i1, [], has_else=True)
        if not self.hoist_points:
            # State is read before the outermost branch (reads have no side effects).
            self.hoist_points.append(ir.InsertionPoint(draft.operation))
        sides, taken, outer_taken = [], [], self.draw_taken
        try:
            for block, fn in ((draft.then_block, then_fn), (draft.else_block, else_fn)):
                self.draw_taken = {}
                with ir.InsertionPoint(block):
                    try:
                        sides.append(fn())
                    except (FunctionReturn, LoopBreak, LoopContinue) as jump:
                        what = {FunctionReturn: "return", LoopBreak: "break", LoopContinue: "continue"}[type(jump)]
                        raise Unsupported(f"{what} inside a branch on a computed value is not supported yet",
                                          node) from None
                taken.append(self.draw_taken)
        finally:
            self.draw_taken = outer_taken
            if self.hoist_points and self.hoist_points[0].ref_operation == draft.operation:
                self.hoist_points.clear()
        # Whether each random draw made in a side ran (draws.py): one more value to merge.
        drawn = sorted(taken[0].keys() | taken[1].keys())
        for side, side_taken in zip(sides, taken):
            side.extend(side_taken.get(k, Known(False)) for k in drawn)
        what = (names or ["the conditional expression"] * (len(sides[0]) - len(drawn))) + ["a random draw"] * len(drawn)
        with ir.InsertionPoint(draft.operation):  # constants materialized by _merge dominate both sides
            merged = [_merge(a, b, w, node) for a, b, w in zip(*sides, what)]
            pending = [p for m in merged for p in _pending(m)]
            if any(isinstance(p, _PendingEither) for p in pending):  # which side ran
                pending.append(_Pending(_scalar(True, "", node), _scalar(False, "", node)))
        with ir.InsertionPoint(draft.operation):
            final = scf.IfOp(i1, [p.a.value.type for p in pending], has_else=True)
        for src, dst, pick in ((draft.then_block, final.then_block, "a"), (draft.else_block, final.else_block, "b")):
            for op in list(src.operations):
                dst.append(op)
            with ir.InsertionPoint(dst):
                scf.YieldOp([getattr(p, pick).value for p in pending])
        draft.operation.erase()
        results = dict(zip(map(id, pending), final.results))
        taken = _rebuild(pending[-1], results, None) if any(isinstance(p, _PendingEither) for p in pending) else None
        values = [_rebuild(m, results, taken) for m in merged]
        outer_taken.update(zip(drawn, values[len(values) - len(drawn):]))
        return values[:len(values) - len(drawn)]

    def _visit_if_returning(self, node: ast.If, rest: list[ast.stmt]) -> None:
        """An `if` at a function's top level with a return in a branch; `rest` follows it."""
        test = self.visit(node.test)
        if isinstance(test, Known):
            taken = S.fold(bool, test.value).value
        else:
            cond = S.truth(test)
            taken = self._speculated_outcome(node.test)
            if taken is None:
                self._if_with_return(cond, node, rest)
            self._guard_branch(cond, taken, node)
        self._visit_body((node.body if taken else node.orelse) + rest, top=True)

    def _if_with_return(self, cond: ir.Value, node: ast.If, rest: list[ast.stmt]) -> None:
        """`if c: ... return a` then `rest`: every path returns, so scf.if yields the returned value."""
        before = dict(self.frame.env)

        def side(body):
            def run():
                self.frame.env = dict(before)
                try:
                    self._visit_body(body, top=True)
                except FunctionReturn as r:
                    return [r.value]
                return [Known(None)]  # falling off the end of the function returns None
            return run

        then_body = node.body if returns(node.body) else node.body + rest
        else_body = node.orelse if returns(node.orelse) else node.orelse + rest
        (value,) = self._region_if(cond, side(then_body), side(else_body), node)
        raise FunctionReturn(value)


@dataclass(frozen=True, eq=False)
class _Pending:
    """A value that differs between the branches: it becomes an scf.if result."""

    a: Tensor
    b: Tensor


class _PendingEither(_Pending):
    """A value that is the caller's object (an argument or state) on at least one side: the merged
    value also says which object it is (values.Either), from whether the `then` side ran."""


def _pending(m: Any) -> list[_Pending]:
    if isinstance(m, _Pending):
        return [m]
    if isinstance(m, Seq):
        return [p for i in m.items for p in _pending(i)]
    return []


def _rebuild(m: Any, results: dict, taken: Tensor | None) -> Any:
    if isinstance(m, _PendingEither):
        merged = Tensor(results[id(m)], m.a.pytype)
        sides = (t if t.source is not None else None for t in (m.a, m.b))
        return Tensor(merged.value, merged.pytype, either=Either(taken, *sides, merged))
    if isinstance(m, _Pending):
        return Tensor(results[id(m)], m.a.pytype)
    if isinstance(m, Seq):
        return Seq(tuple(_rebuild(i, results, taken) for i in m.items), m.kind)
    return m


def raises(body: list[ast.stmt]) -> bool:
    """Whether `body` ends in a raise statement."""
    return bool(body) and isinstance(body[-1], ast.Raise)


def returns(body: list[ast.stmt]) -> bool:
    """Whether every path through `body` ends in a return statement."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and returns(last.body) and returns(last.orelse)


class LoopBreak(Exception):
    """Raised by `break` in a loop the generator unrolls."""


class LoopContinue(Exception):
    """Raised by `continue` in a loop the generator unrolls."""


class FunctionReturn(Exception):
    """Raised by a `return` statement while generating the graph; carries the returned value."""

    def __init__(self, value: Any):
        self.value = value


def _merge(a: Any, b: Any, what: str, node: ast.AST) -> Any:
    """One value after the branch: unchanged, a Known both sides agree on, or an scf.if result."""
    if a is b:
        return a
    if a is None or b is None:
        raise Unsupported(f"{what} is assigned in only one branch of a condition on a computed value", node)
    if isinstance(a, Known) and isinstance(b, Known) and type(a.value) is type(b.value) and a.value is b.value:
        return a
    if isinstance(a, Known) and isinstance(b, Known) and _same_scalar_type(a.value, b.value):
        return _Pending(_scalar(a.value, what, node), _scalar(b.value, what, node))  # `1 if x > 0 else 0`
    if isinstance(a, Seq) and isinstance(b, Seq) and a.kind is b.kind and len(a.items) == len(b.items):
        return Seq(tuple(_merge(x, y, f"{what}[{i}]", node) for i, (x, y) in enumerate(zip(a.items, b.items))),
                   a.kind)
    if isinstance(a, Known) and isinstance(b, Known) and isinstance(a.value, tuple) and isinstance(b.value, tuple):
        return _merge(Seq(tuple(map(Known, a.value))), Seq(tuple(map(Known, b.value))), what, node)
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if any(t.view is not None or t.either is not None for t in (a, b)):
            # A view must stay a view of its base; an object merged in an inner branch, that object.
            raise Unsupported(f"{what} is a view of an array on some path; merging would copy it", node)
        if a.value.type == b.value.type and a.pytype is b.pytype:
            # An argument or state value on one path stays that very object (values.Either).
            return _PendingEither(a, b) if a.source is not None or b.source is not None else _Pending(a, b)
        raise BranchTypeConflict(f"{what} has a different type, dtype or shape in each branch", node)
    if isinstance(a, Known) != isinstance(b, Known) and all(
        isinstance(v, Tensor) or isinstance(v.value, (int, float, bool, np.generic)) for v in (a, b)
    ):
        known, computed = (a, b) if isinstance(a, Known) else (b, a)
        constant = _materialized(known.value, computed, what, node)
        return _Pending(constant, computed) if known is a else _Pending(computed, constant)
    raise Unsupported(f"{what} differs between the branches in a way that cannot be compiled yet", node)


def _same_scalar_type(a: Any, b: Any) -> bool:
    """Two constants of one Python scalar type, or NumPy scalars of one dtype."""
    if type(a) is not type(b):
        return False
    return type(a) in (int, float, bool) or isinstance(a, np.generic) and a.dtype == b.dtype


def _scalar(value: Any, what: str, node: ast.AST) -> Tensor:
    """A scalar constant as a computed value of its own Python type (an int as int64)."""
    dtype = {int: np.dtype(np.int64), float: np.dtype(np.float64), bool: np.dtype(np.bool_)}.get(type(value))
    try:
        return Tensor(S.constant(value, dtype if dtype is not None else value.dtype).value, type(value))
    except OverflowError:
        raise Unsupported(f"{what} is {value!r} in one branch: out of range for int64", node) from None


def _materialized(value: Any, computed: Tensor, what: str, node: ast.AST) -> Tensor:
    """The constant one branch assigns, as a tensor of the type the other branch computes.

    Only when the interpreter's Python type is the same on both paths (a Python
    float and a computed Python float, a NumPy float32 constant and a computed
    float32 scalar): the merged value then has one type whichever branch runs.
    """
    if computed.has_identity:
        raise Unsupported(f"{what} is an argument or a view of one on some path; merging would copy it", node)
    if type(value) is not computed.pytype or computed.shape != ():
        raise BranchTypeConflict(f"{what} is a {type(value).__name__} constant in one branch and a computed "
                          f"{computed.pytype.__name__} in the other: its Python type would depend on the "
                          "branch taken", node)
    try:
        return Tensor(S.constant(value, computed.dtype).value, computed.pytype)
    except OverflowError:
        raise Unsupported(f"{what} is {value!r} in one branch: out of range for {computed.dtype}", node) from None


def assigned_names(body: list[ast.stmt]) -> set[str]:
    """Local names `body` binds, and those of arrays it writes into by name (`a[i] = v`, `a[i] += v`)."""
    names = set()
    for stmt in body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
            elif isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store):
                while isinstance(sub, ast.Subscript):
                    sub = sub.value
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
    return names
