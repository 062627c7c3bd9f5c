"""Loops as real loops (scf.for / scf.while), as a mixin of the graph generator.

Which loops become what:
- `for i in range(a, b, s)` (s > 0, at least one iteration) whose body only
  computes arrays: `scf.for` with a constant trip count, where `i` may index
  the first axis of arrays long enough (`x[i]`). The `unroll` pass
  (passes/unroll.py) unrolls it within its budget; the trip count is fixed
  by the variant's key (the value of `n` in `range(n)`), so it needs no guard.
- a `for i in range(...)` whose body cannot be an scf.for because it works on
  Python objects (appends to a list, indexes a tuple or list with `i`, uses
  `i` in Python arithmetic, branches on compile-time values derived from `i`,
  break/continue, stores, guards, prints) is unrolled here, by the generator,
  up to MAX_STATIC_UNROLL iterations: `i` must then be a compile-time int.
  The generator first tries the scf.for and, when the body turns out to need
  Python values, discards it and unrolls. Unrolling a loop nest can exceed
  the graph's budget, or make more IREE kernels than the unroll pass would
  (cs231n's naive convolution: four nested loops); then
  the outermost loop becomes an scf.for whose iterations bind names of their
  own (`window = x[...]`, the inner loops' counters, unrolled inside), which
  are not carried from one iteration to the next.
- other loops over compile-time values (tuples, lists, a `while` on a constant
  test) are unrolled by the generator, up to MAX_STATIC_UNROLL iterations;
- a `while` on a computed condition (iterate until converged): `scf.while`;
- `while True:` whose one exit is a top-level `if <computed>: break`: rotated
  into `head; while not <test>: tail; head`, the same loop, then as above;
- a `for` over the rows of arrays (`for x in X`, `for xi, t in zip(X, y)`: a
  per-sample loop), of a length fixed at compile time or varying between
  calls (a relaxed, dynamic first dim): `scf.for`, each row a view.
The loop-carried values are the variables the body assigns, which must be
computed arrays or scalars of one type and shape on every iteration. A guard
made in an scf.for body (an index bound, a speculated branch, a Python int
staying in int64) is carried as "held in every iteration so far" and checked
after the loop (semantics.region_guards); random draws in it are made on the
host, once per iteration (`ForLoop`); the caller's arrays it writes into are
carried too. Guards and writes into the caller's arrays in an scf.while body,
and stores, prints and list growth inside any real loop, are not supported
yet (the call then runs in the interpreter, or the range loop is unrolled
here); state is read once, before the loop.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyfront import indexing
from pyfront import semantics as S
from pyfront.branches import assigned_names, rebound_names
from pyfront.constructs import construct
from pyfront.dialects.mlir import arith, ir, scf, tensor
from pyfront.dialects.primitives import emit
from pyfront.dialects.types import tensor_type
from pyfront.errors import Unsupported
from pyfront.graph_budget import GraphTooLarge
from pyfront.passes.unroll import MAX_KERNELS, kernels
from pyfront.values import BoundedInt, FloatOrFloat64, Known, Obj, Seq, Tensor, Unavailable

MAX_STATIC_UNROLL = 256
_loop_keys = itertools.count()  # names of the scf.for loops around random draws (host_draws.HostDraw.loops)


@dataclass(frozen=True)
class ForLoop:
    """An scf.for being built: `trips` iterations (None: a number that varies); `iteration()` builds
    the iteration's number, 0 to trips - 1, as an i64 (draws in the body index their values by it);
    `arrays`, the caller's arrays (by id) it carries, which the body may write into."""

    key: int
    trips: int | None
    iteration: Callable[[], ir.Value]
    arrays: frozenset[int]


class ArrayWrittenInLoop(Unsupported):
    """An array the call made, held by `name` before the loop, that the body writes through a view
    (`r = Z[i]; r[1] = v`): the loop must carry the name (loops._scf_for)."""

    def __init__(self, message: str, node: ast.AST, name: str):
        super().__init__(message, node)
        self.name = name


class CallerArrayInLoop(Unsupported):
    """A write into the caller's array `example`, which `expression` names, inside scf.for loops that do
    not all carry it yet (loops._scf_for)."""

    def __init__(self, message: str, node: ast.AST, example: np.ndarray, expression: ast.expr):
        super().__init__(message, node)
        self.example = example
        self.expression = expression


