"""fuse: fold an elementwise linalg.generic into its only consumer, when no work is repeated.

What it does: a `linalg.generic` producer whose iterators are all parallel,
whose one result is written through the identity map, whose body does not
read its init, and whose result has exactly one use, as an input of another
`linalg.generic` read through the identity map, is merged into that
consumer: the fused op reads the producer's inputs (with the producer's
maps) in place of the producer's result, and its body is the producer's body
followed by the consumer's. Chains fold one step at a time, so a whole
elementwise chain ending in an elementwise op or a reduction becomes one op.

Assumes: tensor semantics (no buffers); the module is lowered to
linalg/tensor/arith/math (after `lower-to-linalg`); generic bodies have no
nested regions (a body with one is left alone).

Guarantees:
- no work is duplicated: the producer had one use and the consumer reads
  each of its elements exactly once (identity map over all the consumer's
  loops, so the loop nests coincide, `linalg.index` included), so every
  scalar op runs as many times as before, in the same order per element:
  results are bit-identical;
- named ops (`linalg.matmul`, `linalg.fill`, ...) and contractions are never
  touched: an identity map over all loops cannot be a matmul operand, so an
  elementwise op is never recomputed inside a matmul's reduction, and IREE
  still sees every matmul as one (microkernel) op;
- every loop of the fused op is still sized by an operand (a broadcast is
  not folded into a reduction whose init lacks the broadcast dim);
- nothing else changes: no reshapes are propagated and no op is generalized.

Why not upstream `linalg-fuse-elementwise-ops`: its reshape propagation
turns the unrolled LSTM's 2-d matmuls (between `expand_shape`/`collapse_shape`
of a time slice) into 4-loop generics and then fuses `h = o * tanh(c)` into
the next step's `h @ U`, recomputing tanh for each of the 256 output columns;
IREE then rejects the module ("One or more operations with large vector
sizes (32768 bytes)") and the call runs in the interpreter.

Measured (IREE 3.13 `--compile-to=flow`, `flow.dispatch` ops, default
pipeline -> default + fuse, float32, with guard-fp-events as of 9dc4c12):
LSTM cell (batch 8, 32 -> 64 units) 7 -> 6; dense layer relu(x @ W + b)
(32x64 @ 64x128) 4 -> 3; softmax (32x10) 6 -> 5; bench/ablation.py's 16-step
LSTM 67 -> 66 (upstream fusion: IREE rejected it); its mlp_step 23 -> 20.
The saved dispatches are mostly `guard-fp-events`' per-element flag generics
folded into the reduction that ANDs them; IREE's own dispatch formation
already puts bias + activation into the matmul's dispatch. Times (median of
interleaved samples, loaded 2-core machine) ranged from 0.72x (mlp_step) to
1.1x (dense layer) of the default's: not faster everywhere, so `fuse` is not
in the default pipeline.

Not done, measured: horizontal fusion of RNN gate matmuls, `x @ W + h @ U`
-> `concat([x, h], 1) @ concat([W, U], 0)`. IREE copies both operands into
the concatenation (a `slow_memcpy` dispatch each), so the 16-step LSTM went
from 67 to 82 dispatches and 480 -> 563 us per call; the cell from 6 to 7
dispatches at the same time.
"""

from __future__ import annotations

from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives import emit
from pyfront.passes.registry import register_pass

GENERIC = "linalg.generic"


@register_pass("fuse", "Fuse each single-use elementwise linalg.generic into its consumer generic (no recomputation).")
def fuse(module: ir.Operation) -> None:
    for block in _blocks(module):
        # Producers precede their consumers, so visiting generics in order and
        # folding all of a consumer's producers into it reaches a fixpoint.
        for op in [op.operation for op in block.operations if op.operation.name == GENERIC]:
            while (found := _fusable_operand(op)) is not None:
                op = _fuse(found, op)


def _blocks(root: ir.Operation) -> list[ir.Block]:
    blocks = []

    def visit(op):
        if op.name != GENERIC:  # generic bodies are scalar code
            for region in op.regions:
                blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE

    walk(root, visit)
    return blocks


