"""`with np.errstate(...)` in compiled code, as a mixin of the graph generator.

Compiled code does not warn: `guard-fp-events` checks that no float op
raised an IEEE event NumPy would report, and re-runs a call that raised one
in the interpreter, which reports it as NumPy's state says. Inside `with
np.errstate(divide="ignore")` NumPy reports no divide-by-zero, so the ops
built in the block carry the events the block ignores
(`dialects/primitives/base.py`, `ignoring_events`) and the pass does not
check those (passes/guard_fp_events.py): `np.log(p)` of a zero is -inf, no
deopt. Any other setting ("warn", "raise", "call", "print", "log") leaves the
events checked, so the interpreter reports them as that setting says. What
the block ignores nests like NumPy's state (an inner block's `None` keeps the
outer setting) and covers the calls the block makes (inlined helpers).

Refused (the call runs in the interpreter): `under` other than "ignore"
(compiled code does not see underflow), `call=`, `as`, several context
managers in one `with`, and any other context manager.
"""

from __future__ import annotations

import ast

import numpy as np

from pyfront.dialects.primitives.base import events_ignored_here, ignoring_events
from pyfront.errors import Unsupported
from pyfront.values import Known

_EVENTS = {"divide": "divide", "over": "overflow", "invalid": "invalid"}  # np.errstate's names -> ours
_SETTINGS = {"ignore", "warn", "raise", "call", "print", "log"}


class ErrstateMixin:
    def visit_With(self, node: ast.With) -> None:
        if len(node.items) != 1 or not self._is_errstate(node.items[0].context_expr):
            raise Unsupported("a with block is not supported by the compiler yet (only `with np.errstate(...)`)", node)
        item = node.items[0]
        if item.optional_vars is not None:
            raise Unsupported("`with np.errstate(...) as name` is not supported yet", node)
        call = item.context_expr
        if call.args:
            raise Unsupported("np.errstate takes keyword arguments only (NumPy raises TypeError)", node)
        settings = {k.arg: self.visit(k.value) for k in call.keywords}
        if None in settings or not all(isinstance(v, Known) for v in settings.values()):
            raise Unsupported("np.errstate with settings computed at run time is not supported yet", node)
        with ignoring_events(self._ignored_by({k: v.value for k, v in settings.items()}, node)):
            self._visit_body(node.body)

    def _is_errstate(self, expr: ast.expr) -> bool:
        if not isinstance(expr, ast.Call):
            return False
        callee = self.visit(expr.func)
        return isinstance(callee, Known) and callee.value is np.errstate

    @staticmethod
    def _ignored_by(settings: dict, node: ast.AST) -> frozenset:
        """The events ignored inside the block: the enclosing ones, updated as NumPy applies `settings`."""
        unknown = set(settings) - {"all", "under", "call", *_EVENTS}
        if unknown:
            raise Unsupported(f"np.errstate got unexpected keyword {sorted(unknown)[0]!r} (NumPy raises TypeError)", node)
        if settings.get("call") is not None:
            raise Unsupported("np.errstate(call=...) is not supported yet", node)
        values = {name: settings.get(name, settings.get("all")) for name in (*_EVENTS, "under")}
        if any(v is not None and v not in _SETTINGS for v in values.values()):
            raise Unsupported(f"np.errstate: invalid setting in {settings} (NumPy raises ValueError)", node)
        if values["under"] not in (None, "ignore"):
            raise Unsupported("np.errstate(under=...) other than 'ignore': compiled code does not see underflow", node)
        ignored = set(events_ignored_here())
        for name, event in _EVENTS.items():
            if values[name] == "ignore":
                ignored.add(event)
            elif values[name] is not None:
                ignored.discard(event)
        return frozenset(ignored)
