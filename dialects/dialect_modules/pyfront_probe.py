"""The `pyfront_probe` namespace (passes/materialize_splats.py) for the MLIR bindings' lookup."""
