"""The public API: compile forms, Config, explain, profiling, variant limits, the disk cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pyfront
from pyfront.profiler import Profiler

pytestmark = pytest.mark.iree


def affine(x, w, b):
    return x @ w + b


X, W, B = np.ones((2, 3)), np.full((3, 4), 0.5), np.arange(4.0)


def test_compile_forms():
    direct = pyfront.compile(affine)
    decorated = pyfront.compile(profile_calls=1)(affine)
    configured = pyfront.compile(affine, config=pyfront.Config(profile_calls=3))
    for f in (direct, decorated, configured):
        for _ in range(4):
            np.testing.assert_array_equal(f(X, W, B), affine(X, W, B))
        report = pyfront.explain(f)
        assert report.calls == 4 and report.compiled_calls + report.interpreted_calls == 4
    assert pyfront.explain(decorated).profiled_calls == 1
    assert pyfront.explain(configured).profiled_calls == 3
    assert direct.__name__ == "affine" and direct.__wrapped__ is affine


def test_bad_options_are_errors():
    with pytest.raises(TypeError):
        pyfront.compile(affine, no_such_option=1)
    with pytest.raises(ValueError, match="profile_calls"):
        pyfront.compile(affine, profile_calls=0)
    with pytest.raises(TypeError, match="pyfront.compile"):
        pyfront.explain(affine)
    with pytest.raises(TypeError, match="Python function"):
        pyfront.compile(len)


def test_explain_report():
    f = pyfront.compile(affine, profile_calls=1)
    for _ in range(3):
        f(X, W, B)
    report = pyfront.explain(f)
    assert (report.calls, report.compiled_calls, report.interpreted_calls) == (3, 2, 1)
    assert (report.deopts, report.compilations) == (0, 1)
    text = str(report)
    assert "variant 0: (ndarray[float64, (2, 3)]" in text
    assert "arg0: ndarray float64[2, 3]" in text


def test_disabled_runs_everything_in_the_interpreter():
    f = pyfront.compile(affine, disabled=True)
    for _ in range(3):
        f(X, W, B)
    report = pyfront.explain(f)
    assert report.compiled_calls == 0 and report.interpreted_calls == 3
    assert "disabled" in str(report)


def test_keyword_arguments_compile_like_positional_ones():
    f = pyfront.compile(affine, profile_calls=1)
    for _ in range(2):
        np.testing.assert_array_equal(f(X, W, b=B), affine(X, W, B))
    np.testing.assert_array_equal(f(X, W, B), affine(X, W, B))
    report = pyfront.explain(f)
    assert report.compiled_calls == 2 and report.compilations == 1


def test_variant_limit():
    f = pyfront.compile(affine, profile_calls=1, max_variants=2)
    for dtype in ("float64", "float32", "int64", "int32"):  # a new dtype is a new variant
        x = np.ones((2, 3), dtype=dtype)
        for _ in range(2):
            np.testing.assert_array_equal(f(x, W, B), affine(x, W, B))
    report = pyfront.explain(f)
    # The first call with int64 and int32 ran in the interpreter; the second compiled, evicting
    # the least recently used variant (variant_budget.py).
    assert report.compilations == 4 and len(report.variants) == 2 and report.evictions == 2, str(report)
    assert [v.signature.split(",")[0] for v in report.variants] == ["(ndarray[int64", "(ndarray[int32"]
    assert "variant limit reached" in str(report) and "evicted 2 variants" in str(report)


def helper(v):
    return v * 2


def profiled(x, n):
    return helper(x).sum() + np.float64(n)


def test_profiler_records_arguments_and_sites():
    profiler = Profiler(profiled)
    for n in (1, 2):
        assert profiler.run((np.ones(3), n), {}) == profiled(np.ones(3), n)
    p = profiler.profile
    assert p.calls == 2 and p.instrumented
    assert p.args[0].stable and "ndarray float64[3]" in p.args[0].summary()
    assert not p.args[1].stable  # the int changed value between calls
    kinds = {key[-1] for key in p.sites}
    assert {"Name", "Attribute", "Call"} <= kinds
    # `helper` and `np` are global Name sites seen once per call, always the same object.
    assert sum(1 for key, o in p.sites.items() if key[-1] == "Name" and o.count == 2 and o.stable) == 2


def test_second_process_uses_the_disk_cache(tmp_path):
    script = textwrap.dedent(
        """
        import numpy as np, pyfront
        @pyfront.compile(profile_calls=1)
        def f(x):
            return np.exp(x) * 3.0
        x = np.arange(5.0)
        for _ in range(2):
            assert np.allclose(f(x), np.exp(x) * 3.0)
        print(pyfront.explain(f).variants[0].cache_hit)
        """
    )
    path = tmp_path / "cached.py"
    path.write_text(script)
    env = {**os.environ, "PYFRONT_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300,
                           check=False)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["False", "True"], [r.stderr for r in runs]
    assert all(r.stderr == "" for r in runs), [r.stderr for r in runs]
