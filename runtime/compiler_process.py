"""Run `iree-compile` as a child process that never outlives the compile that started it.

`iree.compiler.compile_str` runs the `iree-compile` executable with
`subprocess.run`, with no time limit, and a child that outlives a killed
caller keeps compiling (minutes, for a large module) as an orphan. Here the
same command line (`iree.compiler.tools.core.build_compile_command_line`,
so IREE_TOOL_PATH and IREE_SAVE_TEMPS work as for compile_str) runs with:

* a wall-clock limit: past `timeout` seconds the child is killed and
  `CompileTimeout` raised;
* any exception in the caller while it waits (KeyboardInterrupt included):
  the child is killed and reaped before the exception propagates. The caller
  waits in slices (_WAKE_SECONDS), so that a SIGINT the kernel handed to
  another of its threads (a BLAS worker's) raises in it too; the module is
  passed as a temporary file, so that no input is lost between slices;
* the caller's death (even SIGKILL): on Linux the child is started through
  util-linux's `setpriv --pdeathsig KILL` (PR_SET_PDEATHSIG), so the kernel
  kills it when the thread that started it ends. That thread waits for the
  child, so this happens only if the process dies. Elsewhere (no `setpriv`)
  only the first two hold.

`niceness` lowers the child's priority (a compile in the background yields
the CPU to the calls that run meanwhile, at BACKGROUND_NICENESS:
pyfront/compile_thread.py); the parent sets it once the child runs.

No code runs in the child before exec (no `preexec_fn`, which makes Popen
fork the whole process rather than vfork): where another thread is inside
OpenBLAS when the process forks, OpenBLAS's fork handler takes down its
worker threads under that call, which then never returns. A compile started
in the background froze a training loop that ran NumPy's matmuls in the
interpreter meanwhile (bench/corpus.py); vfork runs no fork handlers.

`run_compiler(mlir_bytes, target_backends, flags, timeout, niceness)` returns the
module's bytes, or raises `CompilerFailed` (its exit status and stderr) or
`CompileTimeout`. tests/test_compile_limits.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

# On a machine without an idle core, a compile in the background and the calls that run in
# the interpreter meanwhile compete: the calls come first, but the compile must still make
# progress when the caller keeps every core busy (multi-threaded BLAS): at nice 5 it gets a
# quarter of a contended core (nice 15 got 3%, and compiles starved under a busy test suite).
# Measured (2 cores, a fresh 1,000-step loop of bench/programs/model_reinforce.py): 2.1 s at
# equal priority, 1.9 s at nice 5, 1.76 s at nice 15 (NumPy alone: 0.87 s).
BACKGROUND_NICENESS = 5


class CompilerFailed(RuntimeError):
    def __init__(self, returncode: int, stderr: str):
        self.returncode, self.stderr = returncode, stderr
        super().__init__(stderr)


class CompileTimeout(RuntimeError):
    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"iree-compile did not finish within {seconds:g} s and was stopped "
                         "(Config.compile_timeout / PYFRONT_COMPILE_TIMEOUT)")


_SETPRIV = shutil.which("setpriv")


def _spawn(command: list[str], niceness: int) -> subprocess.Popen:
    """Start `command` dying with its parent thread where `setpriv` exists, at `niceness` more than ours."""
    prefix = [_SETPRIV, "--pdeathsig", "KILL", "--"] if _SETPRIV else []
    child = subprocess.Popen(prefix + command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    if niceness:
        try:
            os.setpriority(os.PRIO_PROCESS, child.pid, os.getpriority(os.PRIO_PROCESS, 0) + niceness)
        except OSError:  # it already ended
            pass
    return child


def run_compiler(mlir: bytes, target_backends: list[str], flags: list[str],
                 timeout: float | None, niceness: int = 0) -> bytes:
    from iree.compiler.tools.core import CompilerOptions, TempFileSaver, build_compile_command_line

    with TempFileSaver.implicit() as tfs, tempfile.TemporaryDirectory(prefix="pyfront-compile-") as folder:
        source = os.path.join(folder, "module.mlir")
        with open(source, "wb") as f:
            f.write(mlir)
        options = CompilerOptions(target_backends=target_backends, extra_args=flags)
        command = build_compile_command_line(source, tfs, options)
        child = _spawn(command, niceness)
        try:
            out, err = _communicate(child, timeout)
        except BaseException:
            _stop(child)
            raise
    if child.returncode != 0:
        raise CompilerFailed(child.returncode, err.decode("utf-8", "replace"))
    return out


# How often a waiting caller runs Python code: a signal that another of its threads received (a
# SIGINT the kernel handed to a BLAS thread) raises only then; a wait in one `select` for the whole
# compile would not return before the compile ends.
_WAKE_SECONDS = 0.25


def _communicate(child: subprocess.Popen, timeout: float | None) -> tuple[bytes, bytes]:
    """The child's output, waited for in slices of _WAKE_SECONDS (the source is a file, so no input
    is lost between them); CompileTimeout past `timeout` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = _WAKE_SECONDS if deadline is None else min(_WAKE_SECONDS, deadline - time.monotonic())
        try:
            return child.communicate(timeout=max(left, 0.0))
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise CompileTimeout(timeout) from None


def _stop(child: subprocess.Popen) -> None:
    """Kill the child and reap it (no zombie is left), closing its pipes."""
    child.kill()
    child.communicate()
