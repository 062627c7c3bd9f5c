"""Compile MLIR to IREE modules and call their functions with NumPy arrays.

Contract:

* `compile_vmfb(mlir_text, backend="cpu") -> CompileResult` compiles with
  `iree.compiler.compile_str` for the backend's IREE target and flags, and
  consults the on-disk cache (`pyfront.runtime.disk_cache`) first. The cache
  key covers the MLIR text, the IREE target and flags, the IREE compiler and
  runtime versions, the pyfront version and, for `-cpu=host` flags, the host
  CPU (so a cache shared between machines never hands out code for another
  CPU). A cache hit does not import the compiler at all. Compiler failures
  raise `CompileError` with the compiler's diagnostics. `iree-compile` runs
  as a child process that is killed when `timeout` passes (`CompileTimeout`),
  when the caller gets an exception while waiting, and when the caller's
  process dies (runtime/compiler_process.py).
* `get_backend(name)` returns the `Backend` of that name or raises ValueError
  naming it and the supported ones. `BACKENDS` is the table:
  "cpu" runs on IREE's multi-threaded `local-task` driver; "cpu-sync" runs the
  same code on `local-sync`, inline in the calling thread, which costs far
  less per call (no hand-off to worker threads) but uses one core per call;
  "cuda" compiles for `PYFRONT_CUDA_TARGET` (default sm_80; compiling needs
  no GPU) and runs on IREE's `cuda` driver; "vulkan" compiles SPIR-V for
  `PYFRONT_VULKAN_TARGET` with `PYFRONT_VULKAN_FEATURES` (defaults: the
  Android baseline 2022 profile, which uses no subgroup operations, plus
  Float64 and Int64) and runs on IREE's `vulkan` driver, on whatever device
  the system's Vulkan loader lists first (`VK_ICD_FILENAMES` selects an ICD,
  e.g. Mesa's lavapipe; pyfront never sets it). `check_available(name)` also
  creates the backend's device, so a missing driver or GPU fails there, with
  its name, rather than at the first call.
* `Backend.restrictions` is the one table of what a backend compiles but
  cannot run correctly; `compile_vmfb` refuses such a module with
  `BackendRestriction` (naming the reason) before invoking the compiler, so
  the JIT runs that call in the interpreter instead of giving a wrong answer.
* `LoadedModule(vmfb, backend="cpu").function(name, in_place)` returns a callable
  `f(inputs: list, modes=None) -> list[np.ndarray | None]`. Inputs are
  anything `np.asarray` accepts (non-contiguous arrays, NumPy scalars, 0-d
  arrays); they are copied into IREE buffers, except device-resident arrays
  (below), which are passed as the buffer they view. `modes[i]` says what
  result i becomes: `COPY` (the default for all): a fresh, writable,
  C-contiguous NumPy array owned by the caller; `RESIDENT`: a device-resident
  array (below), or a copy where that is not possible; `UNUSED`: None, nothing
  copied. `i1` results are NumPy bool.
* Device-resident arrays (`Backend.shares_host_memory`: the CPU drivers, whose
  device memory is host memory). A `RESIDENT` result is a plain, writable,
  C-contiguous `np.ndarray` over the mapping of IREE's result buffer (no copy;
  its `.base` owns the mapping, which keeps the buffer alive, and so do
  views of it: `_MappingOwner`). The device's
  table of resident arrays (`_Runtime.resident`: id -> weak reference, buffer
  view, address range, shape, dtype; an entry goes when its array dies)
  remembers it. When that very array object is an input of a later call on
  the same device and still has its shape and dtype and is C-contiguous (user
  code can set `.shape` in place), its buffer is passed as it is (no upload).
  Why that is always the current value, with no version or content check:
  the array and the buffer are one piece of memory, so whatever user code
  does to the array in place (`a += 1`, `a[0] = 5`, `np.copyto(a, b)`, writes
  through a kept view) is what the device reads; any other array (a rebound
  name, a copy, a pickle round trip, a view) is another object, not in the
  table, and is uploaded like any input. IREE must not write into its inputs
  (storage arguments are not inputs, see below), so that a later call cannot
  change an array the caller holds; IREE 3.13 does write into an input that is
  the destination of an insert. The caller names those (`InPlaceInputs`, from
  runtime/lowering.py's in_place_inputs): they are always uploaded, never passed
  as a resident buffer, and a result that is such an input as it came in is
  made from the input on the host. A result is made resident only if its memory is its own: not
  zero-sized, and overlapping neither a resident input (IREE returns an input
  it passes through, or a reshape of it, as the same memory) nor another
  resident result of the call (a value returned twice is one buffer);
  otherwise it is copied. IREE copies constants into its result buffers, so a
  result is never a module constant (tests/test_device_state.py checks both).
  Several results of one call may be slices of one IREE allocation, which
  lives while any of them does. Other backends copy.
* Result storage (functions compiled after `bind-result-storage`): each
  trailing `iree.abi.output` argument receives a buffer for its result. The
  caller may hand over, in `storage`, one candidate array per such argument
  (it gives up its reference: the list slot is cleared); its buffer is used
  when result_storage.only_the_callers and the array's table entry say that
  no Python code can observe it, and the result is then that same array
  object. Otherwise the buffer is freshly allocated (as IREE would).
  tests/test_result_storage.py.
* Call plans (runtime/call_plans.py): a call whose arrays are the objects an
  earlier call had, in the same state (the steady ping-pong of a training
  loop), repeats that call's decisions per array after checking them over
  whole lists at once. tests/test_call_plans.py.
* The callable keeps its module alive and may be called from several
  threads at once. On Vulkan, whose result buffers are not host-mappable and
  whose driver imports host memory only in 4096-byte aligned pages, results
  are copied by the device into page-aligned NumPy memory (one wait per call).
* One HAL driver, device and VM instance per backend per process, created on
  first use under a lock and shared by all modules.
* A lost device (Vulkan's VK_ERROR_DEVICE_LOST, CUDA's sticky errors) costs
  the call that found it, which raises `DeviceLost` (the runtime deopts it to
  the interpreter); the next call on the backend gets a new device and loads
  its module there, as after a fork (`_replace_lost_device`).
  tests/test_lost_device.py.
* Fork (multiprocessing's default start method on Linux): a forked child drops
  the parent's devices, VM instances, contexts and resident table without
  destroying them, and each module loads again on the child's own device on
  its next call; "cpu" runs there on local-sync (see `_reset_after_fork`).
  tests/test_fork.py.
* At interpreter exit no `nanobind: leaked ...` lines appear and nothing
  crashes, whatever the caller still holds (see `_shutdown`). A function
  called after that raises RuntimeError.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import ctypes
import dataclasses
import functools
import importlib.metadata
import itertools
import math
import os
import platform
import re
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, methodcaller

import numpy as np
from iree import runtime as ireert
from pyfront.runtime import disk_cache
from pyfront.runtime.call_plans import CallPlan
from pyfront.runtime.compiler_process import CompilerFailed, CompileTimeout, run_compiler
from pyfront.runtime.memory_spans import MemorySpans, all_disjoint
from pyfront.runtime.result_storage import only_the_callers, storage_specs

from pyfront.interrupts import asynchronous_cause

__all__ = [
    "BACKENDS",
    "COPY",
    "RESIDENT",
    "UNUSED",
    "Backend",
    "BackendRestriction",
    "CompileError",
    "CompileResult",
    "CompileTimeout",
    "DeviceLost",
    "LoadedModule",
    "Restriction",
    "cached_vmfb",
    "check_available",
    "compile_vmfb",
    "get_backend",
    "portable",
]


# --------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Restriction:
    """Something a backend compiles but cannot run correctly, found in the lowered module's text."""

    what: str  # e.g. "a tensor dim above 65535"
    why: str  # the measured reason
    found: Callable[[str], bool]  # lowered MLIR text -> does the module do it?


