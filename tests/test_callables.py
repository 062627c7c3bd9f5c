"""Every callable `pyfront.compile` accepts (pyfront/callables.py), and keyword arguments at the call."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import pyfront
from differential import assert_same, check
from pyfront.aot import ExportError


class Dense:
    """A textbook layer: weights as attributes, a forward method with a keyword flag."""

    def __init__(self, w):
        self.w = w

    def forward(self, x, training=False):
        y = np.tanh(x @ self.w)
        if training:
            return y * 0.5
        return y

    def __call__(self, x):
        return np.tanh(x @ self.w)


def _x(rows=2):
    return np.arange(rows * 3, dtype=np.float64).reshape(rows, 3) / 10.0


def _w(scale=1.0):
    return np.eye(3) * scale


def _calls_agree(compiled, plain, calls):
    """Each (args, kwargs) call gives the interpreter's result or exception; returns compiled_calls."""
    for args, kwargs in calls:
        try:
            expected, expected_error = plain(*args, **kwargs), None
        except TypeError as e:
            expected, expected_error = None, e
        try:
            got, error = compiled(*args, **kwargs), None
        except TypeError as e:
            got, error = None, e
        assert type(error) is type(expected_error) and str(error) == str(expected_error)
        if expected_error is None:
            assert_same(expected, got)
    return pyfront.explain(compiled).compiled_calls


def test_bound_method_sees_the_mutated_receiver():
    layer = Dense(_w())
    compiled = pyfront.compile(layer.forward, profile_calls=1)
    for scale in (1.0, 1.0, 2.0, 2.0, 3.0):
        layer.w = _w(scale)
        assert_same(Dense(_w(scale)).forward(_x()), compiled(_x()))
    assert pyfront.explain(compiled).compiled_calls > 0


def test_callable_object_whose_weights_change():
    layer = Dense(_w())
    compiled = pyfront.compile(layer, profile_calls=1)
    for scale in (1.0, 1.0, 2.0, 2.0):
        layer.w = _w(scale)
        assert_same(np.tanh(_x() @ _w(scale)), compiled(_x()))
    assert pyfront.explain(compiled).compiled_calls > 0


