"""Tests generated from the primitive table (dialects/primitives).

Every primitive gets cases (operand shapes, params) for each dtype of
float32, float64, int32, int64 and bool that its operand rule accepts, and
each case is checked twice:
- `test_rules_match_impl`: the shape and dtype rules agree with the NumPy impl;
- `test_lowering_matches_impl`: the lowering, compiled by IREE for llvm-cpu,
  computes what the impl computes (exact for ints and bools, a few ulps for
  floats).
The cases of a group (the primitive's defining module: elementwise,
reduction, ..., in chunks) are computed by one MLIR function, compiled once
per test module; the groups compile in parallel. Mutant lowerings show that
the comparison catches plausible lowering bugs.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from pyfront.dialects import VerificationError, verify_module
from pyfront.dialects.mlir import arith, func, ir, math, new_context
from pyfront.dialects.primitives import all_primitives, emit, get
from pyfront.dialects.types import element_type, tensor_type
from pyfront.passes import run_passes

iree_compiler = pytest.importorskip("iree.compiler")
iree_runtime = pytest.importorskip("iree.runtime")

DTYPES = tuple(np.dtype(t) for t in ("float32", "float64", "int32", "int64", "bool"))
RTOL = {np.dtype("float32"): 1e-6, np.dtype("float64"): 1e-12}
# IREE approximates these with its own polynomials: allow a few ulps relative,
# and one ulp at magnitude 1 absolute (sin/cos reduce their argument absolutely).
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "tanh", "sin", "cos", "power", "arctan2"}
ULPS = 8
# IREE demotes f64 to f32 by default; pyfront promises NumPy's float64.
IREE_FLAGS = ["--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"]

Shape = tuple[int, ...]
F32, F64, I32 = np.dtype("float32"), np.dtype("float64"), np.dtype("int32")


@dataclass(frozen=True)
class Case:
    prim: str
    shapes: tuple[Shape, ...]
    dtypes: tuple[np.dtype, ...]
    params: tuple[tuple[str, Any], ...] = ()
    special: bool = False  # floats include nan, +-inf and +-0

    @property
    def id(self) -> str:
        shapes = ",".join("x".join(map(str, s)) or "0d" for s in self.shapes)
        params = ",".join(f"{k}={_fmt(v)}" for k, v in self.params)
        return "-".join(
            p
            for p in (
                self.prim,
                "_".join(map(str, self.dtypes)),
                shapes,
                params,
                "special" if self.special else "",
            )
            if p
        )

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def group(self) -> str:
        return get(self.prim).lower.__module__.rsplit(".", 1)[-1]

    def inputs(self) -> list[np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [
            _array(rng, s, d, _domain(self.prim, i), self.special)
            for i, (s, d) in enumerate(zip(self.shapes, self.dtypes))
        ]

    def expected(self) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(get(self.prim).impl(*self.inputs(), **self.kwargs))


def _fmt(v) -> str:
    return "_".join(map(str, v)) if isinstance(v, tuple) else str(v)


# Inputs ----------------------------------------------------------------------


def _domain(prim: str, operand: int) -> str:
    """Which values an operand takes: where the op is defined, and exact where order varies."""
    if prim in ("log", "sqrt") or (prim == "power" and operand == 0):
        return "positive"
    if prim == "log1p":
        return "above-1"
    if prim == "prod":
        return "prod"  # products stay exact whatever the order
    if prim == "bincount" and operand == 0:
        return "index"  # values 0..2: three entries, or minlength
    if prim in ("take", "embedding", "embedding_grad") and operand == 1:
        return "index"  # a row of the (3, ...) table of every take and embedding spec
    if prim == "expand" and operand == 1:
        return "mask3"  # as many True as the spec's cotangent has rows
    if operand >= INDEX_OPERANDS.get(prim, 99):
        return "index"  # each indexed dim (or room for an offset) of every spec below is >= 3
    return "any"


# Primitives of gather.py: their operands from this one on are int64 indices or offsets.
INDEX_OPERANDS = {"gather": 1, "scatter": 2, "scatter_add": 2, "dynamic_slice": 1, "dynamic_update_slice": 2}
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0, -3.0])


def _array(rng, shape: Shape, dtype: np.dtype, domain: str, special: bool) -> np.ndarray:
    if domain == "mask3":
        return rng.permutation(np.arange(int(np.prod(shape))) < 3).reshape(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if domain == "prod":
        choices = (
            [-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2] if dtype.kind == "f" else [-3, -2, -1, 1, 2, 3]
        )
        return np.asarray(rng.choice(choices, shape), dtype)
    if domain == "index":
        return np.asarray(rng.integers(0, 3, shape), dtype)
    if dtype.kind == "i":
        return np.asarray(rng.integers(-20, 21, shape), dtype)  # includes 0 (division by zero)
    if special:  # every special value at least once where it fits, in random places
        n = int(np.prod(shape, dtype=np.int64))
        values = np.concatenate([SPECIALS, rng.choice(SPECIALS, max(n - len(SPECIALS), 0))])[:n]
        return np.asarray(rng.permutation(values).reshape(shape), dtype)
    # Multiples of 1/8 in a small range: sums and products are exact in any order.
    low = {"positive": 1, "above-1": -7}.get(domain, -32)
    return np.asarray(rng.integers(low, 33, shape) / 8, dtype)


# Cases -----------------------------------------------------------------------
#
# The scalar body of a lowering depends on the op and dtype, the indexing on the
# shapes; so each op gets every accepted dtype on one informative shape
# ("all"), other shapes on its first accepted dtype only ("one"), and float
# specials where the lowering promises NumPy's nan/inf/-0 behaviour ("special").


@dataclass(frozen=True)
class Spec:
    shapes: tuple[Shape, ...]
    params: tuple[tuple[str, Any], ...] = ()
    dtypes: str = "all"  # "all" | "one" | "special"


def _spec(shapes, dtypes="all", **params) -> Spec:
    return Spec(tuple(shapes), tuple(params.items()), dtypes)


# NaN, inf and -0 behaviour that the lowering reproduces exactly.
SPECIAL_OK = {
    *("add", "subtract", "multiply", "true_divide", "floor_divide", "remainder"),
    *("maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater"),
    *("greater_equal", "negative", "absolute", "square", "sign", "floor", "ceil", "rint", "sqrt"),
    *("max", "min", "argmax", "argmin", "where", "zero_signs_agree", "max_pool2d_grad", "avg_pool2d_grad"),
    *("exp", "expm1", "log", "log1p", "tanh", "sin", "cos", "arctan2"),
}  # not power: IREE's powf differs at NaN, inf and zero or negative bases (the front end's fp guards deopt)
ALL_PAIRS = [(len(SPECIALS), 1), (1, len(SPECIALS))]  # every pair of special values
BINARY = [_spec([(3, 1, 4), (2, 1)]), _spec(ALL_PAIRS, "special")]
UNARY = [_spec([(2, 5)]), _spec([(3, 4)], "special")]
REDUCE = [
    _spec([(3, 4, 5)], axes=(1,), keepdims=True),
    _spec([(3, 4, 5)], axes=(0, 2), keepdims=False),
    _spec([(6,)], axes=(0,), keepdims=False),
    _spec([(3, 4, 5)], "one", axes=(0, 1, 2), keepdims=True),
    _spec([(4, 6)], "special", axes=(1,), keepdims=False),
]
MATMUL_MORE = [[(4,), (4, 5)], [(3, 4), (4,)], [(4,), (4,)], [(2, 3, 4), (4, 5)]]  # vectors, batch
SPECS: dict[str, list[Spec]] = {
    "add": BINARY + [_spec([(), (5,)], "one")],
    "where": [_spec([(3, 1), (1, 4), ()]), _spec([(9, 9)] + ALL_PAIRS, "special")],
    "astype": [
        *(_spec([(2, 5)], dtype=str(d)) for d in DTYPES),
        _spec([(2, 5)], "special", dtype="bool"),
    ],
    "argmax": [
        _spec([(3, 4)], axes=(0,), keepdims=False),
        _spec([(2, 3, 4)], "one", axes=(2,), keepdims=True),
        _spec([(4, 6)], "special", axes=(1,), keepdims=False),
    ],
    "matmul": [
        _spec([(3, 4), (4, 5)]),
        _spec([(2, 1, 3, 4), (3, 4, 2)]),
        *(_spec(s, "one") for s in MATMUL_MORE),
    ],
    "reshape": [
        _spec([(2, 3, 4)], shape=(6, 4)),
        _spec([(24,)], "one", shape=(2, 3, 4)),
        _spec([(1, 1)], "one", shape=()),
    ],
    "transpose": [_spec([(2, 3, 4)], perm=(2, 0, 1)), _spec([(3, 4)], "one", perm=(1, 0))],
    "broadcast_to": [_spec([(3, 1)], shape=(2, 3, 4)), _spec([()], "one", shape=(2, 3))],
    "concatenate": [
        _spec([(2, 3), (2, 5)], axis=1),
        _spec([(1, 4), (2, 4), (3, 4)], "one", axis=0),
    ],
    "take": [_spec([(3, 4), ()]), _spec([(3,), ()], "one")],
    "update_slice": [
        _spec([(5, 6), (2, 3)], offsets=(1, 0), strides=(2, 2)),
        _spec([(4, 3, 2), (1, 3, 1)], "one", offsets=(3, 0, 1), strides=(1, 1, 1)),
    ],
    "slice": [
        _spec([(5, 6)], offsets=(1, 0), sizes=(2, 3), strides=(2, 2)),
        _spec([(4, 3, 2)], "one", offsets=(3, 0, 1), sizes=(1, 3, 1), strides=(1, 1, 1)),
    ],
    # gather.py: repeated indices (5 draws from 3 rows), several index operands, a 0-d index.
    "gather": [_spec([(3, 4), (5,)], axes=(0,), at=0), _spec([(3, 4, 3), (2, 3), (2, 3)], "one", axes=(0, 2), at=0),
               _spec([(4, 3), ()], "one", axes=(1,), at=0), _spec([(2, 3, 4), (2, 5)], "one", axes=(1,), at=1)],
    "scatter": [_spec([(3, 4), (5, 4), (5,)], axes=(0,)),
                _spec([(3, 4, 3), (2, 3, 4), (2, 3), (2, 3)], "one", axes=(0, 2))],
    "scatter_add": [_spec([(3, 4), (5, 4), (5,)], axes=(0,)), _spec([(4, 3), (2, 2), (2, 2), (2, 2)], "one", axes=(0, 1)),
                    _spec([(4, 3), (2, 4), (2,)], "one", axes=(1,))],
    "compress": [_spec([(3, 4), (3,)]), _spec([(3, 4), (3, 4)], "one")],
    "bincount": [_spec([(7,)], "one", minlength=0), _spec([(7,), (7,)], "one", minlength=5)],
    "expand": [_spec([(3, 2), (2, 3)])],
    "dim": [_spec([(3, 4)], axis=1)],
    "flip": [_spec([(3, 4)], axes=(0, 1)), _spec([(2, 3, 4)], "one", axes=(1,))],
    "dynamic_slice": [_spec([(6, 7), (), ()], sizes=(2, 3), strides=(2, 2)),
                      _spec([(5,), ()], "one", sizes=(3,), strides=(1,))],
    "dynamic_update_slice": [_spec([(6, 7), (2, 3), (), ()], strides=(2, 2))],
    # DL primitives (nn.py): strided, padded, overlapping and non-square windows.
    "conv2d": [
        _spec([(2, 3, 7, 6), (4, 3, 3, 2)], strides=(2, 1), padding=(1, 1)),
        _spec([(1, 1, 5, 5), (2, 1, 2, 2)], "one", strides=(1, 1), padding=(0, 0)),
    ],
    "conv2d_input_grad": [_spec([(2, 4, 4, 7), (4, 3, 3, 2)], input_hw=(7, 6), strides=(2, 1), padding=(1, 1))],
    "conv2d_filter_grad": [_spec([(2, 3, 7, 6), (2, 4, 4, 7)], kernel=(3, 2), strides=(2, 1), padding=(1, 1))],
    "max_pool2d": [
        _spec([(2, 3, 7, 6)], kernel=(2, 2), strides=(2, 2), padding=(1, 1)),
        _spec([(1, 2, 5, 5)], "one", kernel=(3, 3), strides=(1, 1), padding=(0, 0)),
    ],
    "max_pool2d_grad": [
        _spec([(2, 3, 7, 6), (2, 3, 4, 4)], kernel=(2, 2), strides=(2, 2), padding=(1, 1)),
        _spec([(1, 2, 5, 5), (1, 2, 3, 3)], "one", kernel=(3, 3), strides=(1, 1), padding=(0, 0)),
        # Windows that tile the image (a row past the last window), and NaN/inf/-0 in both operands.
        _spec([(2, 3, 7, 6), (2, 3, 3, 3)], kernel=(2, 2), strides=(2, 2), padding=(0, 0)),
        _spec([(1, 2, 6, 4), (1, 2, 3, 2)], "special", kernel=(2, 2), strides=(2, 2), padding=(0, 0)),
        _spec([(1, 2, 5, 5), (1, 2, 3, 3)], "special", kernel=(3, 3), strides=(1, 1), padding=(0, 0)),
    ],
    "avg_pool2d": [_spec([(2, 3, 7, 6)], kernel=(3, 2), strides=(2, 2), padding=(1, 1))],
    "avg_pool2d_grad": [
        _spec([(2, 3, 4, 4)], input_hw=(7, 6), kernel=(3, 2), strides=(2, 2), padding=(1, 1)),
        _spec([(2, 3, 3, 2)], input_hw=(7, 6), kernel=(2, 3), strides=(2, 3), padding=(0, 0)),  # tiles
        _spec([(1, 2, 3, 2)], "special", input_hw=(6, 4), kernel=(2, 2), strides=(2, 2), padding=(0, 0)),
    ],
    "embedding": [_spec([(3, 4), (2, 5)]), _spec([(3, 4), ()], "one")],
    "embedding_grad": [_spec([(2, 5, 4), (2, 5)], num_rows=3)],
    # Gradient primitives of shape.py (the second operands give the result's shape).
    "reshape_as": [_spec([(3, 4), (2, 6)]), _spec([(6,), (2, 1, 3)], "one")],
    "slice_grad": [_spec([(2, 3), (5, 6)], offsets=(1, 0), strides=(2, 2))],
    "concatenate_grad": [_spec([(6, 4), (1, 4), (2, 4), (3, 4)], "one", axis=0, index=1)],
}
SPECS["argmin"] = SPECS["argmax"]
# Rows of 128 or more elements are reduced in lanes (16 or 8 apart: reduction.py `_reduced`). Not
# prod: in another order than NumPy's, partial products overflow elsewhere.
LONG_ROWS = [
    _spec([(3, 136)], axes=(1,), keepdims=False),
    _spec([(2, 2, 256)], "one", axes=(2,), keepdims=True),
    _spec([(2, 128)], "special", axes=(1,), keepdims=False),
]
for _name in ("sum", "mean", "max", "min"):
    SPECS[_name] = REDUCE + LONG_ROWS
SPECS["zero_signs_agree"] = [
    _spec([(3, 4, 5)], kind="max", axes=(1,)),
    _spec([(2, 128)], "special", kind="min", axes=(1,)),
    _spec([(6,)], "one", kind="min", axes=(0,)),
    _spec([(4, 6)], "special", kind="max", axes=(1,)),
    _spec([(4, 6)], "special", kind="min", axes=(0, 1)),
]


def _specs(prim) -> list[Spec]:
    """A primitive with no specs fails test_every_primitive_has_lowering_and_cases."""
    if prim.name in SPECS:
        specs = SPECS[prim.name]
    elif prim.params and prim.params[0].name == "axes":
        specs = REDUCE
    elif prim.arity in (1, 2) and not prim.params:
        specs = BINARY if prim.arity == 2 else UNARY
    else:
        return []
    return [s for s in specs if s.dtypes != "special" or prim.name in SPECIAL_OK]


def _operand_dtypes(prim, n: int, dtype: np.dtype) -> tuple[np.dtype, ...]:
    if prim.name in ("compress", "expand"):
        return (dtype, np.dtype(np.bool_))
    if prim.name == "bincount":  # int64 values, float64 weights
        return (np.dtype(np.int64),) + (np.dtype(np.float64),) * (n - 1)
    if prim.name in INDEX_OPERANDS:
        first = INDEX_OPERANDS[prim.name]
        return (dtype,) * first + (np.dtype(np.int64),) * (n - first)
    if prim.name in ("take", "embedding", "embedding_grad"):
        return (dtype, np.dtype(np.int64))
    return (np.dtype(np.bool_), dtype, dtype) if prim.name == "where" else (dtype,) * n


def _accepts(prim, spec: Spec, dtypes) -> bool:
    try:
        prim.infer(list(spec.shapes), list(dtypes), dict(spec.params))
    except TypeError:
        return False
    return True


def _cases() -> list[Case]:
    cases = []
    for prim in all_primitives():
        for spec in _specs(prim):
            special = spec.dtypes == "special"
            dtypes = [d for d in DTYPES if d.kind == "f"] if special else DTYPES
            accepted = [
                ds
                for ds in (_operand_dtypes(prim, len(spec.shapes), d) for d in dtypes)
                if _accepts(prim, spec, ds)
            ]
            if spec.dtypes == "one":
                accepted = accepted[:1]
            cases += [Case(prim.name, spec.shapes, ds, spec.params, special) for ds in accepted]
    return cases


CASES = _cases()


# Checking --------------------------------------------------------------------


def check(case: Case, got: np.ndarray, want: np.ndarray) -> None:
    """Raise AssertionError unless `got` is what NumPy computed, to the case's tolerance."""
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    if case.prim in TRANSCENDENTAL:
        eps = np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=ULPS * eps, atol=eps, equal_nan=True)
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype], atol=0, equal_nan=True)
    zeros = (want == 0) & (got == 0)  # the sign of a nonzero is allclose's business
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), "sign of zero")


