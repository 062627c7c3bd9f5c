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

Statements that change existing values keep the summaries sound too: a write
`a[key] = v`, `a[key] op= v`, `box.w -= v` joins the written values' summary
(cast to a's dtype: truncating into an int array needs exact values) into a's
and into every view's (`Var.base`: views are tracked statically, since NumPy's
reshape may copy in one call and view in another); writes go only into arrays
the program made (`np.zeros(x.shape)`, `x.copy()`, any computed array) or, with
`arg_writes`, the caller's (arguments, `box.w`), whose contents after each call
the differential check compares. Index arrays (`np.arange(2)`, int array
arguments) hold values in range on every axis of length >= 2, except on the
`oob` call, where both sides must raise IndexError. Python ints (an int
argument `i`, `box.t`, `k = i + 1`, `k += 1`) are weak constants that vary
between calls; they index and slice (`x[i:i + 2]`).

Programs are "supported" (the compiler is expected to compile them) unless a
dynamic feature (branch on a computed value, loop on an argument, `while`,
global write, `raise`, `print`) is on, or one of the documented interpreter-only
cases (`UNSUPPORTED`) happens.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from pyfront.layout import c_ordered

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
# Also run in the interpreter (docs/what-compiles.md): returning or storing an array NumPy lays
# out in another order than C (x.T * 2, x[:, idx]) or computed from a transpose, or a view at
# computed positions (box.t is read at run time: x[box.t] cannot be replayed on the host);
# `a[m] op= v` through a computed mask (it assigns rows of a length that varies, other than y[m]).
UNSUPPORTED = DYNAMIC + ("reordered", "computed_view", "mask_aug")


class Box:
    """An object argument whose attributes the program reads and writes: `scale` (a Python
    float), `w` (a float32 array updated in place, as an optimizer's weights), `t` (a Python
    int counter) and `value` (stored at the end)."""

    def __init__(self, scale: float, w: np.ndarray, t: int):
        self.scale, self.w, self.t = scale, w, t
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
    const: bool = False  # a Python scalar (a literal, an attribute, an int variable): weak in NumPy
    base: str | None = None  # the array whose memory this may view (writes into it show here)
    index: bool = False  # int array whose values index any axis of length >= 2 (see INDEX_VALUES)
    caller: bool = False  # an array the caller sees (an argument, an attribute of `box`)
    transposed: bool = False  # computed from a transpose (pyfront/layout.py's conservative rule)
    data_shaped: bool = False  # computed from a mask read, whose length depends on the data
    computed_view: bool = False  # a view at Python int positions (`x[k]`, `x[k:k + 2]`, views of one)

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
        return not (self.features & set(UNSUPPORTED))


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


# Writes into arrays, augmented assignment, integer-array indexing, Python ints ------------------

INDEX_VALUES = (-2, 2)  # index arguments hold -2..1: in range on every axis of length >= 2
OUT_OF_RANGE = 7  # the "oob" call's index: beyond every axis the programs make
# Values in INDEX_VALUES, repeats included. (np.array([1, 0]) runs in the interpreter: np.array
# of a list does not compile.)
INDEX_ARRAYS = ["np.arange(2)", "np.arange(-1, 2)", "np.arange(3) % 2", "np.arange(4).reshape(2, 2) - 2",
                "np.arange(2)[::-1]"]
# Keys by kind; {x} is the indexed array, {idx} an index array, {m} a bool mask over x's leading
# dims, {c} a constant, {k} a Python int. Whether a key fits is NumPy's answer on the sample.
KEYS = {
    "basic": ["0", "-1", "1", "1:3", "::2", ":-1", ":, 0", ":, -1", "..., 1", "0, 1", ":, ::2"],
    "index": ["{idx}", ":, {idx}", "..., {idx}", "np.arange({x}.shape[0]), {idx}", "{idx}, 0", "[1, 0]",
              ":, [0, -1]"],
    "mask": ["{m}", "{x} < {c}", "{x} > {c}"],
    "int": ["{k}", "{k}:{k} + 2", ":, {k}:{k} + 2", "{k}:", "..., {k}"],
}


def _fixed_shape(x: Var) -> None:
    """Reject constant-valued results of a data-dependent shape: the compiler leaves reductions
    over them to the interpreter (IREE 3.13 miscompiles them: tests/iree_repro/README.md)."""
    if x.data_shaped:
        raise Reject("a constant of a data-dependent shape")