def test_partial_binds_arguments_and_keywords():
    layer = Dense(_w(2.0))
    check(functools.partial(Dense.forward, layer, training=True), [(_x(),)] * 3)
    compiled = check(functools.partial(Dense.forward, layer), [(_x(),)] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0


def test_keyword_at_the_call_shares_the_positional_variant():
    layer = Dense(_w())
    compiled = pyfront.compile(Dense.forward, profile_calls=1)
    calls = [((layer, _x()), {"training": True}), ((layer, _x(), True), {}),
             ((layer,), {"x": _x(), "training": True}), ((layer, _x()), {})]
    assert _calls_agree(compiled, Dense.forward, calls * 2) > 0
    assert not pyfront.explain(compiled).interpreter_reasons
    assert pyfront.explain(compiled).compilations == 2  # training=True and the default False


def test_bad_calls_raise_cpythons_type_error():
    def f(x, y=1.0, /, z=2.0):
        return x * y + z

    compiled = pyfront.compile(f, profile_calls=1)
    bad = [((), {}), ((1.0, 2.0, 3.0, 4.0), {}), ((1.0,), {"w": 1.0}), ((1.0,), {"x": 1.0}),
           ((1.0,), {"y": 3.0}), ((1.0, 2.0, 3.0), {"z": 1.0})]
    _calls_agree(compiled, f, bad + [((1.5,), {"z": 0.25})] * 3)
    assert pyfront.explain(compiled).compiled_calls > 0


@pytest.mark.parametrize("kind", [staticmethod, classmethod])
def test_static_and_class_method_objects(kind):
    def scale(first, x):  # first: the static method's extra argument, or the class method's class
        return x * 2.0

    class Model:
        f = pyfront.compile(kind(scale), profile_calls=1)

    for _ in range(3):
        if kind is staticmethod:
            assert_same(scale(_x(), _x()), Model.f(_x(), _x()))
        else:
            assert_same(scale(Model, _x()), Model().f(_x()))
    assert pyfront.explain(Model.__dict__["f"].__func__).compiled_calls > 0


def test_compile_is_idempotent():
    def f(x):
        return np.sin(x)

    compiled = pyfront.compile(f, profile_calls=1)
    assert pyfront.compile(compiled) is compiled
    assert pyfront.compile(compiled, profile_calls=1) is compiled
    other = pyfront.compile(compiled, profile_calls=3)  # another configuration: another compiled function
    assert other is not compiled and other.fn is f and other.config.profile_calls == 3


def test_grad_of_compiled_differentiates_the_python_function():
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    compiled = pyfront.compile(loss)
    gradient = pyfront.grad(compiled)
    assert gradient.fn is compiled  # not silently replaced by the function behind it
    assert not hasattr(gradient, "_groups")  # nor the compiled function's state copied over
    assert_same(pyfront.grad(loss)(_w(), _x()), gradient(_w(), _x()))
    assert pyfront.explain(compiled).calls == 0  # the tape traced `loss` itself


def scaled_by_rest(x, *rest):
    for r in rest:
        x = x * r
    return x * len(rest)


def scaled_by_options(x, **options):
    return x * options.get("scale", 1.0) + len(options)


def scaled_by_keyword(x, *, k=2.0, shift=0.0):
    return x * k + shift


def forwards_everything(x, *args, **kwargs):
    return scaled_by_keyword(x, *args, **kwargs) + scaled_by_options(x, **kwargs)


@pytest.mark.parametrize("fn, calls", [
    (scaled_by_rest, [((np.ones(2),), {}), ((np.ones(2), 2.0), {}), ((np.ones(2), 2.0, 3.0), {}),
                      ((np.ones(2), 2.0, 3.0), {})]),
    (scaled_by_options, [((np.ones(2),), {"scale": 3.0})] * 3 + [((np.ones(2),), {}), ((np.ones(2),), {"k": 1})]),
    (scaled_by_keyword, [((np.ones(2),), {"k": 3.0})] * 3 + [((np.ones(2),), {"shift": 1.0}), ((np.ones(2), 1.0), {})]),
    (forwards_everything, [((np.ones(2),), {"k": 3.0, "shift": 0.5})] * 4),
], ids=lambda v: getattr(v, "__name__", ""))
def test_star_args_keyword_only_and_star_star_kwargs_compile(fn, calls):
    # One argument per parameter (the *args tuple and the **kwargs dict among them) is the dispatch
    # key; the interpreter runs each call as it was made (also the one CPython refuses).
    compiled = pyfront.compile(fn, profile_calls=1)
    assert _calls_agree(compiled, fn, calls) >= 1, str(pyfront.explain(compiled))


class Scaled:
    factor = 3.0

    def __init__(self):
        self._w = np.full(3, 0.5)

    @property
    def w(self):
        return self._w * 2.0

    @staticmethod
    def act(z):
        return np.tanh(z)

    @classmethod
    def scale(cls, z):
        return z * cls.factor

    def forward(self, x):
        return self.scale(self.act(x)) * self.w


def test_static_and_class_methods_and_properties_through_self_compile():
    model = Scaled()
    compiled = pyfront.compile(model.forward, profile_calls=1)
    assert _calls_agree(compiled, model.forward, [((np.ones(3),), {})] * 3) == 2
    model._w = np.ones(3)  # the property's getter reads the new array
    assert_same(model.forward(np.ones(3)), compiled(np.ones(3)))


class Stack:
    """Layers called as functions inside the compiled code: `self.first(x)`, a layer from a list."""

    def __init__(self):
        self.first = Dense(_w(0.5))
        self.rest = [Dense(_w(2.0)), Dense(_w(1.5))]

    def forward(self, x):
        h = self.first(x)
        for layer in self.rest:
            h = layer(h)
        return h


class Doubled(Dense):
    def __call__(self, x):
        return 2.0 * np.tanh(x @ self.w)


def test_layer_objects_called_inside_a_compiled_function():
    model = Stack()
    compiled = pyfront.compile(model.forward, profile_calls=1)
    assert _calls_agree(compiled, model.forward, [((_x(),), {})] * 3) == 2
    model.rest[0].w = _w(3.0)  # weights are read at call time
    assert_same(Stack.forward(model, _x()), compiled(_x()))
    model.rest[1] = Doubled(_w(1.5))  # another class: its own __call__, never the old one
    model.first.__call__ = lambda x: x  # Python ignores an instance's __call__: so must we
    assert_same(Stack.forward(model, _x()), compiled(_x()))
    assert pyfront.explain(compiled).compiled_calls >= 3


def test_not_callable_is_refused():
    with pytest.raises(TypeError, match="needs a Python function"):
        pyfront.compile(42)


def _count_compile_attempts(monkeypatch):
    from pyfront.runtime import jit

    attempts = []
    real = jit.prepare_variant

    def counted(*args, **kwargs):
        attempts.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jit, "prepare_variant", counted)
    return attempts


def test_lambda_compiles():
    compiled = check(lambda x, s=2.0: np.tanh(x) * s, [(np.ones(4),)] * 3 + [(np.ones(4), 0.5)] * 2)
    assert pyfront.explain(compiled).compiled_calls > 0