class LoopMixin:
    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise Unsupported("while/else is not supported yet", node)
        exit_at = _single_break(node)
        if exit_at is not None and self._is_true(node.test):
            self._rotated_loop(node, exit_at)
            return
        _reject_jumps(node)
        for _ in range(MAX_STATIC_UNROLL + 1):
            test = self._test(node.test)
            if not isinstance(test, Known):
                self._while_loop(node)
                return
            if not S.fold(bool, test.value).value:
                return
            self._visit_body(node.body)
        raise Unsupported(f"while loop ran more than {MAX_STATIC_UNROLL} iterations at compile time", node)

    def _is_true(self, test: ast.expr) -> bool:
        value = self.visit(test)
        return isinstance(value, Known) and S.fold(bool, value.value).value

    def _rotated_loop(self, node: ast.While, exit_at: int) -> None:
        """`while True: head; if t: break; tail` as `head; while not t: tail; head` (the same
        statements in the same order), so that the exit test is the loop's condition."""
        head, exit_if, tail = node.body[:exit_at], node.body[exit_at], node.body[exit_at + 1:]
        self._visit_body(head)
        test = ast.copy_location(ast.UnaryOp(ast.Not(), exit_if.test), exit_if.test)
        self._while_loop(ast.copy_location(ast.While(test, tail + head, []), node))

    def _resolve_floats_or_float64s(self) -> None:
        """A real loop carries values of one type: a FloatOrFloat64 gets its type before it (guarded)."""
        for name, value in list(self.frame.env.items()):
            if isinstance(value, FloatOrFloat64):
                self.frame.env[name] = S.resolve_float_or_float64(value, repr(name))

    def _numbers_as_computed(self, names: list[str], node: ast.AST) -> None:
        """Python numbers a real loop changes (`it += 1`, `total += err`) as values it carries."""
        env = self.frame.env
        for name in names:
            value = env.get(name)
            if isinstance(value, Known) and type(value.value) in (int, float, bool):
                dtype = {int: np.int64, float: np.float64, bool: np.bool_}[type(value.value)]
                try:
                    env[name] = Tensor(S.constant(value.value, np.dtype(dtype)).value, type(value.value))
                except OverflowError:
                    raise Unsupported(f"{name!r} is {value.value!r}: out of range for int64", node) from None

    def _while_loop(self, node: ast.While) -> None:
        self._resolve_floats_or_float64s()
        env = self.frame.env
        names = sorted(assigned_names(node.body))
        self._numbers_as_computed(names, node)
        for name in names:
            if isinstance(env.get(name), Known) and type(env[name].value) is np.ndarray:
                self._as_computed(env[name])
            value = env.get(name)
            if not isinstance(value, Tensor):
                raise Unsupported(
                    f"{name!r} changes in a loop on a computed condition but is not a computed array", node
                )
        inits = [env[n] for n in names]
        if any(t.has_identity for t in inits):
            # With zero iterations Python would return the argument itself, not
            # a copy: assume (and check) that the loop runs at least once.
            first = S.truth(self._test(node.test))
            S.guard(first, "trip-count", f"the while loop at line {node.lineno} runs at least once")
        outside = dict(env)
        # A name the body binds before reading it leaves its value entering an iteration unread, and
        # upstream canonicalization drops such arguments of the iteration block: IREE 3.13's stream
        # conversion then crashed (its two regions' arguments differ). An iteration count k, carried
        # too, lets each iteration read them (`k < 0`, never true, picks them).
        unread = {n for n in names if _binds_before_reading(node.body, n)}
        counted = [S.constant(0, np.dtype(np.int64))] if unread else []
        types = [t.value.type for t in inits + counted]
        loop = scf.WhileOp(types, [t.value for t in inits + counted])
        if not self.hoist_points:
            self.hoist_points.append(ir.InsertionPoint(loop.operation))
        try:
            before = loop.before.blocks.append(*types)
            with ir.InsertionPoint(before):
                self._bind(names, [], inits, before.arguments[:len(names)])
                cond = S.truth(self._test(node.test))
                scf.ConditionOp(tensor.extract(cond, []), list(before.arguments))
            after = loop.after.blocks.append(*types)
            with ir.InsertionPoint(after):
                entering = after.arguments[:len(names)]
                self._bind(names, [], inits, entering)
                self._visit_body(node.body)
                self._check_carried(names, [], inits, outside, node)
                yields = [self.frame.env[n].value for n in names]
                if unread:
                    k = Tensor(after.arguments[len(names)], np.int64)
                    never = S.ufunc(np.less, k, Known(np.int64(0)))
                    yields = [S.where(never, Tensor(v, old.pytype), self.frame.env[n]).value if n in unread else y
                              for n, v, old, y in zip(names, entering, inits, yields)]
                    yields.append(S.ufunc(np.add, k, Known(np.int64(1))).value)
                scf.YieldOp(yields)
        finally:
            if self.hoist_points and self.hoist_points[0].ref_operation == loop.operation:
                self.hoist_points.clear()
        self._bind(names, [], inits, loop.results[:len(names)])

    def _for_rows(self, node: ast.For, rows: Tensor) -> None:
        """`for item in rows` over a dynamic first dim: scf.for, one row per iteration."""
        if not isinstance(node.target, ast.Name):
            raise Unsupported("unpacking the rows of an array whose length varies is not supported yet", node)
        upper = emit.dim(rows.value, 0)
        held = self._array_versions([rows])
        self._scf_for(node, emit.index(0), upper, lambda i: self._row(rows, i), emit.index(1), None,
                      iteration_locals=True)
        # After the loop the target holds (a view of) the last row; the length is >= 2.
        last = self._row(rows, arith.subi(upper, emit.index(1)))
        self._bind_last_row(node, held, S.view_of(rows, last.value, lambda a: a[-1]) if rows.ndim > 1 else last)

    def _zipped_arrays(self, iterable: ast.expr) -> list[Tensor] | None:
        """The arrays of `zip(X, y)` when each is named (a name or attribute: reading it twice is
        reading it once) and has a first dim of a size fixed at compile time; else None."""
        if not (isinstance(iterable, ast.Call) and not iterable.keywords and iterable.args
                and all(isinstance(a, (ast.Name, ast.Attribute)) for a in iterable.args)):
            return None
        zipper = self.visit(iterable.func)
        if not (isinstance(zipper, Known) and zipper.value is zip):
            return None
        arrays = [self.visit(a) for a in iterable.args]
        if all(isinstance(a, Tensor) and a.pytype is np.ndarray and a.ndim and a.shape[0] is not None for a in arrays):
            return arrays
        return None

    def rows_loop(self, node: ast.For, arrays: list[Tensor], zipped: bool = False) -> bool:
        """`for x in X` / `for x, t in zip(X, y)` over arrays of a first dim fixed at compile time (a
        per-sample loop) as an scf.for, each row a view; False when the caller must unroll it."""
        n = min(a.shape[0] for a in arrays)
        if not n or node.orelse or "scf.if" in S.enclosing_regions():
            return False

        def row(i: Any) -> Any:  # (i: an int, or an i64 in range)
            picked = [indexing.getitem(a, i) if type(i) is int else _row_of(a, Tensor(_as_int64(i), int))
                      for a in arrays]
            return Seq(tuple(picked), tuple) if zipped else picked[0]

        def build() -> None:
            held = self._array_versions(arrays)
            first = int(self._peel_first_iteration(node, row(0)))
            if first < n:
                self._scf_for(node, emit.index(first), emit.index(n), row, emit.index(1), n - first,
                              iteration_locals=True)
            self._bind_last_row(node, held, row(n - 1))

        return self._attempt(build) is None

    def _array_versions(self, arrays: list[Tensor]) -> list[tuple]:
        """Per array a loop over rows goes through: (the caller's array it is, that array's version,
        or None) and the names holding the array it is a view of (its root): what a write changes."""
        versions = []
        for a in arrays:
            example, root = self._callers_array(a), a.view.base if a.view is not None else a
            written = self.mutations.get(id(example)) if example is not None else None
            versions.append((example, written, root, [k for k, v in self.frame.env.items() if v is root]))
        return versions

    def _bind_last_row(self, node: ast.For, versions: list[tuple], last: Any) -> None:
        """After a loop over rows its target holds the last row (`last`, taken from the arrays as they
        were before the loop): unless the loop wrote into one of them, which `last` would not show."""
        written = any(example is not None and self.mutations.get(id(example)) is not version
                      or any(self.frame.env.get(k) is not root for k in names)
                      for example, version, root, names in versions)
        if written:
            gone = Unavailable(f"the loop target is read after the loop at line {node.lineno}, which wrote into "
                               "the arrays it went through (the last row would not show it): not supported yet")
            for name in _target_names(node):
                self.frame.env[name] = gone
        else:
            self._assign(node.target, last)

    def range_loop(self, node: ast.For, steps: range) -> bool:
        """`for i in range(...)` as an scf.for, or unrolled; False when the caller must unroll it."""
        if not len(steps):
            return False
        if len(steps) > MAX_STATIC_UNROLL:
            self._for_range(node, steps, iteration_locals=True)  # too long to unroll: a real loop or nothing
            return True
        if node.orelse or "scf.if" in S.enclosing_regions():
            return False  # inside a branch on a computed value: keep unrolling here
        # Inside a real loop (made so because unrolling was too large), an scf.for too: the unroll
        # pass unrolls it within its budget of IREE kernels.
        if self._attempt(lambda: self._for_range(node, steps, iteration_locals=bool(self.hoist_points))) is None:
            return True
        if self._unrolling_attempts:
            return False  # the loop around unrolls this one (or makes it an scf.for if that is too large)
        # Unrolled, unless that is too large (a loop nest: cs231n's naive convolution); then an scf.for
        # whose iterations bind names of their own (`window = x[...]`, inner loops' counters), around
        # the inner loops, which are unrolled in turn or become scf.for loops too.
        self._unrolling_attempts += 1
        try:
            error = self._attempt(lambda: self._unroll_within_kernel_budget(node, steps))
        finally:
            self._unrolling_attempts -= 1
        if error is None:
            return True
        if isinstance(error, GraphTooLarge):
            return self._attempt(lambda: self._for_range(node, steps, iteration_locals=True)) is None
        return False

    def _unroll_within_kernel_budget(self, node: ast.For, steps: range) -> None:
        """The loop unrolled, unless that makes more IREE kernels than the unroll pass would
        (passes/unroll.py's MAX_KERNELS): each unrolled copy of a reduction or matmul over a slice
        at other offsets is a kernel IREE compiles separately (cs231n's naive convolution: 144
        windows, a minute of IREE time), where an scf.for compiles its body's kernels once."""
        block = ir.InsertionPoint.current.block
        before = {op.operation for op in block.operations}
        self._unroll(node, Known(steps))
        made = sum(kernels(op.operation) for op in block.operations if op.operation not in before)
        if made > MAX_KERNELS:
            raise GraphTooLarge(f"unrolled, the loop makes {made} IREE kernels (the unroll pass makes at most "
                                f"{MAX_KERNELS})", node)

    def _for_range(self, node: ast.For, steps: range, iteration_locals: bool = False) -> None:
        """`for i in range(a, b, s)`: scf.for over k in [0, len) with `i = a + k*s` as a loop counter
        (for s > 0 the loop runs over i itself)."""
        exit_at = _exit_if(node)
        if exit_at is not None:
            self._range_loop_with_exit(node, steps, exit_at)
            return
        if self._peel_first_iteration(node, Known(steps[0])):
            steps = steps[1:]
            if not steps:
                return
        counter = self._range_counter(steps, counts_values=steps.step > 0)
        if steps.step > 0:
            self._scf_for(node, emit.index(steps.start), emit.index(steps.stop), counter, emit.index(steps.step),
                          len(steps), iteration_locals)
        else:
            self._scf_for(node, emit.index(0), emit.index(len(steps)), counter, emit.index(1), len(steps),
                          iteration_locals)
        self.frame.env[node.target.id] = Known(steps[-1])

    def _scf_for(self, node: ast.For, lower: ir.Value, upper: ir.Value, target, step: ir.Value,
                 trips: int | None, iteration_locals: bool = False) -> None:
        """scf.for from `lower` to `upper` by `step`, `trips` times (None: a number that varies);
        `target(i)` is the loop variable's value in iteration i.

        With `iteration_locals`, names the body binds that hold no array or scalar before the loop
        (`window = x[i:i + k]`, an inner loop's counter) are the iterations' own, not carried in:
        an iteration that reads one before binding it does not compile. (Without, such a loop is left
        to be unrolled, which is faster for small loops.)

        The caller's arrays the body writes into (`self.w_[1:] += update * xi`, `W -= lr * g`) are
        carried too: building the body stops at the first write into one the loop does not carry
        (`CallerArrayInLoop`); the array is then read before the loop, by the expression the write
        names, and the loop is built again carrying it."""
        arrays: dict[int, tuple[np.ndarray, Tensor]] = {}  # id(array) -> (array, its value before the loop)
        written: set[str] = set()  # names of arrays the body writes through views (`r = Z[i]; r[1] = v`)
        while True:
            error = self._attempt(lambda: self._scf_for_carrying(node, lower, upper, target, step, trips,
                                                                 iteration_locals, arrays, written))
            if error is None:
                return
            if isinstance(error, CallerArrayInLoop) and id(error.example) not in arrays:
                arrays[id(error.example)] = (error.example, self._written_before_loop(error))
            elif isinstance(error, ArrayWrittenInLoop) and error.name not in written:
                written.add(error.name)
            else:
                raise error  # (one this loop carries: a loop around it must carry it too)

    def _written_before_loop(self, write: CallerArrayInLoop) -> Tensor:
        """The array a write in a loop body writes into, as it is before the loop: held by a name then
        (`X` for `r = X[i]; r[0] = 1.0`), or read by the expression the write names (`self.w_`)."""
        held = [v for v in self.frame.env.values() if self._callers_array(v) is write.example]
        value = held[0] if held else self.visit(write.expression)
        if self._callers_array(value) is not write.example:
            raise Unsupported(f"{write} (it is not the same array before the loop)", write.node)
        return value.view.base if value.view is not None else value

    def _scf_for_carrying(self, node: ast.For, lower: ir.Value, upper: ir.Value, target, step: ir.Value,
                          trips: int | None, iteration_locals: bool, arrays: dict, written: set[str]) -> None:
        """`_scf_for`, carrying the caller's `arrays` and the names in `written` too (see there)."""
        self._resolve_floats_or_float64s()
        _reject_jumps(node)
        targets = _target_names(node)
        env = self.frame.env
        # (A name of an array the caller can see that the body does not rebind is written in place:
        # the array is carried, not the name.)
        rebound = rebound_names(node.body)
        names = sorted(n for n in (assigned_names(node.body) | written) - targets
                       if n in rebound or self._callers_array(env.get(n)) is None)
        local = [n for n in names if n not in env or not _carriable(env[n]) or _binds_before_reading(node.body, n)
                 ] if iteration_locals else []
        names = [n for n in names if n not in local]
        for name in names:
            if not _carriable(env.get(name)):
                raise Unsupported(f"{name!r} changes in a compiled loop but is not a computed array", node)
            if isinstance(env[name], Known):
                self._as_computed(env[name])  # e.g. `hs = np.zeros((T, H))` filled in the loop
        slots = self._carried_attributes(node)
        carried = [(example, self.mutations[id(example)] if id(example) in self.mutations
                    else (example, read.source, read)) for example, read in arrays.values()]
        inits = ([env[n] for n in names] + [self._slot_value(slot, node) for slot in slots]
                 + [version for _, (_, _, version) in carried])
        for name in local:  # a read before the iteration binds it would need the last one's value
            env.pop(name, None)
        before = dict(env)
        loop = scf.ForOp(lower, upper, step, [t.value for t in inits])
        if not self.hoist_points:
            self.hoist_points.append(ir.InsertionPoint(loop.operation))
        outer_slots = dict(self.carried_slots)
        self.carried_slots.update((key, obj) for key, obj in slots)
        iv = loop.induction_variable
        self.for_loops.append(ForLoop(next(_loop_keys), trips,
                                      lambda: _as_int64(arith.divui(arith.subi(iv, lower), step)), frozenset(arrays)))
        try:
            with ir.InsertionPoint(loop.body), S.region_guards(loop.body) as guards:
                self._bind(names, slots, inits, loop.inner_iter_args)
                first = len(names) + len(slots)
                for (example, (_, path, _)), arg in zip(carried, loop.inner_iter_args[first:]):
                    self._new_version(example, path, Tensor(arg, np.ndarray))
                self._assign(node.target, target(loop.induction_variable))
                self._visit_body(node.body)
                finals = self._check_carried(names, slots, inits, before, node, local, arrays)
                finals += [self.mutations[id(example)][2] for example, _ in carried]
                # The local names' last values are kept for after the loop where they are arrays or
                # scalars: carried too, from zeros that no iteration reads.
                kept = [self.frame.env[n] for n in local if _keepable(self.frame.env.get(n))]
                # (a branch may rebind the env) Then whether each guard made in the body held.
                scf.YieldOp([t.value for t in finals + kept] + [g.cond for g in guards])
        finally:
            self.carried_slots = outer_slots
            self.for_loops.pop()
            if self.hoist_points and self.hoist_points[0].ref_operation == loop.operation:
                self.hoist_points.clear()
        if kept or guards:
            with ir.InsertionPoint(loop.operation):
                zeros = [S.full(t.shape, 0, t.dtype).value for t in kept]
                held = [S.constant(np.True_).value for _ in guards]
            loop = _with_more_carried(loop, lower, upper, step, [t.value for t in inits] + zeros + held)
            _held_in_every_iteration(loop, len(guards))
        self._bind(names, slots, inits, loop.results)
        after = iter(loop.results[len(inits):])
        for name in local:  # after the loop: the last iteration's value
            value = self.frame.env.get(name)
            if _keepable(value):
                self.frame.env[name] = Tensor(next(after), value.pytype)
            elif not isinstance(value, Known):  # (a constant is the same in every iteration)
                self.frame.env[name] = Unavailable(f"{name!r} is read after the loop at line {node.lineno}, "
                                                   "which compiled code does not keep (only each iteration "
                                                   "binds it)")
        first = len(names) + len(slots)  # (after the locals: views an iteration made are gone)
        for (example, (_, path, _)), value in zip(carried, loop.results[first:]):
            self._new_version(example, path, Tensor(value, np.ndarray))
        for (key, obj), value in zip(slots, loop.results[len(names):]):
            self._store_attr(obj, key[1], Tensor(value, self.stored_attrs[key].pytype), node)
        for g, held in zip(guards, loop.results[len(loop.results) - len(guards):]):
            S.guard(held, g.kind, g.reason, g.site)  # after the loop: whatever is around it

    def only_for_loops(self, regions: list[str]) -> bool:
        """Whether the real loops among `regions` (S.enclosing_regions) are all scf.for loops this
        generator is building (`for_loops`), none a `while` or a loop it made otherwise."""
        loops = [r for r in regions if r in ("scf.for", "scf.while")]
        return "scf.while" not in loops and len(loops) == len(self.for_loops)

    def _check_loops_carry(self, example: np.ndarray, root: Tensor, node: ast.AST) -> None:
        """A write into the caller's array `example` inside real loops: each must be an scf.for that
        carries it (else CallerArrayInLoop, which the loop not carrying it yet catches)."""
        expression = _written_expression(node)
        if not self.only_for_loops(S.enclosing_regions()) or expression is None:
            raise Unsupported(f"writing into {root.source} (an array the caller can see) inside a loop on a "
                              "computed condition is not supported yet", node)
        if any(id(example) not in loop.arrays for loop in self.for_loops):
            raise CallerArrayInLoop(f"writing into {root.source} inside a loop", node, example, expression)

    def _range_counter(self, steps: range, counts_values: bool = False):
        """The loop variable, from an index value: the k-th iteration's (`steps[k]`), or, with
        `counts_values`, the value itself (an scf.for that steps through `steps`)."""
        low, high = min(steps[0], steps[-1]), max(steps[0], steps[-1])

        def counter(k: ir.Value) -> Tensor:
            i = k if counts_values else arith.addi(emit.index(steps.start), arith.muli(k, emit.index(steps.step)))
            value = BoundedInt(_as_int64(i), int, lower=low, upper=high + 1)
            self.loop_counters[id(value)] = high + 1  # arrays indexed by i need this length
            return value
        return counter

    def _range_loop_with_exit(self, node: ast.For, steps: range, exit_at: int) -> None:
        """`for i in range(...)` whose one jump is a top-level `if <test>: ...; break` (iterate until
        converged): an scf.while over the iteration count k and an exit flag. Iteration k runs the
        statements before the `if`, then the if's statements (and the loop stops) or the rest.
        A name the statements before the `if` bind before reading it needs no value before the loop:
        it enters the loop as zeros of the type the first iteration gives it, never read."""
        self._resolve_floats_or_float64s()
        if node.orelse or not isinstance(node.target, ast.Name):
            raise Unsupported("for/else, or a loop target other than a name, is not supported yet", node)
        head, exit_if, tail = node.body[:exit_at], node.body[exit_at], node.body[exit_at + 1:]
        env, target = self.frame.env, node.target.id
        names = sorted(assigned_names(node.body) - {target})
        fresh = [n for n in names if n not in env]
        if any(not _binds_before_reading(head, n) for n in fresh):
            raise Unsupported("a name the loop binds has no value before it and is not bound first thing "
                              "in each iteration", node)
        if fresh:
            self._zeros_like_first_iteration(head, fresh, target, steps[0], node)
            env = self.frame.env  # the dry run's undoing restored a copy of the environment
        for name in names:
            if isinstance(env[name], Known) and type(env[name].value) is np.ndarray:
                self._as_computed(env[name])
        # The iteration count and the exit flag are carried as 0-d tensors, as the values are
        # (IREE 3.13 crashed compiling an scf.while that carried an index and an i1).
        inits = [env[n] for n in names] + [S.constant(0, np.dtype(np.int64)), S.constant(False, np.dtype(np.bool_))]
        outside = dict(env)
        types = [t.value.type for t in inits]
        loop = scf.WhileOp(types, [t.value for t in inits])
        if not self.hoist_points:
            self.hoist_points.append(ir.InsertionPoint(loop.operation))
        try:
            before = loop.before.blocks.append(*types)
            with ir.InsertionPoint(before):
                *_, k, done = before.arguments
                more = S.ufunc(np.less, Tensor(k, np.int64), Known(np.int64(len(steps))))
                go = S.ufunc(np.logical_and, more, Tensor(S.logical_not(done), np.bool_))
                scf.ConditionOp(tensor.extract(go.value, []), list(before.arguments))
            after = loop.after.blocks.append(*types)
            with ir.InsertionPoint(after):
                *values, k, entered_done = after.arguments
                self._bind(names, [], inits, values)
                self.frame.env[target] = self._range_counter(steps)(_as_index(k))
                self._visit_body(head)
                flag = S.truth(self.visit(exit_if.test))
                self._if_statement(flag, ast.copy_location(
                    ast.If(exit_if.test, exit_if.body[:-1] or [ast.Pass()], tail or [ast.Pass()]), exit_if))
                self._check_carried(names, [], inits, {**outside, target: self.frame.env[target]}, node)
                step = S.ufunc(np.add, Tensor(k, np.int64), Known(np.int64(1)))
                # Every value the iteration receives is read (the flag entering is false here): upstream
                # canonicalization drops unread ones from the iteration's arguments, and IREE 3.13's
                # stream conversion crashed on an scf.while whose two regions' arguments differ.
                entered = Tensor(entered_done, np.bool_)
                yields = [S.where(entered, Tensor(v, old.pytype), self.frame.env[n]).value
                          if _binds_before_reading(head, n) else self.frame.env[n].value
                          for n, v, old in zip(names, values, inits)]
                done = S.ufunc(np.logical_or, entered, Tensor(flag, np.bool_))
                scf.YieldOp(yields + [step.value, done.value])
        finally:
            if self.hoist_points and self.hoist_points[0].ref_operation == loop.operation:
                self.hoist_points.clear()
        *results, k, _ = loop.results
        self._bind(names, [], inits, results)  # (the branch in the body rebound self.frame.env)
        last = arith.subi(_as_index(k), emit.index(1))
        self.frame.env[target] = self._range_counter(steps)(last)  # the last iteration's

    def _zeros_like_first_iteration(self, head: list[ast.stmt], names: list[str], target: str, first: int,
                                     node: ast.For) -> None:
        """Bind `names` to zeros of the types the statements `head` give them in iteration `first`
        (learned by generating them once and undoing it: what it generated is erased, so only the
        types are kept)."""
        kinds = {}

        def dry_run():
            self.frame.env[target] = Known(first)
            self._visit_body(head)
            for n in names:
                t = self.frame.env.get(n)
                kinds[n] = (t.shape, t.dtype, t.pytype) if isinstance(t, Tensor) else None
            raise Unsupported("(undone)")

        self._attempt(dry_run)
        for name in names:
            if kinds.get(name) is None or None in kinds[name][0]:
                raise Unsupported(f"{name!r} changes in a compiled loop but is not a computed array", node)
            shape, dtype, pytype = kinds[name]
            self.frame.env[name] = Tensor(S.full(shape, 0, dtype).value, pytype)

    def _carried_attributes(self, node: ast.For) -> list[tuple[tuple[int, str], Obj]]:
        """The attributes `x.name` the loop body assigns, of objects `x` names before the loop (a
        layer's `self.b = ...`, `self.t += 1`): carried by the loop like local names. (One that holds
        an array of the caller's is written in place, `self.W -= lr * dW`: the array is carried.)"""
        slots = {}
        for stmt in node.body:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name):
                    obj = self.frame.env.get(sub.value.id)
                    if isinstance(obj, Obj):
                        slots[(id(obj.example), sub.attr)] = obj
        return [((key, name), obj) for (key, name), obj in slots.items()
                if self._callers_array(self._attribute(obj, name, node)) is None]

    def _slot_value(self, slot: tuple[tuple[int, str], Obj], node: ast.For) -> Tensor:
        (_, name), obj = slot
        value = self._attribute(obj, name, node)
        if isinstance(value, Known) and type(value.value) is np.ndarray:
            value = self._as_computed(value)
        if not isinstance(value, Tensor) or value.view is not None or value.either is not None or \
                value.source is not None and value.pytype is np.ndarray:
            raise Unsupported(f"attribute {name!r} changes in a compiled loop but is not an array or scalar "
                              "this call computed", node)
        self.stored_attrs[slot[0]] = value
        return value

    def _peel_first_iteration(self, node: ast.For, first: Any) -> bool:
        """Run the first iteration here, unrolled, with the target bound to `first`, when the body
        binds a name that is no computed value yet: `running = 0.0` before `running = running * gamma
        + r[t]` is a Python float until the first iteration makes it a NumPy float64, which the rest
        then carry."""
        _reject_jumps(node)
        env = self.frame.env
        # (Names each iteration binds before reading them are its own: `_scf_for` does not carry them.)
        names = [n for n in assigned_names(node.body) - _target_names(node)
                 if n in env and not _binds_before_reading(node.body, n) and self._callers_array(env[n]) is None]
        values = [env[n] for n in names] + [self._attribute(obj, key[1], node)
                                            for key, obj in self._carried_attributes(node)]
        if all(map(_carriable, values)):
            return False
        self._assign(node.target, first)
        self._visit_body(node.body)
        return True

    def _take_row(self, base: Tensor, counter: Tensor, node: ast.AST) -> Tensor:
        """`x[i]` for a loop counter `i` of a loop that runs n times: needs len(x) >= n."""
        length = base.shape[0] if base.ndim else 0
        if length is None or length < self.loop_counters[id(counter)]:
            raise Unsupported("indexing with a loop counter beyond the array's length raises IndexError", node)
        return _row_of(base, counter)

    def _check_carried(self, names: list[str], slots: list, inits: list[Tensor], before: dict,
                       node: ast.AST, local: list[str] = (), arrays: dict = {}) -> list[Tensor]:  # noqa: B006
        """Loop-carried values keep their type; nothing else but the `local` names, which each
        iteration binds afresh, and versions of the caller's `arrays` the loop carries, may change
        inside the loop. Returns them."""
        env = self.frame.env
        finals = [env[n] for n in names] + [self.stored_attrs[key] for key, _ in slots]
        labels = names + [f"{obj.path}.{key[1]}" for key, obj in slots]
        for name, old, new in zip(labels, inits, finals):
            new = self._unpoisoned(new, node)
            if not isinstance(new, Tensor) or new.value.type != old.value.type or new.pytype is not old.pytype:
                raise Unsupported(f"{name!r} changes type, dtype or shape inside the loop", node)
            if new.has_identity:
                raise Unsupported(f"{name!r} becomes a view of an array, or an array the caller can see, inside "
                                  "the loop", node)
        targets = _target_names(node) if isinstance(node, ast.For) else set()
        for name, value in env.items():
            if name not in names and name not in local and name not in targets and before.get(name) is not value \
                    and id(self._callers_array(value)) not in arrays:
                if _carriable(before.get(name)) and isinstance(value, Tensor) and not value.has_identity:
                    raise ArrayWrittenInLoop(f"{name!r} changes inside the loop", node, name)
                raise Unsupported(f"{name!r} changes inside the loop", node)
        return finals

    def _row(self, rows: Tensor, i: ir.Value) -> Tensor:
        return _row_of(rows, Tensor(_as_int64(i), int))

    def _bind(self, names: list[str], slots: list, like: list[Tensor], values) -> None:
        """Names and carried attributes (`slots`) take `values`, of the Python types in `like`."""
        places = [(self.frame.env, name) for name in names] + [(self.stored_attrs, key) for key, _ in slots]
        for (table, key), old, value in zip(places, like, values):
            table[key] = Tensor(value, old.pytype)


