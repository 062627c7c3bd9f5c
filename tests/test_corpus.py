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
import warnings

import numpy as np
import pyfront
import pytest

from tests.differential import assert_same, assert_same_text, check

CORPUS = pathlib.Path(__file__).parent / "corpus"


def load(name: str, copy_name: str):
    """The corpus module `name`, loaded from its file as a module of its own called `copy_name`."""
    spec = importlib.util.spec_from_file_location(copy_name, CORPUS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def char_window(data: str, p: int, n: int, index: dict) -> tuple[list, list]:
    """A character model's step at position p: n characters as inputs, each next one as targets."""
    return [index[ch] for ch in data[p:p + n]], [index[ch] for ch in data[p + 1:p + n + 1]]


def assert_same_attributes(plain, compiled, names, when: str) -> None:
    for name in names:
        assert_same(getattr(plain, name), getattr(compiled, name), f"{when} {name}")


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
        inputs, targets = char_window(data, p, n, plain_side.char_to_ix)
        loss, h_compiled = step(inputs, targets, h_compiled)
        expected, h_plain = plain_side.train_step(inputs, targets, h_plain)
        assert_same(expected, loss, f"step {i} loss")
        assert_same(h_plain, h_compiled, f"step {i} hidden state")
        assert_same_attributes(plain_side, compiled_side, ("Wxh", "Whh", "Why", "bh", "by", "mWxh"), f"step {i}")
        p += n
    assert_mostly_compiled(step)


def test_im2col_convolution():
    m = load("conv_im2col", "corpus_conv_im2col")
    rng = np.random.default_rng(2)
    conv = m.Convolution(rng.normal(size=(4, 2, 3, 3)) * 0.1, np.zeros(4), stride=1, pad=1)
    plain = copy.deepcopy(conv)
    step = pyfront.compile(m.train_step)
    for i in range(12):
        x, target = rng.normal(size=(2, 2, 6, 6)), rng.normal(size=(2, 4, 6, 6))
        loss, dx = step(conv, x, target, 0.01)
        expected_loss, expected_dx = m.train_step(plain, x, target, 0.01)
        assert_same(expected_loss, loss, f"step {i} loss")
        assert_same(expected_dx, dx, f"step {i} input gradient")
        assert_same(plain.W, conv.W, f"step {i} weights")
    assert_mostly_compiled(step)


def test_policy_gradient_agent():
    compiled_side, plain_side = load("policy_gradient", "corpus_pg_compiled"), load("policy_gradient", "corpus_pg")
    forward, update = pyfront.compile(compiled_side.policy_forward), pyfront.compile(compiled_side.episode_update)
    rng = np.random.default_rng(7)
    for episode in range(8):
        xs, hs, dlogps, rs = [], [], [], []
        for t in range(20):  # an episode: the policy acts, the environment answers (random here)
            x = rng.normal(size=plain_side.D)
            p, h = forward(x)
            expected_p, expected_h = plain_side.policy_forward(x)
            assert_same(expected_p, p, f"episode {episode} step {t} probability")
            assert_same(expected_h, h, f"episode {episode} step {t} hidden")
            action = 1 if rng.uniform() < p else 0
            xs.append(x), hs.append(h), dlogps.append(action - p), rs.append(rng.choice([-1.0, 0.0, 1.0]))
        epx, eph, epr = np.vstack(xs), np.vstack(hs), np.vstack(rs)
        epdlogp = np.vstack(dlogps)
        update(epx, eph, epdlogp.copy(), epr)
        plain_side.episode_update(epx, eph, epdlogp.copy(), epr)
        for k in plain_side.model:
            assert_same(plain_side.model[k], compiled_side.model[k], f"episode {episode} {k}")
            assert_same(plain_side.rmsprop_cache[k], compiled_side.rmsprop_cache[k], f"episode {episode} cache {k}")
    assert_mostly_compiled(forward)
    assert_mostly_compiled(update)


def test_adam_trained_mlp():
    m = load("adam_mlp", "corpus_adam_mlp")
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(64, 5)), rng.integers(0, 4, size=64)
    params, optimizer = m.init_params(rng, 5, 12, 4), m.Adam(lr=0.01)
    plain_params, plain_optimizer = copy.deepcopy(params), copy.deepcopy(optimizer)
    step = pyfront.compile(m.train_step)
    for i in range(30):
        batch = slice((i % 4) * 16, (i % 4 + 1) * 16)
        loss = step(params, optimizer, X[batch], y[batch])
        assert_same(m.train_step(plain_params, plain_optimizer, X[batch], y[batch]), loss, f"step {i} loss")
        assert_same(plain_params, params, f"step {i} parameters")
        assert optimizer.iter == plain_optimizer.iter and type(optimizer.iter) is int
    assert_mostly_compiled(step)
    assert pyfront.explain(step).compilations <= 3


