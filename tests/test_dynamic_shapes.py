"""Primitives on tensors with dynamic dims (None in a shape, `?` in the IR).

Each case is one function whose arguments have dynamic dims; all of them are
in one module, verified (the op verifier accepts the dynamic types the rules
give), lowered with lower-to-linalg + canonicalize + cse, compiled ONCE by
IREE, and then called with several runtime sizes for the dynamic dims, each
result compared with the primitive's NumPy impl (exact dtype and shape,
test_primitives' tolerances). Dynamic dims are >= 2 at call time (the
contract in dialects/primitives/base.py), hence the sizes below.
"""

from __future__ import annotations

import numpy as np
import pytest
from pyfront.dialects import verify_module
from pyfront.dialects.mlir import func, ir, new_context, tensor
from pyfront.dialects.primitives import emit, get
from pyfront.dialects.types import tensor_type
from pyfront.passes import run_passes
from test_primitives import IREE_FLAGS, Case, check

iree_compiler = pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

pytestmark = pytest.mark.iree

F32, F64, I32, I8, B = (np.dtype(t) for t in ("float32", "float64", "int32", "int8", "bool"))
SIZES = (2, 3, 7)  # what each dynamic dim is at call time

# name -> (primitive, operand shapes with None for dynamic dims, operand dtypes, params)
CASES: dict[str, tuple[str, tuple, tuple, dict]] = {
    "add_row": ("add", ((None, 8), (8,)), (F32, F32), {}),
    "add_outer": ("add", ((None, 1), (1, 5)), (I32, I32), {}),
    "add_both": ("add", ((None, 8), (None, 8)), (F64, F64), {}),
    "exp": ("exp", ((None, 8),), (F32,), {}),
    "where": ("where", ((None, 8), (None, 8), (8,)), (B, F32, F32), {}),
    "sum_dyn_keep": ("sum", ((None, 8),), (F32,), {"axes": (0,), "keepdims": True}),
    "sum_static": ("sum", ((None, 8),), (I32,), {"axes": (1,), "keepdims": False}),
    "sum_all": ("sum", ((None, 3, None),), (F64,), {"axes": (0, 1, 2), "keepdims": False}),
    "mean_dyn": ("mean", ((None, 8),), (F32,), {"axes": (0,), "keepdims": False}),
    "mean_all_keep": ("mean", ((None, 8),), (F64,), {"axes": (0, 1), "keepdims": True}),
    "mean_static_keep": ("mean", ((None, 8),), (F32,), {"axes": (1,), "keepdims": True}),
    "max_dyn": ("max", ((None, 8),), (F32,), {"axes": (0,), "keepdims": False}),
    "max_static_keep": ("max", ((None, 8),), (I32,), {"axes": (1,), "keepdims": True}),
    "argmax_dyn_keep": ("argmax", ((None, 8),), (F32,), {"axes": (0,), "keepdims": True}),
    "argmax_static": ("argmax", ((None, 8),), (I32,), {"axes": (1,), "keepdims": False}),
    "reshape_split": ("reshape", ((None, 8),), (F32,), {"shape": (-1, 2, 4)}),
    "reshape_flat": ("reshape", ((None, 8),), (F32,), {"shape": (-1,)}),
    "reshape_merge": ("reshape", ((None, 2, 4),), (I32,), {"shape": (4, -1)}),
    "transpose": ("transpose", ((None, 8),), (F32,), {"perm": (1, 0)}),
    "transpose_3d": ("transpose", ((None, 3, None),), (I32,), {"perm": (2, 0, 1)}),
    "broadcast_to": ("broadcast_to", ((None, 1),), (F32,), {"shape": (2, -1, 5)}),
    "concat_dyn_axis": ("concatenate", ((None, 8), (3, 8)), (F32, F32), {"axis": 0}),
    "concat_static_axis": ("concatenate", ((None, 3), (None, 5)), (I32, I32), {"axis": 1}),
    "slice_full": (
        "slice",
        ((None, 8),),
        (F32,),
        {"offsets": (0, 1), "sizes": (-1, 3), "strides": (1, 2)},
    ),
    "slice_step": (
        "slice",
        ((None, 8),),
        (F32,),
        {"offsets": (1, 0), "sizes": (-1, -1), "strides": (2, 3)},
    ),
    "slice_head": (
        "slice",
        ((None, 8),),
        (I32,),
        {"offsets": (0, 2), "sizes": (2, 4), "strides": (1, 1)},
    ),
    "matmul": ("matmul", ((None, 4), (4, 5)), (F32, F32), {}),
    "matmul_dyn_k": ("matmul", ((3, None), (None, 5)), (F64, F64), {}),
    "matmul_dyn_n": ("matmul", ((3, 4), (4, None)), (F32, F32), {}),
    "matmul_batch": ("matmul", ((None, 3, 4), (4, 5)), (F32, F32), {}),
    "matmul_batch_both": ("matmul", ((None, 3, 4), (None, 4, 2)), (I32, I32), {}),
    "matmul_vector": ("matmul", ((None, 4), (4,)), (F32, F32), {}),
}


