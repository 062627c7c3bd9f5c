"""`python -m bench.corpus`: the corpus programs (tests/corpus/), NumPy against pyfront.

The corpus is NumPy deep-learning code written the way public code is (layer classes,
in-place optimizer updates, preallocate-and-fill, Python counters); each program runs
unmodified. For each, a training loop runs in plain NumPy and under `pyfront.compile`
(the same function, from a separate copy of the module, so module-level parameters are
not shared); after warm-up (profiling and compiling) the time per step is the median of
`--repeats` runs of `--steps` steps each. The table gives both times, the speedup
(NumPy time / pyfront time) and the share of the pyfront calls after the profiled ones
that ran compiled code.

The peers of bench/run.py are not run here: these programs update Python objects in
place, and jax.jit and numba need functional ports of each, not written yet.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import importlib.util
import pathlib
import statistics
import time
from collections.abc import Callable

import numpy as np

import pyfront

CORPUS = pathlib.Path(__file__).resolve().parent.parent / "tests" / "corpus"


def _load(name: str, as_name: str):
    spec = importlib.util.spec_from_file_location(as_name, CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A scenario: (module) -> (the step function, a function from step number to its arguments, and the
# names of what pyfront compiles, "function" or "Class.method", when that is not the step itself).
# The arguments hold the program's state (objects updated in place), built once per run.

def _layer_mlp(m):
    rng = np.random.default_rng(1)
    X, T = rng.normal(size=(500, 64)), rng.integers(0, 10, size=500)
    net, opt = m.TwoLayerNet(64, 128, 10), m.SGD(0.1)
    return m.train_step, lambda i: (net, opt, X[(i % 5) * 100:(i % 5 + 1) * 100], T[(i % 5) * 100:(i % 5 + 1) * 100])


def _adam_mlp(m):
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(512, 64)), rng.integers(0, 10, size=512)
    params, optimizer = m.init_params(rng, 64, 128, 10), m.Adam(lr=0.01)
    return m.train_step, lambda i: (params, optimizer, X[(i % 4) * 128:(i % 4 + 1) * 128],
                                    y[(i % 4) * 128:(i % 4 + 1) * 128])


def _char_rnn(m):
    n, data = m.seq_length, m.data
    state = {"h": np.zeros((m.hidden_size, 1))}

    def step(inputs, targets):
        loss, state["h"] = m.train_step(inputs, targets, state["h"])
        return loss

    return step, _windows(data, n, m.char_to_ix), "train_step"


def _windows(data: str, n: int, index: dict) -> Callable[[int], tuple[list, list]]:
    """Step i's (inputs, targets) of a character model: n characters and the n after each."""
    def args(i):
        p = (i * n) % (len(data) - n - 1)
        return [index[c] for c in data[p:p + n]], [index[c] for c in data[p + 1:p + n + 1]]
    return args


def _conv(m):
    rng = np.random.default_rng(2)
    conv = m.Convolution(rng.normal(size=(8, 3, 3, 3)) * 0.1, np.zeros(8), stride=1, pad=1)
    x, target = rng.normal(size=(8, 3, 16, 16)), rng.normal(size=(8, 8, 16, 16))
    return m.train_step, lambda i: (conv, x, target, 0.01)


def _policy_gradient(m):
    rng = np.random.default_rng(7)
    epx, eph = rng.normal(size=(50, m.D)), np.abs(rng.normal(size=(50, m.H)))
    epdlogp, epr = rng.normal(size=(50, 1)), rng.choice([-1.0, 0.0, 1.0], size=(50, 1))
    return m.episode_update, lambda i: (epx, eph, epdlogp.copy(), epr)


def _lstm(m):
    n, data = m.T_steps, m.data
    state = {"h": np.zeros((m.H_size, 1)), "C": np.zeros((m.H_size, 1))}

    def step(inputs, targets):
        loss, state["h"], state["C"] = m.train_step(inputs, targets, state["h"], state["C"])
        return loss

    return step, _windows(data, n, m.char_to_idx), "train_step"