@dataclass(frozen=True)
class Backend:
    """How pyfront compiles for and runs on one kind of device."""

    name: str  # pyfront's name, e.g. "cpu"
    target: str  # IREE target backend (--iree-hal-target-backends)
    driver: str  # IREE HAL driver that runs the compiled module
    flags: tuple[str, ...]  # extra iree-compile flags
    restrictions: tuple[Restriction, ...] = ()
    # Results are not host-mappable: the device copies them into host memory
    # imported with this alignment (in bytes, also of the size); 0: map them.
    host_import_alignment: int = 0
    # Device memory is host memory (mapping a buffer neither copies nor
    # synchronizes): results can be device-resident arrays (see the docstring).
    shares_host_memory: bool = False


# `-cpu=host` specializes code to this machine's CPU: right for a JIT,
# wrong for artifacts shipped elsewhere (the cache key includes the CPU).
# IREE demotes f64 to f32 by default; NumPy semantics need real float64.
# Data tiling with microkernels makes large matmuls 1.3-2.5x faster here
# (bench/mlp_forward.py, 2 cores); a module without one drops both
# (`compile_flags`).
_CPU_FLAGS = (
    "--iree-llvmcpu-target-cpu=host",
    "--iree-input-demote-f64-to-f32=false",
    "--iree-dispatch-creation-data-tiling",
    "--iree-llvmcpu-enable-ukernels=all",
)

# IREE's CUDA target compiles without a GPU. sm_80 works with IREE 3.13
# (sm_90 crashed the compiler); PYFRONT_CUDA_TARGET picks another.
_CUDA_FLAGS = (
    f"--iree-cuda-target={os.environ.get('PYFRONT_CUDA_TARGET', 'sm_80')}",
    "--iree-input-demote-f64-to-f32=false",
)

# SPIR-V for Vulkan. IREE's GPU targets with subgroup operations assume a
# subgroup size (32 or more) that lavapipe (8) does not have, and their
# reductions and matmuls come out wrong there (measured); the Android 2022
# baseline profile uses none. It declares only 32-bit compute and storage, so
# the features add what lavapipe and desktop GPUs have: Float64, Int64, and
# 8/16-bit storage (without it IREE packs bool/int8 arrays into 32-bit words,
# and got elements wrong when a length was not a multiple of 4: measured).
_VULKAN_8_16_BIT = ("cap:Int8", "cap:Int16", "cap:StorageBuffer8BitAccess", "cap:StorageBuffer16BitAccess",
                    "ext:SPV_KHR_8bit_storage", "ext:SPV_KHR_16bit_storage")
_VULKAN_FEATURES = os.environ.get(
    "PYFRONT_VULKAN_FEATURES", ",".join(("spirv:v1.3", "cap:Shader", "cap:Float64", "cap:Int64", *_VULKAN_8_16_BIT))
)
_VULKAN_FLAGS = (
    f"--iree-vulkan-target={os.environ.get('PYFRONT_VULKAN_TARGET', 'vp_android_baseline_2022')}",
    f"--iree-vulkan-target-features={_VULKAN_FEATURES}",
    "--iree-input-demote-f64-to-f32=false",
    "--iree-input-demote-i64-to-i32=false",
)

_TENSOR_DIMS = re.compile(r"tensor<((?:[0-9?]+x)+)")
_VULKAN_MAX_DIM = 65535  # lavapipe's maxComputeWorkGroupCount
_F64_MATH = re.compile(r"= math\.(\w+) [^\n]*: f64\b")
# GLSL.std.450 has these for 64-bit floats; exp, log, tanh, sin, ... only for 16/32 bits.
_SPIRV_F64_MATH = {"absf", "ceil", "copysign", "floor", "fma", "round", "roundeven", "rsqrt", "sqrt", "trunc"}
_I64_DIVISION = re.compile(r"= arith\.(floordivsi|remsi) [^\n]*: i64\b")
_NARROW_TENSOR = re.compile(r"tensor<(?:[0-9?]+x)*i(1|8|16)>")


def _nested_branches(mlir_text: str) -> bool:
    """Whether an `scf.if` is inside a side of another (the printer indents each region)."""
    open_ifs: list[int] = []  # indents of the scf.ifs whose regions are open
    for line in mlir_text.splitlines():
        indent = len(line) - len(line.lstrip())
        while open_ifs and line.strip() == "}" and indent <= open_ifs[-1]:
            open_ifs.pop()
        if "scf.if" in line:
            if open_ifs:
                return True
            open_ifs.append(indent)
    return False


def _dims(mlir_text: str):
    for m in _TENSOR_DIMS.finditer(mlir_text):
        yield from m.group(1).split("x")[:-1]


# What the Vulkan backend refuses, measured with IREE 3.13 on lavapipe (Mesa
# 22.3). Large dims: a sum over an axis of 65536 or more elements returns the
# sum of its first 65535 (elementwise code over larger arrays is right, but
# which ops reduce is not visible here, so any dim above the limit is refused,
# and dynamic dims, which could exceed it). The others fail to compile.
# float16 results equal NumPy's bit for bit only where each matmul element is summed in k order
# and each op rounds to float16 (dialects/primitives/elementwise.py, contraction.py): checked on
# IREE's CPU code; GPU code may split sums or compute float16 natively.
_FLOAT16 = Restriction("float16 arrays", "pyfront's float16 results are checked to equal NumPy's only on "
                       "the CPU backend", lambda t: re.search(r"[<x]f16>", t) is not None)
_VULKAN_RESTRICTIONS = (
    _FLOAT16,
    Restriction("dynamic shapes", "a dynamic dim may exceed 65535, and IREE's SPIR-V reductions over "
                "an axis longer than that give wrong results", lambda t: any(d == "?" for d in _dims(t))),
    Restriction(f"a tensor dim above {_VULKAN_MAX_DIM}", "IREE's SPIR-V reductions over an axis longer "
                f"than {_VULKAN_MAX_DIM} give wrong results",
                lambda t: any(d != "?" and int(d) > _VULKAN_MAX_DIM for d in _dims(t))),
    Restriction("float64 exp/log/tanh/sin/cos/pow/...", "SPIR-V's GLSL math functions take only "
                "16/32-bit floats (use float32 arrays)",
                lambda t: any(m.group(1) not in _SPIRV_F64_MATH for m in _F64_MATH.finditer(t))),
    Restriction("int64 // and %", "IREE 3.13 cannot lower int64 floordiv/remainder to SPIR-V",
                lambda t: _I64_DIVISION.search(t) is not None),
    Restriction("branches nested in branches on computed values", "IREE 3.13 records command buffers with "
                "out-of-range binding references for some (issue #24753, tests/iree_repro/README.md bug 5): "
                "the CPU driver refuses the call, Vulkan lost the device", _nested_branches),
) + (() if all(f in _VULKAN_FEATURES.split(",") for f in _VULKAN_8_16_BIT) else (
    Restriction("bool/int8/int16 arrays without 8/16-bit storage", "PYFRONT_VULKAN_FEATURES lacks "
                f"{', '.join(_VULKAN_8_16_BIT)}, and IREE's 32-bit packing of narrow arrays gives wrong "
                "elements", lambda t: _NARROW_TENSOR.search(t) is not None),
))

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("cpu", "llvm-cpu", "local-task", _CPU_FLAGS, shares_host_memory=True),
        Backend("cpu-sync", "llvm-cpu", "local-sync", _CPU_FLAGS, shares_host_memory=True),
        Backend("cuda", "cuda", "cuda", _CUDA_FLAGS, (_FLOAT16,)),
        Backend("vulkan", "vulkan-spirv", "vulkan", _VULKAN_FLAGS, _VULKAN_RESTRICTIONS, 4096),
    )
}