def recording_warnings(fn, *args):
    """fn(*args), and the warnings it issued (all of them) as (category, message, file, line)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def test_lstm_script():
    compiled_side, plain_side = load("lstm_scripts", "corpus_lstm_compiled"), load("lstm_scripts", "corpus_lstm")
    step = pyfront.compile(compiled_side.train_step)
    data, n, size = plain_side.data, plain_side.T_steps, plain_side.H_size
    h_compiled = h_plain = C_compiled = C_plain = np.zeros((size, 1))
    p = 0
    for i in range(30):
        if p + n + 1 >= len(data):
            p, h_compiled, h_plain, C_compiled, C_plain = 0, *(np.zeros((size, 1)) for _ in range(4))
        inputs, targets = char_window(data, p, n, plain_side.char_to_idx)
        (loss, h_compiled, C_compiled), warned = recording_warnings(step, inputs, targets, h_compiled, C_compiled)
        (expected, h_plain, C_plain), expected_warned = recording_warnings(
            plain_side.train_step, inputs, targets, h_plain, C_plain)
        assert warned == expected_warned and len(warned) == n  # np.row_stack's DeprecationWarning, per step
        assert_same(expected, loss, f"step {i} loss")
        assert_same((h_plain, C_plain), (h_compiled, C_compiled), f"step {i} hidden and cell states")
        assert_same_attributes(plain_side, compiled_side, ("W_f", "W_i", "W_C", "W_o", "W_v", "b_f", "b_v", "mW_f",
                                                           "mb_v"), f"step {i}")
        p += n
    assert_mostly_compiled(step)


def test_gan_from_scratch():
    m = load("gan_numpy", "corpus_gan")
    rng = np.random.default_rng(9)
    G, D = m.Generator(4, 16, 2, rng), m.Discriminator(2, 16, rng)
    plain_G, plain_D = copy.deepcopy(G), copy.deepcopy(D)
    step = pyfront.compile(m.train_step)
    for i in range(30):
        x_real = rng.normal(size=(32, 2)) * 0.5 + np.array([2.0, -1.0])
        z = rng.normal(size=(32, 4))  # the noise, drawn by the caller
        losses = step(G, D, x_real, z, 0.05)
        assert_same(m.train_step(plain_G, plain_D, x_real, z, 0.05), losses, f"step {i} losses")
        assert_same(plain_G.__dict__, G.__dict__, f"step {i} generator")
        assert_same(plain_D.__dict__, D.__dict__, f"step {i} discriminator")
        assert G.params[0] is G.W1 and G.z is z  # still shared, updated in place; the input cached
    assert_mostly_compiled(step)


def tree_nodes(node):
    """The nodes of a `tree_net.Node` tree, in preorder."""
    yield node
    if not node.isLeaf:
        yield from tree_nodes(node.left)
        yield from tree_nodes(node.right)


def assert_same_trees(plain_trees, trees, plain_rnn, rnn, where: str) -> None:
    """The activations stored on the nodes agree; a leaf's is a view of its model's L in both."""
    for plain_tree, tree in zip(plain_trees, trees):
        for plain, node in zip(tree_nodes(plain_tree.root), tree_nodes(tree.root)):
            assert_same((plain.hActs, plain.probs), (node.hActs, node.probs), f"{where} node activations")
            if node.isLeaf and node.hActs is not None:
                assert (plain.hActs.base is plain_rnn.L) == (node.hActs.base is rnn.L), where


def test_recursive_net_over_trees():
    m = load("tree_net", "corpus_tree_net")
    vocab = {}
    trees = [m.Tree(s, vocab) for s in m.TREEBANK]
    rnn = m.RNN(6, 5, len(vocab), np.random.default_rng(5))
    plain_rnn, plain_trees = copy.deepcopy((rnn, trees))
    step = pyfront.compile(m.train_step)
    for i in range(30):
        batch = slice(2 * (i % 3), 2 * (i % 3) + 2)  # three fixed minibatches: three tree shapes
        cost = step(rnn, trees[batch], 0.1)
        assert_same(m.train_step(plain_rnn, plain_trees[batch], 0.1), cost, f"step {i} cost")
        assert_same(plain_rnn.__dict__, rnn.__dict__, f"step {i} model")
        assert_same_trees(plain_trees, trees, plain_rnn, rnn, f"step {i}")
        assert rnn.stack[0] is rnn.L  # still shared, updated in place
    assert_mostly_compiled(step)


def test_transformer_block():
    m = load("transformer", "corpus_transformer_compiled")
    rng = np.random.default_rng(0)
    block = m.TransformerBlock(32, 4, 64, rng)
    plain = copy.deepcopy(block)
    forward = pyfront.compile(block.forward)
    for i in range(8):
        x, causal = rng.normal(size=(2, 10, 32)), i % 4 != 3
        assert_same(plain.forward(x, causal=causal), forward(x, causal=causal), f"call {i}")
    assert_mostly_compiled(forward)


def run_episodes(agent, act, learn, episodes: int, horizon: int = 30) -> list:
    """Each step's action and learning signal, on the corridor (tests/corpus/rl_agents.py)."""
    m = load("rl_agents", "corpus_rl_agents_env")
    env, trace = m.Corridor(), []
    for _ in range(episodes):
        s = env.reset()
        for _ in range(horizon):
            a = act(agent, s)
            s_next, r, done = env.step(a)
            trace.append((a, learn(agent, s, a, r, s_next, done)))
            s = s_next
            if done:
                break
    return trace


