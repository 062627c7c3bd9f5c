"""`pyfront.grad(f)(...)` / `pyfront.value_and_grad(f)(...)` in compiled code, as a mixin of the graph generator.

A call of a `GradFunction` (pyfront/autodiff) inlines `f`'s forward into the
graph like any helper call (branches speculated from the profile, which sees
inside `f`, see profiler.py; loops unrolled), then the AD transformation on
the IR (autodiff/ir_ad.py) emits the backward right after it, so gradients
are values of the same graph and the rest of the function (an optimizer
step, deferred stores to `self.w`) uses them like any other array.

What is differentiated: the leaves of the arguments at `argnums`, which must
be float ndarrays (or NumPy float scalars), tuples and lists of them, dicts
(arguments or Python state) whose values are those, or plain objects. An
object is differentiated as the tape does it (autodiff/tape.py): each
attribute that holds float leaves (`tape.has_float`), directly or in tuples,
lists, dicts and nested objects, is a variable; the gradient is a dict
{attribute: gradient} in attribute order. The compiled variant guards the
object's attribute names (in order) and reads every attribute, so its types
are guarded too; an attribute the tape would not differentiate must be an
array or a constant (an object or container of non-floats is refused, as
its contents could change), and an object or container reached twice is
refused (the tape boxes each occurrence separately).

Each leaf is passed to `f` as a fresh copy (for containers and objects
in Python state, by substituting the copy for the item or attribute while
`f` is inlined), so `f` (and only `f`) sees it as the variable: a use of the
same array through another argument or through Python state is a constant,
as it is for the interpreter's tape. Gradients mirror the argument structure
(tuples stay tuples, lists lists, dicts dicts with the same keys in the same
order, objects dicts of their differentiated attributes).

`has_aux`: `f` returns a pair `(loss, aux)`; aux is a value of the graph like
any other (the backward starts from the loss only).

`f` must return a float scalar (or the pair) and must not print or write Python state (the
interpreter would see boxed values there); a branch in `f` on a computed
value that the profile saw both ways, a real loop, or a primitive without a
VJP rule on the differentiated path make the call `Unsupported` with the
line, so it runs in the interpreter.
"""

from __future__ import annotations

import ast
import types
from typing import Any

import numpy as np

from pyfront import semantics as S
from pyfront.autodiff.ir_ad import backward
from pyfront.callables import uncompiled
from pyfront.dialects.mlir import ir
from pyfront.dialects.primitives import bind, get
from pyfront.errors import Unsupported
from pyfront.guards import IdentityGuard
from pyfront.specialize import KeysSpec
from pyfront.values import Known, Obj, Seq, Tensor


def grad_function_type() -> type:
    from pyfront.autodiff import GradFunction

    return GradFunction


