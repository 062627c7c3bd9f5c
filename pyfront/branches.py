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
import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import semantics as S
from pyfront.dialects.mlir import ir, scf, tensor
from pyfront.errors import BranchTypeConflict, Unsupported
from pyfront.values import Either, FloatOrFloat64, Known, Seq, Tensor, Unavailable, float_or_float64


class BranchMixin:
    def visit_If(self, node: ast.If) -> None:
        test = self._test(node.test)
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
        test = self._test(node.test)
        if isinstance(test, Known):
            return self.visit(node.body if S.fold(bool, test.value).value else node.orelse)
        cond = S.truth(test)
        taken = self._speculated_outcome(node.test)
        if taken is not None:
            self._guard_branch(cond, taken, node)
            return self.visit(node.body if taken else node.orelse)
        (value,) = self._region_if(cond, lambda: [self.visit(node.body)], lambda: [self.visit(node.orelse)], node,
                                   unchanged=list(self.frame.env.values()))
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
        before = dict(self.frame.env)
        # Every name, not only those assigned: an alias of an array written in a side (`b = a`,
        # `hs = [a]`, then `a[0] = 1`) must see the write too (`_alias_conflicts`).
        names = sorted(before.keys() | assigned_names(node.body) | assigned_names(node.orelse))

        def side(body):
            def run():
                self.frame.env = dict(before)
                self._visit_body(body)
                env = self.frame.env  # (what a side leaves as it was is checked where it is read)
                return [env.get(n) if env.get(n) is before.get(n) else self._unpoisoned(env.get(n), node)
                        for n in names]
            return run

        values = self._region_if(cond, side(node.body), side(node.orelse), node, names)
        self.frame.env = before
        for name, value in zip(names, values):
            if value is not None:
                self.frame.env[name] = value

    def _region_if(self, cond: ir.Value, then_fn, else_fn, node: ast.AST, names=None, unchanged=()) -> list:
        """Build `scf.if` from two sides that each return a list of values to merge (`unchanged`:
        values both sides leave as they are, which the merged values must not alias on one side only)."""
        # Result types are known only after both sides are built: build them in
        # a result-less scf.if, then move the ops into the real one.
        i1 = tensor.extract(cond, [])
        guardable = S.can_guard()
        draft = scf.IfOp(i1, [], has_else=True)
        if not self.hoist_points:
            # State is read before the outermost branch (reads have no side effects).
            self.hoist_points.append(ir.InsertionPoint(draft.operation))
        sides, taken, guards, outer_taken = [], [], [], self.draw_taken
        # A write into an array in a side puts its new version everywhere the array is held (buffers.py):
        # outer frames' names, stored values and the caller's written arrays are merged too.
        outside, mutations, side_mutations = self._held_values(outside_frame=True), dict(self.mutations), []
        try:
            for block, fn in ((draft.then_block, then_fn), (draft.else_block, else_fn)):
                self.draw_taken = {}
                self._set_held_values(outside, outside_frame=True)
                self.mutations = dict(mutations)
                with ir.InsertionPoint(block), S.region_guards(block if guardable else None) as side_guards:
                    guards.append(side_guards)
                    try:
                        sides.append(fn() + self._held_values(outside_frame=True))
                    except (FunctionReturn, LoopBreak, LoopContinue) as jump:
                        what = {FunctionReturn: "return", LoopBreak: "break", LoopContinue: "continue"}[type(jump)]
                        raise Unsupported(f"{what} inside a branch on a computed value is not supported yet",
                                          node) from None
                taken.append(self.draw_taken)
                side_mutations.append(self.mutations)
        finally:
            self.draw_taken = outer_taken
            if self.hoist_points and self.hoist_points[0].ref_operation == draft.operation:
                self.hoist_points.clear()
        # The caller's arrays written (a state array read first in a side is read before the branch).
        versions = self._versions_in_sides(mutations, side_mutations, self._read_inputs())
        for side, i in zip(sides, (0, 1)):
            side.extend(pair[i] for *_, pair in versions)
        extra = len(outside) + len(versions)
        # Whether each random draw made in a side ran (draws.py), and whether each guard made in
        # a side held (true where that side did not run): more values to merge.
        drawn = sorted(taken[0].keys() | taken[1].keys())
        for side, side_taken in zip(sides, taken):
            side.extend(side_taken.get(k, Known(False)) for k in drawn)
        sides[0].extend([Tensor(g.cond, np.bool_) for g in guards[0]] + [Known(np.True_)] * len(guards[1]))
        sides[1].extend([Known(np.True_)] * len(guards[0]) + [Tensor(g.cond, np.bool_) for g in guards[1]])
        made = guards[0] + guards[1]
        what = ((names or ["the conditional expression"] * (len(sides[0]) - extra - len(drawn) - len(made)))
                + ["a value held outside the branch"] * len(outside) + [f"the array at {v[2]}" for v in versions]
                + ["a random draw"] * len(drawn) + ["a guard's condition"] * len(made))
        conflicts = _alias_conflicts(list(zip(*sides)) + [(v, v) for v in unchanged])
        merges = self._version_merges(sides, versions)
        with ir.InsertionPoint(draft.operation):  # constants materialized by _merge dominate both sides
            merged = [_merge(a, b, w, node, merges) for a, b, w in zip(*sides, what)]
            pending = list({id(p): p for m in merged for p in _pending(m)}.values())
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
        rebuilt: dict = {}
        values = [_rebuild(m, results, taken, rebuilt) for m in merged]
        for a, b, value in [*zip(*sides, values), *((v, v, v) for v in unchanged)]:
            for x, y, after in _leaf_triples(a, b, value):
                if (id(x), id(y)) in conflicts:
                    self.alias_ambiguous[id(after)] = after
        for _, _, p in merges.values():  # the caller's arrays after the branch are those arrays
            if isinstance(p, _PendingVersion) and id(p) in rebuilt:
                t = rebuilt[id(p)]
                self._input_arrays[id(t)] = (t, p.example)
        values, held = values[:len(values) - len(made)], values[len(values) - len(made):]
        for g, flag in zip(made, held):
            S.guard(flag.value, g.kind, g.reason, g.site)
        outer_taken.update(zip(drawn, values[len(values) - len(drawn):]))
        values = values[:len(values) - len(drawn)]
        values, after = values[:len(values) - extra], values[len(values) - extra:]
        self._set_held_values(after[:len(outside)], outside_frame=True)
        self.mutations = dict(mutations)
        for (k, example, path, _), version in zip(versions, after[len(outside):]):
            self.mutations[k] = (example, path, Tensor(version.value, np.ndarray))
        return values

    def _versions_in_sides(self, before: dict, sides: list[dict], entry: dict) -> list[tuple]:
        """The caller's arrays a side of a branch wrote (buffers' `mutations` before it and after each
        side; `entry`: the arrays as read): (key, the array, its path, [its version on each side])."""
        found = []
        for k in sides[0].keys() | sides[1].keys():
            if sides[0].get(k) is not sides[1].get(k):
                example, path, _ = sides[0].get(k) or sides[1][k]
                unchanged = before[k][2] if k in before else entry[k]
                found.append((k, example, path, [m[k][2] if k in m else unchanged for m in sides]))
        return found

    def _version_merges(self, sides: list[list], versions: list[tuple]) -> dict:
        """`_merge`'s memo, filled for the values that are two versions of one array of the caller's:
        after the branch it is still that array (`_PendingVersion`), not one of two objects."""
        merges: dict = {}
        for a, b in zip(*sides):
            for x, y, _ in _leaf_triples(a, b, None):
                seen = [self._input_arrays.get(id(v)) if isinstance(v, Tensor) else None for v in (x, y)]
                if x is not y and all(e is not None for e in seen) and seen[0][1] is seen[1][1] \
                        and x.value.type == y.value.type and (id(x), id(y)) not in merges:
                    merges[(id(x), id(y))] = (x, y, _PendingVersion(x, y, seen[0][1]))
        for _, example, path, (x, y) in versions:
            merges.setdefault((id(x), id(y)), (x, y, _PendingVersion(x, y, example, path)))
        return merges

    def _visit_if_returning(self, node: ast.If, rest: list[ast.stmt]) -> None:
        """An `if` at a function's top level with a return in a branch; `rest` follows it."""
        test = self._test(node.test)
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