@pytest.mark.parametrize("make, learn, state", [
    (lambda m: m.QAgent(6, 2, seed=3), "learn", ("W", "eps", "steps", "rng")),  # epsilon-greedy, eps decay
    (lambda m: m.ActorCritic(6, 2, seed=4), "update", ("theta", "w", "rng")),  # samples its policy: choice(p=)
], ids=["epsilon_greedy_q_agent", "actor_critic"])
def test_rl_agent(make, learn, state):
    m = load("rl_agents", "corpus_rl_agents_compiled")
    trained = make(m)
    cls, plain = type(trained), copy.deepcopy(trained)
    act, update = pyfront.compile(cls.act), pyfront.compile(getattr(cls, learn))
    expected = run_episodes(plain, cls.act, getattr(cls, learn), 12)
    got = run_episodes(trained, act, update, 12)
    assert_same(expected, got, "actions and TD errors")
    assert_same_attributes(plain, trained, state, "after training")
    assert_mostly_compiled(act)
    assert_mostly_compiled(update)


def test_batchnorm_dropout_net():
    m = load("batchnorm_net", "corpus_batchnorm_net")
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(80, 6)), rng.integers(0, 3, size=80)
    model = m.FullyConnectedNet([10, 8], 6, 3, dropout_keep=0.8, reg=0.01)
    configs = {p: {"learning_rate": 0.05} for p in model.params}
    plain, plain_configs = copy.deepcopy(model), copy.deepcopy(configs)
    step, predict = pyfront.compile(m.train_step), pyfront.compile(m.FullyConnectedNet.loss)
    for i in range(20):
        batch = slice((i % 4) * 20, (i % 4 + 1) * 20)
        np.random.seed(100 + i)  # dropout draws from the global generator: the same stream for both
        loss = step(model, configs, X[batch], y[batch])
        np.random.seed(100 + i)
        assert_same(m.train_step(plain, plain_configs, X[batch], y[batch]), loss, f"step {i} loss")
        assert_same(plain.params, model.params, f"step {i} parameters")
        assert_same(plain_configs, configs, f"step {i} velocities")
        assert_same(plain.bn_params, model.bn_params, f"step {i} running statistics")
        assert_same(m.FullyConnectedNet.loss(plain, X[:20]), predict(model, X[:20]), f"step {i} test-mode scores")
        assert_same(plain.bn_params, model.bn_params, f"step {i} modes")
    assert_mostly_compiled(step)
    assert_mostly_compiled(predict)


