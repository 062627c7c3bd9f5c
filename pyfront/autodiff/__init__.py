"""`pyfront.grad` and `pyfront.value_and_grad`: reverse-mode gradients of plain NumPy functions.

    import numpy as np
    import pyfront

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    dw = pyfront.grad(loss)(w, x)                      # d loss / d w, shaped like w
    value, (dw, dx) = pyfront.value_and_grad(loss, argnums=(0, 1))(w, x)
    dw, aux = pyfront.grad(loss_and_stats, has_aux=True)(w, x)  # fn returns (loss, aux)

In the interpreter the call runs `fn` on boxed arguments that record each
NumPy operation on a tape (tape.py) and then runs the primitives' VJP rules
backwards; in compiled code (`pyfront.compile`) the graph generator
recognizes a `GradFunction` call and differentiates the IR with the same
rules (pyfront/grad_calls.py, autodiff/ir_ad.py). What can be
differentiated, what the gradients look like and the errors are described
in tape.py and docs/grad.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pyfront.specialize import CompileTimeConstant


class GradFunction(CompileTimeConstant):
    """`fn` made to return its gradient (and its value first, if `value_and_grad`).

    `argnums`: the position (int) or positions (tuple of ints) of the
    arguments to differentiate with respect to; with a tuple the gradient is a
    tuple with one entry per position.

    `has_aux` (as in JAX): `fn` returns a pair `(loss, aux)`; only `loss` is
    differentiated and `aux` is returned unchanged (with no gradient through
    it): `grad` gives `(gradient, aux)`, `value_and_grad` gives
    `((loss, aux), gradient)`.
    """

    def __init__(self, fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, value_and_grad: bool = False,
                 has_aux: bool = False):
        if not callable(fn):
            raise TypeError(f"pyfront.grad: expected a callable, got {type(fn).__name__}")
        if isinstance(argnums, list):
            argnums = tuple(argnums)
        positions = (argnums,) if isinstance(argnums, int) else argnums
        if (
            not isinstance(positions, tuple)
            or not positions
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in positions)
        ):
            raise TypeError(f"pyfront.grad: argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
        if len(set(positions)) != len(positions):
            raise ValueError(f"pyfront.grad: argnums {argnums!r} repeats an argument")
        self.fn = fn
        self.argnums = argnums
        self.value_and_grad = value_and_grad
        self.has_aux = bool(has_aux)
        # updated=(): fn's __dict__ (a compiled function's own state, its `fn` among it) stays fn's.
        functools.update_wrapper(self, fn, updated=())
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        # Compiled code folds a GradFunction by identity (CompileTimeConstant): it never changes.
        if getattr(self, "_frozen", False):
            raise AttributeError(f"pyfront.grad functions are immutable: cannot set {name!r}")
        super().__setattr__(name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from pyfront.autodiff.tape import differentiate
        from pyfront.callables import uncompiled

        # A compiled fn is differentiated through its Python function (the tape traces that one).
        return differentiate(uncompiled(self.fn), args, kwargs, self.argnums, self.value_and_grad, self.has_aux)

    def with_fn(self, fn: Callable[..., Any]) -> GradFunction:
        """The same transformation of another function (the profiler's instrumented copy of `fn`)."""
        return GradFunction(fn, self.argnums, self.value_and_grad, self.has_aux)

    def __repr__(self) -> str:
        kind = "value_and_grad" if self.value_and_grad else "grad"
        aux = ", has_aux=True" if self.has_aux else ""
        return f"<pyfront.{kind} of {getattr(self.fn, '__qualname__', self.fn)!r}, argnums={self.argnums!r}{aux}>"


def grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> GradFunction:
    """The gradient of the scalar-valued `fn` with respect to the arguments at `argnums`.

    >>> import numpy as np, pyfront
    >>> pyfront.grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> pyfront.grad(lambda x: (np.sum(x ** 2), x.max()), has_aux=True)(np.array([1.0, 2.0]))
    (array([2., 4.]), np.float64(2.0))
    """
    return GradFunction(fn, argnums, value_and_grad=False, has_aux=has_aux)


def value_and_grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> GradFunction:
    """`fn`'s value and its gradient (as `grad`) from one call, as a pair `(value, grad)`.

    >>> import numpy as np, pyfront
    >>> pyfront.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    """
    return GradFunction(fn, argnums, value_and_grad=True, has_aux=has_aux)


__all__ = ["GradFunction", "grad", "value_and_grad"]
