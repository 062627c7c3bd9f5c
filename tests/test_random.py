"""Random numbers in compiled functions (pyfront/draws.py, runtime/host_draws.py): differential tests.

Each call runs in plain Python and compiled from equal generator states: the
arguments (and the generators inside them) are deep copies, and generators in
Python state that both runs see (NumPy's global RandomState, a module global,
the `random` module's) are put back in the state the plain run started from
before the compiled run. Then the results must be identical, bit for bit
(the numbers are the host's own draws), and so must every generator's state
after the call. Each compilable case also asserts that compiled code ran
beyond the verified calls (whose answer is the interpreter's).
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import pyfront
from pyfront import nn
from pyfront.aot import ExportError
from pyfront.runtime.host_draws import restore, snapshot
from tests.differential import assert_same

pytestmark = pytest.mark.iree

GLOBAL_STATE = np.random.random_sample.__self__  # what np.random.rand & co. draw from
STDLIB_STATE = random.random.__self__
RNG = np.random.default_rng(2024)  # a module global the functions below read


def assert_identical(expected, got, where: str = "result") -> None:
    """Same Python types, dtypes, shapes and bits (draws are the host's own numbers)."""
    assert type(got) is type(expected), f"{where}: {type(got).__name__} != {type(expected).__name__}"
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), where
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_identical(e, g, f"{where}[{i}]")
    elif isinstance(expected, (np.ndarray, np.generic, float)):
        e, g = np.asarray(expected), np.asarray(got)
        assert (g.dtype, g.shape) == (e.dtype, e.shape), f"{where}: {g.dtype}{g.shape} != {e.dtype}{e.shape}"
        assert g.tobytes() == e.tobytes(), f"{where}: {got!r} != {expected!r}"
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r}"


def run_both(fn, compiled, args: tuple, shared=(), compare=assert_identical) -> None:
    """One call, plain then compiled, from equal states; compares results and states after it."""
    plain_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
    before = [snapshot(g) for g in shared]
    expected = fn(*plain_args)
    after = [snapshot(g) for g in shared]
    for g, state in zip(shared, before):
        restore(g, state)
    got = compiled(*compiled_args)
    compare(expected, got)
    assert_same(plain_args, compiled_args, "arguments after the call")  # generators: by state
    assert_same(after, [snapshot(g) for g in shared], "shared generators after the call")


def check(fn, calls, shared=(), compare=assert_identical, **options) -> pyfront.CompiledFunction:
    options.setdefault("profile_calls", 1)
    compiled = pyfront.compile(fn, **options)
    for args in calls:
        run_both(fn, compiled, args, shared, compare)
    assert not pyfront.explain(compiled).verify_failures
    return compiled


def agree_or_raise_alike(fn, compiled, parameters) -> None:
    """`fn(rng, p)` and `compiled(rng, p)` from equal generators, per p: the same result, or NumPy's
    ValueError from both; the generators end equal."""
    for p in parameters:
        plain, rng = np.random.default_rng(3), np.random.default_rng(3)
        try:
            expected = fn(plain, p)
        except ValueError as e:
            with pytest.raises(ValueError, match=str(e)):
                compiled(rng, p)
        else:
            assert_identical(expected, compiled(rng, p))
        assert_same(plain, rng)


def assert_ran_compiled(compiled) -> None:
    report = pyfront.explain(compiled)
    assert report.compiled_calls > report.verified_calls, str(report)


X64 = np.linspace(-1, 1, 12).reshape(3, 4)
X32 = X64.astype(np.float32)


# NumPy's global RandomState (np.random.<draw>) under np.random.seed -------------------------------


def legacy_draws(x):
    mask = (np.random.rand(*x.shape) < 0.5) / 0.5
    return (x * mask, np.random.randn(2, 3), np.random.uniform(-1.0, 2.0, size=(4,)), np.random.normal(3.0, 0.5),
            np.random.randint(0, 10, size=5), np.random.randint(7), np.random.binomial(1, 0.3, size=x.shape),
            np.random.random_sample((2,)), np.random.standard_normal(3), np.random.uniform())


