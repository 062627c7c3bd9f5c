"""Tests generated from the primitive table's VJP rules (dialects/primitives, bind.py).

- `test_every_primitive_declares_differentiability`: each primitive has a VJP
  rule or an explicit `bind.NotDifferentiable` reason, and every primitive
  with a rule has finite-difference cases here.
- `test_vjp_matches_finite_differences`: in float64, on random inputs (shapes
  with broadcasting, params), the rule's cotangents equal central finite
  differences of <ct, f(x)> for every float operand, and are None for the
  others (conditions, indices) and for operands that only give a shape (the
  gradient primitives' `like` operands; their finite differences are zero).
- `test_vjp_runs_on_ir_values`: the same rule applied with `bind` on
  `ir.Value`s (static and dynamic shapes) builds ops the verifier accepts (it
  re-derives every result type) and gives each operand a cotangent of its own
  type, so no rule can be NumPy-only.
- Exact choices where the derivative is not unique (ties of max/maximum,
  zeros in prod) are checked by hand.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from pyfront.dialects import verify_module
from pyfront.dialects.mlir import func, ir, new_context
from pyfront.dialects.primitives import all_primitives, bind, get
from pyfront.dialects.primitives.bind import NotDifferentiable
from pyfront.dialects.types import tensor_type

F64 = np.dtype(np.float64)
Shape = tuple[int | None, ...]


@dataclass(frozen=True)
class Case:
    prim: str
    shapes: tuple[Shape, ...]
    params: tuple[tuple[str, Any], ...] = ()
    dtypes: tuple[str, ...] = ()  # per operand; float64 where not given

    @property
    def id(self) -> str:
        shapes = ",".join("x".join("?" if d is None else str(d) for d in s) or "0d" for s in self.shapes)
        params = ",".join(f"{k}={v}" for k, v in self.params)
        return "-".join(p for p in (self.prim, shapes, params) if p)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    def dtype(self, i: int) -> np.dtype:
        return np.dtype(self.dtypes[i]) if self.dtypes else F64


def _c(prim: str, *shapes: Shape, dtypes: tuple[str, ...] = (), **params) -> Case:
    return Case(prim, tuple(shapes), tuple(params.items()), dtypes)


# Primitives of gather.py: their operands from this one on are int64 indices or offsets.
INDEX_OPERANDS = {"gather": 1, "scatter": 2, "scatter_add": 2, "dynamic_slice": 1, "dynamic_update_slice": 2}
BROADCASTING = [((3, 4), (3, 4)), ((2, 3, 1), (4,)), ((), (2, 3)), ((3, 1), (1, 4))]
UNARY_SHAPES = [(5,), (2, 3, 4), ()]
REDUCTIONS = [
    {"axes": (1,), "keepdims": False},
    {"axes": (0, 2), "keepdims": True},
    {"axes": (0, 1, 2), "keepdims": False},
]
DIFFERENTIABLE_BINARY = (
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
    "maximum", "minimum", "arctan2",
)
DIFFERENTIABLE_UNARY = (
    "negative", "absolute", "square", "sign", "exp", "expm1", "log", "log1p", "sqrt", "tanh",
    "sin", "cos", "floor", "ceil", "rint",
)

CASES: list[Case] = [
    *(_c(p, *shapes) for p in DIFFERENTIABLE_BINARY for shapes in BROADCASTING),
    *(_c(p, s) for p in DIFFERENTIABLE_UNARY for s in UNARY_SHAPES),
    _c("where", (3, 4), (3, 4), (3, 4), dtypes=("bool", "float64", "float64")),
    _c("where", (3, 1), (1, 4), (), dtypes=("bool", "float64", "float64")),
    _c("astype", (3, 4), dtype="float32"),
    _c("astype", (3, 4), dtype="float64"),
    _c("astype", (3, 4), dtype="int64"),
    _c("astype", (3, 4), dtypes=("int32",), dtype="float64"),
    *(_c(p, (3, 4, 5), **r) for p in ("sum", "prod", "max", "min", "mean") for r in REDUCTIONS),
    _c("sum", (), axes=(), keepdims=False),
    _c("matmul", (3, 4), (4, 5)),
    _c("matmul", (4,), (4, 5)),
    _c("matmul", (3, 4), (4,)),
    _c("matmul", (4,), (4,)),
    _c("matmul", (2, 3, 4), (4, 5)),
    _c("matmul", (2, 1, 3, 4), (3, 4, 2)),
    _c("matmul", (4,), (2, 4, 3)),
    _c("reshape", (2, 3, 4), shape=(6, 4)),
    _c("reshape", (6,), shape=(2, -1)),
    _c("reshape", (1, 1), shape=()),
    _c("transpose", (2, 3, 4), perm=(2, 0, 1)),
    _c("broadcast_to", (3, 1), shape=(2, 3, 4)),
    _c("broadcast_to", (), shape=(2, 3)),
    _c("concatenate", (2, 3), (2, 5), axis=1),
    _c("concatenate", (1, 4), (2, 4), (3, 4), axis=0),
    _c("slice", (5, 6), offsets=(1, 0), sizes=(2, 3), strides=(2, 2)),
    _c("slice", (4, 3, 2), offsets=(3, 0, 1), sizes=(1, 3, 1), strides=(1, 1, 1)),
    _c("slice", (7,), offsets=(2,), sizes=(-1,), strides=(3,)),
    _c("slice", (4, 5), offsets=(1, 0), sizes=(0, -1), strides=(1, 1)),
    _c("update_slice", (5, 6), (2, 3), offsets=(1, 0), strides=(2, 2)),
    _c("update_slice", (4, 3, 2), (1, 3, 1), offsets=(3, 0, 1), strides=(1, 1, 1)),
    _c("take", (3, 4), (), dtypes=("float64", "int64")),
    _c("take", (3,), (), dtypes=("float64", "int64")),
    # gather.py: 5 indices into 3 rows repeat (accumulating in scatter_add, the last winning in scatter).
    _c("gather", (3, 4), (5,), dtypes=("float64", "int64"), axes=(0,), at=0),
    _c("gather", (3, 4, 3), (2, 3), (2, 3), dtypes=("float64", "int64", "int64"), axes=(0, 2), at=0),
    _c("gather", (2, 3, 4), (2, 5), dtypes=("float64", "int64"), axes=(1,), at=1),
    _c("scatter", (3, 4), (5, 4), (5,), dtypes=("float64", "float64", "int64"), axes=(0,)),
    _c("scatter", (4, 3), (2, 2), (2, 2), (2, 2), dtypes=("float64", "float64", "int64", "int64"), axes=(0, 1)),
    _c("scatter", (4, 3, 2), (5, 4, 2), (5,), dtypes=("float64", "float64", "int64"), axes=(1,)),
    _c("scatter_add", (3, 4), (5, 4), (5,), dtypes=("float64", "float64", "int64"), axes=(0,)),
    _c("scatter_add", (4, 3), (5, 4), (5,), dtypes=("float64", "float64", "int64"), axes=(1,)),
    _c("compress", (3, 4), (3,), dtypes=("float64", "bool")),
    _c("compress", (3, 4), (3, 4), dtypes=("float64", "bool")),
    _c("expand", (3, 2), (2, 3), dtypes=("float64", "bool")),
    _c("flip", (3, 4), axes=(0,)),
    _c("flip", (2, 3, 4), axes=(0, 2)),
    _c("dynamic_slice", (6, 7), (), (), dtypes=("float64", "int64", "int64"), sizes=(2, 3), strides=(2, 2)),
    _c("dynamic_update_slice", (6, 7), (2, 3), (), (), dtypes=("float64", "float64", "int64", "int64"),
       strides=(2, 2)),
    # Gradient primitives of shape.py; their second operands only give a shape.
    _c("reshape_as", (2, 6), (3, 4)),
    _c("reshape_as", (6,), (2, 1, 3)),
    _c("slice_grad", (2, 3), (5, 6), offsets=(1, 0), strides=(2, 2)),
    _c("concatenate_grad", (6, 4), (1, 4), (2, 4), (3, 4), axis=0, index=1),
    # DL primitives (nn.py); index operands are drawn from -5..5, in range of 6 rows.
    _c("conv2d", (2, 2, 5, 4), (3, 2, 3, 2), strides=(2, 1), padding=(1, 1)),
    _c("conv2d_input_grad", (2, 3, 3, 5), (3, 2, 3, 2), input_hw=(5, 4), strides=(2, 1), padding=(1, 1)),
    _c("conv2d_filter_grad", (2, 2, 5, 4), (2, 3, 3, 5), kernel=(3, 2), strides=(2, 1), padding=(1, 1)),
    _c("max_pool2d", (2, 2, 5, 4), kernel=(2, 2), strides=(1, 2), padding=(1, 0)),
    _c("avg_pool2d", (2, 2, 5, 4), kernel=(3, 2), strides=(2, 2), padding=(1, 1)),
    _c("avg_pool2d_grad", (2, 2, 3, 3), input_hw=(5, 4), kernel=(3, 2), strides=(2, 2), padding=(1, 1)),
    _c("embedding", (6, 3), (2, 3), dtypes=("float64", "int64")),
    _c("embedding_grad", (2, 3, 5), (2, 3), dtypes=("float64", "int64"), num_rows=6),
]

# Not-differentiable primitives on float operands: every cotangent is None.
NONE_CASES = [
    _c("greater", (3, 4), (4,)),
    _c("argmax", (3, 4), axes=(1,), keepdims=False),
    _c("astype", (3, 4), dtype="bool"),
    _c("add", (3,), (3,), dtypes=("int64", "int64")),
    _c("sum", (3, 4), dtypes=("int32",), axes=(1,), keepdims=False),
]


def _inputs(case: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    out = []
    for i, shape in enumerate(case.shapes):
        dtype = case.dtype(i)
        if case.prim == "expand" and i == 1:  # as many True as the cotangent has rows
            out.append(rng.permutation(np.arange(np.prod(shape)) < case.shapes[0][0]).reshape(shape))
        elif dtype == np.bool_:
            out.append(rng.random(shape) < 0.5)
        elif case.prim == "take" and i == 1:
            out.append(np.asarray(rng.integers(0, case.shapes[0][0]), np.int64))
        elif i >= INDEX_OPERANDS.get(case.prim, 99):
            out.append(np.asarray(rng.integers(0, 3, shape), dtype))  # every indexed dim of the cases is >= 3
        elif dtype.kind == "i":
            out.append(np.asarray(rng.integers(-5, 6, shape), dtype))
        elif case.prim in ("log", "log1p", "sqrt", "power") and i == 0:
            out.append(np.asarray(rng.uniform(0.5, 2.0, shape)))  # where the function is smooth
        else:
            # Away from 0 and the integers, so sign/floor/abs/remainder are smooth nearby.
            x = rng.uniform(-2.0, 2.0, shape)
            out.append(np.asarray(np.floor(x) + 0.1 + 0.8 * (x - np.floor(x))))
    return out


def _shape_only(case: Case, i: int) -> bool:
    """Whether operand `i` only gives the result's shape (no cotangent flows to it)."""
    return (case.prim in ("reshape_as", "slice_grad") and i == 1) or (case.prim == "concatenate_grad" and i > 0)


