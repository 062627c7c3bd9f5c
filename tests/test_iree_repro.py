"""Canaries for the IREE 3.13 miscompiles in tests/iree_repro/ (README there).

Each case compiles one reproducer with IREE for generic x86-64 and asserts the
right answer. The bugs make them fail today, so they are strict xfails: when an
IREE upgrade fixes one, it XPASSes, the strict marker turns that into a
failure, and we know to revisit pyfront's work-around. `splat_sum_barrier`
is the work-around itself and must pass.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pyfront.runtime.iree_backend import LoadedModule

pytestmark = pytest.mark.iree

HERE = Path(__file__).parent / "iree_repro"
FLAGS = ["--iree-llvmcpu-target-cpu=generic", "--iree-input-demote-f64-to-f32=false"]
IREE_313_BUG = pytest.mark.xfail(strict=True, reason="IREE 3.13 miscompiles it (tests/iree_repro/README.md)")


def _run(name: str, function: str, inputs: list) -> list:
    from iree.compiler import compile_str

    vmfb = compile_str((HERE / name).read_text(), target_backends=["llvm-cpu"], extra_args=FLAGS)
    return LoadedModule(vmfb, "cpu-sync").function(function)(inputs)


@pytest.mark.parametrize("name, x, expected", [
    pytest.param("reduction_ignores_input.mlir", np.zeros(5, np.int64), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum.mlir", np.zeros(5, np.int64), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum_f32.mlir", np.zeros(5, np.float32), 10.0, marks=IREE_313_BUG),
    pytest.param("ws3.mlir", np.ones(5, np.bool_), 10, marks=IREE_313_BUG),
    pytest.param("splat_sum_barrier.mlir", np.zeros(5, np.int64), 10),
])
def test_reduction_of_a_splat(name, x, expected):
    (got,) = _run(name, "f", [x])
    assert got == expected


@IREE_313_BUG
def test_zero_d_result_overwritten_by_a_later_dispatch():
    v, e, flags = _run("mB.mlir", "f1", [np.bool_(True)])
    assert e == pytest.approx(np.exp(2.0)) and flags.tolist() == [1]
    assert v == 2
