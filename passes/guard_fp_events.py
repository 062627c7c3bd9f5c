"""guard-fp-events: deopt when a float op raised an IEEE event NumPy would report.

NumPy reports floating-point events of its ufuncs, reductions and casts
(divide by zero, overflow, invalid value) as `RuntimeWarning`s, or raises
`FloatingPointError`, calls a handler, ... as `np.errstate`/`np.seterr` say.
Compiled code cannot do any of that, so it assumes no such event happens and
checks the assumption (JANUS: speculate, guard, deopt): when an event
happened, the call is discarded and re-run in the interpreter, which warns or
raises exactly as NumPy does, because nothing was committed.

Assumes: primitives declare the events they can raise (`Primitive.fp_events`,
dialects/primitives/base.py); guards may only sit in a function's entry block
(before `lower-guards`); control flow is `scf.for`, `scf.while` and `scf.if`.
Runs after the passes that add primitive ops (`unroll`; the AD transformation
emits backward ops in the front end, so they are covered) and before
`specialize`, whose constant folding would otherwise hide a folded op's event.

Guarantees: if any primitive op with `fp_events` raised an event on some
element (its result there became NaN or inf), some guard of kind "fp-error"
fails. Checking every op's result would cost a pass over every intermediate
(the demo ran 30x slower), so the check waits: a NaN or inf survives ops that
keep non-finite values (`Primitive.keeps_nonfinite`: +, *, sqrt, sum, matmul,
reshape, ...; of some ops, some operands: the cotangent `slice_grad` places,
the value `update_slice` writes), and an elementwise float op that does not
(tanh, exp of -inf, division by inf, where, maximum, ...) passes it on when its other float
operands are finite constants: its result r becomes `r - (v - v)` for each
tainted operand v of its dtype, r bit for bit where v is finite and NaN where
v is not (`_forward`). The value an event could have tainted is checked for
all-finite only where it could stop showing it: as an operand of another op
that does not keep NaN/inf (comparisons, reductions, casts to int, other
dtypes, slices), unless its readers that keep NaN/inf and its slices
together read all of it (then each slice is tainted, the slice of the taint:
`_readers_keep_all`), of any non-primitive op, of the function's return or a region's
yield, when nothing uses it, and before a loop or branch. Float-to-int casts
check their operand's range (NaN, inf or out of range is NumPy's invalid
cast). A non-finite value the inputs already held fails the check too: a
needless deopt, never a missed event; after two on calls whose inputs (or
the function's constants) hold NaN or inf, the runtime recompiles with
the module attribute `pyfront.fp_checks_per_op`, which checks each op right
after it by its exact rule (`FpEvents.detect`: inf from finite operands, NaN
from non-NaN ones), slower but quiet on non-finite inputs such as -inf masks.
The checks of a block are built at its end, grouped by static shape (at
most 16 values a group), each group's per-element predicates reduced to a
0-d i1, guarded with reason "floating-point <events> in <op>" (plus the other
ops it covers, with their sites) and the first op's site. Small values'
all-finite checks are rows of one table reduced row by row
(passes/pooled_checks.py: one dispatch for all of them, where each group was
one); larger ones get a reduction each. A larger value computed by a matmul
or convolution that other ops read is checked through
`util.optimization_barrier` (`_barrier_contractions` says why). Ops inside
`scf.for`/`scf.while`/`scf.if` regions get their flags ANDed into one more
result of the region op, guarded after the loop or branch.

What the checks do not see is underflow (NumPy ignores it by default): the
runtime runs calls in the interpreter when `np.geterr()["under"]` is not
"ignore" (pyfront/guards.py `fp_state_is_default`). Ops computing Python
float arithmetic are checked too, although CPython gives inf/nan silently:
such a call deopts (a slower, never a different, answer).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import arith, ir, math
from pyfront.dialects.primitives import by_op_name, emit
from pyfront.dialects.primitives.base import FP_EVENT_NAMES, FpEvents, ignored_events
from pyfront.dialects.primitives.bind import apply
from pyfront.dialects.types import dtype_of, shape_of, tensor_dtype
from pyfront.passes.bound_dispatch_inputs import LIMIT
from pyfront.passes.funcs import functions
from pyfront.passes.pooled_checks import group_flags, poolable
from pyfront.passes.registry import register_pass
from pyfront.passes.specialize import constant_array

KIND = "fp-error"
CONTROL_FLOW = {"scf.for": "loop", "scf.while": "loop", "scf.if": "branch"}
# Primitives IREE lowers to contractions, which it gives a data-tiled (packed) layout.
CONTRACTIONS = {"matmul", "conv2d", "conv2d_input_grad", "conv2d_filter_grad"}
# IREE's HAL takes at most 32 buffers per dispatch: a check of the 32 steps' gate
# pre-activations in one reduction (bench lstm, T32) needed 33.
MAX_GROUP_VALUES = LIMIT
BOOL = np.dtype(np.bool_)
I8 = np.dtype(np.int8)


@register_pass("guard-fp-events",
               "Guard every float op that can raise an IEEE event (divide/overflow/invalid): deopt when one did.")
def guard_fp_events(module: ir.Operation) -> None:
    per_op = PER_OP in module.attributes
    for fn in functions(module):
        _checks(fn.body.blocks[0], {}, per_op, guard=True)


# A module attribute: check each op right after it, exactly (the relaxation after
# a deferred check failed: non-finite values the inputs explain then run compiled).
PER_OP = "pyfront.fp_checks_per_op"


@dataclass(frozen=True)
class _Source:
    """An op that may have raised an event: "<events> in <op>" at `site`."""

    what: str
    site: str
    contraction: bool = False  # the op is one of CONTRACTIONS


Tainted = dict[ir.Value, list[_Source]]  # float values that show a NaN or inf if one of the sources raised


@dataclass
class _Check:
    """What must hold per element of `values` (over `shape`): all finite, or an int cast's range."""

    # "nonfinite", "elementwise" (values: result, *operands; "elementwise-partial": the events of
    # `rule` only, np.errstate ignoring the others) or "int-cast"
    detect: str
    values: list[ir.Value]
    shape: tuple[int | None, ...]
    sources: list[_Source]
    int_dtype: np.dtype | None = None
    rule: frozenset | None = None  # "elementwise-partial": _partial_rule
    barred: bool = False  # values[0] is a contraction's, behind a barrier (_barrier_contractions)


