"""lower-deferred-state: Python state reads become inputs, writes become outputs.

JANUS's deferred state update (§4.2.3). Assumes: state ops sit in the
function's entry block, in program order; `!pyfront.object` values come from
function arguments or other state loads. Guarantees:
- the first read of a path (`arg0.W`, `global:g`, `cell:c`, `arg1['k']`)
  becomes a new function argument, recorded in `pyfront.inputs`;
- a read after a write of the same path in this call sees the written value
  (the local copy); a write is never visible to Python before the call ends;
- the last value written to each path becomes a new function result, recorded
  in `pyfront.outputs` as `store:<path>`; the runtime commits these only when
  every guard held (all-or-nothing);
- a random draw (`pyfront.host_draw`, made on the host before the call)
  becomes a new function argument with path `draw:<index>`;
- `!pyfront.object` arguments and all state ops are removed.
"""

from __future__ import annotations

from pyfront.dialects.core import (
    HOST_DRAW,
    LOAD_ATTR,
    LOAD_CELL,
    LOAD_GLOBAL,
    STATE_LOADS,
    STATE_STORES,
    STORE_ATTR,
    STORE_CELL,
    STORE_GLOBAL,
)
from pyfront.dialects.mlir import ir
from pyfront.dialects.state_path import Path, draw_path
from pyfront.dialects.types import is_object
from pyfront.passes.funcs import (
    INPUTS,
    functions,
    input_paths,
    output_paths,
    return_op,
    set_results,
    set_string_list,
)
from pyfront.passes.registry import register_pass


def _key(view):
    attr = view.key
    is_str = attr.typeid == ir.StringAttr.static_typeid
    return ir.StringAttr(attr).value if is_str else ir.IntegerAttr(attr).value


def _path(op: ir.Operation, objects: dict) -> Path:
    """The access path that a state op reads or writes."""
    name = op.name
    if name in (LOAD_GLOBAL.name, STORE_GLOBAL.name):
        return Path(f"global:{STATE_LOADS.get(name, STATE_STORES.get(name)).view(op).name}")
    if name in (LOAD_CELL.name, STORE_CELL.name):
        return Path(f"cell:{(LOAD_CELL if name == LOAD_CELL.name else STORE_CELL).view(op).name}")
    opdef = STATE_LOADS.get(name) or STATE_STORES[name]
    view = opdef.view(op)
    base = objects.get(_value_key(view.object))
    if base is None:
        raise ValueError(f"lower-deferred-state: object operand of {name} at {op.location} has no access path")
    return base.attr(view.name) if name in (LOAD_ATTR.name, STORE_ATTR.name) else base.item(_key(view))


def _value_key(v: ir.Value):
    # ir.Value hashes and compares by the underlying MLIR value, so wrappers of
    # one value are one key (`_CAPIPtr` capsules are new objects each time).
    return v


@register_pass("lower-deferred-state", "Deferred Python state: reads become arguments, writes become results.")
def lower_deferred_state(module: ir.Operation) -> None:
    for fn in functions(module):
        _lower_function(fn)


def _lower_function(fn) -> None:
    block = fn.body.blocks[0]
    in_paths = input_paths(fn)
    objects: dict = {}
    for i, arg in enumerate(block.arguments):
        if is_object(arg.type):
            objects[_value_key(arg)] = Path.parse(in_paths[i])

    local: dict[str, ir.Value] = {}  # path -> current local copy
    stored: dict[str, ir.Value] = {}  # path -> last value written in this call
    new_inputs: list[tuple[str, ir.Type]] = []
    dead: list[ir.Operation] = []
    for op in list(block.operations):
        name = op.name
        if name in STATE_LOADS:
            path = _path(op, objects)
            result = op.results[0]
            if is_object(result.type):
                objects[_value_key(result)] = path
            else:
                key = str(path)
                if key not in local:
                    local[key] = block.add_argument(result.type, op.location)
                    new_inputs.append((key, result.type))
                result.replace_all_uses_with(local[key])
            dead.append(op)
        elif name in STATE_STORES:
            path = str(_path(op, objects))
            value = op.operands[-1]
            local[path] = value
            stored[path] = value
            dead.append(op)
        elif name == HOST_DRAW.name:
            result = op.results[0]
            new_inputs.append((draw_path(HOST_DRAW.view(op).index), result.type))
            result.replace_all_uses_with(block.add_argument(result.type, op.location))
            dead.append(op)
    for op in reversed(dead):
        op.erase()

    # Drop object arguments; they exist only to name state roots.
    keep = [i for i, a in enumerate(block.arguments) if not is_object(a.type)]
    all_paths = in_paths + [p for p, _ in new_inputs]
    for i in reversed(range(len(block.arguments))):
        if i not in keep:
            if list(block.arguments[i].uses):
                raise ValueError(f"lower-deferred-state: object argument {i} of {fn.name.value} is still used")
            block.erase_argument(i)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], list(fn.type.results))
    )
    set_string_list(fn.operation, INPUTS, [all_paths[i] for i in keep])
    if stored:
        ret = return_op(fn)
        set_results(
            fn,
            list(ret.operands) + list(stored.values()),
            output_paths(fn) + [f"store:{p}" for p in stored],
        )