class GradMixin:
    # How many differentiated functions enclose the code being generated.
    differentiating: int = 0

    def _is_grad_transform(self, fn: Any) -> bool:
        """`pyfront.grad` / `pyfront.value_and_grad` themselves (building a GradFunction is pure)."""
        from pyfront import autodiff

        return fn is autodiff.grad or fn is autodiff.value_and_grad

    def _grad_call(self, gf: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
        if kwargs:
            raise Unsupported("keyword arguments to a gradient function are not supported yet", node)
        for attr in ("fn", "argnums", "value_and_grad", "has_aux"):  # a GradFunction's attributes can be rebound
            self._guard(IdentityGuard("attr", gf, attr, getattr(gf, attr), self._site(node)))
        fn = uncompiled(gf.fn)
        if not isinstance(fn, types.FunctionType):
            raise Unsupported(f"differentiating {fn!r}: only plain Python functions are compiled", node)
        argnums = (gf.argnums,) if isinstance(gf.argnums, int) else tuple(gf.argnums)
        if not argnums or any(not -len(args) <= i < len(args) for i in argnums):
            raise Unsupported(f"argnums {gf.argnums} out of range for {len(args)} arguments (the interpreter raises)",
                              node)
        argnums = tuple(i % len(args) for i in argnums)
        if len(set(argnums)) != len(argnums):
            raise Unsupported(f"argnums {gf.argnums} repeats an argument", node)
        block = ir.InsertionPoint.current.block
        inlined_args = list(args)
        leaves: list[Tensor] = []
        templates = []  # per argnum: the argument's tree of differentiated leaves
        substituted: dict = {}  # (stored_attrs or stored_items, slot) -> what was there before
        for i in argnums:
            inlined_args[i], template = self._variables(args[i], leaves, substituted, set(), node)
            templates.append(template)
        before = {op.operation for op in block.operations}
        effects, stores = len(self.effects), dict(self.stores)
        self.differentiating += 1
        try:
            out = self._inline(fn, inlined_args, {}, node)
        finally:
            self.differentiating -= 1
            for (table, slot), previous in substituted.items():
                table = self.stored_attrs if table == "attr" else self.stored_items
                if previous is None:
                    del table[slot]
                else:
                    table[slot] = previous
        if len(self.effects) != effects or self.stores.keys() != stores.keys() or any(
                self.stores[k][1] is not stores[k][1] for k in stores):
            raise Unsupported(f"{fn.__qualname__} prints or writes Python state while being differentiated", node)
        if gf.has_aux:
            if not (isinstance(out, Seq) and out.kind is tuple and len(out.items) == 2):
                raise Unsupported(f"{fn.__qualname__} must return a pair (loss, aux) with has_aux=True, "
                                  f"not {S.describe(out)} (the interpreter raises)", node)
            out, aux = out.items
        if not isinstance(out, Tensor) or out.shape != () or out.dtype.kind != "f":
            raise Unsupported(f"differentiating {fn.__qualname__}: it must return a float scalar, "
                              f"not {S.describe(out)}", node)
        forward = [op.operation for op in block.operations if op.operation not in before]
        cotangents = backward(forward, out.value, [t.value for t in leaves])
        grads = iter([Tensor(ct if ct is not None else bind.zeros_like(t.value), t.pytype)
                      for ct, t in zip(cotangents, leaves)])
        trees = tuple(self._mirror(t, grads) for t in templates)
        result = trees[0] if isinstance(gf.argnums, int) else Seq(trees, tuple)
        value = Seq((out, aux), tuple) if gf.has_aux else out
        if gf.value_and_grad:
            return Seq((value, result), tuple)
        return Seq((result, aux), tuple) if gf.has_aux else result

    def range_loop(self, node: ast.For, steps: range) -> bool:
        """Inside a differentiated function the generator unrolls `for i in range(...)` itself
        (AD differentiates straight-line code); elsewhere loops.py decides."""
        if self.differentiating:
            return False
        return super().range_loop(node, steps)

    def _variables(self, value: Any, leaves: list[Tensor], substituted: dict, seen: set[int],
                   node: ast.AST) -> tuple[Any, Any]:
        """(what `f` gets for `value`, the tree of its leaves): each differentiated leaf is a fresh
        copy, appended to `leaves`. The tree holds Tensors, Seqs and dicts (key -> tree)."""
        if isinstance(value, Tensor) and value.dtype.kind == "f" and (
                value.pytype is np.ndarray or issubclass(value.pytype, np.floating)):
            copy = Tensor(get("astype").build([value.value], dtype=value.dtype.name), value.pytype)
            leaves.append(copy)
            return copy, copy
        if isinstance(value, Seq) and value.kind in (tuple, list):
            pairs = [self._variables(v, leaves, substituted, seen, node) for v in value.items]
            return Seq(tuple(p[0] for p in pairs), value.kind), Seq(tuple(p[1] for p in pairs), value.kind)
        if isinstance(value, Obj):
            if id(value.example) in seen:
                raise Unsupported("differentiating with respect to an object or container reached twice "
                                  "is not supported yet", node)
            seen.add(id(value.example))
            if type(value.example) is dict:
                keys = self._state_keys(value, node)
                return value, {k: self._substitute(value, "item", k, leaves, substituted, seen, node) for k in keys}
            if type(value.example) in (list, tuple):
                items = range(self._state_len(value, node))
                tree = [self._substitute(value, "item", i, leaves, substituted, seen, node) for i in items]
                return value, Seq(tuple(tree), type(value.example))
            return value, self._object_variables(value, leaves, substituted, seen, node)
        raise Unsupported(f"differentiating with respect to {S.describe(value)} is not supported yet "
                          "(float arrays, and tuples, lists, dicts and objects holding them)", node)

    def _object_variables(self, obj: Obj, leaves: list[Tensor], substituted: dict, seen: set[int],
                          node: ast.AST) -> dict:
        """The tree of a plain object's differentiated attributes, the copies substituted for them."""
        from pyfront.autodiff.tape import has_float

        example = obj.example
        self._check_plain_object(example)
        names = tuple(vars(example))
        self._note_object(obj, node)
        self._state_guard(obj.path.attr("__dict__"), KeysSpec(names), node)  # the tape differentiates vars(obj)
        tree = {}
        for name in names:
            attr = vars(example)[name]
            if has_float(attr, {id(example)}):
                tree[name] = self._substitute(obj, "attr", name, leaves, substituted, seen, node)
                continue
            read = self._object_attr(obj, name, node)  # guards what it is at call time
            if not isinstance(read, (Tensor, Known)):
                raise Unsupported(f"differentiating an object whose attribute {name!r} holds {S.describe(read)} "
                                  "without floats (it could hold some at call time)", node)
        return tree

    def _substitute(self, container: Obj, kind: str, key: Any, leaves: list[Tensor], substituted: dict,
                    seen: set[int], node: ast.AST) -> Any:
        """The tree of `container`'s attribute or item `key`; `f` reads the copies made for it."""
        read = self._object_attr if kind == "attr" else self._object_item
        item, tree = self._variables(read(container, key, node), leaves, substituted, seen, node)
        if isinstance(item, Tensor):
            table = self.stored_attrs if kind == "attr" else self.stored_items
            slot = (id(container.example), key)
            substituted.setdefault((kind, slot), table.get(slot))
            table[slot] = item  # what `f` reads as container.key / container[key]
        return tree

    def _mirror(self, template: Any, grads) -> Any:
        """The gradient tree shaped like `template` (a dict becomes a Seq of kind dict of (key, value) pairs)."""
        if isinstance(template, Tensor):
            return next(grads)
        if isinstance(template, Seq):
            return Seq(tuple(self._mirror(v, grads) for v in template.items), template.kind)
        return Seq(tuple(Seq((Known(k), self._mirror(v, grads)), tuple) for k, v in template.items()), dict)
