"""`Primitive`: one NumPy-level array op and all of its rules in one place.

A primitive is an op of the pyfront dialect (`pyfront.<name>`) with
- `impl`: the NumPy reference implementation (what the op means);
- `shape_rule` / `dtype_rule`: result shape and dtype from operand shapes, dtypes and params;
- `lower`: builds linalg/tensor/arith/math IR for it (see emit.py);
- `vjp`: its reverse-mode derivative rule, written with `bind.apply` so the same
  rule runs on the interpreter's tape and in the AD transformation on the IR
  (signature in bind.py); None where the primitive is not differentiable;
- `fp_events`: which IEEE floating-point events (NumPy's divide/over/invalid;
  underflow is ignored by NumPy's default) it can raise on ordinary float
  inputs, and how compiled code detects that one happened (`FpEvents`);
  None where it never raises one. The `guard-fp-events` pass reads it. An op
  built inside `with np.errstate(divide="ignore")` (`ignoring_events`) carries
  the events the code told NumPy to ignore (`IGNORED_EVENTS`), which the pass
  then does not check.

Operands of a primitive already have the dtypes its computation uses: NumPy's
promotion and Python's weak scalars are resolved by the front end
(pyfront/semantics.py), which inserts explicit `pyfront.astype` ops. The op
verifier re-derives the result type from the rules, so a module that
disagrees with the table is rejected.

Shapes may have dynamic dims, written None (`?` in the IR). The runtime
guarantees a dynamic dim is >= 2 at call time (sizes 0 and 1 get static
variants of their own), so the rules never broadcast a dynamic dim and never
reduce an empty one. Where NumPy needs two dims to be equal (broadcasting,
matmul's contraction, concatenation), a dynamic dim is assumed equal to the
other dim and takes its static size if it has one; the front end guards
that assumption at call time (`emit.dims_equal`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.opdef import Attr, OpDef, OpView, register
from pyfront.dialects.types import SUPPORTED_DTYPES, is_tensor, shape_of, tensor_dtype, tensor_type

Shape = tuple[int | None, ...]  # None: a dynamic dim

FP_EVENT_NAMES = {"divide": "divide by zero", "overflow": "overflow", "invalid": "invalid value"}


@dataclass(frozen=True)
class FpEvents:
    """The IEEE events a primitive can raise (NumPy warns or raises on them) and how to detect one.

    `detect` says what the compiled code checks after the op (passes/guard_fp_events.py):
    - "elementwise": an event happened at an element iff the result is NaN where
      no operand is NaN (invalid), or +-inf where every operand is finite
      (overflow, divide by zero);
    - "nonfinite": any NaN or inf in the result (reductions and contractions,
      whose summation order differs from NumPy's: conservative);
    - "cast": `astype` from float: to an int type, any NaN, inf or value out of
      the target's range (NumPy: invalid; the conversion is undefined); float64
      to float32, "elementwise" (a finite value that becomes inf: overflow).
    """

    events: frozenset[str]
    detect: str

    def __post_init__(self) -> None:
        assert self.events <= FP_EVENT_NAMES.keys() and self.detect in ("elementwise", "nonfinite", "cast")

    def describe(self) -> str:
        """E.g. "divide by zero or invalid value"."""
        return " or ".join(FP_EVENT_NAMES[e] for e in FP_EVENT_NAMES if e in self.events)


def fp_events(detect: str, *events: str) -> FpEvents:
    return FpEvents(frozenset(events), detect)


# The events NumPy ignores where ops are being built (an errstate block of the compiled code), and
# the attribute holding those of an op's own events that were ignored where it was built.
_IGNORING: contextvars.ContextVar[frozenset] = contextvars.ContextVar("ignored_fp_events", default=frozenset())
IGNORED_EVENTS = "pyfront.fp_ignored"


@contextlib.contextmanager
def ignoring_events(events: frozenset) -> Iterator[None]:
    """Ops built inside ignore `events` (keys of FP_EVENT_NAMES), as `np.errstate(...="ignore")` does."""
    token = _IGNORING.set(events)
    try:
        yield
    finally:
        _IGNORING.reset(token)


def events_ignored_here() -> frozenset:
    """The events ops built now ignore (`ignoring_events`)."""
    return _IGNORING.get()


def ignored_events(op: ir.Operation) -> frozenset:
    """The events of `op` that NumPy ignored where it was built."""
    if IGNORED_EVENTS not in op.attributes:
        return frozenset()
    return frozenset(ir.StringAttr(e).value for e in ir.ArrayAttr(op.attributes[IGNORED_EVENTS]))


@dataclass(frozen=True)
class Primitive:
    name: str
    summary: str
    impl: Callable[..., Any]
    shape_rule: Callable[..., Shape]
    dtype_rule: Callable[..., np.dtype]
    lower: Callable[..., ir.Value]
    arity: int | None  # None: variadic
    params: tuple[Attr, ...] = ()
    operand_rule: Callable[..., str | None] | None = None  # extra constraints on operand dtypes
    vjp: Callable[..., Any] | None = None
    fp_events: FpEvents | None = None
    # Every NaN/inf of a float operand makes a NaN/inf of a (non-empty) result: True for every operand, or
    # the operand positions it holds for (`slice_grad` places all of its cotangent, none of `like`).
    keeps_nonfinite: bool | tuple[int, ...] = False
    # Float results may differ from NumPy's in the last bits: IREE's approximations of transcendentals,
    # sums accumulated in another order. See `approximate_dtype`.
    approximate: bool = False
    opdef: OpDef = field(init=False, repr=False, compare=False)

    @property
    def op_name(self) -> str:
        return f"pyfront.{self.name}"

    def keeps_nonfinite_of(self, operand: int) -> bool:
        """Whether every NaN/inf of float operand `operand` makes a NaN/inf of a (non-empty) result."""
        keeps = self.keeps_nonfinite
        return keeps is True or (type(keeps) is tuple and operand in keeps)

    def infer(self, shapes: list[Shape], dtypes: list[np.dtype], params: dict[str, Any]) -> tuple[Shape, np.dtype]:
        """Result (shape, dtype); raises ValueError/TypeError when NumPy would raise."""
        if self.operand_rule:
            msg = self.operand_rule(*dtypes, **params)
            if msg:
                raise TypeError(f"{self.name}: {msg}")
        return tuple(self.shape_rule(*shapes, **params)), np.dtype(self.dtype_rule(*dtypes, **params))

    def build(self, operands: list[ir.Value], *, loc: ir.Location | None = None, **params: Any) -> ir.Value:
        """Emit `pyfront.<name>` at the current insertion point and return its result.

        Raises TypeError for an operand that is not a tensor of a supported dtype (`tensor_dtype`),
        and what `infer` raises: the op is built right, so `_check` need not verify it again.
        """
        shapes = [shape_of(v.type) for v in operands]
        dtypes = [tensor_dtype(v.type) for v in operands]
        shape, dtype = self.infer(shapes, dtypes, params)
        op = self.opdef.build(operands, [tensor_type(shape, dtype)], loc=loc, inferred=True, **params).op
        ignored = _IGNORING.get() & self.fp_events.events if self.fp_events else ()
        if ignored:
            op.attributes[IGNORED_EVENTS] = ir.ArrayAttr.get([ir.StringAttr.get(e) for e in sorted(ignored)])
        return op.result

    def _check(self, v: OpView) -> str | None:
        types = [o.type for o in v.operands] + [v.result.type]
        if not all(is_tensor(t) for t in types):
            return "operands and result must be ranked tensors"
        if any(tensor_dtype(t) not in SUPPORTED_DTYPES for t in types):
            return "unsupported element type"
        try:
            shape, dtype = self.infer(
                [shape_of(o.type) for o in v.operands], [tensor_dtype(o.type) for o in v.operands], v.params
            )
        except (TypeError, ValueError) as e:
            return str(e)
        want = tensor_type(shape, dtype)
        if want != v.result.type:
            return f"result type should be {want}, got {v.result.type}"
        return None


_PRIMITIVES: dict[str, Primitive] = {}


def primitive(
    name: str,
    summary: str,
    *,
    impl: Callable[..., Any],
    shape_rule: Callable[..., Shape],
    dtype_rule: Callable[..., np.dtype],
    lower: Callable[..., ir.Value],
    arity: int | None,
    params: tuple[Attr, ...] = (),
    operand_rule: Callable[..., str | None] | None = None,
    vjp: Callable[..., Any] | None = None,
    fp_events: FpEvents | None = None,
    keeps_nonfinite: bool | tuple[int, ...] = False,
    approximate: bool = False,
) -> Primitive:
    """Define a primitive and register its op in the dialect."""
    prim = Primitive(name, summary, impl, shape_rule, dtype_rule, lower, arity, params, operand_rule, vjp, fp_events,
                     keeps_nonfinite, approximate)
    operands = tuple(f"x{i}" for i in range(arity)) if arity is not None else ("operands*",)
    opdef = OpDef(prim.op_name, summary, operands=operands, attrs=params, results=("result",), check=prim._check)
    object.__setattr__(prim, "opdef", register(opdef))
    _PRIMITIVES[name] = prim
    return prim


def get(name: str) -> Primitive:
    return _PRIMITIVES[name]


def approximate_dtype(op: ir.Operation) -> np.dtype | None:
    """The narrowest float dtype among the results of `op`'s approximate primitives, or None.

    Every value computed from such a result is only as close to NumPy's as that dtype's
    approximations: a float32 `np.exp` multiplied by a float64 array gives float64 values
    within float32's few ulps of NumPy's, not float64's (runtime/verify.py compares so).
    """
    found: list[np.dtype] = []

    def visit(o: ir.Operation) -> ir.WalkResult:
        prim = by_op_name(o.name)
        if prim is not None and prim.approximate and len(o.results) == 1 and is_tensor(o.results[0].type):
            dtype = tensor_dtype(o.results[0].type)
            if dtype.kind == "f":
                found.append(dtype)
        return ir.WalkResult.ADVANCE

    walk(op, visit)
    return min(found, key=lambda d: d.itemsize, default=None)


def by_op_name(op_name: str) -> Primitive | None:
    return _PRIMITIVES.get(op_name.removeprefix("pyfront.")) if op_name.startswith("pyfront.") else None


def all_primitives() -> list[Primitive]:
    return list(_PRIMITIVES.values())


# Shared rules ---------------------------------------------------------------


def unify_dims(*dims: int | None) -> int | None:
    """The size of dims that must be equal: the static one if any (dynamic ones assumed equal)."""
    static = {d for d in dims if d is not None}
    if len(static) > 1 or (static and None in dims and min(static) < 2):  # dynamic dims are >= 2
        raise ValueError(f"dims {', '.join('?' if d is None else str(d) for d in dims)} differ")
    return static.pop() if static else None


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting; a dynamic dim is never 1, so it only meets 1s and dims it equals."""
    if not any(None in s for s in shapes):
        return tuple(np.broadcast_shapes(*shapes))  # with NumPy's error messages
    rank = max(map(len, shapes), default=0)
    aligned = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    try:
        return tuple(
            unify_dims(*(d for d in ds if d != 1)) if set(ds) != {1} else 1 for ds in zip(*aligned)
        )
    except ValueError:
        msg = f"operands could not be broadcast together with shapes {' '.join(map(str, shapes))}"
        raise ValueError(msg) from None


def same_dtype(*dtypes: np.dtype, **_: Any) -> np.dtype:
    return dtypes[0]


FLOAT16 = np.dtype(np.float16)


def float16_accumulation(*dtypes: np.dtype, **_: Any) -> str | None:
    """Why a sum or product over float16 operands is not compiled (None for other dtypes).

    NumPy accumulates float16 sums in float32 in its own order (pairwise blocks,
    rounding to float16 between the loops of a multi-axis reduction) and means
    and products likewise; IREE's order differs, and a different float32 sum can
    round to a different float16, so these stay in the interpreter. (matmul's
    plain k-order float32 sum IREE does follow: contraction.py.)
    """
    if FLOAT16 in dtypes:
        return "float16 sums accumulate in float32 in NumPy's own order, which IREE does not follow"
    return None


def operands_agree(*dtypes: np.dtype, **_: Any) -> str | None:
    return None if len(set(dtypes)) <= 1 else f"operand dtypes differ: {', '.join(map(str, dtypes))}"