# `portable(backend)` swaps the host-specific flags for these: artifacts
# exported for deployment (pyfront.export) must run on any CPU of the target
# architecture, not only on the machine that compiled them.
_PORTABLE_FLAGS = {"--iree-llvmcpu-target-cpu=host": "--iree-llvmcpu-target-cpu=generic"}


def portable(backend: Backend | str) -> Backend:
    """`backend` compiled for any CPU of its architecture (no `-cpu=host`)."""
    be = get_backend(backend) if isinstance(backend, str) else backend
    return dataclasses.replace(be, flags=tuple(_PORTABLE_FLAGS.get(f, f) for f in be.flags))


def get_backend(name: str) -> Backend:
    """The backend called `name`; ValueError naming the supported ones otherwise."""
    backend = BACKENDS.get(name)
    if backend is not None:
        return backend
    supported = ", ".join(repr(n) for n in BACKENDS)
    raise ValueError(f"unknown backend {name!r}; supported backends: {supported}")


def check_available(name: str) -> Backend:
    """The backend `name` if this process can run code on it; otherwise ValueError
    (unknown or unsupported name) or RuntimeError naming the missing driver or device."""
    backend = get_backend(name)
    _runtime(backend)
    return backend


# --------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------


class CompileError(RuntimeError):
    """iree-compile rejected a module; `diagnostics` is what it printed."""

    def __init__(self, backend: str, diagnostics: str):
        self.backend = backend
        self.diagnostics = diagnostics
        super().__init__(f"IREE compilation for backend {backend!r} failed:\n{diagnostics}")


class BackendRestriction(CompileError):
    """A module that the backend would compile but not run correctly (`Backend.restrictions`)."""

    def __init__(self, backend: str, restriction: Restriction):
        self.backend = backend
        self.restriction = restriction
        self.diagnostics = f"backend {backend!r} does not run {restriction.what}: {restriction.why}"
        RuntimeError.__init__(self, self.diagnostics)


class DeviceLost(RuntimeError):
    """A call found its backend's device lost; the next call gets a new one (`_replace_lost_device`)."""


@dataclass(frozen=True)
class CompileResult:
    vmfb: bytes
    cache_hit: bool
    seconds: float  # wall time of compile_vmfb, cache lookup included


def compile_vmfb(mlir_text: str, backend: str | Backend = "cpu", timeout: float | None = None,
                 niceness: int = 0) -> CompileResult:
    """Compile `mlir_text` for `backend` (a name or a `Backend`), through the on-disk cache.

    `timeout`: seconds `iree-compile` may run (None: no limit); past it, the
    child is killed and CompileTimeout raised (runtime/compiler_process.py).
    `niceness`: how far below this process's priority `iree-compile` runs.
    """
    be = get_backend(backend) if isinstance(backend, str) else backend
    start = time.perf_counter()
    found = cached_vmfb(mlir_text, be)
    if found is not None:
        return found
    vmfb = _invoke_compiler(mlir_text, be, timeout, niceness)
    cache = disk_cache.from_env()
    if cache is not None:
        cache.put(artifact_key(mlir_text, be), vmfb)
    return CompileResult(vmfb, False, time.perf_counter() - start)


def cached_vmfb(mlir_text: str, backend: str | Backend = "cpu") -> CompileResult | None:
    """`compile_vmfb`'s answer when the disk cache holds it (no compiler runs), else None.

    Raises `BackendRestriction` for a module the backend must not run, cached or not.
    """
    be = get_backend(backend) if isinstance(backend, str) else backend
    for restriction in be.restrictions:
        if restriction.found(mlir_text):
            raise BackendRestriction(be.name, restriction)
    start = time.perf_counter()
    cache = disk_cache.from_env()
    vmfb = cache.get(artifact_key(mlir_text, be)) if cache is not None else None
    return None if vmfb is None else CompileResult(vmfb, True, time.perf_counter() - start)


def artifact_key(mlir_text: str, backend: Backend) -> str:
    """The disk-cache key of compiling `mlir_text` for `backend`.

    Keyed by the IREE target rather than pyfront's backend name: "cpu" and
    "cpu-sync" compile the same artifact and share it.
    """
    compiler, runtime, pyfront = _versions()
    flags = compile_flags(mlir_text, backend)
    host = _host_cpu() if any(f.endswith("=host") for f in flags) else ""
    return disk_cache.make_key(
        "pyfront-vmfb",
        mlir_text,
        backend.target,
        "\0".join(flags),
        compiler,
        runtime,
        pyfront,
        host,
    )


# IREE 3.13's data tiling fails on some modules that compile without it: a bool array
# fused with a matmul's result (`np.where(mask, q @ k, -1e9)`; tests/iree_repro/
# masked_batch_matmul.mlir). Such a module is compiled again without data tiling:
# slower matmuls, not the interpreter.
_DATA_TILING = "--iree-dispatch-creation-data-tiling"

# Data tiling packs a matmul's operands into the tiles of IREE's microkernels
# on every call; it pays for large matmuls only. Measured (2 cores, float32,
# median step, runs interleaved; `np.maximum(x @ w + b, 0)` with n x n
# operands): n = 256: 1.36 ms with it, 0.67 without; n = 512: 7.5 vs 6.3 ms;
# n = 768: 20.6 vs 23.8 ms; bench mlp_forward 256x784 @ 784x1024: 6.7 vs
# 14.6 ms; bench mlp_train_step 128x784-256-10: 4.1 vs 2.3 ms. Without it a
# module compiles 35-65% faster. So a module whose largest matmul is at most
# this many multiply-adds compiles without data tiling or microkernels.
DATA_TILING_MIN_MACS = 2**27
_MATMUL_OPERANDS = re.compile(r"linalg\.(?:batch_)?matmul ins\([^:]*: tensor<([0-9?x]+)x\w+>, tensor<(?:[0-9?]+x)*([0-9?]+)x\w+>\)")
_WITHOUT_DATA_TILING = {_DATA_TILING: None, "--iree-llvmcpu-enable-ukernels=all": "--iree-llvmcpu-enable-ukernels=none"}


def compile_flags(mlir_text: str, backend: Backend) -> tuple[str, ...]:
    """`backend`'s flags for compiling `mlir_text`: without data tiling where its matmuls are small."""
    if _DATA_TILING not in backend.flags or _largest_matmul(mlir_text) > DATA_TILING_MIN_MACS:
        return backend.flags
    replaced = (_WITHOUT_DATA_TILING.get(f, f) for f in backend.flags)
    return tuple(f for f in replaced if f is not None)


