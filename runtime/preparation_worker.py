"""The preparation worker: a child process that lowers modules for the compile thread.

Preparing a variant is graph generation, which reads the call and so runs on
the caller's thread, then lowering (runtime/jit.py `lower`: verification, the
layout check, the pass pipeline), which reads only the generated module. Most
of preparing is lowering (model_gan: 0.90 of 1.10 s, model_lstm_lm: 1.75 of
2.09 s; 2-core AMD EPYC), and it is Python and MLIR work that holds the GIL:
on the compile thread it would slow the calls that run in the interpreter
meanwhile as much as on the caller's thread. So where a variant compiles in
the background, its module is lowered here, in another process: the caller
pays for graph generation only, and the lowering takes a core the caller does
not use.

`lower(lowering)` sends the module's text (with its locations, which name the
guard sites) and the rest of the `jit.Lowering` to the worker, which parses it,
runs the same `jit.lower` on it and sends back the record (the JSON value
runtime/lowered_cache.py stores). Lowering is a deterministic function of what
is sent, so the record is the one lowering in the caller's process gives.

* One worker per process, started on first use or by `start()`, at the compile's
  lower priority (runtime/jit.py BACKGROUND_NICENESS), with the parent's
  `sys.path`; it exits when this process does (its stdin closes).
* The worker must run the same code: it reports its `lowered_cache.code_versions()`
  when it starts, and one that differs (a different pyfront or IREE on the
  path) is not used. Without a usable worker (none can be started) the module
  is lowered in this process, on the asking thread: the same record, slower.
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

import json
import os
import subprocess
import sys
import threading
from dataclasses import asdict

from pyfront import logs
from pyfront.errors import Definition, Unsupported


def enabled() -> bool:
    """Whether modules compiled in the background may be lowered in the worker (PYFRONT_PREPARATION_WORKER)."""
    return os.environ.get("PYFRONT_PREPARATION_WORKER", "1").strip().lower() not in ("0", "false", "no", "off")


class LoweringFailed(RuntimeError):
    """Lowering in the worker failed other than as `Unsupported` (the message says how)."""


def lower(lowering) -> dict:
    """The record of lowering `lowering`'s module (runtime/jit.py `Lowering`), lowered by the worker."""
    with _lock:
        worker = _worker()
        if worker is None:
            return _lower_here(lowering)
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


def _lower_here(lowering) -> dict:
    from pyfront.dialects.mlir import ir, new_context
    from pyfront.runtime.jit import lower as lower_module

    with new_context():
        module = ir.Module.parse(lowering.module_text)
        return lower_module(module, lowering)


_lock = threading.Lock()
_process: subprocess.Popen | None = None
_checked = False  # whether `_process` reported the code versions of this process
_unusable = False  # no worker can start, or one ran other code: this process lowers its modules itself


def start() -> None:
    """Start the worker unless it runs (or none is usable), without waiting for it.

    Starting it takes a second or two (Python and pyfront's imports): the compiled function
    starts it once it knows a large module is coming (pyfront/api.py: a function that warms up)."""
    if enabled():
        with _lock:
            _start()


def _start() -> None:
    global _process, _checked, _unusable
    if _unusable or _process is not None and _process.poll() is None:
        return
    try:
        # It ends when its stdin closes (this process exited): no PR_SET_PDEATHSIG, which would
        # tie it to the thread that happened to start it.
        _process = subprocess.Popen(_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
    except OSError as e:
        logs.compile_log.debug("no preparation worker (%s): lowering in this process", e)
        _unusable = True
    _checked = False


def _command() -> list[str]:
    """The worker's command line: this Python, at lower priority, this `sys.path`, `serve()`.

    It lowers its own priority: a `preexec_fn` would make Popen fork this whole process (7 ms
    on the caller's thread here) where it otherwise uses vfork (0.6 ms)."""
    from pyfront.runtime.jit import BACKGROUND_NICENESS

    program = (f"import os, sys, json; os.nice({BACKGROUND_NICENESS}); sys.path[:] = json.loads(sys.argv[1]); "
               "from pyfront.runtime.preparation_worker import serve; serve()")
    return [sys.executable, "-c", program, json.dumps(sys.path)]


def _worker() -> subprocess.Popen | None:
    """The running worker (lock held), started if need be; None where none is usable."""
    global _unusable, _checked
    _start()
    if _unusable or _checked:
        return _process
    from pyfront.runtime.lowered_cache import code_versions

    versions = _process.stdout.readline()
    if not versions or json.loads(versions) != list(code_versions()):
        logs.compile_log.debug("the preparation worker runs other code (%s): lowering in this process",
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


def _forget_after_fork() -> None:
    """A forked child's worker is its parent's: never used (its pipes are shared), never stopped there."""
    global _process, _checked, _lock
    _process, _checked, _lock = None, False, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def serve() -> None:
    """The worker's loop: a JSON `Lowering` per line of stdin, a JSON reply per line of stdout."""
    from pyfront.runtime.jit import Lowering
    from pyfront.runtime.lowered_cache import code_versions

    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # nothing the passes or MLIR print may reach the replies
    sys.stdout = sys.stderr
    replies.write(json.dumps(code_versions()) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        os.environ["PYFRONT_UNROLL_BUDGET"] = str(request["unroll_budget"])  # as the caller's (passes/unroll.py)
        lowering = Lowering(**{**request, "definition": Definition(*request["definition"])})
        try:
            reply = {"record": _lower_here(lowering)}
        except Unsupported as e:
            reply = {"unsupported": [e.reason, e.filename, e.lineno]}
        except Exception as e:  # noqa: BLE001 - reported to the caller, which reports it
            reply = {"error": f"{type(e).__name__}: {e}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
