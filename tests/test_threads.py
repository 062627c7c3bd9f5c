"""Calls from several threads at once get the interpreter's answers."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import pyfront

pytestmark = pytest.mark.iree


def step(x, w):
    h = np.tanh(x @ w)
    if h.sum() > 0:
        return h * 2
    return h - 1


def test_concurrent_calls_from_8_threads():
    compiled = pyfront.compile(step, profile_calls=1)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4))
    inputs = [rng.standard_normal((n % 3 + 2, 4)) for n in range(8)]
    barrier = threading.Barrier(8)
    failures = []

    def worker(i: int) -> None:
        barrier.wait()
        for k in range(25):
            x = inputs[(i + k) % 8] * (1 if k % 2 else -1)
            got, want = compiled(x, w), step(x, w)
            if type(got) is not type(want) or got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-12):
                failures.append((i, k))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    report = pyfront.explain(compiled)
    assert report.calls == 200 and report.compiled_calls > 0, str(report)
    # One speculative variant per shape, relaxed at most once when its branch guard fails.
    assert report.compilations <= 2 * len({x.shape for x in inputs}), str(report)
