"""Errors of the front end. `Unsupported` never reaches users of `pyfront.compile`:
the call runs in the interpreter and `pyfront.explain` reports the reason."""

from __future__ import annotations

import ast
import types


class Unsupported(Exception):
    """A construct the compiler cannot (yet) compile faithfully, with the user's file and line."""

    def __init__(self, reason: str, node: ast.AST | None = None, filename: str | None = None,
                 whole_code: types.CodeType | None = None):
        self.reason = reason
        self.filename = filename
        # Set when `whole_code` cannot compile whatever its arguments (no source, a generator):
        # a compiled function of that code stops trying (api.CompiledFunction._compile).
        self.whole_code = whole_code
        self.lineno = getattr(node, "lineno", None)
        super().__init__(reason)

    def located(self, node: ast.AST | None, filename: str) -> Unsupported:
        """Attach the innermost user location known when the error propagates."""
        if self.lineno is None and node is not None:
            self.lineno = getattr(node, "lineno", None)
        if self.filename is None:
            self.filename = filename
        return self

    @property
    def site(self) -> str:
        return f"{self.filename}:{self.lineno}" if self.filename else "<unknown>"

    def __str__(self) -> str:
        return f"{self.site}: {self.reason}"
