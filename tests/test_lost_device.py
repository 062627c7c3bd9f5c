"""A lost device (Vulkan's VK_ERROR_DEVICE_LOST, a CUDA sticky error) costs one call, not the backend.

The call that finds the device lost runs in the interpreter (the right answer,
state untouched by the failed call); the backend gets a new device, and later
calls load their module there and run compiled again. Lavapipe lost its device
under load in CI after a call of IREE 3.13's Vulkan runtime failed, and every
later Vulkan call of the process failed with it. The loss is injected here: the
first `_Function` call after the switch raises the error IREE raised there.
"""

from __future__ import annotations

import numpy as np
import pytest
from vulkan_support import requires_vulkan

import pyfront
from pyfront.runtime import iree_backend

pytestmark = pytest.mark.iree

_LOST = ("Failed to allocate buffer copy: c/runtime/src/iree/hal/drivers/vulkan/queue.c:5253: DATA_LOSS; "
         "[vkQueueSubmit2] VK_ERROR_DEVICE_LOST")


class Model:
    def __init__(self):
        self.w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
        self.steps = 0


def step(model, x):
    # Elementwise float64 only: the compiled answer is bit-equal to NumPy's.
    model.w = model.w * 0.5 + x  # state the compiled code commits (device-resident on the CPU)
    model.steps += 1
    return model.w * 2.0 - x


@pytest.mark.parametrize("backend", ["cpu", pytest.param("vulkan", marks=requires_vulkan)])
def test_a_lost_device_costs_one_call(backend, monkeypatch):
    compiled = pyfront.compile(step, backend=backend, profile_calls=1)
    model, plain_model = Model(), Model()
    x = np.arange(12.0).reshape(3, 4) / 10
    lose_device = []

    def call(self, *args):
        if lose_device and lose_device.pop():
            raise RuntimeError(_LOST)
        return real_call(self, *args)

    real_call = iree_backend._Function._call
    monkeypatch.setattr(iree_backend._Function, "_call", call)
    for n in range(8):
        if n == 4:
            lost = iree_backend._RUNTIMES[backend]
            lose_device.append(True)
        np.testing.assert_array_equal(compiled(model, x), step(plain_model, x))
        np.testing.assert_array_equal(model.w, plain_model.w)
        assert model.steps == plain_model.steps
    report = pyfront.explain(compiled)
    assert iree_backend._RUNTIMES[backend] is not lost
    assert "VK_ERROR_DEVICE_LOST" in str(report), str(report)
    # Calls 1-3 and 5-7 compiled (0 was profiled, 4 found the device lost).
    assert report.compiled_calls == 6, str(report)