def _fusable_operand(consumer: ir.Operation) -> int | None:
    """The index of an input of `consumer` that a producer can be folded into, or None."""
    n_inputs = _n_inputs(consumer)
    maps = _maps(consumer)
    if _has_nested_regions(consumer):
        return None
    for i in range(n_inputs):
        value = consumer.operands[i]
        producer = _defining_op(value)
        if producer is None or producer.name != GENERIC or producer.block != consumer.block:
            continue
        if not (_single_use(value) and _is_identity(maps[i]) and _is_elementwise(producer)):
            continue
        if _covers_all_loops(maps[:i] + _maps(producer)[:_n_inputs(producer)] + maps[i + 1:]):
            return i
    return None


def _covers_all_loops(maps: list[ir.AffineMap]) -> bool:
    """Whether every loop is the plain index of some operand dim, so linalg can size the loops.

    Folding a broadcast (`(d0, d1) -> (d1)`) into a full reduction, whose init
    is 0-d, would leave d0 with no operand to take its size from.
    """
    dims = {e.position for m in maps for e in m.results if isinstance(e, ir.AffineDimExpr)}
    return dims == set(range(maps[0].n_dims))


def _is_elementwise(op: ir.Operation) -> bool:
    """All-parallel, one result through the identity map, init not read, no nested regions."""
    iterators = [str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])]
    if len(op.results) != 1 or any("parallel" not in it for it in iterators):
        return False
    n_inputs = _n_inputs(op)
    out_arg = op.regions[0].blocks[0].arguments[n_inputs]
    return _is_identity(_maps(op)[n_inputs]) and not list(out_arg.uses) and not _has_nested_regions(op)


def _fuse(index: int, consumer: ir.Operation) -> ir.Operation:
    """Replace `consumer` by one generic computing its producer at input `index` inline."""
    producer = _defining_op(consumer.operands[index])
    n_producer, n_consumer = _n_inputs(producer), _n_inputs(consumer)
    p_inputs = list(producer.operands)[:n_producer]
    c_operands = list(consumer.operands)
    p_maps, c_maps = _maps(producer), _maps(consumer)
    inputs = c_operands[:index] + p_inputs + c_operands[index + 1:n_consumer]
    input_maps = c_maps[:index] + p_maps[:n_producer] + c_maps[index + 1:n_consumer]
    inits = c_operands[n_consumer:]
    iterators = [str(it) for it in ir.ArrayAttr(consumer.attributes["iterator_types"])]

    def body(args: list[ir.Value]) -> list[ir.Value]:
        p_args = args[index:index + n_producer]
        c_args = args[:index] + [None] + args[index + n_producer:]
        p_block, c_block = producer.regions[0].blocks[0], consumer.regions[0].blocks[0]
        mapping = dict(zip(p_block.arguments, p_args))
        (produced,) = _clone_body(p_block, mapping)
        c_args[index] = produced
        mapping = dict(zip(c_block.arguments, c_args))
        return _clone_body(c_block, mapping)

    with ir.InsertionPoint(consumer), consumer.location:
        results = emit.generic(inputs, [ir.AffineMapAttr.get(m) for m in input_maps], inits,
                               [ir.AffineMapAttr.get(m) for m in c_maps[n_consumer:]], iterators, body)
    fused = _defining_op(results[0])
    for old, new in zip(consumer.results, results):
        old.replace_all_uses_with(new)
    producer_inits = list(producer.operands)[n_producer:]
    consumer.erase()
    producer.erase()
    for init in producer_inits:  # the producer's `tensor.empty`, now dead
        op = _defining_op(init)
        if op is not None and op.name == "tensor.empty" and not list(init.uses):
            op.erase()
    return fused


def _clone_body(block: ir.Block, mapping: dict) -> list[ir.Value]:
    """Clone `block`'s ops at the insertion point with operands remapped; the values it yields."""
    *ops, yield_op = list(block.operations)
    for op in ops:
        clone = op.operation.clone()
        for i, operand in enumerate(clone.operands):
            if operand in mapping:
                clone.operands[i] = mapping[operand]
        mapping.update(zip(op.results, clone.results))
    return [mapping.get(v, v) for v in yield_op.operands]


def _defining_op(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _n_inputs(op: ir.Operation) -> int:
    return ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _is_identity(m: ir.AffineMap) -> bool:
    return m.n_symbols == 0 and m == ir.AffineMap.get_identity(m.n_dims)


def _single_use(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


def _has_nested_regions(op: ir.Operation) -> bool:
    return any(len(inner.regions) for inner in op.regions[0].blocks[0].operations)