def _target_names(node: ast.For) -> set[str]:
    """The names a `for` loop's target binds (`x`, or `x, t`); other targets are refused."""
    target = node.target
    if node.orelse or not (isinstance(target, ast.Name) or isinstance(target, ast.Tuple)
                           and all(isinstance(e, ast.Name) for e in target.elts)):
        raise Unsupported("for/else, or a loop target other than names, is not supported yet", node)
    return {target.id} if isinstance(target, ast.Name) else {e.id for e in target.elts}


def _row_of(base: Tensor, i: Tensor) -> Tensor:
    """`base[i]` for an index `i` in range (a loop's counter): a NumPy scalar of a 1-d base, else a
    view of the row, which a write into `base` reaches and a write into it goes through to `base`."""
    row = S.build("take", [base.value, i.value])
    if base.ndim == 1:
        return Tensor(row, base.dtype.type)
    return S.view_of(base, row, None, redo=lambda b: Tensor(S.build("take", [b.value, i.value]), np.ndarray),
                     write_back=lambda b, v: indexing.setitem(b, i, v))


def _keepable(value: Any) -> bool:
    """Whether a name an scf.for's iterations bind can keep its last value for after the loop: an
    array or scalar this call computed, of a static shape."""
    return isinstance(value, Tensor) and not value.has_identity and None not in value.shape


