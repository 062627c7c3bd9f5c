"""Random draws in compiled code, as a mixin of the graph generator.

Compiled code does not draw random numbers: a call of a draw method of a
random generator (`np.random.rand(*h.shape)`, `np.random.randint(0, N, size=B)`,
`self.rng.random(x.shape)`, `rng.normal(size=(B, nz))`, `random.random()`)
whose arguments are all compile-time values becomes a `pyfront.host_draw` op,
an input of the compiled function, and a `HostDraw` that the runtime makes on
the host before the call, in program order, with the same method of the same
generator and the same arguments (runtime/host_draws.py): the numbers, and the
generator's state after the call, are NumPy's (or Python's) own, and a deopt
undoes the draws before the interpreter re-runs the call.

The generator is reached as the code reaches it: through a bound method fixed
at compile time under an identity guard (`np.random.rand`, whose generator is
NumPy's global RandomState, which `np.random.seed` re-seeds in place;
`random.random`; a generator in a global of another module), or read at call
time from an argument, an attribute, an item or a global of the compiled
function's module, whose exact type and bit generator's type are guarded
(`GeneratorSpec`), so binding another generator there needs no recompilation.

`normal(loc, scale, size)` with a computed `loc` or `scale` (a Gaussian
policy's `rng.normal(mean, std)`) compiles as NumPy computes it, bit for bit:
`loc + scale * z`, one standard normal `z` per element of the result in C
order, converted to float64 first; the standard normals are a host draw, the
arithmetic is compiled, and NumPy's ValueError for a scale with its sign bit
set becomes a guard that every scale is > 0 (0, -0.0, NaN and negative scales
re-run the call in the interpreter).

Not compiled (the call runs in the interpreter, and `explain` says why):
- any other draw with a parameter computed at run time (`rng.choice(n,
  p=probs)`, `rng.uniform(low, x)`): NumPy derives such draws with its own
  arithmetic on the parameters, which compiled code does not reproduce;
- a draw inside a branch or loop on a computed value that became real control
  flow (scf.if/for/while): whether and how often it draws depends on the data,
  so it cannot be drawn before the call (a speculated branch is fine: when its
  guard fails, the draws are undone);
- calls that are not draws (`seed`, `shuffle`, `set_state`, attributes such as
  `rng.bit_generator`), `out=`, a draw that raises or warns, and a result that
  is not an array or scalar of a supported dtype.
"""

from __future__ import annotations

import ast
import copy
import inspect
import random
import warnings
from typing import Any

import numpy as np

from pyfront import numpy_api
from pyfront import semantics as S
from pyfront.dialects import core
from pyfront.dialects.types import tensor_type
from pyfront.errors import Unsupported
from pyfront.guards import IdentityGuard
from pyfront.runtime.host_draws import HostDraw, Outcome, bit_generator_type, is_generator
from pyfront.specialize import GeneratorSpec, OwnAttrSpec
from pyfront.values import BoundMethod, Known, Obj, Tensor

_NUMPY_DRAWS = ("random", "standard_normal", "normal", "uniform", "binomial", "choice", "permutation",
                "exponential", "standard_exponential", "poisson", "beta", "gamma", "standard_gamma", "laplace",
                "logistic", "lognormal", "geometric")
# Per generator type, the methods that draw fresh values and change nothing but the generator.
DRAWS: dict[type, frozenset] = {
    np.random.Generator: frozenset(_NUMPY_DRAWS + ("integers",)),
    np.random.RandomState: frozenset(_NUMPY_DRAWS + ("rand", "randn", "random_sample", "randint")),
    random.Random: frozenset(("random", "uniform", "randint", "randrange", "choice", "gauss", "normalvariate",
                              "expovariate")),
}
# The generators behind the modules' own functions, named as the code names their draws.
_MODULE_GENERATORS = ((np.random.random_sample.__self__, "np.random"), (random.random.__self__, "random"))
# The parameters of `normal` (Generator's and RandomState's), bound as NumPy binds them.
_NORMAL = inspect.Signature([
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=Known(default))
    for name, default in (("loc", 0.0), ("scale", 1.0), ("size", None))])


def is_draw_method(fn: Any) -> bool:
    """A bound method of a random generator (`np.random.rand`, `random.random`, `rng.normal`)."""
    return is_generator(getattr(fn, "__self__", None))