def test_skipgram_negative_sampling():
    m = load("skipgram", "corpus_skipgram")
    rng = np.random.default_rng(5)
    tokens = [int(t) for t in rng.integers(0, 30, size=120)]
    counts = np.bincount(tokens, minlength=30).astype(float) + 1
    model = m.SkipGram(30, 8, counts, seed=1)
    plain = copy.deepcopy(model)
    train_pair = pyfront.compile(m.SkipGram.train_pair)
    for position in range(2, 40):
        for offset in (-2, -1, 1, 2):
            center, context = tokens[position], tokens[position + offset]
            assert_same(plain.train_pair(center, context), train_pair(model, center, context), f"pair {position}")
        assert_same_attributes(plain, model, ("W_in", "W_out", "steps", "rng"), f"position {position}")
    assert_mostly_compiled(train_pair)


@pytest.mark.parametrize("cost", ["CrossEntropyCost", "QuadraticCost"])
def test_textbook_sgd_network(cost):
    m = load("sgd_network", f"corpus_sgd_network_{cost}")
    rng = np.random.default_rng(6)
    training = [(rng.standard_normal((12, 1)), m.one_hot(int(rng.integers(4)), 4)) for _ in range(40)]
    test = [(rng.standard_normal((12, 1)), int(rng.integers(4))) for _ in range(20)]
    net = m.Network([12, 10, 4], getattr(m, cost), seed=2)
    plain = copy.deepcopy(net)
    update, accuracy, total_cost = (pyfront.compile(getattr(net, name))
                                    for name in ("update_mini_batch", "accuracy", "total_cost"))
    for step in range(12):
        batch = training[(step % 4) * 10:(step % 4 + 1) * 10]
        assert_same(plain.update_mini_batch(batch, 0.5, 0.1, len(training)),
                    update(batch, 0.5, 0.1, len(training)), f"step {step}")
        assert_same_attributes(plain, net, ("weights", "biases"), f"step {step}")
        if step % 3 == 2:
            assert plain.accuracy(test) == accuracy(test)
            assert_same(plain.total_cost(test, 0.1), total_cost(test, 0.1), f"step {step} cost")
    assert_mostly_compiled(update)
    for fn in (accuracy, total_cost):
        assert pyfront.explain(fn).compiled_calls >= 2, str(pyfront.explain(fn))


@pytest.mark.parametrize("dropout", [False, True])
def test_layer_stack_with_optimizer_copies(dropout):
    m = load("layer_stack", f"corpus_layer_stack_{dropout}")
    rng = np.random.default_rng(7)
    X, Y = rng.standard_normal((64, 10)), np.eye(3)[rng.integers(0, 3, 64)]
    net = m.NeuralNetwork(m.Adam(0.01), m.CrossEntropy, seed=1)
    for layer in (m.Dense(16, input_shape=(10,)), m.Activation("relu"), *([m.Dropout(0.25)] if dropout else []),
                  m.Dense(3), m.Activation("softmax")):
        net.add(layer)
    plain = copy.deepcopy(net)
    step, predict = pyfront.compile(net.train_on_batch), pyfront.compile(net.predict)
    for i in range(12):
        batch = slice((i % 4) * 16, (i % 4 + 1) * 16)
        np.random.seed(i)  # the dropout masks: np.random.uniform, drawn by both runs alike
        expected = plain.train_on_batch(X[batch], Y[batch])
        np.random.seed(i)
        assert_same(expected, step(X[batch], Y[batch]), f"step {i}")
        for k, (p, c) in enumerate(zip(plain.layers, net.layers)):
            assert_same(vars(p), vars(c), f"step {i} layer {k}")
        assert_same(plain.predict(X[:8]), predict(X[:8]), f"step {i} prediction")
    assert_mostly_compiled(step)
    assert_mostly_compiled(predict)