def _with_more_carried(loop: scf.ForOp, lower: ir.Value, upper: ir.Value, step: ir.Value,
                       inits: list[ir.Value]) -> scf.ForOp:
    """`loop`, whose body already yields more values than it carries, rebuilt to carry them all from
    `inits`: its body moves into the new loop, and `loop` is erased."""
    with ir.InsertionPoint(loop.operation):
        new = scf.ForOp(lower, upper, step, inits)
    loop.induction_variable.replace_all_uses_with(new.induction_variable)
    for old, arg in zip(loop.inner_iter_args, new.inner_iter_args):
        old.replace_all_uses_with(arg)
    for op in list(loop.body.operations):
        new.body.append(op)
    loop.operation.erase()
    return new


def _held_in_every_iteration(loop: scf.ForOp, count: int) -> None:
    """The last `count` values `loop` carries are guards' conditions, from true: make each iteration
    yield "it held in every iteration so far" (the condition and the value carried in)."""
    yield_op = list(loop.body.operations)[-1]
    first = len(yield_op.operands) - count
    with ir.InsertionPoint(yield_op):
        for k in range(first, first + count):
            so_far = Tensor(loop.inner_iter_args[k], np.bool_)
            yield_op.operands[k] = S.ufunc(np.logical_and, so_far, Tensor(yield_op.operands[k], np.bool_)).value


