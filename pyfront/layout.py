"""Memory order: results laid out as NumPy lays them out, or the call is not compiled.

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
  order, else Unsupported. `orders` infers each value's *axis order* (its
  axes of size > 1 from the largest stride to the smallest, as NumPy lays it
  out; broadcast axes, of stride 0, left out) from the C-ordered inputs: a
  transpose permutes it, an elementwise op orders its result as NumPy's
  iterator does for order='K' (`_iterator_order`: the operands vote on each
  pair of axes, C order winning conflicts), a slice, a write or a reshape
  that only adds or drops axes of size 1 keeps its operand's, a matrix
  product is C inside each matrix, its batch dims ordered as the iterator
  orders them. Any other op is C when its operands are, and
  unknown otherwise; so is a result of control flow whose paths disagree.
  Saito's `softmax` (`x = x.T`, elementwise work, `return y.T`) is C again.
  With `relayout`, a result of a known other order is laid out so on the host
  (`laid_out`, one copy): `x.T * 2.0` is returned F-contiguous, as NumPy's.
"""

from __future__ import annotations

import numpy as np

from pyfront.errors import Definition

REASON = ("NumPy keeps an input's memory order in its results (x.T * 2.0 is F-contiguous); "
          "compiled results are C-contiguous")

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



Order = tuple  # axes of size > 1 (or dynamic) from the largest stride to the smallest; None: unknown
_PENDING = object()  # a loop-carried value not reached yet (the fixpoint's bottom)


def _elementwise() -> frozenset:
    from pyfront.dialects.primitives.elementwise import BINARY, COMPARE, UNARY

    return frozenset(f"pyfront.{name}" for table in (BINARY, COMPARE, UNARY) for name in table) \
        | {"pyfront.where", "pyfront.astype"}


_ELEMENTWISE = _elementwise()
# Writes into their first operand (`x[key] = v` as a value): NumPy keeps x's layout whatever v's.
_WRITE_OPS = frozenset({"pyfront.update_slice", "pyfront.dynamic_update_slice", "pyfront.scatter",
                        "pyfront.scatter_add"})
# Views: NumPy keeps the operand's strides (a step or a flip changes none of their order).
_VIEW_OPS = frozenset({"pyfront.slice", "pyfront.dynamic_slice", "pyfront.flip"})
_REDUCTIONS = frozenset({"pyfront.sum", "pyfront.prod", "pyfront.max", "pyfront.min", "pyfront.mean",
                         "pyfront.argmax", "pyfront.argmin"})


def _shape(value) -> tuple | None:
    from pyfront.dialects.mlir import ir
    from pyfront.dialects.types import shape_of

    try:
        ir.RankedTensorType(value.type)
    except ValueError:  # a scalar, an object handle
        return None
    return shape_of(value.type)


def _big(shape: tuple) -> tuple:
    return tuple(a for a, n in enumerate(shape) if n is None or n > 1)


def is_c(order: Order | None) -> bool:
    return order is not None and list(order) == sorted(order)


def _ints(op, name: str) -> list[int]:
    from pyfront.dialects.mlir import ir

    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _iterator_order(shape: tuple, operands: list[tuple[tuple, Order]]) -> Order:
    """The order NumPy's iterator (nditer, order='K') gives the result of shape `shape` from its
    operands (shape, order): NumPy's insertion sort of the axes, innermost first, in which an operand
    with non-zero strides on both axes of a pair votes by their strides and C order wins a conflict."""
    n = len(shape)
    rank: list[dict[int, int]] = []  # per operand: result axis -> stride rank (larger: outer)
    for op_shape, order in operands:
        lead = n - len(op_shape)
        rank.append({lead + a: len(order) - i for i, a in enumerate(order)
                     if shape[lead + a] is None or shape[lead + a] > 1})
    perm = list(range(n))[::-1]
    for i0 in range(1, n):
        j0, ipos = perm[i0], i0
        for i1 in range(i0 - 1, -1, -1):
            j1 = perm[i1]
            votes = [(r[j0], r[j1]) for r in rank if j0 in r and j1 in r]
            if votes:
                if all(outer1 > outer0 for outer0, outer1 in votes):
                    ipos = i1
                else:
                    break
        perm.insert(ipos, perm.pop(i0))
    return tuple(a for a in reversed(perm) if shape[a] is None or shape[a] > 1)


def _matmul_order(shape: tuple, operands: list[tuple[tuple, Order]]) -> Order | None:
    """A matrix product's: NumPy's gufunc iterates the loop (batch) dims in order='K' of the operands'
    loop dims and lays each matrix out in C order inside (`x.transpose(1, 0, 2, 3) @ w` is not C)."""
    loop = len(shape) - 2
    big_loop = [a for a in _big(shape) if a < loop]
    if len(big_loop) <= 1:
        return _big(shape)
    if any(len(s) < 2 or o is None for s, o in operands):
        return _big(shape) if all(is_c(o) for _, o in operands) else None
    loops = [(s[:len(s) - 2], tuple(a for a in o if a < len(s) - 2)) for s, o in operands]
    return _iterator_order(shape[:loop], loops) + tuple(a for a in _big(shape) if a >= loop)