def _filled(value: float):
    return lambda x: summary(value, 0, nonneg=value >= 0)


CREATE = {"np.zeros({0}.shape, np.float32)": _filled(0.0), "np.zeros({0}.shape, np.int32)": _filled(0.0),
          "np.zeros_like({0})": _filled(0.0), "np.ones({0}.shape)": _filled(1.0), "{0}.copy()": _same}
AUG_OPS = {"+": _add, "-": _sub, "*": _mul}
INT_EXPRS = {"{0} + {1}": _add, "{0} - {1}": _sub, "{0} * {1}": _mul}
COUNT = ["{0} += {1}", "{0} = {0} + {1}"]


def _view_of(x: Var) -> dict:
    """A result that may share `x`'s memory (a basic-indexing or shape view): writes into x's base show in it."""
    return {"base": x.base or x.name, "computed_view": x.computed_view}


def _meta(v: Var) -> dict:
    return {k: getattr(v, k) for k in ("bound", "frac", "rel", "abs", "nonneg")}


def _stored(target: Var, meta: dict) -> dict:
    """The summary of values once an assignment casts them to `target`'s dtype (kind: the same in every call)."""
    kind = target.dtype.kind
    if kind == "f":  # a float64 value stored into float32 (in some call) rounds once more
        if meta["frac"] is not None:
            return meta
        return summary(meta["bound"], None, meta["rel"] + EPS, meta["abs"], meta["nonneg"])
    if meta["frac"] is None:  # truncation or != 0 amplifies one-ulp differences
        raise Reject("inexact value into an integer or bool array")
    if kind == "b":
        return summary(1.0, 0, nonneg=True)
    return summary(meta["bound"], 0, nonneg=meta["nonneg"])


def _join(old: Var, written: dict) -> dict:
    """The summary of an array holding some of its old values and some written ones."""
    frac = None if old.frac is None or written["frac"] is None else max(old.frac, written["frac"])
    return summary(max(old.bound, written["bound"]), frac, max(old.rel, written["rel"]),
                   max(old.abs, written["abs"]), old.nonneg and written["nonneg"])


# The builder ---------------------------------------------------------------------------------

SUPPORTED_RESULT = {np.dtype(d) for d in ("float32", "float64", "int32", "int64", "bool")}
FAMILIES = ("unary", "binary", "reduce", "shape", "select", "helper", "constant_valued", "scalar")
# Writes are drawn twice as often as other families: each needs a target array first.
FEATURE_FAMILIES = {"writes": ("create", "write", "write"), "aug": ("aug", "aug"), "gather": ("index_array", "gather"),
                    "state": ("state",)}