Flag = tuple[ir.Value, list[_Source]]  # (0-d tensor<i1>: no event, the ops it covers)


def _checks(block: ir.Block, tainted: Tainted, per_op: bool, guard: bool = False) -> list[Flag]:
    """The flags of `block`'s checks, built just before its terminator.

    Walks the block in order, tracking which values an event would have made
    non-finite (`tainted`, shared with nested regions). A tainted value is
    checked where it could stop showing the event: as an operand of an op that
    does not keep NaN/inf (`Primitive.keeps_nonfinite`) unless other readers
    keep all of it (`_readers_keep_all`), of a non-primitive or
    region op, of the terminator, or when nothing uses it. With `per_op`, each
    op is checked by its own `FpEvents.detect` rule instead. With `guard`, each
    flag is guarded there (and nothing is returned). Region ops are rebuilt to
    carry their regions' flags out.
    """
    checks: list[_Check] = []
    flags: list[Flag] = []
    ops = list(block.operations)

    def check_operands(op: ir.Operation, unless_kept: bool = False, skip: tuple[int, ...] = ()) -> None:
        for i, v in enumerate(op.operands):
            if i not in skip and v in tainted and not (unless_kept and _readers_keep_all(v, block)):
                checks.append(_Check("nonfinite", [v], shape_of(v.type), tainted.pop(v)))

    for op in ops[:-1]:  # the last op is the terminator
        op = op.operation
        prim = by_op_name(op.name)  # (a region op is replaced by _carry_out)
        if prim is None and len(op.regions):
            # Check everything now: a region that runs zero times would never check what it uses.
            for v in list(tainted):
                checks.append(_Check("nonfinite", [v], shape_of(v.type), tainted.pop(v)))
            with op.location:
                carried = _carry_out(op, tainted, per_op)
            if carried is not None:
                flags.append(carried)
            continue
        if prim is None:
            check_operands(op)
            continue
        result = op.results[0]
        kept = _kept_operands(prim, op, block)
        sources = []
        for i in kept:
            sources += tainted.get(op.operands[i], [])
        if kept and len(kept) < len(op.operands):  # the others' NaN/inf may vanish here
            check_operands(op, unless_kept=True, skip=kept)
        elif not kept:
            forwarded = [] if per_op else _forwardable(op, result, tainted)
            for v in forwarded:
                sources += tainted.pop(v)
            check_operands(op, unless_kept=True)
            if forwarded:
                with ir.InsertionPoint.after(op), op.location:
                    result = _forward(result, forwarded)
        source = _source_of(prim, op)
        if source is not None and source.what.startswith("invalid value in astype") and not _is_float(result):
            checks.append(_Check("int-cast", [op.operands[0]], shape_of(result.type), [source],
                                 tensor_dtype(result.type)))
        elif source is not None and per_op:
            detect = prim.fp_events.detect if prim.fp_events.detect != "cast" else "elementwise"
            rule = None
            if detect == "elementwise" and ignored_events(op):
                detect, rule = "elementwise-partial", _partial_rule(prim, _events(prim, op))
            values = [result, *op.operands] if detect.startswith("elementwise") else [result]
            checks.append(_Check(detect, values, shape_of(result.type), [source], rule=rule))
        elif source is not None:
            sources.append(source)
        if sources:
            tainted[result] = list(dict.fromkeys(sources))
            if not list(result.uses):
                checks.append(_Check("nonfinite", [result], shape_of(result.type), tainted.pop(result)))
    terminator = block.operations[len(block.operations) - 1]
    check_operands(terminator.operation)
    for v in [v for v in tainted if _defined_in(v, block)]:
        # Used only by ops that keep NaN/inf, whose results are checked: nothing left to check,
        # and a nested block's values must not reach the checks of the block around it.
        del tainted[v]
    _barrier_contractions(checks, block, terminator.operation)
    with ir.InsertionPoint(terminator), terminator.location:
        flags = _group_flags(_groups(checks)) + flags
        if guard:
            for ok, sources in flags:
                GUARD.build([ok], [], kind=KIND, reason=_reason(sources), site=sources[0].site)
            return []
    return flags


