"""Call plans: the array decisions of a steady call, remembered and checked in bulk.

A compiled training step passes the same arrays call after call: the state
arrays it committed the call before (device-resident: their buffers are passed
as they are) and, as result storage, the arrays that commit displaced (two
buffers per parameter, alternating: runtime/result_storage.py). The call path
(runtime/iree_backend.py) decides array by array whether an input is resident,
whether a storage candidate may be written into and whether a result may be
handed out as a resident array; for a small model's step that Python work was
a third of the call (model_gan: 30 inputs, 28 storage arguments, 30 results).

A `CallPlan` records those decisions of one call. A later call whose arrays
are the same objects, in the same state, follows it, having made the same
checks over whole lists at once (`map` with C-level getters, compared with the
lists the plan holds):

* each input the plan passed by its buffer is the live array its table entry
  names, with the entry's shape, dtype and strides (so C-contiguous, as the
  array was when it became resident);
* each input the plan uploaded is not resident now (else the general path passes
  its buffer instead of a copy: not needed for the answer, but a loop that
  starts passing a resident array there would upload it for good);
* each storage candidate the plan wrote into is the live array its entry names,
  of the entry's shape, dtype and strides, writeable, and reachable only
  through the caller's slot: its reference count, its `.base`'s (the mapping's
  owner) and its weak references are those of an array held that way
  (`result_storage.only_the_callers`'s rule; the counts are measured on such
  an array at import, by the same code);
* each storage argument the plan allocated fresh is offered no candidate.

Its resident inputs and storage being the same memory, whether their spans
are disjoint is decided once, when the plan is made; a plan is made only for a
call whose every resident result was written into its storage candidate (the
others are copies), so a call following it needs no span check at all. That
IREE wrote each such result into the buffer passed for it is still checked per
call (`aliased`), and a call where it did not is finished the general way.
A plan holds table entries, which are weak references; an entry drops its
buffer when its array dies (iree_backend._forget), so a plan keeps no memory
alive.
"""

from __future__ import annotations

import sys
import weakref
from operator import attrgetter, call, is_, is_not

import numpy as np
from pyfront.runtime.memory_spans import all_disjoint

_layout = attrgetter("shape", "dtype", "strides")
_storage_layout = attrgetter("shape", "dtype", "strides", "flags.writeable")
_base = attrgetter("base")


def _counts(slots: list, positions: tuple) -> tuple[list, list, list]:
    """Reference counts of the arrays at `positions` of `slots`, of their `.base`s, and their weak references."""
    arrays = list(map(slots.__getitem__, positions))
    return (list(map(sys.getrefcount, arrays)), list(map(sys.getrefcount, map(_base, arrays))),
            list(map(weakref.getweakrefcount, arrays)))


class _Owner:
    """Stands for iree_backend._MappingOwner when measuring `_counts` of an array held only by its slot."""

    __slots__ = ("__array_interface__",)

    def __init__(self, data: np.ndarray):
        self.__array_interface__ = data.__array_interface__


def _alone() -> tuple[int, int]:
    data = np.empty(1)
    (count,), (base_count,), _ = _counts([np.asarray(_Owner(data))], (0,))
    return count, base_count


_ALONE, _BASE_ALONE = _alone()


class CallPlan:
    """What one call did with its arrays; `arguments` says whether another call may do the same."""

    __slots__ = ("aliased", "copied", "counts", "fresh", "input_layout", "modes", "passed", "resident",
                 "resident_entries", "reused", "storage_entries", "storage_layout", "uploaded", "uploads")

    def __init__(self, modes, passed: list, written: frozenset, stored: list, copied: tuple):
        """`passed`: per input, the table entry whose buffer the call passed, or None (uploaded);
        `stored`: per storage argument, (its result, the entry of the candidate written into, or None
        for a fresh buffer); `copied`: the results (indices) that are copies."""
        self.modes, self.passed, self.copied = modes, passed, copied
        self.resident = tuple(k for k, e in enumerate(passed) if e is not None)
        self.resident_entries = [passed[k] for k in self.resident]
        self.input_layout = list(map(_layout, self.resident_entries))
        self.uploads = tuple(k for k, e in enumerate(passed) if e is None)
        self.uploaded = tuple(k for k in self.uploads if k not in written)  # (a written input is never resident)
        entries = [e for _, e in stored]  # per storage argument: the entry, or None (allocate)
        self.reused = tuple(s for s, e in enumerate(entries) if e is not None)
        self.fresh = tuple(s for s, e in enumerate(entries) if e is None)
        self.storage_entries = [entries[s] for s in self.reused]
        self.storage_layout = [(*_layout(e), True) for e in self.storage_entries]  # writeable
        self.aliased = [stored[s][0] for s in self.reused]  # their results
        self.counts = ([_ALONE] * len(self.reused), [_BASE_ALONE] * len(self.reused),
                       [e.weakrefs for e in self.storage_entries])

    @staticmethod
    def holds(passed: list, stored: list) -> bool:
        """Whether a plan may be made of a call: the memory of its resident inputs and storage is disjoint."""
        inputs = {e.span for e in passed if e is not None}  # (an array passed twice is one span)
        return all_disjoint([*inputs, *(e.span for _, e in stored if e is not None)])

    def arguments(self, inputs, storage: list | None, modes, table: dict) -> list | None:
        """The storage candidates to write into, taken from `storage` (handed over, as the general path
        does), if the call's arrays are as they were when the plan was made; else None, nothing taken."""
        if modes is not self.modes and modes != self.modes:
            return None
        arrays = list(map(inputs.__getitem__, self.resident))
        if (not all(map(is_, map(call, self.resident_entries), arrays))
                or list(map(_layout, arrays)) != self.input_layout
                or any(map(table.__contains__, map(id, map(inputs.__getitem__, self.uploaded))))):
            return None
        del arrays
        if storage is None:
            return None if self.reused else []
        if any(map(is_not, map(storage.__getitem__, self.fresh), [None] * len(self.fresh))):
            return None
        candidates = list(map(storage.__getitem__, self.reused))
        if (not all(map(is_, map(call, self.storage_entries), candidates))
                or list(map(_storage_layout, candidates)) != self.storage_layout):
            return None
        del candidates
        if _counts(storage, self.reused) != self.counts:
            return None
        candidates = list(map(storage.__getitem__, self.reused))
        for s in self.reused:
            storage[s] = None  # handed over: see result_storage
        return candidates