# Compiling -------------------------------------------------------------------
#
# Each group is ONE function `@run` over all of its cases' operands: IREE's
# compile time is mostly per function, and iree-compile runs as a subprocess,
# so the groups compile in parallel while the IR of the next one is built.

Builder = Callable[[list[ir.Value], Case], ir.Value]
Entries = dict[str, tuple[Case, Builder]]  # result name -> (case, how to build it)


def _build_op(args: list[ir.Value], case: Case) -> ir.Value:
    return get(case.prim).build(args, **case.kwargs)


def group_module(entries: Entries) -> str:
    """The lowered module of one function computing every entry from its own arguments."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.create()
        types = [
            tensor_type(s, d)
            for case, _ in entries.values()
            for s, d in zip(case.shapes, case.dtypes)
        ]
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("run", (types, []))
            with ir.InsertionPoint(fn.add_entry_block()):
                args, results = list(fn.arguments), []
                for case, build in entries.values():
                    results.append(build(args[: len(case.shapes)], case))
                    args = args[len(case.shapes) :]
                func.ReturnOp(results)
            fn.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(types, [r.type for r in results])
            )
        verify_module(module)
        run_passes(module, ["lower-to-linalg"])
        module.operation.verify()
        return str(module)


def _compile(asm: str) -> bytes:
    return iree_compiler.compile_str(asm, target_backends=["llvm-cpu"], extra_args=IREE_FLAGS)


def run_group(vmfb: bytes, entries: Entries) -> dict[str, np.ndarray]:
    config = iree_runtime.Config("local-task")
    context = iree_runtime.SystemContext(config=config)
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(config.vm_instance, vmfb))
    inputs = [a for case, _ in entries.values() for a in case.inputs()]
    outputs = context.modules.module["run"](*inputs)
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    assert len(outputs) == len(entries)
    return {name: np.asarray(out.to_host()) for name, out in zip(entries, outputs)}


class Compiled:
    """Every group compiled once, in the background; each group's function run once."""

    def __init__(self, groups: list[Entries]):
        self._groups = groups
        self._group_of = {name: i for i, entries in enumerate(groups) for name in entries}
        pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        self._vmfbs = [pool.submit(_compile, group_module(entries)) for entries in groups]
        pool.shutdown(wait=False)
        self._outputs: dict[int, dict[str, np.ndarray]] = {}

    def output(self, name: str) -> np.ndarray:
        i = self._group_of[name]
        if i not in self._outputs:
            self._outputs[i] = run_group(self._vmfbs[i].result(), self._groups[i])
        return self._outputs[i][name]


