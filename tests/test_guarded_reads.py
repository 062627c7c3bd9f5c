"""runtime/guarded_reads.py: a variant's entry reads, generated, agree with the guards checked one by one."""

import types

import numpy as np
import pytest
from pyfront.dialects.state_path import Path
from pyfront.runtime.guarded_reads import guarded_reader, path_writer

import pyfront
from pyfront.guards import MISSING, AliasGuard, IdentityGuard, StateGuard
from pyfront.specialize import ArraySpec, LengthSpec, ScalarSpec
from tests import differential


class CountingDict(dict):
    reads = 0

    def __getitem__(self, key):
        CountingDict.reads += 1
        return super().__getitem__(key)


def _array_guard(path: str, a: np.ndarray) -> StateGuard:
    return StateGuard(Path.parse(path), ArraySpec(a.dtype, a.shape), f"site of {path}")


def test_each_prefix_is_read_once_and_the_inputs_come_back_in_order():
    w, b = np.ones((2, 3), np.float32), np.zeros(3, np.float32)
    model = types.SimpleNamespace(params=CountingDict(w=w, b=b), steps=3)
    guards = [_array_guard("arg0.params['w']", w), _array_guard("arg0.params['b']", b),
              StateGuard(Path.parse("arg0.steps"), ScalarSpec(int), "site")]
    inputs = [Path.parse("arg0.params['b']"), None, Path.parse("arg0.params['w']"), Path.parse("arg1")]
    read = guarded_reader(lambda: None, [], guards, [], inputs)
    CountingDict.reads = 0
    values = read((model, 2.5))
    assert values[0] is b and values[1] is None and values[2] is w and values[3] == 2.5
    assert CountingDict.reads == 2  # params['w'] and params['b'], each once for its guard and its input


def test_a_guard_that_fails_or_a_read_that_raises_gives_none():
    w = np.ones(3)
    model = types.SimpleNamespace(w=w, layers=[1, 2])
    guards = [_array_guard("arg0.w", w), StateGuard(Path.parse("arg0.layers"), LengthSpec(2), "site")]
    read = guarded_reader(lambda: None, [], guards, [], [Path.parse("arg0.w")])
    assert read((model,))[0] is w
    for change in (lambda: setattr(model, "w", w.astype(np.float32)), lambda: setattr(model, "w", w[::2]),
                   lambda: setattr(model, "w", w.T.copy(order="F")[None]), lambda: model.layers.append(3),
                   lambda: delattr(model, "w")):
        model.w, model.layers = w, [1, 2]
        assert read((model,)) is not None
        change()
        assert read((model,)) is None


def test_identity_guards_of_globals_cells_and_attributes():
    namespace, module = {"f": len}, types.SimpleNamespace(g=abs)
    cell = types.CellType(min)
    guards = [IdentityGuard("item", namespace, "f", len, "s1"), IdentityGuard("item", namespace, "h", MISSING, "s2"),
              IdentityGuard("attr", module, "g", abs, "s3"), IdentityGuard("attr", module, "class", MISSING, "s4"),
              IdentityGuard("cell", cell, "c", min, "s5")]
    read = guarded_reader(lambda: None, guards, [], [], [])
    assert read(()) == []
    for change, undo in ((lambda: namespace.__setitem__("f", max), lambda: namespace.__setitem__("f", len)),
                         (lambda: namespace.__setitem__("h", 1), lambda: namespace.pop("h")),
                         (lambda: setattr(module, "g", max), lambda: setattr(module, "g", abs)),
                         (lambda: setattr(module, "class", 1), lambda: delattr(module, "class")),
                         (lambda: delattr(cell, "cell_contents"), lambda: setattr(cell, "cell_contents", min))):
        change()
        assert read(()) is None
        undo()
        assert read(()) == []


def test_alias_guards_see_the_values_read_once():
    a, b = np.ones(2), np.ones(2)
    state = types.SimpleNamespace(p=a, q=b)
    alias = AliasGuard((Path.parse("arg0.p"), Path.parse("arg0.q")), (0, 1), "site")
    read = guarded_reader(lambda: None, [], [], [(alias.paths, alias.holds_for)], [Path.parse("arg0.q")])
    assert read((state,))[0] is b
    state.q = a  # now one object at both paths
    assert read((state,)) is None


@pytest.mark.parametrize("name", ["class", "not an identifier", "x.y"])
def test_attribute_names_that_are_not_identifiers(name):
    obj, value = types.SimpleNamespace(), np.ones(2)
    setattr(obj, name, value)
    guard = StateGuard(Path("arg0", (("attr", name),)), ArraySpec(value.dtype, value.shape), "site")
    read = guarded_reader(lambda: None, [], [guard], [], [guard.path])
    assert read((obj,))[0] is value


class Layer:
    def __init__(self):
        self.w = np.arange(6.0).reshape(2, 3)
        self.cache = {"scale": np.float64(2.0)}

    def forward(self, x):
        return x @ self.w.T * self.cache["scale"]


def test_compiled_calls_deopt_on_the_failing_guard_as_before():
    changed_dtype, no_scale = Layer(), Layer()
    changed_dtype.w = changed_dtype.w.astype(np.float32)
    del no_scale.cache["scale"]  # reading it raises: the interpreter raises KeyError, as Python does
    x = np.ones((4, 3))
    calls = [(Layer(), x)] * 3 + [(changed_dtype, x), (no_scale, x), (Layer(), x)]
    compiled = differential.check(Layer.forward, calls, wait_for_compile="always")
    report = pyfront.explain(compiled)
    assert report.compiled_calls >= 2, report
    assert any("arg0.w is a C-ordered ndarray of float64 (2, 3)" in r for r in report.deopt_reasons), report.deopt_reasons


GLOBAL_SLOT = 0


def test_path_writer_assigns_in_order_reading_each_parent_afresh():
    def fn():
        return GLOBAL_SLOT + cell

    cell = 1
    old, new = {"k": 0}, {"k": 0}
    model = types.SimpleNamespace(d=old)
    paths = ["arg0.d", "arg0.d['k']", "arg0.x", "global:GLOBAL_SLOT", "cell:cell"]
    write = path_writer([Path.parse(p) for p in paths], fn)
    setattr(model, "not a name", 0)
    write((model,), [new, 5, 6, 7, 8])
    assert model.d is new and new == {"k": 5} and old == {"k": 0}  # the second store read the rebound d
    assert model.x == 6 and GLOBAL_SLOT == 7 and fn.__closure__[0].cell_contents == 8
    odd = path_writer([Path(root="arg0", steps=(("attr", "not a name"),))], fn)
    odd((model,), [9])
    assert getattr(model, "not a name") == 9
    with pytest.raises(ValueError, match="cannot assign to arg0"):
        path_writer([Path.parse("arg0")], fn)