def _case(name: str, n: int) -> Case:
    """The case at runtime size `n` of every dynamic dim, as a static test_primitives case."""
    prim, shapes, dtypes, params = CASES[name]
    concrete = tuple(tuple(n if d is None else d for d in s) for s in shapes)
    return Case(prim, concrete, dtypes, tuple(params.items()))


def _function(name: str, types: list[ir.Type], build) -> None:
    fn = func.FuncOp(name, (types, []))
    with ir.InsertionPoint(fn.add_entry_block()):
        result = build(list(fn.arguments))
        func.ReturnOp([result])
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, [result.type]))


def _dims_equal(args: list[ir.Value]) -> ir.Value:
    # As an i8, like the guard flags: IREE cannot build an i1 tensor from elements.
    flag = emit.convert(emit.dims_equal(args[0], 0, args[1], 1), B, I8)
    return tensor.from_elements(tensor_type((), I8), [flag])


def module_text() -> str:
    """Every case (and `dims_equal`) as one function each, verified and lowered."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for name, (prim, shapes, dtypes, params) in CASES.items():
                types = [tensor_type(s, d) for s, d in zip(shapes, dtypes)]
                _function(
                    name,
                    types,
                    lambda args, prim=prim, params=params: get(prim).build(args, **params),
                )
            _function(
                "dims_equal",
                [tensor_type((None, 8), F32), tensor_type((3, None), F32)],
                _dims_equal,
            )
        verify_module(module)
        run_passes(module, ["lower-to-linalg", "canonicalize", "cse"])
        module.operation.verify()
        return str(module)


@pytest.fixture(scope="module")
def loaded():
    from pyfront.runtime.iree_backend import LoadedModule

    vmfb = iree_compiler.compile_str(
        module_text(), target_backends=["llvm-cpu"], extra_args=IREE_FLAGS
    )
    return LoadedModule(vmfb)


@pytest.mark.parametrize("name", CASES)
def test_rules_give_dynamic_result(name: str):
    """The rule keeps exactly the dynamic dims that vary with the runtime size."""
    prim, shapes, dtypes, params = CASES[name]
    shape, _ = get(prim).infer(list(shapes), list(dtypes), params)
    at = [get(prim).infer(list(_case(name, n).shapes), list(dtypes), params)[0] for n in SIZES]
    varying = tuple(len({s[i] for s in at}) > 1 for i in range(len(shape)))
    assert tuple(d is None for d in shape) == varying, f"rule gives {shape}, static rules {at}"


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", CASES)
def test_dynamic_lowering_matches_impl(name: str, n: int, loaded):
    case = _case(name, n)
    (got,) = loaded.function(name)(case.inputs())
    check(case, got, case.expected())


@pytest.mark.parametrize(("rows", "cols", "want"), [(3, 3, True), (3, 5, False), (7, 7, True)])
def test_dims_equal(rows: int, cols: int, want: bool, loaded):
    (got,) = loaded.function("dims_equal")([np.ones((rows, 8), F32), np.ones((3, cols), F32)])
    assert got.dtype == I8 and got.shape == () and int(got) == want