MAX_GROUP = 80  # cases per compiled function; smaller groups keep every core busy


def _selected(session) -> set[str]:
    """Names of the cases and mutants that the selected tests compare (so `-k` compiles less)."""
    names = set()
    for item in session.items:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if "compiled" in getattr(item, "fixturenames", ()):
            names.add(params["case"].id if "case" in params else params.get("name"))
    return names


@pytest.fixture(scope="module")
def compiled(request) -> Compiled:
    selected = _selected(request.session)
    by_group: dict[str, list[Case]] = {}
    for case in CASES:
        if case.id in selected:
            by_group.setdefault(case.group, []).append(case)
    groups = [{k: v for k, v in MUTANTS.items() if k in selected}]
    for cases in by_group.values():
        for i in range(0, len(cases), MAX_GROUP):
            groups.append({c.id: (c, _build_op) for c in cases[i : i + MAX_GROUP]})
    return Compiled(sorted(filter(None, groups), key=len, reverse=True))  # longest first


# Tests -----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rules_match_impl(case: Case):
    want = case.expected()
    shape, dtype = get(case.prim).infer(list(case.shapes), list(case.dtypes), case.kwargs)
    # A dynamic dim (None) of the rule's result is one whose size depends on the data (compress).
    assert len(want.shape) == len(shape) and all(d is None or d == w for d, w in zip(shape, want.shape)), \
        f"shape rule gives {shape}, impl {want.shape}"
    assert want.dtype == dtype, f"dtype rule gives {dtype}, impl {want.dtype}"


