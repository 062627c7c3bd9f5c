"""`pyfront.grad` / `value_and_grad` inside `pyfront.compile`d code, checked against the interpreter.

Every test is differential (tests/differential.py `check`): the same calls run
in CPython (the interpreter's gradient tape) and compiled (the AD
transformation on the IR), and results, types, dtypes and state after the
call must agree; each also asserts that calls ran compiled.

Tolerance: the harness's (float32 rtol 1e-5 / atol 1e-6, float64 1e-12).
Compiled gradients use the same VJP rules as the tape, but IREE sums
reductions and matmuls in another order than NumPy/BLAS, so the last bits of
floats may differ; multi-step training runs in float64 so those differences
stay far below the tolerance after several steps.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import pyfront
from tests.differential import check

if not hasattr(pyfront, "grad") or importlib.util.find_spec("pyfront.autodiff.tape") is None:
    pytest.skip("the interpreter's gradient tape (the reference side) has not landed yet", allow_module_level=True)


def compiled_some(fn) -> None:
    assert pyfront.explain(fn).compiled_calls > 0, str(pyfront.explain(fn))


rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return rng.standard_normal(shape)


# MLP training step with SGD, parameters on an object (deferred-state writes) -------


def mlp_loss(params, x, y):
    w1, b1, w2 = params
    h = np.tanh(x @ w1 + b1)
    err = h @ w2 - y
    return np.mean(err * err)


class MLP:
    def __init__(self, w1, b1, w2):
        self.w1, self.b1, self.w2 = w1, b1, w2


def sgd_step(model, x, y):
    loss, g = pyfront.value_and_grad(mlp_loss)((model.w1, model.b1, model.w2), x, y)
    model.w1 = model.w1 - 0.1 * g[0]
    model.b1 = model.b1 - 0.1 * g[1]
    model.w2 = model.w2 - 0.1 * g[2]
    return loss


def test_mlp_sgd_step():
    calls = [(MLP(f32(5, 8), f32(8), f32(8, 2)), f32(4, 5), f32(4, 2)) for _ in range(3)]
    compiled_some(check(sgd_step, calls))


# Adam with its moments on the optimizer object, several steps in one call -------


class Adam:
    def __init__(self, shapes):
        self.m = {name: np.zeros(s) for name, s in shapes.items()}
        self.v = {name: np.zeros(s) for name, s in shapes.items()}
        self.t = np.zeros(1)  # an array, not a NumPy scalar: compiled code stores arrays


class Model2:
    def __init__(self):
        self.w1, self.b1, self.w2 = f64(5, 8), f64(8), f64(8, 2)


def adam_update(opt, name, p, g):
    opt.m[name] = 0.9 * opt.m[name] + 0.1 * g
    opt.v[name] = 0.999 * opt.v[name] + 0.001 * g * g
    m_hat = opt.m[name] / (1.0 - 0.9 ** opt.t)
    v_hat = opt.v[name] / (1.0 - 0.999 ** opt.t)
    return p - 0.01 * m_hat / (np.sqrt(v_hat) + 1e-8)


def adam_train(model, opt, x, y):
    losses = []
    for _ in range(3):
        loss, g = pyfront.value_and_grad(mlp_loss)((model.w1, model.b1, model.w2), x, y)
        opt.t = opt.t + 1.0
        model.w1 = adam_update(opt, "w1", model.w1, g[0])
        model.b1 = adam_update(opt, "b1", model.b1, g[1])
        model.w2 = adam_update(opt, "w2", model.w2, g[2])
        losses.append(loss)
    return losses


def test_adam_on_object_attributes():
    calls = [(Model2(), Adam({"w1": (5, 8), "b1": (8,), "w2": (8, 2)}), f64(4, 5), f64(4, 2)) for _ in range(3)]
    compiled_some(check(adam_train, calls))


# Control flow inside the differentiated function ------------------------------


def branchy_loss(w, x):
    h = x @ w
    if h.sum() > 0:  # speculated from the profile (which sees inside branchy_loss)
        h = np.tanh(h)
    else:
        h = h * h
    return np.sum(h)


def grad_branchy(w, x):
    return pyfront.grad(branchy_loss)(w, x)


def test_grad_through_speculated_if_and_its_deopt():
    w, x = np.abs(f32(3, 2)), np.abs(f32(4, 3))
    calls = [(w, x), (w, x), (w, x), (w, -x)]  # the last call takes the other branch: a guard fails
    fn = check(grad_branchy, calls)
    compiled_some(fn)
    assert pyfront.explain(fn).deopts >= 1


def looped_loss(w, x):
    h = x
    for _ in range(3):
        h = np.tanh(h @ w)
    return np.sum(h * h)


def grad_looped(w, x):
    return pyfront.grad(looped_loss)(w, x)


def test_grad_through_unrolled_loop():
    compiled_some(check(grad_looped, [(f32(3, 3), f32(4, 3))] * 3))


def layer(w, b, x):
    return np.maximum(x @ w + b, 0.0)


def helper_loss(params, x):
    (w1, b1), (w2, b2) = params
    return np.sum(layer(w2, b2, layer(w1, b1, x)))


def grad_helpers(params, x):
    return pyfront.grad(helper_loss)(params, x)


def test_grad_through_helper_calls():
    params = ((f32(3, 4), f32(4)), (f32(4, 2), f32(2)))
    compiled_some(check(grad_helpers, [(params, f32(5, 3))] * 3))


def tree_embed(tree, w):
    if isinstance(tree, tuple):
        left, right = tree
        return np.tanh(w @ (tree_embed(left, w) + tree_embed(right, w)))
    return tree


def tree_loss(w, tree):
    return np.sum(tree_embed(tree, w))


def grad_tree(w, tree):
    return pyfront.grad(tree_loss)(w, tree)


def test_grad_through_recursion_over_a_tree():
    tree = ((f64(3), f64(3)), (f64(3), (f64(3), f64(3))))
    compiled_some(check(grad_tree, [(f64(3, 3), tree)] * 3))


# API shapes: argnums, value_and_grad, dicts, GradFunctions bound to names ------------


def two_arg_loss(a, b, x):
    return np.sum(np.tanh(a * x) * b)


def grad_a_b(a, b, x):
    return pyfront.grad(two_arg_loss, argnums=(0, 1))(a, b, x)


def value_and_grad_b(a, b, x):
    return pyfront.value_and_grad(two_arg_loss, argnums=1)(a, b, x)


def test_argnums_tuple_and_value_and_grad():
    args = (f32(4), f32(4), f32(4))
    compiled_some(check(grad_a_b, [args] * 3))
    compiled_some(check(value_and_grad_b, [args] * 3))


def dict_loss(params, x):
    return np.sum(np.tanh(x @ params["w"] + params["b"]))


def dict_step(params, x):
    g = pyfront.grad(dict_loss)(params, x)
    params["w"] = params["w"] - 0.5 * g["w"]
    params["b"] = params["b"] - 0.5 * g["b"]
    return g


def test_dict_params():
    calls = [({"w": f32(3, 2), "b": f32(2)}, f32(4, 3)) for _ in range(3)]
    compiled_some(check(dict_step, calls))


GRAD_OF_TWO_ARG = pyfront.grad(two_arg_loss, argnums=(0, 2))


def grad_from_global(a, b, x):
    return GRAD_OF_TWO_ARG(a, b, x)


def test_grad_function_in_a_global():
    compiled_some(check(grad_from_global, [(f32(4), f32(4), f32(4))] * 3))


# What stays in the interpreter -----------------------------------------------------


def converging_loss(w, x):
    h = x @ w
    while np.sum(h * h) > 1.0:  # a loop on a computed value: a real loop, not differentiable yet
        h = h * 0.5
    return np.sum(h)


def grad_converging(w, x):
    return pyfront.grad(converging_loss)(w, x)


def test_unsupported_construct_deopts_with_the_reason():
    fn = check(grad_converging, [(f32(3, 2), 3 * f32(4, 3))] * 3)
    report = pyfront.explain(fn)
    assert report.compiled_calls == 0
    assert "gradient: scf.while" in str(report), str(report)


def grad_arg5(a, b, x):
    return pyfront.grad(two_arg_loss, argnums=5)(a, b, x)


def test_out_of_range_argnums_raise_as_in_the_interpreter():
    fn = check(grad_arg5, [(f32(4), f32(4), f32(4))] * 2)
    assert pyfront.explain(fn).compiled_calls == 0


# Dynamic dims: a batch that varies between calls becomes a dynamic dim -----------
#
# After two sizes of a dim the front end compiles a variant where it is dynamic
# (`?`); the VJP rules then build cotangents whose shapes are only known at run
# time (reshape back to several dynamic dims, slices and concatenations along a
# dynamic dim, reductions over broadcast axes beside dynamic dims).


def batches(*shapes_of_call):
    """One call (w, x) per shape of x; w (4, 3) is shared."""
    w = f64(4, 3)
    return [(w, f64(*shape)) for shape in shapes_of_call]


def flatten_loss(w, x):
    h = np.tanh(x @ w)  # (?, ?, 3)
    flat = h.reshape(-1)  # back to (?, ?, 3) in the backward
    return np.sum(flat * flat)


def grad_flatten(w, x):
    return pyfront.grad(flatten_loss, argnums=(0, 1))(w, x)


def test_reshape_back_to_several_dynamic_dims():
    fn = check(grad_flatten, batches((2, 3, 4), (3, 4, 4), (4, 5, 4), (5, 2, 4)))
    compiled_some(fn)


def slices_loss(w, x):
    h = np.tanh(x @ w)  # (?, 3)
    return np.sum(h[1:] * h[:-1]) + np.sum(h[::2] ** 2) + np.sum(h[2:3])


def grad_slices(w, x):
    return pyfront.grad(slices_loss, argnums=(0, 1))(w, x)


def test_slices_along_a_dynamic_dim():
    compiled_some(check(grad_slices, batches((3, 4), (5, 4), (6, 4), (7, 4))))


def concat_loss(w, x, y):
    h = np.concatenate([x @ w, y, x[:, :3] * 2.0], axis=0)  # (? + 2 + ?, 3)
    return np.sum(np.tanh(h) * h)


def grad_concat(w, x, y):
    return pyfront.value_and_grad(concat_loss, argnums=(0, 1, 2))(w, x, y)


def test_concatenate_with_a_dynamic_dim_before_the_last_operand():
    calls = [(w, x, f64(2, 3)) for w, x in batches((3, 4), (5, 4), (6, 4), (4, 4))]
    compiled_some(check(grad_concat, calls))


def bias_loss(b, x):
    return np.sum(np.tanh(x + b) ** 2)  # b (1, 4) broadcast over (?, ?, 4)


def grad_bias(b, x):
    return pyfront.grad(bias_loss)(b, x)


def test_unbroadcast_beside_several_dynamic_dims():
    b = f64(1, 4)
    calls = [(b, f64(*s)) for s in ((2, 3, 4), (3, 5, 4), (4, 2, 4), (5, 3, 4))]
    compiled_some(check(grad_bias, calls))


# Objects' array attributes and has_aux ----------------------------------------------


class Dense:
    def __init__(self, n_in, n_out):
        self.w, self.b = f64(n_in, n_out), f64(n_out)
        self.activation = "tanh"  # not differentiated (a constant, guarded)

    def forward(self, x):
        return np.tanh(x @ self.w + self.b)


class Net:
    def __init__(self):
        self.hidden = Dense(5, 8)  # a nested object: its gradient is a nested dict
        self.layers = [Dense(8, 4), Dense(4, 2)]  # a list of objects: a list of dicts
        self.scale = np.float64(0.5)  # a NumPy float scalar attribute is differentiated too
        self.steps = np.zeros(1, np.int64)  # an int array: not differentiated, not in the gradient

    def forward(self, x):
        h = self.hidden.forward(x)
        for layer in self.layers:
            h = layer.forward(h)
        return self.scale * h


def net_loss(net, x, y):
    err = net.forward(x) - y
    return np.mean(err * err)


def net_grad(net, x, y):
    return pyfront.grad(net_loss)(net, x, y)


def net_loss_and_error(net, x, y):
    err = net.forward(x) - y
    return np.mean(err * err), {"max_error": np.max(np.abs(err)), "prediction": net.forward(x)}


def net_value_grad_aux(net, x, y):
    (loss, aux), g = pyfront.value_and_grad(net_loss_and_error, has_aux=True)(net, x, y)
    net.hidden.w = net.hidden.w - 0.1 * g["hidden"]["w"]  # an SGD step through the gradient dict
    return loss, aux, g


def net_grad_aux(net, x, y):
    return pyfront.grad(net_loss_and_error, has_aux=True)(net, x, y)


def test_gradient_with_respect_to_an_objects_attributes():
    calls = [(Net(), f64(3, 5), f64(3, 2)) for _ in range(3)]
    fn = check(net_grad, calls)
    compiled_some(fn)
    g = net_grad(*calls[0])
    assert list(g) == ["hidden", "layers", "scale"] and list(g["hidden"]) == ["w", "b"]
    assert type(g["scale"]) is np.float64 and type(g["layers"]) is list


def test_has_aux_with_an_object_and_value_and_grad():
    calls = [(Net(), f64(3, 5), f64(3, 2)) for _ in range(3)]
    compiled_some(check(net_value_grad_aux, calls))
    compiled_some(check(net_grad_aux, calls))


def test_an_attribute_added_at_call_time_is_seen():
    nets = [Net() for _ in range(4)]
    nets[3].extra = f64(2)  # the interpreter differentiates it too: the attribute guard fails
    fn = check(net_grad, [(net, f64(3, 5), f64(3, 2)) for net in nets])
    compiled_some(fn)
    assert pyfront.explain(fn).deopts >= 1


def bad_aux_loss(w):
    return np.sum(w * w)


def grad_bad_aux(w):
    return pyfront.grad(bad_aux_loss, has_aux=True)(w)


def test_has_aux_without_a_pair_raises_as_in_the_interpreter():
    fn = check(grad_bad_aux, [(f64(3),)] * 2)
    assert pyfront.explain(fn).compiled_calls == 0
