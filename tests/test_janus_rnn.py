"""The RNN of JANUS Figure 1: state carried on an object across calls of changing length."""

from __future__ import annotations

import numpy as np
import pytest
from differential import check

import pyfront

pytestmark = pytest.mark.iree


def rnn_cell(x, h, w_x, w_h):
    return np.tanh(x @ w_x + h @ w_h)


class RNNModel:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.w_x = rng.standard_normal((4, 6)) * 0.3
        self.w_h = rng.standard_normal((6, 6)) * 0.3
        self.state = np.zeros((1, 6))


def rnn_forward(model, sequence):
    state = model.state
    outputs = []
    for item in sequence:
        state = rnn_cell(item, state, model.w_x, model.w_h)
        outputs.append(state)
    model.state = state
    return outputs


def test_rnn_with_state_and_changing_sequence_lengths():
    rng = np.random.default_rng(1)
    model = RNNModel(0)
    calls = [(model, rng.standard_normal((n, 1, 4))) for n in (3, 4, 2, 3, 4, 5, 3, 2)]
    compiled = check(rnn_forward, calls, profile_calls=2)
    report = pyfront.explain(compiled)
    # Each length is a variant with the loop unrolled (the sequence dim cannot be
    # dynamic while the loop is unrolled, so that relaxation is undone).
    assert report.compiled_calls >= 4, str(report)
    assert "relaxation undone" in str(report)


def accumulate(xs):
    total = []
    for x in xs:
        total += [x * 2]
    return total + [xs[0]]


def test_local_lists_grow_and_concatenate():
    xs = np.arange(6.0).reshape(3, 2)
    compiled = check(accumulate, [(xs,), (xs,)])
    assert pyfront.explain(compiled).compiled_calls == 1


def test_state_carries_across_calls():
    rng = np.random.default_rng(2)
    compiled = pyfront.compile(rnn_forward, profile_calls=1)
    model, reference = RNNModel(3), RNNModel(3)
    for n in (2, 3, 2, 3, 2):
        sequence = rng.standard_normal((n, 1, 4))
        got, want = compiled(model, sequence), rnn_forward(reference, sequence)
        assert type(got) is list and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_allclose(model.state, reference.state, rtol=1e-12)
    assert pyfront.explain(compiled).compiled_calls >= 3
