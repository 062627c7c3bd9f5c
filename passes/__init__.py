"""Passes over the pyfront dialect and the pipelines built from them (see registry.py)."""

from pyfront.passes.pipeline import JIT_PIPELINE
from pyfront.passes.registry import PassInfo, all_passes, get_pass, run_passes

__all__ = ["JIT_PIPELINE", "PassInfo", "all_passes", "get_pass", "run_passes"]
