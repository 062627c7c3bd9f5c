"""Exceptions that belong to the caller, not to the compiler: raised by a signal handler.

A Python signal handler runs between two bytecodes of whatever the main
thread is doing, so the exception it raises (e.g. a `TimeoutError` from a
`signal.setitimer` watchdog) can surface inside the compiler or inside a
compiled call, where a broad `except Exception` would take it for a compiler
failure ("IREE could not compile", a runtime deopt) and the caller would never
see it. Every such `except` asks `reraise_if_asynchronous(e)` first.

How one is told apart: its traceback (or that of an exception in its
`__cause__`/`__context__` chain, since the compiler wraps exceptions into
`Unsupported`) contains a frame running the code of a Python function that is
currently installed as the handler of some signal (`signal.getsignal`).
Assumes the handler is still installed while the exception propagates through
pyfront (a handler that uninstalls itself before raising is not recognized).
KeyboardInterrupt and SystemExit are BaseExceptions, which pyfront never
catches, so they need no test.
"""

from __future__ import annotations

import _signal
import types
from typing import Any


def _handler_code(handler: Any) -> types.CodeType | None:
    """The code object a Python-level signal handler runs (functions, bound methods)."""
    handler = getattr(handler, "__func__", handler)
    code = getattr(handler, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _handler_codes() -> set[types.CodeType]:
    """The code objects of the Python signal handlers installed now.

    Asked for every exception pyfront catches (a variant group's unreadable state paths raise
    on most calls), so it queries `_signal`, the C module under `signal`: `signal`'s wrappers
    turn every number and handler into an enum member, 45 times the cost (310 us a query).
    """
    codes = set()
    for s in _signal.valid_signals():
        try:
            handler = _signal.getsignal(s)
        except (ValueError, OSError):  # a signal number this platform cannot query
            continue
        code = _handler_code(handler) if callable(handler) else None  # not SIG_DFL, SIG_IGN or None
        if code is not None:
            codes.add(code)
    return codes


def asynchronous_cause(exc: BaseException, codes: set[types.CodeType] | None = None) -> BaseException | None:
    """The exception a signal handler raised, if `exc` is it or was caused while handling it.

    `codes`: the handlers' code objects (`_handler_codes()`), when the caller has them already.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            if codes is None:
                codes = _handler_codes()
            if not codes:
                return None  # no Python handler installed: nothing is asynchronous
            if tb.tb_frame.f_code in codes:
                return exc
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    return None


def reraise_if_asynchronous(*excs: BaseException) -> None:
    """Raise the signal handler's own exception again if one of `excs` is or wraps one; else return.

    Several exceptions (a variant group's unreadable paths) share one query of the handlers.
    """
    codes = _handler_codes() if len(excs) > 1 else None
    for exc in excs:
        cause = asynchronous_cause(exc, codes)
        if cause is not None:
            raise_unchained(cause)


def raise_unchained(exc: BaseException) -> None:
    """Raise `exc` again as it was raised, also from inside the handler of another exception
    (where Python would chain that one as its `__context__`)."""
    context, suppress = exc.__context__, exc.__suppress_context__
    try:
        raise exc
    finally:
        exc.__context__, exc.__suppress_context__ = context, suppress