def _carriable(value: Any) -> bool:
    """Whether an scf.for can carry `value` into its first iteration: an array or scalar (its value: the
    loop runs at least once, and its last iteration's value must be a new one, `_check_carried`), or a
    constant array."""
    return isinstance(value, Tensor) or isinstance(value, Known) and type(value.value) is np.ndarray


def _binds_before_reading(body: list[ast.stmt], name: str) -> bool:
    """Whether `body` binds `name` (by an assignment or as a loop's target) before anything reads it."""
    for stmt in body:
        if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return not _reads(stmt.iter, name)
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return not _reads(stmt.value, name)
        if _reads(stmt, name):
            return False
    return False


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _exit_if(node: ast.For) -> int | None:
    """The index of the body's `if <test>: ...; break` (no else) when it is the loop's only jump."""
    exits = [i for i, stmt in enumerate(node.body) if isinstance(stmt, ast.If) and not stmt.orelse
             and isinstance(stmt.body[-1], ast.Break)]
    jumps = [sub for sub in ast.walk(node) if isinstance(sub, (ast.Break, ast.Continue, ast.Return))]
    return exits[0] if len(exits) == 1 and len(jumps) == 1 else None


def _single_break(node: ast.While) -> int | None:
    """The index of the body's `if <test>: break` when it is the loop's only jump, else None."""
    exits = [i for i, stmt in enumerate(node.body) if isinstance(stmt, ast.If) and not stmt.orelse
             and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Break)]
    jumps = [sub for sub in ast.walk(node) if isinstance(sub, (ast.Break, ast.Continue, ast.Return))]
    return exits[0] if len(exits) == 1 and len(jumps) == 1 else None


