"""The preparation worker: a child process that lowers modules for the compile thread.

Preparing a variant is graph generation, which reads the call and so runs on
the caller's thread, then lowering (runtime/lowering.py: verification, the
layout check, the pass pipeline), which reads only the generated module. Most
of preparing is lowering (model_gan: 0.90 of 1.10 s, model_lstm_lm: 1.75 of
2.09 s; 2-core AMD EPYC), and it is Python and MLIR work that holds the GIL:
on the compile thread it would slow the calls that run in the interpreter
meanwhile as much as on the caller's thread. So where a variant compiles in
the background, its module is lowered here, in another process: the caller
pays for graph generation only, and the lowering takes a core the caller does
not use.

`lower(lowering)` sends the module's text (with its locations, which name the
guard sites) and the rest of the `Lowering` to the worker, which parses it,
runs the same `lower` on it and sends back the record (the JSON value
runtime/lowered_cache.py stores). Lowering is a deterministic function of what
is sent, so the record is the one lowering in the caller's process gives.

* One worker per process, started by `start()` (a large function's calls start
  it halfway to Config.compile_after's threshold: pyfront/api.py) or `ready()`, at the
  compile's lower priority (compiler_process.BACKGROUND_NICENESS), with the
  parent's `sys.path`; it exits when this process does (its stdin closes). It
  is ready after about 0.4 s of start-up (Python, MLIR and pyfront's passes:
  runtime/lowering.py imports no more than lowering needs).
* A module goes to the worker only if it is `ready()` when the variant is
  prepared (runtime/jit.py); otherwise the calling thread lowers it, as it
  would without a worker: a call never waits for the worker to start.
* The worker must run the same code: it reports its `lowered_cache.code_versions()`
  when it starts, and one that differs (a different pyfront or IREE on the
  path) is never used: modules are lowered on the calling thread.
* An `Unsupported` raised in the worker is raised here (its reason, file and
  line); any other error, or the worker's death, raises `LoweringFailed`, which
  the compiled function reports as an internal compiler error. A worker that
  died is started again on the next request.
* A forked child does not use its parent's worker: it starts its own.
* `PYFRONT_PREPARATION_WORKER=0` (or off, false, no) turns it off: modules are
  lowered on the caller's thread, as before it existed (bench/first_steps.py's
  ablation column).

The requests and records are JSON lines on the worker's stdin and stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
from dataclasses import asdict

from pyfront.runtime.compiler_process import BACKGROUND_NICENESS

from pyfront import logs
from pyfront.errors import Definition, Unsupported


def enabled() -> bool:
    """Whether modules compiled in the background may be lowered in the worker (PYFRONT_PREPARATION_WORKER;
    POSIX only: readiness is polled with `select` on its pipe)."""
    return os.name == "posix" and os.environ.get("PYFRONT_PREPARATION_WORKER", "1").strip().lower() not in (
        "0", "false", "no", "off")


class LoweringFailed(RuntimeError):
    """Lowering in the worker failed other than as `Unsupported` (the message says how)."""


def ready(timeout: float = 0.0) -> bool:
    """Whether the worker is ready for a request now (or within `timeout` seconds): started if it was
    not (unless turned off), its code versions reported and equal to this process's."""
    if not enabled():
        return False
    with _lock:
        return _ready(timeout) is not None


def lower(lowering) -> dict:
    """The record of lowering `lowering`'s module (runtime/lowering.py), lowered by the worker
    (waiting for it to be ready if need be)."""
    with _lock:
        worker = _ready(None)
        if worker is None:
            raise LoweringFailed("no preparation worker could start")
        try:
            worker.stdin.write(json.dumps(asdict(lowering)) + "\n")
            worker.stdin.flush()
            reply = worker.stdout.readline()
        except OSError:
            reply = ""
        if not reply:
            _stop()
            raise LoweringFailed(f"the preparation worker died (exit status {worker.poll()})")
    reply = json.loads(reply)
    if "record" in reply:
        return reply["record"]
    if "unsupported" in reply:
        reason, filename, lineno = reply["unsupported"]
        error = Unsupported(reason, filename=filename)
        error.lineno = lineno
        raise error
    raise LoweringFailed(f"{reply['error']} (in the preparation worker)")


