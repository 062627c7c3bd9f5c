"""Recursion through a compiled function fails at the depth where CPython's fails.

A recursive function compiled with pyfront calls itself through its
`CompiledFunction`: each level costs CPython's recursion counter the call of
an object with a Python `__call__` (one unit more than a function call, for
the C call) plus a frame for each of pyfront's functions between `__call__`
and the user's function, where CPython spends one frame. Uncompensated, a
recursion through the interpreter path reached 28% of CPython's depth (279
of 997 levels); compensated, the same depth (tests/test_recursion.py).

The compensation: while a call runs the user's function (`call_user`), the
recursion limit is raised by the units pyfront holds on the stack beneath
it (`held`: 1 + its frames, per level, counted from the stack) plus
`_ENTRY_SPARE`, the units a nested call spends before it can act: the
instance call, the `__call__` frame, `enter()`'s frame. `enter()`'s first
act is a call of an empty function (`_probe`): that frame is one unit above
the spare, so it fails exactly when CPython's call of the user's function at
that level would fail, with CPython's message ("maximum recursion depth
exceeded"). After the probe, pyfront's own work (profiling, compiling) runs
with `_ROOM` more units; the user's function again under the exact limit.

Limits of the compensation (documented in docs/compile.md):
- Plain Python frames inside a level (a recursive helper the compiled
  function calls) get up to `_ENTRY_SPARE` units more than in CPython.
- The outermost compiled call is not compensated: called within 3 frames of
  the limit, it fails where CPython's call would not.
- One thread at a time is compensated (the limit is per process); in other
  threads recursion through compiled functions fails earlier, and their
  plain recursion sees the raised limit.
- A recursion limit set by the user's code inside a compiled call is
  overwritten when that call returns.
- Profiled calls: the instrumented copy's hooks (profiler.py) spend units
  CPython does not, just before the recursive call: measured 3 levels fewer
  than CPython (994 of 997).

Compiled code runs the Python calls it inlined (helpers, methods, a bounded
recursion: graphgen inlines up to 32 levels) without their frames, so it
could return where CPython raises RecursionError. `has_room` checks, before
a variant runs, that the stack holds the frames CPython would push, plus
`_NUMPY_FRAMES` for NumPy's own Python-level functions (`np.mean` runs
three); where it does not, the call runs in the interpreter, which fails or
not exactly as CPython does. The check is conservative by those spare
frames: near the limit, a call CPython could finish runs interpreted.
"""

from __future__ import annotations

import sys
import threading
import types

_ENTRY_SPARE = 3  # instance call + __call__ frame + enter() frame, less CPython's one frame
_ROOM = 1000  # for pyfront's own work inside a nested call (profiling, graph generation)
_NUMPY_FRAMES = 4  # Python frames a NumPy function may run below its call (np.mean -> _mean -> ...)
NO_ROOM_REASON = "near the recursion limit: the frames of the calls compiled code inlined might not fit"

_lock = threading.Lock()
entry_code: types.CodeType | None = None  # CompiledFunction.__call__'s code (set by api.py)


class _State:
    owner: int | None = None  # thread being compensated
    base = 0  # the recursion limit when its outermost compiled call started the user's function
    held = 0  # units pyfront holds beneath the user code running now


def _probe() -> None:
    """Its frame is the exact depth check (see the module docstring)."""


def enter() -> int | None:
    """First act of CompiledFunction.__call__: None, or the limit to set again when it returns.

    The caller sets it itself (`sys.setrecursionlimit(token)` in its `finally`):
    a function of ours would put the call one frame deeper, where, at the
    deepest level CPython allows, the limit cannot be set (too low for the depth).
    """
    if _State.owner is None:
        return None  # not inside a compensated call: nothing to do
    _probe()
    if _State.owner != threading.get_ident():
        return None
    caller_limit = _State.base + _State.held + _ENTRY_SPARE
    sys.setrecursionlimit(caller_limit + _ROOM)
    return caller_limit


def _descend(levels: int) -> None:
    if levels:
        _descend(levels - 1)


def has_room(inlined_frames: int) -> bool:
    """Called by CompiledFunction._call, its frame at the level of the user's function's: could
    CPython push `inlined_frames` more frames below the function here?"""
    if _State.owner != threading.get_ident():
        return _fits(inlined_frames + _NUMPY_FRAMES)
    raised = sys.getrecursionlimit()
    try:  # check under the limit enter() found, not the room it added for pyfront
        sys.setrecursionlimit(_State.base + _State.held + _ENTRY_SPARE)
    except RecursionError:  # this frame is at that limit: no room below it
        return False
    try:
        return _fits(inlined_frames + _NUMPY_FRAMES)
    finally:
        sys.setrecursionlimit(raised)


def _fits(levels: int) -> bool:
    try:
        _descend(levels)
        return True
    except RecursionError:
        return False


def call_user(fn, args: tuple, kwargs: dict):
    """`fn(*args, **kwargs)` for a CompiledFunction call, under the compensated limit."""
    frame, frames = sys._getframe(), 1
    while frame is not None and frame.f_code is not entry_code:
        frame, frames = frame.f_back, frames + 1
    if frame is None:  # not called through a CompiledFunction (e.g. a Profiler used alone)
        return fn(*args, **kwargs)
    del frame
    me = threading.get_ident()
    with _lock:
        if _State.owner is None:
            _State.owner, _State.base, _State.held = me, sys.getrecursionlimit(), 0
            outermost = True
        elif _State.owner == me:
            outermost = False
        else:
            outermost = None
    if outermost is None:
        return fn(*args, **kwargs)  # another thread is compensated
    token = _State.held
    _State.held = token + 1 + frames
    sys.setrecursionlimit(_State.base + _State.held + _ENTRY_SPARE)
    try:
        return fn(*args, **kwargs)
    finally:
        _State.held = token
        if outermost:
            sys.setrecursionlimit(_State.base)
            with _lock:
                _State.owner = None
        else:
            sys.setrecursionlimit(_State.base + token + _ENTRY_SPARE + _ROOM)
