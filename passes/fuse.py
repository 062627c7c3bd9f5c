"""fuse: producer/consumer fusion of linalg ops on tensors (see the pass function)."""

from pyfront.passes.registry import register_pass

register_pass("fuse", "Fuse elementwise linalg producers into their consumers.",
              upstream="func.func(linalg-fuse-elementwise-ops),canonicalize,cse")