def _reject_jumps(node: ast.While | ast.For) -> None:
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Break, ast.Continue, ast.Return)):
            raise Unsupported(f"{construct(sub)} inside a loop compiled as a real loop "
                              "is not supported yet", sub)


def _as_index(t: ir.Value) -> ir.Value:
    """A 0-d int64 tensor as an index value."""
    return arith.index_cast(ir.IndexType.get(), tensor.extract(t, []))


def _as_int64(i: ir.Value) -> ir.Value:
    """An index value as a 0-d int64 tensor (how the graph holds Python ints)."""
    return tensor.from_elements(tensor_type((), np.dtype(np.int64)),
                                [arith.index_cast(ir.IntegerType.get_signless(64), i)])


def _written_expression(node: ast.AST) -> ast.expr | None:
    """The expression naming the array a statement writes into (`x` in `x[i] = v`, `x[i] += v`,
    `x -= v`, `np.add.at(x, i, v)`), or None."""
    if isinstance(node, ast.Expr):
        node = node.value
    if isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
    elif isinstance(node, ast.Call) and node.args:
        target = node.args[0]  # np.add.at(x, ...)
    elif isinstance(node, (ast.Subscript, ast.Name, ast.Attribute)):
        target = node  # an assignment's target
    else:
        return None
    while isinstance(target, ast.Subscript):
        target = target.value
    return _as_load(target)


def _as_load(target: ast.expr) -> ast.expr | None:
    """`target`, a name or a chain of attributes of one, as an expression that reads it; else None."""
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(target.id, ast.Load()), target)
    if isinstance(target, ast.Attribute):
        value = _as_load(target.value)
        return None if value is None else ast.copy_location(ast.Attribute(value, target.attr, ast.Load()), target)
    return None

