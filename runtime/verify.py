"""Verified calls: run a new variant's compiled code side by side with the interpreter.

Compiled code is only as right as the compilers under it (IREE 3.13 miscompiles
a few patterns, tests/iree_repro/). As a defence in depth, the first call of
every new variant (and, on request, every Nth call: `Config.verify`) is
*verified*:

1. the variant runs without committing anything (`Variant.run(commit=False)`):
   its result, the lines it would print and the values it would store are
   built, nothing is printed or stored, and its random draws are undone (the
   generators' states after them kept); a failed guard deopts as usual;
2. the values at the variant's state input paths are copied (`copy.deepcopy`);
3. the original function runs in the interpreter, on the real arguments and
   state, with stdout passed through and recorded: this is the call the caller
   gets, so prints, state writes, random draws and warnings happen exactly once;
4. `difference` compares the compiled result with the interpreter's, the
   compiled prints with the recorded output, every stored path with its value
   after the interpreter ran, every other state input path with its copy
   from before (the interpreter must not have changed what the variant reads
   but does not write), every list the variant appends to by its last items,
   and every generator the variant drew from with the state its draws left it
   in (runtime/host_draws.py).

`difference` is the comparison of the differential tests (tests/differential.py
imports it): Python type, dtype, shape, values (floats to a few ulps, float32
to 1e-5 relative since IREE's float32 transcendentals differ from libm by up to
~30 ulp, and so do wider floats computed from them: the variant's
`approximate_dtype`; NaNs equal; the sign of a zero exactly), recursively
through tuples, lists, dicts and objects' `__dict__`; random generators by
their state. It returns a description of the first difference, or None.
Verified calls of a variant whose graph holds such ops (matmuls, sums, ...:
`approximate_dtype`) compare float arrays with an absolute tolerance scaled
to each array's largest magnitude too (`scaled`): matmuls and sums in
another order than NumPy's round differently, by up to that scale times a
few ulps, and an element that cancels to near zero would otherwise retire a
correct variant.
`text_difference` compares printed text the same way: exactly, except that the
floats in a variant's text that approximations computed (`print(loss)` of a
summed loss) may differ in their last digits as the floats themselves may.

What it guarantees: the caller of a verified call always gets the
interpreter's outcome (value or exception); a disagreement is reported in the
`Verdict`, and the JIT (pyfront/api.py) then retires the variant and never
compiles that key again. What it assumes: compiled code has no effects before
commit (runtime/variant.py), so running it first and dropping its outputs is
invisible. Output another thread prints while the interpreter runs is recorded
too; that can only make a verification fail, never pass wrongly.
"""

from __future__ import annotations

import contextlib
import copy
import io
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyfront.runtime.deferred_warnings import DeferredWarning

from pyfront.dialects.state_path import draw_index
from pyfront.runtime.host_draws import is_generator, snapshot

# float32 transcendentals in IREE (e.g. atan2) differ from libm by up to ~30 ulp.
RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
ATOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


def difference(expected: Any, got: Any, where: str = "result", approximate: np.dtype | None = None,
               scaled: bool = False) -> str | None:
    """The first way `got` differs from `expected` (as the differential tests compare), or None.

    `approximate`: the narrowest dtype of the approximations that computed `got`
    (primitives.approximate_dtype): wider floats are compared to its tolerance.
    `scaled` (verified calls): a float array's absolute tolerance is also its
    relative tolerance times its largest finite magnitude, the scale of the
    rounding a matmul or sum in another order than NumPy's makes; elementwise,
    an element that cancels to near zero would differ by far more than its own
    size allows (a float32 logit of -0.0602246 against NumPy's -0.0602293, in
    an array reaching 54, retired model_cnn's forward). The differential tests
    compare without it.
    """
    if type(got) is not type(expected):
        return f"{where}: type {type(got).__name__} != {type(expected).__name__}"
    if isinstance(expected, (np.ndarray, np.generic)):
        if got.dtype != expected.dtype:
            return f"{where}: dtype {got.dtype} != {expected.dtype}"
        if got.shape != expected.shape:
            return f"{where}: shape {got.shape} != {expected.shape}"
        if isinstance(expected, np.ndarray):  # the memory layout is observable (.flags, .strides, .T)
            for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
                if got.flags[flag] != expected.flags[flag]:
                    return (f"{where}: {flag} {got.flags[flag]} != {expected.flags[flag]} "
                            f"(strides {got.strides} != {expected.strides})")
        return _values_differ(np.asarray(expected), np.asarray(got), where, approximate, scaled)
    if isinstance(expected, float):
        return _values_differ(np.asarray(expected), np.asarray(got), where, approximate, scaled)
    if isinstance(expected, (tuple, list)):
        if len(got) != len(expected):
            return f"{where}: length {len(got)} != {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            d = difference(e, g, f"{where}[{i}]", approximate, scaled)
            if d:
                return d
        return None
    if isinstance(expected, dict):
        if got.keys() != expected.keys():
            return f"{where}: keys {list(got)} != {list(expected)}"
        for k in expected:
            d = difference(expected[k], got[k], f"{where}[{k!r}]", approximate, scaled)
            if d:
                return d
        return None
    if is_generator(expected):
        return difference(snapshot(expected), snapshot(got), f"{where} (the generator's state)")
    if hasattr(expected, "__dict__") and not isinstance(expected, type):
        return difference(vars(expected), vars(got), f"{where}.__dict__", approximate, scaled)
    try:
        equal = bool(got == expected)
    except Exception as e:  # noqa: BLE001 - an object whose == raises cannot be shown equal
        return f"{where}: comparing {got!r} with {expected!r} raised {type(e).__name__}"
    return None if equal else f"{where}: {got!r} != {expected!r}"