def _kept_operands(prim, op: ir.Operation, block: ir.Block) -> tuple[int, ...]:
    """The positions of `op`'s operands each NaN/inf of which shows in its (float, non-empty) result."""
    result = op.results[0]
    if not _is_float(result) or 0 in shape_of(result.type):
        return ()
    if prim.name == "slice" and _readers_keep_all(op.operands[0], block):
        return (0,)
    return tuple(i for i in range(len(op.operands)) if prim.keeps_nonfinite_of(i))


def _readers_keep_all(value: ir.Value, block: ir.Block) -> bool:
    """Every element of `value` reaches the result of one of its readers in `block` that keeps
    NaN/inf: an op with `keeps_nonfinite` (all of it), or a slice (its box of it).

    Then each slice of a tainted `value` passes the taint on, as the slice of the
    taint, and its other readers (a comparison, a max, ...) need no check of it:
    a NaN or inf anywhere in `value` shows in some reader's result, which is
    tracked from there until it is checked or carried on (a value leaves
    `tainted` only so). An LSTM's gates are slices of one matmul's result, and
    an MLP's ReLU output is read by the next matmul and by `h > 0`: a check of
    such a value made IREE write it out behind a barrier (and, unrolled, keep
    every step's copy for the reduction), 1.8x the LSTM's time. Strided slices
    (step > 1) count for nothing: their elements are no box.
    """
    shape = shape_of(value.type)
    if None in shape or 0 in shape:
        return False
    boxes = []
    for use in value.uses:
        reader = use.owner.operation
        prim = by_op_name(reader.name)
        if prim is None or reader.block != block:
            continue
        if (prim.keeps_nonfinite_of(use.operand_number) and _is_float(reader.results[0])
                and 0 not in shape_of(reader.results[0].type)):
            return True
        if prim.name == "slice":
            sizes = shape_of(reader.results[0].type)
            offsets, strides = (ir.DenseI64ArrayAttr(reader.attributes[a]) for a in ("offsets", "strides"))
            if None not in sizes and all(st == 1 or n == 1 for n, st in zip(sizes, strides)):
                boxes.append([(o, o + n) for o, n in zip(offsets, sizes)])
    return _boxes_cover(boxes, shape)