def test_fit_loop_compiled_whole(capsys):
    m = load("fit_loop", "corpus_fit_loop")
    rng = np.random.default_rng(8)
    X = rng.standard_normal((64, 4))
    y = X @ np.array([[1.0], [-2.0], [0.5], [0.0]])
    model = m.Regressor(4, 8, seed=3)
    plain = copy.deepcopy(model)
    fit = pyfront.compile(model.fit)
    for call in range(5):
        np.random.seed(call)
        expected = plain.fit(X, y)
        printed = capsys.readouterr().out
        np.random.seed(call)
        assert_same(expected, fit(X, y), f"call {call}")
        assert capsys.readouterr().out == printed
        assert_same_attributes(plain.hidden, model.hidden, ("W", "b"), f"call {call}")
        assert_same_attributes(plain.out, model.out, ("W", "b"), f"call {call}")
    assert_mostly_compiled(fit)


def test_cs231n_linear_classifiers():
    m = load("linear_classifiers", "corpus_linear_classifiers")
    rng = np.random.default_rng(9)
    X, y = rng.standard_normal((40, 6)), rng.integers(0, 4, size=40)
    for loss in (m.svm_loss_naive, m.svm_loss_vectorized, m.softmax_loss_naive, m.softmax_loss_vectorized):
        compiled, W = pyfront.compile(loss), 0.001 * rng.standard_normal((6, 4))
        for i in range(12):
            batch = slice((i % 4) * 10, (i % 4 + 1) * 10)
            expected = loss(W, X[batch], y[batch], 1e-3)
            assert_same(expected, compiled(W, X[batch], y[batch], 1e-3), f"{loss.__name__} step {i}")
            W = W - 0.5 * expected[1]
        assert_mostly_compiled(compiled)
    for classifier in (m.LinearSVM, m.Softmax):
        net, plain = classifier(), classifier()
        train = pyfront.compile(net.train)
        for call in range(4):
            np.random.seed(call)  # the first call's W and every call's minibatches
            expected = plain.train(X, y, num_iters=10, batch_size=8)
            np.random.seed(call)
            assert_same(expected, train(X, y, num_iters=10, batch_size=8), f"{classifier.__name__} call {call}")
            assert_same(plain.W, net.W, f"{classifier.__name__} call {call} W")
        assert_mostly_compiled(train)
        assert_same(plain.predict(X), pyfront.compile(net.predict)(X), f"{classifier.__name__} predict")
    for distances in (m.compute_distances_no_loops, m.compute_distances_one_loop):
        compiled = pyfront.compile(distances)
        for _ in range(3):
            assert_same(distances(X[:5], X[5:]), compiled(X[:5], X[5:]), distances.__name__)
        assert_mostly_compiled(compiled)
    predict = pyfront.compile(m.predict_labels)
    for start in range(0, 20, 5):  # 5 test points against the other 35, k = 5
        dists = m.compute_distances_no_loops(X[start:start + 5], np.delete(X, np.s_[start:start + 5], axis=0))
        y_train = np.delete(y, np.s_[start:start + 5])
        assert_same(m.predict_labels(dists, y_train, 5), predict(dists, y_train, 5), f"k-NN from {start}")
    assert_mostly_compiled(predict)


