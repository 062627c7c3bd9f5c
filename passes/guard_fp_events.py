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

Guarantees: after every primitive op with `fp_events` and a float operand or
result, a `pyfront.guard` of kind "fp-error" (reason "floating-point <events>
in <op>", site the op's file:line) holds iff no element shows an event by the
op's `detect` rule (FpEvents' docstring): exact per element for elementwise
ops; for reductions and contractions any NaN or inf result fails it (IREE's
summation order differs from NumPy's pairwise sum, and a NaN or inf in one
slice could hide an overflow in another, so a non-finite input deopts too);
for float-to-int casts any NaN, inf or out-of-range input. Ops inside
`scf.for`/`scf.while`/`scf.if` regions get their flags ANDed into one 0-d
`tensor<i1>` carried out of the region as an extra result, guarded after the
loop or branch (reason naming the ops). Each check is elementwise ops plus one
all-reduction, which IREE fuses with the op's own dispatch where it can.

What the checks do not see is underflow (NumPy ignores it by default): the
runtime runs calls in the interpreter when `np.geterr()["under"]` is not
"ignore" (pyfront/guards.py `fp_state_is_default`). Ops computing Python
float arithmetic are checked too, although CPython gives inf/nan silently:
such a call deopts (a slower, never a different, answer).
"""

from __future__ import annotations

import numpy as np
from pyfront.dialects.core import GUARD
from pyfront.dialects.mlir import ir
from pyfront.dialects.primitives import by_op_name, emit
from pyfront.dialects.primitives.base import FpEvents
from pyfront.dialects.primitives.bind import apply, constant
from pyfront.dialects.types import shape_of, tensor_dtype
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

KIND = "fp-error"
CONTROL_FLOW = {"scf.for": "loop", "scf.while": "loop", "scf.if": "branch"}
BOOL = np.dtype(np.bool_)


@register_pass("guard-fp-events",
               "Guard every float op that can raise an IEEE event (divide/overflow/invalid): deopt when one did.")
def guard_fp_events(module: ir.Operation) -> None:
    for fn in functions(module):
        _checks(fn.body.blocks[0], guard=True)


def _checks(block: ir.Block, guard: bool = False) -> list[tuple[ir.Value, str]]:
    """(0-d tensor<i1> true iff no event, what could happen in which op) for each checked op of `block`.

    The flags of an op are built right after it; with `guard`, so is a guard on
    each (and nothing is returned). Region ops are rebuilt to carry their
    regions' flags out.
    """
    found = []
    ops = list(block.operations)
    for op, following in zip(ops, ops[1:]):  # the last op is the terminator
        op = op.operation
        prim, loc = by_op_name(op.name), op.location  # (a region op is replaced by _carry_out)
        with ir.InsertionPoint(following), loc:
            if prim is not None and prim.fp_events is not None:
                ok, events = _no_event(prim.fp_events, op)
                check = None if ok is None else (ok, f"{events} in {prim.name}")
            else:
                check = _carry_out(op) if len(op.regions) else None
            if check is not None and guard:
                GUARD.build([check[0]], [], kind=KIND, reason=f"floating-point {check[1]}", site=_site(loc))
            elif check is not None:
                found.append(check)
    return found


# What is checked after one op ---------------------------------------------------------


def _no_event(events: FpEvents, op: ir.Operation) -> tuple[ir.Value | None, str]:
    """(A 0-d tensor<i1>: no element of the op shows an event, or None when the op cannot raise one;
    the events it checks, in words)."""
    result, operands = op.results[0], list(op.operands)
    if events.detect == "cast":
        src, dst = tensor_dtype(operands[0].type), tensor_dtype(result.type)
        if src.kind != "f" or dst.kind == "b" or (dst.kind == "f" and dst.itemsize >= src.itemsize):
            return None, ""  # exact (int or bool source, widening) or `!= 0` (to bool): never an event
        if dst.kind == "f":
            return _all(_not(_elementwise_event(result, operands))), "overflow"
        return _all(_in_int_range(operands[0], dst)), "invalid value"
    if tensor_dtype(result.type).kind != "f":
        return None, ""  # the same op on ints or bools raises nothing (int division by zero is the front end's)
    if events.detect == "nonfinite":
        return _all(_isfinite(result)), events.describe()
    return _all(_not(_elementwise_event(result, operands))), events.describe()


def _elementwise_event(result: ir.Value, operands: list[ir.Value]) -> ir.Value:
    """Per element: NaN from no NaN (invalid), or +-inf from finite operands (overflow, divide by zero)."""
    finite_in = _and(*(_isfinite(x) for x in operands))
    nan_free_in = _and(*(_not(_isnan(x)) for x in operands))
    new_nan = apply("logical_and", _isnan(result), nan_free_in)
    return apply("logical_and", _not(_isfinite(result)), apply("logical_or", finite_in, new_nan))


def _in_int_range(x: ir.Value, dst: np.dtype) -> ir.Value:
    """Per element: float `x` truncates to a value of int type `dst` (False for NaN and inf)."""
    info, src = np.iinfo(dst), tensor_dtype(x.type)
    below = info.min - 1  # truncation keeps x > min - 1; where min - 1 rounds to min, no float lies between
    lower = (apply("greater", x, constant(below, x)) if int(src.type(below)) == below
             else apply("greater_equal", x, constant(info.min, x)))
    return apply("logical_and", lower, apply("less", x, constant(info.max + 1, x)))  # max + 1 is a power of 2


def _isnan(x: ir.Value) -> ir.Value:
    return apply("not_equal", x, x)


def _isfinite(x: ir.Value) -> ir.Value:
    return apply("less", apply("absolute", x), constant(np.inf, x))


def _not(x: ir.Value) -> ir.Value:
    return apply("logical_not", x)


def _and(*flags: ir.Value) -> ir.Value:
    out = flags[0]
    for f in flags[1:]:
        out = apply("logical_and", out, f)
    return out


def _all(flags: ir.Value) -> ir.Value:
    rank = len(shape_of(flags.type))
    return apply("min", flags, axes=list(range(rank)), keepdims=False) if rank else flags


# Control flow: the regions' flags as one more result ---------------------------------


def _carry_out(op: ir.Operation) -> tuple[ir.Value, str] | None:
    """Rebuild a loop or branch whose regions hold checks so it also returns their AND; None if none."""
    per_block = [[_checks(b) for b in region.blocks] for region in op.regions]
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
    where = CONTROL_FLOW[op.name]
    op.erase()
    events = " or ".join(sorted({what.rsplit(" in ", 1)[0] for _, what in checks}))
    names = ", ".join(sorted({what.rsplit(" in ", 1)[1] for _, what in checks}))
    return new.results[len(new.results) - 1], f"{events} in {names} inside the {where}"


def _terminate_with_flag(block: ir.Block, flags: list[ir.Value], loc: ir.Location) -> None:
    """Append the AND of `flags` (true if none) to the operands of the block's terminator."""
    term = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(term), loc:
        flag = _and(*flags) if flags else emit.splat(True, (), BOOL)
        ir.Operation.create(term.operation.name, operands=[*term.operands, flag],
                            attributes={a.name: a.attr for a in term.operation.attributes})
    term.operation.erase()


# Helpers --------------------------------------------------------------------------------


def _site(loc: ir.Location) -> str:
    return str(loc).removeprefix("loc(").removesuffix(")").replace('"', "")