def generator_spec(generator: Any) -> GeneratorSpec:
    """What a variant that draws from `generator` guards about it."""
    return GeneratorSpec(type(generator), bit_generator_type(generator))


def draw_text(generator: Any, method: str) -> str:
    """How people name a draw: np.random.rand, random.choice, Generator.normal."""
    prefix = next((name for g, name in _MODULE_GENERATORS if g is generator), type(generator).__name__)
    return f"{prefix}.{method}"


class DrawMixin:
    def _generator_method(self, obj: Obj, name: str, node: ast.AST) -> BoundMethod:
        """`rng.normal` of a generator read from Python state: a method the call may draw with."""
        generator = obj.example
        cls = type(generator)
        found = inspect.getattr_static(cls, name, None)
        if not callable(found):
            raise Unsupported(f"attribute {name!r} of a {cls.__name__}: only its draws (method calls) compile",
                              node)
        if hasattr(generator, "__dict__"):  # random.Random: a Python class, whose instances may shadow it
            if name in vars(generator):
                raise Unsupported(f"{cls.__name__}.{name} is shadowed by an instance attribute", node)
            self._guard(IdentityGuard("attr", cls, name, found, self._site(node)))
            self._state_guard(obj.path, OwnAttrSpec(name, False), node)
        return BoundMethod(obj, name)

    def _draw_method(self, method: Any, args: list, kwargs: dict, node: ast.AST) -> Tensor:
        """A call of a generator's bound method fixed at compile time (`np.random.rand(...)`)."""
        generator = method.__self__
        if getattr(generator, method.__name__) != method:
            raise Unsupported(f"{draw_text(generator, method.__name__)} is not the method of its generator "
                              "(an instance attribute shadows it)", node)
        return self._draw(None, generator, method.__name__, args, kwargs, node)

    def _draw(self, receiver: Obj | None, generator: Any, method: str, args: list, kwargs: dict,
              node: ast.AST) -> Tensor:
        """`generator.method(*args, **kwargs)`: a draw the runtime makes on the host before the call.

        `receiver`: the generator read from Python state, None for one fixed at compile time.
        """
        text = draw_text(generator, method)
        if method not in DRAWS[type(generator)]:
            raise Unsupported(f"{text} is not a random draw the compiler makes (those of a "
                              f"{type(generator).__name__} are {', '.join(sorted(DRAWS[type(generator)]))})", node)
        if self.hoist_points:
            raise Unsupported(f"{text} inside a branch or loop on a computed value: how many numbers the call "
                              "draws depends on the data, so they cannot be drawn before it", node)
        if method == "normal" and not all(map(_is_known, [*args, *kwargs.values()])):
            return self._normal(receiver, generator, args, kwargs, node)
        values, keywords = _arguments(text, args, kwargs)
        outcome = _trial(generator, method, values, keywords, text)
        if receiver is not None:
            self._state_guard(receiver.path, generator_spec(generator), node)
        index = len(self.draws)
        # (A generator read at call time is not held: the variant would keep the caller's object alive.)
        source, fixed = (None, generator) if receiver is None else (receiver.path, None)
        self.draws.append(HostDraw(source, fixed, method, values, keywords, outcome, self._site(node), text))
        result = core.HOST_DRAW.build([], [tensor_type(outcome.shape, outcome.dtype)], index=index, draw=text)
        return Tensor(result.result, outcome.pytype)

    def _normal(self, receiver: Obj | None, generator: Any, args: list, kwargs: dict, node: ast.AST) -> Tensor:
        """`normal(loc, scale, size)` with a computed parameter: `loc + scale * standard_normal(shape)`,
        which is how NumPy computes it (see the module docstring)."""
        text = draw_text(generator, "normal")
        try:
            params = _NORMAL.bind(*args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"{text}: {e}", node) from None
        params.apply_defaults()
        loc, scale = (_float64(params.arguments[n], f"{text}: {n}") for n in ("loc", "scale"))
        size = _arguments(text, [], {"size": params.arguments["size"]})[1]["size"]
        shape = np.broadcast_shapes(S.static_shape(loc, text), S.static_shape(scale, text))
        if size is not None:
            size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
            if np.broadcast_shapes(shape, size) != size:
                raise Unsupported(f"{text}: size {size} does not fit the parameters' shape {shape} (ValueError)",
                                  node)
        _guard_scale(params.arguments["scale"], scale, text, node)
        draw_size = size if size is not None else shape if shape else None  # None: one Python float
        z = self._draw(receiver, generator, "standard_normal", [Known(draw_size)], {}, node)
        value = S.ufunc(np.add, loc, S.ufunc(np.multiply, scale, Tensor(z.value, np.ndarray)))
        return S.astype(value, S.FLOAT64, float if draw_size is None else np.ndarray)


