"""Every callable `pyfront.compile` accepts, reduced to a plain function and its leading arguments.

`resolve(target)` gives `(fn, leading)`: `fn` is the Python function whose code is
compiled; `leading(args, kwargs)` returns the call's full `(args, kwargs)` for `fn`,
with what the callable binds itself (a bound method's receiver, a partial's
arguments and keywords, a callable object as `self`) read at call time, so a
mutated receiver or partial argument is seen like any other argument (it is one:
the dispatch key and the guards cover it).

`positional(fn, args, kwargs)` binds a call to the canonical layout of `fn`'s
parameters, one argument per parameter in order (defaults of left-out parameters
included, `*args` as a tuple, keyword-only parameters, `**kwargs` as a dict), so
`f(x, training=True)` and `f(x, True)` share a dispatch key. It returns None for
every call it cannot bind: the interpreter then runs the call and raises
CPython's own TypeError. Compiled code takes the canonical arguments; the
interpreter always runs the call as it was made.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

Leading = Callable[[tuple, dict], tuple[tuple, dict]]


def binds_nothing(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return args, kwargs


def uncompiled(fn: Any) -> Any:
    """The plain function behind a `pyfront.compile`d one (inlined like it when called), else `fn`.

    Without importing the compiler: there is no compiled function before pyfront.api is loaded,
    and the gradient tape calls this on every call (a NumPy program that only uses
    `pyfront.grad` never loads graph generation, IREE or the MLIR bindings).
    """
    api = sys.modules.get("pyfront.api")
    return fn.fn if api is not None and isinstance(fn, api.CompiledFunction) else fn


def resolve(target: Any, what: str = "pyfront.compile") -> tuple[types.FunctionType, Leading]:
    """The plain function behind `target` and how a call of `target` becomes a call of it."""
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
    from pyfront.grad_calls import grad_function_type

    if isinstance(target, grad_function_type()):  # `compile(grad(f))`: compiled code calls the transform
        return apply_transform, lambda args, kwargs: ((target, *args), kwargs)
    call = getattr(type(target), "__call__", None)
    if call is not None and isinstance(uncompiled(call), types.FunctionType):
        fn, inner = resolve(call, what)
        return fn, lambda args, kwargs: inner((target, *args), kwargs)
    raise TypeError(f"{what} needs a Python function, method, functools.partial or object with a Python "
                    f"__call__, got {type(target).__name__}")


def apply_transform(transform: Callable, *args: Any, **kwargs: Any) -> Any:
    """The function `pyfront.compile(pyfront.grad(f))` compiles: it calls the transformation, which
    the graph generator differentiates (grad_calls.py), as `jax.jit(jax.grad(f))` does."""
    return transform(*args, **kwargs)


def positional(fn: types.FunctionType, args: tuple, kwargs: dict) -> tuple | None:
    """The canonical arguments of `fn(*args, **kwargs)` (keywords bound, defaults read now).

    Each parameter gets the same object the call binds it to; None when the call would
    raise (too many or missing arguments, an unknown or repeated keyword, a positional-only
    one by keyword).
    """
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
        return _bound_by_signature(fn, args, kwargs)
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


def _bound_by_signature(fn: types.FunctionType, args: tuple, kwargs: dict) -> tuple | None:
    """`positional` for signatures with *args, keyword-only parameters or **kwargs (the slow path:
    the signature is read per call, as defaults may change)."""
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return tuple(bound.arguments.values())
