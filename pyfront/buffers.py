"""Writes into arrays, as a mixin of the graph generator: NumPy's in-place semantics on SSA values.

In the interpreter an array is a buffer that every name, container item,
attribute and view of it shares; a write (`a[k] = v`, `a += v`, `out=a`,
`np.add.at(a, ...)`) changes what all of them see. In the graph an array is
an immutable SSA value, so a write makes a new *version* of the buffer
(`indexing.setitem`), and `_write_array` then puts that version everywhere
the old one was: in every frame's locals, in tuples and lists, in the local
copies of Python state (state.py), and in every view of the buffer, each
re-derived from the new version (`View.derive`). A write through a view is a
write of the base (`View.write_back`). Where either is unknown (a reshape
that NumPy may have made a copy, a broadcast view, which NumPy makes
read-only), the write is refused and the call runs in the interpreter.

Buffers the caller can see (an argument, an array in Python state: a
Tensor with a `source` path) follow JANUS's deferred state update: the graph
returns the buffer's last version, and the runtime copies it into the
caller's own array (`np.copyto`, so every alias and view sees it) only
after every guard held, with the other deferred stores (runtime/variant.py).
A deopt leaves the caller's arrays untouched. Such a buffer is identified
by the array object it was read from at compile time: an array reached
through two paths (an argument also held by `self`, a parameter shared by a
layer and a model's dict) is one buffer. `BufferGuard` checks at call time
that the arrays at those paths alias exactly as at compile time, that no
written array overlaps another input without being it, and that every
written array is writeable (NumPy raises otherwise: the interpreter does).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from pyfront import indexing
from pyfront import semantics as S
from pyfront.errors import Unsupported
from pyfront.guards import BufferGuard
from pyfront.values import BoundMethod, DictView, Iter, Known, Seq, Tensor, View


class BufferMixin:
    def _init_buffers(self) -> None:
        # id(tensor) -> (tensor, the array object it was read from): inputs the caller can see.
        self._input_arrays: dict[int, tuple[Tensor, np.ndarray]] = {}
        # id(array object) -> (object, its path, its last version): written inputs, in first-write order.
        self.mutations: dict[int, tuple[np.ndarray, Any, Tensor]] = {}
        self.mutation_commits: list[tuple[str, Any]] = []  # (path, tree), made by _finish_buffers
        # id -> array this call made that another name holds on one path of a branch only
        # (branches.py `_alias_conflicts`): a write into it would have to reach that name or not.
        self.alias_ambiguous: dict[int, Any] = {}

    # Inputs ------------------------------------------------------------------------------

    def _input_array(self, t: Tensor, example: Any) -> Tensor:
        """`t`, read at `t.source` from the array `example`; its last version if the call wrote it."""
        if type(example) is not np.ndarray or t.pytype is not np.ndarray:
            return t
        written = self.mutations.get(id(example))
        if written is not None:
            t = Tensor(written[2].value, np.ndarray, source=t.source)
        self._input_arrays[id(t)] = (t, example)
        return t

    def _read_inputs(self) -> dict[int, Tensor]:
        """id(array the caller can see) -> a value read from it (the first)."""
        found: dict[int, Tensor] = {}
        for t, example in self._input_arrays.values():
            found.setdefault(id(example), t)
        return found

    def _by_value(self, v: Any) -> Any:
        """`v` for a print: a written input (or a view of one) by its value now, not by its path.

        Prints happen before the writes are committed; the caller's array still holds the old values."""
        if isinstance(v, Seq):
            items = tuple(self._by_value(i) for i in v.items)
            return v if all(a is b for a, b in zip(items, v.items)) else Seq(items, v.kind)
        if isinstance(v, Tensor) and self.mutations:
            root = v.view.base if v.view is not None else v
            seen = self._input_arrays.get(id(root))
            if seen is not None and seen[0] is root and id(seen[1]) in self.mutations:
                return Tensor(v.value, v.pytype)
        return v

    # Writes ------------------------------------------------------------------------------

    def _write_item(self, base: Any, key: Any, value: Any, node: ast.AST) -> None:
        """`base[key] = value` for an array `base`."""
        target = self._writable(base, node)
        self._write_array(base, indexing.setitem(target, key, value), node)

    def _inplace(self, op: type, current: Any, operand: Any, node: ast.AST) -> Any:
        """`current op= operand` on an array: NumPy's `ufunc(current, operand, out=current)`."""
        target = self._writable(current, node)
        if op is ast.MatMult:
            raise Unsupported("in-place matrix multiplication (@=) is not supported yet", node)
        result = self._binop(op, target, operand)
        self._check_out(result, target, node)
        return self._write_array(current, S.astype(result, target.dtype, np.ndarray), node)

    def _call_with_out(self, handler, args: list, kwargs: dict, name: str, node: ast.AST) -> Any:
        """`np.ufunc(..., out=a)`, `np.clip(..., out=a)`: the result written into `a`, which the call returns."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out")
        if isinstance(out, Seq) and out.kind is tuple and len(out.items) == 1:
            out = out.items[0]
        if isinstance(out, Known) and out.value is None:
            return self._apply(handler, args, kwargs, name)
        target = self._writable(out, node)
        result = self._apply(handler, args, kwargs, name)
        self._check_out(result, target, node)
        return self._write_array(out, S.astype(S.to_tensor(result), target.dtype, np.ndarray), node)

    def _check_out(self, result: Any, out: Tensor, node: ast.AST) -> None:
        """NumPy's rules for writing a ufunc's `result` into `out` (else it raises)."""
        result = S.to_tensor(result)
        if not np.can_cast(result.dtype, out.dtype, "same_kind"):
            raise Unsupported(f"cannot cast the {result.dtype} result of an in-place operation to the "
                              f"{out.dtype} array (NumPy raises UFuncTypeError)", node)
        if result.shape != out.shape:
            raise Unsupported(f"non-broadcastable output operand with shape {out.shape} doesn't match the "
                              f"broadcast shape {result.shape} (NumPy raises ValueError)", node)

    def _writable(self, base: Any, node: ast.AST) -> Tensor:
        if isinstance(base, Known) and type(base.value) is np.ndarray:
            if not base.value.flags.writeable:  # a folded broadcast view
                raise Unsupported("assignment destination is read-only (NumPy raises ValueError)", node)
            return S.constant(base.value)
        if not isinstance(base, Tensor) or base.pytype is not np.ndarray:
            raise Unsupported(f"writing into {S.describe(base)} is not supported", node)
        if base.view is not None and base.view.write_back is None:
            raise Unsupported("writing through this view of an array is not supported yet (a broadcast view is "
                              "read-only in NumPy; a reshape may be a copy)", node)
        return base

    def _write_array(self, target: Any, contents: Tensor, node: ast.AST) -> Any:
        """The array that `target` denotes (a buffer, or a view of one) now holds `contents`.

        Returns what `target` now is (its new version)."""
        if isinstance(target, Tensor) and target.view is not None:
            root = target.view.base
            contents = target.view.write_back(root, contents)
        else:
            root = target
        contents = Tensor(contents.value, np.ndarray)
        if isinstance(root, Tensor) and root.either is not None:
            raise Unsupported("writing into an array that is the caller's on one path of a branch on a computed "
                              "value and a new one on another is not supported yet", node)
        if id(root) in self.alias_ambiguous:
            raise Unsupported("writing into an array that another name holds on one path of a branch on a "
                              "computed value only is not supported yet", node)
        if isinstance(root, Known) or root.source is None:  # an array this call made
            if isinstance(root, Known):
                self._check_compile_time_aliases(root, node)
            return self._swap_buffer(lambda v: v is root, lambda v: contents)(target)
        entry = self._input_arrays.get(id(root))
        if entry is None or entry[0] is not root:
            raise Unsupported(f"writing into the array at {root.source} is not supported yet", node)
        example = entry[1]
        if S.in_loop():
            self._check_loops_carry(example, root, node)
        self._check_overlaps(example, root.source, node)
        first = self.mutations.get(id(example))
        return self._new_version(example, first[1] if first else root.source, contents)(target)

    def _new_version(self, example: np.ndarray, path: Any, contents: Tensor):
        """The caller's array `example` (at `path`) holds `contents` now: it is recorded as written,
        and every value that is a version of it, or a view of one, becomes the new version.

        Returns the replacement function, for values held elsewhere (`_swap_buffer`)."""
        self.mutations[id(example)] = (example, path, contents)

        def same_buffer(v: Tensor) -> bool:
            seen = self._input_arrays.get(id(v))
            return seen is not None and seen[0] is v and seen[1] is example

        def version(v: Tensor) -> Tensor:
            new = Tensor(contents.value, np.ndarray, source=v.source)
            self._input_arrays[id(new)] = (new, example)
            return new

        return self._swap_buffer(same_buffer, version)

    def _callers_array(self, value: Any) -> np.ndarray | None:
        """The caller's array that `value` is a version of, or a view of a version of; else None."""
        if not isinstance(value, Tensor):
            return None
        root = value.view.base if value.view is not None else value
        seen = self._input_arrays.get(id(root))
        return seen[1] if seen is not None and seen[0] is root else None

    def _as_computed(self, folded: Known) -> Tensor:
        """A folded array (`np.zeros(...)`) as a computed array, everywhere it is seen: so that views
        taken of it are views (a write through them is seen) rather than folded copies."""
        self._check_compile_time_aliases(folded, None)
        constant = S.constant(folded.value)
        return self._swap_buffer(lambda v: v is folded, lambda v: constant)(folded)

    def _check_overlaps(self, example: np.ndarray, path: Any, node: ast.AST) -> None:
        for _, other in self._input_arrays.values():
            if other is not example and np.may_share_memory(other, example):
                raise Unsupported(f"{path} shares memory with another array this call reads (overlapping "
                                  "views); writing into it is not supported yet", node)

    def _check_compile_time_aliases(self, array: Known, node: ast.AST) -> None:
        """A folded array (`np.zeros(3)`) must not be seen by other compile-time values (views, tuples)."""
        for value in self._held_values():
            if value is array:
                continue
            for other in _arrays_in(value):
                if np.may_share_memory(other, array.value):
                    raise Unsupported("writing into an array that a compile-time view or container also "
                                      "refers to is not supported yet", node)

    # Putting a new version everywhere -----------------------------------------------------

    def _held_values(self, outside_frame: bool = False) -> list:
        """Every value a write into an array must reach, in a fixed order: the frames' names (with
        `outside_frame`, all but the current frame's, which a branch merges itself: branches.py),
        stored and pending values, appended items. `_set_held_values` puts such a list back."""
        frames = self.frames[:-1] if outside_frame else self.frames
        values = [v for frame in frames for v in frame.env.values()]
        for stored in (self.stored_attrs, self.stored_items, self.stored_roots):
            values += stored.values()
        values += [v for _, v in self.stores.values()]
        values += [v for _, v in self.appends]
        return values + [i for items in self.appended_items.values() for i in items]

    def _set_held_values(self, values: list, outside_frame: bool = False) -> None:
        it = iter(values)
        for frame in self.frames[:-1] if outside_frame else self.frames:
            for name in frame.env:
                frame.env[name] = next(it)
        for stored in (self.stored_attrs, self.stored_items, self.stored_roots):
            for k in stored:
                stored[k] = next(it)
        for k, (path, _) in self.stores.items():
            self.stores[k] = (path, next(it))
        self.appends[:] = [(path, next(it)) for path, _ in self.appends]
        for items in self.appended_items.values():
            items[:] = [next(it) for _ in items]

    def _swap_buffer(self, is_buffer, version):
        """Replace every value `is_buffer` accepts (an array, or a list or dict the call made) by
        `version(value)` in every name, container, stored value and pending store, and re-derive
        the views of arrays.

        Returns the replacement function, for values held elsewhere (the target of the write)."""
        memo: dict[int, Any] = {}

        def swap(v: Any) -> Any:
            if id(v) in memo:
                return memo[id(v)]
            new = v
            if isinstance(v, (Tensor, Known, Seq)) and is_buffer(v):
                new = version(v)
            elif isinstance(v, Tensor):
                if v.view is not None and is_buffer(v.view.base):
                    view = v.view
                    if view.derive is None:
                        raise Unsupported("an array is written while a view of it (made by a reshape NumPy may "
                                          "copy, or a computed index) is live; not supported yet")
                    base = swap(view.base)
                    new = Tensor(view.derive(base).value, v.pytype, View(base, *_view_rules(view)), v.source)
            elif isinstance(v, Seq):
                items = tuple(swap(i) for i in v.items)
                if any(a is not b for a, b in zip(items, v.items)):
                    new = Seq(items, v.kind, v.source)
            elif isinstance(v, Iter):
                v.items = tuple(swap(i) for i in v.items)
            elif isinstance(v, DictView):
                mapping = swap(v.mapping)
                new = v if mapping is v.mapping else DictView(mapping, v.kind)
            elif isinstance(v, BoundMethod):
                receiver = swap(v.receiver)
                new = v if receiver is v.receiver else BoundMethod(receiver, v.name, v.function)
            memo[id(v)] = new
            return new

        self._set_held_values([swap(v) for v in self._held_values()])
        return swap

    # At the end ----------------------------------------------------------------------------

    def _finish_buffers(self, site: str) -> None:
        """What each written input commits, and the guard on how the inputs alias."""
        from pyfront.runtime import results as R

        self.mutation_commits = []
        for _, path, version in self.mutations.values():
            leaves = self.leaves
            tree = R.Output(len(leaves), np.ndarray)
            for i, leaf in enumerate(leaves):
                if leaf.value == version.value:
                    tree = R.Output(i, np.ndarray)
                    break
            else:
                leaves.append(Tensor(version.value, np.ndarray))
            self.mutation_commits.append((str(path), tree))
        if not self.mutations:
            return
        paths, examples = {}, {}
        for t, example in self._input_arrays.values():
            paths.setdefault(str(t.source), t.source)
            examples.setdefault(str(t.source), example)
        ids: dict[int, int] = {}
        groups = tuple(ids.setdefault(id(examples[p]), len(ids)) for p in paths)
        written = tuple(id(examples[p]) in self.mutations for p in paths)
        self.state_guards.append(BufferGuard(tuple(paths.values()), groups, written, site))


def _view_rules(view: View) -> tuple:
    return view.replay, view.derive, view.write_back, view.host


def _arrays_in(value: Any):
    """The NumPy arrays inside a compile-time value (tuples, lists and dicts of them)."""
    if not isinstance(value, Known):
        return
    stack = [value.value]
    while stack:
        v = stack.pop()
        if isinstance(v, np.ndarray):
            yield v
        elif type(v) in (tuple, list):
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(v.values())