def _gan(m):
    rng = np.random.default_rng(9)
    G, D = m.Generator(16, 128, 32, rng), m.Discriminator(32, 128, rng)
    x_real, z = rng.normal(size=(4, 64, 32)) + 1.0, rng.normal(size=(4, 64, 16))
    return m.train_step, lambda i: (G, D, x_real[i % 4], z[i % 4], 0.01)


def _tree_net(m):
    vocab = {}
    trees = [m.Tree(s, vocab) for s in m.TREEBANK]
    rnn = m.RNN(32, 5, len(vocab), np.random.default_rng(5))
    return m.train_step, lambda i: (rnn, trees[2 * (i % 3):2 * (i % 3) + 2], 0.05)


def _transformer(m):
    rng = np.random.default_rng(0)
    block, xs = m.TransformerBlock(32, 4, 64, rng), rng.normal(size=(4, 2, 10, 32))
    return (lambda x: block.forward(x)), lambda i: (xs[i % 4],), "TransformerBlock.forward"


def _corridor_states(n: int) -> list:
    return [np.eye(n)[k] for k in range(n)]


def _q_agent(m):
    agent, states = m.QAgent(6, 2, seed=3), _corridor_states(6)

    def step(s, s_next):
        return agent.learn(s, agent.act(s), -0.01, s_next, False)

    return step, lambda i: (states[i % 5], states[i % 5 + 1]), "QAgent.act", "QAgent.learn"


def _actor_critic(m):
    agent, states = m.ActorCritic(6, 2, seed=4), _corridor_states(6)

    def step(s, s_next):
        return agent.update(s, agent.act(s), -0.01, s_next, False)

    return step, lambda i: (states[i % 5], states[i % 5 + 1]), "ActorCritic.act", "ActorCritic.update"


def _batchnorm_net(m):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(512, 64)), rng.integers(0, 10, size=512)
    model = m.FullyConnectedNet([128, 64], 64, 10, dropout_keep=0.8, reg=1e-3)
    configs = {p: {"learning_rate": 0.05} for p in model.params}

    def step(X_batch, y_batch):
        np.random.seed(0)  # dropout's masks: the same draws in both runs
        return m.train_step(model, configs, X_batch, y_batch)

    return step, lambda i: (X[(i % 4) * 128:(i % 4 + 1) * 128], y[(i % 4) * 128:(i % 4 + 1) * 128]), "train_step"


def _skipgram(m):
    rng = np.random.default_rng(5)
    tokens = [int(t) for t in rng.integers(0, 500, size=2000)]
    model = m.SkipGram(500, 64, np.bincount(tokens, minlength=500).astype(float) + 1)
    return (lambda center, context: model.train_pair(center, context),
            lambda i: (tokens[2 + i % 1990], tokens[3 + i % 1990]), "SkipGram.train_pair")


def _sgd_network(m):
    rng = np.random.default_rng(6)
    data = [(rng.standard_normal((64, 1)), m.one_hot(int(rng.integers(10)), 10)) for _ in range(400)]
    net = m.Network([64, 32, 10], m.CrossEntropyCost, seed=2)
    return net.update_mini_batch, lambda i: (data[(i % 40) * 10:(i % 40 + 1) * 10], 0.5, 0.1, len(data))


def _layer_stack(m):
    rng = np.random.default_rng(7)
    X, Y = rng.standard_normal((512, 64)), np.eye(10)[rng.integers(0, 10, 512)]
    net = m.NeuralNetwork(m.Adam(0.01), m.CrossEntropy, seed=1)
    for layer in (m.Dense(128, input_shape=(64,)), m.Activation("relu"), m.Dropout(0.25), m.Dense(10),
                  m.Activation("softmax")):
        net.add(layer)

    def step(X_batch, Y_batch):
        np.random.seed(0)  # the dropout masks: the same draws in both runs
        return net.train_on_batch(X_batch, Y_batch)

    return step, lambda i: (X[(i % 4) * 128:(i % 4 + 1) * 128], Y[(i % 4) * 128:(i % 4 + 1) * 128]), \
        "NeuralNetwork.train_on_batch"