def _values_differ(expected: np.ndarray, got: np.ndarray, where: str, approximate: np.dtype | None,
                   scaled: bool = False) -> str | None:
    if expected.dtype.kind in "fc":
        dtypes = (expected.dtype,) if approximate is None else (expected.dtype, approximate)
        rtol, atol = max(RTOL.get(d, 1e-12) for d in dtypes), max(ATOL.get(d, 1e-12) for d in dtypes)
        magnitudes = np.abs(expected[np.isfinite(expected)]) if scaled else ()
        if len(magnitudes):
            atol = max(atol, rtol * float(magnitudes.max()))
        close = np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            i = np.unravel_index(np.argmin(close), close.shape) if close.ndim else ()
            return f"{where}: {int(close.size - close.sum())} of {close.size} values differ (at {list(i)}: " \
                   f"{got[i].item()!r} != {expected[i].item()!r})"
        # isclose takes -0.0 == 0.0, but NumPy's sign of zero is part of its answer (1 / x, copysign).
        zeros = (expected == 0) & (got == 0)
        if (np.signbit(got[zeros]) != np.signbit(expected[zeros])).any():
            return f"{where}: sign of zero differs"
        return None
    same = got == expected
    if not np.all(same):
        i = np.unravel_index(np.argmin(same), same.shape) if np.ndim(same) else ()
        return f"{where}: {int(np.size(same) - np.sum(same))} of {np.size(same)} values differ (at {list(i)}: " \
               f"{got[i].item()!r} != {expected[i].item()!r})"
    return None


# A float as repr, str and format specs render one: the text around them must match exactly.
_FLOAT_TEXT = re.compile(r"[-+]?(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|nan|inf)")


def text_difference(expected: str, got: str, approximate: np.dtype | None = None) -> str | None:
    """How printed text `got` differs from the interpreter's `expected`, or None.

    Exactly equal, unless approximations computed the variant's values: then floats at the same
    places may differ as `difference` lets the floats themselves differ."""
    if got == expected:
        return None
    mismatch = f"printed {got!r}, the interpreter printed {expected!r}"
    expected_floats, got_floats = _FLOAT_TEXT.findall(expected), _FLOAT_TEXT.findall(got)
    if approximate is None or _FLOAT_TEXT.split(expected) != _FLOAT_TEXT.split(got) \
            or len(expected_floats) != len(got_floats):
        return mismatch
    d = _values_differ(np.array(expected_floats, np.float64), np.array(got_floats, np.float64), "printed floats",
                       approximate)
    return d and f"{mismatch} ({d})"


def is_due(variant_calls: int, mode: str | int) -> bool:
    """Whether a variant's call, after `variant_calls` earlier ones, is verified under `Config.verify`:
    "first": its first call; "off": none; N: the first and then every Nth."""
    if mode == "first":
        return variant_calls == 0
    return mode != "off" and variant_calls % mode == 0


