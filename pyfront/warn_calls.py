"""`warnings.warn` in compiled code: deferred like `print`, issued by the runtime after every guard held.

Code that warns on every call compiles: user code (`warnings.warn("lr is large")` under a
compile-time condition) and library code the compiler inlines, e.g. NumPy 2's deprecated
aliases (`np.row_stack` warns "`row_stack` alias is deprecated" with stacklevel=2, attributing
the warning to the line of the user's code that called it).

The warning's attribution is resolved here, as CPython's `warnings.warn` resolves it from the
stack: `stacklevel` counts frames outwards from the function that calls `warn`, through the
calls the generator inlined; that frame's code, the line CPython reports for it while it runs
the call (its CALL instruction's line, which 3.11 moves to the method name of a method call
spread over lines) and its function's globals make a `runtime.deferred_warnings.DeferredWarning`
effect, issued in program order with the prints. Refused (the call runs in the interpreter):
a warning inside a branch or loop on computed values (it may be issued any number of times), a
stacklevel that reaches beyond the compiled function (its caller's frame is not known here), and
arguments that are not compile-time values (the message must be a str, the category a Warning
subclass, `source` None).
"""

from __future__ import annotations

import ast
import dis
import inspect
import operator
import types
import warnings

from pyfront.errors import Unsupported
from pyfront.runtime.deferred_warnings import DeferredWarning
from pyfront.runtime.results import Const
from pyfront.values import Known

_WARN = inspect.signature(warnings.warn)


class WarnMixin:
    """Graph-generator support for `warnings.warn` (the generator keeps `call_sites`, one per inlined call)."""

    def _warn(self, args: list, kwargs: dict, node: ast.Call) -> Known:
        if self.hoist_points:
            raise Unsupported("warnings.warn inside a branch or loop on a computed value is not supported yet", node)
        message, category, stacklevel = _constant_arguments(args, kwargs, node)
        level = max(stacklevel, 1)  # CPython: a stacklevel below 1 names the function that warns
        if level > len(self.frames):
            raise Unsupported(f"warnings.warn(stacklevel={stacklevel}) names a frame outside the compiled "
                              f"function (its caller's line is not known when compiling)", node)
        frame = self.frames[-level]
        running = node if level == 1 else self.call_sites[-(level - 1)]
        code = frame.fn.__code__
        warning = DeferredWarning(message, category, code.co_filename, _reported_line(code, running),
                                  frame.fn.__globals__, self._site(node))
        self.effects.append((Const(()), warning))
        return Known(None)


def _constant_arguments(args: list, kwargs: dict, node: ast.Call) -> tuple[str, type, int]:
    """(message, category, stacklevel) of a `warnings.warn` call whose arguments are compile-time values."""
    try:
        bound = _WARN.bind(*args, **kwargs)
    except TypeError as e:
        raise Unsupported(f"warnings.warn: {e}", node) from None
    values = {}
    for name, parameter in _WARN.parameters.items():
        value = bound.arguments.get(name, Known(parameter.default))
        if not isinstance(value, Known):
            raise Unsupported(f"warnings.warn with a computed {name} is not supported", node)
        values[name] = value.value
    message, category = values["message"], values["category"] or UserWarning
    if type(message) is not str:
        raise Unsupported("warnings.warn of a message that is not a str is not supported yet", node)
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise Unsupported(f"warnings.warn: category {category!r} is not a Warning subclass", node)
    if values["source"] is not None:
        raise Unsupported("warnings.warn(source=...) is not supported yet", node)
    try:
        stacklevel = operator.index(values["stacklevel"])
    except TypeError:
        raise Unsupported("warnings.warn: stacklevel is not an integer", node) from None
    return message, category, stacklevel


def _reported_line(code: types.CodeType, call: ast.Call) -> int:
    """The line CPython reports (`f_lineno`) for a frame of `code` while it runs `call`.

    That is the line of the call's CALL instruction, found by the end of its source span (which
    the instruction keeps; 3.11 moves the start of a method call to the method's name).
    """
    end = (call.end_lineno, call.end_col_offset)
    lines = {i.positions.lineno for i in dis.get_instructions(code)
             if i.opname.startswith("CALL") and (i.positions.end_lineno, i.positions.end_col_offset) == end}
    if len(lines) != 1:
        raise Unsupported(f"warnings.warn: the line of the call at {code.co_filename}:{call.lineno} "
                          f"is not known", call)
    return lines.pop()