def _impl(case: Case, xs: list[np.ndarray]) -> np.ndarray:
    return bind.apply(case.prim, *xs, **case.kwargs)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vjp_matches_finite_differences(case: Case):
    prim = get(case.prim)
    xs = _inputs(case)
    out = _impl(case, xs)
    rng = np.random.default_rng(1)
    ct = np.asarray(rng.standard_normal(out.shape), out.dtype)
    cts = prim.vjp(ct, out, *xs, **case.kwargs)
    assert len(cts) == len(xs)
    # A float32 result (astype) rounds each evaluation: a larger step there.
    eps, atol = (1e-6, 1e-6) if out.dtype == F64 else (1e-2, 1e-4)
    for i, (x, got) in enumerate(zip(xs, cts)):
        if x.dtype.kind != "f" or out.dtype.kind != "f":
            assert got is None, f"operand {i} ({x.dtype}) should get no cotangent"
            continue
        if _shape_only(case, i):
            assert got is None, f"operand {i} only gives a shape and should get no cotangent"
            got = np.zeros(x.shape)  # what the finite differences must show
        assert got.shape == x.shape and got.dtype == x.dtype, (got.shape, got.dtype)
        want = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            hi, lo = [v.copy() for v in xs], [v.copy() for v in xs]
            hi[i][k] += eps
            lo[i][k] -= eps
            diff = _impl(case, hi).astype(F64) - _impl(case, lo).astype(F64)
            want[k] = np.sum(ct.astype(F64) * diff) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=atol)