_lock = threading.Lock()
_process: subprocess.Popen | None = None
_checked = False  # whether `_process` reported the code versions of this process
_unusable = False  # no worker can start, or one ran other code: modules are lowered on the calling thread


def start() -> None:
    """Start the worker unless it runs (or none is usable, or it is turned off), without waiting for it.

    It is ready ~0.4-0.9 s later (Python, MLIR and the passes' imports): the compiled function
    starts it ahead of a large function's first preparation (pyfront/api.py `_warming_up`)."""
    if enabled():
        with _lock:
            _start()


def _start() -> None:
    global _process, _checked, _unusable
    if _unusable or _process is not None and _process.poll() is None:
        return
    _stop()  # (a worker that died: its pipes are closed)
    try:
        # It ends when its stdin closes (this process exited): no PR_SET_PDEATHSIG, which would
        # tie it to the thread that happened to start it.
        _process = subprocess.Popen(_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
    except OSError as e:
        logs.compile_log.debug("no preparation worker (%s): lowering on the calling thread", e)
        _unusable = True
    _checked = False


def _command() -> list[str]:
    """The worker's command line: this Python, at lower priority, this `sys.path`, `serve()`.

    It lowers its own priority: a `preexec_fn` would make Popen fork this whole process (7 ms
    on the caller's thread here) where it otherwise uses vfork (0.6 ms)."""
    program = (f"import os, sys, json; os.nice({BACKGROUND_NICENESS}); sys.path[:] = json.loads(sys.argv[1]); "
               "from pyfront.runtime.preparation_worker import serve; serve()")
    return [sys.executable, "-c", program, json.dumps(sys.path)]


def _ready(timeout: float | None) -> subprocess.Popen | None:
    """The worker if it is ready within `timeout` seconds (None: however long it takes), started if
    need be (lock held); None if it is not, or none is usable."""
    global _unusable, _checked
    _start()
    if _unusable or _checked:
        return None if _unusable else _process
    if timeout is not None and not select.select([_process.stdout], [], [], timeout)[0]:
        return None  # still starting
    from pyfront.runtime.lowered_cache import code_versions

    versions = _process.stdout.readline()
    try:
        same = json.loads(versions) == list(code_versions())
    except ValueError:
        same = False
    if not same:
        logs.compile_log.debug("the preparation worker runs other code (%s): lowering on the calling thread",
                               versions.strip() or "it exited")
        _stop()
        _unusable = True
        return None
    _checked = True
    return _process


def _stop() -> None:
    """Kill and reap the worker (lock held); the next request starts another."""
    global _process
    process, _process = _process, None
    if process is not None:
        process.kill()
        process.communicate()


@atexit.register
def _stop_at_exit() -> None:
    """Stop the worker with this process (it would end on its stdin's EOF) and close its pipes.

    Without the lock: the compile thread may hold it, waiting for a reply that the kill ends."""
    process = _process
    if process is not None:
        process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):  # (a request half written: nothing left to read it)
                pipe.close()


def _forget_after_fork() -> None:
    """A forked child's worker is its parent's: never used (its pipes are shared), never stopped there."""
    global _process, _checked, _lock
    _process, _checked, _lock = None, False, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def serve() -> None:
    """The worker's loop: a JSON `Lowering` per line of stdin, a JSON reply per line of stdout."""
    from pyfront.dialects.mlir import ir, new_context
    from pyfront.passes import settings
    from pyfront.runtime.lowered_cache import code_versions
    from pyfront.runtime.lowering import Lowering
    from pyfront.runtime.lowering import lower as lower_module

    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # nothing the passes or MLIR print may reach the replies
    sys.stdout = sys.stderr
    replies.write(json.dumps(code_versions()) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        settings.apply(request["settings"])  # the passes read the caller's values
        lowering = Lowering(**{**request, "definition": Definition(*request["definition"])})
        try:
            with new_context():
                reply = {"record": lower_module(ir.Module.parse(lowering.module_text), lowering)}
        except Unsupported as e:
            reply = {"unsupported": [e.reason, e.filename, e.lineno]}
        except Exception as e:  # noqa: BLE001 - reported to the caller, which reports it
            reply = {"error": f"{type(e).__name__}: {e}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
