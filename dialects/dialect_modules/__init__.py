"""Python modules for the MLIR bindings' dialect lookup, one per namespace of pyfront's own ops.

The bindings import `<prefix>.<namespace>` for an op's dialect whenever they wrap
an op of a namespace they have not loaded, and remember only a success: every
pyfront op (an unregistered dialect) made them try `iree.compiler.dialects.pyfront`
again, 6,000 failed imports and 30% of preparing a GAN's training step.
dialects/mlir.py adds this package to the search prefixes, so the lookup succeeds
once per namespace. The modules define nothing: pyfront's ops keep the generic
`OpView`.
"""