def _fit_loop(m):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((256, 16))
    y = X @ rng.standard_normal((16, 1))
    model = m.Regressor(16, 32, seed=3)

    def fit(X, y):
        np.random.seed(0)  # the epochs' permutations
        return model.fit(X, y, epochs=2, batch_size=32, verbose=False)

    return fit, lambda i: (X, y), "Regressor.fit"


def _svm_naive(m):
    rng = np.random.default_rng(9)
    X, y = rng.standard_normal((320, 32)), rng.integers(0, 10, size=320)
    W = 0.001 * rng.standard_normal((32, 10))

    def step(W, X, y):
        loss, dW = m.svm_loss_naive(W, X, y, 1e-3)
        W -= 1e-2 * dW
        return loss

    return step, lambda i: (W, X[(i % 10) * 32:(i % 10 + 1) * 32], y[(i % 10) * 32:(i % 10 + 1) * 32])


def _linear_train(m):
    rng = np.random.default_rng(10)
    X, y = rng.standard_normal((500, 32)), rng.integers(0, 10, size=500)
    svm = m.LinearSVM()
    svm.W = 0.001 * rng.standard_normal((32, 10))

    def train(X, y):
        np.random.seed(0)  # the minibatches
        return svm.train(X, y, learning_rate=1e-3, num_iters=20, batch_size=64)

    return train, lambda i: (X, y), "LinearClassifier.train"



def _deep_nn_course(m):
    rng = np.random.default_rng(11)
    X, Y = rng.standard_normal((20, 64)), (rng.random((1, 64)) > 0.5).astype(float)
    state = {"parameters": m.initialize_parameters_deep([20, 16, 8, 1])}

    def step(X, Y):
        state["parameters"], cost = m.train_step(X, Y, state["parameters"], 0.0075)
        return cost

    return step, lambda i: (X, Y), "train_step"



def _nnfs(m):
    rng = np.random.default_rng(12)
    X, y = rng.standard_normal((100, 2)), rng.integers(0, 3, size=100)
    net = m.Network(m.Optimizer_Adam(0.05, 5e-7))
    return net.train_step, lambda i: (X, y, 2 * i + 1)  # odd epochs: the book prints every 100th



def _grokking(m):
    rng = np.random.default_rng(13)
    images, labels = rng.random((64, 16)), np.eye(4)[rng.integers(0, 4, 64)]
    return lambda j: m.train_epoch(images, labels, j), lambda i: (i,), "train_epoch"


def _grokking_dataset(m):
    rng = np.random.default_rng(13)
    images, labels = rng.random((1000, 16)), np.eye(4)[rng.integers(0, 4, 1000)]
    return lambda j: m.train_epoch(images, labels, j), lambda i: (i,), "train_epoch"


def _cs231n_naive_conv(m):
    rng = np.random.default_rng(14)
    x, w, b = rng.normal(size=(4, 3, 16, 16)), rng.normal(size=(8, 3, 3, 3)) * 0.1, np.zeros(8)
    conv, pool = {"stride": 1, "pad": 1}, {"pool_height": 2, "pool_width": 2, "stride": 2}

    def step(x):
        out, conv_cache = m.conv_forward_naive(x, w, b, conv)
        pooled, pool_cache = m.max_pool_forward_naive(out, pool)
        dout = m.max_pool_backward_naive(pooled, pool_cache)
        return m.conv_backward_naive(dout, conv_cache)[1]

    return step, lambda i: (x,), "conv_forward_naive", "max_pool_forward_naive", "max_pool_backward_naive", \
        "conv_backward_naive"


