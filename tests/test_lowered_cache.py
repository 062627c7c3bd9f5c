"""Preparing a module through the disk cache (runtime/lowered_cache.py).

A function prepared before, in this process or another one sharing the disk
cache, gets what the passes made of its module from the cache: verification,
the layout check and the passes do not run, and the variant is the one they
would have made (same IREE input, same guards and sites, same results).
"""

from __future__ import annotations

import numpy as np
import pytest

import pyfront
from pyfront.runtime import disk_cache, lowered_cache, lowering
from tests.differential import assert_same

pytestmark = pytest.mark.iree


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def pass_runs(monkeypatch):
    """How many times the JIT ran the pass pipeline."""
    runs = []
    real = lowering.run_passes
    monkeypatch.setattr(lowering, "run_passes", lambda *a, **k: (runs.append(a[1]), real(*a, **k)))
    return runs


def scaled_tanh(x, w):
    return np.tanh(x @ w) / np.sqrt(x.shape[1])


X, W = np.linspace(-1, 1, 32).reshape(4, 8), np.linspace(-0.5, 0.5, 24).reshape(8, 3)


def compiled(fn, *args):
    """A new compiled function after enough calls to run compiled; the variant it made."""
    f = pyfront.compile(fn, profile_calls=1)
    for _ in range(3):
        assert_same(fn(*args), f(*args))
    (variant,) = [v for group in f._groups.values() for v in group.variants]
    assert pyfront.explain(f).compiled_calls >= 2
    return f, variant


def test_a_function_lowered_before_skips_the_passes_and_gets_the_same_module(pass_runs, monkeypatch):
    _, first = compiled(scaled_tanh, X, W)
    assert len(pass_runs) == 1
    checked = []
    monkeypatch.setattr(lowering, "verify_module", checked.append)
    monkeypatch.setattr(lowering.layout, "check_results", lambda *a, **k: checked.append(a))
    _, second = compiled(scaled_tanh, X, W)  # a new CompiledFunction: prepared again
    assert len(pass_runs) == 1 and not checked  # nor verified, nor its layout checked
    for field in ("pyfront_ir", "graph_guards", "hoisted_guards", "input_paths", "output_paths", "storage",
                  "merged_stores", "relayouts", "approximate_dtype"):
        assert getattr(second, field) == getattr(first, field), field
    assert second.invoke._in_place == first.invoke._in_place
    assert second.cache_hit  # the same IREE input, so IREE's own disk-cache entry


def test_the_same_code_at_another_line_is_lowered_for_its_own_sites(pass_runs):
    def here(x, w):
        return np.tanh(x @ w) / np.sqrt(x.shape[1])

    _, a = compiled(scaled_tanh, X, W)
    _, b = compiled(here, X, W)
    assert len(pass_runs) == 2  # the locations differ: another key
    for fn, variant in ((here, b), (scaled_tanh, a)):
        lines = {str(fn.__code__.co_firstlineno), str(fn.__code__.co_firstlineno + 1)}  # the def and the return
        assert {g.site.split(":")[1] for g in variant.graph_guards} == lines


def test_the_same_function_in_another_file_shares_the_iree_module(tmp_path, pass_runs):
    """A notebook cell run again, a test's temporary file: other sites, so the passes run again,
    but IREE's input names no site (lowering.iree_text) and its disk-cache entry is shared."""
    variants = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "model.py"
        path.write_text("import numpy as np\n\ndef predict(x, w):\n    return np.tanh(x @ w) * 2.0\n")
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        variants.append(compiled(namespace["predict"], X, W)[1])
    assert len(pass_runs) == 2
    assert {g.site.split(":")[0] for v in variants for g in v.graph_guards} == {
        str(tmp_path / "one" / "model.py"), str(tmp_path / "two" / "model.py")}
    assert not variants[0].cache_hit and variants[1].cache_hit


@pytest.mark.parametrize("setting", ["PYFRONT_UNROLL_BUDGET", "PYFRONT_POOL_MAX_ELEMENTS"])
def test_another_pass_setting_is_another_key(pass_runs, monkeypatch, setting):
    compiled(scaled_tanh, X, W)
    monkeypatch.setenv(setting, "0")
    compiled(scaled_tanh, X, W)
    assert len(pass_runs) == 2


def test_an_entry_that_does_not_decode_is_ignored(pass_runs, monkeypatch):
    keys = []
    real_key = lowered_cache._key
    monkeypatch.setattr(lowered_cache, "_key", lambda *a: keys.append(real_key(*a)) or keys[-1])
    compiled(scaled_tanh, X, W)
    disk_cache.from_env().put(keys[0], b"func.func @broken(")
    compiled(scaled_tanh, X, W)
    assert len(pass_runs) == 2
    assert disk_cache.from_env().get(keys[0]).startswith(b"{")  # rewritten by the run that lowered it


@pytest.mark.parametrize("setting", ["PYFRONT_CACHE_DIR=off", "PYFRONT_DUMP_DIR"])
def test_no_cache_and_ir_dumps_run_the_passes(pass_runs, monkeypatch, tmp_path, setting):
    name, _, value = setting.partition("=")
    monkeypatch.setenv(name, value or str(tmp_path / "dumps"))
    compiled(scaled_tanh, X, W)
    compiled(scaled_tanh, X, W)
    assert len(pass_runs) == 2