INT_FAMILIES = ("int_expr", "int_slice", "count")  # where Python ints exist (an int argument, box.t)
NEW_VALUES = ("create", "index_array", "gather", "int_expr", "int_slice")  # families defining a variable
EFFECTS = ("write", "aug", "state", "count")  # families changing existing variables


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

    def pick(self, pool: list[Var]) -> Var:
        """One of `pool`, the latest first (shrinking prefers index 0)."""
        if not pool:
            raise Reject("no operand of that kind")
        return pool[-1 - self.draw(st.integers(0, len(pool) - 1))]

    def arrays(self) -> list[Var]:
        return [v for v in self.vars if isinstance(v.sample, np.ndarray) and v.ndim >= 1]

    def python_ints(self) -> list[Var]:
        return [v for v in self.vars if v.const and type(v.sample) is int]

    def const(self) -> Var:
        extra = [v for v in self.vars if v.const]  # Box attributes, Python int variables
        if extra and self.draw(st.booleans()):
            return self.draw(st.sampled_from(extra))
        value = self.draw(st.sampled_from(INT_CONSTS + FLOAT_CONSTS + BOOL_CONSTS))
        frac = 3 if isinstance(value, float) else 0
        return Var(repr(value), value, abs(float(value)), frac, nonneg=value >= 0, const=True)

    def operand(self) -> Var:
        if "consts" in self.features and self.draw(st.booleans()):
            return self.const()
        return self.var()

    def int_operand(self) -> Var:
        """A Python int variable or an int literal."""
        if self.draw(st.booleans()):
            return self.pick(self.python_ints())
        value = self.draw(st.sampled_from(INT_CONSTS))
        return Var(repr(value), value, abs(float(value)), 0, nonneg=value >= 0, const=True)

    def env(self) -> dict:
        """The function's local variables (`box.w`, `box.t` are read through the namespace's `box`)."""
        return {v.name: v.sample for v in self.vars if v.name.isidentifier()}

    def evaluate(self, expr: str, rule_args: list[Var], rule, ignore_divide: bool = False,
                 python_int: bool = False) -> tuple[Any, dict]:
        meta = rule(*rule_args)
        sample = self.peek(expr, ignore_divide)
        if python_int:
            if type(sample) is not int:
                raise Reject("result type")
        elif not isinstance(sample, (np.ndarray, np.generic)) or sample.dtype not in SUPPORTED_RESULT:
            raise Reject("result type")
        return sample, meta

    def peek(self, expr: str, ignore_divide: bool = False) -> Any:
        """NumPy's value of `expr` on the samples."""
        with np.errstate(all="raise", divide="ignore" if ignore_divide else "raise"):
            try:
                return eval(expr, self.namespace, self.env())
            except Exception as e:  # noqa: BLE001 - NumPy rejects the combination
                raise Reject(str(e)) from None

    def execute(self, line: str) -> dict:
        """Run a statement that changes existing values and return its locals. It runs on copies
        first: NumPy may reject it after writing part of an array (whose summary would not know)."""
        trial_namespace = {**self.namespace, "box": copy.deepcopy(self.namespace["box"])}
        for namespace, env in ((trial_namespace, copy.deepcopy(self.env())), (self.namespace, self.env())):
            with np.errstate(all="raise"):
                try:
                    exec(line, namespace, env)  # noqa: S102 - our own generated code
                except Exception as e:  # noqa: BLE001 - NumPy rejects the combination
                    raise Reject(str(e)) from None
        return env

    def inherited(self, expr: str, meta: dict) -> dict:
        """The flags a value computed by `expr` has: `transposed` if it transposes or reads a
        transposed value, `data_shaped` if it reads a data-shaped one (or `meta` says so)."""
        names = set(re.findall(r"[A-Za-z_]\w*", expr))
        operands = [v for v in self.vars if v.name in names]
        return {"transposed": meta.get("transposed") or ".T" in expr or "np.transpose" in expr
                or any(v.transposed for v in operands),
                "data_shaped": meta.get("data_shaped") or any(v.data_shaped for v in operands)}

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
            sample, meta = self.evaluate(expr, [x], _same)
            return expr, sample, meta | _view_of(x)
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
            _fixed_shape(x)
            expr = template.format(x.name)
            return (expr,) + self.evaluate(expr, [x], CONSTANT_VALUED[template])
        if family == "scalar":
            template = draw(st.sampled_from(list(SCALARS)))
            x, c = self.var(), self.const()
            expr = template.format(x.name, c=c.name)
            return (expr,) + self.evaluate(expr, [x, c], SCALARS[template])
        if family == "helper":
            return self.helper()
        if family in NEW_VALUES:
            return getattr(self, family)()
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
        self.used |= sub.used
        return f"{name}({a.name}, {b.name})", result.sample, _meta(result)

    # keys

    def key(self, x: Var, kinds: tuple[str, ...] = tuple(KEYS)) -> tuple[str, str, Var | None]:
        """A key into `x` of one of `kinds` that the variables allow: (its text, its kind, the named
        mask it is or None)."""
        operands = {"idx": [v for v in self.vars if v.index], "k": self.python_ints(),
                    "m": [v for v in self.arrays() if v.kind == "b" and v.exact
                          and v.sample.shape == x.sample.shape[:v.ndim]]}
        options = [(kind, template) for kind in kinds for template in KEYS[kind]
                   if all(pool or "{%s}" % name not in template for name, pool in operands.items())
                   and not (x.data_shaped and ".shape" in template)]
        if not options:
            raise Reject("no key")
        kind, template = options[self.draw(st.integers(0, len(options) - 1))]
        fill = {name: self.pick(pool) for name, pool in operands.items() if "{%s}" % name in template}
        if "{c}" in template:
            fill["c"] = self.const()
            _compare(x, fill["c"])
        text = template.format(x=x.name, **{name: v.name for name, v in fill.items()})
        if kind == "int" and np.size(self.peek(f"{x.name}[{text}]")) == 0:
            raise Reject("an empty slice with computed bounds does not compile")
        return text, kind, fill.get("m")

    # new values: arrays to write into, index arrays, reads by index arrays and masks, Python ints

    def create(self) -> tuple[str, Any, dict]:
        """`np.zeros(x.shape, ...)`, `x.copy()`: an array of the function's own."""
        template = self.draw(st.sampled_from(list(CREATE)))
        x = self.pick(self.arrays())
        if CREATE[template] is not _same:  # `x.shape` of it does not compile either
            _fixed_shape(x)
        expr = template.format(x.name)
        return (expr,) + self.evaluate(expr, [x], CREATE[template])

    def index_array(self) -> tuple[str, Any, dict]:
        """`np.arange(-1, 2)`: an int array the program builds to index with."""
        expr = self.draw(st.sampled_from(INDEX_ARRAYS))
        sample, meta = self.evaluate(expr, [], lambda: summary(2.0, 0))
        return expr, sample, meta | {"index": True}

    def gather(self) -> tuple[str, Any, dict]:
        """`x[idx]`, `x[np.arange(n), y]`, `np.take(x, idx, axis=k)`, `x[m]`: a copy of some of x's values."""
        x = self.pick(self.arrays())
        indices = [v for v in self.vars if v.index]
        if indices and self.draw(st.booleans()):
            axis = self.draw(st.integers(-x.ndim, x.ndim - 1))
            expr, kind, text = f"np.take({x.name}, {self.pick(indices).name}, axis={axis})", "take", ""
        else:
            text, kind, _ = self.key(x, ("index", "mask"))
            expr = f"{x.name}[{text}]"
        sample, meta = self.evaluate(expr, [x], _same)
        if isinstance(sample, np.ndarray) and np.may_share_memory(sample, x.sample):
            # A 0-d index array indexes as an int: a view at computed positions, as x[k].
            return expr, sample, meta | _view_of(x) | {"computed_view": True}
        # NumPy lays out x[:, idx] in another order (the compiler's gather transposes); a mask
        # read's length depends on the data.
        return expr, sample, meta | {"transposed": text.startswith((":", ".")), "data_shaped": kind == "mask"}

    def int_expr(self) -> tuple[str, Any, dict]:
        """`k = i + 1`: Python int arithmetic (the compiler's runtime ints)."""
        template = self.draw(st.sampled_from(list(INT_EXPRS)))
        k, c = self.pick(self.python_ints()), self.int_operand()
        expr = template.format(k.name, c.name)
        sample, meta = self.evaluate(expr, [k, c], INT_EXPRS[template], python_int=True)
        return expr, sample, meta | {"const": True}

    def int_slice(self) -> tuple[str, Any, dict]:
        """`x[k:k + 2]`, `x[:, k]`: basic indexing at Python int positions, a view of x."""
        x = self.pick(self.arrays())
        expr = f"{x.name}[{self.key(x, ('int',))[0]}]"
        sample, meta = self.evaluate(expr, [x], _same)
        return expr, sample, meta | _view_of(x) | {"computed_view": isinstance(sample, np.ndarray)}

    # effects: writes into arrays, augmented assignment, counters

    def target(self) -> Var:
        """An array to write into: one the program made (not a view of another) or, with
        arg_writes, one the caller sees; never an index array (its values must stay in range).
        Without one, the program makes one first (`a = np.zeros(x.shape)`, `a = x.copy()`)."""
        pool = [v for v in self.vars if self.writable(v)]
        if pool:
            return self.pick(pool)
        made = self.define("create")
        if not self.writable(made):
            raise Reject("made a NumPy scalar")
        return made

    def writable(self, v: Var) -> bool:
        return (isinstance(v.sample, np.ndarray) and v.ndim >= 1 and v.base is None and not v.index
                and (not v.caller or "arg_writes" in self.features))

    def stored_value(self, a: Var, kind: str, mask: Var | None) -> Var:
        """A value to store at a key of `kind` into `a`: through a computed mask, one value or one
        row for all, or `y[m]` (other shapes run in the interpreter: docs/what-compiles.md)."""
        if kind != "mask":
            return self.operand()
        if mask is not None and self.draw(st.booleans()):
            y = self.pick([v for v in self.arrays() if v.sample.shape == a.sample.shape])
            return replace(y, name=f"{y.name}[{mask.name}]")
        v = self.operand()
        rows = a.sample.shape[mask.ndim:] if mask is not None else ()
        if not v.const and np.shape(v.sample) not in ((), rows):
            raise Reject("rows through a mask")
        return v

    def writes_into(self, a: Var, written: dict) -> list[tuple[Var, dict]]:
        """The new summaries of `a` and of every view of it, once `written` values are stored into a."""
        return [(v, _join(v, written)) for v in self.vars if a.name in (v.name, v.base)]

    def effect(self, line: str, changes: list[tuple[Var, dict]]) -> None:
        """Run `line` on the samples and give the variables it changes their new summaries."""
        env = self.execute(line)
        for var, meta in changes:
            k = next(k for k, v in enumerate(self.vars) if v.name == var.name)
            self.vars[k] = replace(var, sample=eval(var.name, self.namespace, env), **meta)  # noqa: S307
        self.lines.append(line)

    def write(self) -> None:
        """`a[key] = v`."""
        a = self.target()
        text, kind, mask = self.key(a)
        v = self.stored_value(a, kind, mask)
        self.effect(f"{a.name}[{text}] = {v.name}", self.writes_into(a, _stored(a, _meta(v))))

    def augment(self, a: Var, where: str, v: Var) -> None:
        """`a{where} op= v`, in place: NumPy computes old op v and casts it to a's dtype."""
        op = self.draw(st.sampled_from(list(AUG_OPS)))
        self.effect(f"{a.name}{where} {op}= {v.name}", self.writes_into(a, _stored(a, AUG_OPS[op](a, v))))

    def aug(self) -> None:
        """`a[key] op= v` or `a op= v`."""
        a = self.target()
        if self.draw(st.booleans()):
            self.augment(a, "", self.operand())
        else:
            text, kind, mask = self.key(a)
            self.augment(a, f"[{text}]", self.stored_value(a, kind, mask))
            if kind == "mask":
                self.used.add("mask_aug")

    def state(self) -> None:
        """`box.w -= v`: an update of the caller's state array, as an optimizer step."""
        self.augment(next(v for v in self.vars if v.name == "box.w"), "", self.operand())

    def count(self) -> None:
        """`k += c`, `box.t = box.t + 1`: a Python int counter."""
        k, c = self.pick(self.python_ints()), self.int_operand()
        line = self.draw(st.sampled_from(COUNT)).format(k.name, c.name)
        self.effect(line, [(k, _add(k, c))])

    def statement(self, families) -> Var | None:
        for _ in range(8):
            family = self.draw(st.sampled_from(families))
            try:
                if family in EFFECTS:
                    getattr(self, family)()
                    self.used.add(family)
                    return None
                return self.define(family)
            except Reject:
                continue
        return None

    def define(self, family: str) -> Var:
        """`v = <expr>` with an expression of `family`."""
        expr, sample, meta = self.candidate(family)
        v = self.new_var(sample, meta | self.inherited(expr, meta))
        self.lines.append(f"{v.name} = {expr}")
        self.used.add(family)
        return v

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
        same = [v for v in self.vars if not v.const and v.name.isidentifier() and type(v.sample) is type(s1)
                and np.shape(v.sample) == np.shape(s1) and v.sample.dtype == s1.dtype]
        kept = self.pick(same) if same and self.draw(st.booleans()) else None
        if kept is not None:
            # One side keeps an existing value itself (an argument, say): after the branch the name is
            # that very object on one path and a new array on the other.
            e1, s1, m1 = kept.name, kept.sample, {"bound": kept.bound, "rel": kept.rel, "abs": kept.abs,
                                                  "nonneg": kept.nonneg, "frac": kept.frac}
        taken = bool(eval(cond, self.namespace, self.env()))
        meta = {"bound": max(m1["bound"], m2["bound"]), "rel": max(m1["rel"], m2["rel"]),
                    "abs": max(m1["abs"], m2["abs"]), "nonneg": m1["nonneg"] and m2["nonneg"],
                    "frac": None if m1["frac"] is None or m2["frac"] is None else max(m1["frac"], m2["frac"])}
        if kept is not None:  # writes into one show in the other, on the path that kept it
            meta |= {"base": kept.base or kept.name, "caller": kept.caller, "transposed": kept.transposed,
                     "data_shaped": kept.data_shaped, "computed_view": kept.computed_view}
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
        try:
            exec("\n".join(code), self.namespace, env)  # noqa: S102
        except ValueError as e:  # the max of an empty array
            raise Reject(str(e)) from None
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