SCENARIOS: dict[str, tuple[str, Callable]] = {
    "layer-class MLP (SGD)": ("mlp_layers", _layer_mlp),
    "MLP with an Adam class": ("adam_mlp", _adam_mlp),
    "char-RNN (Adagrad)": ("char_rnn", _char_rnn),
    "im2col convolution": ("conv_im2col", _conv),
    "policy-gradient update": ("policy_gradient", _policy_gradient),
    "LSTM script (Adagrad)": ("lstm_scripts", _lstm),
    "GAN from scratch": ("gan_numpy", _gan),
    "recursive net over trees": ("tree_net", _tree_net),
    "transformer block (forward)": ("transformer", _transformer),
    "epsilon-greedy Q-learning": ("rl_agents", _q_agent),
    "actor-critic (softmax policy)": ("rl_agents", _actor_critic),
    "batchnorm + dropout net (SGD momentum)": ("batchnorm_net", _batchnorm_net),
    "skip-gram, negative sampling": ("skipgram", _skipgram),
    "textbook SGD network (per-example backprop)": ("sgd_network", _sgd_network),
    "layer stack with optimizer copies (Adam)": ("layer_stack", _layer_stack),
    "Keras-like fit, 2 epochs of 8 minibatches": ("fit_loop", _fit_loop),
    "CS231n naive SVM loss (loops, continue, branches)": ("linear_classifiers", _svm_naive),
    "CS231n LinearSVM.train, 20 minibatches": ("linear_classifiers", _linear_train),
    "deeplearning.ai L-layer step (deepcopy update)": ("deep_nn_course", _deep_nn_course),
    "nnfs layers + Adam, one epoch": ("nnfs_layers", _nnfs),
    "Grokking DL epoch (64 single-sample steps)": ("grokking_style", _grokking),
    "Grokking DL epoch (1,000 single-sample steps: a real loop)": ("grokking_style", _grokking_dataset),
    "CS231n naive conv + max-pool, forward and backward (4x3x16x16)": ("cs231n_layers", _cs231n_naive_conv),
}


def _time(step, args, steps: int, repeats: int, start: int) -> float:
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        for i in range(steps):
            step(*args(start + r * steps + i))
        times.append((time.perf_counter() - t0) / steps)
    return statistics.median(times)


def measure(name: str, steps: int, repeats: int, warmup: int) -> dict:
    module_name, scenario = SCENARIOS[name]
    results = {}
    for label in ("numpy", "pyfront"):
        module = _load(module_name, f"bench_corpus_{module_name}_{label}")
        step, args, *targets = scenario(module)
        if label == "pyfront":
            if not targets:
                step = pyfront.compile(step)
                compiled = [step]
            else:  # the scenario's wrapper (the RNNs' hidden state, an agent's act-and-learn): compile what it calls
                compiled = [_compile_in(module, target) for target in targets]
        with contextlib.redirect_stdout(io.StringIO()):
            for i in range(warmup):
                step(*args(i))
        if label == "pyfront":
            pyfront.wait(*compiled)  # the variants the warm-up started compiling
        with contextlib.redirect_stdout(io.StringIO()):  # the programs' progress lines
            results[label] = _time(step, args, steps, repeats, warmup)
        if label == "pyfront":
            reports = [pyfront.explain(c) for c in compiled]
            results["share"] = (sum(r.compiled_calls for r in reports)
                                / max(1, sum(r.calls - r.profiled_calls for r in reports)))
    return results


def _compile_in(module, target: str):
    """Compile `module`'s function or method `target` ("f" or "Class.method") in place; returns it."""
    *owner, name = target.split(".")
    holder = getattr(module, owner[0]) if owner else module
    compiled = pyfront.compile(getattr(holder, name))
    setattr(holder, name, compiled)
    return compiled


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("programs", nargs="*", default=list(SCENARIOS))
    opts = parser.parse_args(argv)
    print("| program | NumPy ms/step | pyfront ms/step | speedup | compiled share |\n|---|---|---|---|---|")
    for name in opts.programs:
        r = measure(name, opts.steps, opts.repeats, opts.warmup)
        print(f"| {name} | {r['numpy'] * 1e3:.3f} | {r['pyfront'] * 1e3:.3f} | "
              f"{r['numpy'] / r['pyfront']:.2f}x | {r['share']:.0%} |", flush=True)


if __name__ == "__main__":
    main()