@dataclass(frozen=True, eq=False)
class _PendingVersion(_Pending):
    """Two versions of one array of the caller's (`example`), one per side: after the branch, a
    version of that array still (buffers.py commits the last one into the caller's array)."""

    example: Any = None
    path: Any = None  # where the caller's array is (for the versions in buffers' `mutations`)


class _PendingEither(_Pending):
    """A value that is the caller's object (an argument or state) on at least one side: the merged
    value also says which object it is (values.Either), from whether the `then` side ran."""


def _pending(m: Any) -> list[_Pending]:
    if isinstance(m, _Pending):
        return [m]
    if isinstance(m, Seq):
        return [p for i in m.items for p in _pending(i)]
    if isinstance(m, FloatOrFloat64):
        return _pending(m.number) + _pending(m.is_numpy)
    return []


def _rebuild(m: Any, results: dict, taken: Tensor | None, rebuilt: dict | None = None) -> Any:
    """The value after the branch of the merge `m`; one object per merge (`rebuilt`), as aliases share one."""
    if rebuilt is not None and isinstance(m, _Pending):
        if id(m) not in rebuilt:
            rebuilt[id(m)] = _rebuild(m, results, taken)
        return rebuilt[id(m)]
    if isinstance(m, _PendingVersion):
        return Tensor(results[id(m)], np.ndarray, source=m.path if m.path is not None else m.a.source)
    if isinstance(m, _PendingEither):
        merged = Tensor(results[id(m)], m.a.pytype)
        sides = (t if t.source is not None else None for t in (m.a, m.b))
        return Tensor(merged.value, merged.pytype, either=Either(taken, *sides, merged))
    if isinstance(m, _Pending):
        return Tensor(results[id(m)], m.a.pytype)
    if isinstance(m, Seq):
        return Seq(tuple(_rebuild(i, results, taken, rebuilt) for i in m.items), m.kind)
    if isinstance(m, FloatOrFloat64):
        return float_or_float64(*(_rebuild(part, results, taken, rebuilt) for part in (m.number, m.is_numpy)))
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