def _values(rng: np.random.Generator, dtype: str, shape: tuple, index: bool = False) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if index:
        return rng.integers(*INDEX_VALUES, shape).astype(dtype)
    if kind == "f":
        return (rng.integers(-16, 17, shape) / 8).astype(dtype)
    if kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-3, 4, shape).astype(dtype)


def _shape(pattern: tuple, dims: list[int]) -> tuple:
    offset = len(dims) - len(pattern)
    return tuple(dims[offset + i] if full else 1 for i, full in enumerate(pattern))


def _reordered(v: Var) -> bool:
    """Whether returning or storing `v` runs in the interpreter: NumPy lays it out in another
    order than C, or it is computed from a transpose (with two axes of size > 1, where order shows)."""
    if not isinstance(v.sample, np.ndarray) or sum(n > 1 for n in v.sample.shape) < 2:
        return False
    return v.transposed or not c_ordered(v.sample)


def _out_of_range(index):
    """`index` (an array or a NumPy scalar, kept so) with its first value beyond every axis."""
    out = np.array(index)
    out.flat[0] = OUT_OF_RANGE
    return out[()] if isinstance(index, np.generic) else out


def _argument(name: str, sample, index: bool, out_of_range: bool) -> Var:
    """An argument's variable, holding a copy of the first call's value (writes must not change the calls)."""
    kind = sample.dtype.kind
    bound = (OUT_OF_RANGE if out_of_range else -INDEX_VALUES[0]) if index else ARG_BOUND[kind]
    return Var(name, copy.deepcopy(sample), bound, ARG_FRAC[kind], nonneg=kind == "b", index=index, caller=True)


