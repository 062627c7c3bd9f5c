"""The CPU drivers' buffer cache: a steady call reuses the buffers the call before it freed.

runtime/iree_backend.py wraps the CPU devices' allocator in IREE's caching
allocator (PYFRONT_BUFFER_CACHE bytes), so that a call's uploads, intermediates
and results come from buffers an earlier call freed rather than from fresh
pages. The allocator's statistics count what the underlying allocator made.
"""

from __future__ import annotations

import iree.runtime as ireert
import numpy as np
import pytest
from pyfront.runtime import iree_backend

import pyfront

pytestmark = pytest.mark.iree


def _polynomial(x):
    return (x * 2.0 + 1.0) * x  # (exact in float64: compared bit for bit)


@pytest.mark.parametrize("backend", ["cpu-sync", "cpu"])
def test_steady_calls_allocate_no_new_memory(backend):
    allocator = iree_backend._runtime(iree_backend.get_backend(backend)).allocator
    # Buffers of sizes no call makes fill the cache's slots: loading new code releases them.
    for size in range(1000, 1100):
        allocator.allocate_buffer(ireert.MemoryType.DEVICE_LOCAL, ireert.BufferUsage.DEFAULT, size)
    f = pyfront.compile(_polynomial, backend=backend)
    x = np.linspace(-3.0, 3.0, 1 << 16)  # 512 KiB: an upload, an intermediate and a result of that size
    for _ in range(4):
        np.testing.assert_array_equal(f(x), _polynomial(x))
    assert pyfront.explain(f).compiled_calls >= 2
    made = allocator.statistics["device_bytes_allocated"]
    for _ in range(3):
        np.testing.assert_array_equal(f(x), _polynomial(x))
    assert allocator.statistics["device_bytes_allocated"] - made < x.nbytes


def test_the_cache_size_is_a_setting(monkeypatch):
    monkeypatch.delenv("PYFRONT_BUFFER_CACHE", raising=False)
    assert iree_backend._allocator_specs("local-sync") == [f"caching:*=*;{1 << 30};64"]
    assert iree_backend._allocator_specs("vulkan") is None  # (its driver pools device memory itself)
    monkeypatch.setenv("PYFRONT_BUFFER_CACHE", "")  # (set but empty: the default)
    assert iree_backend._allocator_specs("local-sync") == [f"caching:*=*;{1 << 30};64"]
    monkeypatch.setenv("PYFRONT_BUFFER_CACHE", "1000000")
    assert iree_backend._allocator_specs("local-task") == ["caching:*=*;1000000;64"]
    monkeypatch.setenv("PYFRONT_BUFFER_CACHE", "0")
    assert iree_backend._allocator_specs("local-sync") is None
    monkeypatch.setenv("PYFRONT_BUFFER_CACHE", "1G")
    with pytest.raises(ValueError, match="PYFRONT_BUFFER_CACHE must be a number of bytes"):
        iree_backend._allocator_specs("local-sync")