@pytest.mark.iree
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_lowering_matches_impl(case: Case, compiled: Compiled):
    check(case, compiled.output(case.id), case.expected())


def test_every_primitive_has_lowering_and_cases():
    covered = {c.prim for c in CASES}
    for prim in all_primitives():
        assert callable(prim.lower), f"{prim.name} has no lowering"
        assert prim.name in covered, f"{prim.name} has no test case: add it to _specs"
    # Every dtype a primitive accepts somewhere is exercised.
    assert {d for c in CASES for d in c.dtypes} == set(DTYPES)


def _module_with_result(prim, shapes, dtypes, params: dict, result: ir.Type | None) -> ir.Module:
    """A function applying `prim`, and a second op with result type `result` (none if None)."""
    module = ir.Module.create()
    types = [tensor_type(s, d) for s, d in zip(shapes, dtypes)]
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("f", (types, []))
        with ir.InsertionPoint(fn.add_entry_block()):
            good = prim.build(list(fn.arguments), **params).owner
            if result is not None:
                ir.Operation.create(
                    prim.op_name,
                    results=[result],
                    operands=list(fn.arguments),
                    attributes={n: good.attributes[n] for n in good.attributes},
                )
            func.ReturnOp([])
    return module


@pytest.mark.parametrize("wrong", ["dtype", "shape"])
@pytest.mark.parametrize("prim", all_primitives(), ids=lambda p: p.name)
def test_verifier_rejects_wrong_result_type(prim, wrong: str):
    case = next(c for c in CASES if c.prim == prim.name)
    shape, dtype = prim.infer(list(case.shapes), list(case.dtypes), case.kwargs)
    with new_context(), ir.Location.unknown():
        if wrong == "dtype":
            bad = tensor_type(shape, np.float32 if dtype == np.float64 else np.float64)
        else:
            bad = tensor_type(shape + (7,), dtype)
        module = _module_with_result(prim, case.shapes, case.dtypes, case.kwargs, bad)
        with pytest.raises(
            VerificationError, match=re.escape(f"result type should be {tensor_type(shape, dtype)}")
        ):
            verify_module(module)