def test_legacy_global_draws_under_seed():
    compiled = pyfront.compile(legacy_draws, profile_calls=1)
    for seed in (0, 0, 1, None, 5, 5):
        if seed is not None:
            np.random.seed(seed)  # re-seeds the global RandomState in place: the host draws see it
        run_both(legacy_draws, compiled, (X64,), [GLOBAL_STATE])
    assert_ran_compiled(compiled)
    assert pyfront.explain(compiled).compilations == 1


def minibatch(X, y):
    idx = np.random.randint(0, X.shape[0], size=4)  # minibatch sampling
    return X[idx], y[idx]


def test_minibatch_sampling_indexes_with_drawn_indices():
    X, y = np.arange(40.0).reshape(10, 4), np.arange(10)
    np.random.seed(3)
    assert_ran_compiled(check(minibatch, [(X, y)] * 4, [GLOBAL_STATE]))


def shuffled_epoch(X, y):
    order = np.arange(X.shape[0])
    np.random.shuffle(order)  # the classic epoch shuffle of indices
    np.random.shuffle(X)  # and of the caller's rows, in place
    return X.sum(axis=1), y[order]


def test_shuffles_are_drawn_permutations():
    X, y = np.arange(40.0).reshape(10, 4), np.arange(10)
    np.random.seed(5)
    assert_ran_compiled(check(shuffled_epoch, [(X, y)] * 4, [GLOBAL_STATE]))


def generator_shuffle(rng, x):
    rows = x * 2.0
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_a_generators_shuffle_is_its_permutation(make):
    assert_ran_compiled(check(generator_shuffle, [(make(s), X64) for s in (0, 1, 1, 2)]))


def explore(q, eps):
    greedy = np.argmax(q)
    explores = np.random.uniform() < eps  # RL exploration: both draws are made on every call
    return np.where(explores, np.random.randint(0, q.shape[0]), greedy)


def test_exploration_draws_every_call():
    np.random.seed(11)
    q = np.array([0.1, 0.7, 0.2])
    assert_ran_compiled(check(explore, [(q, 0.5)] * 6, [GLOBAL_STATE]))


def unused_draw(x):
    np.random.rand(3)  # nothing reads it, but the stream advances
    return x + np.random.rand(*x.shape)


def test_a_draw_nothing_reads_still_advances_the_stream():
    np.random.seed(1)
    assert_ran_compiled(check(unused_draw, [(X64,)] * 4, [GLOBAL_STATE]))


# np.random.Generator: a module global, an attribute, an argument ----------------------------------


def generator_draws(rng, x):
    return (rng.random(x.shape), rng.random(3, dtype=np.float32), rng.normal(1.0, 2.0, size=(2, 2)),
            rng.standard_normal((3,), dtype=np.float32), rng.uniform(-1, 1, 4), rng.integers(0, 100, size=3),
            rng.integers(5), rng.binomial(1, 0.25, size=x.shape), rng.normal(), x * rng.random())


def global_generator(x):
    return generator_draws(RNG, x)


def test_generator_in_a_global():
    assert_ran_compiled(check(global_generator, [(X64,)] * 4, [RNG]))


def test_a_global_rebound_to_another_generator_is_read_at_call_time():
    global RNG
    saved = RNG
    compiled = pyfront.compile(global_generator, profile_calls=1)
    try:
        for seed in (1, 1, 2, 3):
            RNG = np.random.default_rng(seed)
            run_both(global_generator, compiled, (X64,), [RNG])
    finally:
        RNG = saved
    assert_ran_compiled(compiled)
    assert pyfront.explain(compiled).compilations == 1


def test_generator_as_an_argument():
    assert_ran_compiled(check(generator_draws, [(np.random.default_rng(s), X64) for s in (0, 1, 1, 2)]))


