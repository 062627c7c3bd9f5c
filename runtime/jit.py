"""From a call to a runnable variant: graph generation, the pass pipeline, IREE.

In two steps: `prepare_variant`, on the caller's thread, reads the call (graph
generation), looks the generated module up in the disk cache
(runtime/lowered_cache.py) and otherwise lowers it (`lower`: verification, the
layout check, the passes); `PreparedVariant.build` compiles it with IREE
(unless cached) and loads it, on the caller's thread or on the compile thread
(pyfront/compile_thread.py; `Config.wait_for_compile` chooses). A large module
whose variant builds on the compile thread is lowered there instead, by
`build`, in the preparation worker (runtime/preparation_worker.py).

The pipeline is `config.passes` (checked by passes.pipeline.check_pipeline) or
the default JIT_PIPELINE. With PYFRONT_DUMP_DIR set, the IR of every compiled
variant is written after each stage: `<dir>/<function>/<n>-<key>/00-pyfront.mlir`
(the graph generator's output), then `01-<first pass>.mlir`, ... one file per
pass, numbered in pipeline order (n counts compilations in this process).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pyfront.dialects import verify_module
from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives import approximate_dtype
from pyfront.passes import JIT_PIPELINE, run_passes
from pyfront.passes.funcs import functions, input_paths, output_paths, return_op
from pyfront.runtime.iree_backend import (NOT_IN_PLACE, BackendRestriction, CompileResult, CompileTimeout,
                                          InPlaceInputs, LoadedModule, cached_vmfb, compile_vmfb, get_backend)
from pyfront.passes.bind_result_storage import STORAGE, STORES
from pyfront.passes.guard_fp_events import PER_OP as FP_CHECKS_PER_OP
from pyfront.passes.opaque_constants import BACKEND
from pyfront.passes.unroll import budget as unroll_budget
from pyfront.passes.hoist_entry_guards import ENTRY_GUARDS
from pyfront.runtime import lowered_cache, preparation_worker
from pyfront.runtime.results import Output, leaves
from pyfront.runtime.variant import GuardInfo, Variant

from pyfront import layout, logs
from pyfront.config import Config
from pyfront.errors import Definition, Unsupported
from pyfront.graphgen import generate
from pyfront.guards import ShapeGuard
from pyfront.specialize import describe_key


def prepare_variant(fn, key: Any, args: tuple, kwargs: dict, config: Config, profile,
                    relaxed: dict | None = None, fp_checks_per_op: bool = False,
                    background: bool = False) -> PreparedVariant:
    """Everything of compiling `fn` for this call that reads the call: graph generation, then the disk-cache
    lookups; `build()` does the rest. Raises `Unsupported` if it cannot compile.

    The generated module is lowered (`lower`) here, or, with `background` (the variant will be built
    on the compile thread) and a module of WORKER_MIN_LINES or more, by `build()` in the preparation
    worker (runtime/preparation_worker.py; unless it is turned off), unless the disk cache holds it
    lowered. `relaxed` maps
    argument positions to their relaxation (specialize.spec_of); `fp_checks_per_op` selects
    guard-fp-events' exact per-op checks.
    """
    start = time.perf_counter()
    graph = generate(fn, args, kwargs, profile, relaxed, config.max_graph_nodes)
    copied = _copied_outputs(graph)
    passes = [p for p in config.passes or JIT_PIPELINE if p != "bind-result-storage" or _reuses_storage(config)]
    lowering = Lowering("", graph.func_name, Definition.of(fn), passes, sorted(copied), unroll_budget())
    with graph.context:
        if fp_checks_per_op:
            graph.module.operation.attributes[FP_CHECKS_PER_OP] = ir.UnitAttr.get()
        graph.module.operation.attributes[BACKEND] = ir.StringAttr.get(config.backend)
        dump = _dumper(fn, key)
        if dump is not None:  # each pass's output: not from the cache
            record = lower(graph.module, lowering, dump)
        else:
            lowering.module_text = graph.module.operation.get_asm(enable_debug_info=True)
            lowering.cache_key, record = lowered_cache.lookup(lowering.module_text, lowering.parts)
            in_worker = (background and lowering.module_text.count("\n") >= WORKER_MIN_LINES
                         and preparation_worker.enabled())
            if record is None and not in_worker:
                record = lowered_cache.store(lowering.cache_key, lower(graph.module, lowering))
    del graph.module
    fields = dict(
        fn=fn, key=key, func_name=graph.func_name, result_tree=graph.result, identity_guards=graph.identity_guards,
        state_guards=graph.state_guards, effects=graph.effects, commits=graph.commits, appends=graph.appends,
        mutations=graph.mutations, device_state=config.device_state, fp_checks_per_op=fp_checks_per_op,
        draws=graph.draws, draw_taken=graph.draw_taken, inlined_frames=graph.inlined_frames,
    )
    prepared = PreparedVariant(fn, key, config, fields, lowering if record is None else None,
                               time.perf_counter() - start)
    if record is not None:
        prepared.take(record)
    return prepared


# The size of a generated module (lines of its text, about one op each) from which a variant built
# in the background is lowered in the preparation worker: lowering takes ~1.7 ms per line (a 13-line
# module 0.05 s, model_gan's 546 lines 0.9 s), and the worker's answer ~1.6 s after it starts.
WORKER_MIN_LINES = 100


@dataclass
class Lowering:
    """What lowering a generated module reads (`lower`): plain values, sent to the preparation worker."""

    module_text: str  # printed with its locations (they name the guard sites)
    func_name: str
    definition: Definition  # of the compiled function: where a layout error is reported
    passes: list[str]
    copied: list[int]  # results only copied into the caller's arrays
    unroll_budget: int  # passes/unroll.py's setting in the caller's process
    cache_key: str | None = None  # in lowered_cache, if the disk cache is on

    @property
    def parts(self) -> tuple[str, ...]:
        """What, besides the module, the record depends on (lowered_cache's key)."""
        return "\0".join(self.passes), " ".join(map(str, self.copied))


def lower(module: ir.Module, lowering: Lowering, dump=None) -> dict:
    """What a variant takes from the module graph generation made, as JSON values (runtime/lowered_cache.py):
    the module verified, its results' layout checked, lowered by the passes and printed for IREE.
    Reads only `module` and `lowering` (the module is lowered in place)."""
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


@dataclass
class PreparedVariant:
    """A variant whose module is generated, and lowered unless `lowering` says what is left to lower;
    not yet compiled by IREE (unless `cached`)."""

    fn: Any
    key: Any
    config: Config
    fields: dict  # the Variant's fields that graph generation (and `take`, lowering) determined
    lowering: Lowering | None  # the module still to lower, in the preparation worker; None once lowered
    seconds: float  # spent preparing
    lowered: str = ""  # the module IREE compiles
    in_place: InPlaceInputs = NOT_IN_PLACE  # what IREE writes into, for the module's function
    cached: CompileResult | None = None  # the disk cache's module, if it held one
    in_background: bool = False  # built on the compile thread: IREE's compiler yields the CPU to the caller

    def take(self, record: dict) -> None:
        """Take in the lowered module's record (`lower`), and look it up in the disk cache."""
        # Guards hoisted to the host keep their place among the graph's guards
        # (after the flagged ones), so explain and relaxation treat them alike.
        guards = [GuardInfo(*g) for g in record["guards"]]
        hoisted = [(GuardInfo(kind, site, reason, where="hoisted to the entry check"),
                    ShapeGuard(json.loads(expr), kind, site, reason))
                   for kind, site, reason, expr in record["hoisted"]]
        guards += [info for info, _ in hoisted]
        approximate = record["approximate_dtype"]
        self.fields.update(
            input_paths=record["input_paths"], output_paths=record["output_paths"], graph_guards=guards,
            pyfront_ir=record["pyfront_ir"], hoisted_guards=hoisted, storage=record["storage"],
            merged_stores=record["merged_stores"],
            approximate_dtype=None if approximate is None else np.dtype(approximate),
            relayouts=tuple((n, tuple(permutation)) for n, permutation in record["relayouts"]),
        )
        self.in_place = InPlaceInputs(frozenset(record["written"]), tuple(map(tuple, record["returned"])))
        self.lowered = record["lowered"]
        try:
            self.cached = cached_vmfb(self.lowered, self.config.backend)
        except BackendRestriction as e:  # the reason is ours, not IREE's
            raise _unsupported(self.fn, f"{self.fn.__qualname__}: {e}") from None

    def build(self) -> Variant:
        """Lower the module (if left to do), compile it (unless cached) and load it: the runnable variant.
        Reads nothing of the call or of Python state, so it may run on another thread
        (pyfront/compile_thread.py)."""
        fn, config, start = self.fn, self.config, time.perf_counter()
        if self.lowering is not None:
            lowering, self.lowering = self.lowering, None
            self.take(lowered_cache.store(lowering.cache_key, preparation_worker.lower(lowering)))
        compiled = self.cached
        if compiled is None:
            try:
                compiled = compile_vmfb(self.lowered, config.backend, config.compile_timeout,
                                        BACKGROUND_NICENESS if self.in_background else 0)
            except CompileTimeout as e:  # the reason is ours, not IREE's
                raise _unsupported(fn, f"{fn.__qualname__}: {e}") from None
            except Exception as e:  # noqa: BLE001 - a compiler failure must never fail the user's call
                first = next((line for line in str(e).splitlines() if "error" in line), str(e)[:200])
                raise _unsupported(fn, f"IREE could not compile {fn.__qualname__}: {first.strip()}") from None
        elif logs.cache_log.isEnabledFor(logs.INFO):
            logs.cache_log.info("%s %s: compiled module read from the disk cache in %.3fs (%s)",
                                fn.__qualname__, describe_key(self.key), compiled.seconds, config.backend)
        try:
            invoke = LoadedModule(compiled.vmfb, config.backend).function(self.fields["func_name"], self.in_place)
        except IndexError as e:  # IREE's runtime refuses the module it compiled
            # (IREE says it two ways: when a command buffer binds, when an executable loads.)
            bindings = re.search(r"binding count \d+ > \d+|dispatch requiring \d+ bindings exceeds limit of \d+", str(e))
            if bindings is None:
                raise
            raise _unsupported(fn, f"{fn.__qualname__}: IREE 3.13 formed a dispatch of more buffers than its runtime "
                                   f"binds ({bindings.group(0)}); bound-dispatch-inputs did not prevent it "
                                   "(see passes/bound_dispatch_inputs.py)") from None
        return Variant(invoke=invoke, compile_seconds=self.seconds + time.perf_counter() - start,
                       cache_hit=compiled.cache_hit, **self.fields)


# On a machine without an idle core, a compile in the background and the calls that run in
# the interpreter meanwhile compete: the calls come first, but the compile must still make
# progress when the caller keeps every core busy (multi-threaded BLAS): at nice 5 it gets a
# quarter of a contended core (nice 15 got 3%, and compiles starved under a busy test suite).
# Measured (2 cores, a fresh 1,000-step loop of bench/programs/model_reinforce.py): 2.1 s at
# equal priority, 1.9 s at nice 5, 1.76 s at nice 15 (NumPy alone: 0.87 s).
BACKGROUND_NICENESS = 5


def _unsupported(fn, reason: str) -> Unsupported:
    """Unsupported for a reason found compiling `fn` as a whole (reported at its `def` line)."""
    return Definition.of(fn).unsupported(reason)


def _copied_outputs(graph) -> frozenset:
    """Outputs only copied into the caller's arrays (written inputs): their layout is the caller's."""
    def outputs(trees) -> set:
        return {x.index for tree in trees for x in leaves(tree) if isinstance(x, Output)}

    kept = outputs([graph.result, *(t for _, t in graph.commits), *(t for _, t in graph.appends),
                    *(t for t, _ in graph.effects)])
    return frozenset(outputs(t for _, t in graph.mutations) - kept)


def _reuses_storage(config: Config) -> bool:
    """Whether the runtime can hand `bind-result-storage`'s arguments a displaced state buffer.

    Only device-resident state (CPU backends) leaves displaced values in
    device buffers; elsewhere every storage would be a fresh allocation, no
    better than IREE's own, so the pass is left out of the pipeline.
    """
    return config.device_state and get_backend(config.backend).shares_host_memory


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


_compilations = itertools.count()


def _dumper(fn, key: Any):
    """The `after_each` hook writing one file per stage under PYFRONT_DUMP_DIR (the graph
    generator's module as stage -1, 00-pyfront.mlir), or None."""
    root = os.environ.get("PYFRONT_DUMP_DIR")
    if not root:
        return None
    name = re.sub(r"[^\w.-]+", "_", describe_key(key)).strip("_")[:80]
    folder = Path(root) / re.sub(r"[^\w.-]+", "_", fn.__qualname__) / f"{next(_compilations)}-{name}"
    folder.mkdir(parents=True, exist_ok=True)

    def dump(i: int, pass_name: str, module) -> None:
        (folder / f"{i + 1:02d}-{pass_name}.mlir").write_text(str(module))

    return dump