# Dynamic dims (None): the rules follow the contract in dialects/primitives/base.py.
# (tests/test_dynamic_shapes.py compiles and runs such ops.)

DYNAMIC_RULES = [
    ("add", [(None, 8), (8,)], {}, (None, 8)),
    ("add", [(None, 1), (1, 5)], {}, (None, 5)),
    ("add", [(None,), (4,)], {}, (4,)),  # assumed equal: the front end guards it
    ("add", [(None,), (0,)], {}, ValueError),  # a dynamic dim is >= 2
    ("sum", [(None, 8)], {"axes": (0,), "keepdims": True}, (1, 8)),
    ("argmax", [(None, 8)], {"axes": (1,), "keepdims": False}, (None,)),
    ("reshape", [(None, 8)], {"shape": (-1, 2, 4)}, (None, 2, 4)),
    ("reshape", [(2, 8)], {"shape": (-1, 4)}, (4, 4)),
    ("reshape", [(None, 8)], {"shape": (16,)}, ValueError),  # needs -1
    ("reshape", [(None, 4)], {"shape": (-1, 8)}, ValueError),  # 8 does not divide 4
    ("reshape", [(None, 8)], {"shape": (-1, -1)}, ValueError),
    ("transpose", [(None, 3)], {"perm": (1, 0)}, (3, None)),
    ("broadcast_to", [(None, 1)], {"shape": (2, -1, 5)}, (2, None, 5)),
    ("broadcast_to", [(None,)], {"shape": (-1, 3)}, ValueError),  # -1 faces no operand dim
    ("concatenate", [(None, 8), (3, 8)], {"axis": 0}, (None, 8)),
    ("concatenate", [(None, 3), (4, 5)], {"axis": 1}, (4, 8)),
    ("concatenate", [(None, 3), (1, 5)], {"axis": 1}, ValueError),
    ("slice", [(None, 8)], {"offsets": (1, 2), "sizes": (-1, -1), "strides": (2, 3)}, (None, 2)),
    ("slice", [(5,)], {"offsets": (1,), "sizes": (-1,), "strides": (3,)}, (2,)),
    ("slice", [(None, 8)], {"offsets": (0, 0), "sizes": (2, 9), "strides": (1, 1)}, ValueError),
    ("matmul", [(None, 3, 4), (4, None)], {}, (None, 3, None)),
    ("matmul", [(3, None), (4, 5)], {}, (3, 5)),
    ("matmul", [(3, None), (1, 5)], {}, ValueError),
    ("matmul", [(None, 4), (4,)], {}, (None,)),
]


