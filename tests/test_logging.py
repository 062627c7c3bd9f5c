"""Everyday experience: the log channels, PYFRONT_LOG, the compile progress line, explain's report."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyfront
from pyfront import logs

pytestmark = pytest.mark.iree


def branchy(x, t):
    if x.sum() > t:
        return x * 2.0
    return x - 1.0


LINE_IF = branchy.__code__.co_firstlineno + 1

def messages(caplog, channel: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == f"pyfront.{channel}"]


@pytest.fixture
def info(caplog):
    caplog.set_level(logging.INFO, logger="pyfront")
    return caplog


def test_compile_deopt_guard_and_relax_lines(info):
    f = pyfront.compile(profile_calls=1)(branchy)
    x = np.ones((4, 3), np.float32)
    f(x, 0.0)
    f(x, 0.0)  # compiled: the branch was always True
    (compiled,) = messages(info, "compile")
    assert compiled.startswith("branchy (ndarray[float32, (4, 3)], float=0.0): compiled in ")
    assert compiled.endswith(("s (disk cache hit)", "s (not in the disk cache)"))
    assert any("guard" in m and "[branch]" in m and f"test_logging.py:{LINE_IF}" in m for m in messages(info, "guards"))
    f(-x, 0.0)  # the branch guard fails
    (deopt,) = messages(info, "deopt")
    assert "deopt at " in deopt and f"test_logging.py:{LINE_IF}:" in deopt and "[branch]" in deopt
    assert "always True when profiled" in deopt
    assert any("variant retired" in m for m in messages(info, "guards"))
    f(np.ones((5, 3), np.float32), 0.0)  # a second size of dim 0
    assert messages(info, "relax") == ["branchy: arg0: dims [0] of varying size -> dynamic"]


def test_cache_hit_line(info, tmp_path, monkeypatch):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path))

    def scaled(x):
        return np.exp(x) * 3.0

    for _ in range(2):  # the second function compiles the same module: a disk cache hit
        f = pyfront.compile(profile_calls=1)(scaled)
        f(np.arange(4.0))
        f(np.arange(4.0))
    (hit,) = messages(info, "cache")
    assert "scaled (ndarray[float64, (4,)]): compiled module read from the disk cache in " in hit
    assert messages(info, "compile")[-1].endswith("(disk cache hit)")


def star(x, *rest):
    try:
        return x * len(rest)
    except ValueError:
        return x


def test_interpreter_reason_logged_once_per_function(info):
    f = pyfront.compile(star, profile_calls=1)
    for _ in range(5):
        f(np.ones(3), 0.0)
    reasons = [m for m in messages(info, "compile") if "runs in the interpreter" in m]
    assert len(reasons) == 1 and reasons[0].endswith("try/except is not supported by the compiler yet"), reasons


def test_silent_by_default(caplog):
    caplog.set_level(logging.WARNING)
    f = pyfront.compile(profile_calls=1)(branchy)
    for _ in range(3):
        f(np.ones(3), 0.0)
    assert not [r for r in caplog.records if r.name.startswith("pyfront")]


@pytest.mark.parametrize(
    "spec, expected",
    [("compile,deopt", ["compile", "deopt"]), ("all", list(logs.CHANNELS)), (" Guards , pyfront.cache", ["guards", "cache"]),
     ("", [])],
)
def test_parse_channels(spec, expected):
    assert logs.parse_channels(spec) == expected


def test_pyfront_log_environment_variable(tmp_path):
    script = textwrap.dedent(
        """
        import numpy as np, pyfront
        @pyfront.compile(profile_calls=1)
        def f(x):
            return x * 2.0
        f(np.ones(3)); f(np.ones(3)); f(np.ones(3), **{})
        f(np.ones(3), x=None) if False else None
        """
    )
    path = tmp_path / "logged.py"
    path.write_text(script)
    env = {**os.environ, "PYFRONT_CACHE_DIR": str(tmp_path / "cache"), "PYFRONT_LOG": "compile,bogus"}
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300,
                         check=True)
    lines = run.stderr.splitlines()
    assert any(line.startswith("pyfront.compile: f (ndarray[float64, (3,)]): compiled in ") for line in lines), run.stderr
    assert any("unknown channels ['bogus']" in line for line in lines), run.stderr
    assert not any(line.startswith(("pyfront.guards", "pyfront.cache")) for line in lines), run.stderr
    env.pop("PYFRONT_LOG")
    quiet = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300,
                           check=True)
    assert "pyfront." not in quiet.stderr


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def progress_stream(monkeypatch):
    monkeypatch.setattr(logs, "PROGRESS_DELAY", 0)
    monkeypatch.delenv("PYFRONT_PROGRESS", raising=False)

    def use(stream):
        monkeypatch.setattr(logs, "PROGRESS_STREAM", stream)
        return stream

    return use


def compile_twice(fn):
    f = pyfront.compile(profile_calls=1)(fn)
    f(np.ones((2, 5), np.float32), 1.0)
    f(np.ones((2, 5), np.float32), 1.0)
    return f


def test_progress_on_a_terminal(progress_stream):
    stream = progress_stream(FakeTTY())
    compile_twice(branchy)
    text = stream.getvalue()
    assert text.startswith("pyfront: compiling branchy (ndarray[float32, (2, 5)], float=1.0) ... done in "), text
    assert text.endswith("s\n") and text.count("\n") == 1


def test_no_progress_off_a_terminal_or_when_disabled(progress_stream, monkeypatch):
    stream = progress_stream(io.StringIO())  # isatty() is False
    compile_twice(branchy)
    assert stream.getvalue() == ""
    tty = progress_stream(FakeTTY())
    monkeypatch.setenv("PYFRONT_PROGRESS", "0")
    compile_twice(branchy)
    assert tty.getvalue() == ""


def test_progress_reports_a_failed_compile(progress_stream):
    stream = progress_stream(FakeTTY())
    with pytest.raises(ZeroDivisionError), logs.progress("g (int=1)"):
        1 / 0  # noqa: B018
    assert stream.getvalue().startswith("pyfront: compiling g (int=1) ... failed after ")


def scalar_math(x):
    y = x * 2.0
    s = round(float(y.sum()), 2)
    return y + s


def test_explain_marks_lines_guards_and_hints():
    f = pyfront.compile(profile_calls=1)(branchy)
    x = np.ones((4, 3), np.float32)
    f(x, 0.0)
    f(x, 0.0)
    f(-x, 0.0)  # deopt at the branch
    f(x, t=0.0)  # a keyword binds like the positional argument: the same variant
    report = pyfront.explain(f)
    text = str(report)
    assert (report.calls, report.deopts) == (4, 1)
    assert "2 of 4 calls ran compiled" in text
    assert "source (C: ran compiled, I: keeps calls in the interpreter, G: a guard):" in text
    guard_line = next(line for line in text.splitlines() if "if x.sum() > t:" in line)
    # (the variant recompiled after the deopt also guards the comparison's float32 fp errors there)
    assert guard_line.split()[0] == "CG" and "# guard [branch" in guard_line and "failed 1x" in guard_line
    assert any(line.split()[:2] == ["C", str(LINE_IF + 1)] for line in text.splitlines()), text


def test_explain_points_at_the_line_that_keeps_calls_interpreted():
    f = pyfront.compile(profile_calls=1)(scalar_math)
    for _ in range(3):
        f(np.ones(3))
    text = str(pyfront.explain(f))
    line = next(line for line in text.splitlines() if "round(float(y.sum()), 2)" in line)
    assert line.split()[0] == "I" and "# interpreter (2 calls):" in line, text
    assert "0 of 3 calls ran compiled" in text
    hints = text.split("to compile more:")[1]
    assert f"line {scalar_math.__code__.co_firstlineno + 2}:" in hints, text


@pytest.mark.parametrize(
    "reason, needle",
    [("keyword arguments at the call are not supported yet", "positionally"),
     ("f.py:3: Python scalar operation pow on computed values is not supported", "NumPy arrays"),
     ("f.py:3: call to 'exp' is not supported by the compiler", "np.exp"),
     ("f.py:3: writing into an array whose shape varies between calls is not supported yet", "one shape"),
     ("variant limit reached (max_variants=8)", "max_variants"),
     ("f has *args and **kwargs: not compiled yet", "name the parameters"),
     ("f has keyword-only parameters: not compiled yet", "ordinary parameters"),
     ("f.py:3: try/except is not supported by the compiler yet", "try/except"),
     # The fp-event check also deopts where IREE flushed a subnormal result that NumPy kept (no warning).
     ("f.py:3:4: [fp-error] floating-point overflow or invalid value in add", "subnormal")],
)
def test_hints(reason, needle):
    from pyfront.report import hint_for

    assert needle in hint_for(reason)


def test_no_hint_suggests_a_rewrite_that_changes_behaviour():
    # `a = a + x` for `a += x` stops updating the caller's array; a new array for a write, too.
    from pyfront.report import HINTS

    for _, hint in HINTS:
        assert " = a + " not in hint and "self.h = self.h" not in hint and "instead of writing" not in hint, hint
