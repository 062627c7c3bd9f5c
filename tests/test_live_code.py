"""The front end compiles the code that runs, not whatever source text it finds.

A decorator's wrapper (`functools.wraps` sets `__wrapped__`, which
`inspect.getsource` follows), a module edited on disk after import, and a
`__code__` replaced after compiling (IPython autoreload, hot reload) of the
compiled function or of an inlined helper: each must give the interpreter's
answer. Differential against CPython (tests/differential.py).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import textwrap

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def doubled(f):
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@doubled
def h(x):
    return x + 0.0


def test_a_functools_wraps_wrapper_is_compiled_as_the_wrapper_not_the_wrapped_function():
    x = np.ones(3)
    compiled = check(h, [(x,)] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0  # the wrapper's own code compiles


def _import_from(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    st = os.stat(path)
    os.utime(path, (st.st_atime + 10, st.st_mtime + 10))  # linecache must see a new file


def test_a_module_edited_on_disk_after_import_is_not_compiled_as_edited(tmp_path):
    path = tmp_path / "edited_after_import.py"
    path.write_text(textwrap.dedent("""\
        def f(x):
            return x * 2.0
    """))
    module = _import_from(path, "edited_after_import")
    _edit(path, "x * 2.0", "x * 3.0")  # the loaded f still multiplies by 2
    x = np.arange(3.0)
    compiled = check(module.f, [(x,)] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0
    assert any("does not match its loaded code" in r for r in report.interpreter_reasons), str(report)


def test_a_replaced_code_object_is_never_run_stale():
    def f(x):
        return x * 2.0

    def g(x):
        return x * 3.0

    x = np.arange(3.0)

    def calls():
        yield (x,)
        yield (x,)  # compiled for f's code
        f.__code__ = g.__code__  # hot reload
        yield (x,)
        yield (x,)
        yield (x,)

    compiled = check(f, calls())
    assert pyfront.explain(compiled).compiled_calls > 0


def helper(x):
    return x * 2.0


def helper_reloaded(x):
    return x * 3.0


def uses_helper(x):
    return helper(x) + 1.0


def test_a_replaced_code_object_of_an_inlined_helper_is_never_run_stale():
    original = helper.__code__
    x = np.arange(3.0)

    def calls():
        yield (x,)
        yield (x,)  # compiled with helper inlined
        helper.__code__ = helper_reloaded.__code__
        yield (x,)
        yield (x,)
        yield (x,)

    try:
        compiled = check(uses_helper, calls())
    finally:
        helper.__code__ = original
    assert pyfront.explain(compiled).compiled_calls > 0


class Base:
    def scale(self, x):
        return x * 2.0


class Sub(Base):
    __private = 3.0

    def scale(self, x):
        return super().scale(x) + self.__private

    def shifted(self, x):
        return x + self.__private


def test_the_profiler_runs_methods_using_super_and_private_names_in_their_class_scope():
    """The profiled copy is compiled in a class scope like the method's (`__class__` cell, mangling)."""
    check(Sub.scale, [(Sub(), np.arange(3.0))] * 3)


def test_private_names_compile_as_mangled():
    compiled = check(Sub.shifted, [(Sub(), np.arange(3.0))] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0
