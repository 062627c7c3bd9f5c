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

A parameter that is an array read from an argument or Python state, unwritten
so far in the call (a sampling distribution `rng.choice(n, size, p=self.noise)`,
`rng.normal(self.mu, self.sigma)`), is read by the host at the call
(`ReadAtCall`), which makes the draw with it as NumPy does, for any draw
method and any size.

`choice(a, size, p=probs)` with computed probabilities (a softmax policy)
compiles the same way: NumPy draws `size` uniforms and picks, for each, the
first index whose entry of `cumsum(p) / cumsum(p)[-1]` exceeds it; the
uniforms are a host draw and the rest is compiled (a sequential float64
cumsum, so the same bits), and NumPy's checks of `p` become guards.

`shuffle(x)` of an array (np.random.shuffle, a Generator's or RandomState's)
is `x[:] = x[permutation(len(x))]`, the permutation a host draw: NumPy's
shuffle applies exactly that permutation and leaves the generator in the
same state.

Re-seeding (`np.random.seed(k)`, `rng.seed(k)` of a RandomState, `random.seed(k)`)
is made on the host in program order like a draw that gives None; a seed that
changes between calls, an argument or read from Python state (cs231n's
`np.random.seed(dropout_param["seed"])`, deeplearning.ai's `np.random.seed(seed)`),
is read there by each call (`ReadAtCall`).

Not compiled (the call runs in the interpreter, and `explain` says why):
- any other draw with a parameter computed at run time (`rng.uniform(low,
  x)`, `choice` without replacement): NumPy derives such draws with its own
  arithmetic on the parameters, which compiled code does not reproduce;
- a draw inside a `while` on a computed value, a loop over an array whose
  length varies, or a branch on a computed value inside a loop: how often it
  draws depends on the data, so it cannot be drawn before the call. (A draw in
  a loop of a fixed trip count, an scf.for over a range, is drawn before the
  call once per iteration: loops.ForLoop, and runtime/host_draws.py.)

A draw inside a branch on a computed value that became an scf.if (epsilon-
greedy exploration) is drawn before the call like any other, and the graph
also returns whether its branch ran (`draw_taken`, merged out of each scf.if
as a bool); the runtime then undoes the draws whose branch did not run
(runtime/host_draws.py, `Drawn.settle`), and re-runs the call in the
interpreter when a later draw of the same generator ran after one that did
not (its numbers were meant for the earlier one). A speculated branch needs
none of this: when its guard fails, all the call's draws are undone.
- calls that are not draws (`set_state`, attributes such as
  `rng.bit_generator`), `out=`, a draw that raises or warns, and a result that
  is not an array or scalar of a supported dtype.
"""

from __future__ import annotations

import ast
import copy
import inspect
import operator
import random
import warnings
from typing import Any

import numpy as np

from pyfront import indexing, numpy_api
from pyfront import semantics as S
from pyfront.dialects import core
from pyfront.dialects.mlir import ir
from pyfront.dialects.types import tensor_type
from pyfront.errors import Unsupported
from pyfront.guards import IdentityGuard
from pyfront.runtime.host_draws import HostDraw, Outcome, ReadAtCall, bit_generator_type, is_generator
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
# Per generator type, the methods that re-seed it (the runtime calls them on the host, in program
# order, like draws; they give None).
RESEEDS: dict[type, frozenset] = {np.random.RandomState: frozenset({"seed"}), random.Random: frozenset({"seed"})}
# The generators behind the modules' own functions, named as the code names their draws.
_GLOBAL_STATE = np.random.random_sample.__self__
_MODULE_GENERATORS = ((_GLOBAL_STATE, "np.random"), (random.random.__self__, "random"))


def _signature(*parameters: tuple) -> inspect.Signature:
    """A signature of positional-or-keyword parameters, (name,) or (name, default) each."""
    return inspect.Signature([inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                **({"default": Known(rest[0])} if rest else {}))
                              for name, *rest in parameters])


# The parameters of `normal` and `choice`, bound as each generator type binds them, and the draw
# that `choice` makes its uniforms with.
_NORMAL = _signature(("loc", 0.0), ("scale", 1.0), ("size", None))
_LEGACY_CHOICE = (("a",), ("size", None), ("replace", True), ("p", None))
_CHOICE = {np.random.RandomState: _signature(*_LEGACY_CHOICE),
           np.random.Generator: _signature(*_LEGACY_CHOICE, ("axis", 0), ("shuffle", True))}
_UNIFORM = {np.random.RandomState: "random_sample", np.random.Generator: "random"}


def is_draw_method(fn: Any) -> bool:
    """A bound method of a random generator (`np.random.rand`, `random.random`, `rng.normal`), or
    `np.random.seed` (a function that re-seeds the global RandomState as its `seed` method does)."""
    return fn is np.random.seed or is_generator(getattr(fn, "__self__", None))


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
        if method is np.random.seed:
            # Its seed method, which raises where it would not do the same: the interpreter then runs it.
            method = _GLOBAL_STATE.seed
        generator = method.__self__
        if getattr(generator, method.__name__) != method:
            raise Unsupported(f"{draw_text(generator, method.__name__)} is not the method of its generator "
                              "(an instance attribute shadows it)", node)
        return self._draw(None, generator, method.__name__, args, kwargs, node)

    def _shuffle(self, receiver: Obj | None, generator: Any, args: list, kwargs: dict, node: ast.AST) -> Known:
        """`shuffle(x)`: NumPy shuffles x's rows by the permutation that `permutation(len(x))` draws,
        consuming the generator alike (both types: checked in tests/test_random.py), so the call
        draws that permutation on the host and writes `x[perm]` into x."""
        if kwargs or len(args) != 1:
            raise Unsupported("shuffle is compiled with one array argument (no axis)", node)
        target = self._writable(args[0], node)
        if target.ndim == 0 or target.shape[0] is None:
            raise Unsupported("shuffle of a 0-d array, or of one whose length varies, is not supported", node)
        perm = self._draw(receiver, generator, "permutation", [Known(target.shape[0])], {}, node)
        self._write_array(args[0], indexing.getitem(target, perm), node)
        return Known(None)

    def _draw(self, receiver: Obj | None, generator: Any, method: str, args: list, kwargs: dict,
              node: ast.AST) -> Tensor | Known:
        """`generator.method(*args, **kwargs)`: a draw the runtime makes on the host before the call
        (or a re-seeding, which gives None).

        `receiver`: the generator read from Python state, None for one fixed at compile time.
        """
        text = draw_text(generator, method)
        if method == "shuffle" and type(generator) in _UNIFORM:
            return self._shuffle(receiver, generator, args, kwargs, node)
        reseeds = method in RESEEDS.get(type(generator), ())
        if method not in DRAWS[type(generator)] and not reseeds:
            raise Unsupported(f"{text} is not a random draw the compiler makes (those of a "
                              f"{type(generator).__name__} are {', '.join(sorted(DRAWS[type(generator)]))})", node)
        in_branch, loops = self._draw_loops(text, reseeds, node)
        computed = [v for v in (*args, *kwargs.values()) if not _is_known(v)]
        if (not reseeds and computed and method in ("normal", "choice") and type(generator) in _UNIFORM
                and not all(self._state_array_at_call(v) for v in computed)):
            return getattr(self, f"_{method}")(receiver, generator, args, kwargs, node)
        read_at_call = self._read_at_call if reseeds else self._state_array_at_call
        found = {id(v): read_at_call(v) for v in computed}  # (ReadAtCall, its value now) or None
        values, keywords = _arguments(text, args, kwargs, lambda v: _read(found.get(id(v))))
        if reseeds and computed:
            outcome = None  # (a seed read at the call is not tried: it may raise then)
        else:  # tried with the arrays read at the call as they are now; each call checks the outcome
            now = {id(f[0]): f[1] for f in found.values() if f is not None}
            value = _trial(generator, method, [now.get(id(v), v) for v in values],
                           {k: now.get(id(v), v) for k, v in keywords.items()}, text)
            outcome = None if reseeds else _outcome(value, text)
        if receiver is not None:
            self._state_guard(receiver.path, generator_spec(generator), node)
        index = len(self.draws)
        # (A generator read at call time is not held: the variant would keep the caller's object alive.)
        source, fixed = (None, generator) if receiver is None else (receiver.path, None)
        draw = HostDraw(source, fixed, method, values, keywords, outcome, self._site(node), text,
                        tuple((loop.key, loop.trips) for loop in loops))
        self.draws.append(draw)
        if in_branch:  # in a branch on a computed value: it is drawn whether or not the branch runs
            self.draw_taken[index] = Known(True)
        if reseeds:
            return Known(None)
        # An input of the call: in a branch or loop, defined before it (as state reads are).
        with self._state_ip() or ir.InsertionPoint.current:
            value = core.HOST_DRAW.build([], [tensor_type(draw.stacked_shape, outcome.dtype)], index=index,
                                         draw=text).result
        for loop in loops:  # this iteration's draw
            value = S.build("take", [value, loop.iteration()])
        return Tensor(value, outcome.pytype)

    def _draw_loops(self, text: str, reseeds: bool, node: ast.AST) -> tuple[bool, list]:
        """Whether a draw here is in a branch on a computed value, and the loops around it (outermost
        first), which must draw a fixed number of times."""
        regions = S.enclosing_regions()
        loops = [r for r in regions if r in ("scf.for", "scf.while")]
        if loops and ("scf.if" in regions[:regions.index(loops[-1])] or reseeds or not self.only_for_loops(regions)
                      or None in (loop.trips for loop in self.for_loops)):
            raise Unsupported(f"{text} inside a loop on a computed value, or inside a branch on one in a loop: "
                              "how many numbers the call draws depends on the data, so they cannot be drawn "
                              "before it", node)
        return "scf.if" in regions, list(self.for_loops)

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


    def _read_at_call(self, v: Any) -> tuple[ReadAtCall, int] | None:
        """(where each call reads it, its value now) of a Python int read from Python state or passed
        as an argument, which the host can read too (a seed in a dict, `random_mini_batches(X, Y, 64,
        seed)`); else None."""
        if not (isinstance(v, Tensor) and v.pytype is int):
            return None
        if v.source is not None and v.source.root.startswith("arg"):  # the argument itself, as passed
            return ReadAtCall(v.source), None
        found = self.runtime_scalars.get(id(v))
        return (ReadAtCall(found[1]), None) if found is not None and found[0] is v else None

    def _state_array_at_call(self, v: Any) -> tuple[ReadAtCall, np.ndarray] | None:
        """(where each call reads it, the array now) of an array read from an argument or Python
        state that this call has not written so far (`p=self.noise`): the host, drawing before the
        call, reads it with the values it has at the draw; else None."""
        found = self._input_arrays.get(id(v)) if isinstance(v, Tensor) else None
        if found is None or found[0] is not v or v.source is None or id(found[1]) in self.mutations:
            return None
        return ReadAtCall(v.source), found[1]

    def _choice(self, receiver: Obj | None, generator: Any, args: list, kwargs: dict, node: ast.AST) -> Tensor:
        """`choice(a, size, p=probs)` with computed probabilities, as NumPy computes it (see the module
        docstring): its checks of `p` become guards, the uniforms are a host draw, and the index of each
        is how many entries of the normalized running sum are <= it (NumPy's searchsorted, side right)."""
        text = draw_text(generator, "choice")
        signature = _CHOICE[type(generator)]
        try:
            params = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise Unsupported(f"{text}: {e}", node) from None
        params.apply_defaults()
        a, p = params.arguments.pop("a"), params.arguments.pop("p")
        fixed = _arguments(text, [], params.arguments)[1]
        if not (isinstance(p, Tensor) and p.pytype is np.ndarray and p.ndim == 1 and p.shape[0] is not None):
            raise Unsupported(f"{text}: a computed p that is not a 1-d array of a size fixed at compile time", node)
        if fixed["replace"] is not True or fixed.get("axis", 0) != 0:
            raise Unsupported(f"{text} with a computed p and replace=False or an axis: NumPy draws those "
                              "with a loop on the drawn values", node)
        population = _population(a, text, node)
        n = population if isinstance(population, int) else population.shape[0]
        if p.shape[0] != n:
            raise Unsupported(f"{text}: a and p have different sizes (NumPy raises ValueError)", node)
        if n > numpy_api.SEQUENTIAL_LIMIT:
            raise Unsupported(f"{text} with a computed p over more than {numpy_api.SEQUENTIAL_LIMIT} outcomes "
                              "is not supported yet", node)
        cdf = numpy_api.FUNCTIONS[np.cumsum](_checked_probabilities(p, text))
        cdf = S.ufunc(np.true_divide, cdf, indexing.getitem(cdf, slice(n - 1, n)))
        size = fixed["size"]
        shape = () if size is None else size
        u = self._draw(receiver, generator, _UNIFORM[type(generator)], [Known(shape)], {}, node)
        below = S.ufunc(np.less_equal, cdf, S.expand_dims(Tensor(u.value, np.ndarray), -1))
        index = S.reduce("sum", below, axis=-1, dtype=np.int64)
        if isinstance(population, int):
            return Tensor(index.value, int if size is None else np.ndarray)
        picked = indexing.take(population, index, 0)
        return Tensor(picked.value, population.dtype.type if size is None else np.ndarray)


def _population(a: Any, text: str, node: ast.AST) -> int | Tensor:
    """`choice`'s `a`: a compile-time int n (draw from range(n)) or a 1-d array to pick from."""
    if isinstance(a, Known) and np.ndim(a.value) == 0:
        try:
            n = operator.index(a.value)
        except TypeError:
            raise Unsupported(f"{text}: a must be an int or a 1-d array (NumPy raises ValueError)", node) from None
        if n <= 0:
            raise Unsupported(f"{text}: a must be positive (NumPy raises ValueError)", node)
        return n
    t = S.constant(np.asarray(a.value)) if isinstance(a, Known) else S.to_tensor(a)
    if t.ndim != 1 or t.shape[0] in (0, None):
        raise Unsupported(f"{text}: a must be a non-empty 1-d array of a size fixed at compile time", node)
    return Tensor(t.value, np.ndarray)


def _checked_probabilities(p: Tensor, text: str) -> Tensor:
    """`p` as float64, after NumPy's checks (ValueError for NaN, a negative entry, or a sum off 1 by more
    than `atol`) as guards: the call runs in the interpreter, which raises, unless they hold.

    NumPy compensates its sum (Kahan); the compiled sum adds in another order. Summing n numbers >= 0
    whose sum is about 1, each order is within n ulps of 1 of the exact sum, so a compiled sum within
    `atol` less twice that margin of 1 means NumPy's is within `atol`; nearer the limit, the call runs
    in the interpreter.
    """
    atol = float(np.sqrt(np.finfo(np.float64).eps))
    if p.dtype.kind == "f":
        atol = max(atol, float(np.sqrt(np.finfo(p.dtype).eps)))
    p = _float64(p, f"{text}: p")
    S.guard(S.reduce_all(S.ufunc(np.greater_equal, p, Known(0.0)).value), "value",
            f"{text}: every probability is >= 0 (NumPy raises ValueError for a negative or NaN one)")
    margin = 2 * (p.shape[0] + 2) * float(np.finfo(np.float64).eps)
    off = S.ufunc(np.absolute, S.ufunc(np.subtract, S.reduce("sum", p), Known(1.0)))
    S.guard(S.ufunc(np.less_equal, off, Known(atol - margin)).value, "value",
            f"{text}: the probabilities sum to 1 within NumPy's tolerance (NumPy raises ValueError past it; "
            "near its limit, the call runs in the interpreter)")
    return p


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


def _read(found: tuple[ReadAtCall, Any] | None) -> ReadAtCall | None:
    return None if found is None else found[0]


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


def _arguments(text: str, args: list, kwargs: dict, read_at_call=None) -> tuple[tuple, dict]:
    """The compile-time values of a draw's arguments; `read_at_call(v)` may also give a ReadAtCall for
    a value each call reads from Python state (a seed in a dict, an array `p=self.noise`)."""
    if "out" in kwargs:
        raise Unsupported(f"{text}(out=...) writes into an array: not compiled")

    def value(v: Any, what: str) -> Any:
        read = read_at_call(v) if read_at_call is not None else None
        if read is not None:
            return read
        try:
            return numpy_api.known(v)
        except Unsupported:
            raise Unsupported(f"{text}: {what} is computed at run time; only draws whose parameters (size, "
                              "dtype, bounds, loc/scale, p, ...) are compile-time values are made before the "
                              "call, as NumPy's own arithmetic on computed parameters would not be reproduced "
                              "bit for bit") from None

    return (tuple(value(a, f"argument {i + 1}") for i, a in enumerate(args)),
            {k: value(v, f"argument {k}=") for k, v in kwargs.items()})


def _trial(generator: Any, method: str, args: tuple, kwargs: dict, text: str) -> Any:
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
    return value


def _outcome(value: Any, text: str) -> Outcome:
    if type(value) is np.ndarray or isinstance(value, np.generic):
        if value.dtype not in S.SUPPORTED_DTYPES:
            raise Unsupported(f"{text} gives {value.dtype} values, which compiled code does not hold")
        return Outcome(type(value), value.dtype, value.shape)
    if type(value) in (float, bool) or type(value) is int and -2 ** 63 <= value < 2 ** 63:
        return Outcome(type(value), np.dtype(type(value)))
    raise Unsupported(f"{text} gives a {type(value).__name__}, which compiled code does not hold")
