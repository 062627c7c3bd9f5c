"""opaque-constants: on Vulkan, constants that Mesa or IREE's SPIR-V code gets wrong come from buffers.

Both problems below come from constants that IREE puts into a SPIR-V
dispatch; neither can happen to a value the dispatch reads from memory, so
such constants are passed through `util.optimization_barrier`, which IREE
does not see through: the dispatch gets them as a buffer.

1. Float zeros. Mesa's lavapipe (22.3, Debian 12's) folds float arithmetic
   as if signed zeros, infinities and NaNs did not exist: `x * 0.0` became
   0.0 (NumPy: -0.0 for negative x, NaN for inf and NaN, with an "invalid
   value" warning the floating-point checks then never saw), `x + 0.0` and
   `x - (-0.0)` became x (-0.0 for x = -0.0; NumPy +0.0), `0.0 - x` became
   -x, and `x - x`, `x + (-x)` became 0.0 (NumPy: NaN for inf). IREE's SPIR-V
   has the operations as written; declaring the `SignedZeroInfNanPreserve`
   execution mode, or `NoContraction` on each result, in the SPIR-V did not
   stop the folds (measured). So in each `linalg.generic`, an operand of
   `arith.addf`, `subf`, `mulf` or `divf` that is a float zero (a scalar
   `arith.constant`, or the element of an input that is a splat constant or
   a `linalg.fill` of one: IREE inlines those) becomes the element of a new
   0-d input holding that zero (its sign kept), made once per function. The
   second operand of `x - x`, and the negated one of `x + (-x)`, is
   multiplied by such an opaque 1.0 (exact for every x, NaN and -0.0
   included), so the two operands are no longer one value to Mesa.
2. 64-bit integer tensors of several values (`x[[2, 0]]`, `probs[np.arange(n),
   y]`, `y + np.array([3, 1])`): IREE 3.13's SPIR-V conversion failed on them
   ("failed to legalize unresolved target materialization from ('i64') to
   ('vector<2xi32>')") and the function did not compile. Such a constant is
   read through a barrier placed right after it (int64 arrays passed in
   compile, as do splat constants).

Applies to a module whose `BACKEND` attribute names a backend in
`BACKENDS` (Vulkan). Assumes: linalg on tensors (after
lower-to-linalg and its clean-ups, which have folded what IEEE allows), runs
before `bound-dispatch-inputs` (which counts the new inputs). Guarantees:
values are unchanged; a module for another backend, or without such a
constant, is unchanged. Not covered: float operands that become one value or
a zero only when IREE fuses two generics (`y = -x` and `x + y` in separate
generics), which no pyfront lowering was seen to produce.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.types import is_tensor, isa
from pyfront.passes.bound_dispatch_inputs import BARRIER
from pyfront.passes.funcs import functions
from pyfront.passes.registry import register_pass

# A module attribute: the backend the module is compiled for (set by the JIT and by export).
BACKEND = "pyfront.backend"
BACKENDS = frozenset({"vulkan"})  # where the pass applies
_ARITHMETIC = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.divf"})


@register_pass("opaque-constants",
               "On Vulkan: read float zeros of arithmetic (Mesa folds x*0.0, x+0.0, x-x as if no -0.0, inf or "
               "NaN existed) and int64 tensor constants (IREE's SPIR-V fails on them) from buffers.")
def opaque_constants(module: ir.Operation) -> None:
    backend = module.attributes[BACKEND] if BACKEND in module.attributes else None
    if backend is None or ir.StringAttr(backend).value not in BACKENDS:
        return
    for fn in functions(module):
        generics: list[ir.Operation] = []
        int64_tensors: list[ir.Operation] = []

        def collect(op: ir.Operation) -> ir.WalkResult:
            if op.name == "linalg.generic":
                generics.append(op)
            elif op.name == "arith.constant" and _is_int64_tensor(op):
                int64_tensors.append(op)
            return ir.WalkResult.ADVANCE

        walk(fn.operation, collect)
        opaque = _OpaqueConstants(fn.body.blocks[0])
        for generic in generics:
            rewrites = _rewrites(generic)
            if rewrites:
                _read_from_inputs(generic, rewrites, opaque)
        for constant in int64_tensors:
            _read_through_barrier(constant)


def _is_int64_tensor(constant: ir.Operation) -> bool:
    """A tensor constant of 64-bit integers, not all one value."""
    t = constant.result.type
    if not is_tensor(t) or not isa(ir.IntegerType, tensor_element := ir.RankedTensorType(t).element_type):
        return False
    attr = constant.attributes["value"]
    return (ir.IntegerType(tensor_element).width == 64 and isinstance(attr, ir.DenseElementsAttr)
            and not attr.is_splat)


def _read_through_barrier(constant: ir.Operation) -> None:
    value = constant.result
    uses = [(use.owner, use.operand_number) for use in value.uses]
    with ir.InsertionPoint.after(constant), constant.location:
        barrier = ir.Operation.create(BARRIER, results=[value.type], operands=[value])
    for owner, number in uses:
        owner.operands[number] = barrier.result


class _OpaqueConstants:
    """0-d tensors of (element type, value) behind an optimization barrier, made once at the function's start."""

    def __init__(self, entry: ir.Block):
        self._entry, self._made = entry, {}

    def get(self, element: ir.Type, value: float) -> ir.Value:
        key = _key(element, value)
        if key not in self._made:
            with ir.InsertionPoint(self._entry.operations[0]), ir.Location.unknown():
                t = ir.RankedTensorType.get([], element)
                constant = ir.Operation.create("arith.constant", results=[t], attributes={
                    "value": ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(element, value))})
                self._made[key] = ir.Operation.create(BARRIER, results=[t], operands=[constant.result]).result
        return self._made[key]


