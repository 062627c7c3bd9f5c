"""differentiate: build gradient functions with the IR AD transformation (pyfront/autodiff/ir_ad.py).

Assumes: each function to build is declared, without a body, as

    func.func private @loss_grad(<loss's argument types>) -> (<loss's result>, <cotangent types>)
        attributes {pyfront.grad_of = @loss, pyfront.argnums = array<i64: 0, 2>}

where `@loss` is a single-block function in the same module returning one
float scalar (`tensor<f32>` or `tensor<f64>`).

Guarantees: the declaration is replaced by a function of the same name and
type whose body is `@loss`'s forward followed by its backward: it returns the
loss, then d loss / d argument for each of `argnums` in order (zeros where the
loss does not depend on it). `@loss` itself is unchanged. Anything the AD
transformation cannot differentiate fails the pass with the op and its source
location.
"""

from __future__ import annotations

from pyfront.dialects.mlir import func, ir
from pyfront.dialects.primitives import emit
from pyfront.dialects.types import is_tensor, shape_of, tensor_dtype
from pyfront.passes.funcs import functions, return_op
from pyfront.passes.registry import register_pass

GRAD_OF = "pyfront.grad_of"
ARGNUMS = "pyfront.argnums"


@register_pass("differentiate", "Build each function declared with pyfront.grad_of from its forward function.")
def differentiate(module: ir.Operation) -> None:
    from pyfront.autodiff.ir_ad import backward

    by_name = {fn.name.value: fn for fn in functions(module)}
    for decl in [fn for fn in by_name.values() if GRAD_OF in fn.attributes]:
        target = ir.FlatSymbolRefAttr(decl.attributes[GRAD_OF]).value
        if target not in by_name:
            raise ValueError(f"differentiate: @{decl.name.value} is the gradient of @{target}, which does not exist")
        argnums = list(ir.DenseI64ArrayAttr(decl.attributes[ARGNUMS]))
        grad_fn = _clone_as(by_name[target], decl)
        block = grad_fn.body.blocks[0]
        ret = return_op(grad_fn)
        (loss,) = _scalar_result(ret, target)
        wrt = [block.arguments[i] for i in argnums]
        forward = [op for op in block.operations if op != ret]
        with ir.InsertionPoint(ret), ret.location:
            cts = backward(forward, loss, wrt)
            cts = [ct if ct is not None else emit.splat(0.0, shape_of(w.type), tensor_dtype(w.type))
                   for ct, w in zip(cts, wrt)]
            func.ReturnOp([loss] + cts)
        ret.erase()
        _check_type(grad_fn, decl)
        decl.operation.erase()


def _clone_as(fn: func.FuncOp, decl: func.FuncOp) -> func.FuncOp:
    """A copy of `fn` just before `decl`, with `decl`'s name and visibility."""
    clone = fn.operation.clone(ip=ir.InsertionPoint(decl.operation))
    clone.attributes["sym_name"] = ir.StringAttr.get(decl.name.value)
    if "sym_visibility" in decl.attributes:
        clone.attributes["sym_visibility"] = decl.attributes["sym_visibility"]
    return clone.opview


def _scalar_result(ret: ir.Operation, name: str) -> list[ir.Value]:
    results = list(ret.operands)
    if len(results) != 1 or not is_tensor(results[0].type) or shape_of(results[0].type) != () \
            or tensor_dtype(results[0].type).kind != "f":
        raise ValueError(f"differentiate: @{name} must return one float scalar (tensor<f32> or tensor<f64>)")
    return results


def _check_type(grad_fn: func.FuncOp, decl: func.FuncOp) -> None:
    ret = return_op(grad_fn)
    got = ir.FunctionType.get(list(grad_fn.type.inputs), [v.type for v in ret.operands])
    if got != decl.type:
        raise ValueError(f"differentiate: @{decl.name.value} is declared {decl.type}, but the gradient is {got}")
    grad_fn.attributes["function_type"] = ir.TypeAttr.get(got)