def _boxes_cover(boxes: list[list[tuple[int, int]]], shape: tuple[int, ...]) -> bool:
    """The union of `boxes` (half-open [start, end) per dim) is all of `shape`.

    Exact, on the grid the boxes' bounds cut the shape into: each cell lies
    wholly inside or outside each box, so checking one corner per cell is enough.
    """
    cuts = [sorted({0, d, *(b for box in boxes for b in box[i])}) for i, d in enumerate(shape)]
    covered = np.zeros([len(c) - 1 for c in cuts], dtype=bool)
    for box in boxes:
        covered[tuple(slice(c.index(lo), c.index(hi)) for c, (lo, hi) in zip(cuts, box))] = True
    return bool(covered.all())


def _forwardable(op: ir.Operation, result: ir.Value, tainted: Tainted) -> list[ir.Value]:
    """The tainted operands of `op` (which does not keep NaN/inf) whose taint its result can carry on.

    Those of the result's float dtype whose static shape broadcasts to the
    result's, when its other float operands are finite constants: `_forward`
    then needs no check of them here.
    """
    shape, dtype = shape_of(result.type), tensor_dtype(result.type)
    if dtype.kind != "f" or None in shape or 0 in shape:
        return []
    forwardable = [v for v in dict.fromkeys(op.operands)
                   if v in tainted and tensor_dtype(v.type) == dtype and _broadcasts(shape_of(v.type), shape)]
    # The other float operands must be finite constants: an input or a -inf mask constant
    # can make the result non-finite with no event, and its check would then deopt needlessly.
    others = [v for v in op.operands if v not in forwardable and tensor_dtype(v.type).kind == "f"]
    if not all((array := constant_array(v)) is not None and np.isfinite(array).all() for v in others):
        return []
    return forwardable


def _broadcasts(src: tuple[int | None, ...], dst: tuple[int, ...]) -> bool:
    return None not in src and len(src) <= len(dst) and all(
        s in (d, 1) for s, d in zip(reversed(src), reversed(dst)))


def _forward(result: ir.Value, operands: list[ir.Value]) -> ir.Value:
    """`result - (v - v) - ...` over `operands`, read by all of `result`'s users.

    For finite v, v - v is +0 and r - (+0) is r bit for bit (-0 too); for a NaN
    or inf anywhere in v it is NaN there, and broadcasting puts each element
    of v somewhere in the result: the new result shows a non-finite value iff
    `result` or some operand did. So an absorbing elementwise op (tanh, where,
    maximum, exp of -inf, ...) passes its operands' taint on instead of having
    them checked: no dispatch result for IREE to write out for a check. A
    check would make IREE's dispatch of a matmul feeding tanh (then the next
    matmul's packing) write the matmul's value too: a data-tiled dispatch with
    two results to unpack, over IREE's CPU stack limit (mlp_forward
    64x256-512-10). The extra subtractions are compiled only: their NaN
    raises no NumPy warning, and a call where they make one deopts anyway.
    """
    first = apply("subtract", result, apply("subtract", operands[0], operands[0]))
    new = functools.reduce(lambda acc, v: apply("subtract", acc, apply("subtract", v, v)), operands[1:], first)
    result.replace_all_uses_except(new, first.owner.operation)
    return new


def _reason(sources: list[_Source]) -> str:
    others = [f"{s.what} at {s.site}" for s in sources[1:]]
    return "floating-point " + "; or ".join([sources[0].what, *others])


def _is_float(v: ir.Value) -> bool:
    return tensor_dtype(v.type).kind == "f"


# What one op can raise ---------------------------------------------------------------


def _events(prim, op: ir.Operation) -> frozenset:
    """The events `op` can raise that NumPy did not ignore where it was built (np.errstate)."""
    return prim.fp_events.events - ignored_events(op) if prim.fp_events is not None else frozenset()


