"""Tests of the IREE layer (pyfront.runtime.iree_backend) and its disk cache.

One MLIR module with every function the tests call is compiled once per
session of this file (module-scoped fixture); tests that need a compiler run
of their own use a fresh cache directory. Subprocess tests cover what only a
new interpreter shows: a cache hit across processes, and a quiet exit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from pyfront.runtime import disk_cache, iree_backend
from pyfront.runtime.iree_backend import (
    BACKENDS,
    CompileError,
    LoadedModule,
    compile_vmfb,
    get_backend,
)

import pyfront

# The directory that holds the `pyfront` package (a checkout's root), for
# subprocesses.
IMPORT_ROOT = str(Path(pyfront.__file__).resolve().parent.parent)

MLIR = """
func.func @add_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = arith.addf %a, %b : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @add_f64(%a: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %r = arith.addf %a, %b : tensor<3xf64>
  return %r : tensor<3xf64>
}
func.func @mul_i64(%a: tensor<5xi64>, %b: tensor<5xi64>) -> tensor<5xi64> {
  %r = arith.muli %a, %b : tensor<5xi64>
  return %r : tensor<5xi64>
}
func.func @less(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xf32>) {
  %c = arith.cmpf olt, %a, %b : tensor<3xf32>
  %m = arith.minimumf %a, %b : tensor<3xf32>
  return %c, %m : tensor<3xi1>, tensor<3xf32>
}
func.func @logical_not(%a: tensor<3xi1>) -> tensor<3xi1> {
  %t = arith.constant dense<true> : tensor<3xi1>
  %r = arith.xori %a, %t : tensor<3xi1>
  return %r : tensor<3xi1>
}
func.func @scale(%x: tensor<f32>, %s: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %r = arith.mulf %x, %s : tensor<f32>
  %c = arith.constant dense<7> : tensor<i64>
  return %r, %c : tensor<f32>, tensor<i64>
}
func.func @constant() -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
"""

# A second, tiny module for tests that must run the compiler themselves.
SMALL_MLIR = """
func.func @neg(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = arith.negf %a : tensor<2xf32>
  return %r : tensor<2xf32>
}
"""


def _env(cache_dir) -> dict:
    env = dict(os.environ, PYFRONT_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [IMPORT_ROOT, env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """A private cache for this file, so tests never touch ~/.cache."""
    path = tmp_path_factory.mktemp("pyfront-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYFRONT_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def vmfb(cache_dir) -> bytes:
    return compile_vmfb(MLIR).vmfb


@pytest.fixture(scope="module", params=["cpu", "cpu-sync"])
def module(request, vmfb) -> LoadedModule:
    return LoadedModule(vmfb, request.param)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def compiler_calls(monkeypatch) -> list:
    """Records each run of the compiler (cache misses)."""
    calls = []
    real = iree_backend._invoke_compiler

    def counting(mlir_text, backend, timeout=None, niceness=0):
        calls.append(backend.name)
        return real(mlir_text, backend, timeout, niceness)

    monkeypatch.setattr(iree_backend, "_invoke_compiler", counting)
    return calls


# --------------------------------------------------------------------------
# Running compiled functions
# --------------------------------------------------------------------------

rng = np.random.default_rng(0)


@pytest.mark.iree
def test_float32(module):
    a, b = rng.random((4, 8), np.float32), rng.random((4, 8), np.float32)
    (r,) = module.function("add_f32")([a, b])
    assert r.dtype == np.float32 and r.shape == (4, 8)
    np.testing.assert_array_equal(r, a + b)


@pytest.mark.iree
def test_float64_is_not_demoted(module):
    a = np.array([1.0, 1e300, np.pi], np.float64)
    b = np.array([1e-12, 1e300, 1e-15], np.float64)
    (r,) = module.function("add_f64")([a, b])
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, a + b)


@pytest.mark.iree
def test_int64_keeps_64_bits(module):
    a = np.array([3_000_000_000, -5, 0, 7, 1 << 40], np.int64)
    b = np.array([3, 4, 5, -6, 2], np.int64)
    (r,) = module.function("mul_i64")([a, b])
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, a * b)


@pytest.mark.iree
def test_bool_result_and_multiple_results(module):
    a = np.array([1.0, 5.0, -2.0], np.float32)
    b = np.array([2.0, 4.0, -2.0], np.float32)
    less, minimum = module.function("less")([a, b])
    assert less.dtype == np.bool_
    np.testing.assert_array_equal(less, a < b)
    np.testing.assert_array_equal(minimum, np.minimum(a, b))
    assert (~less).tolist() == [False, True, True]  # usable as a NumPy mask


@pytest.mark.iree
def test_bool_input(module):
    (r,) = module.function("logical_not")([np.array([True, False, True])])
    assert r.dtype == np.bool_ and r.tolist() == [False, True, False]


@pytest.mark.iree
def test_zero_d_results_from_scalar_inputs(module):
    scaled, seven = module.function("scale")([np.float32(1.5), np.array(4.0, np.float32)])
    assert scaled.shape == () and scaled.dtype == np.float32 and scaled == 6.0
    assert seven.shape == () and seven.dtype == np.int64 and seven == 7


@pytest.mark.iree
def test_function_without_inputs(module):
    (r,) = module.function("constant")([])
    assert r.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.iree
def test_non_contiguous_inputs(module):
    big = rng.random((8, 16), np.float32)
    a = big[::2, ::2]  # strided
    b = np.asfortranarray(rng.random((4, 8), np.float32))
    (r,) = module.function("add_f32")([a, b])
    np.testing.assert_array_equal(r, a + b)


@pytest.mark.iree
def test_results_are_writable_and_independent(module):
    add = module.function("add_f32")
    a, b = np.ones((4, 8), np.float32), np.full((4, 8), 2, np.float32)
    (r1,) = add([a, b])
    (r2,) = add([a, b])
    for r in (r1, r2):
        assert r.flags.writeable and r.flags.owndata and r.flags.c_contiguous
    assert not np.shares_memory(r1, r2)
    r1[...] = -1
    (r3,) = add([b, b])
    np.testing.assert_array_equal(r2, 3)
    np.testing.assert_array_equal(r3, 4)
    assert (r1 == -1).all()
    # A returned constant may live in the module itself: it must be a copy.
    const = module.function("constant")
    (c,) = const([])
    c[0] = 100.0
    assert const([])[0].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.iree
def test_concurrent_calls_from_8_threads(module):
    add, less = module.function("add_f32"), module.function("less")
    start = threading.Barrier(8)
    errors: list = []

    def worker(seed: int) -> None:
        local = np.random.default_rng(seed)
        start.wait()
        for _ in range(50):
            a, b = local.random((4, 8), np.float32), local.random((4, 8), np.float32)
            x, y = local.random(3, np.float32), local.random(3, np.float32)
            if not np.array_equal(add([a, b])[0], a + b):
                errors.append(("add_f32", seed))
            if not np.array_equal(less([x, y])[0], x < y):
                errors.append(("less", seed))

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.iree
def test_failed_call_raises_and_function_keeps_working(module):
    add = module.function("add_f32")
    a = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="element type mismatch"):
        add([a.astype(np.float64), a])
    with pytest.raises(ValueError, match="shape"):
        add([np.ones((2, 8), np.float32), a])
    np.testing.assert_array_equal(add([a, a])[0], 2)


@pytest.mark.iree
def test_unknown_function_names_the_available_ones(module):
    with pytest.raises(ValueError, match="no function 'nope'.*add_f32"):
        module.function("nope")
    assert "add_f32" in module.function_names and "__init" not in module.function_names


@pytest.mark.iree
def test_garbage_vmfb():
    with pytest.raises(ValueError, match="not a loadable IREE module"):
        LoadedModule(b"not a module" * 8)


# --------------------------------------------------------------------------
# Backends and compiler errors
# --------------------------------------------------------------------------


def test_unknown_backend_names_the_supported_ones():
    with pytest.raises(ValueError, match=r"unknown backend 'tpu'; supported backends: 'cpu'"):
        get_backend("tpu")
    with pytest.raises(ValueError, match=r"unknown backend 'gpu'"):
        LoadedModule(b"", "gpu")


def test_backend_table():
    cpu = BACKENDS["cpu"]
    assert (cpu.target, cpu.driver) == ("llvm-cpu", "local-task")
    assert "--iree-llvmcpu-target-cpu=host" in cpu.flags
    assert BACKENDS["cpu-sync"].driver == "local-sync"


@pytest.mark.iree
def test_compile_error_carries_diagnostics(fresh_cache):
    bad = "func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n  return %a : tensor<2xf32>\n}\n"
    with pytest.raises(CompileError) as info:
        compile_vmfb(bad)
    assert "error" in info.value.diagnostics
    assert "tensor<3xf32>" in info.value.diagnostics
    assert info.value.backend == "cpu"
    assert list(fresh_cache.iterdir()) == []  # nothing cached


# --------------------------------------------------------------------------
# The disk cache
# --------------------------------------------------------------------------


def test_cache_env_values(monkeypatch, tmp_path):
    for off in ("off", "OFF", "0", "", "false", "none"):
        monkeypatch.setenv("PYFRONT_CACHE_DIR", off)
        assert disk_cache.from_env() is None
    monkeypatch.setenv("PYFRONT_CACHE_DIR", str(tmp_path))
    assert disk_cache.from_env().directory == tmp_path
    monkeypatch.delenv("PYFRONT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.from_env().directory == tmp_path / "pyfront"


def test_entry_header_rejects_damage():
    key = disk_cache.make_key("k")
    payload = b"vmfb bytes" * 50
    entry = disk_cache.encode_entry(key, payload)
    assert disk_cache.decode_entry(key, entry) == payload
    flipped = bytearray(entry)
    flipped[-7] ^= 1
    damaged = {
        "truncated": entry[:-1],
        "header only": entry[:50],
        "short header": entry[:20],
        "empty": b"",
        "flipped bit": bytes(flipped),
        "bad magic": b"X" + entry[1:],
        "appended": entry + b"\0",
    }
    for name, data in damaged.items():
        assert disk_cache.decode_entry(key, data) is None, name
    assert disk_cache.decode_entry(disk_cache.make_key("other"), entry) is None


def test_misfiled_entry_is_never_returned(tmp_path):
    """An entry copied (or renamed) onto another key's file is another function's module."""
    cache = disk_cache.DiskCache(tmp_path)
    mine, other = disk_cache.make_key("mine"), disk_cache.make_key("other")
    assert cache.put(other, b"the other function's module")
    shutil.copyfile(cache.path_for(other), cache.path_for(mine))
    assert cache.get(mine) is None
    assert cache.get(other) == b"the other function's module"
    assert cache.put(mine, b"mine") and cache.get(mine) == b"mine"


def test_entries_of_another_layout_or_with_huge_lengths_are_ignored(tmp_path):
    cache = disk_cache.DiskCache(tmp_path)
    key = disk_cache.make_key("k")
    payload = b"module" * 10
    # The layout before entries recorded their key: magic, length, SHA-256, payload.
    older = struct.pack("<8sQ32s", b"PYFRNT01", len(payload), hashlib.sha256(payload).digest()) + payload
    lying = disk_cache.encode_entry(key, payload)[:8] + struct.pack("<HQ", 64, 2**62) + b"\0" * 32
    for data in (older, lying):
        cache.path_for(key).write_bytes(data)
        assert cache.get(key) is None


def _get_in_thread(cache, key):
    """cache.get(key) in a daemon thread; (finished, result). A hang leaves the thread behind."""
    result: list = []
    t = threading.Thread(target=lambda: result.append(cache.get(key)), daemon=True)
    t.start()
    t.join(timeout=60)  # a deadlock guard, not a timing threshold: get() must not block at all
    return not t.is_alive(), result


def test_fifo_entry_is_ignored_without_blocking(tmp_path):
    cache = disk_cache.DiskCache(tmp_path)
    key = disk_cache.make_key("k")
    os.mkfifo(cache.path_for(key))
    finished, result = _get_in_thread(cache, key)
    if not finished:  # unblock the reader so that the test process can exit
        with open(cache.path_for(key), "wb"):
            pass
    assert finished and result == [None]


@pytest.mark.parametrize("target", ["/dev/zero", "directory"])
def test_entry_linking_to_a_device_or_directory_is_ignored(tmp_path, target):
    cache = disk_cache.DiskCache(tmp_path / "cache")
    cache.directory.mkdir()
    key = disk_cache.make_key("k")
    if target == "directory":
        (tmp_path / "d").mkdir()
        target = tmp_path / "d"
    os.symlink(target, cache.path_for(key))
    finished, result = _get_in_thread(cache, key)
    assert finished and result == [None]


def test_entry_linking_to_a_regular_file_is_read(tmp_path):
    cache = disk_cache.DiskCache(tmp_path / "cache")
    key = disk_cache.make_key("k")
    assert cache.put(key, b"payload")
    os.replace(cache.path_for(key), tmp_path / "elsewhere.bin")
    os.symlink(tmp_path / "elsewhere.bin", cache.path_for(key))
    assert cache.get(key) == b"payload"


def test_key_parts_are_length_prefixed():
    assert disk_cache.make_key("ab", "c") != disk_cache.make_key("a", "bc")
    assert disk_cache.make_key("x", b"y") == disk_cache.make_key(b"x", "y")


def test_artifact_key_depends_on_what_changes_the_artifact():
    cpu, sync = BACKENDS["cpu"], BACKENDS["cpu-sync"]
    key = iree_backend.artifact_key(SMALL_MLIR, cpu)
    assert key == iree_backend.artifact_key(SMALL_MLIR, cpu)
    assert key == iree_backend.artifact_key(SMALL_MLIR, sync)  # same target and flags
    assert key != iree_backend.artifact_key(SMALL_MLIR + " ", cpu)
    other_flags = iree_backend.Backend("x", "llvm-cpu", "local-task", ("--iree-opt-level=O3",))
    assert key != iree_backend.artifact_key(SMALL_MLIR, other_flags)


def _matmul_module(lhs: str, rhs: str) -> str:
    m, k = lhs.split("x")
    n = rhs.split("x")[1]
    return textwrap.dedent(f"""
        func.func @mm(%a: tensor<{lhs}xf32>, %b: tensor<{rhs}xf32>) -> tensor<{m}x{n}xf32> {{
          %zero = arith.constant 0.0 : f32
          %e = tensor.empty() : tensor<{m}x{n}xf32>
          %init = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
          %r = linalg.matmul ins(%a, %b : tensor<{lhs}xf32>, tensor<{rhs}xf32>) outs(%init : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
          return %r : tensor<{m}x{n}xf32>
        }}""")


@pytest.mark.parametrize("lhs, rhs, tiled", [("256x784", "784x1024", True), ("512x512", "512x512", False),
                                              ("8x3", "3x4", False)])
def test_data_tiling_only_for_matmuls_large_enough_to_pay_for_it(lhs, rhs, tiled):
    flags = iree_backend.compile_flags(_matmul_module(lhs, rhs), BACKENDS["cpu"])
    assert ("--iree-dispatch-creation-data-tiling" in flags) == tiled
    assert ("--iree-llvmcpu-enable-ukernels=all" in flags) == tiled
    assert "--iree-llvmcpu-target-cpu=host" in flags


def test_the_flags_chosen_for_a_module_are_in_its_key():
    small, large = _matmul_module("8x3", "3x4"), _matmul_module("256x784", "784x1024")
    cpu = BACKENDS["cpu"]
    kept = iree_backend.Backend("x", "llvm-cpu", "local-task", iree_backend.compile_flags(large, cpu))
    dropped = iree_backend.Backend("x", "llvm-cpu", "local-task", iree_backend.compile_flags(small, cpu))
    assert iree_backend.artifact_key(large, cpu) == iree_backend.artifact_key(large, kept)
    assert iree_backend.artifact_key(small, cpu) == iree_backend.artifact_key(small, dropped)


@pytest.mark.iree
@pytest.mark.parametrize("m", [2, 256])  # without and with data tiling
def test_matmuls_either_side_of_the_data_tiling_threshold_match_numpy(m):
    a = np.linspace(-1, 1, m * 784, dtype=np.float32).reshape(m, 784)
    b = np.linspace(-1, 1, 784 * 1024, dtype=np.float32).reshape(784, 1024)
    vmfb = compile_vmfb(_matmul_module(f"{m}x784", "784x1024"), "cpu").vmfb
    (out,) = LoadedModule(vmfb, "cpu").function("mm")([a, b])
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_concurrent_puts_never_expose_a_partial_entry(tmp_path):
    cache = disk_cache.DiskCache(tmp_path)
    key = disk_cache.make_key("k")
    payloads = [bytes([i]) * 200_000 for i in range(8)]
    seen: list = []

    def writer(p: bytes) -> None:
        for _ in range(20):
            assert cache.put(key, p)

    def reader() -> None:
        for _ in range(200):
            seen.append(cache.get(key))

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s is None or s in payloads for s in seen)
    assert [p.name for p in tmp_path.iterdir()] == [f"{key}.bin"]  # no temporaries left


@pytest.mark.iree
def test_corrupted_entry_is_recompiled(fresh_cache, compiler_calls):
    first = compile_vmfb(SMALL_MLIR)
    assert not first.cache_hit and compiler_calls == ["cpu"]
    (entry,) = fresh_cache.iterdir()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))

    second = compile_vmfb(SMALL_MLIR)
    assert not second.cache_hit and len(compiler_calls) == 2
    (r,) = LoadedModule(second.vmfb).function("neg")([np.array([1.0, -2.0], np.float32)])
    assert r.tolist() == [-1.0, 2.0]

    third = compile_vmfb(SMALL_MLIR)  # the recompiled entry replaced the bad one
    assert third.cache_hit and third.vmfb == second.vmfb and len(compiler_calls) == 2


@pytest.mark.iree
@pytest.mark.parametrize("setting", ["unusable", "off"])
def test_cache_that_cannot_or_must_not_be_used(setting, tmp_path, monkeypatch, compiler_calls):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    value = str(blocker / "cache") if setting == "unusable" else "off"
    monkeypatch.setenv("PYFRONT_CACHE_DIR", value)
    result = compile_vmfb(SMALL_MLIR)  # compiles, and does not fail
    assert not result.cache_hit and compiler_calls == ["cpu"]
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


CACHE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from pyfront.runtime import iree_backend

    if sys.argv[2] == "forbid-compiler":
        def forbidden(*args):
            raise AssertionError("the compiler ran on a cache hit")
        iree_backend._invoke_compiler = forbidden
    result = iree_backend.compile_vmfb(sys.argv[1])
    f = iree_backend.LoadedModule(result.vmfb).function("neg")
    out = f([np.array([1.0, 2.0], np.float32)])[0]
    print(json.dumps({
        "cache_hit": result.cache_hit,
        "compiler_imported": "iree.compiler" in sys.modules,
        "result": out.tolist(),
    }))
    """
)