def _result_order(op, order_of) -> Order | None:
    """The axis order NumPy gives `op`'s one result, from its operands' (`order_of`); None: unknown,
    _PENDING: an operand's is not known yet."""
    name, result = op.operation.name, op.results[0]
    shape = _shape(result)
    if shape is None or len(_big(shape)) <= 1:
        return _big(shape or ())  # one layout either way
    tensors = [(s, order_of(v)) for v in op.operands if (s := _shape(v)) is not None]
    if any(o is _PENDING for _, o in tensors):
        return _PENDING
    if name == "pyfront.transpose":
        order, perm = tensors[0][1], _ints(op, "perm")
        return None if order is None else tuple(perm.index(a) for a in order)
    if name == "pyfront.matmul":
        return _matmul_order(shape, tensors)
    if name in _WRITE_OPS or name in _VIEW_OPS:  # the written or viewed array's order, whatever the rest's
        kept = set(_big(shape))
        return None if tensors[0][1] is None else tuple(a for a in tensors[0][1] if a in kept)
    if name == "pyfront.reshape" and tensors[0][1] is not None and \
            [tensors[0][0][a] for a in _big(tensors[0][0])] == [shape[a] for a in _big(shape)]:
        # Only axes of size 1 come or go (`col[:, :, y, x]`): NumPy's view keeps the others' order.
        moved = dict(zip(_big(tensors[0][0]), _big(shape)))
        return tuple(moved[a] for a in tensors[0][1])
    if any(o is None for _, o in tensors) or op.regions:
        return None if op.regions or not all(is_c(o) for _, o in tensors) else _big(shape)
    if name in _ELEMENTWISE:
        return _iterator_order(shape, tensors)
    if name == "pyfront.broadcast_to":
        lead, (op_shape, order) = len(shape) - len(tensors[0][0]), tensors[0]
        return tuple(lead + a for a in order if op_shape[a] == shape[lead + a])
    if all(is_c(o) for _, o in tensors):  # reductions, reshapes, joins, gathers... of C-ordered arrays
        return _big(shape)
    return None


def orders(module) -> dict:
    """The axis order (or None) of every value of rank >= 2 that a graph's ops compute."""
    from pyfront.dialects.mlir import ir

    order: dict = {}

    def order_of(v) -> Order | None:
        if v in order:
            return order[v]
        if isinstance(v.owner, ir.Block) and v.owner.owner.operation.name == "func.func":
            return _big(_shape(v) or ())  # the function's arguments: C-ordered (check_argument)
        return _PENDING

    def join(v, new) -> bool:
        if new is _PENDING:
            return False
        old = order.get(v, _PENDING)
        merged = new if old is _PENDING or old == new else None
        if old is not _PENDING and old == merged:
            return False
        order[v] = merged
        return True

    def visit(op) -> bool:
        name = op.operation.name
        changed = False
        if name in _CONTROL_FLOW:  # block arguments first: the body reads them
            for value, sources in _CONTROL_FLOW[name](op):
                for source in sources:
                    changed |= join(value, order_of(source))
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    changed |= visit(inner)
        if name in _CONTROL_FLOW or name == "func.func":
            return changed
        for r in op.results:
            if _shape(r) is not None:
                changed |= join(r, _result_order(op, order_of) if len(op.results) == 1 else
                                _several_results(op, r, order_of))
        return changed

    top = module.body.operations
    while any([visit(op) for op in top]):  # a fixpoint: loops carry orders backwards
        pass
    return order


def _several_results(op, result, order_of) -> Order | None:
    """An op of several results: C-ordered results of C-ordered operands, else unknown."""
    orders_in = [order_of(v) for v in op.operands if _shape(v) is not None]
    if any(o is _PENDING for o in orders_in):
        return _PENDING
    return _big(_shape(result)) if all(is_c(o) for o in orders_in) else None


def may_be_reordered(value, budget: int = 64) -> bool:
    """Whether NumPy may lay out the array computed as `value` in other than C order (a reshape of
    such an array is a copy in NumPy, not a view); True when more than `budget` ops would have to be
    looked at, or control flow computes it."""
    from pyfront.dialects.mlir import ir

    order: dict = {}

    def order_of(v) -> Order | None:
        if v in order:
            return order[v]
        shape = _shape(v)
        if isinstance(v.owner, ir.Block) or shape is None:
            return _big(shape or ())  # a function argument (C-ordered, check_argument)
        if len(order) >= budget or v.owner.regions or len(v.owner.results) != 1:
            return None
        order[v] = _result_order(v.owner, order_of)
        return order[v]

    return not is_c(order_of(value))


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


def check_results(module, definition: Definition, copied: frozenset = frozenset(),
                  relayout: bool = False) -> dict[int, tuple]:
    """Raise Unsupported (at `definition`) if the graph `module` returns a value NumPy would not lay out
    in C order, or with `relayout` one whose order is unknown; else {return position: axis permutation}
    for the results the host lays out as NumPy does (`laid_out`).

    `copied`: positions of returned values that are only copied into the caller's own
    arrays (written arguments, pyfront/buffers.py), which keep their layout."""
    order = orders(module)
    relayouts = {}
    for func in module.body.operations:
        for block in func.regions[0].blocks:
            for op in block.operations:
                if op.operation.name != "func.return":
                    continue
                for i, v in enumerate(op.operands):
                    got = order.get(v, ())
                    if i in copied or is_c(got):
                        continue
                    shape = _shape(v)
                    if not relayout or got is None or set(got) != set(_big(shape)):
                        raise definition.unsupported(f"{definition.qualname} returns or stores an array that "
                                                     f"NumPy lays out in another memory order: {REASON}")
                    relayouts[i] = tuple(got) + tuple(a for a in range(len(shape)) if a not in got)
    return relayouts


def laid_out(array: np.ndarray, permutation: tuple) -> np.ndarray:
    """A copy of the C-ordered `array` whose axes lie in memory in `permutation`'s order (outermost first)."""
    return np.ascontiguousarray(array.transpose(permutation)).transpose(np.argsort(permutation))