def _source_of(prim, op: ir.Operation) -> _Source | None:
    """The events `op` can raise, or None."""
    events = _events(prim, op)
    if not events:
        return None
    result, operands = op.results[0], list(op.operands)
    site = _site(op.location)
    if prim.fp_events.detect == "cast":
        src, dst = tensor_dtype(operands[0].type), tensor_dtype(result.type)
        if src.kind != "f" or dst.kind == "b" or (dst.kind == "f" and dst.itemsize >= src.itemsize):
            return None  # exact (int or bool source, widening) or `!= 0` (to bool): never an event
        event = "overflow" if dst.kind == "f" else "invalid"
        return _Source(f"{FP_EVENT_NAMES[event]} in astype", site) if event in events else None
    if not _is_float(result):
        return None  # the same op on ints or bools raises nothing (int division by zero is the front end's)
    return _Source(f"{FpEvents(events, prim.fp_events.detect).describe()} in {prim.name}", site,
                   prim.name in CONTRACTIONS)


def _partial_rule(prim, events: frozenset) -> frozenset:
    """What the per-element check of an op looks for when np.errstate ignored some of its events:
    "inf" from finite operands (divide by zero, overflow; "nonzero-divisor": overflow only, a
    division's inf from a zero divisor being a divide by zero), "nan" from NaN-free ones (invalid)."""
    rule = {"nan"} if "invalid" in events else set()
    if events & {"divide", "overflow"}:
        rule.add("inf")
        if "divide" not in events and prim.name == "true_divide":
            rule.add("nonzero-divisor")
    return frozenset(rule)


def _barrier_contractions(checks: list[_Check], block: ir.Block, terminator: ir.Operation) -> None:
    """Put a `util.optimization_barrier` after each value of `block` computed by a contraction,
    checked, and read by more than the terminator; all its users read the barrier's result.

    IREE's dispatch for the contraction (with the elementwise ops it fuses,
    such as a bias add) then has that value as its only result, and the
    value's consumers and the check come after it. Otherwise IREE may fuse a
    consumer (and the next matmul's packing) into the contraction's dispatch
    and also write the value, or the check's flags, out: a data-tiled
    dispatch with two results to unpack, whose tiles can need more than
    IREE's CPU stack limit (mlp_forward 64x256-512-10 did, before `_forward`
    made its check unnecessary). A value only the terminator reads keeps its
    check fused into the contraction's dispatch, next to the value itself,
    which compiled at every size measured. So does a value of dynamic shape:
    IREE cannot resolve `tensor.dim` through the barrier ("dynamic dimensions
    must have been resolved prior to leaving the flow dialect"). A pooled
    check needs none: it reads a copy of the value, as any consumer does.
    """
    barred: dict[ir.Value, ir.Value] = {}
    for check in checks:
        value = check.values[0]
        if (value not in barred and not _pooled(check) and _defined_in(value, block)
                and any(s.contraction for s in check.sources)
                and None not in check.shape and any(use.owner.operation != terminator for use in value.uses)):
            with ir.InsertionPoint.after(value.owner), value.owner.location:
                barrier = ir.Operation.create("util.optimization_barrier", results=[value.type], operands=[value])
            value.replace_all_uses_except(barrier.result, barrier)
            barred[value] = barrier.result
    for check in checks:
        check.barred = check.values[0] in barred
        check.values = [barred.get(v, v) for v in check.values]


def _groups(checks: list[_Check]) -> list[list[_Check]]:
    """Checks over the same static shape share one reduction (one dispatch for IREE, not one per op),
    reading at most MAX_GROUP_VALUES values; a group of pooled checks (`_pooled`) stays `poolable`.

    Checks over dynamic shapes stay alone: two `?` dims need not be equal. Checks over no elements
    (`a[1:3] += b` on a 1-row `a`) are dropped: nothing there can overflow, and `min` over them
    would be a reduction of an empty array.
    """
    groups: dict[object, list[list[_Check]]] = {}
    for n, check in enumerate(checks):
        if 0 in check.shape:
            continue
        key = (check.barred, check.shape, _pooled(check)) if None not in check.shape else n
        chunks = groups.setdefault(key, [[]])
        values = [v for c in chunks[-1] for v in c.values] + check.values
        if len(values) > MAX_GROUP_VALUES or (_pooled(check) and not poolable(values)):
            chunks.append([])
        chunks[-1].append(check)
    return [chunk for chunks in groups.values() for chunk in chunks if chunk]