def test_a_lambda_that_cannot_be_found_is_tried_once_not_per_shape(monkeypatch):
    attempts = _count_compile_attempts(monkeypatch)
    f = (lambda x: x - 1.0, lambda x: x * 2.0)[1]  # two lambdas on a line: which one is f's is unknown
    compiled = pyfront.compile(f, profile_calls=1)
    for n in range(20):
        assert_same(f(np.ones(n + 1)), compiled(np.ones(n + 1)))
    assert len(attempts) == 1
    (reason,) = pyfront.explain(compiled).interpreter_reasons
    assert "not the only lambda on its line" in reason


def test_generator_is_tried_once_and_retried_when_its_code_changes(monkeypatch):
    attempts = _count_compile_attempts(monkeypatch)

    def gen(x):
        yield x * 2.0

    def plain(x):
        return x * 2.0

    compiled = pyfront.compile(gen, profile_calls=1)
    for n in range(20):
        assert_same(list(gen(np.ones(n + 1))), list(compiled(np.ones(n + 1))))
    assert len(attempts) == 1
    gen.__code__ = plain.__code__  # hot reload: the new code compiles
    for _ in range(3):
        assert_same(plain(np.ones(3)), compiled(np.ones(3)))
    assert len(attempts) == 2 and pyfront.explain(compiled).compiled_calls > 0


def test_a_key_dependent_failure_does_not_block_other_keys():
    def f(x):
        return x ** 3

    compiled = check(f, [(np.arange(3),)] * 3 + [(np.ones(3),)] * 3)
    report = pyfront.explain(compiled)
    assert report.compiled_calls > 0 and "np.power on int64" in str(report.interpreter_reasons)


def test_export_takes_static_and_compiled_functions_and_refuses_bound_arguments(tmp_path):
    def double(x):
        return x * 2.0

    x = np.arange(4.0)
    for n, target in enumerate((staticmethod(double), pyfront.compile(double))):
        artifact = pyfront.load(pyfront.export(target, x, path=tmp_path / str(n)))
        assert_same(double(x), artifact(x))
    with pytest.raises(TypeError, match="binds arguments"):
        pyfront.export(Dense(_w()).forward, _x(), path=tmp_path / "bound")


def squared_tanh_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


@pytest.mark.parametrize("transform", [pyfront.grad, pyfront.value_and_grad])
def test_compile_of_grad_compiles_the_gradient(transform):
    # jax.jit(jax.grad(f)): the compiled function differentiates f in the IR.
    compiled = pyfront.compile(transform(squared_tanh_loss), profile_calls=1)
    calls = [((_w(), _x()), {})] * 3 + [((_w(2.0), _x()), {})]
    assert _calls_agree(compiled, transform(squared_tanh_loss), calls) == 3
    assert pyfront.explain(compiled).name == "squared_tanh_loss"


def test_a_grad_function_is_immutable():
    with pytest.raises(AttributeError, match="immutable"):
        pyfront.grad(squared_tanh_loss).argnums = 1


def scaled_step(x, w, lr=0.5, *, clip=1.0, bias=np.zeros(3)):
    return np.clip(x @ w * lr, -clip, clip) + bias


def scale_positional_only(x, s=2.0, /):
    return x * s


def test_an_artifact_binds_keywords_keyword_only_parameters_and_defaults(tmp_path):
    x, w = _x(), _w()
    path = pyfront.export(scaled_step, x, w, path=tmp_path / "step", example_kwargs={"clip": 2.0})
    artifact = pyfront.load(path)
    calls = [((x, w), {"clip": 2.0}), ((x,), {"w": w, "clip": 2.0}), ((x, w, 0.5), {"clip": 2.0}),
             ((), {"x": x, "w": w, "lr": 0.5, "clip": 2.0, "bias": np.zeros(3)})]
    for args, kwargs in calls:
        assert_same(scaled_step(*args, **kwargs), artifact(*args, **kwargs))
    for args, kwargs in [((x,), {}), ((x, w, 0.5, 2.0), {}), ((x, w), {"lr": 0.5, "x": x}),
                         ((x, w), {"momentum": 0.9})]:  # Python's TypeErrors
        with pytest.raises(TypeError) as expected:
            scaled_step(*args, **kwargs)
        with pytest.raises(TypeError) as got:
            artifact(*args, **kwargs)
        assert str(got.value).split("()", 1)[1] == str(expected.value).split("()", 1)[1]
    only = pyfront.load(pyfront.export(scale_positional_only, x, path=tmp_path / "only"))
    assert_same(scale_positional_only(x), only(x))
    with pytest.raises(TypeError) as expected:
        scale_positional_only(x, s=2.0)
    with pytest.raises(TypeError) as got:
        only(x, s=2.0)
    assert str(got.value).split("()", 1)[1] == str(expected.value).split("()", 1)[1]
    with pytest.raises(ValueError, match="clip|arg3"):
        artifact(x, w, clip=3.0)  # compiled for clip=2.0: a constant argument


