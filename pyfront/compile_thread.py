"""IREE compiles off the caller's thread: JANUS's asynchronous graph generation.

What runs here is `PreparedVariant.build` (runtime/jit.py): `iree-compile` on a
module already lowered on the caller's thread, then loading it. It reads
nothing of the call or of Python state (graph generation, which does, stays on
the caller's thread, where the state cannot change under it), so the caller
may meanwhile run the function in the interpreter and mutate anything.

* One daemon thread for the whole process, started on first use, compiles one
  module at a time in submission order: `iree-compile` already uses every core,
  and two at once would only delay both. It runs below the caller's priority
  (runtime/compiler_process.py, BACKGROUND_NICENESS): where no core is idle, the calls that
  run in the interpreter meanwhile come first.
* A process that exits with a compile pending does not wait for it: the thread
  is a daemon, and its `iree-compile` child dies with the process
  (runtime/compiler_process.py). Nothing is lost but the compile.
* A forked child has no compile thread: its pending compiles are abandoned
  (`Pending.abandoned`), and the compiled function compiles them again there.

`submit(Pending(build))` queues a compile; the compiled function installs its
outcome (a variant, or the error to remember) on a later call of its key, or
when `pyfront.wait` is called (pyfront/api.py). `Pending(build).run()` is the
same compile on the caller's thread.
"""

from __future__ import annotations

import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any


class Pending:
    """A compile submitted to the compile thread; `done` is set once it has an outcome."""

    def __init__(self, build: Callable[[], Any]):
        self._build = build
        self.done = threading.Event()
        self.variant: Any = None
        self.error: BaseException | None = None
        self.abandoned = False  # the process forked before it finished (the child recompiles)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the compile has an outcome (or `timeout` seconds pass); whether it has."""
        return self.done.wait(timeout)

    def run(self) -> None:
        """Compile, here; the outcome (never an exception) is in `variant` or `error`."""
        try:
            self.variant = self._build()
        except BaseException as e:  # noqa: BLE001 - the outcome belongs to the calls that install it
            self.error = e  # (signal handlers run on the main thread: nothing here is asynchronous)
        finally:
            self._build = None  # the prepared module's text, no longer needed
            self.done.set()


_queue: queue.SimpleQueue | None = None
_lock = threading.Lock()
_unfinished: weakref.WeakSet = weakref.WeakSet()


def submit(pending: Pending) -> None:
    """Run `pending` on the compile thread, after those submitted before it."""
    global _queue
    with _lock:
        if _queue is None:
            _queue = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(_queue,), name="pyfront-compile", daemon=True).start()
        _unfinished.add(pending)
        _queue.put(pending)


def _serve(jobs: queue.SimpleQueue) -> None:
    while True:
        pending = jobs.get()
        pending.run()
        with _lock:
            _unfinished.discard(pending)


def _after_fork_in_child() -> None:
    """The compile thread did not survive the fork: abandon what it had, start afresh on next submit."""
    global _queue, _lock
    _lock = threading.Lock()  # it may have been held by the thread that no longer exists
    _queue = None
    for pending in list(_unfinished):
        pending.abandoned = True
        pending.done.set()
    _unfinished.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