def _pooled(check: _Check) -> bool:
    """Whether `check` is made in a pooled reduction (passes/pooled_checks.py): a small value's all-finite."""
    return check.detect == "nonfinite" and poolable(check.values)


def _group_flags(groups: list[list[_Check]]) -> list[Flag]:
    """Per group, that every check of it holds at every element of their shared shape: a 0-d tensor<i1>,
    and the ops it covers. Groups of small values checked for non-finite values share one reduction
    (passes/pooled_checks.py); the others get one each (`_least`).
    """
    flags = group_flags(groups, _values, lambda g: _pooled(g[0]), _isfinite, 0.0, _least)
    return [(flag, list(dict.fromkeys(s for check in g for s in check.sources))) for flag, g in zip(flags, groups)]


def _values(group: list[_Check]) -> list[ir.Value]:
    return [v for check in group for v in check.values]


def _least(group: list[_Check]) -> ir.Value:
    """A 0-d tensor<i8>: 1 iff every check of `group` holds at every element of their shared shape.

    Per element, an i8 flag from an elementwise linalg.generic, which IREE
    fuses into the producers' dispatch like a bias add; `min` over them is the
    one reduction. i8, not i1: IREE's CPU code handles i1 tensors poorly.
    Checks of values behind a barrier are one reduction over the values,
    which their dispatch writes anyway (a dispatch less).
    """
    shape = group[0].shape
    inputs = _values(group)
    maps = [emit.broadcast_map(shape_of(v.type), shape) for v in inputs]
    rank = len(shape)

    def ok(args: list[ir.Value]) -> ir.Value:
        ok, at = None, 0
        for check in group:
            scalars = args[at: at + len(check.values)]
            at += len(check.values)
            this = _scalar_ok(check, scalars)
            ok = this if ok is None else arith.andi(ok, this)
        return ok

    i8 = ir.IntegerType.get_signless(8)
    if group[0].barred:
        (least,) = emit.generic(inputs, maps, [emit.fill(1, [], I8)], [emit.scalar_map(rank)],
                                [emit.REDUCTION] * rank, lambda args: arith.andi(args[-1], arith.extui(i8, ok(args))))
        return least
    init = emit.empty(emit.dims(group[0].values[0]), I8)  # values[0] spans the whole shape
    (flags,) = emit.generic(inputs, maps, [init], [emit.projection_map(rank, range(rank))],
                            [emit.PARALLEL] * rank, lambda args: arith.extui(i8, ok(args)))
    return apply("min", flags, axes=list(range(rank)), keepdims=False) if rank else flags


def _scalar_ok(check: _Check, xs: list[ir.Value]) -> ir.Value:
    """An i1: no event shows at this element."""
    if check.detect == "int-cast":
        return _in_int_range(xs[0], check.int_dtype)
    if check.detect == "nonfinite":
        return _isfinite(xs[0])
    # Exact per element: NaN from no NaN (invalid), or +-inf from finite operands (overflow, divide by zero).
    result, operands = xs[0], xs[1:]
    finite_in = functools.reduce(arith.andi, [_isfinite(x) for x in operands])
    nan_free_in = functools.reduce(arith.andi, [_not(_isnan(x)) for x in operands])
    if check.detect == "elementwise-partial":
        events = []
        if "inf" in check.rule:
            inf = arith.andi(arith.andi(_not(_isfinite(result)), _not(_isnan(result))), finite_in)
            if "nonzero-divisor" in check.rule:
                inf = arith.andi(inf, _cmp("UNE", operands[1], 0.0))
            events.append(inf)
        if "nan" in check.rule:
            events.append(arith.andi(_isnan(result), nan_free_in))
        return _not(functools.reduce(arith.ori, events))
    explained = _not(arith.ori(finite_in, arith.andi(_isnan(result), nan_free_in)))
    return arith.ori(_isfinite(result), explained)


def _in_int_range(x: ir.Value, dst: np.dtype) -> ir.Value:
    """Float scalar `x` truncates to a value of int type `dst` (False for NaN and inf)."""
    info, src = np.iinfo(dst), dtype_of(x.type)
    largest = int(np.finfo(src).max)  # a float16 holds less than int32's range: then finite suffices
    below = info.min - 1  # truncation keeps x > min - 1; where min - 1 rounds to min, no float lies between
    if -below > largest:
        lower = _cmp("OGE", x, -largest)
    else:
        lower = (_cmp("OGT", x, below) if int(src.type(below)) == below else _cmp("OGE", x, info.min))
    upper = _cmp("OLE", x, largest) if info.max + 1 > largest else _cmp("OLT", x, info.max + 1)  # a power of 2
    return arith.andi(lower, upper)


