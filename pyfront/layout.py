"""Memory order: compiled results are C-ordered, so only calls whose NumPy results are get compiled.

NumPy lays out the result of an elementwise operation like its operands
(order='K'): `x.T * 2.0` is F-contiguous, and so is `f * 2.0` for an
F-contiguous `f`. The layout is observable (`.flags`, `.strides`,
`.T.flags`, `np.shares_memory` after a reshape), and compiled code returns
every array C-contiguous. Rather than return another layout silently:

* `c_ordered(array)`: arguments and arrays read from Python state must be
  laid out in C order (their axes of size > 1 in decreasing stride order;
  C-contiguous arrays and slices of them are). Others are refused at dispatch
  (`NotCOrdered`, a TypeError: the call runs in the interpreter, and
  `pyfront.explain` says why) or by the state guard.
* `check_results(module)`: in a generated graph (pyfront dialect, before
  passes), every returned or stored array must be one NumPy lays out in C
  order. A transpose that reorders axes of size > 1 makes a value not
  C-ordered, and so is every value computed from one (conservatively: any
  operation but a matmul, whose result NumPy allocates in C order, and any
  result with at most one axis of size > 1, whose layout is the same either
  way; a write `x[key] = v` as a value has x's layout whatever v's). A graph
  returning such a value raises Unsupported.
"""

from __future__ import annotations

import numpy as np

from pyfront.errors import Unsupported

REASON = ("NumPy keeps an input's memory order in its results (x.T * 2.0 is F-contiguous); "
          "compiled results are C-contiguous")

# Ops whose result NumPy allocates in C order whatever the operands' layout.
_C_RESULT_OPS = frozenset({"pyfront.matmul"})
# Writes into their first operand (`x[key] = v` as a value): NumPy keeps x's layout whatever v's.
_WRITE_OPS = frozenset({"pyfront.update_slice", "pyfront.dynamic_update_slice", "pyfront.scatter",
                        "pyfront.scatter_add"})
_TRANSPOSE = "pyfront.transpose"


class NotCOrdered(TypeError):
    """An array argument whose layout compiled code would not keep."""


def c_ordered(a: np.ndarray) -> bool:
    """Whether NumPy lays out operations on `a` (and `a` itself) as C-ordered arrays."""
    if a.flags.c_contiguous:
        return True
    strides = [abs(s) for n, s in zip(a.shape, a.strides) if n > 1]
    return all(s > t for s, t in zip(strides, strides[1:]))


def check_argument(a: np.ndarray) -> None:
    if not c_ordered(a):
        raise NotCOrdered(f"an array argument with strides {a.strides} (shape {a.shape}) is not "
                          f"C-ordered: {REASON}")


def _distinguishable(value) -> bool:
    """Whether C order and another order are different layouts for `value`'s type."""
    from pyfront.dialects.mlir import ir
    from pyfront.dialects.types import shape_of

    try:
        ir.RankedTensorType(value.type)
    except ValueError:  # a scalar, an object handle
        return False
    return sum(1 for n in shape_of(value.type) if n is None or n > 1) > 1


def _reorders(op) -> bool:
    from pyfront.dialects.mlir import ir
    from pyfront.dialects.types import shape_of

    perm = list(ir.DenseI64ArrayAttr(op.attributes["perm"]))
    shape = shape_of(op.operands[0].type)
    kept = [p for p in perm if shape[p] is None or shape[p] > 1]
    return kept != sorted(kept)


def may_be_reordered(value, budget: int = 64) -> bool:
    """Whether NumPy may lay out the array computed as `value` in other than C order.

    The rule of `check_results`, for one value while the graph is generated
    (a reshape of such an array is a copy in NumPy, not a view); True when
    more than `budget` ops would have to be looked at."""
    from pyfront.dialects.mlir import ir

    seen, todo = set(), [value]
    while todo:
        v = todo.pop()
        if isinstance(v.owner, ir.Block) or not _distinguishable(v):
            continue  # a function argument (C-ordered, check_argument), or a value of one layout
        op = v.owner
        if op.operation in seen:
            continue
        seen.add(op.operation)
        name = op.operation.name
        if len(seen) > budget or op.regions or name == _TRANSPOSE and _reorders(op):
            return True
        if name in _WRITE_OPS:
            todo.append(op.operands[0])
        elif name not in _C_RESULT_OPS:
            todo.extend(op.operands)
    return False


