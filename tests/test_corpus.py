"""The corpus (tests/corpus/): programs in the styles of public NumPy DL code, compiled as written.

Each program is loaded twice from its file (two modules, so module-level parameters are
separate), trained step by step compiled and in the interpreter from equal states, and every
step's result and the parameters are compared (float64: equal up to summation order). Steady
state (after the profiled and compiling calls) must run compiled, 90% of calls or more.
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib

import numpy as np
import pyfront

from tests.differential import assert_same

CORPUS = pathlib.Path(__file__).parent / "corpus"


def load(name: str, copy_name: str):
    """The corpus module `name`, loaded from its file as a module of its own called `copy_name`."""
    spec = importlib.util.spec_from_file_location(copy_name, CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_mostly_compiled(compiled) -> None:
    """At least 90% of the calls after the profiled ones ran compiled code."""
    report = pyfront.explain(compiled)
    share = report.compiled_calls / (report.calls - report.profiled_calls)
    assert share >= 0.9, f"{share:.0%} of steady-state calls compiled:\n{report}"


def test_layer_class_mlp():
    m = load("mlp_layers", "corpus_mlp_layers_compiled")
    rng = np.random.default_rng(1)
    X, T = rng.normal(size=(100, 8)), rng.integers(0, 3, size=100)
    net, opt = m.TwoLayerNet(8, 16, 3), m.SGD(0.1)
    plain_net, plain_opt = copy.deepcopy(net), copy.deepcopy(opt)
    step = pyfront.compile(m.train_step)
    for i in range(30):
        batch = slice((i % 5) * 20, (i % 5 + 1) * 20)
        loss = step(net, opt, X[batch], T[batch])
        assert_same(m.train_step(plain_net, plain_opt, X[batch], T[batch]), loss, f"step {i} loss")
        assert_same(plain_net.params, net.params, f"step {i} parameters")
        assert net.layers["Affine1"].W is net.params["W1"]  # still shared, updated in place
    assert_mostly_compiled(step)


def test_char_rnn():
    compiled_side, plain_side = load("char_rnn", "corpus_char_rnn_compiled"), load("char_rnn", "corpus_char_rnn")
    step = pyfront.compile(compiled_side.train_step)
    data, n = plain_side.data, plain_side.seq_length
    h_compiled = h_plain = np.zeros((plain_side.hidden_size, 1))
    p = 0
    for i in range(30):
        if p + n + 1 >= len(data):
            p, h_compiled, h_plain = 0, np.zeros_like(h_compiled), np.zeros_like(h_plain)
        inputs = [plain_side.char_to_ix[ch] for ch in data[p:p + n]]
        targets = [plain_side.char_to_ix[ch] for ch in data[p + 1:p + n + 1]]
        loss, h_compiled = step(inputs, targets, h_compiled)
        expected, h_plain = plain_side.train_step(inputs, targets, h_plain)
        assert_same(expected, loss, f"step {i} loss")
        assert_same(h_plain, h_compiled, f"step {i} hidden state")
        for name in ("Wxh", "Whh", "Why", "bh", "by", "mWxh"):
            assert_same(getattr(plain_side, name), getattr(compiled_side, name), f"step {i} {name}")
        p += n
    assert_mostly_compiled(step)
