"""What the JIT does, as it does it: `logging` channels and a compile progress line.

Loggers (the standard `logging` module; attach handlers or levels as usual):

    pyfront.compile   a compilation (function, variant signature, seconds, cache hit),
                      and the first time per function that a reason sends calls to the interpreter
    pyfront.deopt     a compiled call that gave up (the failing guard's site, kind and reason)
    pyfront.guards    the guards of each new variant, and variants retired by failing guards
    pyfront.cache     compiled modules served from the on-disk cache
    pyfront.relax     a specialization relaxed (or undone)
    pyfront.verify    each verified call (Config.verify): agreed (INFO), or compiled code that
                      disagreed with the interpreter (WARNING: a compiler bug; the variant is retired)

`PYFRONT_LOG=compile,deopt` (or `all`) attaches a stderr handler at INFO to
those loggers when pyfront first compiles something. Every line but a disagreement
is logged at INFO, behind `logger.isEnabledFor`, so a compiled call pays nothing for it.

A compile that runs longer than `PROGRESS_DELAY` seconds writes one progress
line to stderr when stderr is a terminal and `PYFRONT_PROGRESS` is not `0`:

    pyfront: compiling f (ndarray[float32, (64, 256)]) ... done in 1.4s
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator

INFO = logging.INFO
CHANNELS = ("compile", "deopt", "guards", "cache", "relax", "verify")

compile_log = logging.getLogger("pyfront.compile")
deopt_log = logging.getLogger("pyfront.deopt")
guards_log = logging.getLogger("pyfront.guards")
cache_log = logging.getLogger("pyfront.cache")
relax_log = logging.getLogger("pyfront.relax")
verify_log = logging.getLogger("pyfront.verify")

# Progress: seconds a compile runs before its line appears, and the stream it goes
# to (None: sys.stderr at the time of the compile). Tests set both.
PROGRESS_DELAY = 1.0
PROGRESS_STREAM = None

_FORMAT = "%(name)s: %(message)s"


def parse_channels(spec: str) -> list[str]:
    """The channels named by a `PYFRONT_LOG` value: comma-separated names or `all`."""
    names = [s.strip().lower().removeprefix("pyfront.") for s in spec.split(",") if s.strip()]
    if "all" in names or "1" in names:
        return list(CHANNELS)
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        print(f"pyfront: PYFRONT_LOG names unknown channels {unknown}; known: all, {', '.join(CHANNELS)}",
              file=sys.stderr)
    return [n for n in CHANNELS if n in names]


class _StderrHandler(logging.StreamHandler):
    """Writes to the sys.stderr of the moment (so redirections and pytest's capture see it)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter(_FORMAT))

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def enable(channels: list[str] | str) -> None:
    """Log `channels` (names or a `PYFRONT_LOG`-style string) to stderr at INFO; idempotent."""
    if isinstance(channels, str):
        channels = parse_channels(channels)
    for name in channels:
        logger = logging.getLogger(f"pyfront.{name}")
        logger.setLevel(logging.INFO)
        if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
            logger.addHandler(_StderrHandler())


_configured = False


def configure_from_env() -> None:
    """Apply `PYFRONT_LOG` once per process (called when pyfront first compiles)."""
    global _configured
    if _configured:
        return
    _configured = True
    spec = os.environ.get("PYFRONT_LOG", "")
    if spec:
        enable(spec)


def progress_enabled(stream) -> bool:
    if os.environ.get("PYFRONT_PROGRESS", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextlib.contextmanager
def progress(what: str) -> Iterator[None]:
    """Around a compile: after PROGRESS_DELAY seconds, say what is compiling; at the end, how long it took."""
    stream = PROGRESS_STREAM if PROGRESS_STREAM is not None else sys.stderr
    if not progress_enabled(stream):
        yield
        return
    start = time.perf_counter()
    lock = threading.Lock()
    state = {"shown": False, "done": False}

    def show() -> None:
        with lock:
            if state["done"]:
                return
            state["shown"] = True
            stream.write(f"pyfront: compiling {what} ...")
            stream.flush()

    timer = None
    if PROGRESS_DELAY <= 0:
        show()
    else:
        timer = threading.Timer(PROGRESS_DELAY, show)
        timer.daemon = True
        timer.start()
    outcome = "failed after"
    try:
        yield
        outcome = "done in"
    finally:
        if timer is not None:
            timer.cancel()
        with lock:
            state["done"] = True
            if state["shown"]:
                stream.write(f" {outcome} {time.perf_counter() - start:.1f}s\n")
                stream.flush()