class Noisy:
    def __init__(self, seed, bits=np.random.PCG64):
        self.rng = np.random.Generator(bits(seed))

    def sample(self, x):
        return generator_draws(self.rng, x)


def test_generator_in_an_attribute():
    assert_ran_compiled(check(Noisy.sample, [(Noisy(s), X64) for s in (3, 3, 4, 5)]))


def test_another_bit_generator_fails_the_guard_and_stays_right():
    layers = [Noisy(1), Noisy(1), Noisy(2), Noisy(2, np.random.MT19937), Noisy(3, np.random.MT19937), Noisy(4)]
    compiled = check(Noisy.sample, [(layer, X64) for layer in layers])
    assert_ran_compiled(compiled)
    assert "arg0.rng is a Generator on PCG64" in str(pyfront.explain(compiled))


def test_generator_in_a_dict_item():
    def sample(state, x):
        return generator_draws(state["rng"], x)

    assert_ran_compiled(check(sample, [({"rng": np.random.default_rng(s)}, X64) for s in (0, 0, 1, 2)]))


def test_generator_in_a_global_of_another_module(tmp_path, monkeypatch):
    (tmp_path / "noise_helpers.py").write_text(
        "import numpy as np\n"
        "rng = np.random.default_rng(5)\n"
        "def noise(shape):\n"
        "    return rng.standard_normal(shape)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import noise_helpers

    def noisy(x):
        return x + noise_helpers.noise(x.shape)

    assert_ran_compiled(check(noisy, [(X64,)] * 4, [noise_helpers.rng]))


class LegacyNoisy:
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def sample(self, x):
        return x * self.rs.randn(*x.shape), self.rs.randint(0, 3, size=2), self.rs.choice(5, size=3)


def test_randomstate_in_an_attribute():
    assert_ran_compiled(check(LegacyNoisy.sample, [(LegacyNoisy(s), X32) for s in (0, 0, 1, 2)]))


# Deep-learning code: dropout, GAN noise -----------------------------------------------------------


class Dropout:
    def __init__(self, rate, seed):
        self.rate, self.rng = rate, np.random.default_rng(seed)

    def __call__(self, x, training):
        return nn.dropout(x, self.rate, self.rng, training)


class MaskCachingDropout:
    """Dropout as hand-written layers do it: the mask kept on self for the backward."""

    def __init__(self, rate, seed):
        self.rate, self.rng, self.mask = rate, np.random.default_rng(seed), None

    def forward(self, x, training):
        if training:
            self.mask = (self.rng.random(x.shape) >= self.rate) / (1 - self.rate)
            return x * self.mask
        return x

    def backward(self, grad):
        return grad * self.mask


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dropout_layer_with_a_training_flag(dtype):
    x = X64.astype(dtype)
    calls = [(Dropout(0.3, s), x, t) for s, t in ((0, True), (0, True), (1, True), (1, False), (2, False),
                                                   (3, True), (4, True))]
    assert_ran_compiled(check(Dropout.__call__, calls))


def test_mask_caching_dropout():
    def step(layer, x, training):
        y = layer.forward(x, training)
        return y, layer.backward(np.ones_like(y)) if training else y

    calls = [(MaskCachingDropout(0.5, s), X32, t) for s, t in ((0, True), (0, True), (1, True), (2, True),
                                                                (2, False), (3, False))]
    assert_ran_compiled(check(step, calls))


def generate(G, rng, batch):
    z = rng.standard_normal((batch, G["W1"].shape[0]), dtype=np.float32)  # GAN noise
    h = np.maximum(z @ G["W1"], 0)
    return z, np.tanh(h @ G["W2"])


def noise_then_close(expected, got):
    assert_identical(expected[0], got[0], "z")  # the draws themselves: bit for bit
    assert_same(expected[1], got[1], "generated")  # matmuls: to a few ulps


def test_gan_noise():
    w = np.random.default_rng(0)
    G = {"W1": w.standard_normal((8, 16)).astype(np.float32), "W2": w.standard_normal((16, 4)).astype(np.float32)}
    calls = [(G, np.random.default_rng(s), 5) for s in (1, 1, 2, 3)]
    assert_ran_compiled(check(generate, calls, compare=noise_then_close))


def loss_with_dropout(w, x, rng):
    h = nn.dropout(np.tanh(x @ w), 0.5, rng)
    return np.sum(h * h)


def test_gradient_through_a_dropout_mask():
    train = pyfront.value_and_grad(loss_with_dropout)

    def step(w, x, rng):
        return train(w, x, rng)

    w = np.random.default_rng(5).standard_normal((4, 3))
    calls = [(w, X64, np.random.default_rng(s)) for s in (0, 0, 1, 2)]
    assert_ran_compiled(check(step, calls, compare=lambda e, g: assert_same(e, g)))


# Program order, loops, deopts, verification -------------------------------------------------------


def interleaved(r1, r2, x):
    a = r1.random(2)
    b = r2.normal(size=2)
    c = r1.integers(0, 5, 3)
    d = np.random.rand(2)
    e = r2.random()
    return a, b, c, d, e, x + r1.random(x.shape)


def test_two_generators_interleaved_in_program_order():
    np.random.seed(8)
    calls = [(np.random.default_rng(s), np.random.default_rng(s + 100), X64) for s in (0, 0, 1, 2)]
    assert_ran_compiled(check(interleaved, calls, [GLOBAL_STATE]))


def test_one_generator_reached_through_two_arguments():
    def twice(r1, r2, x):
        return r1.random(2), r2.random(2), x * r1.random()

    rng = np.random.default_rng(0)
    compiled = pyfront.compile(twice, profile_calls=1)
    for _ in range(4):
        plain = copy.deepcopy(rng)
        expected = twice(plain, plain, X64)
        assert_identical(expected, compiled(rng, rng, X64))
        assert_same(plain, rng)
    assert_ran_compiled(compiled)


def unrolled(rng, x):
    acc = x
    for _ in range(3):
        acc = acc + rng.random(x.shape)
    return acc


def test_draws_in_a_loop_of_constant_trip_count_are_unrolled():
    assert_ran_compiled(check(unrolled, [(np.random.default_rng(s), X64) for s in (0, 0, 1, 2)]))


def draws_after_a_speculated_branch(rng, x):
    z = rng.random(3)
    if x.sum() > 0:  # always true while profiling: a guard after the draw
        return z * 2.0
    return z + rng.random(3)


def test_a_failed_guard_after_the_draw_leaves_the_state_as_the_interpreter():
    calls = [(np.random.default_rng(0), X64 + 1), (np.random.default_rng(0), X64 + 1),
             (np.random.default_rng(1), X64 + 1), (np.random.default_rng(2), X64 - 1),
             (np.random.default_rng(3), X64 - 1), (np.random.default_rng(4), X64 + 1)]
    compiled = check(draws_after_a_speculated_branch, calls, verify="off")
    report = pyfront.explain(compiled)
    assert report.deopts >= 1 and report.compiled_calls >= 2, str(report)


def window_plus_noise(x, i):
    return x[i:i + 3].sum(axis=0) + np.random.rand(4)  # NumPy clamps the slice at the end: a shape guard


def test_a_failed_shape_guard_leaves_the_state_as_the_interpreter():
    np.random.seed(4)
    x = np.arange(24.0).reshape(6, 4)
    starts = [0, 1, 2, 3, 4, 1, 2]  # i becomes a runtime operand; from 4 the window has 2 rows
    compiled = check(window_plus_noise, [(x, i) for i in starts], [GLOBAL_STATE], verify="off")
    report = pyfront.explain(compiled)
    assert report.deopts >= 1 and report.compiled_calls >= 2, str(report)


@pytest.mark.parametrize("verify", ["first", 1, "off"])
def test_verified_calls_draw_once_and_compare_the_draws(verify):
    compiled = check(generator_draws, [(np.random.default_rng(s), X64) for s in (0, 0, 1, 2, 3)], verify=verify)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 4 and not report.verify_failures
    assert report.verified_calls == {"first": 1, 1: 4, "off": 0}[verify]


# normal(loc, scale) with computed parameters: loc + scale * z, as NumPy computes it ---------------


def gaussian_policy(rng, mean, spread):
    # Computed by correctly rounded ops only: the compiled np.exp may differ from NumPy's in the last
    # bit (NumPy's own float64 exp on AVX-512 hosts), and these results are compared bit for bit.
    std = np.sqrt(spread * spread + 1e-4)
    return rng.normal(mean, std), rng.normal(mean * 2.0, 0.5, size=(4, 3)), rng.normal(loc=mean[0]), \
        rng.normal(0.0, std, (2, 3))


def test_normal_with_computed_parameters_is_bit_exact():
    means = np.random.default_rng(1).standard_normal((6, 3)) * 100
    calls = [(np.random.default_rng(s), means[s], means[(s + 1) % 6] * 0.1) for s in range(6)]
    assert_ran_compiled(check(gaussian_policy, calls))


def legacy_policy(mean):
    return np.random.normal(mean.astype(np.float32), 0.3), np.random.normal(loc=mean, scale=mean * mean + 1.0)


def test_legacy_normal_with_computed_parameters_is_bit_exact():
    np.random.seed(6)
    means = np.random.default_rng(2).standard_normal((5, 7))  # an odd count: the Gaussian cache carries over
    assert_ran_compiled(check(legacy_policy, [(m,) for m in means], [GLOBAL_STATE]))


def scaled(rng, scale):
    return rng.normal(1.0, scale * 1.0)  # computed (an argument as it is would be read by the host)


def test_normal_scales_that_are_not_positive_run_in_the_interpreter():
    scales = [np.array([1.0, 2.0])] * 3 + [np.array([1.0, 0.0]), np.array([np.nan, 1.0]), np.array([1.0, -0.0]),
                                           np.array([-1.0, 1.0]), np.array([0.5, 0.5])]
    compiled = pyfront.compile(scaled, profile_calls=1, verify="off")
    agree_or_raise_alike(scaled, compiled, scales)
    report = pyfront.explain(compiled)
    assert report.deopts == 4 and report.compiled_calls == 3, str(report)


# choice(a, p=computed): NumPy's checks as guards, its cumsum and searchsorted in the graph ----------


def softmax_policy(rng, W, obs):
    logits = W @ obs
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return rng.choice(len(p), p=p), rng.choice(np.arange(4) * 10, size=(2, 3), p=p), rng.choice(W[:, 0], p=p)


@pytest.mark.parametrize("make", [np.random.default_rng, np.random.RandomState])
def test_choice_with_computed_probabilities_is_numpys_draw(make):
    W = np.random.default_rng(4).standard_normal((6, 4, 3))
    W[0] = 0.0  # uniform probabilities
    W[1, 2] = 40.0  # one action almost certain: the others' probabilities underflow to 0
    calls = [(make(s), W[s], np.linspace(-1.0, 1.0, 3)) for s in range(6)]
    assert_ran_compiled(check(softmax_policy, calls))


class NoiseSampler:
    """Negative sampling as word2vec code does it: a unigram distribution kept on self."""

    def __init__(self, n, seed):
        counts = np.random.default_rng(seed).integers(1, 50, n).astype(float) ** 0.75
        self.noise, self.rng = counts / counts.sum(), np.random.default_rng(seed)
        self.mu, self.sigma = np.linspace(-1.0, 1.0, 3), np.full(3, 0.5)

    def sample(self, x):
        neg = self.rng.choice(len(self.noise), size=5, p=self.noise)
        return x[neg % len(x)] + self.rng.normal(self.mu, self.sigma).sum(), neg

    def sample_after_writing(self):
        self.noise[:] = self.noise[::-1].copy()  # written before the draw: the host must not read it ahead
        return self.rng.choice(len(self.noise), size=3, p=self.noise)


@pytest.mark.parametrize("n", [8, 300], ids=["few outcomes", "more than the compiled choice takes"])
def test_choice_with_p_from_python_state_is_drawn_by_the_host(n):
    calls = [(NoiseSampler(n, s), np.arange(7.0)) for s in (1, 1, 2, 3, 4)]
    assert_ran_compiled(check(NoiseSampler.sample, calls))


def test_p_written_earlier_in_the_call_is_not_read_ahead():
    calls = [(NoiseSampler(6, s),) for s in (1, 1, 2, 3)]
    assert_ran_compiled(check(NoiseSampler.sample_after_writing, calls))


def legacy_choice(logits):
    return np.random.choice(3, p=np.exp(logits) / np.exp(logits).sum())


def test_global_choice_with_computed_probabilities():
    np.random.seed(8)
    logits = np.random.default_rng(5).standard_normal((5, 3))
    assert_ran_compiled(check(legacy_choice, [(z,) for z in logits], [GLOBAL_STATE]))


def choose(rng, p):
    return rng.choice(4, p=p * 1.0)


@pytest.mark.parametrize("dtype, off", [(np.float64, 1e-8), (np.float32, 3e-4)])
def test_probabilities_numpy_rejects_run_in_the_interpreter_and_raise(dtype, off):
    """NumPy's tolerance on the sum is sqrt(eps) of float64 (of float32 for float32 p): within it the
    draw compiles; past it, and for NaN or negative probabilities, the interpreter raises."""
    fine = np.full(4, 0.25, dtype)
    ps = [fine, fine + np.array([off, 0, 0, 0], dtype), fine, fine + np.array([2 * off, 0, 0, 0], dtype),
          np.array([0.5, 0.75, -0.25, 0.0], dtype), np.array([np.nan, 0.5, 0.5, 0.0], dtype), fine]
    compiled = pyfront.compile(choose, profile_calls=1, verify="off")
    agree_or_raise_alike(choose, compiled, ps)
    report = pyfront.explain(compiled)
    assert report.deopts == 3 and report.compiled_calls == 3, str(report)


# Draws in branches on computed values: drawn before the call, undone where the branch did not run -----


class EpsilonGreedy:
    def __init__(self, n_actions, n_obs, eps, seed):
        self.rng = np.random.default_rng(seed)
        self.W = self.rng.standard_normal((n_actions, n_obs))
        self.eps = eps
        self.n_actions = n_actions

    def act(self, obs):
        if self.rng.random() < self.eps:
            return int(self.rng.integers(self.n_actions))
        return int(np.argmax(self.W @ obs))

    def act_inline(self, obs):
        q = self.W @ obs
        return self.rng.integers(self.n_actions) if self.rng.random() < self.eps else np.argmax(q)


OBSERVATIONS = np.random.default_rng(9).standard_normal((24, 3))


@pytest.mark.parametrize("method", ["act", "act_inline"])
def test_epsilon_greedy_exploration_compiles_with_numpys_stream(method):
    """The exploring draw is made before every call; where the agent exploits, it is undone."""
    compiled = check(getattr(EpsilonGreedy, method), [(EpsilonGreedy(4, 3, 0.4, 7), o) for o in OBSERVATIONS])
    report = pyfront.explain(compiled)
    assert report.deopts == 0, str(report)
    assert_ran_compiled(compiled)


def legacy_epsilon_greedy(q, eps):
    if np.random.rand() < eps:
        action = np.random.randint(len(q))
    else:
        action = np.argmax(q)
    return action


def test_legacy_epsilon_greedy():
    np.random.seed(12)
    calls = [(q, 0.5) for q in np.random.default_rng(1).standard_normal((16, 5))]
    assert_ran_compiled(check(legacy_epsilon_greedy, calls, [GLOBAL_STATE]))


def nested_draws(rng, x):
    y = x * 2.0
    if x.sum() > 0:
        y = y + rng.random(x.shape)
        if x[0, 0] > 0:
            y = y - rng.standard_normal(x.shape)
    return y


def test_draws_in_nested_branches():
    signs = [(1, 1), (1, -1), (-1, 1), (1, 1), (-1, -1), (1, -1)]
    calls = [(np.random.default_rng(s), X64 * a + (0.9 if b > 0 else -0.9) * (X64 == X64[0, 0]) + a * 0.5)
             for s, (a, b) in enumerate(signs)]
    assert_ran_compiled(check(nested_draws, calls, profile_calls=2))


def draw_after_a_branch(rng, x):
    y = x * 2.0
    if x.sum() > 0:
        y = y + rng.random(x.shape)
    return y * rng.random()


def test_a_draw_after_a_branch_that_did_not_draw_runs_in_the_interpreter():
    """Its number was drawn after the branch's, which did not happen: only the interpreter knows it.
    (So do draws in the else side of a branch whose other side draws too.)"""
    calls = [(np.random.default_rng(s), X64 + sign) for s, sign in enumerate((1, -1, 1, -1, 1, 1, 1))]
    compiled = check(draw_after_a_branch, calls, profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.deopts == 1 and "Generator.random drew after a draw in a branch that did not run" in str(report)
    assert_ran_compiled(compiled)


# Re-seeding inside the function: made on the host in program order, like a draw ------------------


def seeded_dropout(x, dropout_param):
    """cs231n's dropout_forward: a seed in the parameters makes the mask reproducible."""
    p = dropout_param["p"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = (np.random.rand(*x.shape) < p) / p
    return x * mask, np.random.rand()


def test_np_random_seed_inside_the_function():
    calls = [(X64 * k, {"p": 0.5, "seed": s}) for k, s in ((1, 0), (2, 0), (3, 1), (4, 7), (5, 3), (6, 9))]
    assert_ran_compiled(check(seeded_dropout, calls, [GLOBAL_STATE]))


def shuffled_minibatches(X, size, seed):
    """deeplearning.ai's random_mini_batches: a seed passed per epoch, columns taken in a drawn order."""
    np.random.seed(seed)
    permutation = list(np.random.permutation(X.shape[1]))
    shuffled = X[:, permutation]
    return [shuffled[:, k * size:(k + 1) * size] for k in range(X.shape[1] // size)]


def test_np_random_seed_of_an_argument():
    compiled = check(shuffled_minibatches, [(X64.reshape(2, -1) * k, 2, 10 + k) for k in range(5)], [GLOBAL_STATE])
    assert_ran_compiled(compiled)
    assert pyfront.explain(compiled).compilations == 1  # the seed is read by each call, not compiled in


def reseed_both(rng, x):
    rng.seed(3)
    random.seed(4)
    return x + rng.rand(*x.shape), random.random()


def test_randomstate_and_random_module_seed():
    calls = [(np.random.RandomState(s), X64) for s in range(4)]
    assert_ran_compiled(check(reseed_both, calls, [STDLIB_STATE]))


# The `random` module ------------------------------------------------------------------------------


def stdlib_draws(x):
    return x * random.random(), random.randint(1, 6), random.choice([1, 2, 3]), random.uniform(-1.0, 1.0)


def test_stdlib_random_module():
    random.seed(7)
    assert_ran_compiled(check(stdlib_draws, [(X64,)] * 5, [STDLIB_STATE]))


class Dice:
    def __init__(self, seed):
        self.rnd = random.Random(seed)

    def roll(self, x):
        return x * self.rnd.gauss(0.0, 1.0), self.rnd.randrange(10), self.rnd.choice((0.5, 1.5)), self.rnd.random()


def test_a_random_instance_in_an_attribute():
    assert_ran_compiled(check(Dice.roll, [(Dice(s), X64) for s in (0, 0, 1, 2)]))


def test_a_random_instance_whose_method_is_shadowed_runs_in_the_interpreter():
    compiled = pyfront.compile(Dice.roll, profile_calls=1)
    dice = Dice(0)
    dice.rnd.random = lambda: 0.25  # (a deep copy would drop it: random.Random pickles its state only)
    for _ in range(3):
        assert compiled(dice, X64)[3] == 0.25
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0 and "Random.random is shadowed by an instance attribute" in str(report)


def test_shadowing_a_random_method_after_compiling_is_seen():
    compiled = pyfront.compile(Dice.roll, profile_calls=1)
    dice = Dice(0)
    for _ in range(3):
        compiled(dice, X64)
    dice.rnd.random = lambda: 0.25
    assert compiled(dice, X64)[3] == 0.25
    assert pyfront.explain(compiled).compiled_calls == 2


# What runs in the interpreter, and why ------------------------------------------------------------


def interpreted(fn, calls, shared=()) -> str:
    compiled = check(fn, calls, shared, profile_calls=2)
    report = pyfront.explain(compiled)
    assert report.compiled_calls == 0, str(report)
    return str(report)


def test_a_draw_with_a_computed_parameter_runs_in_the_interpreter():
    def widened(rng, x):
        return rng.uniform(-1.0, x.max())

    report = interpreted(widened, [(np.random.default_rng(s), X64) for s in (0, 1, 2)])
    assert "Generator.uniform: argument 2 is computed at run time" in report


def test_choice_without_replacement_with_computed_probabilities_runs_in_the_interpreter():
    def deal(rng, logits):
        p = np.exp(logits) / np.exp(logits).sum()
        return rng.choice(3, size=2, replace=False, p=p)

    report = interpreted(deal, [(np.random.default_rng(s), np.array([0.1, 0.5, 0.2])) for s in (0, 1, 2)])
    assert "Generator.choice with a computed p and replace=False" in report


def per_sample_dropout(rng, xs, keep):
    """Grokking's per-sample loop at a dataset's length (a real loop, not unrolled): a dropout mask,
    a legacy draw and a Python float drawn each iteration, and draws in an inner loop."""
    total = np.zeros(xs.shape[1])
    for i in range(len(xs)):
        mask = rng.random(xs.shape[1]) < keep
        total = total + xs[i] * mask * np.random.randint(2, size=xs.shape[1]) + rng.normal()
        for _ in range(2):
            total = total * (1.0 + 0.01 * rng.standard_normal())
    return total, rng.random()


def test_draws_in_a_long_loop_are_made_on_the_host_per_iteration():
    xs = np.linspace(-1, 1, 300 * 4).reshape(300, 4)
    np.random.seed(5)
    compiled = check(per_sample_dropout, [(np.random.default_rng(s), xs, 0.5) for s in (0, 0, 1, 2)],
                     shared=[GLOBAL_STATE])
    assert_ran_compiled(compiled)


def test_a_draw_in_a_loop_on_a_computed_condition_runs_in_the_interpreter():
    def walk(rng, x):
        while x.sum() < 10.0:
            x = x + rng.random(x.shape)
        return x

    report = interpreted(walk, [(np.random.default_rng(s), X64) for s in (0, 1, 2)])
    assert "Generator.random inside a loop on a computed value" in report


def saves_the_state(x):
    saved = np.random.get_state()
    return x[0], saved[0]


def test_calls_that_are_not_draws_run_in_the_interpreter():
    np.random.seed(2)
    assert "np.random.get_state is not a random draw the compiler makes" in interpreted(
        saves_the_state, [(X64,)] * 3, [GLOBAL_STATE])


def test_export_refuses_a_function_that_draws(tmp_path):
    def noisy(x):
        return x + np.random.rand(*x.shape)

    with pytest.raises(ExportError, match=r"test_random.py:\d+: it draws random numbers \(np.random.rand\)"):
        pyfront.export(noisy, X64, path=tmp_path / "noisy.pyfront")