def summed_layers(x, *weights, scale=1.0, **offsets):
    for w in weights:
        x = np.tanh(x @ w)
    return x * scale + offsets["shift"]


def test_an_artifact_binds_star_args_and_star_star_kwargs(tmp_path):
    """An artifact is specialized to its example call, `*args`' count and `**kwargs`' keys included."""
    x, w = _x(), _w()
    path = pyfront.export(summed_layers, x, w, w.T @ w, path=tmp_path / "star",
                          example_kwargs={"scale": 2.0, "shift": np.ones(3)})
    artifact = pyfront.load(path)
    assert "tuple(ndarray" in repr(artifact) and "dict({'shift': ndarray" in repr(artifact)
    for args, kwargs in [((x, w, w.T @ w), {"scale": 2.0, "shift": np.ones(3)}),
                         ((x, w, w.T @ w), {"shift": np.zeros(3), "scale": 2.0})]:
        assert_same(summed_layers(*args, **kwargs), artifact(*args, **kwargs))
    with pytest.raises(TypeError, match=r"arg1: expected tuple\(.*got tuple of length 1"):
        artifact(x, w, scale=2.0, shift=np.ones(3))
    with pytest.raises(TypeError, match=r"arg3: expected dict\(\{'shift'.*got dict with keys \['shift', 'tilt'\]"):
        artifact(x, w, w.T @ w, scale=2.0, shift=np.ones(3), tilt=1.0)
    with pytest.raises(TypeError) as expected:
        summed_layers(scale=2.0)
    with pytest.raises(TypeError) as got:
        artifact(scale=2.0)
    assert str(got.value).split("()", 1)[1] == str(expected.value).split("()", 1)[1]


def keyword_collector(a, /, **kw):
    return a * kw["a"]


def test_a_positional_only_name_passed_by_keyword_goes_to_star_star_kwargs(tmp_path):
    x = _x()
    artifact = pyfront.load(pyfront.export(keyword_collector, x, path=tmp_path / "kw", example_kwargs={"a": x}))
    assert_same(keyword_collector(x, a=x), artifact(x, a=x))


def closures(x, k):
    scale = 2.0
    f = lambda z, b=1.0: z * scale + b  # noqa: E731
    scale = 3.0  # a closure reads it when called: 3.0

    def g(z, *rest, power=2, **kw):
        def inner(w):
            return w ** power + len(rest) + len(kw)
        return inner(z) + f(z)
    acts = {"relu": lambda z: np.maximum(z, 0), "tanh": np.tanh}
    return g(x, 1, 2, a=3), acts["relu"](x - 1), (lambda: k * 2)()


def numerical_gradient(f, x):
    h = 1e-4
    grad = np.zeros_like(x)
    for idx in range(x.size):
        tmp = x[idx]
        x[idx] = tmp + h
        fxh1 = f(x)
        x[idx] = tmp - h
        fxh2 = f(x)
        grad[idx] = (fxh1 - fxh2) / (2 * h)
        x[idx] = tmp
    return grad


def loss_gradient(W, x):
    loss_W = lambda w: np.sum((x @ W) ** 2)  # noqa: E731  ("Deep Learning from Scratch")
    return numerical_gradient(loss_W, W)


def returns_a_lambda(x):
    return lambda z: z + x


@pytest.mark.parametrize("fn, make", [(closures, lambda k: (np.arange(3.0) * k, k)),
                                      (loss_gradient, lambda k: (np.arange(3.0) * k, np.ones((2, 3))))])
def test_lambdas_and_nested_defs_are_inlined(fn, make):
    compiled = check(fn, [make(k) for k in range(4)])
    assert pyfront.explain(compiled).compiled_calls > 0, str(pyfront.explain(compiled))


def test_a_lambda_that_escapes_runs_in_the_interpreter():
    compiled = pyfront.compile(returns_a_lambda)
    for _ in range(3):
        assert compiled(np.ones(2))(1.0).tolist() == [2.0, 2.0]
    assert "returning this value is not supported" in str(pyfront.explain(compiled))


def lambdas_of_a_comprehension(x):
    fs = [lambda: i for i in range(3)]  # each reads the comprehension's `i`, gone when called
    i = 10  # noqa: F841 (a local of the same name the lambdas must not read)
    return x + fs[0]()


def test_a_lambda_made_in_a_comprehension_runs_in_the_interpreter():
    compiled = check(lambdas_of_a_comprehension, [(np.ones(2),)] * 3)
    assert "inside a comprehension" in str(pyfront.explain(compiled))