@pytest.mark.iree
def test_cache_hit_in_a_second_process(tmp_path):
    def run(mode: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-c", CACHE_SCRIPT, SMALL_MLIR, mode],
            env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        return json.loads(proc.stdout)

    first = run("compile")
    assert first == {"cache_hit": False, "compiler_imported": True, "result": [-1.0, -2.0]}
    second = run("forbid-compiler")
    assert second == {"cache_hit": True, "compiler_imported": False, "result": [-1.0, -2.0]}


# --------------------------------------------------------------------------
# Interpreter exit
# --------------------------------------------------------------------------

EXIT_SCRIPT = textwrap.dedent(
    """
    import atexit, sys, threading, time
    import numpy as np

    def late_call():
        # Registered before pyfront is imported, so it runs after its exit hook.
        try:
            f([a, a])
            print("late call: ran")
        except RuntimeError:
            print("late call: RuntimeError")

    atexit.register(late_call)

    from pyfront.runtime.iree_backend import LoadedModule, compile_vmfb

    vmfb = compile_vmfb(sys.argv[1]).vmfb
    f = LoadedModule(vmfb, "cpu").function("add_f32")
    g = LoadedModule(vmfb, "cpu-sync").function("add_f32")
    a = np.ones((4, 8), np.float32)
    assert (f([a, a])[0] == 2).all() and (g([a, a])[0] == 2).all()

    # A traceback that keeps IREE objects alive until exit, as a REPL does.
    try:
        f([a.astype(np.float64), a])
    except ValueError as e:
        sys.last_value, sys.last_traceback = e, e.__traceback__

    if sys.argv[2] == "daemon-threads":
        # Threads still inside IREE calls when the interpreter finalizes.
        def spin():
            while True:
                f([a, a])

        for _ in range(3):
            threading.Thread(target=spin, daemon=True).start()
        time.sleep(0.1)
    else:
        # IREE objects outliving the device's other holders, last in this
        # module's globals (cleared in order at exit): a context, then a result
        # buffer, as the frames of a traceback taken mid-call can hold them.
        import iree.runtime as rt
        m = LoadedModule(vmfb, "cpu")
        context, fn = m._contexts[0], m._vm_module.lookup_function("add_f32")
        args, out = rt.VmVariantList(2), rt.VmVariantList(1)
        for x in (a, a):
            args.push_ref(m._rt.allocator.allocate_buffer_copy(
                int(rt.MemoryType.DEVICE_LOCAL), int(rt.BufferUsage.DEFAULT),
                m._rt.device, x, rt.HalElementType.FLOAT_32).ref)
        context.invoke(fn, args, out)
        result_buffer = out.get_as_object(0, rt.HalBufferView)
    print("done")
    """
)


@pytest.mark.iree
@pytest.mark.parametrize("scenario", ["daemon-threads", "held-objects"])
def test_exit_is_quiet(scenario, tmp_path):
    # Each run compiles in its own cache: the compiler's bindings are loaded too.
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, MLIR, scenario],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "nanobind" not in proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.split() == ["done", "late", "call:", "RuntimeError"]


INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from pyfront.runtime import iree_backend

    # Exit would wait this long for a call still counted in flight: a leaked
    # context makes the process hang until the test's deadlock guard fires.
    iree_backend._EXIT_WAIT_SECONDS = 3600.0
    m = iree_backend.LoadedModule(iree_backend.compile_vmfb(sys.argv[1]).vmfb)
    f = m.function("neg")
    x = np.array([1.0, 2.0], np.float32)
    # A SIGINT's KeyboardInterrupt is raised between two bytecodes; the
    # profile hook raises it deterministically at two such points: right
    # after a context is taken, and right after IREE returned (before the
    # context goes back to the pool).
    for when, method in (("c_return", "pop"), ("c_call", "append")):
        def interrupt(frame, event, arg):
            if (event == when and getattr(arg, "__name__", "") == method
                    and getattr(arg, "__self__", None) is m._contexts):
                sys.setprofile(None)
                raise KeyboardInterrupt
        sys.setprofile(interrupt)
        try:
            f([x])
        except KeyboardInterrupt:
            print("interrupted", m._busy())
        sys.setprofile(None)
    print(f([x])[0].tolist())
    """
)


@pytest.mark.iree
def test_keyboard_interrupt_in_a_call_releases_its_context(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPT_SCRIPT, SMALL_MLIR],
        env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["interrupted False", "interrupted False", "[-1.0, -2.0]"]
