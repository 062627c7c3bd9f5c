"""Deferred warnings: a `warnings.warn` of compiled code, issued as CPython's `warnings.warn` would.

The graph generator (pyfront/graphgen.py, `_warn`) turns `warnings.warn(message, category,
stacklevel)` with compile-time arguments into a `DeferredWarning`. The frame the warning is
attributed to (`stacklevel` counted through the inlined calls, e.g. the caller of NumPy's
deprecated `np.row_stack`) is known when compiling, hence its file, the line CPython reports
for it and its module globals. The variant issues the warning among its prints, in program
order, after every guard held and before it commits state, through `warnings.warn_explicit`
with what `warnings.warn` passes it (the message, category, file, line, the module name from
the globals and their `__warningregistry__`): filters, the "default"/"module"/"once"
registries and `showwarning` (e.g. `catch_warnings(record=True)`) act as in the interpreter.

What cannot be deferred: a filter that turns the warning into an exception ("error") raises
in the interpreter at the warning, after the effects of the code before it, where compiled
code has done nothing yet. `would_raise()` finds that case before anything is issued; the
variant then deopts and the interpreter raises. (A `showwarning` that raises is not foreseen:
its exception leaves the prints before it done and no state committed.)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class DeferredWarning:
    message: str
    category: type[Warning]
    filename: str
    lineno: int
    module_globals: dict  # the attributed frame's globals: its module's name and warning registry
    site: str  # where the compiled code warns, for the deopt report

    def __deepcopy__(self, memo: dict) -> DeferredWarning:
        return self  # it holds a module's globals, which a copy must share

    @property
    def module(self) -> str:
        """The module name `warnings.warn` matches filters against (CPython's setup_context)."""
        name = self.module_globals.get("__name__")
        return name if isinstance(name, str) else "<string>"

    def would_raise(self) -> bool:
        """Whether the first filter that matches (as `warn_explicit` searches them) says "error"."""
        module = self.module
        for action, message, category, module_pattern, lineno in warnings.filters:
            if (_matches(message, self.message) and issubclass(self.category, category)
                    and _matches(module_pattern, module) and lineno in (0, self.lineno)):
                return action == "error"
        return warnings.defaultaction == "error"

    def issue(self) -> None:
        registry = self.module_globals.setdefault("__warningregistry__", {})
        warnings.warn_explicit(self.message, self.category, self.filename, self.lineno, self.module, registry)


def _matches(pattern, text: str) -> bool:
    """A filter's message or module pattern against `text`, as CPython's check_matched: None matches
    everything, a str (the interpreter's own default filters hold '__main__') only itself, a
    compiled regex where it matches at the start."""
    if pattern is None:
        return True
    if type(pattern) is str:
        return pattern == text
    return bool(pattern.match(text))