@pytest.mark.parametrize("case", NONE_CASES, ids=lambda c: c.id)
def test_not_differentiable_gives_none(case: Case):
    xs = _inputs(case)
    out = _impl(case, xs)
    assert get(case.prim).vjp(np.ones_like(out), out, *xs, **case.kwargs) == (None,) * len(xs)


def test_every_primitive_declares_differentiability():
    covered = {c.prim for c in CASES}
    for prim in all_primitives():
        assert prim.vjp is not None, (
            f"primitive {prim.name} has no vjp: write one (dialects/primitives, signature in bind.py) "
            "or mark it bind.NotDifferentiable('why')"
        )
        if isinstance(prim.vjp, NotDifferentiable):
            assert prim.vjp.reason, f"{prim.name}: NotDifferentiable needs a reason"
        else:
            assert prim.name in covered, f"{prim.name} has a VJP but no finite-difference case in CASES"


# The hand-checked choices where the derivative is not unique ------------------


def test_max_shares_ties_equally():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    out = bind.apply("max", x, axes=(1,), keepdims=False)
    (g,) = get("max").vjp(np.array([6.0, 1.0]), out, x, axes=(1,), keepdims=False)
    np.testing.assert_array_equal(g, [[0, 3, 3], [1, 0, 0]])


def test_maximum_ties_go_to_the_second_operand():
    a, b = np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.0, 3.0])
    ga, gb = get("maximum").vjp(np.ones(3), np.maximum(a, b), a, b)
    np.testing.assert_array_equal(ga, [0, 1, 0])
    np.testing.assert_array_equal(gb, [1, 0, 1])


