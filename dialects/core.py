"""Core pyfront ops: speculation guards and deferred Python state.

Deferred-state ops follow JANUS §4.2.3: a load reads Python state (an object's
attribute, a global, a closure cell, a subscript) at call time; a store writes a
local copy that later loads see, and the runtime commits every store only after
all guards held. `passes/lower_deferred_state.py` turns loads into extra
function arguments and stores into extra results, with the Python access path
recorded on the function (`pyfront.state_inputs` / `pyfront.state_outputs`).

A random draw (`pyfront.host_draw`) reads and advances a generator in Python
state: the runtime makes it on the host before the call, in program order, and
undoes it when the call deopts (runtime/host_draws.py); lowered, it is an input.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir
from pyfront.dialects.opdef import Attr, OpDef, OpView, register
from pyfront.dialects.types import is_object, is_tensor, isa

GUARD_KINDS = ("branch", "raise", "trip-count", "type", "shape", "value", "callee", "state", "fp-error")


def _check_guard(v: OpView) -> str | None:
    t = v.cond.type
    if not (isa(ir.IntegerType, t) and ir.IntegerType(t).width == 1) and not (
        is_tensor(t) and ir.RankedTensorType(t).rank == 0
        and isa(ir.IntegerType, ir.RankedTensorType(t).element_type)
    ):
        return "guard condition must be i1 or tensor<i1>"
    if v.kind not in GUARD_KINDS:
        return f"guard kind must be one of {', '.join(GUARD_KINDS)}"
    return None


GUARD = register(OpDef(
    "pyfront.guard",
    "Asserts a speculative assumption; the call is discarded and re-run in the interpreter if it fails.",
    operands=("cond",),
    attrs=(
        Attr("kind", "str", "what was assumed: " + ", ".join(GUARD_KINDS)),
        Attr("reason", "str", "the assumption, in words"),
        Attr("site", "str", "file:line of the Python code that made the assumption"),
    ),
    check=_check_guard,
))


def _object_operand(name: str):
    def check(v: OpView) -> str | None:
        return None if is_object(getattr(v, name).type) else f"operand '{name}' must be !pyfront.object"
    return check


def _value_result(v: OpView) -> str | None:
    t = v.result.type
    return None if is_tensor(t) or is_object(t) else "result must be a tensor or !pyfront.object"


def _both(*checks):
    def check(v: OpView) -> str | None:
        for c in checks:
            msg = c(v)
            if msg:
                return msg
        return None
    return check


def _state_ops(what: str, subject: tuple[str, ...], key: Attr, doc: str) -> tuple[OpDef, OpDef]:
    obj_check = _object_operand("object") if subject else None
    load = register(OpDef(
        f"pyfront.load_{what}",
        f"Reads {doc} at call time (or the local copy written earlier in this call).",
        operands=subject,
        attrs=(key,),
        results=("value",),
        check=_both(*(c for c in (obj_check, _value_result) if c)),
    ))
    store = register(OpDef(
        f"pyfront.store_{what}",
        f"Writes {doc} to a local copy; committed only if every guard of the call held.",
        operands=subject + ("value",),
        attrs=(key,),
        check=obj_check,
    ))
    return load, store


LOAD_ATTR, STORE_ATTR = _state_ops(
    "attr", ("object",), Attr("name", "str", "attribute name"), "an attribute of a Python object")
LOAD_GLOBAL, STORE_GLOBAL = _state_ops(
    "global", (), Attr("name", "str", "global name"), "a global of the function's module")
LOAD_CELL, STORE_CELL = _state_ops(
    "cell", (), Attr("name", "str", "free variable name"), "a closure cell of the function")
LOAD_ITEM, STORE_ITEM = _state_ops(
    "item", ("object",), Attr("key", "any", "constant subscript (string or integer attribute)"),
    "a subscript `object[key]` of a dict or list")

STATE_LOADS = {d.name: d for d in (LOAD_ATTR, LOAD_GLOBAL, LOAD_CELL, LOAD_ITEM)}
STATE_STORES = {d.name: d for d in (STORE_ATTR, STORE_GLOBAL, STORE_CELL, STORE_ITEM)}



def _tensor_result(v: OpView) -> str | None:
    return None if is_tensor(v.result.type) else "result must be a tensor"


HOST_DRAW = register(OpDef(
    "pyfront.host_draw",
    "A random draw made on the host just before the call, in program order; its value is an input of the call.",
    attrs=(
        Attr("index", "int", "the draw's position among the call's draws (program order)"),
        Attr("draw", "str", "what the code calls, e.g. np.random.rand (for people reading the IR)"),
    ),
    results=("value",),
    check=_tensor_result,
))
