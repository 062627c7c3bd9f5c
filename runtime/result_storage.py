"""Result storage: the buffers IREE writes state results into.

A function compiled after `bind-result-storage` has one trailing
`!hal.buffer_view {iree.abi.output = j}` argument per state result j, and IREE
writes result j into the buffer passed there. The caller may offer, per such
argument, a candidate: a device-resident array that a previous commit
displaced from its state slot (runtime/variant.py). The candidate's buffer is
reused only if nothing but the caller can observe it:

* it is still the resident array its table entry names, C-contiguous, of the
  result's shape and dtype;
* the caller holds it by one reference, which it hands over, and every object
  on its `.base` chain (the owner of IREE's mapping, runtime/iree_backend.py's
  `_MappingOwner`) is held only by the object before it; the array's weak
  references are the ones it had when it became resident (the device table's
  entry). Anything user code can still reach
  it by (the old value kept in a list, a view, a memoryview, `np.frombuffer`,
  a ctypes object, a weak reference) holds one of those objects and shows up
  in their reference counts (CPython's exact counts: `sys.getrefcount`).
  Raw addresses (`a.ctypes.data`) are outside Python's semantics and not
  tracked.

Otherwise a fresh buffer of the result's size is allocated, which is what IREE
would have done. Writing into a reused buffer changes nothing any Python code
can see, and the state's current value (an input of the call) is never the
storage, so a call that deopts after the write leaves all state as it was.
"""

from __future__ import annotations

import math
import re
import sys
import weakref
from dataclasses import dataclass

import numpy as np

# "%input2: !hal.buffer_view {iree.abi.output = 1 : index}" in IREE's declaration of the function.
_STORAGE_ARG = re.compile(r"%input\d+: !hal\.buffer_view \{iree\.abi\.output = (\d+) : index\}")
_RESULT = re.compile(r"%output\d+: (tensor<[^>]*>|[\w.!]+)")


@dataclass(frozen=True)
class StorageSpec:
    """What one storage argument must hold: result `index` of `shape` and `dtype`."""

    index: int
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def storage_specs(declaration: str, scalar_types: dict[str, type]) -> list[StorageSpec]:
    """The storage arguments of a function, in order, from IREE's `iree.abi.declaration`."""
    args, _, results = declaration.partition("->")
    result_types = _RESULT.findall(results)
    specs = []
    for index in map(int, _STORAGE_ARG.findall(args)):
        *dims, element = result_types[index].removeprefix("tensor<").removesuffix(">").split("x")
        specs.append(StorageSpec(index, tuple(map(int, dims)), np.dtype(scalar_types[element])))
    return specs


def only_the_callers(array: np.ndarray, weakrefs: int) -> bool:
    """Whether the caller's one reference (a local it hands over) is all that reaches `array`.

    Expected counts: 3 for `array` (the caller's local, this parameter and
    getrefcount's argument) and for each link of its base chain (the reference
    from the object before it, the local `link` and getrefcount's argument);
    `weakrefs` weak references to `array` (those it had when it became
    resident: the device table's entry).
    """
    if sys.getrefcount(array) != 3 or weakref.getweakrefcount(array) != weakrefs:
        return False
    link = array.base
    while link is not None:
        if sys.getrefcount(link) != 3 or weakref.getweakrefcount(link):
            return False
        link = link.obj if isinstance(link, memoryview) else getattr(link, "base", None)
    return True
