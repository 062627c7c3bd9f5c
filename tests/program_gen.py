"""Random Python + NumPy programs for differential fuzzing (tests/test_random_programs.py).

`programs()` is a hypothesis strategy of `Program`s: the source of one module
holding a function `f` (and maybe helpers), and the argument tuples to call it
with. Every feature is switched on by a drawn flag, so shrinking ends with a
small program that uses only what a failure needs.

The generator builds the function one statement at a time and runs each
statement on the first call's arguments as it goes, so every variable has a
concrete sample (its dtype, shape and Python type are NumPy's own answers); a
candidate statement NumPy rejects is simply not used. Each variable also
carries a static summary valid for *every* call the test makes:

- `bound`: |value| never exceeds it (no overflow, no float warnings);
- `frac`: for exact values, the number of binary fraction digits; values are
  exact when both sides must compute them bit for bit (sums of small dyadic
  numbers, integer arithmetic, ...). Operations that amplify one-ulp
  differences (comparisons, floor, //, %, argmax) only take exact operands;
- `rel`, `abs`: bounds on how far compiled code may be from NumPy
  (|got - expected| <= rel * |expected| + abs), kept well inside the
  differential harness's float32 tolerance, in float32 ulps even for float64.

Programs are "supported" (the compiler is expected to compile them) unless a
dynamic feature (branch on a computed value, loop on an argument, `while`,
global write, `raise`, `print`) is on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

EPS = 2.0**-23  # one float32 ulp at 1.0
MANTISSA = 22  # bits an exact value may use (float32 has 24)
REL_MAX, ABS_MAX = 4e-6, 4e-7  # well inside the harness's rtol 1e-5 / atol 1e-6
BOUND_MAX = 1e5
MAXDIM = 3  # non-broadcast dimensions are 2 or 3 in every call
ARG_BOUND = {"f": 2.0, "i": 3.0, "b": 1.0}
ARG_FRAC = {"f": 3, "i": 0, "b": 0}  # floats are multiples of 1/8
DTYPES = ["float32", "float64", "int32", "int64", "bool"]
SAME_KIND = {"float32": "float64", "float64": "float32", "int32": "int64", "int64": "int32", "bool": "bool"}
INT_CONSTS = [2, 1, 0, -1, 3, -2]
FLOAT_CONSTS = [0.5, 1.5, -0.25, 2.0, -1.0, 0.125]
BOOL_CONSTS = [True, False]
DYNAMIC = ("branch", "loop", "while_", "global_write", "raise_", "print_")


class Box:
    """An object argument whose attributes the program reads and writes."""

    def __init__(self, scale: float):
        self.scale = scale
        self.value = None


@dataclass(frozen=True)
class Var:
    name: str
    sample: Any
    bound: float
    frac: int | None  # None: inexact
    rel: float = 0.0
    abs: float = 0.0
    nonneg: bool = False
    const: bool = False

    @property
    def exact(self) -> bool:
        return self.frac is not None

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self.sample).dtype

    @property
    def kind(self) -> str:
        return "c" if self.const else self.dtype.kind

    @property
    def ndim(self) -> int:
        return np.ndim(self.sample)


@dataclass
class Program:
    source: str
    calls: list[tuple]
    features: set[str] = field(default_factory=set)
    int_div_zero: bool = False

    @property
    def supported(self) -> bool:
        return not (self.features & set(DYNAMIC))


class Reject(Exception):
    """A candidate statement that NumPy rejects or whose summary is out of bounds."""


def summary(bound, frac, rel=0.0, abs_=0.0, nonneg=False) -> dict:
    if not bound <= BOUND_MAX:
        raise Reject("bound")
    if frac is not None and bound * 2.0**frac >= 2.0**MANTISSA:
        frac, rel = None, rel + EPS
    if rel > REL_MAX or abs_ > ABS_MAX:
        raise Reject("error")
    return {"bound": bound, "frac": frac, "rel": rel, "abs": abs_, "nonneg": nonneg}


def _exact(*vs: Var) -> None:
    if not all(v.exact for v in vs):
        raise Reject("inexact operand")


def _numeric(*vs: Var) -> None:
    if any(v.kind == "b" for v in vs):
        raise Reject("bool operand")


def _fracs(*vs: Var) -> int | None:
    return None if any(v.frac is None for v in vs) else max(v.frac for v in vs)


def _spread(*vs: Var) -> float:
    """Absolute error of a sum or difference, where cancellation may happen."""
    return sum(v.abs + v.rel * v.bound for v in vs)


# Unary operations: template, summary rule ------------------------------------------------


def _exp(x):
    _numeric(x)
    if x.bound > 3:
        raise Reject("exp overflow")
    return summary(math.exp(x.bound), None, x.rel * x.bound + x.abs + 2 * EPS, 0.0, True)


def _tanh(x):
    _numeric(x)
    return summary(1.0, None, x.rel + 2 * EPS, x.abs, x.nonneg)


def _sin(x):
    if x.dtype != np.float32:  # float64 sin does not compile (IREE CPU cannot link it)
        raise Reject("sin float64")
    return summary(1.0, None, 0.0, _spread(x) + 2 * EPS)


UNARY = {
    "np.exp({0})": _exp,
    "np.tanh({0})": _tanh,
    "np.abs({0})": lambda x: summary(x.bound, x.frac, x.rel, x.abs, True),
    "-{0}": lambda x: _numeric(x) or summary(x.bound, x.frac, x.rel, x.abs),
    "np.negative({0})": lambda x: _numeric(x) or summary(x.bound, x.frac, x.rel, x.abs),
    "np.sqrt(np.abs({0}) + 1)": lambda x: summary(
        math.sqrt(x.bound + 1), None, 0.5 * (x.rel * x.bound + x.abs) + 2 * EPS, 0.0, True),
    "np.log(np.abs({0}) + 1)": lambda x: summary(
        math.log(x.bound + 1), None, x.rel + 2 * EPS, x.abs + 2 * EPS, True),
    "np.square({0})": lambda x: _numeric(x) or summary(
        x.bound**2, None if x.frac is None else 2 * x.frac, 2 * x.rel, 2 * x.bound * x.abs, True),
    "np.floor({0})": lambda x: _numeric(x) or _exact(x) or summary(x.bound + 1, 0),
    "np.ceil({0})": lambda x: _numeric(x) or _exact(x) or summary(x.bound + 1, 0),
    "np.sign({0})": lambda x: _numeric(x) or _exact(x) or summary(1.0, 0),
    "np.sin({0})": _sin,
    "np.cos({0})": _sin,
}
# Elementwise results whose value does not depend on the operand's values (`x == x`
# on ints, `x * 0 + 3`): folding may see through them, and reductions over them
# have been miscompiled (pyfront issue 16). Values are bounded, so never NaN.
CONSTANT_VALUED = {
    "{0} * 0 + 3": lambda x: summary(3.0, 0, nonneg=True),
    "{0} == {0}": lambda x: summary(1.0, 0, nonneg=True),
    "{0} != {0}": lambda x: summary(1.0, 0, nonneg=True),
    "{0} - {0}": lambda x: _numeric(x) or summary(0.0, 0, nonneg=True),
}


# Binary operations -------------------------------------------------------------------------


def _add(a, b):
    nonneg = a.nonneg and b.nonneg
    if nonneg:
        return summary(a.bound + b.bound, _fracs(a, b), max(a.rel, b.rel), a.abs + b.abs, True)
    return summary(a.bound + b.bound, _fracs(a, b), 0.0, _spread(a, b))


def _sub(a, b):
    if a.kind == "b" and b.kind in "bc":
        raise Reject("bool subtract")
    return summary(a.bound + b.bound, _fracs(a, b), 0.0, _spread(a, b))


def _mul(a, b):
    frac = None if a.frac is None or b.frac is None else a.frac + b.frac
    return summary(a.bound * b.bound, frac, a.rel + b.rel, a.abs * b.bound + b.abs * a.bound,
                   a.nonneg and b.nonneg)


def _div(a, b):
    rel = a.rel + 2 * b.rel + EPS
    return summary(a.bound, None, rel, a.abs + 2 * a.bound * b.bound * b.abs)


def _floordiv(a, b):
    _exact(a, b)
    return summary(a.bound + 1, 0)


def _mod(a, b):
    _exact(a, b)
    return summary(b.bound**2 + 1, max(a.frac, 2 * b.frac), nonneg=True)


def _compare(a, b):
    _exact(a, b)
    return summary(1.0, 0)


def _bitwise(a, b):
    if a.kind not in "ibc" or b.kind not in "ibc":
        raise Reject("bitwise on floats")
    return summary(2 * max(a.bound, b.bound) + 1, 0)


def _int_only(a, b):
    if a.kind != "i" or b.kind not in "ic" or isinstance(b.sample, (bool, float)):
        raise Reject("integer division by zero needs integers")


def _int_floordiv(a, b):
    _int_only(a, b)
    return summary(a.bound, 0)


def _int_mod(a, b):
    _int_only(a, b)
    return summary(b.bound, 0)


def _extremum(a, b):
    return summary(max(a.bound, b.bound), _fracs(a, b), max(a.rel, b.rel), max(a.abs, b.abs),
                   a.nonneg and b.nonneg)


BINARY = {
    "{0} + {1}": _add,
    "{0} - {1}": _sub,
    "{0} * {1}": _mul,
    "{0} / ({1} * {1} + 1)": _div,
    "{0} // ({1} * {1} + 1)": _floordiv,
    "{0} % ({1} * {1} + 1)": _mod,
    "{0} < {1}": _compare,
    "{0} >= {1}": _compare,
    "{0} == {1}": _compare,
    "{0} != {1}": _compare,
    "{0} & {1}": _bitwise,
    "{0} | {1}": _bitwise,
    "{0} ^ {1}": _bitwise,
    "np.maximum({0}, {1})": _extremum,
    "np.minimum({0}, {1})": _extremum,
}
INT_DIV_ZERO = {"{0} // {1}": _int_floordiv, "{0} % {1}": _int_mod}


# Reductions (axis filled in), shape functions, selection ------------------------------------


def _count(x) -> int:
    return MAXDIM ** max(x.ndim, 1)


def _sum(x):
    n = _count(x)
    if x.exact:
        return summary(n * x.bound, x.frac, nonneg=x.nonneg)
    if x.nonneg:
        return summary(n * x.bound, None, x.rel + n * EPS, n * x.abs, True)
    return summary(n * x.bound, None, 0.0, n * (_spread(x) + EPS * x.bound))


def _mean(x):
    n = _count(x)
    if x.exact:
        return summary(x.bound, None, 2 * EPS, 0.0, x.nonneg)
    if x.nonneg:
        return summary(x.bound, None, x.rel + (n + 1) * EPS, x.abs, True)
    return summary(x.bound, None, 0.0, _spread(x) + n * EPS * x.bound)


def _prod(x):
    n = _count(x)
    if x.bound > 1.25:
        raise Reject("prod overflow")
    frac = None if x.frac is None else x.frac * n
    return summary(x.bound**n, frac, n * (x.rel + EPS), n * x.abs, x.nonneg)


def _same(x):
    return summary(x.bound, x.frac, x.rel, x.abs, x.nonneg)


def _arg(x):
    _exact(x)
    return summary(float(_count(x)), 0, nonneg=True)


REDUCTIONS = {
    "{0}.sum()": _sum, "np.sum({0}, axis={ax})": _sum, "{0}.sum(axis={ax}, keepdims=True)": _sum,
    "{0}.max()": _same, "np.max({0}, axis={ax})": _same, "{0}.min(axis={ax}, keepdims=True)": _same,
    "{0}.mean()": _mean, "np.mean({0}, axis={ax})": _mean, "{0}.prod(axis={ax})": _prod,
    "np.argmax({0}, axis={ax})": _arg, "{0}.argmin()": _arg,
}

# NumPy scalars (a bool, an int, a float): reductions compared or combined with a constant.
def _sum_is(x, c):
    _exact(x, c)
    if _sum(x)["frac"] is None:
        raise Reject("inexact sum")
    return summary(1.0, 0, nonneg=True)


SCALARS = {
    "{0}.max() > {c}": lambda x, c: _exact(x, c) or summary(1.0, 0, nonneg=True),
    "{0}.sum() == {c}": _sum_is,
    "{0}.min() + {c}": lambda x, c: _add(Var("m", 0, **_same(x)), c),
}

# template -> (minimum ndim, axis that must have length >= 2 in the sample, or None)
SHAPES = {
    "{0}.T": (0, None), "np.transpose({0})": (0, None), "{0}.reshape(-1)": (0, None),
    "{0}.reshape(1, -1)": (0, None), "{0}[0]": (1, None), "{0}[-1]": (1, None), "{0}[1:]": (1, 0),
    "{0}[::2]": (1, None), "{0}[..., :1]": (1, None), "{0}[:, 1]": (2, 1), "{0}[None]": (0, None),
    "np.expand_dims({0}, 0)": (0, None), "np.concatenate([{0}, {0}], axis=-1)": (1, None),
    "np.stack([{0}, {0}])": (0, None),
}


def _where(c0, c1, a, b):
    _exact(c0, c1)
    return _extremum(a, b)


def _clip(x, lo, hi):
    if lo.sample >= hi.sample:
        raise Reject("empty clip range")
    return summary(max(x.bound, lo.bound, hi.bound), _fracs(x, lo, hi), x.rel, x.abs)


SELECT = {"np.where({0} > {1}, {2}, {3})": (_where, 4), "np.clip({0}, {1}, {2})": (_clip, 3)}


# The builder ---------------------------------------------------------------------------------

SUPPORTED_RESULT = {np.dtype(d) for d in ("float32", "float64", "int32", "int64", "bool")}
FAMILIES = ("unary", "binary", "reduce", "shape", "select", "helper", "constant_valued", "scalar")


class Builder:
    """Draws statements over the variables defined so far, keeping samples and summaries."""

    def __init__(self, draw, features: set[str], variables: list[Var], namespace: dict, prefix: str = "v"):
        self.draw, self.features, self.vars = draw, features, list(variables)
        self.namespace, self.prefix = namespace, prefix
        self.used: set[str] = set()
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.counter = 0

    # operands

    def var(self, skip_bool: bool = False) -> Var:
        pool = [v for v in self.vars if not v.const and not (skip_bool and v.kind == "b")]
        pool = pool or [v for v in self.vars if not v.const]
        return pool[-1 - self.draw(st.integers(0, len(pool) - 1))]

    def const(self) -> Var:
        extra = [v for v in self.vars if v.const]  # attributes read from the Box argument
        if extra and self.draw(st.booleans()):
            return self.draw(st.sampled_from(extra))
        value = self.draw(st.sampled_from(INT_CONSTS + FLOAT_CONSTS + BOOL_CONSTS))
        frac = 3 if isinstance(value, float) else 0
        return Var(repr(value), value, abs(float(value)), frac, nonneg=value >= 0, const=True)

    def operand(self) -> Var:
        if "consts" in self.features and self.draw(st.booleans()):
            return self.const()
        return self.var()

    def env(self) -> dict:
        return {v.name: v.sample for v in self.vars if not v.const}

    def evaluate(self, expr: str, rule_args: list[Var], rule, ignore_divide: bool = False) -> tuple[Any, dict]:
        meta = rule(*rule_args)
        with np.errstate(all="raise", divide="ignore" if ignore_divide else "raise"):
            try:
                sample = eval(expr, self.namespace, self.env())
            except Exception as e:  # noqa: BLE001 - NumPy rejects the combination
                raise Reject(str(e)) from None
        if not isinstance(sample, (np.ndarray, np.generic)) or sample.dtype not in SUPPORTED_RESULT:
            raise Reject("result type")
        return sample, meta

    def new_var(self, sample, meta: dict) -> Var:
        v = Var(f"{self.prefix}{self.counter}", sample, **meta)
        self.counter += 1
        self.vars.append(v)
        return v

    # statements

    def candidate(self, family: str) -> tuple[str, Any, dict]:
        draw = self.draw
        if family == "unary":
            template = draw(st.sampled_from(list(UNARY)))
            x = self.var()
            return (template.format(x.name),) + self.evaluate(template.format(x.name), [x], UNARY[template])
        if family in ("binary", "int_div_zero"):
            table = BINARY if family == "binary" else INT_DIV_ZERO
            template = draw(st.sampled_from(list(table)))
            a, b = self.var(), self.operand()
            if draw(st.booleans()) and "//" not in template and "%" not in template and "/" not in template:
                a, b = b, a
            if a.const and b.const:
                raise Reject("constants only")
            expr = template.format(a.name, b.name)
            sample, meta = self.evaluate(expr, [a, b], table[template], ignore_divide=family != "binary")
            if ("//" in template or "%" in template) and sample.dtype == np.float64:
                raise Reject("float64 // and % do not compile (IREE's CPU backend cannot link them)")
            return expr, sample, meta
        if family == "reduce":
            template = draw(st.sampled_from(list(REDUCTIONS)))
            x = self.var()
            if "{ax}" in template:
                if x.ndim == 0:
                    raise Reject("axis of a 0-d value")
                ax = draw(st.integers(-x.ndim, x.ndim - 1))
                expr = template.format(x.name, ax=ax)
            else:
                expr = template.format(x.name)
            return (expr,) + self.evaluate(expr, [x], REDUCTIONS[template])
        if family == "shape":
            template = draw(st.sampled_from(list(SHAPES)))
            x = self.var()
            min_ndim, axis = SHAPES[template]
            if not isinstance(x.sample, np.ndarray):  # NumPy scalars: see test_random_programs' xfails
                raise Reject("view of a NumPy scalar")
            if x.ndim < min_ndim or (axis is not None and x.sample.shape[axis] < 2):
                raise Reject("shape")
            expr = template.format(x.name)
            return (expr,) + self.evaluate(expr, [x], _same)
        if family == "select":
            template = draw(st.sampled_from(list(SELECT)))
            rule, arity = SELECT[template]
            if arity == 4:
                ops = [self.var(), self.const(), self.operand(), self.var()]
            else:
                ops = [self.var(skip_bool=True), self.const(), self.const()]
            expr = template.format(*(o.name for o in ops))
            return (expr,) + self.evaluate(expr, ops, rule)
        if family == "constant_valued":
            template = draw(st.sampled_from(list(CONSTANT_VALUED)))
            x = self.var()
            expr = template.format(x.name)
            return (expr,) + self.evaluate(expr, [x], CONSTANT_VALUED[template])
        if family == "scalar":
            template = draw(st.sampled_from(list(SCALARS)))
            x, c = self.var(), self.const()
            expr = template.format(x.name, c=c.name)
            return (expr,) + self.evaluate(expr, [x, c], SCALARS[template])
        if family == "helper":
            return self.helper()
        raise AssertionError(family)

    def helper(self) -> tuple[str, Any, dict]:
        a, b = self.var(), self.var()
        name = f"h{len(self.namespace.get('__helpers__', []))}"
        sub = Builder(self.draw, self.features - {"helper"}, [replace(a, name="p"), replace(b, name="q")],
                      self.namespace, prefix="t")
        n = self.draw(st.integers(1, 2))
        for _ in range(n):
            sub.statement(("unary", "binary", "reduce", "select"))
        if sub.counter == 0:
            raise Reject("empty helper")
        result = sub.vars[-1]
        body = "\n".join("    " + line for line in sub.lines[:-1])
        last = sub.lines[-1].split(" = ", 1)[1]
        source = f"def {name}(p, q):\n" + (body + "\n" if body else "") + f"    return {last}\n"
        exec(source, self.namespace)  # noqa: S102 - our own generated code
        self.namespace.setdefault("__helpers__", []).append(source)
        meta = {k: getattr(result, k) for k in ("bound", "frac", "rel", "abs", "nonneg")}
        self.used |= sub.used
        return f"{name}({a.name}, {b.name})", result.sample, meta

    def statement(self, families) -> Var | None:
        for _ in range(8):
            family = self.draw(st.sampled_from(families))
            try:
                expr, sample, meta = self.candidate(family)
            except Reject:
                continue
            v = self.new_var(sample, meta)
            self.lines.append(f"{v.name} = {expr}")
            self.used.add(family)
            return v
        return None

    # dynamic statements: the interpreter runs them; only results are compared

    def dynamic(self, kind: str) -> None:
        for _ in range(8):
            try:
                getattr(self, "_" + kind.rstrip("_"))()
                self.used.add(kind)
                return
            except Reject:
                continue

    def _branch(self):
        x = self.var()
        _exact(x)
        if x.kind == "b" or _sum(x)["frac"] is None:
            raise Reject("branch condition")
        t = self.const()
        cond = f"{x.name}.sum() > {t.name}"
        (e1, s1, m1), (e2, s2, m2) = self.candidate("binary"), self.candidate("unary")
        if np.shape(s1) != np.shape(s2) or s1.dtype != s2.dtype or type(s1) is not type(s2):
            raise Reject("branches differ")
        taken = bool(eval(cond, self.namespace, self.env()))
        meta = {"bound": max(m1["bound"], m2["bound"]), "rel": max(m1["rel"], m2["rel"]),
                    "abs": max(m1["abs"], m2["abs"]), "nonneg": m1["nonneg"] and m2["nonneg"],
                    "frac": None if m1["frac"] is None or m2["frac"] is None else max(m1["frac"], m2["frac"])}
        v = self.new_var(s1 if taken else s2, meta)
        self.lines += [f"if {cond}:", f"    {v.name} = {e1}", "else:", f"    {v.name} = {e2}"]

    def _loop(self):
        x, y = self.var(), self.var()
        _numeric(x, y)
        env = self.env() | {"n": self.namespace["__n__"]}
        name = f"{self.prefix}{self.counter}"
        code = [f"{name} = {y.name} + {x.name}", "for i in range(n):", f"    {name} = {name} + {x.name} * i"]
        with np.errstate(all="raise"):
            try:
                exec("\n".join(code), self.namespace, env)  # noqa: S102
            except Exception as e:  # noqa: BLE001
                raise Reject(str(e)) from None
        meta = summary(y.bound + 4 * x.bound, _fracs(x, y), 0.0, _spread(y) + 4 * _spread(x))
        self.new_var(env[name], meta)
        self.lines += code

    def _while(self):
        x = self.var()
        _exact(x)
        name = f"{self.prefix}{self.counter}"
        code = [f"{name} = {x.name} * 1.0", f"while np.abs({name}).max() > 1:", f"    {name} = {name} * 0.5"]
        env = self.env()
        exec("\n".join(code), self.namespace, env)  # noqa: S102
        halvings = math.ceil(math.log2(max(x.bound, 1.0))) + 1
        self.new_var(env[name], summary(min(x.bound, 1.0), x.frac + halvings))
        self.lines += code

    def _global_write(self):
        self.lines.append(f"LAST = {self.var().name}")

    def _raise(self):
        x = self.var()
        _exact(x)
        self.lines += [f"if {x.name}.max() > {self.const().name}:",
                       f"    raise ValueError('{x.name} is too large')"]

    def _print(self):
        x = self.var()
        self.lines.append(f"print('{x.name}', {x.name}.shape, {x.name}.dtype)")


# Arguments and calls ---------------------------------------------------------------------------


def _values(rng: np.random.Generator, dtype: str, shape: tuple) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return (rng.integers(-16, 17, shape) / 8).astype(dtype)
    if kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-3, 4, shape).astype(dtype)


def _shape(pattern: tuple, dims: list[int]) -> tuple:
    offset = len(dims) - len(pattern)
    return tuple(dims[offset + i] if full else 1 for i, full in enumerate(pattern))


@st.composite
def programs(draw) -> Program:
    features = {name for name in ("unary", "binary", "consts", "reduce", "shape", "select", "helper",
                                  "tuple", "int_div_zero", "attr", "new_shapes", "new_dtypes",
                                  "constant_valued", "scalar", "scalar_args", "mismatch")
                if draw(st.booleans())}
    if draw(st.booleans()):
        features |= {name for name in DYNAMIC if draw(st.booleans())}
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(2, MAXDIM)) for _ in range(rank)]
    specs = []
    for _ in range(draw(st.integers(1, 3))):
        dtype = draw(st.sampled_from(DTYPES))
        length = rank - draw(st.integers(0, rank))
        specs.append((dtype, tuple(not draw(st.booleans()) for _ in range(length))))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    loop_ns = [draw(st.integers(0, 3)) for _ in range(3)]

    names = [f"a{i}" for i in range(len(specs))]
    scalar_args = "scalar_args" in features  # 0-d arguments are NumPy scalars, not 0-d arrays

    def value(dtype, shape):
        v = _values(rng, dtype, shape)
        return np.asarray(v)[()] if scalar_args and shape == () else v

    samples = [value(dtype, _shape(pattern, dims)) for dtype, pattern in specs]
    variables = [Var(n, s, ARG_BOUND[s.dtype.kind], ARG_FRAC[s.dtype.kind], nonneg=s.dtype.kind == "b")
                 for n, s in zip(names, samples)]
    namespace = {"np": np, "__n__": loop_ns[0], "box": Box(0.5)}
    if "attr" in features:
        variables.append(Var("box.scale", 0.5, 1.5, 1, nonneg=True, const=True))
    b = Builder(draw, features, variables, namespace)

    families = tuple(f for f in FAMILIES if f in features) or ("binary",)
    if "int_div_zero" in features:
        families += ("int_div_zero",)
    for _ in range(draw(st.integers(1, 6))):
        b.statement(families)
        if features & set(DYNAMIC) and draw(st.booleans()):
            b.dynamic(draw(st.sampled_from(sorted(features & set(DYNAMIC)))))
    if "attr" in features:  # compiled code stores arrays only (not NumPy scalars) to attributes
        arrays = [v for v in b.vars if isinstance(v.sample, np.ndarray)]
        if arrays:
            b.lines.append(f"box.value = {arrays[-1 - draw(st.integers(0, len(arrays) - 1))].name}")
    outputs = [b.var() for _ in range(draw(st.integers(1, 3)) if "tuple" in features else 1)]
    outputs = [v for v in outputs if not v.const] or [b.vars[0]]
    ret = ", ".join(v.name for v in outputs) + ("," if "tuple" in features and len(outputs) == 1 else "")

    params = names + (["n"] if "loop" in b.used else []) + (["box"] if "attr" in features else [])
    body = (["global LAST"] if "global_write" in b.used else []) + b.lines + [f"return {ret}"]
    source = ("import numpy as np\n\nLAST = None\n\n\n"
              + "".join(h + "\n\n" for h in namespace.get("__helpers__", []))
              + f"def f({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body))

    def args(arrays, n, scale=0.5):
        extra = ([n] if "loop" in b.used else []) + ([Box(scale)] if "attr" in features else [])
        return tuple(arrays) + tuple(extra)

    calls = [args(samples, loop_ns[0]), args(samples, loop_ns[0]),
             args([value(d, np.shape(s)) for (d, _), s in zip(specs, samples)], loop_ns[1], 1.5)]
    if "new_shapes" in features:
        new_dims = [draw(st.integers(2, MAXDIM)) for _ in range(rank)]
        arrays = [value(d, _shape(p, new_dims)) for d, p in specs]
        calls += [args(arrays, loop_ns[2]), args(arrays, loop_ns[2])]
    if "mismatch" in features:
        # One argument's dims vary while the others keep theirs: its dims relax to
        # dynamic and meet the others' static ones; then a size NumPy may reject.
        k = draw(st.integers(0, len(specs) - 1))
        for _ in range(draw(st.integers(2, 3))):
            new_dims = [draw(st.integers(2, MAXDIM + 1)) for _ in range(rank)]
            arrays = list(samples)
            arrays[k] = value(specs[k][0], _shape(specs[k][1], new_dims))
            calls.append(args(arrays, loop_ns[0]))
    if "new_dtypes" in features:
        arrays = [value(SAME_KIND[d], np.shape(s)) for (d, _), s in zip(specs, samples)]
        calls += [args(arrays, loop_ns[0]), args(arrays, loop_ns[1])]
    used = b.used | (features & {"tuple", "attr", "consts", "new_shapes", "new_dtypes", "scalar_args", "mismatch"})
    return Program(source, calls, used, int_div_zero="int_div_zero" in used)