def _rewrites(generic: ir.Operation) -> list[tuple[ir.Operation, int, float, bool]]:
    """(op, operand number, the value it reads opaquely, whether that value multiplies the operand)
    for each operand of the generic's body that Mesa would fold."""
    body = generic.regions[0].blocks[0]
    n_inputs = len(generic.operands) - len(generic.results)
    # Input block argument -> the tensor it reads (an init's argument is the running value of a reduction).
    reads = dict(zip(list(body.arguments)[:n_inputs], list(generic.operands)[:n_inputs]))
    found = []
    for op in body.operations:
        op = op.operation
        if op.name not in _ARITHMETIC:
            continue
        a, b = op.operands
        for k, v in enumerate((a, b)):
            zero = _zero_tensor(reads[v]) if v in reads else _scalar_zero(v)
            if zero is not None:
                found.append((op, k, zero, False))
        if op.name in ("arith.subf", "arith.addf"):
            (na, ra), (nb, rb) = _term(a, reads), _term(b, reads)
            if ra == rb and (na + nb + (op.name == "arith.addf")) % 2 == 0:  # x - x, x + (-x)
                found.append((op, 1 if nb >= na else 0, 1.0, True))
    return found


def _term(v: ir.Value, reads: dict) -> tuple[int, ir.Value]:
    """(n, t): `v` is t negated n times, t a value of the body or a tensor the generic reads, as Mesa
    sees it once IREE fused the generics computing the tensors (a tensor read twice is one value)."""
    negations = 0
    while True:
        if isinstance(v.owner, ir.Block):
            if v not in reads:  # an argument of the generic's enclosing region
                return negations, v
            tensor = reads[v]
            negated = _negated_input(tensor)
            if negated is None:
                return negations, tensor
            negations, v = negations + 1, negated
            continue
        if v.owner.name != "arith.negf":
            return negations, v
        negations, v = negations + 1, v.owner.operands[0]