FLAGS = ("unary", "binary", "consts", "reduce", "shape", "select", "helper", "tuple", "int_div_zero", "attr",
         "new_shapes", "new_dtypes", "constant_valued", "scalar", "scalar_args", "mismatch",
         "writes", "arg_writes", "aug", "gather", "index_args", "oob", "int_arg", "state")
# Flags that shape the signature or the calls rather than the statements.
CALL_FLAGS = {"tuple", "attr", "consts", "new_shapes", "new_dtypes", "scalar_args", "mismatch", "arg_writes",
              "index_args", "oob", "int_arg", "state"}


@st.composite
def programs(draw) -> Program:
    features = {name for name in FLAGS if draw(st.booleans())}
    if "index_args" not in features:
        features.discard("oob")
    if draw(st.booleans()):
        features |= {name for name in DYNAMIC if draw(st.booleans())}
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(2, MAXDIM)) for _ in range(rank)]

    def spec(dtypes: list[str], index: bool = False) -> tuple:
        """An argument's (dtype, broadcast pattern, whether it is an index array)."""
        dtype = draw(st.sampled_from(dtypes))
        length = rank - draw(st.integers(0, rank))
        return dtype, tuple(not draw(st.booleans()) for _ in range(length)), index

    specs = [spec(DTYPES) for _ in range(draw(st.integers(1, 3)))]
    if "index_args" in features:
        specs.append(spec(["int64", "int32"], index=True))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    loop_ns = [draw(st.integers(0, 3)) for _ in range(3)]
    int_args = [draw(st.integers(0, 2)) for _ in range(3)] if "int_arg" in features else [0] * 3
    counters = [draw(st.integers(0, 2)) for _ in range(3)] if "state" in features else [0] * 3

    names = [f"a{i}" for i in range(len(specs))]
    scalar_args = "scalar_args" in features  # 0-d arguments are NumPy scalars, not 0-d arrays

    def value(dtype, shape, index=False):
        v = _values(rng, dtype, shape, index)
        return np.asarray(v)[()] if scalar_args and shape == () else v

    def box(scale: float, shape: tuple, call: int) -> Box:
        return Box(scale, _values(rng, "float32", shape), counters[call])

    samples = [value(dtype, _shape(pattern, dims), index) for dtype, pattern, index in specs]
    box0 = box(0.5, tuple(dims), 0)
    variables = [_argument(n, s, index, "oob" in features) for n, s, (_, _, index) in zip(names, samples, specs)]
    namespace = {"np": np, "__n__": loop_ns[0], "box": copy.deepcopy(box0)}
    if "attr" in features:
        variables.append(Var("box.scale", 0.5, 1.5, 1, nonneg=True, const=True))
    if "int_arg" in features:
        variables.append(Var("i", int_args[0], 2.0, 0, nonneg=True, const=True))
    if "state" in features:
        variables += [Var("box.w", namespace["box"].w, ARG_BOUND["f"], ARG_FRAC["f"], caller=True),
                      Var("box.t", counters[0], 2.0, 0, nonneg=True, const=True)]
    b = Builder(draw, features, variables, namespace)

    families = tuple(f for f in FAMILIES if f in features) + tuple(
        family for flag, group in FEATURE_FAMILIES.items() if flag in features for family in group)
    families = (families + (INT_FAMILIES if features & {"int_arg", "state"} else ())) or ("binary",)
    if "int_div_zero" in features:
        families += ("int_div_zero",)
    for _ in range(draw(st.integers(1, 6))):
        b.statement(families)
        if features & set(DYNAMIC) and draw(st.booleans()):
            b.dynamic(draw(st.sampled_from(sorted(features & set(DYNAMIC)))))
    stored = []
    if "attr" in features:  # compiled code stores arrays only (not NumPy scalars) to attributes
        arrays = [v for v in b.vars if isinstance(v.sample, np.ndarray)]
        if arrays:
            stored.append(arrays[-1 - draw(st.integers(0, len(arrays) - 1))])
            b.lines.append(f"box.value = {stored[0].name}")
    outputs = [b.var() for _ in range(draw(st.integers(1, 3)) if "tuple" in features else 1)]
    outputs = [v for v in outputs if not v.const] or [b.vars[0]]
    if any(_reordered(v) for v in outputs + stored):
        b.used.add("reordered")
    if any(v.computed_view for v in outputs + stored):
        b.used.add("computed_view")
    ret = ", ".join(v.name for v in outputs) + ("," if "tuple" in features and len(outputs) == 1 else "")

    uses_box = bool(features & {"attr", "state"})
    params = (names + (["n"] if "loop" in b.used else []) + (["i"] if "int_arg" in features else [])
              + (["box"] if uses_box else []))
    body = (["global LAST"] if "global_write" in b.used else []) + b.lines + [f"return {ret}"]
    source = ("import numpy as np\n\nLAST = None\n\n\n"
              + "".join(h + "\n\n" for h in namespace.get("__helpers__", []))
              + f"def f({', '.join(params)}):\n" + "".join(f"    {line}\n" for line in body))

    def args(arrays, call: int, state: Box = box0):
        """The arguments of a call with `arrays`, and the loop count, int argument and box of `call`."""
        extra = (([loop_ns[call]] if "loop" in b.used else []) + ([int_args[call]] if "int_arg" in features else [])
                 + ([state] if uses_box else []))
        return tuple(arrays) + tuple(extra)

    calls = [args(samples, 0), args(samples, 0),
             args([value(d, np.shape(s), index) for (d, _, index), s in zip(specs, samples)], 1,
                  box(1.5, tuple(dims), 1))]
    if "new_shapes" in features:
        new_dims = [draw(st.integers(2, MAXDIM)) for _ in range(rank)]
        arrays = [value(d, _shape(p, new_dims), index) for d, p, index in specs]
        calls += [args(arrays, 2, box(0.5, tuple(new_dims), 2))] * 2
    if "mismatch" in features:
        # One argument's dims vary while the others keep theirs: its dims relax to
        # dynamic and meet the others' static ones; then a size NumPy may reject.
        k = draw(st.integers(0, len(specs) - 1))
        for _ in range(draw(st.integers(2, 3))):
            new_dims = [draw(st.integers(2, MAXDIM + 1)) for _ in range(rank)]
            arrays = list(samples)
            arrays[k] = value(specs[k][0], _shape(specs[k][1], new_dims), specs[k][2])
            calls.append(args(arrays, 0))
    if "new_dtypes" in features:
        arrays = [value(SAME_KIND[d], np.shape(s), index) for (d, _, index), s in zip(specs, samples)]
        calls += [args(arrays, 0), args(arrays, 1)]
    if "oob" in features and "index_args" in features:  # IndexError in the interpreter, so in compiled code
        calls.append(args([_out_of_range(s) if index else s for (_, _, index), s in zip(specs, samples)], 0))
    used = b.used | (features & CALL_FLAGS)
    return Program(source, calls, used, int_div_zero="int_div_zero" in used)
