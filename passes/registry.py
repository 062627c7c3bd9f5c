"""The pass registry: every pass by name, for pyfront-opt and the JIT pipeline.

A pass is either an upstream MLIR pass (run by its textual pipeline name) or a
Python function over the module, run inside the same `PassManager` through the
bindings' external-pass support. An exception raised by a Python pass fails the
pipeline and is re-raised to the caller unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyfront.dialects.mlir import ir, passmanager
from pyfront.interrupts import raise_unchained


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str
    run: Callable[[ir.Operation], None] | None = None  # Python pass over the module op
    upstream: str | None = None  # textual pipeline element of an upstream pass


_PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, summary: str, *, upstream: str | None = None):
    """Register a Python pass (as a decorator) or an upstream one (with `upstream=`)."""
    if upstream is not None:
        _PASSES[name] = PassInfo(name, summary, upstream=upstream)
        return None

    def wrap(fn: Callable[[ir.Operation], None]):
        _PASSES[name] = PassInfo(name, summary, run=fn)
        return fn

    return wrap


def get_pass(name: str) -> PassInfo:
    _load_all()
    if name not in _PASSES:
        raise KeyError(f"unknown pass '{name}' (known: {', '.join(sorted(_PASSES))})")
    return _PASSES[name]


def all_passes() -> list[PassInfo]:
    _load_all()
    return sorted(_PASSES.values(), key=lambda p: p.name)


def _load_all() -> None:
    # Importing the pass modules registers them.
    from pyfront.passes import (  # noqa: F401
        bind_result_storage,
        bound_dispatch_inputs,
        differentiate,
        fuse,
        guard_fp_events,
        guard_subnormal_inputs,
        hoist_entry_guards,
        isolate_loop_scalars,
        lower_deferred_state,
        lower_guards,
        lower_to_linalg,
        materialize_splats,
        opaque_constants,
        refine_static_dims,
        specialize,
        unroll,
        upstream,
    )


def run_passes(module: ir.Module, names: list[str],
               after_each: Callable[[int, str, ir.Module], None] | None = None) -> None:
    """Run the named passes, in order, in one PassManager on `module`.

    With `after_each`, each pass runs in a PassManager of its own and
    `after_each(i, name, module)` sees the module after the i-th pass (IR dumps).
    """
    if after_each is not None:
        for i, name in enumerate(names):
            run_passes(module, [name])
            after_each(i, name, module)
        return
    pm = passmanager.PassManager("builtin.module", context=module.context)
    errors: list[BaseException] = []
    for name in names:
        info = get_pass(name)
        if info.upstream is not None:
            pm.add(info.upstream)
        else:
            pm.add(_external(info, errors), name=info.name, argument=info.name, description=info.summary)
    try:
        pm.run(module.operation)
    except ir.MLIRError:
        if errors:  # as the pass raised it (e.g. a signal handler's exception, which is the caller's)
            raise_unchained(errors[0])
        raise


def _external(info: PassInfo, errors: list[BaseException]):
    def run(op: ir.Operation, pass_) -> None:
        try:
            info.run(op)
        except Exception as e:  # noqa: BLE001 - re-raised by run_passes after pm.run
            errors.append(e)
            pass_.signal_pass_failure()

    return run