def test_deeplearning_ai_style_network(capsys):
    m = load("deep_nn_course", "corpus_deep_nn_course")
    rng = np.random.default_rng(10)
    X, Y = rng.standard_normal((5, 16)), (rng.random((1, 16)) > 0.5).astype(float)
    params = m.initialize_parameters_deep([5, 4, 3, 1])

    def same_calls(fn, calls):
        compiled = pyfront.compile(fn)
        for i, args in enumerate(calls):
            plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
            np.random.seed(i)
            expected = fn(*plain_args)
            printed = capsys.readouterr().out
            np.random.seed(i)
            assert_same(expected, compiled(*compiled_args), f"{fn.__name__} call {i}")
            assert_same_text(printed, capsys.readouterr().out, compiled, f"{fn.__name__} call {i}")
            assert_same(plain_args, compiled_args, f"{fn.__name__} call {i} arguments")
        assert_mostly_compiled(compiled)

    steps, p = [], params
    for i in range(10):  # the arguments of a training loop's steps, from the interpreter's own loop
        steps.append((X, Y, p, 0.05))
        p, _ = m.train_step(X, Y, p, 0.05)
    same_calls(m.train_step, steps)
    same_calls(m.L_layer_model, [(X, Y, params, 0.0075 * k, 3, True) for k in range(1, 5)])
    same_calls(m.predict, [(X * k, Y, params) for k in (1, -1, 2)])
    AL, caches = m.L_model_forward(X, params)
    grads = m.L_model_backward(AL, Y, caches)
    v, s = m.initialize_adam(params)
    same_calls(m.update_parameters_with_adam, [(params, grads, v, s, t) for t in range(1, 6)])
    small = {k: params[k] for k in ("W1", "b1")} | {"W2": rng.standard_normal((1, 4)), "b2": np.zeros((1, 1))}
    same_calls(m.forward_propagation_with_dropout, [(X * k, small, 0.8) for k in (1, 2, 3)])
    same_calls(m.dictionary_to_vector, [(small,)] * 3)
    same_calls(m.random_mini_batches, [(X, Y, 5, seed) for seed in range(4)])
    rnn = {"Wax": rng.standard_normal((4, 3)), "Waa": rng.standard_normal((4, 4)), "Wya": rng.standard_normal((2, 4)),
           "ba": rng.standard_normal((4, 1)), "by": rng.standard_normal((2, 1))}
    same_calls(m.rnn_forward, [(rng.standard_normal((3, 6, 4)), rng.standard_normal((4, 6)), rnn) for _ in range(3)])
    lstm = {k: rng.standard_normal((4, 7)) for k in ("Wf", "Wi", "Wc", "Wo")}
    lstm |= {k: rng.standard_normal((4, 1)) for k in ("bf", "bi", "bc", "bo")}
    lstm |= {"Wy": rng.standard_normal((2, 4)), "by": rng.standard_normal((2, 1))}
    same_calls(m.lstm_cell_forward, [(rng.standard_normal((3, 6)), rng.standard_normal((4, 6)),
                                      rng.standard_normal((4, 6)), lstm) for _ in range(3)])
    same_calls(m.clip, [({k: 10 * rng.standard_normal((3, 3)) for k in ("dWaa", "dWax", "dWya", "db", "dby")}, 5.0)
                        for _ in range(3)])


@pytest.mark.parametrize("optimizer, dropout", [("sgd", None), ("adam", 0.1)])
def test_nnfs_style_layers(capsys, optimizer, dropout):
    m = load("nnfs_layers", f"corpus_nnfs_layers_{optimizer}")
    rng = np.random.default_rng(12)
    X, y = rng.standard_normal((40, 2)), rng.integers(0, 3, size=40)
    make = {"sgd": lambda: m.Optimizer_SGD(decay=1e-3, momentum=0.9), "adam": lambda: m.Optimizer_Adam(0.05, 5e-7)}
    net = m.Network(make[optimizer](), dropout)
    plain = copy.deepcopy(net)
    step = pyfront.compile(net.train_step)
    for epoch in range(10):
        np.random.seed(epoch)  # the dropout masks
        expected = plain.train_step(X, y, epoch)
        printed = capsys.readouterr().out
        np.random.seed(epoch)
        assert_same(expected, step(X, y, epoch), f"epoch {epoch}")
        assert_same_text(printed, capsys.readouterr().out, step, f"epoch {epoch}")
        for layer in ("dense1", "dense2"):
            assert_same(vars(getattr(plain, layer)), vars(getattr(net, layer)), f"epoch {epoch} {layer}")
        assert_same(vars(plain.optimizer), vars(net.optimizer), f"epoch {epoch} optimizer")
    assert_mostly_compiled(step)
    softmax = m.Activation_Softmax()
    softmax.forward(X[:6] @ np.ones((2, 3)))
    backward, plain_softmax = pyfront.compile(softmax.backward), copy.deepcopy(softmax)
    for k in range(4):
        plain_softmax.backward(X[:6] @ np.ones((2, 3)) * k)
        backward(X[:6] @ np.ones((2, 3)) * k)
        assert_same(plain_softmax.dinputs, softmax.dinputs, f"softmax backward {k}")
    assert_mostly_compiled(backward)


