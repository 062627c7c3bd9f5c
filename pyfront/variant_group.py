"""The compiled variants that share one dispatch key, and how a call picks one of them.

The dispatch key (specialize.key_of) sees the arguments' types, dtypes, shapes and
specialized values, but not the Python state behind an object argument: for a
recursive function over a tree of `Leaf`/`Node` objects every call has the key
`(Node,)`, while each variant was compiled for one tree shape and guards it with
state guards ("arg0.left is a Node", "arg0.left.word is 3"). A `VariantGroup`
keeps every variant compiled for one key and picks the one whose entry guards
hold, instead of retiring a variant each time another tree comes by.

How a call picks (cost model):
- one variant: its entry guards are checked, as without groups (no extra cost);
- several: the group reads every *state path* that some variant's state guards
  read (the union, in first-seen order) and summarizes each value (`summary`:
  the class of an object, the value of a constant, dtype and shape of an array,
  the length of a list); the tuple of summaries is hashed and looked up in a
  dict that remembers which variant last held for that signature. A hit costs
  one read per path plus one dict lookup, independent of the number of
  variants; then the variant's own entry guards run as always.
- a miss (or a hit whose guards fail) tries each variant's entry guards in turn
  (variants x guards reads) and remembers the one that holds.
The signature is only a hint: correctness stays with each variant's entry
guards, which run on every call, so a tree mutated between calls (a word
changed, a subtree swapped) is never served by a stale variant.

The signature cache is bounded (`MAX_SIGNATURES`, cleared when full), since a
path's summary may include values no variant specializes on. `failed`
remembers, per signature, why compiling a variant for it failed, so the same
failure is not compiled again (the `MAX_FAILED` most recent ones). The paths
are those the live variants' guards read: adding or removing a variant that
changes them changes the signature's layout, and both tables are forgotten.
Mutations happen under the compiled function's lock; lookups read a tuple
snapshot of the variants.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pyfront.bounded import remember
from pyfront.dialects.state_path import Path
from pyfront.interrupts import reraise_if_asynchronous
from pyfront.runtime.results import make_resolver
from pyfront.runtime.variant import Deopt
from pyfront.specialize import is_constant, key_of

MAX_SIGNATURES = 1024
MAX_FAILED = 64
_UNREADABLE = ("unreadable",)  # reading the path raised (e.g. a Leaf has no .left)


def summary(value: Any) -> Any:
    """A small hashable summary of a value in state: what variants differ on."""
    t = type(value)
    if t is np.ndarray:
        return (t, value.dtype.str, value.shape)
    if t in (list, tuple):
        return (t, len(value))
    if t is dict:
        return (t, len(value))
    if t is float:
        return (t, value, np.copysign(1.0, value))  # 0.0 and -0.0 are different constants
    if t in (int, bool, str, bytes, type(None)):
        return (t, value)
    if is_constant(value):
        return key_of(value)  # by value, or holding the object (a dead one's address may be reused)
    return t  # objects (their class) and NumPy scalars (runtime values: their type)


class VariantGroup:
    """Variants compiled for one dispatch key; `select(args)` finds the one that holds."""

    def __init__(self, fn: Any):
        self.fn = fn
        self.variants: tuple = ()
        self.paths: list[Path] = []
        self._resolvers: list = []
        self._by_signature: dict[tuple, Any] = {}
        self.failed: dict[tuple, str] = {}  # signature -> why compiling for it failed
        self.compiling: Any = None  # the variant being compiled for this key (pyfront/api.py's Compiling)

    def signature(self, args: tuple) -> tuple:
        out, errors = [], []
        for resolve in self._resolvers:
            try:
                out.append(summary(resolve(args)))
            except Exception as e:  # noqa: BLE001 - the path does not exist for these arguments
                errors.append(e)
                out.append(_UNREADABLE)
        # Checked together: another variant's tree shape leaves many paths unreadable on most calls.
        reraise_if_asynchronous(*errors)
        return tuple(out)

    def select(self, args: tuple) -> tuple[Any, Any]:
        """(a variant whose entry guards hold for `args`, its inputs: `Variant.enter`'s list)
        or (None, the first guard failure, a `Deopt`, or None when there is no variant)."""
        variants = self.variants
        if not variants:
            return None, None
        if len(variants) == 1:
            entry = variants[0].enter(args)
            return (None, entry) if isinstance(entry, Deopt) else (variants[0], entry)
        sig = self.signature(args)
        hit = self._by_signature.get(sig)
        first_failure = None
        if hit is not None:
            entry = hit.enter(args)
            if not isinstance(entry, Deopt):
                return hit, entry
            first_failure = entry
        for v in variants:
            if v is hit:
                continue
            entry = v.enter(args)
            if not isinstance(entry, Deopt):
                if len(self._by_signature) >= MAX_SIGNATURES:
                    self._by_signature.clear()
                self._by_signature[sig] = v
                return v, entry
            first_failure = first_failure or entry
        return None, first_failure

    def failure_for(self, args: tuple) -> str | None:
        """Why compiling a variant for these arguments failed before, if it did."""
        return self.failed.get(self.signature(args)) if self.failed else None

    def fail(self, signature: tuple, reason: str) -> None:
        """Remember why compiling a variant for the state of `signature` (`signature(args)`) failed."""
        remember(self.failed, signature, reason, MAX_FAILED)

    def add(self, variant: Any) -> None:
        self.variants = (*self.variants, variant)
        self._index_paths()

    def remove(self, variant: Any) -> None:
        """Forget a variant (retired or evicted); the paths only it read are no longer read."""
        self.variants = tuple(v for v in self.variants if v is not variant)
        self._by_signature = {s: v for s, v in self._by_signature.items() if v is not variant}
        self._index_paths()

    def _index_paths(self) -> None:
        """The state paths the variants' guards read, in first-seen order."""
        paths: dict[str, Path] = {}
        for v in self.variants:
            for g in v.state_guards:
                path = getattr(g, "path", None)  # StateGuards; AliasGuards compare several paths
                if path is not None:
                    paths.setdefault(str(path), path)
        if list(paths) == [str(p) for p in self.paths]:
            return
        self.paths = list(paths.values())
        self._resolvers = [make_resolver(p, self.fn) for p in self.paths]
        self._by_signature = {}
        self.failed = {}