def _rule_id(rule) -> str:
    name, shapes, params, want = rule
    shape = lambda s: "x".join("?" if d is None else str(d) for d in s)
    operands = ",".join(map(shape, shapes))
    return f"{name}-{operands}-{_fmt(tuple(params.values()))}-{getattr(want, '__name__', want)}"


@pytest.mark.parametrize("rule", DYNAMIC_RULES, ids=_rule_id)
def test_dynamic_shape_rules(rule):
    name, shapes, params, want = rule
    dtypes = [F32] * len(shapes)
    if want is ValueError:
        with pytest.raises(ValueError):
            get(name).infer(shapes, dtypes, params)
        return
    assert get(name).infer(shapes, dtypes, params)[0] == want


@pytest.mark.parametrize("rule", [r for r in DYNAMIC_RULES if r[3] is not ValueError], ids=_rule_id)
def test_verifier_checks_dynamic_result(rule):
    """The verifier accepts the rules' dynamic result type, and rejects it made static."""
    name, shapes, params, want = rule
    dtypes = [F32] * len(shapes)
    with new_context(), ir.Location.unknown():
        verify_module(_module_with_result(get(name), shapes, dtypes, params, None))
        if None in want:
            static = tensor_type(tuple(2 if d is None else d for d in want), F32)
            with pytest.raises(VerificationError, match="result type should be"):
                verify_module(_module_with_result(get(name), shapes, dtypes, params, static))


