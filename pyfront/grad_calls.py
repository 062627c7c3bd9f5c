"""`pyfront.grad(f)(...)` / `pyfront.value_and_grad(f)(...)` in compiled code, as a mixin of the graph generator.

A call of a `GradFunction` (pyfront/autodiff) inlines `f`'s forward into the
graph like any helper call (branches speculated from the profile, which sees
inside `f`, see profiler.py; loops unrolled), then the AD transformation on
the IR (autodiff/ir_ad.py) emits the backward right after it, so gradients
are values of the same graph and the rest of the function (an optimizer
step, deferred stores to `self.w`) uses them like any other array.

What is differentiated: the leaves of the arguments at `argnums`, which must
be float ndarrays, tuples and lists of them, or dicts (arguments or Python
state) whose values are float ndarrays. Each leaf is passed to `f` as a fresh
copy, so `f` (and only `f`) sees it as the variable: a use of the same array
through another argument or through Python state is a constant, as it is for
the interpreter's tape. Gradients mirror the argument structure (tuples stay
tuples, lists lists, dicts dicts with the same keys in the same order).

`f` must return a float scalar and must not print or write Python state (the
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
from pyfront.dialects.mlir import ir
from pyfront.dialects.primitives import emit, get
from pyfront.errors import Unsupported
from pyfront.guards import IdentityGuard
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
        for attr in ("fn", "argnums", "value_and_grad"):  # a GradFunction's attributes can be rebound
            self._guard(IdentityGuard("attr", gf, attr, getattr(gf, attr), self._site(node)))
        fn = gf.fn
        from pyfront.state import uncompiled

        fn = uncompiled(fn)
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
        substituted: dict = {}  # stored_items keys of dict arguments -> what was there before
        for i in argnums:
            inlined_args[i], template = self._variables(args[i], leaves, substituted, node)
            templates.append(template)
        before = {op.operation for op in block.operations}
        effects, stores = len(self.effects), dict(self.stores)
        self.differentiating += 1
        try:
            out = self._inline(fn, inlined_args, {}, node)
        finally:
            self.differentiating -= 1
            for key, previous in substituted.items():
                if previous is None:
                    del self.stored_items[key]
                else:
                    self.stored_items[key] = previous
        if len(self.effects) != effects or self.stores.keys() != stores.keys() or any(
                self.stores[k][1] is not stores[k][1] for k in stores):
            raise Unsupported(f"{fn.__qualname__} prints or writes Python state while being differentiated", node)
        if not isinstance(out, Tensor) or out.shape != () or out.dtype.kind != "f":
            raise Unsupported(f"differentiating {fn.__qualname__}: it must return a float scalar, "
                              f"not {S.describe(out)}", node)
        forward = [op.operation for op in block.operations if op.operation not in before]
        cotangents = backward(forward, out.value, [t.value for t in leaves])
        grads = iter([Tensor(ct if ct is not None else self._zeros(t), np.ndarray)
                      for ct, t in zip(cotangents, leaves)])
        trees = tuple(self._mirror(t, grads) for t in templates)
        result = trees[0] if isinstance(gf.argnums, int) else Seq(trees, tuple)
        return Seq((out, result), tuple) if gf.value_and_grad else result

    def range_loop(self, node: ast.For, steps: range) -> bool:
        """Inside a differentiated function the generator unrolls `for i in range(...)` itself
        (AD differentiates straight-line code); elsewhere loops.py decides."""
        if self.differentiating:
            return False
        return super().range_loop(node, steps)

    def _variables(self, value: Any, leaves: list[Tensor], substituted: dict, node: ast.AST) -> tuple[Any, Any]:
        """(what `f` gets for `value`, the tree of its leaves): each differentiated leaf is a fresh
        copy, appended to `leaves`. The tree holds Tensors, Seqs and dicts (key -> tree)."""
        if isinstance(value, Tensor) and value.pytype is np.ndarray and value.dtype.kind == "f":
            copy = Tensor(get("astype").build([value.value], dtype=value.dtype.name), np.ndarray)
            leaves.append(copy)
            return copy, copy
        if isinstance(value, Seq) and value.kind in (tuple, list):
            pairs = [self._variables(v, leaves, substituted, node) for v in value.items]
            return Seq(tuple(p[0] for p in pairs), value.kind), Seq(tuple(p[1] for p in pairs), value.kind)
        if isinstance(value, Obj) and type(value.example) is dict:
            template = {}
            for key in value.example:
                item, template[key] = self._variables(self._object_item(value, key, node), leaves, substituted, node)
                if not isinstance(item, Tensor):
                    raise Unsupported("differentiating with respect to a dict of containers is not supported yet", node)
                slot = (id(value.example), key)
                substituted.setdefault(slot, self.stored_items.get(slot))
                self.stored_items[slot] = item  # what `f` reads as params[key]
            return value, template
        raise Unsupported(f"differentiating with respect to {S.describe(value)} is not supported yet "
                          "(float arrays, and tuples, lists and dicts of them)", node)

    def _mirror(self, template: Any, grads) -> Any:
        """The gradient tree shaped like `template` (a dict becomes a Seq of kind dict of (key, value) pairs)."""
        if isinstance(template, Tensor):
            return next(grads)
        if isinstance(template, Seq):
            return Seq(tuple(self._mirror(v, grads) for v in template.items), template.kind)
        return Seq(tuple(Seq((Known(k), self._mirror(v, grads)), tuple) for k, v in template.items()), dict)

    def _zeros(self, like: Tensor) -> ir.Value:
        if None in like.shape:
            raise Unsupported("the gradient of an unused argument with a dimension that varies between calls "
                              "is not supported yet")
        return emit.splat(0.0, like.shape, like.dtype)