def _negated_input(tensor: ir.Value) -> ir.Value | None:
    """The tensor `tensor` is the elementwise negation of, if an elementwise generic computes it so."""
    owner = tensor.owner
    if isinstance(owner, ir.Block) or owner.name != "linalg.generic" or len(owner.results) != 1:
        return None
    body = owner.regions[0].blocks[0]
    ops = list(body.operations)
    if len(ops) != 2 or any(str(t) != "#linalg.iterator_type<parallel>"
                            for t in ir.ArrayAttr(owner.attributes["iterator_types"])):
        return None
    yielded = ops[-1].operands[0]
    if isinstance(yielded.owner, ir.Block) or yielded.owner.name != "arith.negf":
        return None
    arg = yielded.owner.operands[0]
    if not isinstance(arg.owner, ir.Block):
        return None
    return owner.operands[list(body.arguments).index(arg)]


def _scalar_zero(v: ir.Value) -> float | None:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.FloatAttr) or attr.value != 0.0:
        return None
    return attr.value


def _zero_tensor(v: ir.Value) -> float | None:
    """The zero a splat-constant or filled tensor holds, or None."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return None
    if owner.name == "linalg.fill":
        return _scalar_zero(owner.operands[0])
    if owner.name == "arith.constant":
        attr = owner.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr) and attr.is_splat:
            splat = attr.get_splat_value()
            if isinstance(splat, ir.FloatAttr) and splat.value == 0.0:
                return splat.value
    return None


def _read_from_inputs(generic: ir.Operation, rewrites: list, opaque: _OpaqueConstants) -> None:
    """Rebuild `generic` with one more 0-d input per value its rewrites read, and apply them."""
    body = generic.regions[0].blocks[0]
    n_inputs = len(generic.operands) - len(generic.results)
    values = {_key(op.operands[k].type, value): (op.operands[k].type, value) for op, k, value, _ in rewrites}
    extra = [opaque.get(element, value) for element, value in values.values()]
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    rank = ir.AffineMapAttr(maps[0]).value.n_dims
    scalar_map = ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, []))
    operands = list(generic.operands)
    attributes = {name: generic.attributes[name] for name in generic.attributes}
    attributes["indexing_maps"] = ir.ArrayAttr.get(maps[:n_inputs] + [scalar_map] * len(extra) + maps[n_inputs:])
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_inputs + len(extra), len(generic.results)])
    with ir.InsertionPoint(generic), generic.location:
        rebuilt = ir.Operation.create("linalg.generic", results=[r.type for r in generic.results],
                                      operands=operands[:n_inputs] + extra + operands[n_inputs:],
                                      attributes=attributes, regions=1)
        types = [a.type for a in body.arguments]
        new_body = rebuilt.regions[0].blocks.append(
            *types[:n_inputs], *(element for element, _ in values.values()), *types[n_inputs:])
    for old, new in zip(body.arguments, [*new_body.arguments[:n_inputs], *new_body.arguments[n_inputs + len(extra):]]):
        old.replace_all_uses_with(new)
    reads = {key: new_body.arguments[n_inputs + i] for i, key in enumerate(values)}
    for op in list(body.operations):
        op.operation.detach_from_parent()
        ir.InsertionPoint(new_body).insert(op.operation)
    replaced = []
    for op, k, value, multiplies in rewrites:
        read = reads[_key(op.operands[k].type, value)]
        if multiplies:
            with ir.InsertionPoint(op), op.location:
                read = ir.Operation.create("arith.mulf", results=[read.type], operands=[op.operands[k], read]).result
        else:
            replaced.append(op.operands[k])
        op.operands[k] = read
    for zero in dict.fromkeys(replaced):  # a scalar constant of the body that nothing reads any more
        if not isinstance(zero.owner, ir.Block) and zero.owner.name == "arith.constant" and not list(zero.uses):
            zero.owner.erase()
    for old, new in zip(generic.results, rebuilt.results):
        old.replace_all_uses_with(new)
    generic.erase()


def _key(element: ir.Type, value: float) -> tuple[str, str]:
    return str(element), repr(value)  # (repr tells -0.0 from 0.0)
