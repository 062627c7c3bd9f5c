"""Errors of the front end. `Unsupported` never reaches users of `pyfront.compile`:
the call runs in the interpreter and `pyfront.explain` reports the reason."""

from __future__ import annotations

import ast
import itertools
import types
from typing import NamedTuple

# A function carrying this attribute (its value says why) is never compiled into a caller: the graph
# generator leaves the call to the interpreter, with that reason in `explain` (pyfront.distributed's
# collectives, which must talk to the other MPI ranks exactly once per call).
INTERPRETED_ATTRIBUTE = "__pyfront_interpreted__"


class Definition(NamedTuple):
    """Where a function is defined: what an error found compiling it as a whole names.

    A plain value (no code object), so that it travels to the preparation worker
    (runtime/preparation_worker.py) and back."""

    qualname: str
    filename: str
    lineno: int

    @classmethod
    def of(cls, fn: types.FunctionType) -> Definition:
        return cls(fn.__qualname__, fn.__code__.co_filename, fn.__code__.co_firstlineno)

    def unsupported(self, reason: str) -> Unsupported:
        """Unsupported for `reason`, reported at the `def` line."""
        error = Unsupported(reason, filename=self.filename)
        error.lineno = self.lineno
        return error


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
        # "helper line 11", "forward line 30", ...: where an inlined callee was called from.
        self.chain: tuple[str, ...] = ()
        # The other blockers of the same compile attempt, in program order (graphgen's survey).
        self.also: list[Unsupported] = []
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
        if len(self.chain) > 1:
            return f"{self.site}: {self.reason} (in {describe_chain(self.chain)})"
        return f"{self.site}: {self.reason}"


def describe_chain(chain: tuple[str, ...]) -> str:
    """"helper line 11, called from forward line 30"; a recursion's repeated call site once, counted."""
    runs = [(site, len(list(repeats))) for site, repeats in itertools.groupby(chain)]
    return ", called from ".join(site if n == 1 else f"{site} ({n} times)" for site, n in runs)


class BranchTypeConflict(Unsupported):
    """A variable would have another Python type, dtype or shape depending on the branch taken."""


class Poisoned(Unsupported):
    """A read of what an earlier unsupported statement would have computed (graphgen's survey):
    the statement reading it is skipped without a blocker of its own."""



class StrictModeError(RuntimeError):
    """A call of a function compiled with `strict=True` (PYFRONT_STRICT=1) would have run in the
    interpreter. `reason` says why; `blockers` (report.Blocker) lists every construct the compile
    attempts found, with its site, source line, reason and hint."""

    def __init__(self, function: str, reason: str, blockers: list):
        self.function = function
        self.reason = reason
        self.blockers = blockers
        lines = [f"{function} would run in the interpreter (strict mode): {reason}"]
        if blockers:
            lines.append(f"{len(blockers)} blocker(s):")
            lines.extend(f"  {b}" for b in blockers)
        super().__init__("\n".join(lines))
