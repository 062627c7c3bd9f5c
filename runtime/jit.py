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
from pyfront.dialects.mlir import ir, walk
from pyfront.dialects.primitives.base import IGNORED_EVENTS
from pyfront.dialects.types import is_tensor, tensor_dtype
from pyfront.passes import JIT_PIPELINE, settings
from pyfront.passes.guard_fp_events import PER_OP as FP_CHECKS_PER_OP
from pyfront.passes.opaque_constants import BACKEND
from pyfront.passes.specialize import constant_array
from pyfront.runtime import lowered_cache, preparation_worker
from pyfront.runtime.compiler_process import BACKGROUND_NICENESS
from pyfront.runtime.iree_backend import (NOT_IN_PLACE, BackendRestriction, CompileResult, CompileTimeout,
                                          InPlaceInputs, LoadedModule, cached_vmfb, compile_vmfb, get_backend)
from pyfront.runtime.lowering import Lowering, lower
from pyfront.runtime.results import Output, leaves
from pyfront.runtime.variant import GuardInfo, Variant

from pyfront import logs
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
    worker if it is ready (runtime/preparation_worker.py), unless the disk cache holds it lowered.
    `relaxed` maps argument positions to their relaxation (specialize.spec_of); `fp_checks_per_op`
    selects guard-fp-events' exact per-op checks.
    """
    start = time.perf_counter()
    graph = generate(fn, args, kwargs, profile, relaxed, config.max_graph_nodes)
    copied = _copied_outputs(graph)
    passes = [p for p in config.passes or JIT_PIPELINE if p != "bind-result-storage" or _reuses_storage(config)]
    with graph.context:
        if fp_checks_per_op:
            graph.module.operation.attributes[FP_CHECKS_PER_OP] = ir.UnitAttr.get()
        graph.module.operation.attributes[BACKEND] = ir.StringAttr.get(config.backend)
        quiet_nonfinite = _makes_quiet_nonfinite(graph.module.operation)
        dump = _dumper(fn, key)  # each pass's output: then nothing comes from or goes to the disk cache
        text = "" if dump is not None else graph.module.operation.get_asm(enable_debug_info=True)
        lowering = Lowering(text, graph.func_name, Definition.of(fn), passes, sorted(copied), settings.current())
        if dump is not None:
            record = lower(graph.module, lowering, dump)
        else:
            lowering.cache_key, record = lowered_cache.lookup(text, lowering.parts)
            if record is None and not (background and text.count("\n") >= WORKER_MIN_LINES
                                       and preparation_worker.ready()):
                record = lowered_cache.store(lowering.cache_key, lower(graph.module, lowering))
    del graph.module
    fields = dict(
        fn=fn, key=key, func_name=graph.func_name, result_tree=graph.result, identity_guards=graph.identity_guards,
        state_guards=graph.state_guards, effects=graph.effects, commits=graph.commits, appends=graph.appends,
        mutations=graph.mutations, device_state=config.device_state, fp_checks_per_op=fp_checks_per_op,
        quiet_nonfinite=quiet_nonfinite,
        draws=graph.draws, draw_taken=graph.draw_taken, inlined_frames=graph.inlined_frames,
    )
    prepared = PreparedVariant(fn, key, config, fields, lowering if record is None else None,
                               time.perf_counter() - start)
    if record is not None:
        prepared.take(record)
    return prepared


def _makes_quiet_nonfinite(module: ir.Operation) -> bool:
    """Whether the generated `module` can make a NaN or inf that NumPy reports no event for: a float
    constant holding one (a `-np.inf` mask value), or an op under `np.errstate` ignoring some events."""
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        value = op.results[0] if op.name == "arith.constant" else None
        if IGNORED_EVENTS in op.attributes or (
                value is not None and is_tensor(value.type) and tensor_dtype(value.type).kind == "f"
                and (array := constant_array(value)) is not None and not np.isfinite(array).all()):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    walk(module, visit)
    return bool(found)


# The size of a generated module (lines of its text, about one op each) from which a variant built
# in the background is lowered in the preparation worker: lowering takes ~1.7 ms per line (a 13-line
# module 0.05 s, model_gan's 546 lines 0.9 s), so a smaller one costs the calling thread under ~0.2 s.
WORKER_MIN_LINES = 100


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

