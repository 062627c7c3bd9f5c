"""The `fuse` pass on an unrolled LSTM (bench/ablation.py's sizes, two steps).

Upstream `linalg-fuse-elementwise-ops` made IREE reject this module ("large
vector sizes": it recomputed `o * tanh(c)` inside the next step's `h @ U`);
`fuse` must leave IREE a module it compiles, give the interpreter's results,
and repeat no scalar work (see passes/fuse.py).
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np
import pyfront
import pytest
from pyfront.passes.pipeline import WITH_FUSION

from differential import check

B, D, H = 8, 32, 64


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm(xs, h, c, W, U, b):
    for t in range(2):
        z = xs[t] @ W + h @ U + b
        i = sigmoid(z[:, :H])
        f = sigmoid(z[:, H:2 * H])
        o = sigmoid(z[:, 2 * H:3 * H])
        g = np.tanh(z[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return h, c


def lstm_args():
    rng = np.random.default_rng(3)
    f32 = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)  # noqa: E731
    return (f32(2, B, D), f32(B, H), f32(B, H), f32(D, 4 * H), f32(H, 4 * H), f32(4 * H))


@pytest.fixture(scope="module")
def fused_lstm(tmp_path_factory):
    """The LSTM compiled with `fuse`, checked against the interpreter; its IR dumps."""
    dumps = tmp_path_factory.mktemp("dumps")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYFRONT_DUMP_DIR", str(dumps))
        compiled = check(lstm, [lstm_args()] * 3, passes=WITH_FUSION)
    return compiled, dumps


def test_unrolled_lstm_compiles_with_fusion(fused_lstm):
    compiled, _ = fused_lstm
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 2, report.interpreter_reasons


def _ops(mlir: str) -> collections.Counter:
    return collections.Counter(re.findall(r"= ((?:arith|math|linalg)\.\w+)", mlir))


def test_fusion_merges_generics_without_repeating_work(fused_lstm):
    _, dumps = fused_lstm
    (stage_dir,) = {p.parent for p in Path(dumps).rglob("*-fuse.mlir")}
    stages = sorted(stage_dir.glob("*.mlir"), key=lambda p: int(p.name.split("-")[0]))
    (i,) = [i for i, p in enumerate(stages) if p.name.endswith("-fuse.mlir")]
    before, after = _ops(stages[i - 1].read_text()), _ops(stages[i].read_text())
    assert after["linalg.generic"] < before["linalg.generic"]
    for name in set(before) | set(after):
        if name != "linalg.generic":
            assert after[name] == before[name], name  # every scalar op, matmul and fill once, as before


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def broadcast_exp_sum(b):
    return np.exp(np.broadcast_to(b, (4, 8))).sum()


@pytest.mark.parametrize("fn, shape", [(softmax, (32, 10)), (broadcast_exp_sum, (8,))])
def test_fused_functions_match_the_interpreter(fn, shape):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    compiled = check(fn, [(x,)] * 2, passes=WITH_FUSION)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 1, report.interpreter_reasons
