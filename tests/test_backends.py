"""Backend selection: unavailable backends fail at `pyfront.compile`, naming what is missing.

CUDA code compiles without a GPU (`cuda_compile`: quick, runs in CI); running
it needs an NVIDIA GPU (`gpu`: skipped when none is present).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from pyfront.runtime import iree_backend
from pyfront.runtime.iree_backend import BACKENDS, compile_vmfb

import pyfront


def _has_cuda_device() -> bool:
    try:
        iree_backend.check_available("cuda")
        return True
    except RuntimeError:
        return False


def _add(x, y):
    return np.tanh(x) + y


def test_unsupported_backends_fail_at_compile():
    with pytest.raises(ValueError, match="backend 'vulkan' is not supported yet"):
        pyfront.compile(_add, backend="vulkan")
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        pyfront.compile(_add, backend="tpu")
    with pytest.raises(ValueError, match="backend 'vulkan' is not supported yet"):
        pyfront.export(_add, np.ones(3), np.ones(3), path="/nonexistent/never-written", backend="vulkan")


def test_missing_cuda_device_is_named():
    if _has_cuda_device():
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(RuntimeError, match="backend 'cuda': cannot create an IREE 'cuda' device"):
        pyfront.compile(_add, backend="cuda")


def test_disabled_compilation_needs_no_backend(monkeypatch):
    monkeypatch.setenv("PYFRONT_DISABLE", "1")
    f = pyfront.compile(_add, backend="cuda")
    assert f(1.0, 2.0) == _add(1.0, 2.0)


@pytest.mark.cuda_compile
def test_cuda_compiles_without_a_gpu(tmp_path):
    assert BACKENDS["cuda"].flags[0] == "--iree-cuda-target=sm_80"
    mlir = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    assert compile_vmfb(mlir, "cuda").vmfb
    x = np.ones((4, 8), np.float32)
    path = pyfront.export(_add, x, x, path=tmp_path / "cuda.pyfront", backend="cuda")
    manifest = json.loads((tmp_path / "cuda.pyfront" / "manifest.json").read_text())
    assert manifest["backend"] == "cuda" and "--iree-cuda-target=sm_80" in manifest["iree_flags"]
    if _has_cuda_device():
        f = pyfront.load(path)
        np.testing.assert_allclose(f(x, x), _add(x, x), rtol=1e-6)


@pytest.mark.gpu
def test_cuda_runs_compiled_code():
    if not _has_cuda_device():
        pytest.skip("no CUDA device")
    f = pyfront.compile(_add, backend="cuda", profile_calls=1)
    x, y = np.random.default_rng(0).standard_normal((2, 64, 32)).astype(np.float32)
    for _ in range(3):
        np.testing.assert_allclose(f(x, y), _add(x, y), rtol=1e-6, atol=1e-6)
    assert pyfront.explain(f).compiled_calls >= 1
