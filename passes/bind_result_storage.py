"""bind-result-storage: a state result is written into a buffer the caller supplies.

Bufferization at the function boundary. A training step writes every
parameter (and optimizer moment, RNN state) it read: without this pass IREE
allocates a fresh buffer for each such result on every call. With it, the
result is written into a buffer the runtime passes in, and the runtime passes
the buffer of the value that the previous commit displaced (when nothing can
observe it any more: runtime/iree_backend.py, "Result storage"), so a steady
stream of training steps ping-pongs between two buffers per state slot with no
allocation, no copy and no new NumPy array.

Why not the input's own buffer (true in-place update): the old value must stay
intact until every in-graph guard has held, so that a deopt re-runs the call
from the state it started with (all-or-nothing commit); and IREE does not know
that a storage buffer and an input are one memory, so a dispatch reading the
input while writing the result (a transpose, a matmul) would read half-written
data. A displaced value is neither read by the call nor visible to Python.

Assumes: `lower-deferred-state` has run (`pyfront.inputs`, `pyfront.outputs`)
and no later pass changes the signature (it runs last). Guarantees: each
`store:<path>` result whose path is also an input of the same static tensor
type and whose value the function computes (not an argument passed through)
gets a storage argument `!hal.buffer_view {iree.abi.output = <result index>}`,
appended after the others; `pyfront.storage` lists [result index, input index
of the path] per storage argument, in order. The storage is never read; IREE
aliases the result onto it (`hal.tensor.alias`). A value that IREE must place
in one buffer is returned once: when the stored value is also a plain result
(the graph generator returns stored arrays as results, to keep their Python
identity), the `store:` result is dropped and `pyfront.stores` records
[path, result index] for it, and the storage goes to that result; a value
returned at any further position gets no storage (IREE would copy it there).
"""

from __future__ import annotations

from collections import Counter

from pyfront.dialects.mlir import ir
from pyfront.dialects.types import is_tensor
from pyfront.passes.funcs import functions, input_paths, output_paths, return_op, set_results
from pyfront.passes.registry import register_pass

STORAGE = "pyfront.storage"
STORES = "pyfront.stores"
_OUTPUT_ATTR = "iree.abi.output"


@register_pass("bind-result-storage", "Write state results into caller-supplied buffers (iree.abi.output).")
def bind_result_storage(module: ir.Operation) -> None:
    for fn in functions(module):
        _bind(fn)


def _bind(fn) -> None:
    ins, outs = input_paths(fn), output_paths(fn)
    returned = list(return_op(fn).operands)
    block = fn.body.blocks[0]
    first = {}  # value -> the first plain result returning it
    for i, (path, value) in enumerate(zip(outs, returned)):
        if not path.startswith("store:") and path != "guards":
            first.setdefault(value, i)
    positions = Counter(returned)
    bound, dropped = {}, set()  # bound: result index -> input index of its path
    for j, (path, value) in enumerate(zip(outs, returned)):
        if not _eligible(path, value, ins, block):
            continue
        r = first.get(value, j)
        if positions[value] - (r != j) != 1 or r in bound:
            continue
        bound[r] = ins.index(path[6:])
        if r != j:
            dropped.add(j)
    if not bound:
        return
    keep = [i for i in range(len(outs)) if i not in dropped]
    new_index = {old: new for new, old in enumerate(keep)}
    if dropped:
        merged = [[outs[j][6:], new_index[first[returned[j]]]] for j in sorted(dropped)]
        set_results(fn, [returned[i] for i in keep], [outs[i] for i in keep])
        fn.attributes[STORES] = ir.ArrayAttr.get([
            ir.ArrayAttr.get([ir.StringAttr.get(p), _index(r)]) for p, r in merged])
    storage_type = ir.Type.parse("!hal.buffer_view")
    arg_attrs = (list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes
                 else [ir.DictAttr.get({})] * len(block.arguments))
    for r in bound:
        block.add_argument(storage_type, fn.location)
        arg_attrs.append(ir.DictAttr.get({_OUTPUT_ATTR: _index(new_index[r])}))
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], list(fn.type.results)))
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
    fn.attributes[STORAGE] = ir.ArrayAttr.get([
        ir.ArrayAttr.get([_index(new_index[r]), _index(k)]) for r, k in bound.items()])


def _eligible(path: str, value: ir.Value, ins: list[str], block: ir.Block) -> bool:
    """A computed, statically shaped store to a path the call also reads, with the read's type."""
    if not path.startswith("store:") or path[6:] not in ins or isinstance(value.owner, ir.Block):
        return False
    t = value.type
    return (is_tensor(t) and ir.RankedTensorType(t).has_static_shape
            and t == block.arguments[ins.index(path[6:])].type)


def _index(i: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IndexType.get(), i)