def test_prod_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [2.0, 4.0, 0.5]])
    out = bind.apply("prod", x, axes=(1,), keepdims=False)
    (g,) = get("prod").vjp(np.ones(3), out, x, axes=(1,), keepdims=False)
    np.testing.assert_allclose(g, [[0, 6, 0], [0, 0, 0], [2, 1, 8]])


def test_take_from_a_dynamic_first_dim_is_refused_by_name():
    """The one case no rule can build: AD on the IR turns it into `Unsupported` (ir_ad.py)."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            i64 = np.dtype(np.int64)
            fn = func.FuncOp("f", ([tensor_type((None, 4), F32), tensor_type((), i64), tensor_type((4,), F32)], []))
            with ir.InsertionPoint(fn.add_entry_block()):
                x, i, ct = fn.arguments
                out = get("take").build([x, i])
                with pytest.raises(bind.NoVJP, match="take from a dynamic first dim"):
                    get("take").vjp(ct, out, x, i)


# Rules on IR values -------------------------------------------------------------

F32 = np.dtype(np.float32)

# Dynamic dims (None) where a rule needs a dynamic-aware path: broadcasting a
# reduced cotangent back over a dynamic dim, dividing by a run-time count,
# inserting axes around several dynamic dims, matmul over a dynamic batch.
DYNAMIC_CASES = [
    _c("sum", (None, 10), axes=(0, 1), keepdims=False),
    _c("mean", (None, 10), axes=(0,), keepdims=False),
    _c("mean", (None, None, 3), axes=(2,), keepdims=False),
    _c("max", (None, 4), axes=(1,), keepdims=False),
    _c("add", (None, 4), (4,)),
    _c("matmul", (None, 4), (4, 5)),
    _c("matmul", (None, 3, 4), (4,)),
    _c("reshape", (None, 2, 3), shape=(-1, 6)),
    _c("reshape", (None, 4), shape=(-1,)),
    _c("reshape", (None, None, 3), shape=(-1,)),
    _c("add", (None, None, 4), (4,)),
    _c("add", (None, None, 1), (None, 1, 4)),
    _c("slice", (None, 6), offsets=(0, 1), sizes=(-1, 2), strides=(1, 2)),
    _c("slice", (None, 6), offsets=(1, 0), sizes=(2, -1), strides=(2, 1)),
    _c("slice", (None, None), offsets=(1, 1), sizes=(-1, -1), strides=(2, 3)),
    _c("concatenate", (2, 3), (None, 3), axis=0),
    _c("concatenate", (None, 3), (2, 3), axis=0),
    _c("concatenate", (None, 3), (None, 3), (4, 3), axis=0),
    _c("concatenate", (2, None), (2, 3), axis=0),
    _c("reshape_as", (None,), (None, None, 3)),
    _c("slice_grad", (None, 2), (None, 6), offsets=(0, 1), strides=(1, 2)),
    _c("concatenate_grad", (None, 3), (None, 3), (4, 3), axis=0, index=1),
    _c("broadcast_to", (1, 4), shape=(3, -1)),
    _c("conv2d", (None, 2, 5, 4), (3, 2, 3, 2), strides=(1, 1), padding=(1, 1)),
    _c("max_pool2d", (None, 2, 4, 4), kernel=(2, 2), strides=(2, 2), padding=(0, 0)),
    _c("embedding", (6, 3), (None, 3), dtypes=("float64", "int64")),
    _c("gather", (6, 3), (None,), dtypes=("float64", "int64"), axes=(0,), at=0),
    _c("scatter_add", (6, 3), (None, 3), (None,), dtypes=("float64", "float64", "int64"), axes=(0,)),
    _c("expand", (None, 3), (4, 2), dtypes=("float64", "bool")),
]


def _ir_case_dtype(case: Case, i: int) -> np.dtype:
    # float32: some float64 ops (sin, floor_divide, ...) are rejected by their operand rule.
    return F32 if case.dtype(i) == F64 else case.dtype(i)


@pytest.mark.parametrize("case", CASES + DYNAMIC_CASES, ids=lambda c: c.id)
def test_vjp_runs_on_ir_values(case: Case):
    prim = get(case.prim)
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        types = [tensor_type(s, _ir_case_dtype(case, i)) for i, s in enumerate(case.shapes)]
        shape, dtype = prim.infer(list(case.shapes), [_ir_case_dtype(case, i) for i in range(len(types))],
                                  case.kwargs)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", (types + [tensor_type(shape, dtype)], []))
            with ir.InsertionPoint(fn.add_entry_block()):
                *args, ct = fn.arguments
                out = prim.build(list(args), **case.kwargs)
                cts = prim.vjp(ct, out, *args, **case.kwargs)
                func.ReturnOp([])
        verify_module(module)
        assert len(cts) == len(args)
        for i, (arg, got) in enumerate(zip(args, cts)):
            if bind.is_differentiable(arg) and bind.is_differentiable(out) and not _shape_only(case, i):
                assert got is not None and got.type == arg.type, (got, arg.type)
            else:
                assert got is None