def _cmp(pred: str, x: ir.Value, value: float) -> ir.Value:
    return arith.cmpf(getattr(arith.CmpFPredicate, pred), x, arith.constant(x.type, float(value)))


def _isnan(x: ir.Value) -> ir.Value:
    return arith.cmpf(arith.CmpFPredicate.UNO, x, x)


def _not(x: ir.Value) -> ir.Value:
    return arith.xori(x, arith.constant(x.type, 1))


def _isfinite(x: ir.Value) -> ir.Value:
    return _cmp("OLT", math.absf(x), np.inf)  # ordered: False for NaN


def _and(*flags: ir.Value) -> ir.Value:
    """AND of 0-d tensor<i1> flags."""
    return functools.reduce(lambda a, b: apply("logical_and", a, b), flags)


# Control flow: the regions' flags as one more result ---------------------------------


def _carry_out(op: ir.Operation, tainted: Tainted, per_op: bool) -> Flag | None:
    """Rebuild a loop or branch whose regions hold checks so it also returns their AND; None if none."""
    per_block = [[_checks(b, tainted, per_op) for b in region.blocks] for region in op.regions]
    checks = [c for region in per_block for block in region for c in block]
    if not checks:
        return None
    if op.name not in CONTROL_FLOW:
        raise ValueError(f"guard-fp-events: {op.name} at {op.location} holds float ops to check; "
                         "only scf.for, scf.while and scf.if are supported")
    flag_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    carried = op.name != "scf.if"  # loops carry the flag through their iterations
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(
            op.name, results=[*(r.type for r in op.results), flag_type],
            operands=[*op.operands, *([emit.splat(True, (), BOOL)] if carried else [])],
            attributes={a.name: a.attr for a in op.attributes}, regions=len(op.regions))
    for old_region, new_region, blocks in zip(op.regions, new.regions, per_block):
        for block, block_checks in zip(list(old_region.blocks), blocks):
            block.append_to(new_region)
            flags = [block.add_argument(flag_type, op.location)] if carried else []
            _terminate_with_flag(block, flags + [ok for ok, _ in block_checks], op.location)
    if op.name == "scf.if" and not len(new.regions[1].blocks):  # no else: it yields "no event"
        block = ir.Block.create_at_start(new.regions[1], [])
        with ir.InsertionPoint(block), op.location:
            ir.Operation.create("scf.yield", operands=[emit.splat(True, (), BOOL)])
    for old, replacement in zip(op.results, new.results):
        old.replace_all_uses_with(replacement)
    where, site = CONTROL_FLOW[op.name], _site(op.location)
    op.erase()
    whats = [source.what for _, sources in checks for source in sources]
    events = " or ".join(sorted({what.rsplit(" in ", 1)[0] for what in whats}))
    names = ", ".join(sorted({what.rsplit(" in ", 1)[1] for what in whats}))
    return new.results[len(new.results) - 1], [_Source(f"{events} in {names} inside the {where}", site)]


def _terminate_with_flag(block: ir.Block, flags: list[ir.Value], loc: ir.Location) -> None:
    """Append the AND of `flags` (true if none) to the operands of the block's terminator."""
    term = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(term), loc:
        flag = _and(*flags) if flags else emit.splat(True, (), BOOL)
        ir.Operation.create(term.operation.name, operands=[*term.operands, flag],
                            attributes={a.name: a.attr for a in term.operation.attributes})
    term.operation.erase()


# Helpers --------------------------------------------------------------------------------


def _defined_in(value: ir.Value, block: ir.Block) -> bool:
    """`value` is the result of an op of `block` (not an argument, not from another block)."""
    return isinstance(value.owner, ir.OpView | ir.Operation) and value.owner.operation.block == block


def _site(loc: ir.Location) -> str:
    return str(loc).removeprefix("loc(").removesuffix(")").replace('"', "")

