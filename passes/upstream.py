"""Upstream MLIR passes that pyfront pipelines use, registered under their own names."""

from pyfront.passes.registry import register_pass

register_pass("canonicalize", "Upstream canonicalization (folding, simplification).", upstream="canonicalize")
register_pass("cse", "Upstream common subexpression elimination.", upstream="cse")
register_pass(
    "linalg-fuse-elementwise-ops",
    "Upstream fusion of producer/consumer elementwise linalg ops.",
    upstream="func.func(linalg-fuse-elementwise-ops)",
)
register_pass(
    "one-shot-bufferize",
    "Upstream one-shot bufferization to memrefs (for inspecting the IR at buffer level).",
    upstream="one-shot-bufferize{bufferize-function-boundaries}",
)
