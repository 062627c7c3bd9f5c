"""Every callable `pyfront.compile` accepts, reduced to a plain function and its leading arguments.

`resolve(target)` gives `(fn, leading)`: `fn` is the Python function whose code is
compiled; `leading(args, kwargs)` returns the call's full `(args, kwargs)` for `fn`,
with what the callable binds itself (a bound method's receiver, a partial's
arguments and keywords, a callable object as `self`) read at call time, so a
mutated receiver or partial argument is seen like any other argument (it is one:
the dispatch key and the guards cover it).

`positional(fn, args, kwargs)` binds call-site keywords to the positional layout of
`fn` (defaults of left-out parameters included), so `f(x, training=True)` and
`f(x, True)` share a dispatch key. It returns None for every call it cannot bind
that way: the interpreter then runs the call and raises CPython's own TypeError.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

Leading = Callable[[tuple, dict], tuple[tuple, dict]]


def binds_nothing(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return args, kwargs


def resolve(target: Any, what: str = "pyfront.compile") -> tuple[types.FunctionType, Leading]:
    """The plain function behind `target` and how a call of `target` becomes a call of it."""
    from pyfront.state import uncompiled

    target = uncompiled(target)
    if isinstance(target, types.FunctionType):
        return target, binds_nothing
    if isinstance(target, types.MethodType):
        fn, inner = resolve(target.__func__, what)
        receiver = target.__self__
        return fn, lambda args, kwargs: inner((receiver, *args), kwargs)
    if isinstance(target, functools.partial):
        fn, inner = resolve(target.func, what)
        # partial objects are immutable, but read .args/.keywords per call all the same (cheap).
        return fn, lambda args, kwargs: inner((*target.args, *args), {**target.keywords, **kwargs})
    if isinstance(target, staticmethod):
        return resolve(target.__func__, what)
    call = getattr(type(target), "__call__", None)
    if call is not None and isinstance(uncompiled(call), types.FunctionType):
        fn, inner = resolve(call, what)
        return fn, lambda args, kwargs: inner((target, *args), kwargs)
    raise TypeError(f"{what} needs a Python function, method, functools.partial or object with a Python "
                    f"__call__, got {type(target).__name__}")


def unsupported_signature(fn: types.FunctionType) -> str | None:
    """Why calls of `fn` are not compiled whatever their arguments (None: they can be)."""
    code = fn.__code__
    kinds = [name for flag, name in ((code.co_flags & 0x04, "*args"), (code.co_flags & 0x08, "**kwargs"),
                                     (code.co_kwonlyargcount, "keyword-only parameters")) if flag]
    if kinds:
        return f"{fn.__qualname__} has {' and '.join(kinds)}: not compiled yet"
    return None


def positional(fn: types.FunctionType, args: tuple, kwargs: dict) -> tuple | None:
    """`args` extended to every positional parameter of `fn` (keywords, then defaults, read now).

    `fn(*positional(fn, args, kwargs))` binds each parameter to the same object as
    `fn(*args, **kwargs)`; None when that call would raise (too many or missing
    arguments, an unknown or repeated keyword, a positional-only one by keyword).
    """
    code = fn.__code__
    count = code.co_argcount
    if len(args) >= count:
        return args if len(args) == count and not kwargs else None
    defaults = fn.__defaults__ or ()
    first_default = count - len(defaults)
    names = code.co_varnames
    bound = list(args)
    used = 0
    for i in range(len(args), count):
        name = names[i]
        if name in kwargs and i >= code.co_posonlyargcount:
            bound.append(kwargs[name])
            used += 1
        elif i >= first_default:
            bound.append(defaults[i - first_default])
        else:
            return None
    return tuple(bound) if used == len(kwargs) else None
