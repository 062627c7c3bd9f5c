"""The canonical pipeline the JIT runs between graph generation and IREE."""

JIT_PIPELINE: tuple[str, ...] = (
    "lower-deferred-state",
    "lower-guards",
    "lower-to-linalg",
    "canonicalize",
    "cse",
)
