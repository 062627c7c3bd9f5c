"""The JIT pipeline between graph generation and IREE, and how a caller changes it.

`JIT_PIPELINE` is the default, in order. `REQUIRED` passes lower what IREE
cannot read (Python state, guards, pyfront array ops), keep the
interpreter's behaviour (`guard-fp-events`: NumPy's floating-point warnings
and errors; `guard-subnormal-inputs`: subnormals IREE's CPU code reads as zero;
`opaque-constants`: -0.0, inf and NaN through Mesa's Vulkan folds) or keep IREE
from miscompiling (`materialize-splats`) or from building modules its runtime cannot load
(`bound-dispatch-inputs`, `isolate-loop-scalars`): a pipeline without one of them is wrong or cannot run, so
`check_pipeline` rejects it. The others (`OPTIONAL`)
only make the program faster and may be left out, e.g. for an ablation:

    Config(passes=without("unroll", "fuse"))
"""

from __future__ import annotations

from collections.abc import Iterable

from pyfront.passes.registry import all_passes

JIT_PIPELINE: tuple[str, ...] = (
    "lower-deferred-state",
    "unroll",
    # After the passes that add primitive ops, before `specialize` folds any away.
    "guard-fp-events",
    # Before `specialize`, whose folding would give arguments' checks constant operands.
    "guard-subnormal-inputs",
    "specialize",
    "hoist-entry-guards",
    # Reads the guards just hoisted: inside the call, what they pin is a constant.
    "refine-static-dims",
    "lower-guards",
    "lower-to-linalg",
    # Right after lowering: IREE 3.13 miscompiles values it proves constant (tests/iree_repro/).
    "materialize-splats",
    "canonicalize",
    "cse",
    # On Vulkan, after the folding IEEE allows: constants Mesa folds as IEEE does not allow, or
    # IREE's SPIR-V conversion fails on.
    "opaque-constants",
    # On the final linalg: IREE 3.13 forms dispatches its runtime refuses to load otherwise.
    "bound-dispatch-inputs",
    # Likewise: IREE 3.13 forms a scalar dispatch in an scf.for body that depends on itself otherwise.
    "isolate-loop-scalars",
    # Last: it adds arguments to the final signature. The JIT leaves it out
    # where the runtime has no displaced state buffer to offer (runtime/jit.py).
    "bind-result-storage",
)

REQUIRED: tuple[str, ...] = ("lower-deferred-state", "guard-fp-events", "guard-subnormal-inputs", "lower-guards",
                             "lower-to-linalg", "materialize-splats", "opaque-constants", "bound-dispatch-inputs",
                             "isolate-loop-scalars")
# `fuse` is not in the default: IREE's own dispatch formation already puts
# elementwise chains and bias + activation into their matmul's dispatch, so
# fuse saves only a dispatch or three (mostly guard-fp-events' checks), and it
# measured slower on a dense layer (passes/fuse.py has the numbers).
OPTIONAL: tuple[str, ...] = tuple(p for p in JIT_PIPELINE if p not in REQUIRED) + ("fuse",)
# With `fuse` after the clean-ups, before the signature's storage arguments.
WITH_FUSION: tuple[str, ...] = (*JIT_PIPELINE[:JIT_PIPELINE.index("cse") + 1], "fuse",
                                *JIT_PIPELINE[JIT_PIPELINE.index("cse") + 1:])

# AOT artifacts check guards only in the graph (their manifest has no host-side
# shape expressions), so export keeps every guard in the graph; their loader
# copies results (no device-resident state), so no storage arguments either.
EXPORT_PIPELINE: tuple[str, ...] = tuple(
    p for p in JIT_PIPELINE if p not in ("hoist-entry-guards", "bind-result-storage"))


def check_pipeline(names: Iterable[str]) -> tuple[str, ...]:
    """`names` as a pipeline tuple; raises ValueError for an unknown or a missing required pass."""
    if isinstance(names, str):
        raise ValueError(f"passes must be a sequence of pass names, not the string {names!r}")
    names = tuple(names)
    known = {p.name for p in all_passes()}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown pass {unknown[0]!r} (known passes: {', '.join(sorted(known))})")
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        raise ValueError(
            f"the pipeline must contain the lowering passes {', '.join(REQUIRED)} "
            f"(missing: {', '.join(missing)}); only {', '.join(OPTIONAL)} can be left out")
    return names


def without(*names: str) -> tuple[str, ...]:
    """The default pipeline plus `fuse`, minus the named optional passes."""
    return check_pipeline(p for p in WITH_FUSION if p not in set(_optional(names)))


def _optional(names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    for n in names:
        if n in REQUIRED:
            raise ValueError(f"{n!r} is a required lowering pass and cannot be left out")
        if n not in OPTIONAL:
            raise ValueError(f"{n!r} is not an optional pass of the JIT pipeline (optional: {', '.join(OPTIONAL)})")
    return names