def _largest_matmul(mlir_text: str) -> float:
    """The most multiply-adds of one `linalg.matmul`/`batch_matmul` in `mlir_text` (inf for a dynamic size)."""
    largest = 0.0
    for lhs, n in _MATMUL_OPERANDS.findall(mlir_text):
        dims = [*lhs.split("x"), n]  # [batch,] m, k, then n
        largest = max(largest, math.inf if "?" in dims else math.prod(map(int, dims)))
    return largest


def _invoke_compiler(mlir_text: str, backend: Backend, timeout: float | None = None, niceness: int = 0) -> bytes:
    source, flags = mlir_text.encode("utf-8"), list(compile_flags(mlir_text, backend))
    try:
        return run_compiler(source, [backend.target], flags, timeout, niceness)
    except CompilerFailed as e:
        if _DATA_TILING not in flags:
            raise CompileError(backend.name, e.stderr.strip()) from e
        try:
            return run_compiler(source, [backend.target], [f for f in flags if f != _DATA_TILING], timeout, niceness)
        except CompilerFailed:
            raise CompileError(backend.name, e.stderr.strip()) from e


@functools.cache
def _versions() -> tuple[str, str, str]:
    from pyfront import __version__ as pyfront_version

    try:
        compiler = importlib.metadata.version("iree-base-compiler")
    except importlib.metadata.PackageNotFoundError:
        from iree.compiler.version import VERSION as compiler  # a source build
    from iree.runtime.version import VERSION as runtime

    return compiler, runtime, pyfront_version


_CPU_KEYS = (
    "vendor_id", "cpu family", "model", "model name", "stepping", "flags",  # x86
    "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features",  # arm
)  # fmt: skip


