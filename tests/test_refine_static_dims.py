"""refine-static-dims in real programs: a relaxed dim that a hoisted guard pins to a constant.

The front end pins a relaxed (dynamic) dim to a constant when it meets a
static one: the contraction dim of `x @ W` with a fixed `W`, or the dim of
`x + P` with a fixed `P`. Each program here is checked against the
interpreter (tests/differential.check), including a call where the pinned
size is wrong (NumPy raises, the entry guard sends the call to the
interpreter), and the IR dump shows that the pass made the dim static.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from differential import arrays, check

import pyfront

pytestmark = pytest.mark.iree

_rng = np.random.default_rng(11)
W16, W12 = arrays(_rng, "float32", (16, 3), (12, 3))
POS = arrays(_rng, "float64", (4, 8))[0]


def head(x, mode):
    w = W16
    if mode == "b":
        w = W12
    return x @ w, np.tanh(x).sum(axis=1), (x * 2.0).T


def add_position(x):
    h = x + POS
    return np.maximum(h, 0.0).sum(axis=0), (x * x).mean(axis=1)


def _refined_stages(dump: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(dump.rglob("*-refine-static-dims.mlir")))


def test_matmul_contraction_dim_pinned_by_the_weight(tmp_path, monkeypatch):
    monkeypatch.setenv("PYFRONT_DUMP_DIR", str(tmp_path))
    x16, x12, x10 = arrays(np.random.default_rng(1), "float32", (4, 16), (4, 12), (4, 10))
    # x's last dim is seen as 16 and 12: relaxed; each mode's variant pins it to its weight's rows.
    calls = [(x16, "a"), (x12, "b"), (x12, "b"), (x16, "a"), (x16 + 1, "a"), (x10, "b"), (x12 * 3, "b")]
    compiled = check(head, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0 and "dims [1] of varying size" in str(report), str(report)
    stages = _refined_stages(tmp_path)
    assert "tensor.cast %arg0 : tensor<4x?xf32> to tensor<4x12xf32>" in stages
    assert "tensor.cast %arg0 : tensor<4x?xf32> to tensor<4x16xf32>" in stages
    assert '"pyfront.tanh"(%cast) : (tensor<4x12xf32>) -> tensor<4x12xf32>' in stages


def test_batch_dim_pinned_by_a_global_operand(tmp_path, monkeypatch):
    monkeypatch.setenv("PYFRONT_DUMP_DIR", str(tmp_path))
    x4, x3, x5 = arrays(np.random.default_rng(2), "float64", (4, 8), (3, 8), (5, 8))
    # (3, 8) + POS raises in NumPy; the failed shape guard still relaxes dim 0,
    # and the relaxed variant guards it back to POS's 4.
    calls = [(x4,), (x3,), (x4,), (x4 * 2,), (x5,), (-x4,)]
    compiled = check(add_position, calls)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0, str(report)
    stages = _refined_stages(tmp_path)
    assert "tensor.cast %arg0 : tensor<?x8xf64> to tensor<4x8xf64>" in stages
    assert "(tensor<4x8xf64>) -> tensor<4xf64>" in stages  # the mean over axis 1, static