def without_continues(body: list[ast.stmt]) -> list[ast.stmt]:
    """An unrolled loop's `body` with no `if` in it that continues the loop.

    `if j == y[i]: continue` followed by the rest of the iteration becomes `if j == y[i]:
    pass else: <the rest>`: the same statements run on each path, so the generator compiles
    the branch on a computed value as any other (an `scf.if`, or speculated and guarded),
    where a `continue` inside it could not be. The rest of the iteration moves into each
    side of an `if` that continues on some path (a copy into the second side when neither
    side always continues); a `continue` inside `try` or `with` stays as it is. (Loops
    that stay loops keep theirs: graphgen unrolls a loop with a `continue`.)
    """
    return _iteration(body)


def _iteration(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body`, the rest of one loop iteration, with its continuing `if`s rewritten."""
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.If) and (_has_continue(stmt.body) or _has_continue(stmt.orelse)):
            rest = body[i + 1:]
            then = _branch(stmt.body, rest)
            orelse = _branch(stmt.orelse, rest if _continues(stmt.body) else copy.deepcopy(rest))
            return body[:i] + [ast.copy_location(ast.If(stmt.test, then, orelse), stmt)]
    return body


def _branch(side: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    return _iteration(_without_last_continue(side) if _continues(side) else side + rest)


def _continues(body: list[ast.stmt]) -> bool:
    """Whether every path through `body` ends in a `continue`."""
    if not body:
        return False
    last = body[-1]
    return isinstance(last, ast.Continue) or (isinstance(last, ast.If) and _continues(last.body)
                                              and _continues(last.orelse))


def _without_last_continue(body: list[ast.stmt]) -> list[ast.stmt]:
    last = body[-1]
    if isinstance(last, ast.Continue):
        return body[:-1]
    return body[:-1] + [ast.copy_location(ast.If(last.test, _without_last_continue(last.body),
                                                 _without_last_continue(last.orelse)), last)]


def _has_continue(body: list[ast.stmt]) -> bool:
    """Whether a `continue` of the enclosing loop is in `body`, outside `try` and `with` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.Continue):
            return True
        if isinstance(stmt, ast.If) and (_has_continue(stmt.body) or _has_continue(stmt.orelse)):
            return True
    return False


class LoopBreak(Exception):
    """Raised by `break` in a loop the generator unrolls."""


class LoopContinue(Exception):
    """Raised by `continue` in a loop the generator unrolls."""


class FunctionReturn(Exception):
    """Raised by a `return` statement while generating the graph; carries the returned value."""

    def __init__(self, value: Any):
        self.value = value


def _merge(a: Any, b: Any, what: str, node: ast.AST, merges: dict) -> Any:
    """One value after the branch: unchanged, a Known both sides agree on, or an scf.if result;
    one per pair of values (`merges`), so that names of one array stay one array."""
    key = (id(a), id(b))
    if key not in merges:
        merges[key] = (a, b, _merged(a, b, what, node, merges))  # (a and b kept alive: ids stay unique)
    return merges[key][2]


def _merged(a: Any, b: Any, what: str, node: ast.AST, merges: dict) -> Any:
    if a is b:
        return a
    if a is None or b is None:  # unbound on one path: compiled only if not read before it is assigned again
        return Unavailable(f"{what} is assigned in only one branch of a condition on a computed value")
    if isinstance(a, Unavailable) or isinstance(b, Unavailable):
        return a if isinstance(a, Unavailable) else b
    if _float_kind(a) and _float_kind(b) and (_float_kind(a) != _float_kind(b) or isinstance(a, FloatOrFloat64)):
        # A Python float on one path, a NumPy float64 on the other: one number and its type.
        (na, ta), (nb, tb) = _number_and_type(a), _number_and_type(b)
        return float_or_float64(_merge(na, nb, what, node, merges), _merge(ta, tb, f"the type of {what}", node, merges))
    if isinstance(a, Known) and isinstance(b, Known) and type(a.value) is type(b.value) and a.value is b.value:
        return a
    if isinstance(a, Known) and isinstance(b, Known) and _same_scalar_type(a.value, b.value):
        return _Pending(_scalar(a.value, what, node), _scalar(b.value, what, node))  # `1 if x > 0 else 0`
    if isinstance(a, Seq) and isinstance(b, Seq) and a.kind is b.kind and len(a.items) == len(b.items):
        items = zip(a.items, b.items)
        return Seq(tuple(_merge(x, y, f"{what}[{i}]", node, merges) for i, (x, y) in enumerate(items)), a.kind)
    if isinstance(a, Known) and isinstance(b, Known) and isinstance(a.value, tuple) and isinstance(b.value, tuple):
        return _merge(Seq(tuple(map(Known, a.value))), Seq(tuple(map(Known, b.value))), what, node, merges)
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        if any(t.view is not None or t.either is not None for t in (a, b)):
            # A view must stay a view of its base; an object merged in an inner branch, that object.
            raise Unsupported(f"{what} is a view of an array on some path; merging would copy it", node)
        if a.value.type == b.value.type and a.pytype is b.pytype:
            # An argument or state value on one path stays that very object (values.Either).
            return _PendingEither(a, b) if a.source is not None or b.source is not None else _Pending(a, b)
        raise BranchTypeConflict(f"{what} has a different type, dtype or shape in each branch", node)
    if isinstance(a, Known) != isinstance(b, Known) and all(
        isinstance(v, Tensor) or type(v.value) is np.ndarray for v in (a, b)
    ):  # an array this call made at compile time (np.zeros), written in one side
        known, computed = (a, b) if isinstance(a, Known) else (b, a)
        if computed.pytype is not np.ndarray or computed.value.type != S.constant(known.value).value.type:
            raise BranchTypeConflict(f"{what} has a different type, dtype or shape in each branch", node)
        constant = Tensor(S.constant(known.value).value, np.ndarray)
        return _Pending(constant, computed) if known is a else _Pending(computed, constant)
    if isinstance(a, Known) != isinstance(b, Known) and all(
        isinstance(v, Tensor) or isinstance(v.value, (int, float, bool, np.generic)) for v in (a, b)
    ):
        known, computed = (a, b) if isinstance(a, Known) else (b, a)
        constant = _materialized(known.value, computed, what, node)
        return _Pending(constant, computed) if known is a else _Pending(computed, constant)
    raise Unsupported(f"{what} differs between the branches in a way that cannot be compiled yet", node)


def _alias_conflicts(pairs: list[tuple[Any, Any]]) -> set[tuple[int, int]]:
    """The (id, id) of each (then, else) pair of arrays this call made that are one array with
    another pair's on one path only (`b = a` in one side, `b = c` in the other): after the
    branch, a write into either would have to reach the other name on one path only, so
    writes into them are refused (buffers.py `alias_ambiguous`). The merge makes one value
    per pair (`_merge`): arrays stay one exactly where the pairs match them one to one."""
    partners: dict[tuple[int, int], set] = {}
    leaves = [(x, y) for a, b in pairs for x, y, _ in _leaf_triples(a, b, None)
              if _fresh_array(x) or _fresh_array(y)]
    for x, y in leaves:
        partners.setdefault((0, id(x)), set()).add(id(y))
        partners.setdefault((1, id(y)), set()).add(id(x))
    return {(id(x), id(y)) for x, y in leaves if len(partners[0, id(x)]) > 1 or len(partners[1, id(y)]) > 1}


def _leaf_triples(a: Any, b: Any, after: Any):
    """The leaves of a value's two sides and of its value after the branch, side by side."""
    if isinstance(a, Seq) and isinstance(b, Seq) and len(a.items) == len(b.items):
        afters = after.items if isinstance(after, Seq) else [after] * len(a.items)
        for x, y, z in zip(a.items, b.items, afters):
            yield from _leaf_triples(x, y, z)
    else:
        yield a, b, after


def _fresh_array(v: Any) -> bool:
    """An array this call made (not the caller's: values.Either tracks those)."""
    return (isinstance(v, Tensor) and v.pytype is np.ndarray and v.source is None and v.either is None
            or isinstance(v, Known) and type(v.value) is np.ndarray)


def _float_kind(v: Any) -> str | None:
    """"python" for a Python float, "numpy" for a NumPy float64 scalar, "either" for a
    FloatOrFloat64; else None."""
    if isinstance(v, FloatOrFloat64):
        return "either"
    if isinstance(v, Known):
        return "python" if type(v.value) is float else "numpy" if type(v.value) is np.float64 else None
    if isinstance(v, Tensor) and v.shape == () and v.dtype == np.float64 and not v.has_identity:
        return "python" if v.pytype is float else "numpy" if v.pytype is np.float64 else None
    return None


def _number_and_type(v: Any) -> tuple[Any, Any]:
    """(the number as a NumPy float64, whether it is one) of a `_float_kind` value."""
    if isinstance(v, FloatOrFloat64):
        return v.number, v.is_numpy
    number = (Tensor(S.constant(np.float64(v.value)).value, np.float64) if isinstance(v, Known)
              else Tensor(v.value, np.float64))
    return number, Known(np.bool_(_float_kind(v) == "numpy"))


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


def rebound_names(body: list[ast.stmt]) -> set[str]:
    """Names `body` binds to a new value: not those only augmented in place (`W -= g` on an array)."""
    augmented = {id(sub.target) for stmt in body for sub in ast.walk(stmt) if isinstance(sub, ast.AugAssign)}
    return {sub.id for stmt in body for sub in ast.walk(stmt)
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and id(sub) not in augmented}

