"""The `pyfront` namespace (dialects/core.py) for the MLIR bindings' lookup (see __init__)."""
