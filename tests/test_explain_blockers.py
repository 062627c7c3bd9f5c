"""Every blocker in one run (pyfront/survey.py), `explain(fn, *args)`, and strict mode.

A function that does not compile gets one compile attempt per key; `explain` must list every
construct that keeps it from compiling, not only the first, each with its site, source line,
reason in Python's words and a hint, and the chain of inlined calls for a helper's line.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import pyfront
from differential import check
from pyfront.config import Config
from pyfront.text import ONLY_SHOWN

pytestmark = pytest.mark.iree


def _shape_text(x):
    text = f"{x.sum()}".strip()  # blocker 2, inside a helper
    return text


def three_blockers(x):
    try:  # blocker 1
        y = x + 1.0
    except ValueError:
        y = x
    label = _shape_text(x)
    with contextlib.suppress(ValueError):  # blocker 3
        z = y * 2.0
    return z, label


def test_explain_lists_every_blocker_in_one_run():
    compiled = check(three_blockers, [(np.ones(3),)] * 3)
    report = pyfront.explain(compiled)
    assert report.compilations == 0
    first = three_blockers.__code__.co_firstlineno
    sites = [(b.site.rpartition(":")[2], b.reason) for b in report.blockers]
    assert sites == [(str(first + 1), "try/except is not supported by the compiler yet"),
                     (str(_shape_text.__code__.co_firstlineno + 1), f"str.strip: {ONLY_SHOWN}"),
                     (str(first + 6), "a with block is not supported by the compiler yet (only `with np.errstate(...)`)")], sites
    helper = report.blockers[1]
    assert helper.chain == (f"_shape_text line {_shape_text.__code__.co_firstlineno + 1}",
                            f"three_blockers line {first + 5}")
    assert helper.construct == 'text = f"{x.sum()}".strip()  # blocker 2, inside a helper'
    assert all(b.hint for b in report.blockers)
    text = str(report)
    assert "blockers (3:" in text and "_shape_text line" in text and "called from three_blockers" in text, text


def consequences_are_not_blockers(x):
    label = f"{x.max()}".upper()
    shouted = label.lower()  # reads what the blocked statement would have made: skipped, no blocker
    n = len(shouted)
    return x * 2.0, n


def test_statements_reading_a_skipped_value_are_not_blockers():
    report = pyfront.explain(check(consequences_are_not_blockers, [(np.ones(2),)] * 3))
    assert [b.reason for b in report.blockers] == [f"str.upper: {ONLY_SHOWN}"], str(report)


def blocker_in_a_loop(x):
    for i in range(3):
        x = x + len(f"{x[0]}")
    return x


def test_a_blocker_in_an_unrolled_loop_is_listed_once():
    report = pyfront.explain(check(blocker_in_a_loop, [(np.ones(2),)] * 3))
    assert len(report.blockers) == 1, str(report)


@pytest.mark.parametrize("source, words", [
    ("def f(x):\n    return x + len(f'{x}')\n", "len(): text made from values computed at run time"),
    ("def f(x):\n    s = {1, 2}\n    return x\n", "a set display"),
    ("def f(x):\n    if (n := 2) > 1:\n        return x * n\n    return x\n", "(:=)"),
    ("def f(x):\n    class Box:\n        pass\n    return x\n", "a class definition"),
])
def test_reasons_name_constructs_in_pythons_words(source, words, tmp_path):
    path = tmp_path / "user_code.py"
    path.write_text(source)
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), {"np": np}, namespace)
    report = pyfront.explain(namespace["f"], np.ones(2))
    reasons = " ".join(b.reason for b in report.blockers)
    assert words in reasons, str(report)
    for internal in ("JoinedStr", "Set ", "NamedExpr", "ClassDef", "Tensor"):
        assert internal not in str(report), str(report)


def prints_and_fails(x):
    print("called")
    try:
        return x + 1.0
    except ValueError:
        return x


def test_explain_with_arguments_calls_once_and_attempts_the_compile(capsys):
    report = pyfront.explain(prints_and_fails, np.ones(2))
    assert capsys.readouterr().out == "called\n" and report.calls == 1 and report.profiled_calls == 1
    assert [b.reason for b in report.blockers] == ["try/except is not supported by the compiler yet"]


def test_methods_of_state_containers_are_named_as_written():
    log = []

    def logs(x):
        log.extend([1])
        return x

    report = pyfront.explain(logs, np.ones(2))
    assert [b.reason for b in report.blockers] == ["calling .extend() of a list in Python state is not supported yet"]


def compiles(x, y):
    return np.tanh(x) + y


def test_explain_with_arguments_compiles_what_compiles():
    report = pyfront.explain(compiles, np.ones(3), 2.0)
    assert report.compilations == 1 and report.compiled_calls == 0 and not report.blockers, str(report)


class Model:
    def __init__(self):
        self.w = np.full(3, 0.5)

    @pyfront.compile
    def forward(self, x):
        return x * self.w


def test_explain_with_arguments_on_a_bound_compiled_method():
    report = pyfront.explain(Model().forward, np.ones(3))
    assert report.compilations == 1 and not report.blockers, str(report)


def test_strict_mode_raises_at_the_first_fallback_listing_every_blocker(capsys):
    compiled = pyfront.compile(prints_and_fails, strict=True)
    x = np.ones(2)
    for _ in range(Config().profile_calls):  # profiled calls run in the interpreter, as always
        compiled(x)
    with pytest.raises(pyfront.StrictModeError) as raised:
        compiled(x)
    assert capsys.readouterr().out == "called\n" * Config().profile_calls  # the refused call did not run
    error = raised.value
    assert "try/except is not supported" in error.reason and "strict mode" in str(error)
    assert [b.reason for b in error.blockers] == ["try/except is not supported by the compiler yet"]


def test_strict_mode_lets_compiled_calls_run(monkeypatch):
    monkeypatch.setenv("PYFRONT_STRICT", "1")
    compiled = check(compiles, [(np.ones(3), 1.0)] * 4)
    assert compiled.config.strict and pyfront.explain(compiled).compiled_calls >= 2


def _countdown(x, n):
    if n == 0:
        return x
    return _countdown(x * 1.0, n - 1)


def test_a_recursions_repeated_call_site_is_named_once_with_its_count():
    compiled = check(_countdown, [(np.ones(3), 40)] * 3)
    blocker = pyfront.explain(compiled).blockers[0]
    line = _countdown.__code__.co_firstlineno + 3
    assert f"_countdown line {line} (31 times)" in str(blocker), blocker
    assert len(blocker.chain) == 32  # the structured chain keeps every frame
