"""`pyfront.grad` / `pyfront.value_and_grad` in the interpreter (the tape, pyfront/autodiff/tape.py).

Gradients are checked against central finite differences (float64) and
against hand-derived formulas, through Python control flow (if on computed
values, for, while, recursion over trees), helper calls, methods, pytrees of
parameters (dicts, lists, tuples, objects) and pyfront.nn primitives; plus
the types, dtypes and shapes of gradients and values, and the errors.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import pyfront
from pyfront import nn

RNG = np.random.default_rng(0)


def _leaves(tree):
    """The float ndarray leaves of a pytree (dicts in key order), as references."""
    if isinstance(tree, np.ndarray):
        return [tree]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in _leaves(v)]
    if hasattr(tree, "__dict__"):
        return [leaf for v in vars(tree).values() for leaf in _leaves(v)]
    return []


def numeric_grad(f, tree, eps=1e-6):
    """Central finite differences of the scalar f(tree) w.r.t. each ndarray leaf (mutated in place, restored)."""
    grads = []
    for leaf in _leaves(tree):
        g = np.zeros_like(leaf)
        for k in np.ndindex(leaf.shape):
            old = leaf[k]
            leaf[k] = old + eps
            hi = float(f(tree))
            leaf[k] = old - eps
            lo = float(f(tree))
            leaf[k] = old
            g[k] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def check_fd(f, tree, grad_tree, rtol=1e-5, atol=1e-7):
    for got, want in zip(_leaves(grad_tree), numeric_grad(f, tree), strict=True):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# Models --------------------------------------------------------------------------


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def test_mlp_loss_matches_finite_differences():
    params = {"w1": RNG.standard_normal((3, 5)), "b1": RNG.standard_normal(5),
              "w2": RNG.standard_normal((5, 2)), "b2": RNG.standard_normal(2)}
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 2))
    g = pyfront.grad(mlp_loss)(params, x, y)
    assert list(g) == ["w1", "b1", "w2", "b2"]
    check_fd(lambda p: mlp_loss(p, x, y), params, g)


def softmax_cross_entropy(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


def test_softmax_cross_entropy_hand_derived():
    logits, labels = RNG.standard_normal((5, 4)), np.array([0, 3, 3, 1, 2])
    g = pyfront.grad(softmax_cross_entropy)(logits, labels)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    want = (p - np.eye(4)[labels]) / 5
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)


def test_branches_on_computed_values():
    def f(x):
        s = np.sum(x)
        if s > 0:
            return np.sum(x * x) * s
        return np.sum(np.sin(x))

    for x in (np.array([1.0, 2.0, -0.5]), np.array([-1.0, -2.0, 0.5])):
        check_fd(f, x, pyfront.grad(f)(x))


def test_for_loop_rnn():
    def rnn(w, xs):
        h = np.zeros(3)
        for x in xs:  # iterates the rows of a (not differentiated) array
            h = np.tanh(w["wx"] @ x + w["wh"] @ h)
        return np.sum(h ** 2)

    w = {"wx": RNG.standard_normal((3, 2)), "wh": RNG.standard_normal((3, 3)) * 0.5}
    xs = RNG.standard_normal((4, 2))
    check_fd(lambda w: rnn(w, xs), w, pyfront.grad(rnn)(w, xs))


def test_loop_over_a_differentiated_array_and_while():
    def f(x):
        total = 0.0
        for row in x:  # iteration over a boxed array
            total = total + np.prod(row)
        while total < 100:  # trip count from computed values
            total = total * 2
        return total

    x = np.array([[1.0, 2.0], [3.0, 0.5]])
    check_fd(f, x, pyfront.grad(f)(x))


def tree_encode(tree, w, leaf):
    if isinstance(tree, tuple):
        left, right = (tree_encode(t, w, leaf) for t in tree)
        return np.tanh(w @ np.concatenate([left, right]))
    return leaf[tree]


def test_recursion_over_a_nested_tuple_tree():
    tree = ((0, 1), (2, (1, 0)))
    w, leaf = RNG.standard_normal((2, 4)), RNG.standard_normal((3, 2))

    def loss(w, leaf):
        return np.sum(tree_encode(tree, w, leaf))

    gw, gleaf = pyfront.grad(loss, argnums=(0, 1))(w, leaf)
    check_fd(lambda ps: loss(*ps), [w, leaf], [gw, gleaf])


class Model:
    def __init__(self):
        self.w = RNG.standard_normal((3, 2))
        self.b = np.zeros(2)
        self.scale = 2  # an int attribute: not differentiated
        self.name = "model"

    def forward(self, x):
        return helper(x @ self.w + self.b) * self.scale

    def loss(self, x):
        return np.mean(self.forward(x) ** 2)


def helper(z):
    return np.maximum(z, 0.1 * z)


def test_methods_helpers_and_object_attributes():
    model, x = Model(), RNG.standard_normal((4, 3))
    g = pyfront.grad(lambda m: m.loss(x))(model)
    assert set(g) == {"w", "b"}
    check_fd(lambda m: m.loss(x), model, g)
    assert isinstance(model.w, np.ndarray)  # the object itself is not touched


def test_bound_method_and_nested_objects():
    class Net:
        def __init__(self):
            self.layers = [Model(), Model()]

    net, x = Net(), RNG.standard_normal((4, 3))
    g = pyfront.grad(lambda n: n.layers[0].loss(x) + n.layers[1].loss(x))(net)
    assert set(g) == {"layers"} and isinstance(g["layers"], list) and set(g["layers"][1]) == {"w", "b"}
    check_fd(lambda n: n.layers[0].loss(x) + n.layers[1].loss(x), net, g)
    gx = pyfront.grad(net.layers[0].loss)(x)
    check_fd(net.layers[0].loss, x, gx)


def test_pytree_structure_types():
    Pair = namedtuple("Pair", "a b")

    def f(t, lst, p):
        return np.sum(t[0] * t[1]) + np.sum(lst[0]) * lst[1] + p.a * p.b

    t, lst, p = (np.ones(2), np.full(2, 3.0)), [np.arange(3.0), 2.0], Pair(np.float64(2.0), 5.0)
    gt, glst, gp = pyfront.grad(f, argnums=(0, 1, 2))(t, lst, p)
    assert type(gt) is tuple and type(glst) is list and type(gp) is Pair
    np.testing.assert_array_equal(gt[0], [3, 3])
    np.testing.assert_array_equal(glst[0], [2, 2, 2])
    assert type(glst[1]) is float and glst[1] == 3.0
    assert type(gp.a) is np.float64 and gp.a == 5.0 and gp.b == 2.0


def test_dtypes_and_shapes_follow_the_primal():
    x32 = np.ones((2, 3), np.float32)
    g = pyfront.grad(lambda x: np.sum(x * 1.5) + np.sum(x.astype(np.float64)))(x32)
    assert g.dtype == np.float32 and g.shape == (2, 3)
    np.testing.assert_array_equal(g, 2.5)
    g0 = pyfront.grad(lambda x: x * x)(np.array(3.0))
    assert isinstance(g0, np.ndarray) and g0.shape == () and g0 == 6.0
    gs = pyfront.grad(lambda x: x * x)(np.float32(3.0))
    assert type(gs) is np.float32 and gs == 6.0


def test_unused_argument_gets_zeros():
    gx, gy = pyfront.grad(lambda x, y: np.sum(x), argnums=(0, 1))(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(gy, np.zeros(3))
    assert pyfront.grad(lambda x: 1.5)(np.ones(2)).tolist() == [0.0, 0.0]


def test_argnums_negative_and_value_and_grad():
    def f(a, b, c):
        return np.sum(a * b) + c

    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    value, (gb, gc) = pyfront.value_and_grad(f, argnums=(-2, 2))(a, b, 0.5)
    assert type(value) is np.float64 and value == f(a, b, 0.5)
    np.testing.assert_array_equal(gb, a)
    assert gc == 1.0


def test_value_is_exactly_the_interpreters():
    x = RNG.standard_normal((7, 5)).astype(np.float32)

    def f(x):
        return np.mean(np.tanh(x) @ x.T) / 3

    value, _ = pyfront.value_and_grad(f)(x)
    assert type(value) is type(f(x)) and value == f(x)


def test_numpy_functions_and_methods():
    def f(x, y):
        a = np.concatenate([x, y], axis=0).T.reshape(-1)
        b = np.stack([x, y], axis=1).sum(axis=(0, 2))
        c = np.where(x > 0, x, y).max() + np.clip(x, -0.5, 0.5).min()
        d = np.dot(x[0], y[1]) + np.matmul(x, y.T).prod() + np.squeeze(x[None, :1]).std()
        e = np.swapaxes(np.expand_dims(x, 0), 0, 2).var() + np.abs(-x).sum() + np.sqrt(x * x + 1).sum()
        return np.sum(a * np.arange(a.size)) + np.sum(b) + c + d + e + np.sum(x[::-1, ::2] ** 3)

    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    gx, gy = pyfront.grad(f, argnums=(0, 1))(x, y)
    check_fd(lambda t: f(*t), (x, y), (gx, gy))


def test_max_reduction_ties_share_equally():
    g = pyfront.grad(lambda x: np.max(x))(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0, 0.5, 0.5, 0])


def test_through_pyfront_nn_primitives():
    x = RNG.standard_normal((2, 1, 5, 5))

    def loss(w, table):
        h = nn.max_pool2d(nn.relu(nn.conv2d(x, w, padding=1)), 2)
        emb = nn.embedding(table, np.array([1, 0, 1]))
        return np.sum(h ** 2) + np.sum(emb ** 3) + nn.cross_entropy(h.reshape(2, -1), np.array([0, 3]))

    w, table = RNG.standard_normal((2, 1, 3, 3)), RNG.standard_normal((3, 2))
    gw, gt = pyfront.grad(loss, argnums=(0, 1))(w, table)
    check_fd(lambda t: loss(*t), (w, table), (gw, gt), rtol=1e-4, atol=1e-6)


# Errors -------------------------------------------------------------------------------


def test_integer_arguments_are_refused():
    with pytest.raises(TypeError, match="requires float inputs, but argument 0 has int64"):
        pyfront.grad(lambda x: np.sum(x))(np.arange(3))
    with pytest.raises(TypeError, match=r"argument 0\['n'\] has int"):
        pyfront.grad(lambda d: d["x"].sum())({"x": np.ones(2), "n": 3})


def test_output_must_be_a_float_scalar():
    with pytest.raises(TypeError, match="scalar-output functions; the output had shape"):
        pyfront.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(TypeError, match="float scalar output"):
        pyfront.grad(lambda x: int(np.sum(x)))(np.ones(3))


@pytest.mark.parametrize(
    "fn, what",
    [
        (lambda x: np.sum(np.logaddexp2(x, x)), "np.logaddexp2"),
        (lambda x: float(np.sum(x)), r"float\(\)"),
        (lambda x: np.sum(np.asarray(x)), "np.asarray"),
        (lambda x: np.add.reduce(x), "np.add.reduce"),
        (lambda x: np.sum(np.linalg.norm(x, 1)), "np.linalg.norm with ord=1"),
        (lambda x: np.var(x, ddof=3), "var with ddof=3"),
        (lambda x: np.einsum("i,i->", x, x), "np.einsum"),
    ],
)
def test_unsupported_operations_name_themselves(fn, what):
    with pytest.raises(TypeError, match=what):
        pyfront.grad(fn)(np.ones(3))


def test_in_place_updates_are_refused():
    def add_in_place(x):
        x += 1
        return np.sum(x)

    def set_item(x):
        x[0] = 0.0
        return np.sum(x)

    for fn in (add_in_place, set_item):
        x = np.ones(3)
        with pytest.raises(TypeError, match="in-place|item assignment"):
            pyfront.grad(fn)(x)
        np.testing.assert_array_equal(x, 1.0)
    assert pyfront.grad(lambda x: add_in_place(np.sum(x)))(np.ones(2)).tolist() == [1.0, 1.0]  # scalars rebind


def test_escaped_and_nested_values_are_refused():
    kept = []

    def f(x):
        kept.append(x * 2)
        return np.sum(x)

    pyfront.grad(f)(np.ones(2))
    with pytest.raises(TypeError, match="finished gradient computation"):
        kept[0] + 1
    with pytest.raises(TypeError, match="nested gradients"):
        pyfront.grad(lambda x: pyfront.grad(lambda y: np.sum(x * y))(x).sum())(np.ones(2))


def test_bad_argnums():
    with pytest.raises(TypeError, match="argnums must be"):
        pyfront.grad(np.sum, argnums="0")
    with pytest.raises(ValueError, match="out of range"):
        pyfront.grad(lambda x: x, argnums=1)(1.0)


# NumPy functions differentiated through compositions (autodiff/composites.py) -------

B, C = RNG.standard_normal(4), RNG.standard_normal((2, 4, 5))


@pytest.mark.parametrize(
    "name, f",
    [
        ("logaddexp", lambda x: np.sum(np.logaddexp(x, B) * B)),
        ("cumsum-axis", lambda x: np.sum(np.cumsum(x, axis=1) ** 2)),
        ("cumsum-flat", lambda x: np.sum(np.sin(np.cumsum(x)))),
        ("var-ddof", lambda x: np.sum(np.var(x, axis=0, ddof=1) * B)),
        ("std-ddof-method", lambda x: x.std(ddof=2)),
        ("norm", lambda x: np.linalg.norm(x)),
        ("norm-fro", lambda x: np.linalg.norm(x, "fro")),
        ("norm-vector-2", lambda x: np.linalg.norm(x[0], 2)),
        ("dot-3d", lambda x: np.sum(np.dot(x[None], C) ** 2)),
        ("dot-3d-vector", lambda x: np.sum(np.tanh(np.dot(np.stack([x, x]), B)))),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_composite_functions_match_finite_differences_and_numpy_values(name, f):
    x = RNG.standard_normal((3, 4))
    value, g = pyfront.value_and_grad(f)(x)
    assert value == f(x)  # bit-for-bit NumPy's value
    check_fd(f, x, g)


def test_has_aux_returns_aux_unchanged():
    def loss(w, x):
        h = np.tanh(x @ w)
        return np.sum(h * h), {"h": h, "n": 3}

    w, x = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))
    g, aux = pyfront.grad(loss, has_aux=True)(w, x)
    (value, aux2), g2 = pyfront.value_and_grad(loss, has_aux=True)(w, x)
    assert type(aux["h"]) is np.ndarray and aux["n"] == 3
    np.testing.assert_array_equal(aux["h"], np.tanh(x @ w))
    np.testing.assert_array_equal(g, g2)
    assert value == loss(w, x)[0]
    check_fd(lambda w: loss(w, x)[0], w, g)
    with pytest.raises(TypeError, match="has_aux=True requires"):
        pyfront.grad(lambda w: np.sum(w), has_aux=True)(w)


def test_the_tape_does_not_load_the_compiler():
    """A NumPy program that only differentiates never imports graph generation or IREE's runtime layer
    (the tape's first call took 0.25 s of such imports: bench/programs/model_gan.py in NumPy)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, pyfront\n"
            "assert pyfront.grad(lambda w: (w * w).sum())(np.ones(3)).tolist() == [2.0, 2.0, 2.0]\n"
            "print(sorted(m for m in ('pyfront.api', 'pyfront.state', 'pyfront.graphgen', "
            "'pyfront.runtime.iree_backend') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]"