def _terminator(block):
    ops = block.operations
    return ops[len(ops) - 1]


def _if_flow(op) -> list:
    """scf.if: result i is its sides' yield operand i."""
    yields = [_terminator(region.blocks[0]) for region in op.regions if len(region.blocks)]
    return [(r, [y.operands[i] for y in yields]) for i, r in enumerate(op.results)]


def _for_flow(op) -> list:
    """scf.for (lower, upper, step, inits...): carried value i is init i or the body's yield operand i."""
    body = op.regions[0].blocks[0]
    yielded = _terminator(body).operands
    inits = list(op.operands)[3:]
    flows = []
    for i, r in enumerate(op.results):
        sources = [inits[i], yielded[i]]
        flows += [(body.arguments[i + 1], sources), (r, sources)]
    return flows


def _while_flow(op) -> list:
    """scf.while: the before block's argument i is init i or the after block's yield operand i; the
    after block's argument j and result j are the before block's scf.condition operand j + 1."""
    before, after = (region.blocks[0] for region in op.regions)
    carried = list(_terminator(before).operands)[1:]
    yielded = _terminator(after).operands
    flows = [(arg, [init, yielded[i]]) for i, (arg, init) in enumerate(zip(before.arguments, op.operands))]
    flows += [(v, [carried[j]]) for j, v in enumerate(after.arguments)]
    return flows + [(r, [carried[j]]) for j, r in enumerate(op.results)]


_CONTROL_FLOW = {"scf.if": _if_flow, "scf.for": _for_flow, "scf.while": _while_flow}


def check_results(module, fn, copied: frozenset = frozenset()) -> None:
    """Raise Unsupported if the graph of `fn` (`module`) returns a value NumPy would not lay out in C order.

    `copied`: positions of returned values that are only copied into the caller's own
    arrays (written arguments, pyfront/buffers.py), which keep their layout."""
    not_c: set = set()  # values (by their MLIR handle) NumPy may lay out otherwise

    def visit(op) -> bool:
        """Mark op's results; True if a mark was added."""
        changed = False
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    changed |= visit(inner)
        name = op.operation.name  # OpView.name is a symbol name on some ops (func.func)
        if name == "func.func":  # its arguments are the C-ordered inputs (check_argument)
            return changed
        if name == _TRANSPOSE:
            tainted = _reorders(op) or any(v in not_c for v in op.operands)
        elif name in _C_RESULT_OPS:
            tainted = False
        elif name in _WRITE_OPS:
            tainted = op.operands[0] in not_c
        elif name in _CONTROL_FLOW:
            # Each result (and loop-carried block argument) comes from its own init and yields.
            for value, sources in _CONTROL_FLOW[name](op):
                if _distinguishable(value) and value not in not_c and any(v in not_c for v in sources):
                    not_c.add(value)
                    changed = True
            return changed
        else:
            # Other region results come from their terminators' operands.
            inner_values = [v for region in op.regions for block in region.blocks
                            for inner in block.operations for v in inner.operands]
            tainted = any(v in not_c for v in (*op.operands, *inner_values))
            if tainted:  # loop-carried values: the body's block arguments too
                for region in op.regions:
                    for block in region.blocks:
                        for arg in block.arguments:
                            if _distinguishable(arg) and arg not in not_c:
                                not_c.add(arg)
                                changed = True
        if tainted:
            for r in op.results:
                if _distinguishable(r) and r not in not_c:
                    not_c.add(r)
                    changed = True
        return changed

    top = module.body.operations
    while any([visit(op) for op in top]):  # a fixpoint: loops carry marks backwards
        pass
    for func in top:
        for block in func.regions[0].blocks:
            for op in block.operations:
                if op.operation.name == "func.return" and any(v in not_c for i, v in enumerate(op.operands)
                                                               if i not in copied):
                    error = Unsupported(f"{fn.__qualname__} returns or stores an array that NumPy lays "
                                        f"out in another memory order: {REASON}", filename=fn.__code__.co_filename)
                    error.lineno = fn.__code__.co_firstlineno
                    raise error
