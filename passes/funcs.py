"""Helpers shared by passes that change a func.func's signature and its path attributes."""

from __future__ import annotations

from pyfront.dialects.mlir import func, ir

INPUTS = "pyfront.inputs"
OUTPUTS = "pyfront.outputs"


def functions(module: ir.Operation) -> list[func.FuncOp]:
    # Iterating a block yields typed views; a FuncOp's `.name` is its symbol, so
    # compare the operation name.
    ops = module.regions[0].blocks[0].operations
    return [op for op in ops if op.operation.name == "func.func" and isinstance(op, func.FuncOp)]


def string_list(op: ir.Operation, name: str, default: list[str]) -> list[str]:
    if name not in op.attributes:
        return default
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes[name])]


def set_string_list(op: ir.Operation, name: str, values: list[str]) -> None:
    op.attributes[name] = ir.ArrayAttr.get([ir.StringAttr.get(v) for v in values])


def input_paths(fn: func.FuncOp) -> list[str]:
    n = len(fn.type.inputs)
    return string_list(fn.operation, INPUTS, [f"arg{i}" for i in range(n)])


def output_paths(fn: func.FuncOp) -> list[str]:
    n = len(fn.type.results)
    return string_list(fn.operation, OUTPUTS, [f"return{i}" for i in range(n)])


def return_op(fn: func.FuncOp) -> ir.Operation:
    blocks = list(fn.body.blocks)
    if len(blocks) != 1:
        raise ValueError(f"{fn.name.value}: expected a single-block function")
    return blocks[0].operations[len(blocks[0].operations) - 1]


def set_results(fn: func.FuncOp, values: list[ir.Value], paths: list[str]) -> None:
    """Replace the function's returned values (and its type and output paths)."""
    ret = return_op(fn)
    with ir.InsertionPoint(ret), ret.location:
        func.ReturnOp(values)
    ret.erase()
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(fn.type.inputs), [v.type for v in values])
    )
    set_string_list(fn.operation, OUTPUTS, paths)