@functools.cache
def _host_cpu() -> str:
    """What `-cpu=host` compiles for: the first CPU's identity and features."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if fields:
                        break  # end of the first processor's block
                    continue
                k, _, v = line.partition(":")
                if k.strip() in _CPU_KEYS:
                    fields.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    if not fields:
        return f"{platform.machine()}|{platform.processor()}"
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields))


# --------------------------------------------------------------------------
# Runtime: one driver/device/instance per backend, shared
# --------------------------------------------------------------------------


_DRIVER_HINTS = {
    "vulkan": " (needs a Vulkan driver: a GPU's, or Mesa's lavapipe on the CPU, Debian package "
    "mesa-vulkan-drivers; VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json selects lavapipe)",
    "cuda": " (needs an NVIDIA GPU and its driver)",
}


class _Runtime:
    __slots__ = ("allocator", "backend", "device", "hal_module", "instance", "resident")

    def __init__(self, backend: Backend):
        name = _driver_name(backend)
        try:
            driver = ireert.get_driver(name)
            with _mpi_launch_hidden():
                self.device = driver.create_default_device(allocators=_allocator_specs(name))
        except Exception as e:
            raise RuntimeError(
                f"backend {backend.name!r}: cannot create an IREE {name!r} device: {e}"
                + _DRIVER_HINTS.get(name, "")
            ) from e
        _DRIVERS_CREATED.add(name)
        self.backend = backend
        self.instance = ireert.VmInstance()
        self.hal_module = ireert.create_hal_module(self.instance, self.device)
        self.allocator = self.device.allocator
        self.resident: dict[int, _Resident] = {}  # device-resident arrays: see the module docstring


# IREE's CPU drivers allocate each buffer of a call (uploads, intermediates, results) from
# malloc and free it after the call: large blocks come back as fresh pages, and the page
# faults took half of a 256x1024 GELU + layer norm call (3.8 ms -> 1.9 ms with buffers kept
# for reuse). IREE's caching allocator keeps freed buffers for a later request of the same
# size, while the buffers it has made (in use and kept) total at most PYFRONT_BUFFER_CACHE
# bytes; beyond that it allocates and frees as before.
BUFFER_CACHE_BYTES = 1 << 30
_BUFFERS_KEPT = 64  # freed buffers kept at most (IREE's default; each request scans them)
_CACHING_DRIVERS = ("local-sync", "local-task")


def _allocator_specs(driver: str) -> list[str] | None:
    """The allocator wrappers of `driver`'s devices (IREE's `--device_allocator` specs), or None."""
    value = os.environ.get("PYFRONT_BUFFER_CACHE", "")
    try:
        capacity = int(value) if value else BUFFER_CACHE_BYTES
    except ValueError:
        raise ValueError(f"PYFRONT_BUFFER_CACHE must be a number of bytes (0: off), got {value!r}") from None
    if driver not in _CACHING_DRIVERS or capacity <= 0:
        return None
    return [f"caching:*=*;{capacity};{_BUFFERS_KEPT}"]  # heap, largest buffer, total, count


# The variables by which IREE's runtime (hal/utils/mpi_channel_provider.c) tells that mpiexec/mpirun
# launched the process; seeing one, device creation loads libmpi.so to give the device an MPI
# channel provider for IREE's own collectives, and fails where the library is not on the loader's
# path (or would own MPI's init and finalize beside mpi4py's). pyfront's modules use no IREE
# channels: collectives are pyfront.distributed's, on the host through mpi4py.
_MPI_LAUNCH_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPIEXEC_HOSTNAME")


@contextlib.contextmanager
def _mpi_launch_hidden():
    """Device creation without IREE's MPI channel provider: the launcher's variables, unset meanwhile."""
    saved = {k: os.environ.pop(k) for k in _MPI_LAUNCH_VARIABLES if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


_DRIVERS_CREATED: set[str] = set()  # IREE drivers this process created (the bindings cache them)
_FORKED_DRIVERS: set[str] = set()  # drivers a parent created before forking this process


def _driver_name(backend: Backend) -> str:
    """The driver that runs `backend` in this process: its own, except in a forked child
    whose parent had created it (see _reset_after_fork)."""
    if backend.driver not in _FORKED_DRIVERS:
        return backend.driver
    if backend.driver in _DRIVER_AFTER_FORK:
        return _DRIVER_AFTER_FORK[backend.driver]
    raise RuntimeError(f"backend {backend.name!r}: IREE's {backend.driver!r} driver cannot be used in "
                       "a process forked after its parent used it (use the 'spawn' start method)")


_RUNTIMES: dict[str, _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()
_shut_down = False


def _runtime(backend: Backend) -> _Runtime:
    rt = _RUNTIMES.get(backend.name)
    if rt is None:
        with _RUNTIMES_LOCK:
            if _shut_down:
                raise RuntimeError("pyfront's IREE runtime has shut down (interpreter exit)")
            rt = _RUNTIMES.get(backend.name)
            if rt is None:
                rt = _RUNTIMES[backend.name] = _Runtime(backend)
    return rt


# How IREE reports a device that no call can use any more: Vulkan's VK_ERROR_DEVICE_LOST (seen on
# lavapipe under load, after a call of IREE 3.13's Vulkan runtime failed), CUDA's sticky errors.
_DEVICE_LOST = re.compile(r"DEVICE_LOST|CUDA_ERROR_(ILLEGAL_ADDRESS|LAUNCH_FAILED|ECC_UNCORRECTABLE)")


def _replace_lost_device(device) -> None:
    """After a call found `device` lost: the next call on its backend creates a new device, VM
    instance and HAL module, and each module loads again there on its next call (as after a fork).

    Without this every later call on the backend would fail and run in the interpreter for the rest
    of the process. The lost device's objects are abandoned, never destroyed: callers may still hold
    its buffers (resident arrays, results in flight in other threads).
    """
    with _RUNTIMES_LOCK:
        lost = next((rt for rt in _RUNTIMES.values() if rt.device is device), None)
        if lost is None:  # another thread replaced it first
            return
        del _RUNTIMES[lost.backend.name]
    _abandon(lost, lost.device, lost.instance, lost.hal_module, lost.allocator, lost.resident)
    for m in list(_LIVE_MODULES):
        if m._rt is lost:
            m._drop_runtime()
    for f in list(_LIVE_FUNCTIONS):
        if f._device is device:
            f._forget_runtime()


# --------------------------------------------------------------------------
# Fork
# --------------------------------------------------------------------------


# The driver a forked child uses instead of one its parent created: local-sync holds no
# threads and works as it is; local-task's work goes to local-sync (the same code, one thread).
_DRIVER_AFTER_FORK = {"local-task": "local-sync", "local-sync": "local-sync"}


def _abandon(*objects) -> None:
    """Keep `objects` alive for good: in a forked child, the parent's IREE objects must never
    be destroyed (a local-task device's destructor joins worker threads the child does not have)."""
    for obj in objects:
        if obj is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def _reset_after_fork() -> None:
    """In a forked child: forget the parent's devices, VM instances and loaded modules.

    Only the forking thread exists in the child, so the local-task driver's
    workers are gone and a call on the parent's device would wait for them
    forever. The child creates its own runtime on first use; each module
    that was loaded reloads its bytes there on its next call (_Function._rebind),
    and the resident table starts empty (the parent's resident arrays are
    ordinary NumPy memory in the child and are uploaded like any input).
    This runs only Python bookkeeping: a fork that execs (subprocess) pays nothing.

    IREE's Python bindings keep one driver per name for the process, and the
    local-task driver owns the worker threads: a child cannot get a working
    local-task driver once its parent created one. Its "cpu" calls run the
    same compiled code on local-sync, inline in the calling thread
    (_DRIVER_AFTER_FORK). Other drivers the parent created (cuda, vulkan) are
    refused in the child, and its calls run in the interpreter.
    """
    global _RUNTIMES_LOCK
    _RUNTIMES_LOCK = threading.Lock()  # another thread of the parent may have held it
    _FORKED_DRIVERS.update(_DRIVERS_CREATED)
    for rt in _RUNTIMES.values():
        _abandon(rt, rt.device, rt.instance, rt.hal_module, rt.allocator, rt.resident)
    _RUNTIMES.clear()
    for m in list(_LIVE_MODULES):
        if m._contexts is not None:  # not closed by _shutdown
            m._forget_runtime()
    for f in list(_LIVE_FUNCTIONS):
        if f._vm_function is not None:
            f._forget_runtime()


os.register_at_fork(after_in_child=_reset_after_fork)


# --------------------------------------------------------------------------
# Modules and the per-call path
# --------------------------------------------------------------------------

# Inputs are copied into device-local buffers (host memory on the CPU
# drivers), as iree.runtime's own FunctionInvoker does. Importing the NumPy
# memory instead would skip the copy, but IREE's CPU kernels assume 64-byte
# aligned buffers (misaligned imports crash), and NumPy's are 16-byte aligned.
_INPUT_MEMORY = int(ireert.MemoryType.DEVICE_LOCAL)
_VariantList, _BufferView = ireert.VmVariantList, ireert.HalBufferView
_INPUT_USAGE = int(ireert.BufferUsage.DEFAULT)

_HAL_TYPES: dict[np.dtype, object] = {}  # NumPy dtype -> HalElementType
_NP_TYPES: dict[object, np.dtype] = {}  # HalElementType -> NumPy dtype
_SCALAR_TYPES = {
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}  # fmt: skip


def _hal_type(dtype: np.dtype):
    from iree.runtime.dtypes import map_dtype_to_hal_element_type

    t = map_dtype_to_hal_element_type(dtype)
    if t is None:
        raise TypeError(f"pyfront cannot pass arrays of dtype {dtype} to IREE")
    _HAL_TYPES[dtype] = t
    return t


def _np_type(element_type) -> np.dtype:
    dt = _NP_TYPES.get(element_type)  # (not `get(...) or`: a dtype without fields is falsy)
    if dt is None:
        dt = _NP_TYPES[element_type] = np.dtype(ireert.HalElementType.map_to_dtype(element_type))
    return dt


def _copied(bv, dtype: np.dtype) -> np.ndarray:
    """A new C-contiguous array holding the buffer view's contents (the caller owns it).

    Read through the mapping's buffer protocol: `MappedMemory.asarray` costs
    three times as much (1.2 us more per result, measured).
    """
    shape = bv.shape
    return np.frombuffer(bv.map(), dtype, math.prod(shape)).reshape(shape).copy()


# What a result becomes (`modes` of a call): see the module docstring.
COPY, RESIDENT, UNUSED = 0, 1, 2


@dataclass(frozen=True)
class InPlaceInputs:
    """The inputs of a function that IREE 3.13 writes into (tests/iree_repro/returned_argument_updated.mlir),
    and the results that are such an input as it came in: result index -> input index."""

    written: frozenset = frozenset()
    returned: tuple = ()  # ((result, input), ...)


NOT_IN_PLACE = InPlaceInputs()


class _Resident(weakref.ref):
    """A device's table entry for a resident array: a weak reference to it, and its buffer.

    The entry is keyed by `id(array)` and removes itself when the array dies
    (unless a later array with the same id replaced it).
    """

    __slots__ = ("buffer", "buffer_view", "dtype", "key", "ref", "shape", "span", "strides", "table", "weakrefs")

    def __new__(cls, array: np.ndarray, *_):
        return super().__new__(cls, array, _forget)

    def __init__(self, array: np.ndarray, table: dict, buffer_view, start: int, end: int):
        super().__init__(array, _forget)
        self.table, self.buffer_view, self.span = table, buffer_view, (start, end)
        # Made once, not per call: what a call passing the array pushes, and what a result aliased
        # onto its memory has as its buffer.
        self.ref, self.buffer = buffer_view.ref, buffer_view.get_buffer()
        self.shape, self.dtype, self.strides, self.key = array.shape, array.dtype, array.strides, id(array)
        self.weakrefs = weakref.getweakrefcount(array)  # this one: see result_storage
        table[self.key] = self


class _MappingOwner:
    """The `.base` of a resident array: owns the array IREE maps its buffer into.

    IREE keeps a mapping alive through a weak reference on the array
    `MappedMemory.asarray` returns, whose `.base` is another ndarray. NumPy
    collapses a view's `.base` past arrays that do not own their data, so a
    view of that array (`w.T`, `w[1:]`) would hold its base but not the array
    itself: once the array died, IREE unmapped and freed the memory under the
    view. NumPy stops collapsing at a base that is not an ndarray, so views of
    an array over this object hold the array, this object and so the mapping.
    """

    __slots__ = ("__array_interface__", "_mapped")
    base = None  # where result_storage.only_the_callers's walk down `.base` ends (no AttributeError raised)

    def __init__(self, mapped: np.ndarray):
        self._mapped = mapped
        self.__array_interface__ = mapped.__array_interface__


_REF, _BUFFER, _GET_BUFFER = attrgetter("ref"), attrgetter("buffer"), methodcaller("get_buffer")
_consume = collections.deque(maxlen=0).extend


def _forget(entry: _Resident) -> None:
    if entry.table.get(entry.key) is entry:
        del entry.table[entry.key]
    entry.ref = entry.buffer = entry.buffer_view = None  # a call plan may hold the entry: not its buffer
_LIVE_MODULES: weakref.WeakSet[LoadedModule] = weakref.WeakSet()
_LIVE_FUNCTIONS: weakref.WeakSet[_Function] = weakref.WeakSet()
_NEVER = threading.Event()  # never set: see _after_shutdown


class LoadedModule:
    """A compiled module (vmfb bytes) loaded on a backend's shared device."""

    def __init__(self, vmfb: bytes, backend: str = "cpu"):
        self.backend = get_backend(backend)
        self._vmfb = vmfb  # loaded again in a forked child (_reset_after_fork)
        self._lock = threading.Lock()
        self._in_flight: set = set()
        self._load()
        _LIVE_MODULES.add(self)

    def _load(self) -> None:
        """Load the module on this process's device, with one context in the pool.

        IREE contexts are "thread-compatible": one thread at a time each.
        A call takes a context from the pool (list.pop/append are atomic)
        and makes a new one if all are busy, so concurrent calls neither
        share a context nor wait on a lock. `_in_flight` holds one token per
        call between taking a context and giving it back, so that exit can
        wait for calls in flight; a token is discarded in a `finally`, so a
        KeyboardInterrupt (raised between any two bytecodes, e.g. right after
        IREE returns) cannot leave a call counted forever. The first context
        is made now: a bad module fails here.
        """
        self._rt = _runtime(self.backend)
        try:
            vm_module = ireert.VmModule.copy_buffer(self._rt.instance, self._vmfb)
        except Exception as e:
            raise ValueError(f"not a loadable IREE module: {e}") from e
        first = ireert.VmContext(self._rt.instance, [self._rt.hal_module, vm_module])
        self._vm_module, self._contexts = vm_module, [first]
        # New code, new buffer sizes: the buffers kept for reuse (_allocator_specs) are released,
        # or sizes no call makes any more would hold the cache's slots.
        self._rt.allocator.trim()

    def _new_context(self):
        with self._lock:
            if self._contexts is None:
                _after_shutdown()
            return ireert.VmContext(self._rt.instance, [self._rt.hal_module, self._vm_module])

    @property
    def function_names(self) -> list[str]:
        return [n for n in self._vm_module.function_names if not n.startswith("__")]

    def function(self, name: str, in_place: InPlaceInputs = NOT_IN_PLACE) -> Callable[[Sequence], list[np.ndarray]]:
        """The exported function `name` as `f(inputs) -> list of arrays`."""
        vm_function = self._vm_module.lookup_function(name)
        if vm_function is None:
            raise ValueError(
                f"IREE module has no function {name!r}; it has: {', '.join(self.function_names)}"
            )
        return _Function(self, vm_function, in_place)

    def _busy(self) -> bool:
        return self._contexts is not None and bool(self._in_flight)

    def _close(self) -> None:
        with self._lock:
            self._contexts = None
        self._vm_module = None
        self._rt = None

    def _forget_runtime(self) -> None:
        """In a forked child: abandon the parent's module and contexts (never destroyed: see
        _reset_after_fork); `_reload` loads the module again on the child's own device."""
        self._lock = threading.Lock()  # another thread of the parent may have held it
        self._in_flight = set()
        self._drop_runtime()

    def _drop_runtime(self) -> None:
        """Abandon the module and contexts of a device no call may use; `_reload` loads it on a new one."""
        _abandon(self._vm_module, self._contexts)
        self._contexts, self._vm_module, self._rt = [], None, None

    def _reload(self) -> None:
        with self._lock:
            if self._contexts is None:  # closed by _shutdown
                _after_shutdown()
            if self._vm_module is None:  # else another thread of the child reloaded it
                self._load()


class _Function:
    """The callable `LoadedModule.function` returns; see the module docstring."""

    __slots__ = (
        "__weakref__",
        "_allocator",
        "_device",
        "_import_alignment",
        "_in_place",
        "_module",
        "_n_results",
        "_plans",
        "_pool",
        "_resident",
        "_scalar_types",
        "_shares_host_memory",
        "_storage",
        "_storage_usage",
        "_vm_function",
        "n_inputs",
        "n_results",
        "name",
    )

    def __init__(self, module: LoadedModule, vm_function, in_place: InPlaceInputs):
        self.name = vm_function.name
        self._module = module  # keeps the module (and its contexts) alive
        self._in_place = in_place
        self._bind(vm_function)
        # The declaration reads "... -> (%output0: tensor<4xf32>, %output1: i32)".
        decl = vm_function.reflection.get("iree.abi.declaration", "")
        results = re.findall(r"%output\d+: (\w+)", decl.partition("->")[2])
        # As declared: callers check their own expectations (pyfront.load does).
        self.n_results = len(results)
        self._n_results = max(len(results), 1)
        self._scalar_types = [_SCALAR_TYPES.get(t) for t in results]
        self._storage = [(spec, _HAL_TYPES.get(spec.dtype) or _hal_type(spec.dtype))
                         for spec in storage_specs(decl, _SCALAR_TYPES)]
        self.n_inputs = len(re.findall(r"%input\d+:", decl.partition("->")[0])) - len(self._storage)
        # Mappable on the CPU drivers, so that a result in the buffer can be resident.
        self._storage_usage = _INPUT_USAGE | (int(ireert.BufferUsage.MAPPING) if self._shares_host_memory else 0)
        _LIVE_FUNCTIONS.add(self)

    def _bind(self, vm_function) -> None:
        """Take the module's current device, context pool and resident table."""
        module = self._module
        self._vm_function = vm_function
        self._pool = module._contexts
        self._device = module._rt.device
        self._allocator = module._rt.allocator
        self._import_alignment = module.backend.host_import_alignment
        self._shares_host_memory = module.backend.shares_host_memory
        self._resident = module._rt.resident
        self._plans: list[CallPlan] = []  # of calls on this device: see runtime/call_plans.py

    def __repr__(self) -> str:
        return f"<pyfront IREE function {self.name!r} on {self._module.backend.name!r}>"

    def __call__(self, inputs: Sequence, modes: Sequence[int] | None = None,
                 storage: list | None = None) -> list[np.ndarray | None]:
        device = self._device
        try:
            return self._call(inputs, modes, storage)
        except RuntimeError as e:
            if not _DEVICE_LOST.search(str(e)):
                raise
            _replace_lost_device(device)
            raise DeviceLost(f"the {self._module.backend.name!r} device was lost ({e}); "
                             "later calls get a new one") from e

    def _call(self, inputs: Sequence, modes: Sequence[int] | None, storage: list | None) -> list:
        pool = self._pool
        if pool is None:
            pool = self._rebind()
        plan, candidates = self._plan_for(inputs, storage, modes)
        if plan is not None:
            args = self._planned_arguments(plan, inputs)
        else:
            args, passed, reused = self._arguments(inputs, storage)
        flight = object()
        in_flight = self._module._in_flight
        try:
            in_flight.add(flight)  # inside the try: see LoadedModule.__init__
            if _shut_down:  # checked after registering the call: see _shutdown
                _after_shutdown()
            try:
                context = pool.pop()
            except IndexError:
                context = self._module._new_context()
            out = _VariantList(self._n_results)
            try:
                context.invoke(self._vm_function, args, out)
            except Exception as e:
                if asynchronous_cause(e) is None:  # the caller's own exception goes on unchanged
                    e.add_note(f"while calling IREE function {self.name!r}")
                raise
            # Pooled only after a call that returned normally: a context whose
            # call failed or was interrupted (KeyboardInterrupt) is dropped,
            # as IREE promises nothing about it.
            pool.append(context)
        finally:
            in_flight.discard(flight)
            context = None
        # Free the input buffers before the results are copied out: for large
        # arrays malloc then reuses their memory instead of faulting in fresh
        # pages (measured: 1000x1000 f32 add, 7.2 ms -> 5.2 ms per call).
        del args
        if plan is not None:
            results = self._planned_results(plan, out, candidates)
            if results is not None:
                return results
            # IREE did not write some result into its storage: the general way, as if planned there.
            passed, reused = plan.passed, dict(zip(plan.aliased, zip(candidates, plan.storage_entries)))
        seen = {e.span for e in passed if e is not None}  # the memory of the resident inputs: the caller sees it
        returned = self._in_place.returned
        if not returned:
            if plan is not None or modes is None or not self._shares_host_memory or self._import_alignment:
                return self._results(out, modes, reused, seen)
            stored = [(spec.index, reused.get(spec.index, (None, None))[1]) for spec, _ in self._storage]
            results = self._results(out, modes, reused, seen)
            self._learn(modes, passed, stored, results)
            return results
        modes = list(modes or [COPY] * self.n_results)
        wanted = [(i, k) for i, k in returned if modes[i] != UNUSED]
        for i, _ in returned:
            modes[i] = UNUSED  # IREE's buffer for it holds the input as written into
        results = self._results(out, modes, reused, seen)
        for i, k in wanted:
            results[i] = np.array(inputs[k], order="C")
        return results

    def _plan_for(self, inputs: Sequence, storage: list | None, modes) -> tuple[CallPlan | None, list | None]:
        """A plan this call may follow and the storage candidates it takes (runtime/call_plans.py), or (None, None).

        A steady training step alternates between two plans (its state and storage
        swap buffers each call): the one not followed now is tried first next time.
        """
        plans = self._plans
        for plan in plans:
            candidates = plan.arguments(inputs, storage, modes, self._resident)
            if candidates is not None:
                if plan is plans[0]:
                    plans.reverse()
                return plan, candidates
        return None, None

    def _learn(self, modes, passed: list, stored: list, results: list) -> None:
        """Keep a plan of the call just made if every resident result it made was written into its storage.

        Only a call that passed a resident array or wrote into a displaced one has decisions worth
        repeating: for one that uploads and copies everything (`x + 1.0` on a fresh array), following a
        plan cost ~6 us more than the general path (bench/call_overhead.py, 4 alternating runs).
        """
        aliased = {i for i, e in stored if e is not None}
        if (not aliased and not any(e is not None for e in passed)
                or any(mode == RESIDENT and i not in aliased for i, mode in enumerate(modes))
                or any(results[i] is not e() for i, e in stored if e is not None)
                or not CallPlan.holds(passed, stored)):
            return
        copied = tuple(i for i, mode in enumerate(modes) if mode == COPY)
        self._plans = [CallPlan(modes, passed, self._in_place.written, stored, copied), *self._plans[:1]]

    def _planned_arguments(self, plan: CallPlan, inputs: Sequence):
        refs = list(map(_REF, plan.resident_entries))
        for k in plan.uploads:  # (in ascending order: each lands at its position)
            refs.insert(k, self._uploaded(inputs[k]))
        storage = list(map(_REF, plan.storage_entries))
        for s in plan.fresh:
            storage.insert(s, self._fresh_storage(*self._storage[s]))
        args = _VariantList(len(refs) + len(storage))
        _consume(map(args.push_ref, refs))
        _consume(map(args.push_ref, storage))
        return args

    def _planned_results(self, plan: CallPlan, out, candidates: list) -> list | None:
        """The results of a call that followed `plan`, or None where IREE did not write a result into its storage."""
        written = list(map(_GET_BUFFER, map(out.get_as_object, plan.aliased, itertools.repeat(_BufferView))))
        if written != list(map(_BUFFER, plan.storage_entries)):
            return None
        results = [None] * len(out)
        _consume(map(results.__setitem__, plan.aliased, candidates))
        for i in plan.copied:
            try:
                bv = out.get_as_object(i, _BufferView)
            except ValueError:  # a scalar (i32, f32, ...) rather than a tensor
                results[i] = self._scalar_result(out, i)
            else:
                results[i] = _copied(bv, _np_type(bv.element_type))
        return results

    def _uploaded(self, x):
        """A reference to a new buffer holding `x`'s contents."""
        x = np.asarray(x, order="C")  # copies only non-contiguous inputs
        et = _HAL_TYPES.get(x.dtype) or _hal_type(x.dtype)
        return self._allocator.allocate_buffer_copy(_INPUT_MEMORY, _INPUT_USAGE, self._device, x, et).ref

    def _fresh_storage(self, spec, et):
        buffer = self._allocator.allocate_buffer(_INPUT_MEMORY, self._storage_usage, spec.nbytes)
        return _BufferView(buffer, spec.shape, et).ref

    def _arguments(self, inputs: Sequence, storage: list | None) -> tuple:
        """(the call's argument list, per input the entry whose buffer is passed or None, the reused storage).

        `reused`: result index -> (resident array whose buffer is the result's storage, its entry).
        """
        table = self._resident
        args = _VariantList(len(inputs) + len(self._storage))
        passed = []
        written = self._in_place.written
        for k, x in enumerate(inputs):
            entry = None if written and k in written else table.get(id(x))
            if (entry is not None and entry() is x and x.shape == entry.shape and x.dtype == entry.dtype
                    and x.flags.c_contiguous):
                args.push_ref(entry.ref)  # the array's own memory: no upload
                passed.append(entry)
                continue
            passed.append(None)
            args.push_ref(self._uploaded(x))
        reused = {}
        for s, (spec, et) in enumerate(self._storage):
            candidate = None
            if storage is not None:
                candidate, storage[s] = storage[s], None  # handed over: see result_storage
            entry = None if candidate is None else table.get(id(candidate))
            # As it was made (user code can set .shape, .strides, .dtype and .flags in place).
            if (entry is not None and entry() is candidate and candidate.shape == spec.shape == entry.shape
                    and candidate.dtype == spec.dtype == entry.dtype and candidate.strides == entry.strides
                    and candidate.flags.writeable and only_the_callers(candidate, entry.weakrefs)):
                reused[spec.index] = (candidate, entry)
                args.push_ref(entry.ref)
            else:
                args.push_ref(self._fresh_storage(spec, et))
            del candidate
        return args, passed, reused

    def _results(self, out, modes: Sequence[int] | None, reused: dict, seen: set) -> list:
        """The call's results as `modes` asks (see the module docstring).

        A result is made resident only if its memory overlaps neither a resident
        input (`seen`) nor a result made resident before it. First each result
        that may become resident claims its span; when all claims and inputs are
        disjoint (a sorted sweep: the usual case) every claim holds, otherwise
        they are decided one by one in result order against a `MemorySpans`.
        """
        may_reside = self._shares_host_memory
        results = []
        staged = []  # (index, buffer view, dtype) of results the device must copy out
        pending = []  # (index, buffer view, dtype, mapped or None, reused array and entry or None) per tensor
        claims = list(seen)
        for i in range(len(out)):
            mode = COPY if modes is None else modes[i]
            if mode == UNUSED:
                results.append(None)
                continue
            try:
                bv = out.get_as_object(i, _BufferView)
            except ValueError:  # a scalar (i32, f32, ...) rather than a tensor
                results.append(self._scalar_result(out, i))
                continue
            results.append(None)
            kept = reused.pop(i, None)  # (none where results are staged: storage needs shared memory)
            if kept is not None and mode == RESIDENT and bv.get_buffer() == kept[1].buffer:
                # IREE aliased the result onto the storage (hal.tensor.alias): its memory
                # is the reused array's, which is already resident, of the result's dtype.
                claims.append(kept[1].span)
                pending.append((i, bv, kept[1].dtype, None, kept))
                continue
            dtype = _np_type(bv.element_type)
            if self._import_alignment:
                staged.append((i, bv, dtype))
                continue
            if mode != RESIDENT or not may_reside:
                results[i] = _copied(bv, dtype)
                continue
            mapped = bv.map().asarray(bv.shape, dtype)
            if mapped.nbytes:
                start = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
                claims.append((start, start + mapped.nbytes))
                pending.append((i, bv, dtype, mapped, None))
            else:
                results[i] = mapped.copy()
        table = self._resident
        spans = None if not pending or all_disjoint(claims) else MemorySpans(seen)  # None: every claim holds
        for i, bv, dtype, mapped, kept in pending:
            if kept is not None:
                array, entry = kept
                if spans is None or not spans.overlaps(*entry.span):
                    if spans is not None:
                        spans.add(*entry.span)
                    results[i] = array
                    continue
                mapped = bv.map().asarray(bv.shape, dtype)
                if not mapped.nbytes:
                    results[i] = mapped.copy()
                    continue
            start = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
            end = start + mapped.nbytes
            if spans is None or not spans.overlaps(start, end):
                if spans is not None:
                    spans.add(start, end)
                resident = np.asarray(_MappingOwner(mapped))
                _Resident(resident, table, bv, start, end)
                results[i] = resident
            else:
                results[i] = mapped.copy()
        if staged:
            for (i, _, _), array in zip(staged, _copy_to_host(self._device, staged, self._import_alignment)):
                results[i] = array
        return results

    def _rebind(self) -> list:
        """The context pool of a call that found none: after `_shutdown` there is none to be
        had; in a forked child (_reset_after_fork) or after the device was lost
        (_replace_lost_device) the module is loaded on a new device."""
        module = self._module
        if self._vm_function is None:  # closed by _shutdown
            _after_shutdown()
        module._reload()
        self._bind(module._vm_module.lookup_function(self.name))
        return self._pool

    def _forget_runtime(self) -> None:
        """Drop the device objects of a forked child's parent or of a lost device: the next call rebinds."""
        _abandon(self._vm_function)
        self._pool = None

    def _scalar_result(self, out, i: int) -> np.ndarray:
        dtype = self._scalar_types[i] if i < len(self._scalar_types) else None
        return np.array(out.get_variant(i), dtype=dtype)

    def _close(self) -> None:
        self._pool = None
        self._vm_function = None
        self._device = None
        self._allocator = None


_IMPORT_MEMORY = int(ireert.MemoryType.HOST_LOCAL | ireert.MemoryType.DEVICE_VISIBLE)
_IMPORT_USAGE = int(ireert.BufferUsage.TRANSFER_TARGET | ireert.BufferUsage.MAPPING_PERSISTENT)


def _aligned_empty(nbytes: int, alignment: int) -> tuple[np.ndarray, np.ndarray]:
    """(`nbytes` of fresh memory, the whole pages around it that the device may import)."""
    pages = -(-max(nbytes, 1) // alignment) * alignment
    raw = np.empty(pages + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    page_view = raw[start : start + pages]
    return page_view[:nbytes], page_view


def _copy_to_host(device, staged: list, alignment: int) -> list[np.ndarray]:
    """Results `staged` ((index, buffer view, dtype)) copied by the device into new NumPy arrays.

    Each array is a C-contiguous view of its own page-aligned allocation,
    which nothing else references once the copies are done: the caller owns it.
    """
    arrays, imported = [], []
    semaphore = device.create_semaphore(0)
    for _, bv, dtype in staged:
        buffer = bv.get_buffer()
        data, pages = _aligned_empty(buffer.byte_length(), alignment)
        arrays.append(data.view(dtype).reshape(bv.shape))
        if data.nbytes == 0:
            continue
        target = device.allocator.import_host_allocation(pages, _IMPORT_MEMORY, _IMPORT_USAGE)
        n = len(imported)
        device.queue_copy(buffer, target, ireert.HalFence.create_at(semaphore, n),
                          ireert.HalFence.create_at(semaphore, n + 1))
        imported.append(target)
    if imported:
        ireert.HalFence.create_at(semaphore, len(imported)).wait()
    return arrays


# --------------------------------------------------------------------------
# Interpreter exit
# --------------------------------------------------------------------------

_EXIT_WAIT_SECONDS = 5.0


def _after_shutdown():
    """A call made after `_shutdown`: the main thread gets an error, others wait.

    Only daemon threads still run after atexit. One that raised would print a
    traceback; one that entered IREE now would abort the process at exit (a
    C++ unwind through the bindings). Parked on an event, it just ends with
    the process.
    """
    if threading.current_thread() is threading.main_thread():
        raise RuntimeError("pyfront's IREE runtime has shut down (interpreter exit)")
    _NEVER.wait()
    raise RuntimeError("unreachable")


@atexit.register
def _shutdown() -> None:
    """Leave IREE so that exit neither crashes nor prints nanobind leak reports.

    1. New calls stop (`_after_shutdown`), and calls in flight, which can only
       be in daemon threads, get a few seconds to return their contexts: a
       thread inside IREE when the interpreter finalizes aborts the process.
    2. Contexts and modules are dropped while the interpreter is intact.
    3. Each backend's device, instance and HAL module are deliberately kept
       alive for good (one extra reference each): IREE crashes at exit when a
       result buffer outlives its device, and a caller may still hold one (a
       traceback kept by the REPL, say). nanobind would report those objects
       as leaks, so its report is switched off: a user must never see it.
    """
    global _shut_down
    with _RUNTIMES_LOCK:
        _shut_down = True
    modules = list(_LIVE_MODULES)
    deadline = time.monotonic() + _EXIT_WAIT_SECONDS
    while any(m._busy() for m in modules) and time.monotonic() < deadline:
        time.sleep(0.001)
    for f in list(_LIVE_FUNCTIONS):
        f._close()
    for m in modules:
        m._close()
    for rt in _RUNTIMES.values():
        for obj in (rt, rt.device, rt.instance, rt.hal_module, rt.allocator):
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    disable = getattr(getattr(ireert, "_binding", None), "disable_leak_checker", None)
    if disable is not None:
        disable()
