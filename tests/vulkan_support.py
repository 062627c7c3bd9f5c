"""Running tests on the Vulkan backend (Mesa's lavapipe in CI), and comparing it with the CPU.

pyfront itself never picks a Vulkan driver: it uses the first device the
system's Vulkan loader lists. The tests prefer lavapipe, Mesa's Vulkan on the
CPU, so that they mean the same thing on every machine: importing this module
sets `VK_ICD_FILENAMES` to lavapipe's ICD when the variable is unset and the
ICD is installed (Debian: mesa-vulkan-drivers; `.ci/run` installs it). A
caller's own `VK_ICD_FILENAMES` is left alone.

* `requires_vulkan`: a skip mark, with the reason, for machines where no
  Vulkan device can be created (the driver is not installed).
* `on_vulkan`: a fixture making "vulkan" the default backend of every
  `pyfront.compile` in the test (through `PYFRONT_BACKEND`), so that tests
  written for the CPU run unchanged on Vulkan.
* `compare_backends(fn, calls)`: for the model suite: runs `fn` compiled on
  "cpu" and on "vulkan" over the same calls and checks both against the
  interpreter (`differential.check`), and that Vulkan really ran compiled code.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest
from differential import check

import pyfront

LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

if "VK_ICD_FILENAMES" not in os.environ and os.path.exists(LAVAPIPE_ICD):
    os.environ["VK_ICD_FILENAMES"] = LAVAPIPE_ICD


def _vulkan_missing() -> str | None:
    """Why no Vulkan device can be created here, or None when one can."""
    from pyfront.runtime.iree_backend import check_available

    try:
        check_available("vulkan")
    except RuntimeError as e:
        return str(e)
    return None


VULKAN_MISSING = _vulkan_missing()

requires_vulkan = pytest.mark.skipif(
    VULKAN_MISSING is not None, reason=f"no Vulkan device: {VULKAN_MISSING}"
)


@pytest.fixture
def on_vulkan(monkeypatch):
    """`pyfront.compile` in this test compiles for and runs on Vulkan by default."""
    monkeypatch.setenv("PYFRONT_BACKEND", "vulkan")


def compare_backends(fn, calls: Iterable[tuple], **options) -> dict[str, pyfront.CompiledFunction]:
    """`fn` compiled on "cpu" and on "vulkan", each checked against the interpreter on `calls`.

    Returns the compiled functions by backend; fails if Vulkan ran none of
    the calls compiled (a silent fallback to the interpreter is not a pass).
    """
    calls = list(calls)
    compiled = {backend: check(fn, calls, backend=backend, **options) for backend in ("cpu", "vulkan")}
    report = pyfront.explain(compiled["vulkan"])
    assert report.compiled_calls > 0, f"nothing ran compiled on Vulkan:\n{report}"
    return compiled