# Mutants: plausible lowering bugs the comparison must catch ---------------------


def _elementwise(body: Callable[..., ir.Value], out_dtype=None) -> Builder:
    def build(args, case):
        shape = np.broadcast_shapes(*case.shapes)
        return emit.elementwise(args, shape, out_dtype or case.dtypes[0], lambda a: body(*a))

    return build


def _sum_from_one(args, case):
    (x,), (axis,) = args, case.kwargs["axes"]
    out_shape = tuple(d for i, d in enumerate(case.shapes[0]) if i != axis)
    init = emit.fill(1, out_shape, case.dtypes[0])
    (out,) = emit.reduction(x, (axis,), [init], lambda a: arith.addi(a[0], a[1]))
    return out


MUTANTS: dict[str, tuple[Case, Builder]] = {
    # maxnumf ignores NaN; NumPy's maximum propagates it.
    "maximum-maxnumf": (
        Case("maximum", tuple(ALL_PAIRS), (F32, F32), special=True),
        _elementwise(arith.maxnumf),
    ),
    # C remainder takes the dividend's sign; NumPy's the divisor's.
    "remainder-remsi": (Case("remainder", ((2, 3), (2, 3)), (I32, I32)), _elementwise(arith.remsi)),
    # Truncating division rounds toward zero; floor_divide rounds down.
    "floor_divide-trunc": (
        Case("floor_divide", ((2, 3), (2, 3)), (F32, F32)),
        _elementwise(lambda a, b: math.trunc(arith.divf(a, b))),
    ),
    # Rounding instead of truncating in a float-to-int conversion.
    "astype-round": (
        Case("astype", ((2, 5),), (F32,), (("dtype", "int32"),)),
        _elementwise(lambda a: arith.fptosi(element_type(I32), math.roundeven(a)), I32),
    ),
    # Unordered instead of ordered comparison: NaN compares equal.
    "equal-ueq": (
        Case("equal", tuple(ALL_PAIRS), (F64, F64), special=True),
        _elementwise(lambda a, b: arith.cmpf(arith.CmpFPredicate.UEQ, a, b), np.bool_),
    ),
    # A wrong reduction identity.
    "sum-identity": (
        Case("sum", ((3, 4, 5),), (I32,), (("axes", (1,)), ("keepdims", False))),
        _sum_from_one,
    ),
    # `0 - x` is +0 for x = 0; NumPy's negative gives -0.
    "negative-subf": (
        Case("negative", ((9,),), (F64,), special=True),
        _elementwise(lambda a: arith.subf(arith.constant(a.type, 0.0), a)),
    ),
    # The wrong function, within a few ulps only near 0.
    "tanh-as-sin": (Case("tanh", ((2, 5),), (F32,)), _elementwise(math.sin)),
}


@pytest.mark.iree
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_lowering_is_caught(name: str, compiled: Compiled):
    case, _ = MUTANTS[name]
    with pytest.raises(AssertionError):
        check(case, compiled.output(name), case.expected())


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("prim", ["add", "exp"])
def test_tolerance_catches_small_errors(prim: str, dtype: np.dtype):
    case = Case(prim, ((8,),) * get(prim).arity, (dtype,) * get(prim).arity)
    want = case.expected()
    check(case, want, want)
    rel = RTOL[dtype] if prim not in TRANSCENDENTAL else ULPS * np.finfo(dtype).eps
    with pytest.raises(AssertionError):
        check(case, want * (1 + 4 * rel), want)