def _guard_scale(given: Any, scale: Tensor, text: str, node: ast.AST) -> None:
    """NumPy raises ValueError for a scale with its sign bit set: only scales > 0 compile (a constant
    one is checked now, a computed one by a guard)."""
    reason = f"{text}: every scale is > 0 (NumPy raises ValueError for a negative or -0.0 scale; 0 and NaN"
    if isinstance(given, Known):
        if not np.all(np.asarray(given.value, np.float64) > 0):
            raise Unsupported(f"{reason} run in the interpreter)", node)
        return
    S.guard(S.reduce_all(S.ufunc(np.greater, scale, Known(0.0)).value), "value",
            f"{reason} scales run in the interpreter)")


def _is_known(v: Any) -> bool:
    try:
        numpy_api.known(v)
        return True
    except Unsupported:
        return False


def _float64(v: Any, what: str) -> Tensor:
    """A parameter of a draw as NumPy's C code reads it: a float64 array."""
    if isinstance(v, Known):
        try:
            return S.constant(np.asarray(v.value, np.float64))
        except (TypeError, ValueError):
            raise Unsupported(f"{what} is not a float (NumPy raises)") from None
    t = S.to_tensor(v)
    if t.dtype.kind not in "biuf":
        raise Unsupported(f"{what} of dtype {t.dtype}")
    return S.astype(Tensor(t.value, np.ndarray), S.FLOAT64)


def _arguments(text: str, args: list, kwargs: dict) -> tuple[tuple, dict]:
    """The compile-time values of a draw's arguments."""
    if "out" in kwargs:
        raise Unsupported(f"{text}(out=...) writes into an array: not compiled")

    def value(v: Any, what: str) -> Any:
        try:
            return numpy_api.known(v)
        except Unsupported:
            raise Unsupported(f"{text}: {what} is computed at run time; only draws whose parameters (size, "
                              "dtype, bounds, loc/scale, p, ...) are compile-time values are made before the "
                              "call, as NumPy's own arithmetic on computed parameters would not be reproduced "
                              "bit for bit") from None

    return (tuple(value(a, f"argument {i + 1}") for i, a in enumerate(args)),
            {k: value(v, f"argument {k}=") for k, v in kwargs.items()})


def _trial(generator: Any, method: str, args: tuple, kwargs: dict, text: str) -> Outcome:
    """What the draw gives (its arguments fix the type, dtype and shape), found by making it on a
    copy of the generator, which leaves the caller's generator where it is."""
    clone = copy.deepcopy(generator)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = getattr(clone, method)(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the interpreter raises it
            raise Unsupported(f"{text} raises {type(e).__name__}: {e}") from None
    if caught:
        raise Unsupported(f"{text} warns ({caught[0].category.__name__}: {caught[0].message})")
    if type(generator) is random.Random and method == "choice":
        items = args[0] if args else kwargs["seq"]
        if len({type(v) for v in items}) > 1:
            raise Unsupported(f"{text} of items of several types (the type drawn would vary between calls)")
    return _outcome(value, text)


def _outcome(value: Any, text: str) -> Outcome:
    if type(value) is np.ndarray or isinstance(value, np.generic):
        if value.dtype not in S.SUPPORTED_DTYPES:
            raise Unsupported(f"{text} gives {value.dtype} values, which compiled code does not hold")
        return Outcome(type(value), value.dtype, value.shape)
    if type(value) in (float, bool) or type(value) is int and -2 ** 63 <= value < 2 ** 63:
        return Outcome(type(value), np.dtype(type(value)))
    raise Unsupported(f"{text} gives a {type(value).__name__}, which compiled code does not hold")
