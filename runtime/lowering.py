"""Lowering a generated module: what a variant takes from it, as plain values.

`lower(module, lowering)` verifies the module the graph generator made, checks
its results' memory layout, runs the pass pipeline on it and reads off the
lowered module what the variant needs (the record: JSON values, which
runtime/lowered_cache.py stores). It reads only the module and the `Lowering`,
plain values that travel to the preparation worker (runtime/preparation_worker.py),
which runs it in another process. This module imports only what lowering needs
(no graph generation), so that the worker starts quickly.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyfront.dialects import verify_module
from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives import approximate_dtype
from pyfront.passes import run_passes
from pyfront.passes.bind_result_storage import STORAGE, STORES
from pyfront.passes.funcs import functions, input_paths, output_paths, return_op
from pyfront.passes.hoist_entry_guards import ENTRY_GUARDS
from pyfront.runtime.iree_backend import InPlaceInputs

from pyfront import layout
from pyfront.errors import Definition


@dataclass
class Lowering:
    """What lowering a generated module reads (`lower`): plain values, sent to the preparation worker."""

    module_text: str  # printed with its locations (they name the guard sites)
    func_name: str
    definition: Definition  # of the compiled function: where a layout error is reported
    passes: list[str]
    copied: list[int]  # results only copied into the caller's arrays
    settings: dict[str, int]  # passes/settings.py's values in the caller's process
    cache_key: str | None = None  # in lowered_cache, if the disk cache is on

    @property
    def parts(self) -> tuple[str, ...]:
        """What, besides the module, the record depends on (lowered_cache's key)."""
        return "\0".join(self.passes), " ".join(map(str, self.copied))


def lower(module: ir.Module, lowering: Lowering, dump=None) -> dict:
    """What a variant takes from the module graph generation made, as JSON values (runtime/lowered_cache.py):
    the module verified, its results' layout checked, lowered by the passes and printed for IREE.
    Reads only `module` and `lowering` (the module is lowered in place); `dump(i, pass_name, module)`,
    if given, sees the generated module (i = -1) and the module after each pass (PYFRONT_DUMP_DIR)."""
    verify_module(module)
    relayouts = layout.check_results(module, lowering.definition, frozenset(lowering.copied), relayout=True)
    pyfront_ir = str(module)
    approximate = approximate_dtype(module.operation)  # (the passes lower the module in place)
    if dump is not None:
        dump(-1, "pyfront", module)
    run_passes(module, lowering.passes, dump)
    (f,) = [f for f in functions(module.operation) if f.name.value == lowering.func_name]
    in_place = in_place_inputs(f, len(input_paths(f)))
    return {
        "input_paths": input_paths(f), "output_paths": output_paths(f),
        "storage": [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(pair)] for pair in _attr_list(f, STORAGE)],
        "merged_stores": {ir.StringAttr(p).value: ir.IntegerAttr(i).value
                          for p, i in map(ir.ArrayAttr, _attr_list(f, STORES))},
        "guards": _string_lists(f, "pyfront.guards"), "hoisted": _string_lists(f, ENTRY_GUARDS),
        "written": sorted(in_place.written), "returned": in_place.returned,
        "relayouts": sorted(relayouts.items()), "pyfront_ir": pyfront_ir,
        "approximate_dtype": None if approximate is None else str(approximate),
        "lowered": iree_text(module),
    }


def iree_text(module: ir.Module) -> str:
    """`module` as IREE compiles it, without pyfront's own attributes (guard sites, state paths).

    They are read before this (into the Variant) and IREE ignores them, but they name source
    files and lines: without them the same code at another path or line (a notebook cell run
    again, a test's temporary file) is the same module, one entry of IREE's disk cache.
    """
    for op in [module.operation, *functions(module.operation)]:
        for name in [n for n in op.attributes if n.startswith("pyfront.")]:
            del op.attributes[name]
    return str(module)


# IREE 3.13 writes into a function argument's buffer in place where the argument is the
# destination of an insert (`y = x.copy(); y[::2] = 1` is `tensor.insert_slice ... into %x`), even
# when the argument is also returned or its buffer is the caller's own array (a device-resident
# input): tests/iree_repro/returned_argument_updated.mlir. The callable IREE's runtime layer
# makes uploads such inputs and makes such returned arguments from the inputs (InPlaceInputs).
_DESTINATION_OPERANDS = {"tensor.insert_slice": 1, "tensor.insert": 1, "tensor.parallel_insert_slice": 1,
                         "tensor.scatter": 1}


def in_place_inputs(f, n_inputs: int) -> InPlaceInputs:
    """The inputs of `f` (lowered for IREE) that are the destination of an op IREE may apply in
    place: an insert's destination, a linalg (or IREE linalg_ext) op's `outs`; and the results
    that are such an input returned as it came in."""
    entry, written = f.body.blocks[0], set()

    def argument(v) -> int | None:
        return ir.BlockArgument(v).arg_number if isinstance(v.owner, ir.Block) and v.owner == entry else None

    def visit(op: ir.Operation) -> ir.WalkResult:
        op = op.operation
        if op.name in _DESTINATION_OPERANDS:
            destinations = [op.operands[_DESTINATION_OPERANDS[op.name]]]
        elif op.name.startswith(("linalg.", "iree_linalg_ext.")) and "operandSegmentSizes" in op.attributes:
            n_in, n_out = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[:2]
            destinations = list(op.operands)[n_in:n_in + n_out]
        else:
            destinations = []
        written.update(k for k in map(argument, destinations) if k is not None and k < n_inputs)
        return ir.WalkResult.ADVANCE  # (storage arguments, past the inputs, are written on purpose)

    walk(f.operation, visit)
    returned = tuple((i, k) for i, k in enumerate(map(argument, return_op(f).operands)) if k in written)
    return InPlaceInputs(frozenset(written), returned)


def _attr_list(f, name: str) -> list:
    return list(ir.ArrayAttr(f.attributes[name])) if name in f.attributes else []


def _string_lists(f, name: str) -> list[list[str]]:
    return [[ir.StringAttr(s).value for s in ir.ArrayAttr(g)] for g in _attr_list(f, name)]