def test_grokking_style_globals_and_per_sample_loops(capsys):
    plain, compiled_module = load("grokking_style", "corpus_grokking_plain"), load("grokking_style", "corpus_grokking")
    rng = np.random.default_rng(13)
    images, labels = rng.random((24, 16)), np.eye(4)[rng.integers(0, 4, 24)]
    weights = ("weights_0_1", "weights_1_2", "weights_e_1", "weights_e_2")
    calls = [("train_epoch", [(images, labels, j) for j in range(4)]),
             ("train_batch_epoch", [(images, labels, j) for j in range(0, 30, 10)]),
             ("test_accuracy", [(images * k, labels) for k in (1, 2, 3)]),
             ("sentiment_step", [([int(w) for w in rng.integers(0, 30, 5)], float(k % 2)) for k in range(6)])]
    for name, arguments in calls:
        compiled = pyfront.compile(getattr(compiled_module, name))
        for i, args in enumerate(arguments):
            np.random.seed(i)  # the dropout masks
            expected = getattr(plain, name)(*args)
            printed = capsys.readouterr().out
            np.random.seed(i)
            assert_same(expected, compiled(*args), f"{name} call {i}")
            assert_same_text(printed, capsys.readouterr().out, compiled, f"{name} call {i}")
            for w in weights:
                assert_same(getattr(plain, w), getattr(compiled_module, w), f"{name} call {i} {w}")
        assert_mostly_compiled(compiled)


def test_cs231n_naive_layers_and_captioning_rnn():
    m = load("cs231n_layers", "corpus_cs231n_layers")
    rng = np.random.default_rng(14)
    # 2 x 4 x 8 x 8 output positions: too many to unroll, so the loop nests are scf.for loops.
    x, w, b = rng.normal(size=(2, 3, 8, 8)), rng.normal(size=(4, 3, 3, 3)), rng.normal(size=4)
    conv, pool = {"stride": 1, "pad": 1}, {"pool_height": 2, "pool_width": 2, "stride": 2}
    out, cache = m.conv_forward_naive(x, w, b, conv)
    # (Pooling's backward on a smaller input: 128 windows unrolled took IREE 54 s to compile.)
    pooled, pool_cache = m.max_pool_forward_naive(rng.normal(size=(1, 2, 4, 4)), pool)
    for fn, calls in ((m.conv_forward_naive, [(x * k, w, b, conv) for k in (1, 2, 3)]),
                      (m.conv_backward_naive, [(out * k, cache) for k in (1, 2, 3)]),
                      (m.max_pool_forward_naive, [(out * k, pool) for k in (1, 2, 3)]),
                      (m.max_pool_backward_naive, [(pooled * k, pool_cache) for k in (1, 2, 3)])):
        report = pyfront.explain(check(fn, calls))
        assert report.compiled_calls > report.verified_calls, str(report)
    words = ["<NULL>", "<START>", "<END>", "a", "cat", "dog", "sat"]
    model = m.CaptioningRNN({word: i for i, word in enumerate(words)})
    features, captions = rng.normal(size=(3, 6)), rng.integers(0, 7, (3, 5))
    for fn, calls in ((model.loss, [(features * k, captions) for k in (1, 2, 3)]),
                      (model.sample, [(features * k,) for k in (1, 2, 3)])):
        report = pyfront.explain(check(fn, calls))
        assert report.compiled_calls > report.verified_calls, str(report)
    # The solver's steps from equal states: Adam's configs are filled by the first step's setdefault.
    configs = {p: {"learning_rate": 1e-2} for p in model.params}
    plain, compiled_state = copy.deepcopy((model, configs)), copy.deepcopy((model, configs))
    step = pyfront.compile(m.solver_step)
    for i in range(8):
        assert_same(m.solver_step(*plain, features, captions), step(*compiled_state, features, captions), f"step {i}")
        assert_same(plain[0].params, compiled_state[0].params, f"step {i} parameters")
        assert_same(plain[1], compiled_state[1], f"step {i} optimizer configs")
    assert_mostly_compiled(step)