@dataclass
class Verdict:
    """The interpreter's outcome of a verified call, and how the compiled code compared."""

    result: Any
    error: BaseException | None
    mismatch: str | None  # None: the compiled code agreed

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def verified_run(variant: Any, fn: Any, args: tuple, call: tuple[tuple, dict]) -> Any:
    """Run `variant` uncommitted on the canonical `args` and `fn` in the interpreter on `call`
    (the same objects, as the call was made); a `Deopt` (nothing ran) or a `Verdict`."""
    from pyfront.runtime.variant import Deopt

    pending = variant.run(args, commit=False)
    if isinstance(pending, Deopt):
        return pending
    before = {}
    stored = dict(pending.stores)
    # The arrays the call writes into, as the call starts (a later store may rebind their paths).
    written = [variant.resolver(p)(args) for p, _ in pending.written]
    for path, resolve in zip(variant.input_paths, variant.input_resolvers):
        if not _rebound(path, stored) and draw_index(path) is None:
            try:
                value = resolve(args)
                if any(np.may_share_memory(value, w) for w in written):
                    continue  # another path to a written array: compared through that path
                before[path] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - not copyable: this path is not compared
                pass
    with _recorded_stdout() as out:
        try:
            result, error = fn(*call[0], **call[1]), None
        except Exception as e:  # noqa: BLE001 - the caller gets it; compiled code never raises
            result, error = None, e
    mismatch = _compare(variant, args, pending, result, error, out.getvalue(), before) or next(
        (d for (path, value), array in zip(pending.written, written)
         if (d := difference(array, value, f"array {path} written in place", variant.approximate_dtype,
                                  scaled=_reorders(variant)))), None)
    return Verdict(result, error, mismatch)


def _reorders(variant) -> bool:
    """Whether the variant's graph holds ops that may round otherwise than NumPy (matmuls, sums, exp, ...:
    `approximate_dtype`): only then are its float arrays compared to their scaled tolerance."""
    return variant.approximate_dtype is not None


def _by_list(appended: list) -> dict:
    """Per list path, (the list the call appended to, the items appended, in order)."""
    lists: dict = {}
    for path, lst, item in appended:
        lists.setdefault(path, (lst, []))[1].append(item)
    return lists


def _rebound(path: str, stored: dict) -> bool:
    """Whether the call stores to `path` or to a path it goes through (`arg0.biases` for
    `arg0.biases[0]`): what is there after the call is not what the variant read."""
    return any(path == s or path.startswith(s) and path[len(s)] in ".[" for s in stored)


def _compare(variant, args, pending, result, error, printed: str, before: dict) -> str | None:
    if error is not None:
        return f"the interpreter raised {type(error).__name__}: {error}; the compiled code returned a value"
    d = difference(result, pending.result, "result", variant.approximate_dtype, scaled=_reorders(variant))
    if d:
        return d
    compiled_out = io.StringIO()
    for values, options in pending.printed:
        if not isinstance(options, DeferredWarning):  # the interpreter's call issued the warnings
            print(*values, **options, file=compiled_out)
    d = text_difference(printed, compiled_out.getvalue(), variant.approximate_dtype)
    if d:
        return d
    for path, value in [*pending.stores, *before.items()]:
        try:
            now = variant.resolver(path)(args)
        except Exception as e:  # noqa: BLE001
            return f"state {path}: the interpreter left it unreadable ({type(e).__name__})"
        d = difference(now, value, f"state {path}", variant.approximate_dtype, scaled=_reorders(variant))
        if d:
            return d
    for path, (now, items) in _by_list(pending.appended).items():
        d = difference(list(now[len(now) - len(items):]), items, f"the items appended to {path}",
                       variant.approximate_dtype, scaled=_reorders(variant))
        if d:
            return d
    for generator, state in pending.drawn:
        d = difference(snapshot(generator), state, "a random generator's state after the call")
        if d:
            return f"{d}: the compiled call drew differently from the interpreter"
    return None


class _Tee:
    """Writes go to the real stream and to a record of them; everything else is the stream's."""

    def __init__(self, stream, record: io.StringIO):
        self.stream, self.record = stream, record

    def write(self, text: str) -> int:
        self.record.write(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


# Verified calls record stdout one at a time (a nested one, from a compiled function the
# interpreted one calls, records inside the outer record), so sys.stdout is restored in order.
_stdout_lock = threading.RLock()


@contextlib.contextmanager
def _recorded_stdout() -> Iterator[io.StringIO]:
    """Pass stdout through while recording what is written to it."""
    record = io.StringIO()
    with _stdout_lock:
        saved = sys.stdout
        sys.stdout = _Tee(saved, record)
        try:
            yield record
        finally:
            sys.stdout = saved
