"""Backend selection: unavailable backends fail at `pyfront.compile`, naming what is missing.

Vulkan's restriction table is checked here without a device; the Vulkan
backend itself runs in tests/test_vulkan.py.

CUDA code compiles without a GPU (`cuda_compile`: quick, runs in CI); running
it needs an NVIDIA GPU (`gpu`: skipped when none is present).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from pyfront.runtime import iree_backend
from pyfront.runtime.iree_backend import BACKENDS, BackendRestriction, compile_vmfb

import pyfront


def _has_cuda_device() -> bool:
    try:
        iree_backend.check_available("cuda")
        return True
    except RuntimeError:
        return False


def _add(x, y):
    return np.tanh(x) + y


def test_unknown_backends_fail_at_compile():
    with pytest.raises(ValueError, match="unknown backend 'tpu'; supported backends: 'cpu', 'cpu-sync', 'cuda', 'vulkan'"):
        pyfront.compile(_add, backend="tpu")
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        pyfront.export(_add, np.ones(3), np.ones(3), path="/nonexistent/never-written", backend="tpu")


def test_missing_vulkan_driver_is_named(tmp_path):
    # A loader that finds no ICD: what a machine without a Vulkan driver sees.
    # The check runs in a fresh process: this one may already hold a device.
    script = (
        "import pyfront\n"
        "try:\n"
        "    pyfront.compile(lambda x: x, backend='vulkan')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    env = {**os.environ, "VK_ICD_FILENAMES": str(tmp_path / "no_such_icd.json")}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "backend 'vulkan': cannot create an IREE 'vulkan' device" in out.stdout, out.stdout + out.stderr
    assert "mesa-vulkan-drivers" in out.stdout


@pytest.mark.parametrize("mlir,what", [
    ("tensor<?x4xf32>", "dynamic shapes"),
    ("tensor<65536xf32>", "a tensor dim above 65535"),
    ("%1 = math.tanh %in : f64", "float64 exp/log/tanh"),
    ("%1 = arith.remsi %a, %b : i64", "int64 // and %"),
])
def test_vulkan_restrictions_are_refused_before_compiling(mlir, what):
    with pytest.raises(BackendRestriction, match=f"backend 'vulkan' does not run {re.escape(what)}"):
        compile_vmfb(f"// {mlir}\n", "vulkan")


def test_vulkan_backend_table():
    vulkan = BACKENDS["vulkan"]
    assert (vulkan.target, vulkan.driver, vulkan.host_import_alignment) == ("vulkan-spirv", "vulkan", 4096)
    assert "--iree-vulkan-target=vp_android_baseline_2022" in vulkan.flags
    assert "--iree-input-demote-f64-to-f32=false" in vulkan.flags


def test_vulkan_allows_what_it_runs():
    text = "%1 = math.sqrt %in : f64\n%2 = math.exp %x : f32\n%3 = arith.remsi %a, %b : i32\ntensor<65535x3xf32>"
    assert not [r.what for r in BACKENDS["vulkan"].restrictions if r.found(text)]


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
